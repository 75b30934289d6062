"""Exact (epsilon, delta) of two Gaussians with unequal variances.

For P = N(m_p, s_p^2) and Q = N(m_q, s_q^2) the privacy loss L(x) = log p(x)/q(x) is quadratic
in x, so the hockey-stick divergence (Balle & Wang 2018, Def. / Thm. 8 for equal variances;
Barthe & Olmedo 2013 for the hockey-stick form of (epsilon, delta)-DP)

    delta(epsilon) = sup_S P(S) - e^epsilon Q(S) = P(L > epsilon) - e^epsilon Q(L > epsilon)

is a sum of normal tail probabilities at the roots of L(x) = epsilon. In the standardised
coordinate z = (x - m_p)/s_p, with d = (m_q - m_p)/s_p and r = s_q/s_p,

    L(z) - epsilon = A z^2 + B z + C,  A = (1 - r^2)/(2 r^2),  B = -d/r^2,
                                       C = d^2/(2 r^2) + log r - epsilon.

r < 1 (P wider): {L > epsilon} is the outside of the roots (two tails; delta > 0 for every
epsilon, the loss is unbounded); r > 1: the inside (delta = 0 once epsilon >= max L);
r = 1: the half-line of the equal-variance Gaussian mechanism.

Numerics: tails through ``scipy.special.log_ndtr`` (checked against mpmath quadrature over
the domain in tests/accounting/test_unequal_gaussians.py), the difference in log space
(``-expm1``), the quadratic's roots by the cancellation-free formula. The upper bound adds
and the lower bound subtracts a margin of 1e-12 relative to P(L > epsilon) (the measured
error of the evaluation is below 1e-13 of it) and 1e-300 absolute, then rounds outward.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from scipy import special

from dpaudit.core.numeric import round_down, round_up
from dpaudit.core.roots import bracket_up, smallest_true
from dpaudit.core.validation import check_delta, check_epsilon, check_positive, check_real

__all__ = ["unequal_gaussian_delta", "unequal_gaussian_delta_lower", "unequal_gaussian_epsilon"]

#: relative margin (of P(L > epsilon)) added to / subtracted from the evaluated delta
_REL_MARGIN = 1e-12
_ABS_MARGIN = 1e-300


def _log_diff(la: float, lb: float) -> float:
    """log(e^la - e^lb) for la >= lb (-inf when equal)."""
    if lb == -math.inf:
        return la
    if lb >= la:
        return -math.inf
    x = lb - la  # log(1 - e^x), x < 0 (Maechler 2012: expm1 near 0, log1p beyond -log 2)
    return la + (math.log(-math.expm1(x)) if x > -0.6931471805599453 else math.log1p(-math.exp(x)))


def _log_phi(x: float) -> float:
    return float(special.log_ndtr(x))


#: 20-point Gauss-Legendre rule on [-1, 1] (exact to degree 39)
_GL_X, _GL_W = np.polynomial.legendre.leggauss(20)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _log_mass_inside(z1: float, z2: float, c: float, w: float) -> float:
    """log P(c - w/2 < Z < c + w/2), Z standard normal, w >= 0, without cancellation: a narrow
    interval (w (1 + |c|) <= 2) by Gauss-Legendre on phi(c + t) = phi(c) e^{-c t - t^2/2}
    (|c t| <= 1: the rule's error is far below 1e-16); otherwise a difference of tails on one
    side of 0 (their logs differ by >= ~1) or, across 0, the sum of two positive erf terms.
    Ends, centre and width are all passed: a narrow interval far from 0 keeps its width exactly
    and a wide one (an end far away) its ends."""
    if not w > 0.0:
        return -math.inf
    if w * (1.0 + abs(c)) <= 2.0:
        h = 0.5 * w
        t = h * _GL_X
        total = float(np.dot(_GL_W, np.exp(-c * t - 0.5 * t * t)))
        return -0.5 * c * c - _LOG_SQRT_2PI + math.log(h * total)
    if z1 >= 0.0:  # both in the right tail: sf(z1) - sf(z2)
        return _log_diff(_log_phi(-z1), _log_phi(-z2))
    if z2 <= 0.0:
        return _log_diff(_log_phi(z2), _log_phi(z1))
    return math.log(0.5 * (math.erf(z2 / math.sqrt(2.0)) + math.erf(-z1 / math.sqrt(2.0))))


def _log_mass_outside(z1: float, z2: float, c: float, w: float) -> float:
    """log P(|Z - c| > w/2): 1 - (inside) for a narrow interval, else the sum of two tails."""
    if w * (1.0 + abs(c)) <= 2.0:
        inside = _log_mass_inside(z1, z2, c, w)
        return math.log1p(-math.exp(inside)) if inside < -0.6931471805599453 else math.log(-math.expm1(inside))
    return float(np.logaddexp(_log_phi(z1), _log_phi(-z2)))


def _parts(epsilon: float, m_p: float, s_p: float, m_q: float, s_q: float) -> tuple[float, float]:
    """(log P(S), epsilon + log Q(S)) for S = {L > epsilon}."""
    d = (m_q - m_p) / s_p
    r = s_q / s_p
    # A = (1 - r^2)/(2 r^2) with 1 - r = (s_p - s_q)/s_p computed from the difference (exact for
    # nearby floats by Sterbenz), so A = 0 exactly when the variances are equal
    one_minus_r = (s_p - s_q) / s_p
    A = one_minus_r * (1.0 + r) / (2.0 * r * r)
    B = -d / (r * r)
    C = d * d / (2.0 * r * r) + math.log(r) - epsilon
    if A == 0.0:
        if B == 0.0:  # identical laws
            return (-math.inf, -math.inf) if C <= 0.0 else (0.0, epsilon)
        z0 = -C / B  # S = {B z + C > 0}
        if B > 0:
            lp, lq = _log_phi(-z0), _log_phi(-(z0 - d) / r)
        else:
            lp, lq = _log_phi(z0), _log_phi((z0 - d) / r)
        return lp, epsilon + lq
    roots = _roots_centred(d, r, one_minus_r, A, C, epsilon)
    if roots is None:
        if A > 0.0:
            return 0.0, epsilon  # S = R: P(S) = Q(S) = 1 (delta = 1 - e^eps <= 0)
        return -math.inf, -math.inf  # S empty
    z1, z2 = roots
    c, w = 0.5 * (z1 + z2), z2 - z1
    # the interval in Q's standardised coordinate (centre and width kept apart: see above)
    pz, qz = (z1, z2, c, w), ((z1 - d) / r, (z2 - d) / r, (c - d) / r, w / r)
    if A > 0.0:  # outside the roots (they always exist here: K > 0)
        return _log_mass_outside(*pz), epsilon + _log_mass_outside(*qz)
    return _log_mass_inside(*pz), epsilon + _log_mass_inside(*qz)


def _roots_centred(d: float, r: float, one_minus_r: float, A: float, C: float, epsilon: float):
    """Roots of L(z) = epsilon from the centred form L(z) - epsilon = A (z - z0)^2 - K with
    z0 = d/(1 - r^2) and K = d^2/(2(1 - r^2)) + epsilon - log r (no B^2 - 4AC cancellation);
    the root of larger magnitude is z0 +- sqrt(K/A), the other (C/A)/that (Vieta), so r -> 1
    (z0 -> inf) loses nothing. The roots in order, or None when there is none."""
    om = one_minus_r * (1.0 + r)  # 1 - r^2
    z0 = d / om
    K = d * d / (2.0 * om) + epsilon - math.log(r)
    ratio = K / A
    if not ratio > 0.0 or math.isinf(ratio):
        return None
    half = math.sqrt(ratio)
    big = z0 + math.copysign(half, z0)
    if big == 0.0 or not math.isfinite(big):
        return None
    small = (C / A) / big
    return (small, big) if small <= big else (big, small)


def _check(m_p, s_p, m_q, s_q):
    return (check_real("mu_p", m_p), check_positive("sigma_p", s_p), check_real("mu_q", m_q),
            check_positive("sigma_q", s_q))


def _delta_and_scale(epsilon, m_p, s_p, m_q, s_q) -> tuple[float, float]:
    la, lb = _parts(epsilon, m_p, s_p, m_q, s_q)
    if la == -math.inf:
        return 0.0, 0.0
    ps = math.exp(la)
    if not la > lb:
        return 0.0, ps
    return ps * -math.expm1(lb - la), ps


def unequal_gaussian_delta(epsilon, mu_p, sigma_p, mu_q, sigma_q) -> float:
    """Upper bound (rounded up) on the exact delta(epsilon) = sup_S P(S) - e^eps Q(S) for
    P = N(mu_p, sigma_p^2), Q = N(mu_q, sigma_q^2) (module docstring). At most 1."""
    epsilon = check_epsilon("epsilon", epsilon)
    m_p, s_p, m_q, s_q = _check(mu_p, sigma_p, mu_q, sigma_q)
    la, _ = _parts(epsilon, m_p, s_p, m_q, s_q)
    if la == -math.inf:  # {L > epsilon} is empty as evaluated
        return _tangency_slack(epsilon, m_p, s_p, m_q, s_q)
    dl, ps = _delta_and_scale(epsilon, m_p, s_p, m_q, s_q)
    # the absolute margin also covers a delta below the float range (P(S) underflowing to 0)
    return min(1.0, round_up(dl + _REL_MARGIN * ps + _ABS_MARGIN))


def _tangency_slack(epsilon: float, m_p: float, s_p: float, m_q: float, s_q: float) -> float:
    """An upper bound on delta when {L > epsilon} evaluated empty (sigma_q > sigma_p, epsilon at
    or above the largest loss). In the centred form L - epsilon = A (z - z0)^2 - K (A < 0) the
    computed K carries an error of at most tol = 8 ulp of the sum of its terms' magnitudes; if
    the computed K is within tol of 0 the true set may be an interval of half-width
    h <= sqrt(tol/|A|) on which 0 < L - epsilon <= tol, so delta = int_S (p - e^eps q)
    <= P(S) (1 - e^-tol) <= 2 h phi(0) tol. Else delta is 0."""
    d = (m_q - m_p) / s_p
    r = s_q / s_p
    om = (s_p - s_q) / s_p * (1.0 + r)
    if om == 0.0:
        return 0.0
    A = om / (2.0 * r * r)
    terms = (d * d / (2.0 * om), epsilon, -math.log(r))
    tol = 8.0 * sys.float_info.epsilon * sum(abs(t) for t in terms)
    if A >= 0.0 or sum(terms) > tol:
        return 0.0
    h = math.sqrt(tol / -A)
    return round_up(2.0 * h * tol / math.sqrt(2.0 * math.pi) + _ABS_MARGIN)


def unequal_gaussian_delta_lower(epsilon, mu_p, sigma_p, mu_q, sigma_q) -> float:
    """Lower bound (rounded down, >= 0) on the same exact delta(epsilon): what any pair of
    neighbouring outputs with these laws truly leaks at ``epsilon``."""
    epsilon = check_epsilon("epsilon", epsilon)
    m_p, s_p, m_q, s_q = _check(mu_p, sigma_p, mu_q, sigma_q)
    dl, ps = _delta_and_scale(epsilon, m_p, s_p, m_q, s_q)
    return max(0.0, round_down(dl - _REL_MARGIN * ps - _ABS_MARGIN))


def unequal_gaussian_epsilon(delta, mu_p, sigma_p, mu_q, sigma_q) -> float:
    """Upper bound on the smallest epsilon with delta(epsilon) <= ``delta``: a bracketed
    bisection (:mod:`dpaudit.core.roots`) whose returned point is one where
    :func:`unequal_gaussian_delta` (the upper bound) was evaluated and met ``delta`` (delta is
    non-increasing in epsilon). ``inf`` when no epsilon up to 1e300 suffices. At most ~1100 + 200
    evaluations."""
    delta = check_delta("delta", delta)
    m_p, s_p, m_q, s_q = _check(mu_p, sigma_p, mu_q, sigma_q)

    def ok(e: float) -> bool:
        return unequal_gaussian_delta(e, m_p, s_p, m_q, s_q) <= delta

    if ok(0.0):
        return 0.0
    br = bracket_up(ok, 0.0, 1.0, limit=1e300, max_steps=1100)  # doubling from 1
    if br is None:
        return math.inf
    return smallest_true(ok, br.lo, br.hi, midpoint="arithmetic", rtol=1e-15, max_iter=200)
