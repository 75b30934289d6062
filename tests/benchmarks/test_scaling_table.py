"""Smoke tests of the issue-30 benchmarks: --help without running, and one tiny row of each."""

import subprocess
import sys

import pytest

from tests.support import BENCHMARKS

BENCH = BENCHMARKS
sys.path.insert(0, str(BENCH))


@pytest.mark.parametrize("script", ["scaling_table.py", "selection_cap.py", "dask_scale.py"])
def test_help_runs_nothing(script):
    out = subprocess.run([sys.executable, str(BENCH / script), "--help"], capture_output=True, text=True, check=True,
                         timeout=120)
    assert "usage:" in out.stdout and "--" in out.stdout


@pytest.mark.slow
def test_scaling_table_row_in_process(capsys):
    import scaling_table

    assert scaling_table.main(["--trials", "2000"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| gaussian") or
            line.startswith("| laplace")]
    assert len(rows) == 2
    for row in rows:
        cells = [c.strip() for c in row.split("|")[1:-1]]
        eps, ratio, ceiling = float(cells[3]), float(cells[4]), float(cells[5])
        assert 0.0 < eps <= ceiling * 1.2 and 0.0 < ratio < 1.0  # a valid bound stays below the truth


def test_selection_cap_replicate():
    import selection_cap

    before, capped, _, _ = selection_cap.replicate("laplace", 4_000, 0)
    assert 0.0 <= before < 1.0 and 0.0 <= capped < 1.0  # valid bounds on Laplace(b = 1): below its epsilon 1


@pytest.mark.slow
def test_scaling_table_overhead_rows(capsys):
    """The overhead rows: wall-clock and CPU seconds of the audit and of numpy's draws (timed in the audit's own
    process), their ratios, and the audit's bound."""
    import scaling_table

    assert scaling_table.main(["--overhead", "--overhead-trials", "3000"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith(("| fixed", "| auto"))]
    assert len(rows) == 2
    for row in rows:
        cells = [c.strip() for c in row.split("|")[1:-1]]
        assert len(cells) == 10
        audit, bare, ratio, audit_cpu, bare_cpu, cpu_ratio = (float(c) for c in cells[2:8])
        assert audit > 0 and audit_cpu > 0 and bare >= 0 and bare_cpu >= 0  # numpy's seconds print as 0.000 here
        assert ratio > 1.0 and cpu_ratio > 1.0  # an audit draws the same samples, and more
        assert 0.0 <= float(cells[8]) < 5.0  # a valid bound on the Gaussian (truth 4.377 at delta 1e-5)
