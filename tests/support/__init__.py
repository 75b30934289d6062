"""Helpers shared by the test suites (not tests themselves: nothing here is collected).

``REPO`` is the repository root: tests reach benchmarks/, docs/, proofs_checks/ and the project files
through it, never through their own file's position in tests/.
"""

from pathlib import Path

#: the repository root (tests/support/__init__.py -> tests/support -> tests -> the root)
REPO = Path(__file__).resolve().parents[2]
#: benchmarks/: tests that import a benchmark script put it first on sys.path
BENCHMARKS = REPO / "benchmarks"
