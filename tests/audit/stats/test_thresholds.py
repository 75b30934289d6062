"""Threshold choice (dpaudit.audit.stats.thresholds and the held-out / Bonferroni rules of
dpaudit.audit.stats.rules): oriented counts, soundness under the null, the unsound naive maximisation."""

import math

import numpy as np

from dpaudit.audit.stats.binomial import cp_upper
from dpaudit.audit.stats.gdp import mu_lower_from_rates
from dpaudit.audit.stats.rules import bonferroni_test, heldout_test
from dpaudit.audit.stats.thresholds import oriented_counts


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
