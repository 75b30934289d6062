"""Smoke tests of ``benchmarks/report_cost.py`` (issue 26: report time against audit time, the second finding's
cost): --help runs nothing; tiny settings time both phases of each row and print the tables. No timed assertion."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("matplotlib")

from tests.support import BENCHMARKS

BENCH = BENCHMARKS
sys.path.insert(0, str(BENCH))

import report_cost  # noqa: E402


def test_help_runs_nothing():
    out = subprocess.run([sys.executable, str(BENCH / "report_cost.py"), "--help"], capture_output=True, text=True,
                         check=True, timeout=120)
    assert "usage:" in out.stdout and "--cli-trials" in out.stdout and "Cold" in out.stdout


@pytest.mark.parametrize("row", ["a", "d"])
def test_rows_time_the_audit_and_the_report_in_process(row):
    calls = report_cost.run_calls(row, 2, trials=300, cli_trials=300)
    assert len(calls) == 2
    for c in calls:
        assert c["audit"] > 0 and c["report"] > 0 and c["audit_wall"] > 0 and c["report_wall"] > 0


def test_findings_rows_say_which_audit_has_two_findings():
    rows = report_cost.findings_cost(trials=300, repeats=1)
    got = {(r["sampler"], r["statistic"]): r for r in rows}
    assert len(got) == 6
    assert got[("sample_textbook", "auto")]["findings"] == 2  # the float leak: implementation and mathematics
    assert got[("sample_textbook", "auto-real")]["findings"] == 1
    assert got[("sample", "auto")]["findings"] == 1
    assert all(r["cpu"] > 0 for r in rows)
    assert got[("sample_textbook", "auto")]["share"] == 1.0


def test_tables_print_one_line_a_row(capsys):
    table = [{"row": "d", "what": report_cost.ROWS["d"],
              "cold": {"audit": 0.5, "report": 0.4, "ratio": 0.8, "wall_ratio": 0.75}}]
    report_cost.print_cost_table(table)
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "| d | dpaudit demo --report | 0.50 | 0.40 | 0.80 | - | - | - | 0.75, - |"


def test_unknown_row_is_refused():
    with pytest.raises(SystemExit):
        report_cost.main(["--rows", "a,z"])


@pytest.mark.slow
def test_main_prints_both_tables(capsys):
    assert report_cost.main(["--trials", "300", "--cli-trials", "300", "--cold", "1", "--warm", "1",
                             "--findings-trials", "300", "--findings-repeats", "1"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and line[2] in "abcd" and line[3] == " "]
    assert [r[2] for r in rows] == ["a", "b", "c", "d"]
    for r in rows:
        cells = [c.strip() for c in r.split("|")[1:-1]]
        assert all(float(x) > 0 for x in cells[2:-1])
        assert all(float(x) > 0 for x in cells[-1].split(", "))  # the wall ratios, cold and warm
    assert sum(line.startswith(("| sample |", "| sample_textbook |")) for line in out.splitlines()) == 6
