"""Lazy attribute loading (PEP 562) for package facades.

Packages export their public names through a table ``name -> module``; a name's module is
imported the first time it is used. This keeps ``import dpaudit`` and the CLI fast and keeps
the import graph one-directional (a facade never forces a low layer to import a high one).
"""

from __future__ import annotations

import importlib


def make_getattr(package: str, table: dict[str, str]):
    """Return a module-level ``__getattr__`` resolving ``table`` lazily."""

    def __getattr__(name: str):
        try:
            module = table[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        mod = importlib.import_module(module)
        value = mod if module.endswith("." + name) and not hasattr(mod, name) else getattr(mod, name)
        return value

    return __getattr__


def lazy_exports(package: str, table: dict[str, str], namespace: dict, extra=()):
    """``(__all__, __getattr__, __dir__)`` of a package facade exporting ``table`` lazily (PEP 562).

    ``namespace`` is the package's ``globals()`` (its eagerly defined names, listed by ``dir()`` beside
    the table's); ``extra`` adds eagerly defined public names to ``__all__``. One line in each facade::

        __all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
    """

    def __dir__():
        return sorted(set(namespace) | set(table))

    return sorted({*table, *extra}), make_getattr(package, table), __dir__
