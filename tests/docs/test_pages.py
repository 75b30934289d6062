"""Every ```python block in docs/*.md and README.md is executed; its printed output is checked.

Conventions (docs/index.md explains them to writers):

* The blocks of one page run in order in one namespace, in a fresh temporary directory.
* A ```output block right after a python block is the exact stdout that block prints.
* A python block preceded by ``<!-- docs-test: skip (REASON) -->`` is not run; the reason must
  be given and is shown in the page.
* A page holding ``<!-- docs-test: requires (MODULE, ...) -->`` is skipped, with that reason and the pip command, where one of
  those optional modules is not installed (CI installs them all).
* ``python -m tests.docs.test_pages --update [PAGE ...]`` (from the repository root) runs the pages and rewrites their output blocks
  with the real output (use it after editing an example).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.docs_runner import PAGES, ROOT, blocks, mismatches, missing_reason, run_page  # noqa: E402

__all__ = ["PAGES", "ROOT", "blocks", "run_page", "update"]


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


def test_page_examples_run_and_print_what_the_page_shows(page, tmp_path):
    import matplotlib  # noqa: F401  (docs examples write reports)

    reason = missing_reason(page)
    if reason is not None:
        pytest.skip(reason)
    bad = mismatches(page, tmp_path)
    assert not bad, bad[0]


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
