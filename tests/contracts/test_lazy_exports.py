"""Package facades: every exported name resolves, dir() lists it, and each facade uses the one helper."""

import ast
import importlib
import pathlib

import pytest

import dpaudit

FACADES = sorted(str(p.parent.relative_to(pathlib.Path(dpaudit.__file__).parents[1])).replace("/", ".")
                 for p in pathlib.Path(dpaudit.__file__).parent.rglob("__init__.py"))


@pytest.mark.parametrize("package", FACADES)
def test_every_exported_name_resolves_and_is_listed(package):
    mod = importlib.import_module(package)
    for name in getattr(mod, "__all__", []):
        assert getattr(mod, name) is not None, (package, name)
        assert name in dir(mod), (package, name)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        mod.no_such_name  # noqa: B018


@pytest.mark.parametrize("package", FACADES)
def test_facades_use_the_one_lazy_helper(package):
    # a facade with a table of exports gets __all__, __getattr__ and __dir__ from dpaudit._lazy.lazy_exports
    # and defines none of them by hand (they were written out in each facade before)
    path = pathlib.Path(importlib.import_module(package).__file__)
    tree = ast.parse(path.read_text())
    has_table = any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "_EXPORTS" for t in n.targets)
                    for n in tree.body)
    if not has_table:
        pytest.skip(f"{package} exports nothing lazily")
    assert not [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in ("__dir__", "__getattr__")]
    assert "lazy_exports(__name__, _EXPORTS, globals()" in path.read_text()
