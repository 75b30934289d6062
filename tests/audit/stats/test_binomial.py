"""Statistics of the auditors: Clopper-Pearson, epsilon/GDP bounds, thresholds, one-run, runner."""

import json
import math
from concurrent.futures import ThreadPoolExecutor

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.audit.protocol.result import AuditResult, Estimate
from dpaudit.audit.stats.binomial import cp_lower, cp_upper
from dpaudit.audit.stats.error_rates import epsilon_lower_from_counts, epsilon_lower_from_rates
from dpaudit.audit.stats.gdp import gdp_delta_of, gdp_epsilon_of, mu_lower_from_rates
from dpaudit.audit.stats.one_run import one_run_audit, one_run_epsilon_lower, one_run_p_value
from dpaudit.audit.stats.rules import bonferroni_test, heldout_test
from dpaudit.audit.stats.thresholds import oriented_counts
from dpaudit.core.runner import chunk_sizes, concat_chunks, run_chunks


# ------------------------------------------------------------------ Clopper-Pearson
def _mp_cp_upper(k, n, beta):
    """Independent oracle: bisection in 40-digit arithmetic on P[Bin(n, p) <= k] = beta."""
    mpmath.mp.dps = 40
    cdf = lambda p: sum(mpmath.binomial(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))  # noqa: E731
    lo, hi = mpmath.mpf(0), mpmath.mpf(1)
    for _ in range(150):  # cdf decreasing in p
        mid = (lo + hi) / 2
        if cdf(mid) > beta:
            lo = mid
        else:
            hi = mid
    return float(hi)


@pytest.mark.parametrize("k,n,beta", [(0, 10, 0.05), (3, 10, 0.05), (7, 20, 0.025), (1, 50, 0.01)])
def test_cp_upper_matches_mpmath(k, n, beta):
    exact = _mp_cp_upper(k, n, beta)
    up = cp_upper(k, n, beta)
    assert up >= exact
    assert up == pytest.approx(exact, rel=1e-8)


def test_cp_closed_forms_and_edges():
    n, beta = 10_000, 0.025
    assert cp_upper(0, n, beta) >= 1 - beta ** (1 / n)
    assert cp_upper(0, n, beta) == pytest.approx(1 - beta ** (1 / n), rel=1e-9)
    assert cp_lower(n, n, beta) <= beta ** (1 / n)
    assert cp_upper(n, n, beta) == 1.0 and cp_lower(0, n, beta) == 0.0
    k = np.arange(0, 11)
    assert np.all(cp_lower(k, 10, 0.05) <= k / 10) and np.all(cp_upper(k, 10, 0.05) >= k / 10)


def test_cp_coverage():
    """Coverage of the auditor at its stated confidence: miss rate P[p > p+] <= beta' + 3 sqrt(beta'(1-beta')/R)."""
    rng = np.random.default_rng(1)
    R, beta = 10_000, 0.05
    slack = 3 * math.sqrt(beta * (1 - beta) / R)
    for n in (5, 30, 200):
        for p in (0.001, 0.02, 0.3, 0.5, 0.9, 0.999):
            k = rng.binomial(n, p, size=R)
            assert np.mean(p > cp_upper(k, n, beta)) <= beta + slack
            assert np.mean(p < cp_lower(k, n, beta)) <= beta + slack


def test_cp_coverage_detects_a_broken_bound():
    """The coverage check has power: the point estimate k/n misses far more often than beta."""
    rng = np.random.default_rng(2)
    k = rng.binomial(30, 0.3, size=10_000)
    assert np.mean(0.3 > k / 30) > 0.3


@pytest.mark.parametrize("bad", [dict(k=-1, n=5, beta=0.05), dict(k=6, n=5, beta=0.05), dict(k=1.5, n=5, beta=0.05),
                                 dict(k=1, n=0, beta=0.05), dict(k=1, n=5, beta=0.0), dict(k=1, n=5, beta=1.0),
                                 dict(k=1, n=5, beta=float("nan"))])
def test_cp_bad_inputs(bad):
    with pytest.raises(ValueError):
        cp_upper(**bad)
    with pytest.raises(ValueError):
        cp_lower(**bad)


# ------------------------------------------------------------------ epsilon bounds
def test_epsilon_from_rates_formula():
    # Laplace(1) between 0 and 1, test s > 1: FPR = e^-1/2, FNR = 1/2 -> epsilon = 1 exactly
    fpr, fnr = 0.5 * math.exp(-1), 0.5
    assert epsilon_lower_from_rates(fpr, fnr, 0.0) == pytest.approx(1.0, abs=1e-12)
    assert epsilon_lower_from_rates(fpr, fnr, 0.0) <= 1.0
    assert epsilon_lower_from_rates(0.5, 0.5, 0.0) == 0.0
    assert epsilon_lower_from_rates(0.01, 0.5, 0.6) == 0.0  # 1 - delta - FNR < 0 on both sides


def test_epsilon_ceiling_reference():
    """Kairouz, Oh, Viswanath 2015, Thm. 2.1; Jagielski, Ullman, Oprea 2020: k_FP = 0, N0 = 1e4, beta' = 0.025: about log(N0 (1 - delta - FNR+) / log(1/beta'))."""
    fpr_u = cp_upper(0, 10_000, 0.025)
    assert epsilon_lower_from_rates(fpr_u, 0.0, 0.0) == math.inf  # FNR = 0 known exactly: no finite bound
    assert epsilon_lower_from_rates(fpr_u, 0.5, 0.0) == pytest.approx(math.log(5_000 / math.log(40)), rel=1e-3)


@given(st.integers(0, 200), st.integers(0, 200), st.floats(0, 0.5), st.floats(0, 0.5))
def test_epsilon_bound_non_increasing_in_delta(kfp, kfn, d1, d2):
    lo, hi = sorted((d1, d2))
    a = epsilon_lower_from_counts(kfp, 200, kfn, 200, lo, 0.05)
    b = epsilon_lower_from_counts(kfp, 200, kfn, 200, hi, 0.05)
    assert b <= a


@given(st.integers(0, 100), st.integers(0, 100), st.floats(0.001, 0.4), st.floats(0.001, 0.4))
def test_epsilon_bound_non_decreasing_in_beta_and_symmetric(kfp, kfn, b1, b2):
    lo, hi = sorted((b1, b2))
    assert epsilon_lower_from_counts(kfp, 100, kfn, 100, 1e-5, lo) <= epsilon_lower_from_counts(kfp, 100, kfn, 100, 1e-5, hi)
    assert epsilon_lower_from_counts(kfp, 100, kfn, 100, 0.0, lo) == epsilon_lower_from_counts(kfn, 100, kfp, 100, 0.0, lo)


def test_epsilon_rates_bad_inputs():
    with pytest.raises(ValueError, match="delta"):
        epsilon_lower_from_rates(0.1, 0.1, 1.0)
    with pytest.raises(ValueError, match="fpr"):
        epsilon_lower_from_rates(-0.1, 0.1, 0.0)
    with pytest.raises(ValueError, match="fnr"):
        epsilon_lower_from_rates(0.1, float("nan"), 0.0)


# ------------------------------------------------------------------ GDP
def test_gdp_epsilon_reference_and_inverse():
    # Balle & Wang 2018, Thm. 8: sigma = 3.73 is (1, 1e-5)-DP
    assert gdp_epsilon_of(1 / 3.73, 1e-5) == pytest.approx(1.0, abs=2e-3)
    for mu in (0.1, 0.5, 1.0, 3.0):
        eps = gdp_epsilon_of(mu, 1e-6)
        assert gdp_delta_of(mu, eps) == pytest.approx(1e-6, rel=1e-8)
        assert gdp_delta_of(mu, eps) >= 1e-6 * (1 - 1e-9)  # rounded down: delta at eps is not below target


def test_gdp_delta_matches_mpmath():
    mpmath.mp.dps = 40
    for mu, eps in ((1.0, 2.0), (0.3, 0.5), (2.0, 6.0)):
        m, e = mpmath.mpf(mu), mpmath.mpf(eps)
        exact = mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)
        assert gdp_delta_of(mu, eps) == pytest.approx(float(exact), rel=1e-9)


def test_gdp_epsilon_against_conversions():
    conv = pytest.importorskip("dpaudit.accounting.conversions")
    if not hasattr(conv, "gdp_epsilon"):
        pytest.skip("conversions.gdp_epsilon not available")
    for mu in (0.2, 1.0, 2.5):
        assert gdp_epsilon_of(mu, 1e-5) == pytest.approx(conv.gdp_epsilon(mu, 1e-5), rel=1e-6)


def test_mu_lower_formula():
    from scipy.stats import norm
    fpr, fnr = 0.1, 0.2
    assert mu_lower_from_rates(fpr, fnr) == pytest.approx(norm.ppf(0.9) - norm.ppf(0.2), rel=1e-12)
    assert mu_lower_from_rates(0.5, 0.5) == 0.0
    assert mu_lower_from_rates(0.6, 0.6) == 0.0


# ------------------------------------------------------------------ one run
@pytest.mark.parametrize("m,r,v,expected", [(1000, 10, 10, 1.01), (1000, 100, 100, 3.47), (1000, 1000, 1000, 5.78),
                                            (10_000, 1000, 900, 2.02), (10_000, 1000, 750, 0.97),
                                            (10_000, 1000, 600, 0.30)])
def test_one_run_ceilings_reference(m, r, v, expected):
    """Steinke, Nasr, Jagielski 2023 ceilings (delta = 1e-5, beta = 0.05)."""
    assert one_run_epsilon_lower(m=m, r=r, v=v, delta=1e-5, confidence=0.95) == pytest.approx(expected, abs=0.006)


def test_one_run_p_value_brute_force():
    """delta = 0: p(eps) is the binomial tail; compare with an explicit sum."""
    eps, r, v = 0.7, 20, 15
    q = math.exp(eps) / (1 + math.exp(eps))
    tail = sum(math.comb(r, i) * q**i * (1 - q) ** (r - i) for i in range(v, r + 1))
    assert one_run_p_value(eps, m=50, r=r, v=v) == pytest.approx(tail, rel=1e-10)
    assert one_run_p_value(eps, m=50, r=r, v=v, delta=1e-3) > tail


def test_one_run_null_soundness():
    rng = np.random.default_rng(3)
    hits = 0
    for _ in range(200):
        coins = rng.random(1000) < 0.5
        scores = rng.standard_normal(1000)  # independent of the coins: epsilon = 0
        hits += one_run_audit(scores, coins, k_in=50, k_out=50, delta=1e-5)["epsilon_lower"] > 0
    assert hits <= 200 * 0.05 + 3 * math.sqrt(200 * 0.05 * 0.95)


def test_one_run_bad_inputs():
    with pytest.raises(ValueError, match="r must be <= m"):
        one_run_epsilon_lower(m=5, r=6, v=1)
    with pytest.raises(ValueError, match="v must be <= r"):
        one_run_epsilon_lower(m=10, r=5, v=6)


# ------------------------------------------------------------------ thresholds
def test_oriented_counts():
    s0 = np.array([0.0, 1.0, 2.0])
    s1 = np.array([1.0, 2.0, 3.0])
    k_fp, k_fn = oriented_counts(s0, s1, [1.0])
    assert k_fp[:, 0].tolist() == [1, 2] and k_fn[:, 0].tolist() == [1, 2]


def test_heldout_null_soundness():
    """Coverage on identical distributions: P[eps_LB > 0] <= beta, with selection over many thresholds."""
    rng = np.random.default_rng(4)
    R, beta = 200, 0.05
    hits_dp = hits_gdp = 0
    for _ in range(R):
        a, b, c, d = (rng.standard_normal(200) for _ in range(4))
        hits_dp += heldout_test(a, b, c, d, delta=0.0, beta=beta, kind="dp")["value"] > 0
        hits_gdp += heldout_test(a, b, c, d, delta=0.0, beta=beta, kind="gdp")["value"] > 0
    limit = R * beta + 3 * math.sqrt(R * beta * (1 - beta))
    assert hits_dp <= limit and hits_gdp <= limit


def test_naive_maximisation_is_unsound():
    """The trap of sec. 3: the max over all thresholds of the CP/GDP bound on the SAME data breaks the level."""
    rng = np.random.default_rng(5)
    hits = 0
    for _ in range(200):
        a, b = rng.standard_normal(1000), rng.standard_normal(1000)
        k_fp, k_fn = oriented_counts(a, b, np.sort(np.concatenate([a, b])))
        hits += np.max(mu_lower_from_rates(cp_upper(k_fp, 1000, 0.025), cp_upper(k_fn, 1000, 0.025))) > 0
    assert hits > 200 * 0.05 + 3 * math.sqrt(200 * 0.05 * 0.95)


def test_bonferroni_null_soundness():
    rng = np.random.default_rng(6)
    grid = np.linspace(-2, 2, 40)
    hits = sum(bonferroni_test(rng.standard_normal(300), rng.standard_normal(300), grid, delta=0.0, beta=0.05)["value"] > 0
               for _ in range(300))
    assert hits <= 300 * 0.05 + 3 * math.sqrt(300 * 0.05 * 0.95)


def test_heldout_invariant_under_monotone_transform():
    rng = np.random.default_rng(7)
    a, b, c, d = rng.laplace(0, 1, 2000), rng.laplace(1, 1, 2000), rng.laplace(0, 1, 5000), rng.laplace(1, 1, 5000)
    f = lambda x: np.exp(x / 3) + x ** 3  # noqa: E731 strictly increasing
    r1 = heldout_test(a, b, c, d, delta=0.0, beta=0.05)
    r2 = heldout_test(f(a), f(b), f(c), f(d), delta=0.0, beta=0.05)
    assert r1["value"] == r2["value"] > 0.5
    assert (r1["k_fp"], r1["k_fn"]) == (r2["k_fp"], r2["k_fn"])


# ------------------------------------------------------------------ runner and results
def test_run_chunks_deterministic_across_executors():
    def fn(size, ss):
        return np.random.default_rng(ss).standard_normal(size)

    a = concat_chunks(run_chunks(fn, 2500, 11, 1000))
    with ThreadPoolExecutor(2) as ex:
        b = concat_chunks(run_chunks(fn, 2500, 11, 1000, executor=ex))
    assert np.array_equal(a, b) and a.shape == (2500,)
    assert chunk_sizes(2500, 1000) == [1000, 1000, 500]
    assert not np.array_equal(a, concat_chunks(run_chunks(fn, 2500, 12, 1000)))
    with pytest.raises(ValueError, match="seed"):
        run_chunks(fn, 10, -1, 5)


def test_result_to_dict_is_json():
    r = AuditResult(1.0, math.inf, 1e-5, 0.95, False, "m", 10, {"a": np.float64(2.0), "b": np.arange(3), "c": (1, 2)})
    json.dumps(r.to_dict())
    e = Estimate(1.0, 0.5, math.inf, "x", "none")
    assert json.loads(json.dumps(e.to_dict()))["upper"] == "inf"
