"""Smoke tests of benchmarks/memory.py and benchmarks/workers_speed.py (issue 30): they run and print their tables."""

import sys

import pytest

from tests.support import BENCHMARKS  # noqa: E402

sys.path.insert(0, str(BENCHMARKS))


def test_memory_benchmark_measures_one_audit():
    import memory

    row = memory.child(2_000, 0.3, 1)
    assert row["peak_rss_mb"] >= row["rss_before_mb"] > 0 and row["epsilon_lower"] >= 0.0


@pytest.mark.slow
def test_memory_benchmark_table_from_fresh_processes(capsys):
    import memory

    assert memory.main(["--trials", "1000"]) == 0
    out = capsys.readouterr().out
    assert "peak RSS" in out and "1,000" in out


@pytest.mark.slow
def test_workers_speed_benchmark_runs_and_compares_results(capsys):
    import workers_speed

    assert workers_speed.main(["--trials", "300"]) == 0
    out = capsys.readouterr().out
    assert "speed-up" in out and "True" in out
