"""Every ```python block in docs/*.md and README.md is executed; its printed output is checked.

Conventions (docs/index.md explains them to writers):

* The blocks of one page run in order in one namespace, in a fresh temporary directory.
* A ```output block right after a python block is the exact stdout that block prints.
* A python block preceded by ``<!-- docs-test: skip (REASON) -->`` is not run; the reason must
  be given and is shown in the page.
* A page holding ``<!-- docs-test: requires (MODULE, ...) -->`` is skipped, with that reason, where one of
  those optional modules is not installed (CI installs them all).
* ``python tests/test_docs.py --update [PAGE ...]`` runs the pages and rewrites their output blocks
  with the real output (use it after editing an example).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").glob("**/*.md")) + [ROOT / "README.md"]
FENCE = re.compile(r"(?P<skip><!-- docs-test: skip \((?P<reason>[^)]+)\) -->\n)?```python\n(?P<code>.*?)```\n"
                   r"(?:\n?```output\n(?P<out>.*?)```\n)?", re.S)


def blocks(text: str):
    yield from FENCE.finditer(text)


def run_page(path: Path, tmp: Path):
    """Run every block; return [(match, captured stdout)] (skipped blocks give None)."""
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


def _ids():
    return [str(p.relative_to(ROOT)) for p in PAGES]


def test_pages_exist():
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    for page in ("docs/index.md", "docs/concepts.md", "docs/audit-your-mechanism.md", "docs/reading-an-audit.md",
                 "docs/cli.md", "docs/api.md", "docs/theorems/langevin.md", "docs/theorems/rgm.md",
                 "docs/theorems/dp_agd.md", "docs/theorems/sparse.md"):
        assert page in names, page


def pytest_generate_tests(metafunc):
    if "page" in metafunc.fixturenames:
        metafunc.parametrize("page", PAGES, ids=_ids())


REQUIRES = re.compile(r"<!-- docs-test: requires \((?P<mods>[^)]+)\) -->")


def test_page_examples_run_and_print_what_the_page_shows(page, tmp_path):
    import importlib.util

    import matplotlib  # noqa: F401  (docs examples write reports)

    for req in REQUIRES.finditer(page.read_text()):
        missing = [m.strip() for m in req.group("mods").split(",") if importlib.util.find_spec(m.strip()) is None]
        if missing:
            pytest.skip(f"{page.name} needs the optional {', '.join(missing)} (pip install 'dpaudit[torch]')")

    for m, out in run_page(page, tmp_path):
        if m.group("skip"):
            assert m.group("reason").strip(), "a skipped block must say why"
            continue
        if m.group("out") is not None:
            assert out.rstrip() == m.group("out").rstrip(), (
                f"{page.name}: the output shown after this block is not what it prints; "
                f"run `python tests/test_docs.py --update {page.relative_to(ROOT)}`\n--- shown\n"
                f"{m.group('out')}\n--- printed\n{out}")


def update(paths):
    import tempfile

    for path in paths:
        text = path.read_text()
        with tempfile.TemporaryDirectory() as tmp:
            results = run_page(path, Path(tmp))
        pieces, last = [], 0
        for m, out in results:
            pieces.append(text[last:m.start()])
            block = m.group(0)
            if out is not None and out.strip():
                block = (m.group("skip") or "") + "```python\n" + m.group("code") + "```\n\n```output\n" + \
                    out.rstrip() + "\n```\n"
            elif out is not None:
                block = (m.group("skip") or "") + "```python\n" + m.group("code") + "```\n"
            pieces.append(block)
            last = m.end()
        pieces.append(text[last:])
        path.write_text("".join(pieces))
        print(f"updated {path.relative_to(ROOT)}")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--update":
        chosen = [ROOT / a for a in sys.argv[2:]] or PAGES
        update(chosen)
    else:
        print(__doc__)


def test_api_reference_is_built_from_live_docstrings():
    """docs/api.md is regenerated from the docstrings when stale (parallel work changes them)."""
    import importlib.util
    import warnings

    spec = importlib.util.spec_from_file_location("build_api", ROOT / "docs" / "build_api.py")
    build_api = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_api)
    text = build_api.build()
    for name in ("audit_mechanism", "RDPAccountant", "zcdp_to_dp", "langevin_rdp", "assert_audit_consistent",
                 "write_report", "from_dp_event", "Progress"):
        assert f".{name}" in text, name
    assert text.count("### ") > 100
    api = ROOT / "docs" / "api.md"
    if not api.exists() or api.read_text() != text:
        api.write_text(text)
        warnings.warn("docs/api.md was out of date and has been regenerated; commit it", UserWarning, stacklevel=2)
    assert api.read_text() == text
