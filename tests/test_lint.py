"""Ruff and a type check of the public modules run with the tests (issue 16).

Their configuration is in ``pyproject.toml`` (``[tool.ruff]``, ``[tool.mypy]``); both tools are in
the ``test`` extra, so CI runs these checks. Without a tool installed the check is skipped with
the reason.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _tool(name: str) -> list[str]:
    exe = shutil.which(name, path=str(pathlib.Path(sys.executable).parent)) or shutil.which(name)
    if exe is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]' installs it)")
    return [exe]


def test_ruff():
    out = subprocess.run([*_tool("ruff"), "check", "--no-cache", "dpaudit", "tests", "benchmarks", "proofs_checks"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_on_the_public_modules():
    out = subprocess.run([*_tool("mypy"), "--cache-dir", str(ROOT / ".mypy_cache")], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
