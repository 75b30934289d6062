"""The examples in the docstrings of the public API run as doctests (issue 25, item 6).

The public API is what docs/api.md documents (``docs/build_api.py``'s ``MODULES``: each module's
``_EXPORTS`` / ``__all__``); every docstring there with a ``>>>`` example is run here, in the
globals of the module that defines the object, as ``doctest.testmod`` would. The main entry points
must keep an example (``REQUIRED``), so deleting one fails too.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import inspect

import pytest

from tests.support import REPO

ROOT = REPO

#: the entry points whose docstrings must carry a runnable example
REQUIRED = ("dpaudit.make_accountant", "dpaudit.calibrate_sigma", "dpaudit.PLDAccountant", "dpaudit.audit_mechanism",
            "dpaudit.audit.audit_scores", "dpaudit.conversions.zcdp_to_dp", "dpaudit.conversions.dp_to_zcdp",
            "dpaudit.conversions.rdp_to_dp", "dpaudit.conversions.gaussian_epsilon")


def _build_api():
    spec = importlib.util.spec_from_file_location("_dpaudit_build_api", ROOT / "docs" / "build_api.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _public_objects() -> tuple[dict[str, object], dict[str, object]]:
    """``{qualified name: object}`` of the documented API: every name, and each object once (its first name)."""
    api, seen, out, every = _build_api(), set(), {}, {}
    for _, modname, names in api.MODULES:
        try:
            mod = importlib.import_module(modname)
        except ImportError:  # an optional extra that is not installed: its page says so too
            continue
        for name in names or api._names(mod):
            try:
                obj = getattr(mod, name)
            except (ImportError, AttributeError):
                continue
            if not (inspect.isclass(obj) or inspect.isfunction(obj) or inspect.ismodule(obj)):
                continue
            every[f"{modname}.{name}"] = obj
            if id(obj) not in seen:
                seen.add(id(obj))
                out[f"{modname}.{name}"] = obj
    return out, every


def _doctests(qual: str, obj) -> list[doctest.DocTest]:
    """The examples of ``obj``'s own docstring (not its members': docs/api.md shows the object's docstring)."""
    module = obj if inspect.ismodule(obj) else inspect.getmodule(obj)
    finder = doctest.DocTestFinder(recurse=False, exclude_empty=True)
    return [t for t in finder.find(obj, qual, module=module, globs=dict(vars(module))) if t.examples]


PUBLIC, EVERY_NAME = _public_objects()
WITH_EXAMPLES = {qual: tests for qual, obj in PUBLIC.items() if (tests := _doctests(qual, obj))}


def test_the_main_entry_points_have_examples():
    with_examples = {id(PUBLIC[q]) for q in WITH_EXAMPLES}
    missing = [q for q in REQUIRED if id(EVERY_NAME[q]) not in with_examples]
    assert not missing, f"no >>> example in the docstring of {missing}"


@pytest.mark.parametrize("qual", sorted(WITH_EXAMPLES))
def test_docstring_examples_run(qual):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    for test in WITH_EXAMPLES[qual]:
        runner.run(test, out=report.append)
    results = runner.summarize(verbose=False)
    assert results.attempted > 0
    assert results.failed == 0, "".join(report)
