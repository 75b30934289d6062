"""Ruff runs with the tests (issue 16); the type check of the whole package is tests/contracts/test_types.py (issue 25).

The configuration is in ``pyproject.toml`` (``[tool.ruff]``, ``[tool.mypy]``); both tools are in
the ``test`` extra, so CI runs these checks. Without a tool installed the check is skipped with
the reason.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

import pytest

from tests.support import REPO

ROOT = REPO


def _tool(name: str) -> list[str]:
    exe = shutil.which(name, path=str(pathlib.Path(sys.executable).parent)) or shutil.which(name)
    if exe is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]' installs it)")
    return [exe]


def test_ruff():
    out = subprocess.run([*_tool("ruff"), "check", "--no-cache", "dpaudit", "tests", "benchmarks", "proofs_checks"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
