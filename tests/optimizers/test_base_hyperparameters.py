"""Each optimizer declares its hyper-parameters once (issue 26, item 5).

The declarations (``optimizer_class(name).hyperparameters``) are the only list: ``optimizer_defaults``,
the class docstring, ``help(make_optimizer)`` and the flags of ``dpaudit audit NAME`` are generated
from them, and every constructor keyword (every key of ``opt.hp``, every ``hp["..."]`` the module
reads) is declared.
"""

from __future__ import annotations

import ast
import inspect
import math
import pydoc

import pytest

from dpaudit.cli import build_parser
from dpaudit.optimizers import make_optimizer, names, optimizer_class, optimizer_defaults
from dpaudit.optimizers.base import Optimizer


@pytest.fixture(scope="module")
def make_optimizer_help() -> str:
    return pydoc.render_doc(make_optimizer, renderer=pydoc.plaintext)


@pytest.mark.parametrize("name", names)
def test_every_declared_hyperparameter_appears_in_every_surface(name, make_optimizer_help, capsys):
    cls = optimizer_class(name)
    declared = [hp.name for hp in cls.hyperparameters]
    assert declared, name
    assert len(set(declared)) == len(declared)
    # optimizer_defaults and the class attribute come from the declarations
    assert optimizer_defaults(name) == {hp.name: hp.default for hp in cls.hyperparameters} == cls.defaults
    # the class docstring (help(optimizer_class(name))) and help(make_optimizer)
    doc = cls.__doc__
    section = make_optimizer_help.split(f"\n    {name}\n", 1)[1]
    for hp in cls.hyperparameters:
        assert f"{hp.name} : {hp.spec}; default {hp.default!r}" in doc, (name, hp.name)
        assert f"{hp.name} : {hp.spec}" in section, (name, hp.name)
        if hp.help:
            assert hp.help.split(";")[0][:40] in " ".join(doc.split()), (name, hp.name)
    # dpaudit audit NAME --help: one flag per hyper-parameter (delta is the audit's --delta)
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["audit", name, "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for hp in cls.hyperparameters:
        assert f"  {hp.flag} " in text or f"  {hp.flag}\n" in text or f"--[no-]{hp.name.replace('_', '-')}" in text \
            or f"{hp.flag}, --no-" in text, (name, hp.flag)


def _hp_keys_read(cls) -> set[str]:
    """String keys the optimizer's module reads from ``self.hp`` (``self.hp["x"]``, ``self.hp.get("x")``)."""
    tree = ast.parse(inspect.getsource(inspect.getmodule(cls)))
    keys = set()
    for node in ast.walk(tree):
        target = None
        if isinstance(node, ast.Subscript):
            target, key = node.value, node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and node.args:
            target, key = node.func.value, node.args[0]
        if target is None:
            continue
        if isinstance(target, ast.Attribute) and target.attr == "hp" and isinstance(key, ast.Constant) \
                and isinstance(key.value, str):
            keys.add(key.value)
    return keys


@pytest.mark.parametrize("name", names)
def test_every_constructor_keyword_is_declared(name):
    cls = optimizer_class(name)
    declared = {hp.name for hp in cls.hyperparameters}
    opt = make_optimizer(name)
    assert set(opt.hp) == declared
    # every hyper-parameter the module's code reads is declared (modules holding several optimizers:
    # the union of their declarations)
    module = inspect.getmodule(cls)
    siblings = [optimizer_class(n) for n in names if inspect.getmodule(optimizer_class(n)) is module]
    union = set().union(*({hp.name for hp in c.hyperparameters} for c in siblings))
    assert _hp_keys_read(cls) <= union, sorted(_hp_keys_read(cls) - union)
    with pytest.raises(ValueError, match="unknown hyper-parameter"):
        make_optimizer(name, not_a_hyperparameter=1)


@pytest.mark.parametrize("name", names)
def test_values_are_checked_by_their_declaration(name):
    cls = optimizer_class(name)
    for hp in cls.hyperparameters:
        if hp.type in (float, int) and hp.low is not None:
            bad = hp.low - 1 if not hp.low_open else hp.low
            with pytest.raises(ValueError) as exc:
                make_optimizer(name, **{hp.name: bad})
            assert str(exc.value).startswith(f"{hp.name} must be") and hp.interval in str(exc.value), str(exc.value)
        if hp.choices is not None:
            with pytest.raises(ValueError, match=rf"^{hp.name} must be one of"):
                make_optimizer(name, **{hp.name: "no-such-choice"})
        if hp.type is bool:
            with pytest.raises(ValueError, match=rf"^{hp.name} must be True or False"):
                make_optimizer(name, **{hp.name: "yes"})


def test_declaration_messages_and_normalisation():
    from dpaudit.optimizers.base import HyperParameter

    hp = HyperParameter("sample_rate", float, 0.1, 0, 1, "rate", low_open=True)
    assert hp.interval == "(0, 1]" and hp.flag == "--sample-rate"
    assert hp.validate(1) == 1.0 and isinstance(hp.validate(1), float)
    for bad in (0, 1.5, math.nan, "0.1", None, True):
        with pytest.raises(ValueError, match=r"sample_rate must be a number in \(0, 1\]"):
            hp.validate(bad)
    clip = HyperParameter("clip", float, 1.0, 0, math.inf, low_open=True, high_open=False)
    assert clip.interval == "(0, inf]" and clip.validate(math.inf) == math.inf
    steps = HyperParameter("steps", int, 10, 1, None)
    assert steps.validate(3.0) == 3 and steps.parse("1e3") == 1000
    for bad in (0, 2.5, True, "3"):
        with pytest.raises(ValueError, match=r"steps must be an integer in \[1, inf\)"):
            steps.validate(bad)
    cap = HyperParameter("alpha_cap", float, None, 0, None, low_open=True, optional=True)
    assert cap.validate(None) is None and cap.parse("none") is None and cap.parse("2") == 2.0
    assert "or None" in cap.allowed


def test_bad_declarations_are_refused_when_the_class_is_created():
    from dpaudit.optimizers.base import HyperParameter

    with pytest.raises(TypeError, match="default of rate"):
        type("Bad", (Optimizer,), {"hyperparameters": (HyperParameter("rate", float, 2.0, 0, 1),)})
    with pytest.raises(TypeError, match="twice"):
        type("Twice", (Optimizer,), {"hyperparameters": (HyperParameter("a", int, 1), HyperParameter("a", int, 2))})
    with pytest.raises(TypeError, match="HyperParameter"):
        type("NotDecl", (Optimizer,), {"hyperparameters": (("a", int, 1),)})


def test_help_make_optimizer_lists_every_optimizer_and_points_to_the_declarations(make_optimizer_help):
    for name in names:
        assert f"\n    {name}\n" in make_optimizer_help
    assert "declares its hyper-parameters once" in make_optimizer_help
    assert "noise_multiplier : float in [0, inf); default 1.0" in make_optimizer_help
    assert "sample_rate : float in (0, 1]; default 0.1" in make_optimizer_help
