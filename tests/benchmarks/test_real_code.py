"""benchmarks/real_code.py runs end to end at tiny sizes (issue 18: the library and floating-point table)."""

import sys

from tests.support import BENCHMARKS  # noqa: E402

sys.path.insert(0, str(BENCHMARKS))


def test_real_code_benchmark_runs_and_prints_both_tables(capsys):
    import real_code

    assert real_code.main(["--trials", "300", "--fp-trials", "300", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "| library | mechanism | claim |" in out and "| sampler | claim (eps, delta) |" in out
    lines = [ln for ln in out.splitlines() if ln.startswith("| numpy: x + rng.laplace(0, 1) |")]
    assert len(lines) == 1 and "| yes (" in lines[0] and "| violation |" in lines[0]
    discrete = [ln for ln in out.splitlines() if ln.startswith("| dpaudit Discrete")]
    assert len(discrete) == 2 and all("| no |" in ln for ln in discrete)
