"""Running the ```python blocks of the docs pages and README.md, without pytest.

tests/docs/test_pages.py checks the pages with it under pytest; ``tests/docs/test_install.py`` runs it with
``python tests/support/docs_runner.py --check`` inside a fresh virtual environment holding exactly the README's
install (``pip install -e ".[plot]"``), where pytest is not installed. The conventions are those of
tests/docs/test_pages.py: the blocks of one page run in order in one namespace, in a fresh temporary directory;
a ```output block right after a python block is its exact stdout; ``<!-- docs-test: skip (REASON) -->``
before a block skips it; ``<!-- docs-test: requires (MODULE, ...) -->`` anywhere in a page skips the page
where one of those modules is not installed (a page that needs more than the README's install says so).

Each page runs in an empty :class:`contextvars.Context`, as a fresh script would: settings a caller put in
context variables (the pytest plugin's per-test audit settings) do not change what a page prints.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib.util
import io
import json
import os
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository root (run as a script too: no tests.support import)
PAGES = sorted((ROOT / "docs").glob("**/*.md")) + [ROOT / "README.md"]
FENCE = re.compile(r"(?P<skip><!-- docs-test: skip \((?P<reason>[^)]+)\) -->\n)?```python\n(?P<code>.*?)```\n"
                   r"(?:\n?```output\n(?P<out>.*?)```\n)?", re.S)
REQUIRES = re.compile(r"<!-- docs-test: requires \((?P<mods>[^)]+)\) -->")

#: how to install each optional module a page may require (the extra that holds it)
INSTALL_HINT = {
    "torch": "pip install 'dpaudit[torch]'", "opacus": "pip install 'dpaudit[torch]'",
    "jax": "pip install 'dpaudit[jax]'", "jax_privacy": "pip install 'dpaudit[jax]'",
    "distributed": "pip install 'dpaudit[dask]'", "sklearn": "pip install 'dpaudit[learn]'",
    "pytest": "pip install pytest", "hypothesis": "pip install hypothesis",
    "dp_accounting": "pip install dp-accounting", "diffprivlib": "pip install diffprivlib",
    "opendp": "pip install opendp", "pydp": "pip install python-dp",
}


def blocks(text: str):
    yield from FENCE.finditer(text)


def required_modules(path: Path) -> list[str]:
    """The optional modules the page declares (``docs-test: requires``), in order."""
    return [m.strip() for req in REQUIRES.finditer(path.read_text()) for m in req.group("mods").split(",")]


def missing_reason(path: Path) -> str | None:
    """Why the page cannot run here (a required module is not installed), or None."""
    missing = [m for m in required_modules(path) if importlib.util.find_spec(m) is None]
    if not missing:
        return None
    hints = sorted({INSTALL_HINT.get(m, f"pip install {m}") for m in missing})
    return f"{path.name} needs the optional {', '.join(missing)} ({'; '.join(hints)})"


def _run_blocks(path: Path, tmp: Path):
    ns = {"__name__": f"docs_{path.stem}"}
    results = []
    old = os.getcwd()
    os.chdir(tmp)
    try:
        for i, m in enumerate(blocks(path.read_text())):
            if m.group("skip"):
                results.append((m, None))
                continue
            buf = io.StringIO()
            code = compile(m.group("code"), f"{path.relative_to(ROOT)}[block {i + 1}]", "exec")
            with contextlib.redirect_stdout(buf):
                exec(code, ns)
            results.append((m, buf.getvalue()))
    finally:
        os.chdir(old)
    return results


def run_page(path: Path, tmp: Path):
    """Run every block of ``path`` in ``tmp``; return [(match, captured stdout)] (skipped blocks give None)."""
    return contextvars.Context().run(_run_blocks, path, tmp)


def mismatches(path: Path, tmp: Path) -> list[str]:
    """One message per block whose printed output differs from the ```output block shown after it."""
    out = []
    for m, printed in run_page(path, tmp):
        if m.group("skip"):
            if not m.group("reason").strip():
                out.append(f"{path.name}: a skipped block must say why")
            continue
        if m.group("out") is not None and printed.rstrip() != m.group("out").rstrip():
            out.append(f"{path.name}: the output shown after this block is not what it prints; run `python "
                       f"-m tests.docs.test_pages --update {path.relative_to(ROOT)}`\n--- shown\n{m.group('out')}\n"
                       f"--- printed\n{printed}")
    return out


def check(paths) -> list[dict]:
    """``[{"page", "status": "ok" | "skipped" | "mismatch" | "error", "detail"}]`` for each page."""
    rows = []
    for path in paths:
        page = str(path.relative_to(ROOT))
        reason = missing_reason(path)
        if reason is not None:
            rows.append({"page": page, "status": "skipped", "detail": reason})
            continue
        try:
            with tempfile.TemporaryDirectory() as tmp:
                bad = mismatches(path, Path(tmp))
        except Exception as exc:  # noqa: BLE001 - reported per page
            rows.append({"page": page, "status": "error", "detail": f"{type(exc).__name__}: {exc}"})
            continue
        rows.append({"page": page, "status": "mismatch" if bad else "ok", "detail": "\n".join(bad)})
    return rows


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--check":
        chosen = [ROOT / a for a in sys.argv[2:]] or PAGES
        print(json.dumps(check(chosen)))
    else:
        print(__doc__)
