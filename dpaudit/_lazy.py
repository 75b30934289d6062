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
