"""Noisy GD with a hidden state (Chourasia, Ye, Shokri 2021): dpaudit.bounds.langevin."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.bounds.langevin import (
    NoisyGDLastIterate,
    composition_epsilon,
    composition_rdp,
    langevin_epsilon,
    langevin_lower_epsilon,
    langevin_lower_rdp,
    langevin_rdp,
    langevin_rho,
    langevin_utility_settings,
    linear_gaussian_epsilon,
    linear_gaussian_moments,
    linear_gaussian_rdp,
)

# Chourasia, Ye, Shokri 2021; docs/theorems/langevin.md: alpha = 2, S_g = 1, sigma^2 = 1, n = 1, lambda = 1 (closed forms)
A7 = [
    # eta, K, exact instance, Theorem 1, Theorem 2, composition
    (0.1, 10, 0.458786515383, 0.786938680575, 0.316060279414, 0.5),
    (0.1, 100, 0.949949534683, 1.986524106, 0.499977300035, 5.0),
    (0.5, 3, 0.583333333333, 1.05526689452, 0.388434919926, 0.75),
]


def kw(eta, K, S=1.0, sigma=1.0, n=1):
    return dict(sensitivity=S, step_size=eta, sigma=sigma, n=n, steps=K)


@pytest.mark.parametrize("eta,K,exact,thm1,thm2,comp", A7)
def test_reference_table_a7(eta, K, exact, thm1, thm2, comp):
    k = kw(eta, K)
    assert linear_gaussian_rdp(2.0, **k) == pytest.approx(exact, rel=1e-10)
    assert langevin_rdp(2.0, strong_convexity=1.0, **k) == pytest.approx(thm1, rel=1e-9)
    assert langevin_lower_rdp(2.0, **k) == pytest.approx(thm2, rel=1e-10)
    assert composition_rdp(2.0, **k) == pytest.approx(comp, rel=1e-12)


def test_closed_forms_against_mpmath():
    import mpmath as mp

    mp.mp.dps = 40
    for eta, K in [(0.01, 1000), (0.3, 7), (0.999, 2)]:
        r = 1 - mp.mpf(eta)
        exact = 3 * (2 - mp.mpf(eta)) / 4 * (1 - r**K) / (1 + r**K)
        assert linear_gaussian_rdp(3.0, **kw(eta, K)) == pytest.approx(float(exact), rel=1e-13)
        thm1 = 3 * (1 - mp.exp(-mp.mpf(0.5) * eta * K / 2)) / 0.5
        assert langevin_rdp(3.0, strong_convexity=0.5, **kw(eta, K)) == pytest.approx(float(thm1), rel=1e-13)


def test_moments_match_direct_recursion():
    # iterate mu_{k+1} = (1-eta) mu_k + eta xbar, s_{k+1}^2 = (1-eta)^2 s_k^2 + 2 eta sigma^2
    eta, sigma, K, v0 = 0.37, 0.8, 25, 1.3
    mu, s2 = 0.0, v0
    for _ in range(K):
        mu = (1 - eta) * mu + eta * 0.5
        s2 = (1 - eta) ** 2 * s2 + 2 * eta * sigma**2
    shift, var = linear_gaussian_moments(sensitivity=1.0, step_size=eta, sigma=sigma, n=2, steps=K,
                                         init_variance=v0)
    assert shift == pytest.approx(mu, rel=1e-13)
    assert var == pytest.approx(s2, rel=1e-13)


def test_vectorised_and_linear_in_alpha():
    a = np.array([1.5, 2.0, 10.0, 1e6])
    out = langevin_rdp(a, strong_convexity=1.0, **kw(0.1, 10))
    assert out.shape == a.shape
    assert np.allclose(out / a, out[0] / a[0], rtol=1e-14)
    assert isinstance(langevin_rdp(2.0, strong_convexity=1.0, **kw(0.1, 10)), float)


params = dict(
    eta=st.floats(1e-3, 0.999),
    K=st.integers(0, 100_000),
    alpha=st.floats(1.001, 1e4),
    S=st.floats(1e-3, 10.0),
    sigma=st.floats(1e-2, 10.0),
    n=st.integers(1, 10_000),
)


@given(**params)
def test_lower_le_exact_le_theorem1_and_composition(eta, K, alpha, S, sigma, n):
    k = kw(eta, K, S, sigma, n)
    lower = langevin_lower_rdp(alpha, **k)
    exact = linear_gaussian_rdp(alpha, **k)
    exact_gauss_start = linear_gaussian_rdp(alpha, init_variance=2 * sigma**2, **k)
    upper = langevin_rdp(alpha, strong_convexity=1.0, smoothness=1.0, **k)
    comp = composition_rdp(alpha, **k)
    tol = 1e-12 * max(exact, 1e-300)
    assert lower <= exact + tol
    assert exact_gauss_start <= exact + tol
    assert exact <= upper + tol
    assert exact <= comp + tol
    assert exact <= upper * 0.64  # Chourasia, Ye, Shokri 2021; docs/theorems/langevin.md: max ratio 0.635


@given(eta=params["eta"], K=st.integers(0, 10_000), lam=st.floats(1e-3, 1.0))
def test_monotone_in_steps_and_limits(eta, K, lam):
    k1, k2 = kw(eta, K), kw(eta, K + 1)
    assert langevin_rdp(2.0, strong_convexity=lam, **k1) <= langevin_rdp(2.0, strong_convexity=lam, **k2)
    assert linear_gaussian_rdp(2.0, **k1) <= linear_gaussian_rdp(2.0, **k2) * (1 + 1e-14)
    assert composition_rdp(2.0, **k1) < composition_rdp(2.0, **k2)
    assert langevin_rdp(2.0, strong_convexity=lam, **k1) <= 2.0 / lam * (1 + 1e-14)


def test_theorem1_limit_and_lambda():
    big = langevin_rdp(2.0, strong_convexity=0.5, **kw(0.1, 10**7))
    assert big == pytest.approx(2.0 / 0.5, rel=1e-14)
    # larger lambda: smaller limit
    assert langevin_rdp(2.0, strong_convexity=1.0, **kw(0.1, 10**7)) < big


def test_zero_steps_is_zero():
    assert langevin_rdp(2.0, strong_convexity=1.0, **kw(0.1, 0)) == 0.0
    assert linear_gaussian_rdp(2.0, **kw(0.1, 0)) == 0.0
    assert composition_rdp(2.0, **kw(0.1, 0)) == 0.0


def test_no_guarantee_when_step_too_large():
    assert langevin_rdp(2.0, strong_convexity=0.5, smoothness=2.0, **kw(0.5, 10)) == math.inf
    assert math.isfinite(langevin_rdp(2.0, strong_convexity=0.5, smoothness=2.0, **kw(0.49, 10)))
    m = NoisyGDLastIterate(1.0, 0.5, 2.0, 0.5, 1.0, 1, 10, bound="theorem1")
    assert m.zcdp() == math.inf
    assert np.all(np.isinf(m.rdp([2.0, 3.0])))
    best = NoisyGDLastIterate(1.0, 0.5, 2.0, 0.5, 1.0, 1, 10, bound="best")
    assert best.zcdp() == pytest.approx(0.5 * 10 / 4)


@pytest.mark.parametrize(
    "bad",
    [
        dict(alpha=1.0), dict(alpha=0.5), dict(alpha=float("nan")), dict(sigma=0.0), dict(sigma=-1.0),
        dict(n=0), dict(steps=-1), dict(step_size=0.0), dict(step_size=float("inf")), dict(sensitivity=-1.0),
        dict(strong_convexity=0.0), dict(strong_convexity=3.0, smoothness=2.0), dict(n=1.5),
    ],
)
def test_bad_inputs_theorem1(bad):
    args = dict(alpha=2.0, sensitivity=1.0, strong_convexity=1.0, step_size=0.1, sigma=1.0, n=10, steps=5)
    args.update(bad)
    alpha = args.pop("alpha")
    with pytest.raises(ValueError):
        langevin_rdp(alpha, **args)


def test_bad_inputs_other():
    with pytest.raises(ValueError, match="step_size"):
        langevin_lower_rdp(2.0, **kw(1.0, 5))
    with pytest.raises(ValueError, match="step_size"):
        linear_gaussian_rdp(2.0, **kw(2.0, 5))
    with pytest.raises(ValueError, match="init_variance"):
        linear_gaussian_rdp(2.0, init_variance=-1.0, **kw(0.1, 5))
    with pytest.raises(ValueError, match="alpha"):
        composition_rdp([2.0, 1.0], **kw(0.1, 5))
    with pytest.raises(ValueError, match="bound"):
        NoisyGDLastIterate(1.0, 1.0, 1.0, 0.1, 1.0, 1, 5, bound="tightest")
    with pytest.raises(ValueError, match="delta"):
        langevin_epsilon(0.0, strong_convexity=1.0, **kw(0.1, 5))


def test_epsilon_ordering_lower_exact_upper():
    delta = 1e-5
    for eta, K in [(0.1, 10), (0.1, 100), (0.5, 3), (0.01, 5000)]:
        k = kw(eta, K, S=1.0, sigma=2.0, n=1)
        lo = langevin_lower_epsilon(delta, **k)
        ex = linear_gaussian_epsilon(delta, **k)
        up = langevin_epsilon(delta, strong_convexity=1.0, smoothness=1.0, **k)
        comp = composition_epsilon(delta, **k)
        assert 0 < lo <= ex <= up
        assert ex <= comp


def test_composition_matches_dp_accounting():
    from dp_accounting import GaussianDpEvent, SelfComposedDpEvent
    from dp_accounting.rdp import RdpAccountant

    eta, sigma, S, n, K = 0.05, 1.5, 2.0, 100, 400
    # one step: Gaussian with sensitivity eta S/n and std sqrt(2 eta sigma^2)
    z = math.sqrt(2 * eta * sigma**2) / (eta * S / n)
    orders = [1.5, 2.0, 4.0, 16.0, 64.0]
    acc = RdpAccountant(orders=orders, neighboring_relation=RdpAccountant().neighboring_relation)
    acc.compose(SelfComposedDpEvent(GaussianDpEvent(z), K))
    ours = composition_rdp(np.array(orders), sensitivity=S, step_size=eta, sigma=sigma, n=n, steps=K)
    assert np.allclose(ours, acc._rdp, rtol=1e-12)
    # our continuous-order conversion is never worse than dp_accounting's on its own grid
    eps_lib = acc.get_epsilon(1e-5)
    assert composition_epsilon(1e-5, sensitivity=S, step_size=eta, sigma=sigma, n=n, steps=K) <= eps_lib * (1 + 1e-9)


def test_mechanism_protocol_and_accountant():
    from dpaudit.accounting.rdp import RDPAccountant

    m = NoisyGDLastIterate(sensitivity=1.0, strong_convexity=1.0, smoothness=1.0, step_size=0.1, sigma=1.0, n=1,
                           steps=100)
    assert m.neighbouring == "replace_one"
    t1 = langevin_rho(sensitivity=1.0, strong_convexity=1.0, step_size=0.1, sigma=1.0, n=1, steps=100)
    assert m.zcdp() == pytest.approx(min(t1, 0.1 * 100 / 4))
    assert m.tcdp() == (m.zcdp(), math.inf)
    acc = RDPAccountant().compose(m, count=2)
    assert acc.epsilon(1e-5) >= m.epsilon(1e-5)
    claim = m.claim()
    assert claim.neighbouring == "replace_one"
    eps = claim.epsilon(1e-5)
    assert eps == m.epsilon(1e-5)
    assert claim.delta(eps) <= 1e-5 * (1 + 1e-6)
    frozen = pytest.raises(Exception)
    with frozen:
        m.sigma = 2.0


def test_utility_settings_reproduce_epsilon():
    eps, delta = 0.7, 1e-6
    s = langevin_utility_settings(eps, delta, lipschitz=1.5, smoothness=4.0, strong_convexity=1.0, n=5000, dim=10)
    assert s.step_size == pytest.approx(1.0 / 32)
    assert s.sensitivity == 3.0
    rho_inf = s.sensitivity**2 / (1.0 * s.sigma**2 * 5000**2)
    mironov = s.order * rho_inf + math.log(1 / delta) / (s.order - 1)
    assert mironov == pytest.approx(eps, rel=1e-12)
    assert mironov <= eps
    k = dict(sensitivity=s.sensitivity, strong_convexity=1.0, smoothness=4.0, step_size=s.step_size,
             sigma=s.sigma, n=5000, steps=s.steps)
    assert langevin_epsilon(delta, **k) <= eps
    with pytest.raises(ValueError, match="n must"):
        langevin_utility_settings(eps, delta, lipschitz=1.0, smoothness=1.0, strong_convexity=1.0, n=5, dim=10)
    with pytest.raises(ValueError, match="strong_convexity"):
        langevin_utility_settings(eps, delta, lipschitz=1.0, smoothness=1.0, strong_convexity=2.0, n=5000, dim=1)
