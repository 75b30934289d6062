"""Exact (epsilon, delta) of two Gaussians with unequal variances (issue 17).

References: the hockey-stick divergence in mpmath at 60 digits from the roots of the quadratic
privacy loss (tails by mp.ncdf), mpmath quadrature of (p - e^eps q)_+ with breakpoints at the
roots (an independent check of the closed form where delta is not tiny), and the Balle-Wang
Gaussian mechanism for equal variances.
"""

from __future__ import annotations

import math

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.accounting.conversions import gaussian_delta
from dpaudit.accounting.unequal_gaussians import (
    unequal_gaussian_delta,
    unequal_gaussian_delta_lower,
    unequal_gaussian_epsilon,
)


def _roots_mp(e, m_p, s_p, m_q, s_q):
    A = 1 / (2 * s_q**2) - 1 / (2 * s_p**2)
    B = m_p / s_p**2 - m_q / s_q**2
    C = m_q**2 / (2 * s_q**2) - m_p**2 / (2 * s_p**2) + mp.log(s_q / s_p) - e
    if A == 0:
        return A, B, ([-C / B] if B != 0 else [])
    disc = B * B - 4 * A * C
    if disc <= 0:
        return A, B, []
    r = mp.sqrt(disc)
    return A, B, sorted([(-B - r) / (2 * A), (-B + r) / (2 * A)])


def _ncdf(z):
    """mp.ncdf with |z| capped at 1e6 (mpmath overflows for |z| ~ 1e200; Phi(-1e6) ~ e^-5e11)."""
    return mp.ncdf(min(max(z, -1e6), 1e6))


def _delta_mp(e, m_p, s_p, m_q, s_q, dps=60):
    """sup_S P(S) - e^eps Q(S) in closed form: S = {L > eps} from the roots."""
    with mp.workdps(dps):
        e, m_p, s_p, m_q, s_q = (mp.mpf(v) for v in (e, m_p, s_p, m_q, s_q))
        A, B, roots = _roots_mp(e, m_p, s_p, m_q, s_q)

        def mass(m, s):
            if A == 0:
                if not roots:
                    return mp.mpf(0)
                z = (roots[0] - m) / s
                return _ncdf(-z) if B > 0 else _ncdf(z)
            if A > 0:  # outside the roots (or everything)
                if not roots:
                    return mp.mpf(1)
                return _ncdf((roots[0] - m) / s) + _ncdf(-(roots[1] - m) / s)
            if not roots:
                return mp.mpf(0)
            return _ncdf((roots[1] - m) / s) - _ncdf((roots[0] - m) / s)

        return max(mp.mpf(0), mass(m_p, s_p) - mp.e**e * mass(m_q, s_q))


def _delta_quad(e, m_p, s_p, m_q, s_q):
    with mp.workdps(30):
        e, m_p, s_p, m_q, s_q = (mp.mpf(v) for v in (e, m_p, s_p, m_q, s_q))
        _, _, roots = _roots_mp(e, m_p, s_p, m_q, s_q)
        f = lambda x: max(0, mp.npdf(x, m_p, s_p) - mp.e**e * mp.npdf(x, m_q, s_q))  # noqa: E731
        return mp.quad(f, [-mp.inf, *roots, mp.inf])


CASES = [(1.0, 0, 1, 1, 1.0), (0.5, 0, 1, 1, 1.2), (2, 0, 1, 0.5, 0.8), (0.1, 0, 1, 0, 1.5), (3, 0, 2, 1, 1),
         (0.0, 0, 1, 0, 0.9), (10, 0, 1, 3, 1.01), (1, 0, 1, 1, 1 + 1e-9), (30, 0, 1, 1, 0.5),
         (200, 0, 1, 1, 0.9), (40, 0, 1, 8, 1), (0.5, 100, 1, 101, 1.000001), (50, 0, 3, 0, 1),
         (1e-6, 0, 1, 1e-3, 1), (2, 0, 1e-3, 1e-3, 1.5e-3), (5, 0, 1, 20, 1)]


@pytest.mark.parametrize("case", CASES)
def test_bracket_contains_the_mpmath_value(case):
    ref = _delta_mp(*case)
    lo, up = unequal_gaussian_delta_lower(*case), unequal_gaussian_delta(*case)
    assert lo <= ref <= up, (case, float(ref), lo, up)
    # the margin is 1e-12 of P(L > eps) <= 1 (plus 1e-300): the bracket is that narrow
    assert up - lo <= 2.1e-12
    if 0 < ref < 1e-100:  # where P(L > eps) is tiny the bracket is relatively narrow too
        assert up - lo <= 1e-9 * float(ref)


@pytest.mark.parametrize("case", [c for c in CASES if c[0] <= 40])
def test_closed_form_against_quadrature(case):
    ref = _delta_mp(*case)
    if ref > 1e-20:
        assert float(_delta_quad(*case)) == pytest.approx(float(ref), rel=1e-8)


@settings(max_examples=80, deadline=None)
@given(eps=st.floats(0.0, 60.0), m_p=st.floats(-20, 20), s_p=st.floats(1e-2, 1e2),
       m_q=st.floats(-20, 20), s_q=st.floats(1e-2, 1e2))
def test_bracket_property_over_the_domain(eps, m_p, s_p, m_q, s_q):
    ref = _delta_mp(eps, m_p, s_p, m_q, s_q)
    lo = unequal_gaussian_delta_lower(eps, m_p, s_p, m_q, s_q)
    up = unequal_gaussian_delta(eps, m_p, s_p, m_q, s_q)
    assert 0.0 <= lo <= ref <= up <= 1.0


@pytest.mark.parametrize("sigma, mu, eps", [(1.0, 1.0, 1.0), (2.0, 0.5, 0.1), (0.5, 3.0, 4.0)])
def test_equal_variances_are_the_gaussian_mechanism(sigma, mu, eps):
    up = unequal_gaussian_delta(eps, 0.0, sigma, mu, sigma)
    assert up == pytest.approx(gaussian_delta(sigma, eps, mu), rel=1e-10)


def test_epsilon_meets_delta_and_is_smallest():
    for case in [(0, 1, 1, 1.2), (0, 1, 1, 0.8), (0, 1, 0, 1.5), (0, 1, 2, 1.0)]:
        for delta in (1e-10, 1e-5, 1e-2):
            e = unequal_gaussian_epsilon(delta, *case)
            assert math.isfinite(e)
            assert unequal_gaussian_delta(e, *case) <= delta
            if e > 0:
                assert unequal_gaussian_delta_lower(e * (1 - 1e-9), *case) > delta or e < 1e-300
    # P narrower than Q: the loss is bounded above, so delta = 0 beyond its maximum
    assert unequal_gaussian_delta(10.0, 0, 1, 0, 1.5) == 0.0


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="epsilon"):
        unequal_gaussian_delta(-1.0, 0, 1, 1, 1)
    with pytest.raises(ValueError, match="sigma_p"):
        unequal_gaussian_delta(1.0, 0, 0.0, 1, 1)
    with pytest.raises(ValueError, match="sigma_q"):
        unequal_gaussian_delta_lower(1.0, 0, 1, 1, -1)
    with pytest.raises(ValueError, match="mu_q"):
        unequal_gaussian_delta(1.0, 0, 1, math.nan, 1)
    with pytest.raises(ValueError, match="delta"):
        unequal_gaussian_epsilon(0.0, 0, 1, 1, 1)


@pytest.mark.parametrize("r", [1.1, 1.3, 2.0, 5.0, 7.0])
def test_tangency_at_the_largest_loss_keeps_an_upper_bound(r):
    """P = N(0, 1), Q = N(0, r^2), r > 1: the loss is at most log r. At epsilon = fl(log r), just
    below the true log r for these r, {L > epsilon} is a tiny interval that the float evaluation
    misses; the exact delta (~1e-26..1e-24) is positive, and the upper bound must cover it."""
    eps = math.log(r)
    ref = _delta_mp(eps, 0, 1, 0, r, dps=80)
    assert ref > 0
    assert unequal_gaussian_delta(eps, 0, 1, 0, r) >= ref
    assert unequal_gaussian_delta(eps, 0, 1, 0, r) < 1e-20
    assert unequal_gaussian_delta(eps + 1e-9, 0, 1, 0, r) == 0.0
