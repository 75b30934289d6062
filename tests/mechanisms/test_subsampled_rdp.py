"""Tests of the subsampled RDP kernels (dpaudit/mechanisms/_subsampled_rdp.py).

Oracles: Mironov, Talwar, Zhang 2019; Wang, Balle, Kasiviswanathan 2019; dp_accounting 0.6.0 reference values, mpmath quadrature (exact divergence),
dp-accounting 0.6.0 (integer orders to 1e-10 relative; fractional orders and WOR one-sidedly).
"""

import math
import time
import warnings

import mpmath as mp
import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant as R
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.mechanisms import _subsampled_rdp as K
from dpaudit.mechanisms.gaussian import Gaussian
from dpaudit.mechanisms.laplace import Laplace
from dpaudit.mechanisms.subsampled import PoissonSampled, SampledWithoutReplacement

mp.mp.dps = 30


def _mp_poisson_gaussian(q, s, a):
    """Exact r(alpha) by quadrature of A - 1 = E0[(1+qX)^a - 1 - a q X] (non-negative integrand)."""
    q, s, a = mp.mpf(q), mp.mpf(s), mp.mpf(a)

    def f(z):
        x = mp.expm1((2 * z - 1) / (2 * s * s))
        return ((1 + q * x) ** a - 1 - a * q * x) * mp.npdf(z, 0, s)

    z0 = s * s * mp.log(1 / q - 1) + mp.mpf(1) / 2
    pts = sorted({-40 * s, mp.mpf(0), mp.mpf(1) / 2, z0, a, a + 40 * s})
    return float(mp.log1p(mp.quad(f, pts)) / (a - 1))


# ----------------------------------------------------------------------------- reference values
def test_poisson_gaussian_reference_integer_orders():
    # Mironov, Talwar, Zhang 2019 binomial sum; dp_accounting 0.6.0 (closed form, binomial sum)
    r = PoissonSampled(Gaussian(1.1), 0.01).rdp([2, 3, 8, 32])
    ref = [1.2851008160516e-4, 1.96277889915e-4, 5.8407033552e-4, 8.4694164337]
    np.testing.assert_allclose(r, ref, rtol=1e-10)
    assert r[0] == pytest.approx(math.log1p(1e-4 * math.expm1(1 / 1.21)), rel=1e-13)


def test_poisson_gaussian_reference_fractional_orders():
    # Mironov, Talwar, Zhang 2019 binomial sum; dp_accounting 0.6.0 (quadrature): 9.55452857e-5, 1.62077409e-4, 1.116644471e-3
    r = PoissonSampled(Gaussian(1.1), 0.01).rdp([1.5, 2.5, 10.7])
    np.testing.assert_allclose(r, [9.55452857e-5, 1.62077409e-4, 1.116644471e-3], rtol=6e-9)
    lib = R._compute_rdp_poisson_subsampled_gaussian(0.01, 1.1, [1.5, 2.5, 10.7])
    assert np.all(lib >= r)  # dp-accounting's fractional orders are conservative
    np.testing.assert_allclose(lib[:2], [9.8588e-5, 1.62152e-4], rtol=1e-4)


def test_poisson_gaussian_thousand_steps_library_epsilon():
    # Mironov, Talwar, Zhang 2019 binomial sum; dp_accounting 0.6.0: T=1000, delta=1e-5, default orders, Balle et al. conversion:
    # dp-accounting 1.711770166 at alpha = 9.6; exact RDP at 9.6 gives 1.71177009
    orders = np.array(R.DEFAULT_RDP_ORDERS, dtype=float)
    ours = 1000 * PoissonSampled(Gaussian(1.1), 0.01).rdp(orders)
    eps, order = R.compute_epsilon(orders, ours, 1e-5)
    assert order == pytest.approx(9.6)
    assert eps == pytest.approx(1.71177009, abs=5e-9)
    lib = 1000 * R._compute_rdp_poisson_subsampled_gaussian(0.01, 1.1, orders)
    eps_lib, _ = R.compute_epsilon(orders, lib, 1e-5)
    assert eps_lib == pytest.approx(1.711770166, abs=1e-9)
    assert eps <= eps_lib


def test_wor_gaussian_reference():
    # Wang, Balle, Kasiviswanathan 2019; dp_accounting 0.6.0: 4.5693e-4 (closed form), 6.9700e-4 and 1.09271e-3 (dp-accounting)
    m = SampledWithoutReplacement(Gaussian(1.1, neighbouring="replace_one"), 0.01)
    r = m.rdp([2, 3, 4.5])
    c = 1 / 1.21
    assert r[0] == pytest.approx(math.log1p(1e-4 * min(4 * math.expm1(c), 2 * math.exp(c))), rel=1e-13)
    assert round(r[0], 8) == pytest.approx(4.5693e-4)
    assert round(r[1], 8) == pytest.approx(6.9700e-4)
    assert round(r[2], 8) == pytest.approx(1.09271e-3)


# ----------------------------------------------------------------------------- mpmath, library grids
FRAC_GRID = [(q, s, a) for q in (1e-4, 0.01, 0.1, 0.5) for s in (0.6, 1.1, 3.0) for a in (1.5, 2.5, 5.3, 10.7)]


@pytest.mark.slow
@pytest.mark.parametrize("q,s,a", FRAC_GRID)
def test_poisson_gaussian_fractional_vs_quadrature(q, s, a):
    got = K.poisson_gaussian_rdp(q, s, np.array([a]))[0]
    assert got == pytest.approx(_mp_poisson_gaussian(q, s, a), rel=1e-9)


def test_poisson_gaussian_fractional_vs_quadrature_fast_subset():
    for q, s, a in [(0.01, 1.1, 1.5), (1e-4, 3.0, 2.5), (0.5, 0.6, 5.3), (0.1, 1.1, 1.01)]:
        got = K.poisson_gaussian_rdp(q, s, np.array([a]))[0]
        exact = _mp_poisson_gaussian(q, s, a)
        assert got == pytest.approx(exact, rel=1e-9)
        assert got >= exact * (1 - 1e-12)


INT_GRID = [(q, s) for q in (0.001, 0.01, 0.05, 0.2, 0.5, 0.9) for s in (0.5, 0.8, 1.0, 1.5, 2.5, 5.0)]
INT_ORDERS = np.array([2, 3, 4, 5, 8, 12, 16, 32, 64, 128, 256], dtype=float)


def test_poisson_gaussian_integer_orders_match_dp_accounting():
    n = 0
    for q, s in INT_GRID:
        ours = K.poisson_gaussian_rdp(q, s, INT_ORDERS)
        lib = R._compute_rdp_poisson_subsampled_gaussian(q, s, INT_ORDERS)
        np.testing.assert_allclose(ours, lib, rtol=1e-10, err_msg=f"q={q} s={s}")
        n += INT_ORDERS.size
    assert n >= 50


def test_poisson_gaussian_fractional_orders_not_above_dp_accounting():
    orders = np.array([x for x in R.DEFAULT_RDP_ORDERS if not float(x).is_integer()])
    for q, s in INT_GRID:
        ours = K.poisson_gaussian_rdp(q, s, orders)
        lib = R._compute_rdp_poisson_subsampled_gaussian(q, s, orders)
        assert np.all(ours <= lib * (1 + 1e-9)), (q, s)


def test_wor_gaussian_not_above_dp_accounting():
    orders = np.array(R.DEFAULT_RDP_ORDERS, dtype=float)
    for q, s in [(0.001, 1.0), (0.01, 1.1), (0.05, 0.8), (0.1, 2.0), (0.3, 5.0), (0.01, 10.0)]:
        ours = K.wor_gaussian_rdp(q, s, orders)
        lib = R._compute_rdp_sample_wor_gaussian(q, s, orders)
        assert np.all(ours <= lib * (1 + 1e-9)), (q, s, np.max(ours / lib))


def test_wor_central_moments_vs_mpmath():
    # M_k = sum_i (-1)^(k-i) C(k,i) exp(i(i-1)c) computed exactly with mpmath
    for s in (0.7, 1.1, 4.0, 30.0):
        logm = K.gaussian_central_moments(s, 40)
        c = mp.mpf(1) / (2 * mp.mpf(s) ** 2)
        with mp.workdps(120):
            for k in (2, 4, 10, 20, 40):
                exact = mp.fsum((-1) ** (k - i) * mp.binomial(k, i) * mp.exp(i * (i - 1) * c) for i in range(k + 1))
                assert logm[k // 2] == pytest.approx(float(mp.log(exact)), rel=1e-10, abs=1e-10)


# ----------------------------------------------------------------------------- general bounds
def test_poisson_general_bound_dominates_exact_gaussian():
    # Zhu-Wang Thm 6 applied to a Gaussian base must lie above the exact MTZ value
    for q, s in ((0.01, 1.1), (0.1, 2.0), (0.5, 1.0)):
        o = np.array([2.0, 3.0, 7.0, 20.0])
        zw = K.poisson_general_rdp(q, lambda a: np.asarray(a) / (2 * s * s), o)
        exact = K.poisson_gaussian_rdp(q, s, o)
        assert np.all(zw >= exact * (1 - 1e-12))


def test_wor_general_bound_dominates_gaussian_strengthening():
    for q, s in ((0.01, 1.1), (0.1, 2.0)):
        o = np.array([2.0, 3.0, 7.5, 20.0])
        general = K.wor_general_rdp(q, lambda a: np.asarray(a) / (2 * s * s), math.inf, o)
        strong = K.wor_gaussian_rdp(q, s, o)
        assert np.all(general >= strong * (1 - 1e-12))


# ----------------------------------------------------------------------------- hypothesis
q_st = st.floats(1e-6, 1.0)
s_st = st.floats(0.3, 50.0)
a_st = st.floats(1.01, 300.0)


@given(q_st, s_st, a_st, a_st)
def test_poisson_gaussian_nondecreasing_in_alpha(q, s, a1, a2):
    lo, hi = sorted((a1, a2))
    r = PoissonSampled(Gaussian(s), q).rdp([lo, hi])
    assert r[0] <= r[1] * (1 + 1e-9)


@given(q_st, q_st, s_st, a_st)
def test_poisson_gaussian_increasing_in_q(q1, q2, s, a):
    lo, hi = sorted((q1, q2))
    r_lo = PoissonSampled(Gaussian(s), lo).rdp([a])[0]
    r_hi = PoissonSampled(Gaussian(s), hi).rdp([a])[0]
    assert r_lo <= r_hi * (1 + 1e-9)


@given(q_st, s_st, s_st, a_st)
def test_poisson_gaussian_decreasing_in_sigma(q, s1, s2, a):
    lo, hi = sorted((s1, s2))
    assert PoissonSampled(Gaussian(hi), q).rdp([a])[0] <= PoissonSampled(Gaussian(lo), q).rdp([a])[0] * (1 + 1e-9)


@given(q_st, s_st, a_st)
def test_subsampled_below_base(q, s, a):
    g = Gaussian(s)
    assert PoissonSampled(g, q).rdp([a])[0] <= g.rdp([a])[0]
    g1 = Gaussian(s, neighbouring="replace_one")
    assert SampledWithoutReplacement(g1, q).rdp([a])[0] <= g1.rdp([a])[0]
    lap = Laplace(s / 10)
    assert PoissonSampled(lap, q).rdp([a])[0] <= lap.rdp([a])[0]


@given(st.floats(1e-4, 0.99), s_st, st.integers(2, 200))
def test_wor_nondecreasing_in_q_and_alpha(q, s, a):
    g = Gaussian(s, neighbouring="replace_one")
    r = SampledWithoutReplacement(g, q).rdp([a, a + 0.5, a + 1])
    assert np.all(np.diff(r) >= -1e-12 * r[1:])
    assert SampledWithoutReplacement(g, q / 2).rdp([a])[0] <= r[0] * (1 + 1e-9)


# ----------------------------------------------------------------------------- extremes
@pytest.mark.parametrize("q", [1e-9, 0.5])
@pytest.mark.parametrize("s", [1e-3, 1e4])
def test_extreme_inputs_finite_fast_no_warnings(q, s):
    orders = [1.0 + 1e-6, 1.5, 2.0, 63.0, 1024.0, 1e6, 1e6 + 0.5, math.inf]
    mechs = [PoissonSampled(Gaussian(s), q), SampledWithoutReplacement(Gaussian(s, neighbouring="replace_one"), q),
             PoissonSampled(Laplace(s), q), SampledWithoutReplacement(Laplace(s, neighbouring="replace_one"), q)]
    for m in mechs:
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            r = m.rdp(orders)
        assert time.perf_counter() - t < 1.0
        assert not np.any(np.isnan(r)) and np.all(r >= 0)
        assert np.all(np.isfinite(r[:-1]))


def test_tiny_q_accuracy():
    # A - 1 is computed directly: r(2) = log1p(q^2 (e^{1/s^2} - 1)) even for q = 1e-9
    r = K.poisson_gaussian_rdp(1e-9, 1.0, np.array([2.0, 3.0, 1.5]))
    assert r[0] == pytest.approx(1e-18 * math.expm1(1.0), rel=1e-12)
    assert r[1] == pytest.approx(1e-18 * 1.5 * math.expm1(1.0), rel=1e-6)
    assert 0 < r[2] <= r[0]


def test_poisson_gaussian_speed_default_orders():
    orders = np.array(R.DEFAULT_RDP_ORDERS, dtype=float)
    K.poisson_gaussian_rdp(0.01, 1.1, orders)
    t = time.perf_counter()
    for k in range(5):
        K.poisson_gaussian_rdp(0.01, 1.1 + 0.01 * k, orders)
    assert (time.perf_counter() - t) / 5 < 0.2  # loose guard; benchmark target is < 10 ms


# --- regimes where the signed series converges slowly or cancels (large sigma, alpha near 1 or large
# alpha with tiny values): Gauss-Hermite on the non-negative remainder h(x) takes over there.
def _mp_rdp_breakpoints(q, s, a):
    """Exact Poisson-subsampled Gaussian RDP by mpmath quadrature, with breakpoints at the peak of
    the q-part of the integrand (z ~ alpha): without them mpmath misses the mass for large alpha."""
    import mpmath

    with mpmath.workdps(40):
        q, s, a = mpmath.mpf(q), mpmath.mpf(s), mpmath.mpf(a)

        def f(z):
            return mpmath.npdf(z, 0, s) * ((1 - q) + q * mpmath.exp((2 * z - 1) / (2 * s * s))) ** a

        pts = sorted({-40 * s, -10 * s, mpmath.mpf(0), mpmath.mpf(0.5), mpmath.mpf(1), a / 2, a - 1,
                      a - 10 * s, a - 3 * s, a, a + 3 * s, a + 10 * s, a + 40 * s, 40 * s})
        A = mpmath.quad(f, [-mpmath.inf] + pts + [mpmath.inf], maxdegree=10)
        return float(mpmath.log(A) / (a - 1))


HARD_CASES = [(0.5, 10.0, 1.01), (0.5, 30.0, 1.1), (1e-4, 100.0, 1.5), (1e-4, 100.0, 1.01),
              (0.01, 100.0, 50.5), (1e-4, 100.0, 50.5), (0.9, 100.0, 1.01), (0.99, 1000.0, 1.001),
              (1e-6, 3.0, 20.5)]


@pytest.mark.parametrize("q,sigma,alpha", HARD_CASES)
def test_poisson_gaussian_hard_fractional_cases_vs_quadrature(q, sigma, alpha):
    ours = float(K.poisson_gaussian_rdp(q, sigma, [alpha])[0])
    exact = _mp_rdp_breakpoints(q, sigma, alpha)
    assert ours >= exact * (1 - 1e-14)  # an upper bound (up to the quadrature's own last digit)
    assert ours <= exact * (1 + 1e-9)


@pytest.mark.slow
def test_poisson_gaussian_fractional_grid_vs_quadrature_slow():
    """100 (q, sigma, alpha) cases over q in [1e-6, 0.99], sigma in [0.6, 1000], alpha in [1.001, 50.5]
    (a 392-case version of this grid was run once: worst +1.04e-10, never below)."""
    worst = 0.0
    for q in (1e-6, 0.01, 0.3, 0.99):
        for sigma in (0.6, 1.1, 3.0, 30.0, 1000.0):
            for alpha in (1.001, 1.1, 2.5, 20.5, 50.5):
                ours = float(K.poisson_gaussian_rdp(q, sigma, [alpha])[0])
                exact = _mp_rdp_breakpoints(q, sigma, alpha)
                assert exact * (1 - 1e-14) <= ours <= exact * (1 + 1e-9), (q, sigma, alpha, ours, exact)
                worst = max(worst, ours / exact - 1)
    assert worst < 1e-9
