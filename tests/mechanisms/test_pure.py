"""PureDP, randomized response and ExponentialMechanism (dpaudit/mechanisms/pure.py): reference values, curves against
mpmath, the tanh-form zCDP, bounded-range limits, the samplers."""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.mechanisms.approx import ApproxDP
from dpaudit.mechanisms.laplace import Laplace, laplace_rdp
from dpaudit.mechanisms.pure import ExponentialMechanism, PureDP, bounded_range_kl_max, randomized_response_rdp

mp.mp.dps = 40


def _mp_rr(alpha, eps):
    a, e = mp.mpf(alpha), mp.mpf(eps)
    p = 1 / (1 + mp.exp(-e))
    return mp.log(p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)


@pytest.mark.parametrize("alpha,val", [(1.5, 0.42560015), (3.0, 0.62352463), (10.0, 0.75876662)])
def test_pure_dp_reference(alpha, val):
    # Mironov 2017, Prop. 6; dp_accounting 0.6.0: pure eps = 0.8, tight RR curve (8 printed digits)
    r = PureDP(0.8).rdp([alpha])[0]
    assert r == pytest.approx(val, abs=5e-9)
    assert r == pytest.approx(float(_mp_rr(alpha, 0.8)), rel=1e-13)
    assert r < 0.8**2 * alpha / 2


def test_exponential_mechanism_xi_reference():
    # Bun & Steinke 2016: eta = 1 -> xi ~ -0.0017 (< 0)
    xi = bounded_range_kl_max(1.0) - 1 / 8
    assert -0.0018 < xi < -0.0016
    e = mp.mpf(1)
    kl = e / (mp.exp(e) - 1) - 1 - mp.log(e / (mp.exp(e) - 1))
    assert bounded_range_kl_max(1.0) == pytest.approx(float(kl), rel=1e-13)
    for eta in (1e-6, 1e-3, 0.3, 5.0, 40.0):
        e = mp.mpf(eta)
        kl = e / mp.expm1(e) - 1 - mp.log(e / mp.expm1(e))
        assert bounded_range_kl_max(eta) == pytest.approx(float(kl), rel=1e-10)


def test_exponential_mechanism_curves():
    m = ExponentialMechanism(1.0)
    assert m.zcdp() == pytest.approx(1 / 8, rel=1e-15)
    assert m.pure_epsilon() == pytest.approx(1.0)
    r = m.rdp([1.01, 2.0, 10.0, 1e4, math.inf])
    xi = bounded_range_kl_max(1.0) - 1 / 8
    o = np.array([1.01, 2.0, 10.0])
    expect = np.minimum(np.minimum(xi + o / 8, 1.0), randomized_response_rdp(1.0, o))
    np.testing.assert_allclose(r[:3], expect, rtol=1e-14)
    np.testing.assert_allclose(r[:2], xi + o[:2] / 8, rtol=1e-14)  # the BR form is active here
    assert r[2] < 1.0 and 0.9999 < r[3] < 1.0 and r[4] == pytest.approx(1.0)


@pytest.mark.parametrize("eps", [1e-6, 1e-3, 0.1, 1.0, 3.0, 20.0])
@pytest.mark.parametrize("alpha", [1 + 1e-9, 1.001, 1.5, 2.0, 7.3, 100.0, 1e5])
def test_rr_rdp_vs_mpmath(eps, alpha):
    got = randomized_response_rdp(eps, np.array([alpha]))[0]
    assert got == pytest.approx(float(_mp_rr(alpha, eps)), rel=1e-10)


def test_infinite_order_is_epsilon():
    assert Laplace(0.5).rdp([math.inf])[0] == pytest.approx(2.0)
    assert PureDP(0.7).rdp([math.inf])[0] == pytest.approx(0.7)


def test_pure_zcdp_is_tanh_form_and_below_half_eps_squared():
    for eps in (1e-4, 0.5, 2.0, 10.0):
        rho = PureDP(eps).zcdp()
        assert rho == pytest.approx(eps * math.tanh(eps / 2), rel=1e-14)
        assert rho <= eps**2 / 2
        # rho alpha dominates the RDP curve on a grid (rho is sup r/alpha)
        a = np.linspace(1.0001, 50, 500)
        assert np.all(PureDP(eps).rdp(a) <= rho * a * (1 + 1e-12))


# ----------------------------------------------------------------------------- hypothesis
eps_st = st.floats(1e-6, 30.0)
alpha_st = st.floats(1.0 + 1e-6, 1e4)


@given(eps_st, alpha_st, alpha_st)
def test_rdp_nondecreasing_in_alpha(eps, a1, a2):
    lo, hi = sorted((a1, a2))
    for curve in (laplace_rdp, randomized_response_rdp):
        r = curve(eps, np.array([lo, hi]))
        assert r[0] <= r[1] * (1 + 1e-12) + 1e-300


@given(st.floats(1e-3, 20.0), alpha_st)
def test_exponential_mechanism_between_kl_and_bounds(eta, a):
    m = ExponentialMechanism(eta)
    r = m.rdp([a])[0]
    assert r <= m.zcdp() * a * (1 + 1e-12)
    assert r <= eta * (1 + 1e-15)
    assert r >= bounded_range_kl_max(eta) * (1 - 1e-12)


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_bad_epsilon(bad):
    for cls in (PureDP, ExponentialMechanism):
        if bad == math.inf:  # (no noise: a non-private release, tests/mechanisms/test_nonprivate.py)
            assert cls(bad).non_private()
            continue
        with pytest.raises(ValueError, match="epsilon"):
            cls(bad)
    with pytest.raises(ValueError, match="epsilon"):
        ApproxDP(bad, 1e-5)


def test_randomized_response_sampler():
    rng = np.random.default_rng(2)
    eps = 1.0
    out = PureDP(eps).sample(1, rng, size=50_000)
    p = math.exp(eps) / (1 + math.exp(eps))
    assert set(np.unique(out)) <= {0, 1}
    assert abs(out.mean() - p) < 4 * math.sqrt(p * (1 - p) / 50_000)
    with pytest.raises(ValueError, match="value"):
        PureDP(eps).sample(0.5, rng)


def test_exponential_mechanism_sampler_probabilities():
    rng = np.random.default_rng(3)
    u = np.array([0.0, 1.0, 3.0])
    eps = 2.0
    out = ExponentialMechanism(eps).sample(u, rng, size=60_000)
    assert out.shape == (60_000,)
    w = np.exp(eps * u / 2)
    w /= w.sum()
    freq = np.bincount(out, minlength=3) / out.size
    np.testing.assert_allclose(freq, w, atol=4 * np.sqrt(w * (1 - w) / out.size).max())
