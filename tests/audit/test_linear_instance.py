"""renyi_divergence and the linear Gaussian instance of Chourasia, Ye, Shokri 2021 (docs/theorems/langevin.md)."""

import math

import mpmath
import numpy as np
import pytest

from dpaudit.audit import renyi_divergence
from dpaudit.audit.linear_instance import linear_instance_datasets, linear_instance_table, simulate_noisy_gd
from dpaudit.audit.stats.renyi import bernoulli_renyi, gaussian_renyi


def exact_linear(alpha, eta, K, sigma=1.0, S=1.0, n=1):
    """Closed form of A.5, written out independently of dpaudit.bounds."""
    r = (1 - eta) ** K
    return alpha * S**2 * (2 - eta) / (4 * sigma**2 * n**2) * (1 - r) / (1 + r)


@pytest.mark.parametrize("eta,K,expected", [(0.1, 10, 0.458786515383), (0.1, 100, 0.949949534683),
                                            (0.5, 3, 0.583333333333)])
def test_exact_oracle_reference_values(eta, K, expected):
    assert exact_linear(2.0, eta, K) == pytest.approx(expected, rel=1e-11)


def test_simulated_iterates_have_the_closed_form_moments():
    D, Dp = linear_instance_datasets(1)
    th = simulate_noisy_gd(Dp, steps=10, step_size=0.1, sigma=1.0, trials=50_000, seed=0)
    mean = 1 - 0.9**10
    var = 2 * (1 - 0.9**20) / 1.9
    assert th.mean() == pytest.approx(mean, abs=4 * math.sqrt(var / 50_000))
    assert th.var() == pytest.approx(var, rel=0.03)


def test_gaussian_renyi_closed_form_vs_quadrature():
    mpmath.mp.dps = 30
    for a, m1, m2, v1, v2 in ((2.0, 0.3, 0.0, 1.0, 1.5), (1.5, 1.0, -0.5, 1.2, 1.0), (5.0, 0.0, 0.7, 1.0, 1.0)):
        p = lambda x: mpmath.npdf(x, m1, mpmath.sqrt(v1))  # noqa: E731
        q = lambda x: mpmath.npdf(x, m2, mpmath.sqrt(v2))  # noqa: E731
        integral = mpmath.quad(lambda x: p(x) ** a * q(x) ** (1 - a), [-mpmath.inf, 0, mpmath.inf])
        exact = float(mpmath.log(integral) / (a - 1))
        assert gaussian_renyi(a, [m1], [m2], v1, v2) == pytest.approx(exact, rel=1e-9)
    assert gaussian_renyi(3.0, [0.0], [0.0], 2.0, 1.0) == math.inf  # s_alpha^2 = 3 - 4 < 0


def test_bernoulli_renyi_direct():
    a, p, q = 3.0, 0.3, 0.1
    direct = math.log(p**a * q ** (1 - a) + (1 - p) ** a * (1 - q) ** (1 - a)) / (a - 1)
    assert bernoulli_renyi(a, p, q) == pytest.approx(direct, rel=1e-12)
    assert bernoulli_renyi(a, 0.2, 0.2) == pytest.approx(0.0, abs=1e-15)
    assert bernoulli_renyi(a, 0.2, 0.0) == math.inf


@pytest.fixture(scope="module")
def iterates_1e5():
    D, Dp = linear_instance_datasets(1)
    th = simulate_noisy_gd(D, steps=10, step_size=0.1, sigma=1.0, trials=100_000, seed=11)
    thp = simulate_noisy_gd(Dp, steps=10, step_size=0.1, sigma=1.0, trials=100_000, seed=12)
    return thp, th


@pytest.mark.parametrize("alpha", [2.0, 5.0, 10.0])
def test_accuracy_within_5_percent(iterates_1e5, alpha):
    """Issue 6: 1e5 trials per side, gaussian estimator within 5% of the exact value."""
    thp, th = iterates_1e5
    exact = exact_linear(alpha, 0.1, 10)
    est = renyi_divergence(thp, th, alpha, method="gaussian")
    assert est.value == pytest.approx(exact, rel=0.05)
    assert est.lower <= exact <= est.upper
    assert "Gaussian" in est.assumption
    unequal = renyi_divergence(thp, th, alpha, method="gaussian-unequal", seed=0)
    assert unequal.value == pytest.approx(exact, rel=0.05)


def test_nonparametric_is_a_lower_bound(iterates_1e5):
    thp, th = iterates_1e5
    for alpha in (2.0, 5.0):
        est = renyi_divergence(thp, th, alpha, method="nonparametric", seed=3)
        assert 0.0 < est.lower <= exact_linear(alpha, 0.1, 10)
        assert est.upper == math.inf and "no upper bound" in est.assumption


def test_null_nonparametric_and_known_sigma():
    rng = np.random.default_rng(0)
    hits = 0
    for s in range(100):
        a, b = rng.standard_normal(500), rng.standard_normal(500)
        hits += renyi_divergence(a, b, 2.0, method="nonparametric", seed=s).lower > 0
    assert hits <= 100 * 0.05 + 3 * math.sqrt(100 * 0.05 * 0.95)
    e = renyi_divergence(rng.normal(1, 2, (3000, 2)), rng.normal(0, 2, (3000, 2)), 2.0, sigma=2.0)
    assert e.lower <= 2.0 * 2.0 / (2 * 2.0**2) <= e.upper  # alpha ||Delta||^2 / (2 sigma^2) = 0.5
    assert "known sigma" in e.method


def test_table_columns_and_ordering():
    rows = linear_instance_table(steps=(3, 30), alphas=(2.0,), trials=4_000, seed=1)
    for r in rows:
        assert r["theorem2"] <= r["exact"] <= r["theorem1"]
        assert r["exact"] <= r["composition"] + 1e-12
        assert r["exact"] == pytest.approx(exact_linear(2.0, 0.1, r["steps"]), rel=1e-12)


@pytest.mark.parametrize("kw,match", [(dict(alpha=1.0), "alpha"), (dict(alpha=2.0, method="kde"), "method"),
                                      (dict(alpha=2.0, confidence=0.0), "confidence"),
                                      (dict(alpha=2.0, sigma=-1.0), "sigma")])
def test_bad_inputs(kw, match):
    with pytest.raises(ValueError, match=match):
        renyi_divergence(np.zeros(10) + np.arange(10), np.arange(10.0), **kw)
    with pytest.raises(ValueError, match="dimension"):
        renyi_divergence(np.zeros((10, 2)), np.zeros((10, 3)), 2.0)
    with pytest.raises(ValueError, match="finite"):
        renyi_divergence(np.array([1.0, np.nan]), np.arange(2.0), 2.0)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["gaussian", "gaussian-unequal"])
def test_interval_coverage_on_linear_instance(method):
    """Coverage: 300 independent estimates (2000 runs per side, K = 10) contain the exact value at
    about their nominal 95% rate (the unequal-variance bootstrap interval is approximate)."""
    D, Dp = linear_instance_datasets(1)
    exact = {a: exact_linear(a, 0.1, 10) for a in (2.0, 10.0)}
    R, miss = 300, {2.0: 0, 10.0: 0}
    ss = np.random.SeedSequence(99).spawn(R)
    for s in ss:
        s0, s1, s2 = s.spawn(3)
        th = simulate_noisy_gd(D, steps=10, step_size=0.1, sigma=1.0, trials=2_000, seed=s0)
        thp = simulate_noisy_gd(Dp, steps=10, step_size=0.1, sigma=1.0, trials=2_000, seed=s1)
        for a in exact:
            e = renyi_divergence(thp, th, a, method=method, seed=s2)
            miss[a] += not (e.lower <= exact[a] <= e.upper)
    slack = 3 * math.sqrt(R * 0.05 * 0.95)
    for a in exact:
        assert miss[a] <= R * 0.05 + slack + (0 if method == "gaussian" else 0.02 * R), (a, miss[a])
