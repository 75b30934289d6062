"""The seed-reproduction benchmark runs end to end on a small synthetic stand-in for BANK (a regression: after
the one-seed rule of issue 16 it crashed on its list seeds, and no test ran it)."""

import sys

import numpy as np

from tests.support import BENCHMARKS  # noqa: E402

sys.path.insert(0, str(BENCHMARKS))


def test_dp_agd_bank_runs_on_a_small_dataset(tmp_path, monkeypatch, capsys):
    import dp_agd_bank

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    y = (X @ np.array([1.0, -1.0, 0.5, 0.0, 0.2]) + rng.normal(size=400) > 0).astype(int)
    path = tmp_path / "bank.dat"
    np.savetxt(path, np.column_stack([X, y]), fmt="%.6f")
    monkeypatch.setenv("DPAUDIT_BANK", str(path))
    rc = dp_agd_bank.main(["--eps", "0.5", "--cells", "1", "--runs", "2", "--methods", "agd,agd_code_eq,sgd"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "DP-AGD code variant (valid orientation), equal split" in out and "epsilon = 0.5" in out


def test_sampler_benchmark_runs_and_times_every_sampler(capsys):
    import samplers

    assert samplers.main(["--draws", "2000", "--repeats", "1"]) == 0
    lines = [l for l in capsys.readouterr().out.splitlines() if l.startswith("| dpaudit") or l.startswith("| numpy")]
    # three discrete Laplace scales and two discrete Gaussian sigmas, three numpy geometric rows; the float-safe
    # Laplace and Gaussian (two values each) and numpy's laplace and normal
    assert len(lines) == 14
    assert all(float(l.split("|")[2].replace(",", "")) > 0 for l in lines)


def test_opacus_canary_benchmark_exact_distribution(capsys):
    # the exact-distribution rows of docs/opacus.md ("what it takes to catch 2x too little noise"), tiny sizes
    import opacus_canaries

    assert opacus_canaries.main(["--m", "300", "--audits", "2", "--trainings", "2000"]) == 0
    out = capsys.readouterr().out
    row = [l for l in out.splitlines() if l.startswith("| 300 |")]
    assert len(row) == 1 and "exact distribution" in row[0] and "of 2" in row[0]
    assert any(l.startswith("| 2,000 |") for l in out.splitlines())  # the many-runs row


def test_dp_agd_bank_sgd_ma_compute_cap(tmp_path, monkeypatch, capsys):
    # SGD-MA's T above --ma-max-run is reported as "not run (T = ...: compute)", never as a score; raising the
    # cap runs it (how the T = 10000 / 20000 rows of docs/theorems/dp_agd.md were made)
    import dp_agd_bank

    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + rng.normal(size=300) > 0).astype(int)
    path = tmp_path / "bank.dat"
    np.savetxt(path, np.column_stack([X, y]), fmt="%.6f")
    monkeypatch.setenv("DPAUDIT_BANK", str(path))
    assert dp_agd_bank.main(["--eps", "0.5", "--cells", "1", "--runs", "2", "--methods", "ma", "--ma-max-run", "0"]) == 0
    capped = [l for l in capsys.readouterr().out.splitlines() if l.startswith("| SGD-MA")]
    assert len(capped) == 1 and "not run (T = " in capped[0] and ": compute)" in capped[0]
    assert dp_agd_bank.main(["--eps", "0.5", "--cells", "1", "--runs", "2", "--methods", "ma",
                             "--ma-max-run", "20000"]) == 0
    ran = [l for l in capsys.readouterr().out.splitlines() if l.startswith("| SGD-MA")]
    assert len(ran) == 1 and "not run" not in ran[0] and "+-" in ran[0]


def test_dp_testing_suite_table_selection_fraction(capsys):
    # the 2e8 rows of docs/attacks-benchmark.md use --selection-fraction 0.05: the evaluation size (and so the
    # ceiling column) must follow it
    import dp_testing_suite as S

    assert S.main(["table", "--trials", "4000", "--no-search", "--only", "ReportNoisyMax3",
                   "--selection-fraction", "0.05"]) == 0
    row = [l for l in capsys.readouterr().out.splitlines() if l.startswith("| ReportNoisyMax3")]
    assert len(row) == 1
    cells = [c.strip() for c in row[0].split("|")]
    p, q = S._atoms("ReportNoisyMax3 (Lap, value)")[:2]
    assert cells[5] == "4,000" and float(cells[7]) == float(S._fmt(S.ceiling(p, q, 3800)))


def test_svt3_additive_attack_runs(capsys):
    # the additive-logistic (GAM) rows of docs/attacks-benchmark.md, tiny size: one row per seed, both bounds
    import dp_testing_suite as S

    assert S.main(["svt3-additive", "--trials", "20000", "--seeds", "1", "--knots", "3", "--fit", "half"]) == 0
    rows = [l for l in capsys.readouterr().out.splitlines() if l.startswith("| 0 |")]
    assert len(rows) == 1
    cells = [c.strip() for c in rows[0].split("|")]
    assert cells[4] == "training half" and 0.0 <= float(cells[5]) < 5 and 0.0 <= float(cells[6]) < 5


def test_additive_hinge_features_represent_a_piecewise_linear_value():
    # _Hinges: sentinels get their own indicator, the ordinary values an intercept, the value and the hinges
    import dp_testing_suite as S

    rng = np.random.default_rng(0)
    train = np.where(rng.random((400, 2)) < 0.5, -1000.0, rng.normal(size=(400, 2)))
    f = S._Hinges(train, 3)
    X = f(np.array([[-1000.0, 0.5], [0.25, -1000.0]]))
    assert X.shape == (2, 2 * (1 + 2 + 3))
    assert X[0, 0] == 1.0 and X[0, 1] == 0.0 and X[0, 2] == 0.0  # coordinate 0 is the sentinel
    assert X[0, 7] == 1.0 and X[0, 8] == 0.5  # coordinate 1 is ordinary: intercept and value
    np.testing.assert_allclose(X[0, 9:], np.maximum(0.5 - f.knots[1], 0.0))
