"""dpaudit.audit.stats.binomial: the Clopper-Pearson bounds against mpmath, closed forms, coverage."""

import math

import mpmath
import numpy as np
import pytest

from dpaudit.audit.stats.binomial import cp_lower, cp_upper


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
