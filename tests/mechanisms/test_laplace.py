"""Laplace (dpaudit/mechanisms/laplace.py): reference RDP/zCDP values, the curve against mpmath, below randomized
response, bad scales, the sampler."""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.mechanisms.laplace import Laplace, laplace_rdp
from dpaudit.mechanisms.pure import PureDP

mp.mp.dps = 40


def _mp_laplace(alpha, eps):
    a, e = mp.mpf(alpha), mp.mpf(eps)
    return mp.log(a / (2 * a - 1) * mp.exp((a - 1) * e) + (a - 1) / (2 * a - 1) * mp.exp(-a * e)) / (a - 1)


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


# ----------------------------------------------------------------------------- mpmath oracles
@pytest.mark.parametrize("eps", [1e-6, 1e-3, 0.1, 1.0, 3.0, 20.0])
@pytest.mark.parametrize("alpha", [1 + 1e-9, 1.001, 1.5, 2.0, 7.3, 100.0, 1e5])
def test_laplace_rdp_vs_mpmath(eps, alpha):
    got = laplace_rdp(eps, np.array([alpha]))[0]
    assert got == pytest.approx(float(_mp_laplace(alpha, eps)), rel=1e-10)


# ----------------------------------------------------------------------------- hypothesis
eps_st = st.floats(1e-6, 30.0)
alpha_st = st.floats(1.0 + 1e-6, 1e4)


@given(eps_st, alpha_st)
def test_laplace_below_rr_below_eps(eps, a):
    # Laplace is eps-DP, so its curve lies under the tight pure-DP curve, which lies under eps
    lap = Laplace(1.0 / eps).rdp([a])[0]
    rr = PureDP(eps).rdp([a])[0]
    assert 0 <= lap <= rr * (1 + 1e-12) and rr <= eps * (1 + 1e-15)
    assert lap <= Laplace(1.0 / eps).zcdp() * a * (1 + 1e-12)


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf, "x", None])
def test_bad_scale_and_sensitivity(bad):
    if bad != 0.0:  # (scale = 0 is a non-private release: tests/mechanisms/test_nonprivate.py)
        with pytest.raises(ValueError, match="scale"):
            Laplace(bad)
    with pytest.raises(ValueError, match="sensitivity"):
        Laplace(1.0, sensitivity=bad)


# ----------------------------------------------------------------------------- samplers
def test_laplace_sampler_shape_and_scale():
    rng = np.random.default_rng(1)
    x = Laplace(2.0).sample(np.array([0.0, 10.0]), rng, size=40_000)
    assert x.shape == (40_000, 2)
    np.testing.assert_allclose(x.mean(axis=0), [0.0, 10.0], atol=0.1)
    np.testing.assert_allclose(np.abs(x - [0.0, 10.0]).mean(axis=0), 2.0, rtol=0.03)
    assert Laplace(1.0).sample(3.0, np.random.default_rng(0)).shape == ()
