"""Tests of the mechanism descriptions: Laplace, PureDP, ExponentialMechanism, ApproxDP,
PoissonSampled / SampledWithoutReplacement (behaviour; the kernels are in tests/mechanisms/test_subsampled_rdp.py).

Reference values: Bun & Steinke 2016; Mironov 2017; dp_accounting 0.6.0.
"""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.mechanisms.approx import ApproxDP
from dpaudit.mechanisms.gaussian import Gaussian
from dpaudit.mechanisms.laplace import Laplace, laplace_rdp
from dpaudit.mechanisms.pure import ExponentialMechanism, PureDP, bounded_range_kl_max, randomized_response_rdp
from dpaudit.mechanisms.subsampled import PoissonSampled, SampledWithoutReplacement

mp.mp.dps = 40


def _mp_laplace(alpha, eps):
    a, e = mp.mpf(alpha), mp.mpf(eps)
    return mp.log(a / (2 * a - 1) * mp.exp((a - 1) * e) + (a - 1) / (2 * a - 1) * mp.exp(-a * e)) / (a - 1)


def _mp_rr(alpha, eps):
    a, e = mp.mpf(alpha), mp.mpf(eps)
    p = 1 / (1 + mp.exp(-e))
    return mp.log(p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)


# ----------------------------------------------------------------------------- reference values
def test_laplace_reference_alpha2():
    # Mironov 2017, Prop. 6; dp_accounting 0.6.0: Laplace b/D = 1, alpha = 2 -> 0.6191236299986 (closed form)
    assert Laplace(1.0).rdp([2.0])[0] == pytest.approx(0.6191236299986, rel=1e-12)
    assert Laplace(2.0, sensitivity=2.0).rdp([2.0])[0] == pytest.approx(0.6191236299986, rel=1e-12)


@pytest.mark.parametrize("eps,rho", [(0.1, 0.0048374180), (1.0, 0.3678794412), (5.0, 4.0067379470)])
def test_laplace_zcdp_reference(eps, rho):
    # Mironov 2017, Prop. 6; dp_accounting 0.6.0: rho = eps + e^-eps - 1 (10 printed digits)
    m = Laplace(1.0 / eps)
    assert m.zcdp() == pytest.approx(rho, abs=6e-11)
    assert m.zcdp() == pytest.approx(float(mp.mpf(eps) + mp.exp(-mp.mpf(eps)) - 1), rel=1e-14)
    assert m.zcdp() < eps**2 / 2


def test_laplace_tenfold_composition_library_value():
    # Mironov 2017, Prop. 6; dp_accounting 0.6.0: ten-fold Laplace(b/D=1), delta=1e-5 -> 9.99033 (dp-accounting 0.6.0 RDP)
    from dp_accounting.rdp import rdp_privacy_accountant as R

    orders = np.array(R.DEFAULT_RDP_ORDERS, dtype=float)
    eps, _ = R.compute_epsilon(orders, 10 * Laplace(1.0).rdp(orders), 1e-5)
    assert round(eps, 5) == 9.99033
    lib = np.array([R._laplace_rdp(1.0, a) for a in orders])
    np.testing.assert_allclose(Laplace(1.0).rdp(orders), lib, rtol=1e-12)


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


# ----------------------------------------------------------------------------- mpmath oracles
@pytest.mark.parametrize("eps", [1e-6, 1e-3, 0.1, 1.0, 3.0, 20.0])
@pytest.mark.parametrize("alpha", [1 + 1e-9, 1.001, 1.5, 2.0, 7.3, 100.0, 1e5])
def test_laplace_rdp_vs_mpmath(eps, alpha):
    got = laplace_rdp(eps, np.array([alpha]))[0]
    assert got == pytest.approx(float(_mp_laplace(alpha, eps)), rel=1e-10)


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


@given(eps_st, alpha_st)
def test_laplace_below_rr_below_eps(eps, a):
    # Laplace is eps-DP, so its curve lies under the tight pure-DP curve, which lies under eps
    lap = Laplace(1.0 / eps).rdp([a])[0]
    rr = PureDP(eps).rdp([a])[0]
    assert 0 <= lap <= rr * (1 + 1e-12) and rr <= eps * (1 + 1e-15)
    assert lap <= Laplace(1.0 / eps).zcdp() * a * (1 + 1e-12)


@given(st.floats(1e-3, 20.0), alpha_st)
def test_exponential_mechanism_between_kl_and_bounds(eta, a):
    m = ExponentialMechanism(eta)
    r = m.rdp([a])[0]
    assert r <= m.zcdp() * a * (1 + 1e-12)
    assert r <= eta * (1 + 1e-15)
    assert r >= bounded_range_kl_max(eta) * (1 - 1e-12)


@given(st.floats(1e-3, 5.0), st.floats(1e-3, 1.0), st.floats(1.0 + 1e-3, 200.0))
def test_poisson_subsampled_below_base_and_increasing_in_q(eps, q, a):
    base = Laplace(1.0 / eps)
    r_q = PoissonSampled(base, q).rdp([a])[0]
    r_half = PoissonSampled(base, q / 2).rdp([a])[0]
    assert r_q <= base.rdp([a])[0]
    assert r_half <= r_q * (1 + 1e-12)


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf, "x", None])
def test_bad_scale_and_sensitivity(bad):
    if bad != 0.0:  # (scale = 0 is a non-private release: tests/mechanisms/test_nonprivate.py)
        with pytest.raises(ValueError, match="scale"):
            Laplace(bad)
    with pytest.raises(ValueError, match="sensitivity"):
        Laplace(1.0, sensitivity=bad)


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


@pytest.mark.parametrize("bad", [-1e-3, 1.0, 2.0, math.nan])
def test_bad_delta(bad):
    with pytest.raises(ValueError, match="delta"):
        ApproxDP(1.0, bad)


@pytest.mark.parametrize("bad", [[1.0], [0.5], [math.nan], []])
def test_bad_orders(bad):
    for m in (Laplace(1.0), PureDP(1.0), ExponentialMechanism(1.0), ApproxDP(1.0, 1e-5),
              PoissonSampled(Laplace(1.0), 0.1)):
        with pytest.raises(ValueError, match="orders"):
            m.rdp(bad)


@pytest.mark.parametrize("bad", [-0.1, 1.1, math.nan, math.inf])
def test_bad_q(bad):
    with pytest.raises(ValueError, match="q"):
        PoissonSampled(Gaussian(1.0), bad)
    with pytest.raises(ValueError, match="q"):
        SampledWithoutReplacement(Gaussian(1.0, neighbouring="replace_one"), bad)


def test_neighbouring_relation_of_base_is_checked():
    with pytest.raises(ValueError, match="add_remove"):
        PoissonSampled(Gaussian(1.0, neighbouring="replace_one"), 0.1)
    with pytest.raises(ValueError, match="replace_one"):
        SampledWithoutReplacement(Gaussian(1.0), 0.1)
    with pytest.raises(ValueError, match="mechanism"):
        PoissonSampled("gaussian", 0.1)
    assert PoissonSampled(Gaussian(1.0), 0.1).neighbouring == "add_remove"
    assert SampledWithoutReplacement(Laplace(1.0, neighbouring="replace_one"), 0.1).neighbouring == "replace_one"


# ----------------------------------------------------------------------------- ApproxDP
def test_approx_dp_has_no_rdp_or_zcdp():
    m = ApproxDP(1.0, 1e-6)
    assert np.all(np.isinf(m.rdp([1.5, 2, 100])))
    assert m.zcdp() == math.inf and m.pure_epsilon() == math.inf
    assert m.approx_dp() == (1.0, 1e-6)
    with pytest.raises(TypeError):
        m.sample(0.0, np.random.default_rng(0))
    pure = ApproxDP(0.8, 0.0)
    np.testing.assert_allclose(pure.rdp([3.0]), PureDP(0.8).rdp([3.0]))
    assert pure.pure_epsilon() == 0.8


def test_poisson_of_approx_dp_amplifies_pair():
    eps, delta = PoissonSampled(ApproxDP(1.0, 1e-5), 0.1).approx_dp()
    assert eps == pytest.approx(math.log1p(0.1 * math.expm1(1.0)), rel=1e-14)
    assert delta == pytest.approx(1e-6, rel=1e-14)
    assert PoissonSampled(Gaussian(1.0), 0.1).approx_dp() is None


# ----------------------------------------------------------------------------- subsampled misc
def test_subsampled_special_q():
    for base, cls in ((Gaussian(1.3), PoissonSampled), (Laplace(0.5), PoissonSampled),
                      (Gaussian(1.3, neighbouring="replace_one"), SampledWithoutReplacement)):
        o = [1.5, 2.0, 17.0]
        assert np.all(cls(base, 0.0).rdp(o) == 0.0)
        np.testing.assert_array_equal(cls(base, 1.0).rdp(o), base.rdp(o))


def test_subsampled_zcdp_tcdp_pure():
    g = Gaussian(2.0)
    assert PoissonSampled(g, 0.3).zcdp() == g.zcdp()
    assert PoissonSampled(g, 0.3).tcdp() == (g.zcdp(), math.inf)
    assert PoissonSampled(g, 0.3).pure_epsilon() == math.inf
    eps = PoissonSampled(PureDP(2.0), 0.1).pure_epsilon()
    assert eps == pytest.approx(math.log1p(0.1 * math.expm1(2.0)), rel=1e-14)
    assert eps >= math.log1p(0.1 * math.expm1(2.0))
    # the rdp at alpha = inf equals the amplified pure epsilon for a pure-DP base
    assert PoissonSampled(PureDP(2.0), 0.1).rdp([math.inf])[0] == pytest.approx(eps, rel=1e-14)
    assert PoissonSampled(Gaussian(1.0), 0.1).rdp([math.inf])[0] == math.inf


def test_wor_tcdp_uses_amplification_or_falls_back():
    g = Gaussian(1.0 / math.sqrt(2 * 0.05), neighbouring="replace_one")  # rho = 0.05
    rho, omega = SampledWithoutReplacement(g, 0.01).tcdp()
    try:
        from dpaudit.mechanisms._tcdp_amplification import subsampled_tcdp
    except ImportError:
        assert (rho, omega) == g.tcdp()
    else:
        res = subsampled_tcdp(g.zcdp(), math.inf, 0.01)
        assert (rho, omega) == (g.tcdp() if res is None else tuple(map(float, res)))
    assert rho <= g.zcdp()


def test_poisson_pure_rdp_exact_for_randomized_response():
    # subsampled RR: exact two-point divergence (both directions) computed with mpmath
    eps, q = 1.3, 0.2
    p = 1 / (1 + mp.exp(-mp.mpf(eps)))
    P = [q * p + (1 - q) * (1 - p), q * (1 - p) + (1 - q) * p]
    Q = [1 - p, p]
    for a in (1.5, 2.0, 9.0, 40.0):
        a_ = mp.mpf(a)
        add = mp.log(sum(x**a_ * y ** (1 - a_) for x, y in zip(P, Q))) / (a_ - 1)
        rem = mp.log(sum(y**a_ * x ** (1 - a_) for x, y in zip(P, Q))) / (a_ - 1)
        got = PoissonSampled(PureDP(eps), q).rdp([a])[0]
        assert got == pytest.approx(float(max(add, rem)), rel=1e-12)
        assert got >= float(max(add, rem))


# ----------------------------------------------------------------------------- samplers
def test_laplace_sampler_shape_and_scale():
    rng = np.random.default_rng(1)
    x = Laplace(2.0).sample(np.array([0.0, 10.0]), rng, size=40_000)
    assert x.shape == (40_000, 2)
    np.testing.assert_allclose(x.mean(axis=0), [0.0, 10.0], atol=0.1)
    np.testing.assert_allclose(np.abs(x - [0.0, 10.0]).mean(axis=0), 2.0, rtol=0.03)
    assert Laplace(1.0).sample(3.0, np.random.default_rng(0)).shape == ()


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


def test_poisson_sampler_mixture():
    rng = np.random.default_rng(4)
    m = PoissonSampled(Gaussian(0.1), 0.3)
    x = m.sample(np.array([5.0, 5.0]), rng, size=20_000)
    assert x.shape == (20_000, 2)
    sampled = x[:, 0] > 2.5
    assert abs(sampled.mean() - 0.3) < 0.02
    # the whole output vector comes from the same branch
    assert np.all(sampled == (x[:, 1] > 2.5))
    assert PoissonSampled(Gaussian(1.0), 0.5).sample(1.0, rng).shape == ()
