"""The Gaussian privacy profile solved once (issue 16): dpaudit.accounting.gaussian_profile is the
one home of delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) (Balle & Wang 2018, Thm. 8);
conversions.gaussian_delta / gaussian_epsilon / gdp_* and the PLD accountant's exact Gaussian path
call it. Checked against 50-digit mpmath over mu in [1e-3, 1e3], delta in [1e-300, 0.5]: the upper
root is never below the exact root and within a few ulps above it (before the merge the
conversions' root was up to tens of ulps above it, and the two homes disagreed)."""

import math
import pathlib
from fractions import Fraction

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpaudit
from dpaudit.accounting import conversions as C
from dpaudit.accounting import gaussian_profile as G
from dpaudit.accounting.pld.accountant import PLDAccountant
from dpaudit.mechanisms import Gaussian

ULPS = 4


def mp_delta(mu, eps):
    """Exact delta(eps) for mu (float or mpf), at 90 digits (the subtraction loses up to ~20)."""
    with mp.workdps(90):
        mu, eps = mp.mpf(mu), mp.mpf(eps)
        return mp.ncdf(mu / 2 - eps / mu) - mp.exp(eps) * mp.ncdf(-mu / 2 - eps / mu)


def mp_root(mu, delta, lo, hi):
    """The exact root to 50 digits, bisected inside a bracket around [lo, hi] whose ends are
    checked first (so a wrong [lo, hi] cannot mislead the oracle)."""
    t = mp.mpf(delta)
    if mp_delta(mu, 0.0) <= t:
        return mp.mpf(0)
    with mp.workdps(60):
        a = mp.mpf(lo) * (1 - mp.mpf(10) ** -9)
        b = mp.mpf(hi) * (1 + mp.mpf(10) ** -9) + mp.mpf(10) ** -300
        assert mp_delta(mu, a) > t and mp_delta(mu, b) <= t, "the oracle's bracket does not hold"
        for _ in range(120):
            m = (a + b) / 2
            if mp_delta(mu, m) > t:
                a = m
            else:
                b = m
            if b - a <= mp.mpf(10) ** -50 * b:
                break
        return (a + b) / 2


def _check_roots(mu, delta):
    up = C.gdp_epsilon(mu, delta)
    lo = C.gaussian_epsilon_lower(mu, 1.0, delta)
    assert 0.0 <= lo <= up < math.inf
    root = mp_root(mu, delta, lo, up)
    if root == 0:
        assert up == 0.0
        return
    ulp = mp.mpf(math.ulp(float(root)))
    assert mp.mpf(up) >= root, "upper root below the exact root"
    assert mp.mpf(lo) <= root, "lower root above the exact root"
    assert mp.mpf(up) - root <= ULPS * ulp, f"upper root {float((mp.mpf(up) - root) / ulp):.1f} ulps above"
    assert root - mp.mpf(lo) <= ULPS * ulp, f"lower root {float((root - mp.mpf(lo)) / ulp):.1f} ulps below"


@pytest.mark.parametrize("mu, delta", [(1e-3, 1e-300), (1e-3, 0.5), (1e3, 1e-300), (1e3, 0.5), (1.0, 1e-5),
                                       (1 / 1.3, 1e-5), (0.05, 1e-10), (20.0, 1e-300), (2.0, 0.49)])
def test_roots_within_a_few_ulps_of_mpmath(mu, delta):
    _check_roots(mu, delta)


log_mu = st.floats(-3.0, 3.0)
log_delta = st.floats(-300.0, math.log10(0.5))


@settings(max_examples=15, deadline=None)
@given(log_mu, log_delta)
def test_roots_within_a_few_ulps_property(lm, ld):
    _check_roots(10.0**lm, 10.0**ld)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(log_mu, log_delta)
def test_roots_within_a_few_ulps_property_many(lm, ld):
    _check_roots(10.0**lm, 10.0**ld)


@settings(max_examples=30, deadline=None)
@given(log_mu, st.floats(0.0, 50.0))
def test_delta_bracket_within_a_few_ulps(lm, eps):
    mu = 10.0**lm
    lo, hi = G.delta_bounds(Fraction(mu) ** 2, eps)
    exact = mp_delta(mu, eps)
    assert mp.mpf(lo) <= exact <= mp.mpf(hi)
    assert C.gdp_delta(mu, eps) == hi
    if exact > mp.mpf(1e-300):  # representable with full precision
        assert mp.mpf(hi) - exact <= ULPS * mp.mpf(math.ulp(float(exact)))
        assert exact - mp.mpf(lo) <= ULPS * mp.mpf(math.ulp(float(exact)))


@pytest.mark.parametrize("sigma, count, delta", [(1.3, 1, 1e-5), (1.3, 10, 1e-5), (25.0, 1000, 1e-8), (0.7, 7, 0.3)])
def test_conversions_and_pld_agree(sigma, count, delta):
    """One home: the PLD accountant's exact Gaussian and conversions.gaussian_epsilon give the same
    upper root (before the merge they differed by tens of ulps)."""
    acc = PLDAccountant().compose(Gaussian(sigma), count)
    one = Gaussian(sigma / math.sqrt(count)) if count > 1 else Gaussian(sigma)
    assert acc.epsilon_interval(delta) == G.epsilon_bounds(Fraction(count) / Fraction(sigma) ** 2, delta)
    if count == 1:
        assert acc.epsilon_interval(delta)[1] == C.gaussian_epsilon(one.sigma, delta)
        assert acc.delta_interval(1.0)[1] == C.gaussian_delta(one.sigma, 1.0)


def test_mu_squared_is_exact():
    terms = [(1.0, 3.0, 10**400), (0.5, 0.1, 7), (2.0, 1e300, 1)]
    expected = 10**400 * Fraction(1, 9) + 7 * (Fraction(0.5) / Fraction(0.1)) ** 2 + (Fraction(2.0) / Fraction(1e300)) ** 2
    assert G.mu_squared(terms) == expected
    assert G.epsilon_bounds(G.mu_squared(terms), 1e-5) == (sys_float_max(), math.inf)


def sys_float_max():
    import sys

    return sys.float_info.max


def test_subnormal_targets_are_resolved_precisely():
    # deltas in the subnormal range (where a float bracket of delta is coarse): the comparisons are
    # made in log space and in mpmath, so the bracket on epsilon stays a few ulps wide
    for sigma, sens, delta in [(4.168953031857271e158, 1.0, 3.485e-320), (1432.2175146220156, 3.320265387153467e-122, 2.812771e-317)]:
        lo, up = G.epsilon_bounds((Fraction(sens) / Fraction(sigma)) ** 2, delta)
        assert 0.0 < lo < up and up - lo <= 4 * math.ulp(up)


def test_one_home():
    # the curve and its double-precision bounds live in dpaudit/core/special.py (used by this
    # profile and by the PLD discretisation of the Gaussian pair); the mpmath stage and the root
    # searches in accounting/gaussian_profile.py; nobody else keeps a copy
    root = pathlib.Path(dpaudit.__file__).parent
    assert not (root / "accounting" / "pld" / "gaussian.py").exists()
    homes = {"special.py": ("def log_mills", "def log_phi_tail", "def gaussian_log_f", "def _closed_form"),
             "gaussian_profile.py": ("def _delta_mp",)}
    markers = ("def _delta_mp", "def _log_mills", "def _log_phi_tail", "def _gauss_log_f_double",
               "def _gaussian_min_epsilon", "def _gauss_delta_bounds", "def log_mills", "def log_phi_tail",
               "def gaussian_log_f", "def _closed_form", "def _gl_interval")
    for name, own in homes.items():
        text = next(root.rglob(name)).read_text()
        for marker in own:
            assert marker in text, f"{name} no longer holds {marker}"
    for path in root.rglob("*.py"):
        if path.name in homes:
            continue
        text = path.read_text()
        for marker in markers:
            assert marker not in text, f"{path} keeps its own copy of the Gaussian curve ({marker})"
    text = (root / "accounting" / "gaussian_profile.py").read_text()
    for marker in ("def _log_mills", "def _log_phi_tail", "def _gauss_log_f_double", "def _log_k_bracket"):
        assert marker not in text
