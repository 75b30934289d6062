"""Validation helpers take ``(name, x, ...)``: the argument's name first, then its value.

Issue 16: the helpers of ``dpaudit.core.validation`` took ``(name, x)`` or ``(x, name)`` by whim.
One order now; this test refuses a helper written in the other order (or with a default name,
which let a call site report the wrong argument), in core/validation.py and in the audit
layer's own validators (audit/error_rates.py).
"""

import inspect
import types

import pytest

from dpaudit.audit.stats import error_rates
from dpaudit.core import validation

VALIDATOR_MODULES = [validation, error_rates]


def validation_order_violations(module) -> list[str]:
    """Public ``check_*`` functions of ``module`` whose first parameter is not ``name`` (without
    a default) followed by at least one more positional parameter (the value)."""
    bad = []
    for attr, fn in vars(module).items():
        if not (attr.startswith("check_") and inspect.isfunction(fn)) or fn.__module__ != module.__name__:
            continue
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(params) < 2 or params[0].name != "name" or params[0].default is not inspect.Parameter.empty:
            bad.append(f"{module.__name__}.{attr}{inspect.signature(fn)}")
    return bad


@pytest.mark.parametrize("module", VALIDATOR_MODULES, ids=lambda m: m.__name__)
def test_validation_helpers_take_name_first(module):
    bad = validation_order_violations(module)
    assert not bad, "validation helpers must take (name, x, ...):\n" + "\n".join(bad)


@pytest.mark.parametrize("module", VALIDATOR_MODULES, ids=lambda m: m.__name__)
def test_the_rule_sees_the_helpers(module):
    # the rule is not vacuous: each module has checked helpers
    assert any(a.startswith("check_") for a in vars(module))


def test_rule_refuses_the_other_order():
    bad_module = types.ModuleType("bad_validation")
    src = (
        "def check_good(name, x):\n    return x\n"
        "def check_value_first(x, name='x'):\n    return x\n"
        "def check_default_name(name='delta', x=0.5):\n    return x\n"
        "def check_one(name):\n    return name\n"
    )
    exec(compile(src, "bad_validation", "exec"), bad_module.__dict__)
    for fn in vars(bad_module).values():
        if inspect.isfunction(fn):
            fn.__module__ = "bad_validation"
    found = validation_order_violations(bad_module)
    assert [s.split("(")[0] for s in found] == [
        "bad_validation.check_value_first", "bad_validation.check_default_name", "bad_validation.check_one"]


def test_messages_still_name_the_argument():
    with pytest.raises(ValueError, match="target_delta"):
        validation.check_delta("target_delta", 1.5)
    with pytest.raises(ValueError, match="steps"):
        validation.check_count("steps", 0, minimum=1)
    with pytest.raises(ValueError, match="alpha"):
        validation.check_orders("alpha", [0.5])
    with pytest.raises(ValueError, match="beta"):
        error_rates.check_beta("beta", 0.0)
