"""Generate docs/api.md from the live docstrings of dpaudit's public names.

    python docs/build_api.py            # rewrite docs/api.md
    python docs/build_api.py --check    # exit 1 if docs/api.md is out of date

The public names are those of the lazy export tables (``dpaudit``, ``dpaudit.bounds``,
``dpaudit.audit``, ...) plus the modules listed in ``MODULES``; each gets its signature and full
docstring. Names whose module is not importable are listed as unavailable rather than hidden.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "api.md"

#: (section title, module, names or None for the module's __all__/_EXPORTS)
MODULES = [
    ("Top level: `dpaudit`", "dpaudit", None),
    ("Conversions: `dpaudit.conversions`", "dpaudit.conversions", None),
    ("Seed theorems: `dpaudit.bounds`", "dpaudit.bounds", None),
    ("Optimizers: `dpaudit.optimizers`", "dpaudit.optimizers", None),
    ("Auditing: `dpaudit.audit`", "dpaudit.audit", None),
    ("Testing kit: `dpaudit.testing`", "dpaudit.testing", None),
    ("Testing kit: `dpaudit.testing.strategies`", "dpaudit.testing.strategies", None),
    ("Reports: `dpaudit.report`", "dpaudit.report", None),
    ("Interoperability: `dpaudit.interop`", "dpaudit.interop", None),
    ("Mechanism libraries: `dpaudit.interop.library`", "dpaudit.interop.library", None),
    ("OpenDP: `dpaudit.interop.opendp`", "dpaudit.interop.opendp", None),
    ("PyDP: `dpaudit.interop.pydp`", "dpaudit.interop.pydp", None),
    ("Tumult Core: `dpaudit.interop.tumult`", "dpaudit.interop.tumult", None),
    ("Floating point: `dpaudit.audit.floating`", "dpaudit.audit.floating", None),
    ("Float-safe sampling: `dpaudit.mechanisms.float_safe`", "dpaudit.mechanisms.float_safe", None),
    ("Progress: `dpaudit.core.progress`", "dpaudit.core.progress", None),
]


def _names(mod) -> list[str]:
    table = getattr(mod, "_EXPORTS", None)
    names = list(table) if table else list(getattr(mod, "__all__", []))
    return sorted(n for n in names if not n.startswith("_"))


def _signature(obj) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return ""


def _entry(qual: str, obj) -> str:
    if inspect.ismodule(obj):
        doc = inspect.getdoc(obj) or ""
        first = doc.split("\n\n")[0].strip()
        return f"### `{qual}` (module)\n\n{first}\n"
    kind = "class" if inspect.isclass(obj) else ("function" if callable(obj) else "value")
    sig = _signature(obj) if kind != "value" else ""
    head = f"### `{qual}{sig}`" if kind != "value" else f"### `{qual}` = `{obj!r}`"
    doc = inspect.getdoc(obj) if kind != "value" else ""
    body = doc.strip() if doc else "*(no docstring)*"
    return f"{head}\n\n*{kind}*\n\n```text\n{body}\n```\n"


def build() -> str:
    parts = ["# API reference\n",
             "Generated from the docstrings by `python docs/build_api.py`; do not edit by hand. Narrative "
             "documentation: [index.md](index.md).\n"]
    for title, modname, names in MODULES:
        parts.append(f"## {title}\n")
        try:
            mod = importlib.import_module(modname)
        except ImportError as exc:
            parts.append(f"*module not available: {exc}*\n")
            continue
        for name in names or _names(mod):
            qual = f"{modname}.{name}"
            try:
                obj = getattr(mod, name)
            except (ImportError, AttributeError) as exc:
                parts.append(f"### `{qual}`\n\n*not available in this build: {exc}*\n")
                continue
            parts.append(_entry(qual, obj))
    return "\n".join(parts)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = build()
    if "--check" in argv:
        current = OUT.read_text() if OUT.exists() else ""
        if current != text:
            print("docs/api.md is out of date: run python docs/build_api.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
