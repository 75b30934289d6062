"""Smoke tests of the matrix-mechanism benchmarks (tiny sizes; the peers' columns are optional)."""

import sys

from tests.support import BENCHMARKS  # noqa: E402

sys.path.insert(0, str(BENCHMARKS))


def test_matrix_mechanisms_benchmark_runs_every_section(capsys):
    import matrix_mechanisms

    assert matrix_mechanisms.main(["--steps", "32", "--bands", "4", "--buffers", "2", "--sensitivity-steps", "32",
                                   "--accounting-steps", "32", "--samples", "2000", "--no-jax"]) == 0
    out = capsys.readouterr().out
    assert "| 32 | 4-epoch fixed order | banded (4 bands) |" in out
    assert "identity (DP-SGD)" in out and "binary tree, 32 steps" in out
    assert "MMCC (certified" in out and "dpaudit Monte Carlo" in out and "probabilistic" in out
    assert out.count("| n/a |") >= 3  # the peer's columns without jax


def test_dp_ftrl_audit_benchmark_flags_a_mistake(capsys):
    import dp_ftrl_audits

    assert dp_ftrl_audits.main(["--seeds", "1", "--trials", "4000", "--variants", "single"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert rows[1].startswith("| single-participation claim") and "| 1 of 1 |" in rows[1]
    assert "correct claim" in rows[2] and "| 0 of 1 |" in rows[2]
