"""benchmarks/accounting.py: --help without running, and a quick run of both tables (small T)."""

import sys

import pytest

from tests.support import BENCHMARKS  # noqa: E402

sys.path.insert(0, str(BENCHMARKS))


def test_help_does_not_run(capsys):
    import accounting

    with pytest.raises(SystemExit) as exc:
        accounting.main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--repeats" in out and "PLD" not in out.split("options")[-1].split("\n")[0]


def test_quick_run_prints_both_tables(capsys):
    pytest.importorskip("dp_accounting")
    import accounting

    assert accounting.main(["--quick", "--no-prv"]) == 0
    out = capsys.readouterr().out
    rows = [l for l in out.splitlines() if l.startswith("| 100 |") or l.startswith("| 1,000 |")]
    assert len(rows) == 2
    cells = [c.strip() for c in rows[1].split("|")]
    lower, upper = (float(x) for x in cells[5].strip("[]").split(","))
    assert 0.0 < lower <= upper <= float(cells[9])  # (the upper end is not above dp_accounting's)
    assert "goal epsilon_interval() <= 1 x dp_accounting:" in out
    assert any(l.startswith("| q=0.01 sigma=1.1 T=1000 |") for l in out.splitlines())
