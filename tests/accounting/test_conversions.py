"""Tests of dpaudit.conversions: reference values (closed forms and dp_accounting 0.6.0), mpmath oracles,
dp_accounting's conversion on the same RDP vectors, inverse pairs, monotonicity, bad input."""

from __future__ import annotations

import math
import warnings

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit import conversions as C
from dpaudit.accounting.rdp import DEFAULT_ORDERS

REL = 1e-10


def rel_close(a, b, rel):
    return abs(a - b) <= rel * abs(b)


# ---------------------------------------------------------------------------------------------
# reference values, closed forms and dp_accounting 0.6.0
# ---------------------------------------------------------------------------------------------
def test_gaussian_reference_values():
    assert rel_close(C.gaussian_delta(1.0, 1.0), 0.126936737506644, REL)
    assert rel_close(C.gaussian_epsilon(1.0, 1e-5), 4.377178095681, REL)
    # same numbers with sigma and sensitivity scaled together
    assert rel_close(C.gaussian_epsilon(3.0, 1e-5, sensitivity=3.0), 4.377178095681, REL)
    # T = 1000 Gaussian steps, sigma/D = 20, composed = one Gaussian with sigma/sqrt(T)
    assert rel_close(C.gaussian_epsilon(20.0 / math.sqrt(1000), 1e-5), 7.511275900745, REL)
    # GDP with mu = D/sigma is the same curve
    assert rel_close(C.gdp_delta(1.0, 1.0), 0.126936737506644, REL)
    assert rel_close(C.gdp_epsilon(1.0, 1e-5), 4.377178095681, REL)
    # sigma for (1, 1e-5) is 3.7306316348 (printed to 11 digits) -> mu = 1/sigma
    assert abs(1.0 / C.gdp_mu(1.0, 1e-5) - 3.7306316348) < 1e-10


def test_zcdp_reference_values():
    assert rel_close(C.zcdp_to_dp(0.5, 1e-5, method="bs"), 5.298525912188, REL)
    assert rel_close(C.zcdp_to_dp(0.5, 1e-5, method="cks"), 4.728386984943, REL)
    assert rel_close(C.zcdp_to_dp(0.5, 1e-5), 4.728386984943, REL)  # default is cks
    assert rel_close(C.zcdp_to_dp(1 / 32, 1e-3), 0.6880024554878, REL)  # OpenDP's own test value
    assert rel_close(C.zcdp_delta(0.5, 3.0), 0.005143184064, 1e-9)
    assert rel_close(C.zcdp_delta(0.1, 1.0), 0.008933245772, 1e-9)
    assert rel_close(C.zcdp_delta(0.01, 0.5), 3.505878060e-5, 1e-9)
    assert rel_close(C.dp_to_zcdp(1.0, 1e-5, method="cks"), 0.030556595198, 1e-9)
    assert rel_close(C.dp_to_zcdp(1.0, 1e-5, method="bs"), 0.020819938340, 1e-9)


def test_tcdp_reference_values():
    # closed form of Bun, Dwork, Rothblum, Steinke 2018, printed to 8 decimals: agree to half a unit in the last place
    assert abs(C.tcdp_to_dp(0.1, 5.0, 1e-6) - 3.95387764) <= 5e-9
    assert abs(C.tcdp_to_dp(0.1, 100.0, 1e-6) - 2.45078800) <= 5e-9
    assert abs(C.tcdp_to_dp(0.01, 20.0, 1e-6) - 0.92713213) <= 5e-9
    # the omega-capped branch is used at (0.1, 5): rho*omega + log(1/delta)/(omega - 1)
    assert C.tcdp_to_dp(0.1, 5.0, 1e-6) == pytest.approx(0.5 + math.log(1e6) / 4, rel=1e-14)


def test_rdp_to_dp_reference_gaussian_on_dp_accounting_grid():
    # closed forms (Balle & Wang 2018; Bun & Steinke 2016) = dp_accounting 0.6.0: dp-accounting RdpAccountant, default orders, rho = 0.5 -> 4.728507067218 at 5.4
    from dp_accounting.rdp.rdp_privacy_accountant import DEFAULT_RDP_ORDERS

    orders = np.array(DEFAULT_RDP_ORDERS, dtype=float)
    eps, order = C.rdp_to_dp(orders, 0.5 * orders, 1e-5)
    assert rel_close(eps, 4.728507067218, 1e-11)
    assert order == 5.4
    d, order_d = C.rdp_to_delta(orders, 0.5 * orders, 3.0)
    assert rel_close(d, 0.005143252151, 1e-9)  # dp-accounting get_delta(3.0), closed forms (Balle & Wang 2018; Bun & Steinke 2016) = dp_accounting 0.6.0


# ---------------------------------------------------------------------------------------------
# independent oracles: mpmath
# ---------------------------------------------------------------------------------------------
def _mp_gaussian_delta(s, eps, dps=60):
    with mp.workdps(dps):
        s, eps = mp.mpf(s), mp.mpf(eps)
        a = 1 / (2 * s) - eps * s
        b = -1 / (2 * s) - eps * s
        return mp.ncdf(a) - mp.exp(eps) * mp.ncdf(b)


@pytest.mark.parametrize(
    "s,eps",
    [(1.0, 0.0), (1.0, 1.0), (0.5, 3.0), (2.0, 0.1), (3.73, 1.0), (10.0, 0.05), (0.1, 30.0),
     (1e-3, 5e5), (1e4, 1e-4), (1e4, 1e-8), (50.0, 0.2), (0.3, 20.0), (5.0, 2.0)],
)
def test_gaussian_delta_matches_mpmath_and_is_upper(s, eps):
    exact = _mp_gaussian_delta(s, eps)
    ours = C.gaussian_delta(s, eps)
    assert ours >= exact  # an upper bound, never below the exact value
    assert float(abs(ours - exact) / exact) < 1e-9


def test_gaussian_delta_deep_tail_is_positive_and_upper():
    # true delta ~ 1e-2000: underflows in double; an upper bound must still be > 0
    exact = _mp_gaussian_delta(1.0, 60.0, dps=50)
    assert exact > 0
    ours = C.gaussian_delta(1.0, 60.0)
    assert ours >= exact and ours < 1e-300


def _mp_cks_epsilon(rho, delta):
    with mp.workdps(40):
        rho, L = mp.mpf(rho), -mp.log(mp.mpf(delta))
        a = mp.findroot(lambda a: rho * (a - 1) ** 2 + mp.log(a) - L, 1 + mp.sqrt(L / rho))
        return a * rho + mp.log((a - 1) / a) - (mp.log(delta) + mp.log(a)) / (a - 1)


@pytest.mark.parametrize("rho,delta", [(0.5, 1e-5), (0.01, 1e-6), (2.0, 1e-3), (1e-4, 1e-10), (30.0, 1e-5)])
def test_cks_epsilon_matches_mpmath(rho, delta):
    exact = _mp_cks_epsilon(rho, delta)
    ours = C.zcdp_to_dp(rho, delta)
    assert ours >= exact - 1e-15 * abs(exact)
    assert float(abs(ours - exact) / exact) < 1e-10


def test_cks_delta_matches_brute_force_grid():
    # min over a dense alpha grid in mpmath is >= the continuous minimum and close to it
    for rho, eps in [(0.5, 3.0), (0.1, 1.0), (0.01, 0.5), (1.0, 0.0), (5.0, 12.0)]:
        alphas = np.linspace(1.0005, 60.0, 20000)
        t = alphas - 1.0
        logd = t * (alphas * rho - eps) + alphas * np.log(t / alphas) - np.log(t)
        grid_min = float(np.exp(logd.min()))
        ours = C.zcdp_delta(rho, eps)
        assert ours <= grid_min * (1 + 1e-12)
        assert ours >= grid_min * (1 - 1e-5)


# ---------------------------------------------------------------------------------------------
# dp_accounting's conversion on the same vectors (ours must be at least as tight)
# ---------------------------------------------------------------------------------------------
def test_rdp_to_dp_at_least_as_tight_as_dp_accounting():
    from dp_accounting.rdp.rdp_privacy_accountant import compute_delta, compute_epsilon

    rng = np.random.default_rng(0)
    orders = np.array(DEFAULT_ORDERS, dtype=float)
    orders = orders[np.isfinite(orders)]  # dp_accounting has no alpha = inf (it returns 0 there)
    for _ in range(200):
        scale = 10 ** rng.uniform(-6, 1)
        power = rng.uniform(0.5, 2.0)
        rdp = scale * orders**power
        delta = 10 ** rng.uniform(-12, -1)
        eps_ref, _ = compute_epsilon(orders, rdp, delta)
        ours, order = C.rdp_to_dp(orders, rdp, delta)
        assert ours <= eps_ref * (1 + 1e-12) + 1e-300
        # where dp_accounting uses the same formula (alpha > 1.01) the values agree
        sel = orders > 1.01
        eps_ref2, _ = compute_epsilon(orders[sel], rdp[sel], delta)
        ours2, _ = C.rdp_to_dp(orders[sel], rdp[sel], delta)
        assert rel_close(ours2, eps_ref2, 1e-12) or ours2 == eps_ref2 == 0
        eps = float(rng.uniform(0, 5))
        d_ref, _ = compute_delta(orders, rdp, eps)
        d_ours, _ = C.rdp_to_delta(orders, rdp, eps)
        assert d_ours <= d_ref * (1 + 1e-12) + 1e-300


def test_rdp_conversion_never_below_exact_gaussian_even_near_one():
    orders = np.array([1.000001, 1.0001, 1.001, 1.01, 1.1, 2.0, 10.0, 100.0, 1e4])
    for sigma in [1e-3, 0.05, 0.3, 1.0, 4.0, 50.0]:
        rho = 0.5 / sigma**2
        for delta in [1e-2, 1e-5, 1e-12]:
            exact = C.gaussian_epsilon(sigma, delta)
            eps, _ = C.rdp_to_dp(orders, rho * orders, delta)
            assert eps >= exact
            assert C.zcdp_to_dp(rho, delta) >= exact
            assert C.zcdp_to_dp(rho, delta, "bs") >= C.zcdp_to_dp(rho, delta, "cks")


# ---------------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------------
sigmas = st.floats(min_value=0.05, max_value=200.0)
deltas = st.floats(min_value=1e-15, max_value=0.5)
rhos = st.floats(min_value=1e-6, max_value=50.0)


@given(sigmas, deltas)
def test_gaussian_epsilon_delta_inverse(sigma, delta):
    eps = C.gaussian_epsilon(sigma, delta)
    if eps > 0:
        d = C.gaussian_delta(sigma, eps)
        assert d <= delta
        assert d >= delta * (1 - 1e-9)
    else:
        assert C.gaussian_delta(sigma, 0.0) <= delta


@given(rhos, deltas)
def test_zcdp_epsilon_delta_inverse(rho, delta):
    eps = C.zcdp_to_dp(rho, delta)
    if eps > 0:
        assert rel_close(C.zcdp_delta(rho, eps), delta, 1e-9)
    # zCDP -> DP never beats the exact Gaussian curve with the same rho
    assert eps >= C.gaussian_epsilon(1.0 / math.sqrt(2.0 * rho), delta)


@given(st.floats(min_value=0.0, max_value=20.0), deltas)
def test_dp_to_zcdp_is_largest_feasible_rho(eps, delta):
    for method in ("cks", "bs"):
        rho = C.dp_to_zcdp(eps, delta, method=method)
        assert rho >= 0
        if rho > 0:
            assert C.zcdp_to_dp(rho, delta, method) <= eps or C.zcdp_delta(rho, eps) <= delta
            # slightly larger rho is infeasible
            bigger = rho * (1 + 1e-8)
            if method == "cks":
                assert C.zcdp_delta(rho, eps) <= delta
                assert C.zcdp_delta(bigger, eps) > delta
            else:
                assert C.zcdp_to_dp(bigger, delta, "bs") > eps


@given(st.floats(min_value=0.0, max_value=30.0), deltas)
def test_gdp_mu_inverse(eps, delta):
    mu = C.gdp_mu(eps, delta)
    assert mu > 0
    assert C.gdp_delta(mu, eps) <= delta
    assert C.gdp_delta(mu * (1 + 1e-8), eps) > delta


@given(rhos, st.floats(min_value=1.01, max_value=1e6), deltas)
def test_tcdp_conversions(rho, omega, delta):
    bs = C.tcdp_to_dp(rho, omega, delta, method="bs")
    cks = C.tcdp_to_dp(rho, omega, delta, method="cks")
    assert cks <= bs * (1 + 1e-12)
    # a smaller omega can only hurt; omega = inf is zCDP
    assert cks >= C.tcdp_to_dp(rho, math.inf, delta, method="cks")
    assert bs >= C.tcdp_to_dp(rho, math.inf, delta, method="bs")
    if cks > 0:
        assert rel_close(C.tcdp_delta(rho, omega, cks), delta, 1e-9)


@given(rhos, deltas)
def test_tcdp_infinite_omega_equals_zcdp(rho, delta):
    assert C.tcdp_to_dp(rho, math.inf, delta, method="cks") == C.zcdp_to_dp(rho, delta, "cks")
    assert C.tcdp_to_dp(rho, math.inf, delta, method="bs") == C.zcdp_to_dp(rho, delta, "bs")
    assert C.tcdp_delta(rho, math.inf, 1.0) == C.zcdp_delta(rho, 1.0)


@given(rhos, rhos, deltas, deltas)
def test_zcdp_monotone(r1, r2, d1, d2):
    lo_r, hi_r = sorted((r1, r2))
    lo_d, hi_d = sorted((d1, d2))
    assert C.zcdp_to_dp(lo_r, lo_d) <= C.zcdp_to_dp(hi_r, lo_d)
    assert C.zcdp_to_dp(lo_r, hi_d) <= C.zcdp_to_dp(lo_r, lo_d)


@given(sigmas, sigmas, deltas)
def test_gaussian_epsilon_decreasing_in_sigma(s1, s2, delta):
    lo, hi = sorted((s1, s2))
    assert C.gaussian_epsilon(hi, delta) <= C.gaussian_epsilon(lo, delta)


@given(st.lists(st.floats(min_value=0.0, max_value=10.0), min_size=5, max_size=5), deltas)
def test_rdp_to_delta_inverts_rdp_to_dp(values, delta):
    orders = np.array([1.5, 2.0, 4.0, 16.0, 64.0])
    rdp = np.cumsum(np.sort(values))  # a non-decreasing curve
    eps, _ = C.rdp_to_dp(orders, rdp, delta)
    if eps > 0 and math.isfinite(eps):
        d, _ = C.rdp_to_delta(orders, rdp, eps)
        assert d <= delta * (1 + 1e-9)
        assert d >= delta * (1 - 1e-9)


def test_rdp_infinite_order_and_infinite_values():
    orders = np.array([2.0, math.inf])
    eps, order = C.rdp_to_dp(orders, np.array([math.inf, 0.7]), 1e-5)
    assert eps == pytest.approx(0.7) and order == math.inf  # D_inf = pure DP
    assert C.rdp_to_dp(orders, np.array([math.inf, math.inf]), 1e-5)[0] == math.inf
    assert C.rdp_to_delta(orders, np.array([math.inf, 0.7]), 0.7)[0] == 0.0
    assert C.rdp_to_delta(orders, np.array([math.inf, math.inf]), 1.0)[0] == 1.0
    # zero curve: nothing released
    assert C.rdp_to_dp(orders, np.zeros(2), 1e-5)[0] == 0.0
    assert C.rdp_to_delta(orders, np.zeros(2), 0.0)[0] == 0.0


def test_tv_fallback():
    # tiny rho: sqrt(1 - exp(-rho)) <= delta gives epsilon = 0
    assert C.zcdp_to_dp(1e-12, 1e-5) == 0.0
    assert C.rdp_to_dp([2.0, 3.0], [1e-12, 2e-12], 1e-5)[0] == 0.0
    assert C.zcdp_delta(1e-12, 0.0) <= math.sqrt(1e-12) * (1 + 1e-12)


def test_zero_and_trivial():
    assert C.zcdp_to_dp(0.0, 1e-5) == 0.0
    assert C.zcdp_to_dp(0.0, 1e-5, "bs") == 0.0
    assert C.zcdp_delta(0.0, 0.0) == 0.0
    assert C.tcdp_to_dp(0.0, 2.0, 1e-5) == 0.0
    assert C.gdp_delta(0.0, 0.0) == 0.0
    assert C.gdp_epsilon(0.0, 1e-5) == 0.0
    assert C.gaussian_delta(1.0, 0.0) == pytest.approx(math.erf(0.5 / math.sqrt(2)), rel=1e-12)


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: C.gaussian_delta(0.0, 1.0), "sigma"),
        (lambda: C.gaussian_delta(-1.0, 1.0), "sigma"),
        (lambda: C.gaussian_delta(math.nan, 1.0), "sigma"),
        (lambda: C.gaussian_delta(math.inf, 1.0), "sigma"),
        (lambda: C.gaussian_delta(1.0, -0.1), "epsilon"),
        (lambda: C.gaussian_delta(1.0, math.inf), "epsilon"),
        (lambda: C.gaussian_delta(1.0, 1.0, sensitivity=0.0), "sensitivity"),
        (lambda: C.gaussian_epsilon(1.0, 0.0), "delta"),
        (lambda: C.gaussian_epsilon(1.0, 1.0), "delta"),
        (lambda: C.gaussian_epsilon(1.0, math.nan), "delta"),
        (lambda: C.zcdp_to_dp(-1.0, 1e-5), "rho"),
        (lambda: C.zcdp_to_dp(math.nan, 1e-5), "rho"),
        (lambda: C.zcdp_to_dp(math.inf, 1e-5), "rho"),
        (lambda: C.zcdp_to_dp(0.5, 1.5), "delta"),
        (lambda: C.zcdp_to_dp(0.5, 1e-5, method="opt"), "method"),
        (lambda: C.zcdp_delta(0.5, math.nan), "epsilon"),
        (lambda: C.dp_to_zcdp(-1.0, 1e-5), "epsilon"),
        (lambda: C.dp_to_zcdp(1.0, 0.0), "delta"),
        (lambda: C.tcdp_to_dp(0.1, 1.0, 1e-5), "omega"),
        (lambda: C.tcdp_to_dp(0.1, math.nan, 1e-5), "omega"),
        (lambda: C.tcdp_to_dp(0.1, 5.0, 1e-5, method="x"), "method"),
        (lambda: C.rdp_to_dp([1.0, 2.0], [0.1, 0.2], 1e-5), "orders"),
        (lambda: C.rdp_to_dp([1.5, 2.0], [0.1, -0.2], 1e-5), "rdp"),
        (lambda: C.rdp_to_dp([1.5, 2.0], [0.1, math.nan], 1e-5), "rdp"),
        (lambda: C.rdp_to_dp([1.5, 2.0], [0.1], 1e-5), "rdp"),
        (lambda: C.rdp_to_dp([1.5, math.nan], [0.1, 0.2], 1e-5), "orders"),
        (lambda: C.rdp_to_dp([1.5, 2.0], [0.1, 0.2], -1e-5), "delta"),
        (lambda: C.rdp_to_delta([1.5, 2.0], [0.1, 0.2], -1.0), "epsilon"),
        (lambda: C.gdp_delta(-1.0, 1.0), "mu"),
        (lambda: C.gdp_mu(1.0, 1.0), "delta"),
    ],
)
def test_bad_input_names_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ---------------------------------------------------------------------------------------------
# extreme but legal inputs: finite or inf, no warnings
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sigma", [1e-3, 1e-1, 1.0, 1e4])
@pytest.mark.parametrize("delta", [1e-300, 1e-5, 0.999])
def test_extreme_inputs_no_warnings(sigma, delta):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rho = 0.5 / sigma**2
        vals = [
            C.gaussian_epsilon(sigma, delta),
            C.gaussian_delta(sigma, 50.0),
            C.zcdp_to_dp(rho, delta),
            C.zcdp_to_dp(rho, delta, "bs"),
            C.zcdp_delta(rho, 1e-3),
            C.zcdp_delta(rho, 1e6),
            C.dp_to_zcdp(1.0, delta),
            C.tcdp_to_dp(rho, 1.5, delta),
            C.tcdp_to_dp(rho, 1.5, delta, "cks"),
            C.gdp_mu(0.5, delta),
            C.rdp_to_dp(DEFAULT_ORDERS, rho * DEFAULT_ORDERS, delta)[0],
            C.rdp_to_delta(DEFAULT_ORDERS, rho * DEFAULT_ORDERS, 1.0)[0],
        ]
    for v in vals:
        assert not math.isnan(v) and v >= 0
    # epsilon at delta is certified by the exact curve
    assert C.gaussian_delta(sigma, vals[0]) <= delta
