"""Collect every ``proofs_checks/<name>.py`` script as one pytest item.

A proof check is a standalone script with ``main() -> int`` (0 = every comparison holds).
Files whose name starts with ``_`` are helpers, not checks.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


def pytest_collect_file(parent, file_path):
    if (
        file_path.suffix == ".py"
        and file_path.parent == HERE
        and not file_path.name.startswith("_")
        and file_path.name != "conftest.py"
    ):
        return ProofCheckFile.from_parent(parent, path=file_path)
    return None


class ProofCheckFile(pytest.File):
    def collect(self):
        yield ProofCheckItem.from_parent(self, name=self.path.stem)


class ProofCheckItem(pytest.Item):
    def runtest(self):
        spec = importlib.util.spec_from_file_location(f"proofs_checks.{self.name}", self.path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        status = mod.main()
        if status != 0:
            raise AssertionError(f"proof check {self.name} reported a violation (exit {status})")

    def reportinfo(self):
        return self.path, 0, f"proof check: {self.name}"
