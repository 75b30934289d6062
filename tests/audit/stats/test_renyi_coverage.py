"""Coverage of the Gaussian Renyi intervals on a small grid (slow; the full table is
benchmarks/renyi_coverage.py). Tolerances are binomial: 3 Monte-Carlo standard errors.

The old code crashed in the first pooled cell (noncentrality ~4000 with nu ~ 6e5) and covered
0 %, 64 % and 74 % in the unequal-variance cells below (P = Q, n = 20, alpha = 20).
"""

import math

import numpy as np
import pytest

from dpaudit.audit import renyi_divergence
from dpaudit.audit.stats.renyi import equal_interval
from dpaudit.core.gaussian_divergence import renyi_gaussians

CONF = 0.95


def se(p, runs):
    return math.sqrt(p * (1 - p) / runs)


@pytest.mark.slow
@pytest.mark.parametrize("d,n,lam,runs", [(3, 100_000, 4200.0, 250), (1, 5, 30.0, 400), (50, 20, 1.0, 400),
                                          (3, 1000, 0.0, 400)])
@pytest.mark.parametrize("known", [False, True])
def test_equal_variance_interval_is_exact(d, n, lam, runs, known):
    """Each end misses with probability beta/2 (lambda > 0); at lambda = 0 the lower end is 0
    with probability 1 - beta/2 and the upper end cannot miss."""
    rng = np.random.default_rng(hash((d, n, lam, known)) % 2**32)
    c, nu = 2.0 / n, d * (2 * n - 2)
    truth = 2.0 * c * lam / 2.0
    lo_miss = hi_miss = 0
    for _ in range(runs):
        m2 = c * (rng.noncentral_chisquare(d, lam) if lam > 0 else rng.chisquare(d))
        ss = 0.0 if known else rng.chisquare(nu)
        lo, val, hi, _ = equal_interval(m2, ss, n, n, d, 2.0, CONF, sigma=1.0 if known else None)
        assert lo <= val <= hi
        lo_miss += lo > truth
        hi_miss += hi < truth
    if lam > 0:
        for miss in (lo_miss, hi_miss):
            assert abs(miss / runs - 0.025) <= 3 * se(0.025, runs), (lo_miss, hi_miss)
    else:
        assert hi_miss == 0
        assert abs(lo_miss / runs - 0.025) <= 3 * se(0.025, runs), lo_miss


@pytest.mark.slow
@pytest.mark.parametrize("n,d,alpha,mu,s_p,runs", [
    (20, 1, 2.0, 0.0, 1.0, 100),     # P = Q: the interval must contain 0
    (20, 1, 2.0, 0.5, 1.2, 100),     # small n
    (100, 3, 20.0, 0.1, 1.01, 60),   # large order (limit r < 20/19)
    (100, 1, 100.0, 0.05, 1.002, 60),
    (500, 2, 2.0, 0.3, 1.36, 60),    # near the finiteness boundary: s_alpha^2 = 2 - 1.36^2 = 0.15
])
def test_unequal_variance_interval_covers(n, d, alpha, mu, s_p, runs):
    rng = np.random.default_rng(n * 1000 + d)
    truth = renyi_gaussians(alpha, np.full(d, mu), s_p, np.zeros(d), 1.0, dim=d)
    hits = 0
    for _ in range(runs):
        P = rng.normal(mu, s_p, (n, d))
        Q = rng.normal(0.0, 1.0, (n, d))
        e = renyi_divergence(P, Q, alpha, method="gaussian-unequal", confidence=CONF)
        hits += e.lower <= truth <= e.upper
    assert hits / runs >= CONF - 3 * se(CONF, runs), (hits, runs, truth)
