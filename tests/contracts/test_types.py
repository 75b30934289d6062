"""mypy over the whole package, function bodies included (issue 25, item 6).

The configuration is ``[tool.mypy]`` in ``pyproject.toml``: ``files = ["dpaudit"]``,
``check_untyped_defs = true``, and ``ignore_missing_imports`` only for the third-party modules that
ship no type information. mypy is in the ``test`` extra; without it the check is skipped with the
reason.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from tests.support import REPO

ROOT = REPO


def test_mypy_whole_package_zero_errors():
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[test]' installs it)")
    out = subprocess.run([sys.executable, "-m", "mypy", "dpaudit", "--cache-dir", str(ROOT / ".mypy_cache")],
                         cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Success: no issues found" in out.stdout, out.stdout


def test_mypy_configuration_checks_the_whole_package():
    """The configuration the check relies on: every file, bodies of unannotated functions included, and no
    blanket ``ignore_missing_imports`` (only per third-party module)."""
    tomllib = pytest.importorskip("tomllib")
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert cfg["files"] == ["dpaudit"]
    assert cfg["check_untyped_defs"] is True
    assert "ignore_missing_imports" not in cfg and "exclude" not in cfg and "follow_imports" not in cfg
    for override in cfg.get("overrides", []):
        assert set(override) == {"module", "ignore_missing_imports"}
        assert not any(m == "dpaudit" or m.startswith("dpaudit.") for m in override["module"])
