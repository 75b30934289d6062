"""The privacy profile of the Gaussian mechanism, solved once and certified.

Balle & Wang, "Improving the Gaussian mechanism for differential privacy: analytical calibration
and optimal denoising", ICML 2018, arXiv:1805.06530, Thm. 8 (= Dong, Roth, Su, "Gaussian
differential privacy", 2019, Cor. 2.13): the Gaussian mechanism with mean difference mu (in units
of the noise's standard deviation) has the exact curve

    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu).

Composing Gaussian mechanisms gives one Gaussian with mu^2 = sum_i count_i mu_i^2 (Dong, Roth, Su
2019, Cor. 3.3). Here mu^2 is always an EXACT rational (:class:`fractions.Fraction`): for one
mechanism (sensitivity/sigma)^2, for a composition the exact sum, counts above 1e308 included.

This is the one home of the curve (``dpaudit.accounting.conversions`` -- ``gaussian_delta``,
``gaussian_epsilon``, the GDP functions -- and the PLD accountant's exact Gaussian path call it):

* :func:`delta_bounds` -- ``(lower, upper)`` floats around delta(eps), each within about an ulp
  of the exact value (the upper end never 0: the exact value is positive);
* :func:`epsilon_bounds` -- ``(lower, upper)`` around the smallest eps >= 0 with delta(eps) <= delta:
  ``upper`` is the smallest float at which delta is CERTIFIED <= delta (an upper bound on epsilon),
  ``lower`` the largest float at which delta is certified > delta; the two are adjacent floats
  (or within a few ulps) of each other.

Evaluation: a double-precision bracket first (with u = eps/mu - mu/2 and R(x) = Phi(-x)/phi(x) the
Mills ratio, delta = Phi(-u) (1 - R(u + mu)/R(u)); the measured error bounds of scipy's erfc/erfcx
and every rounding accounted for; u, u + mu and mu enclosed in adjacent floats from the exact
rational mu^2 and eps). Where that bracket is wider than a few ulps (or, in a root search, does not
decide the comparison with the target) delta is evaluated in mpmath at a working precision raised
until the difference keeps 25 significant digits (at most 4,000 digits: a bounded run time), and
the float bracket is taken outside it. Every loop has an iteration bound.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction

import mpmath as mp
import numpy as np
from scipy import optimize, special

from dpaudit.core.numeric import TINY, next_down, next_up
from dpaudit.core.roots import bisect

__all__ = ["mu_squared", "delta_bounds", "delta_at_most", "epsilon_bounds", "log_delta_estimate"]

_EPS = float(np.finfo(float).eps)
_FMAX = sys.float_info.max


# ---------------------------------------------------------------------------------------------
# exact inputs
# ---------------------------------------------------------------------------------------------
def mu_squared(terms) -> Fraction:
    """sum count * (sensitivity / sigma)^2 over ``terms`` of (sensitivity, sigma, count), exactly
    (counts are integers, possibly above the float range; sensitivities and sigmas floats)."""
    total = Fraction(0)
    for sens, sigma, count in terms:
        total += int(count) * (Fraction(sens) / Fraction(sigma)) ** 2
    return total


def _sqrt_bracket(q: Fraction) -> tuple[float, float]:
    """Floats ``lo <= sqrt(q) <= hi`` (adjacent, or equal when sqrt(q) is a float) for an exact
    rational q >= 0; ``(float max, inf)`` beyond the float range."""
    if q <= 0:
        return 0.0, 0.0
    n, d = q.numerator, q.denominator
    k = max(0, (130 - (n.bit_length() - d.bit_length())) // 2)
    s = math.isqrt((n << (2 * k)) // d)  # floor(sqrt(q) 2^k): isqrt(floor(x)) = floor(sqrt(x))
    try:
        lo = float(Fraction(s, 1 << k))
    except OverflowError:
        return _FMAX, math.inf
    if lo == math.inf:
        return _FMAX, math.inf
    for _ in range(4):  # (s has 64+ bits: float() is within an ulp of sqrt(q))
        if Fraction(lo) ** 2 <= q:
            break
        lo = next_down(lo)
    for _ in range(4):
        up = next_up(lo)
        if up == math.inf or Fraction(up) ** 2 > q:
            break
        lo = up
    if Fraction(lo) ** 2 == q:
        return lo, lo
    return lo, next_up(lo)


def _inputs(mu2: Fraction, epsilon: float):
    """Outward floats ``(u_lo, u_hi, v_lo, v_hi, mu_lo, mu_hi)`` around the exact u = eps/mu - mu/2
    = (eps - mu^2/2)/mu, v = u + mu = (eps + mu^2/2)/mu and mu = sqrt(mu^2) (exact rational
    arithmetic on the inputs: eps/mu and mu/2 nearly cancel when mu > 1e8, where double arithmetic
    would lose every digit of u)."""
    e = Fraction(epsilon)
    num_u = e - mu2 / 2
    num_v = e + mu2 / 2
    a, b = _sqrt_bracket(num_u * num_u / mu2)
    u_lo, u_hi = (a, b) if num_u >= 0 else (-b, -a)
    v_lo, v_hi = _sqrt_bracket(num_v * num_v / mu2)
    mu_lo, mu_hi = _sqrt_bracket(mu2)
    return u_lo, u_hi, v_lo, v_hi, mu_lo, mu_hi


# ---------------------------------------------------------------------------------------------
# double precision: a certified (possibly wide) bracket
# ---------------------------------------------------------------------------------------------
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_HALF_LOG_PI_2 = 0.5 * math.log(math.pi / 2.0)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG2 = math.log(2.0)
#: relative error bounds, in units of eps, of scipy's erfcx / erfc (scipy 1.17), measured against
#: 40-digit mpmath on 25,000+ points each over the whole double range (max found: 3.9, 3.9 (1 + 2x^2),
#: 1.8 (1 + 2x^2)) and multiplied by 4: erfcx(x) for x >= 0; erfcx(x) for x < 0 (per 1 + 2x^2);
#: erfc(x) for x >= 0 (per 1 + 2x^2). tests/test_trust_numerics_sweeps.py re-checks them.
_ERFCX_POS_ULPS = 16.0
_ERFCX_NEG_ULPS = 16.0
_ERFC_POS_ULPS = 8.0
_LOG_TINY = math.log(TINY)
def _log_phi_tail(u: float) -> tuple[float, float]:
    """``(log Phi(-u), err)``: the upper tail of the standard normal at u, with a bound on the
    absolute error of the computed logarithm (for the exact double ``u``).

    u >= 0: ``log(erfcx(u/sqrt2)/2) - u^2/2``; u < 0: ``log1p(-erfc(|u|/sqrt2)/2)``.
    """
    if u >= 0.0:
        if u > 1e150:  # log Phi(-u) < -5e299
            return -math.inf, 0.0
        e = float(special.erfcx(u * _INV_SQRT2))
        half_u2 = 0.5 * u * u
        val = math.log(e) - _LOG2 - half_u2
        # erfcx's own error, the argument's rounding (|d log erfcx / d log z| <= 1 for z >= 0),
        # the rounding of u*u, of the logarithm and of the two subtractions
        err = _EPS * (_ERFCX_POS_ULPS + 4.0 + abs(math.log(e)) + 2.0 * half_u2 + 2.0 * abs(val))
        return val, err
    w = -u
    if w > 40.0:  # erfc(w/sqrt2) < 1e-349: log Phi(-u) in (-1e-349, 0]
        return 0.0, 1e-300
    p = 0.5 * float(special.erfc(w * _INV_SQRT2))  # Phi(u) <= 1/2
    # relative error of p: erfc's own, plus the argument rounding amplified by
    # |d log erfc / d log z| <= 1 + 2 z^2 (z = w/sqrt2)
    rel_p = _EPS * (_ERFC_POS_ULPS * (1.0 + w * w) + 4.0 * (1.0 + w * w))
    val = math.log1p(-p)
    err = 2.0 * p * rel_p + 2.0 * _EPS * abs(val) + 1e-320
    return val, err


def _log_mills(x: float) -> tuple[float, float]:
    """``(log R(x), err)`` with R(x) = Phi(-x)/phi(x) = sqrt(pi/2) erfcx(x/sqrt2) the Mills ratio."""
    if x >= 0.0:
        e = float(special.erfcx(x * _INV_SQRT2))
        val = math.log(e) + _HALF_LOG_PI_2
        return val, _EPS * (_ERFCX_POS_ULPS + 4.0 + 2.0 * abs(val))
    if x > -20.0:
        z = x * _INV_SQRT2
        e = float(special.erfcx(z))
        val = math.log(e) + _HALF_LOG_PI_2
        # own error and argument rounding (|d log erfcx / d log z| <= 1 + 2 z^2)
        return val, _EPS * ((_ERFCX_NEG_ULPS + 4.0) * (1.0 + 2.0 * z * z) + 2.0 * abs(val))
    # R(x) = Phi(-x) e^{x^2/2} sqrt(2 pi): no overflow of erfcx
    lp, errp = _log_phi_tail(x)
    half_x2 = 0.5 * x * x
    val = lp + half_x2 + _HALF_LOG_2PI
    return val, errp + _EPS * (2.0 * half_x2 + 2.0 * abs(val) + 2.0)


def _gauss_log_f_double(u: float, v: float):
    """Certified bracket ``(lo, hi, r)`` on log F(u, v), F(u, v) = phi(u) (R(u) - R(v))
    = Phi(-u) (1 - r), r = R(v)/R(u), for the exact doubles u < v, in double precision (r is
    the computed ratio). Returns None when r is within its error bound of 1."""
    lp, errp = _log_phi_tail(u)
    lp_hi = min(lp + errp, 0.0)
    lp_lo = lp - errp
    if lp_hi < _LOG_TINY - 10.0:
        return lp_lo, lp_hi, 0.0
    lru, eru = _log_mills(u)
    lrv, erv = _log_mills(v)
    if lru == math.inf:  # R(u) > e^{1e308}: r = 0 to double precision, log1p(-r) in (-1e-300, 0]
        return lp_lo - 1e-300, lp_hi, 0.0
    log_r = lrv - lru
    err_r = eru + erv + _EPS * abs(log_r)
    if not (math.isfinite(log_r) and math.isfinite(err_r)):
        return None
    r = math.exp(log_r) if log_r < 1.0 else math.inf
    if log_r + err_r < -745.0:  # r < 5e-324: log1p(-r) in (-1e-300, 0]
        return lp_lo - 1e-300, lp_hi, r
    if log_r + err_r >= 0.0:
        return None
    r_lo = math.exp(log_r - err_r) * (1.0 - 2.0 * _EPS)
    r_hi = math.exp(log_r + err_r) * (1.0 + 2.0 * _EPS)
    if not r_hi < 1.0:
        return None
    l1_hi = math.log1p(-r_lo)
    l1_hi = l1_hi + 2.0 * _EPS * abs(l1_hi)
    l1_lo = math.log1p(-r_hi)
    l1_lo = l1_lo - 2.0 * _EPS * abs(l1_lo)
    hi = lp_hi + l1_hi
    lo = lp_lo + l1_lo
    return lo - 2.0 * _EPS * abs(lo), hi + 2.0 * _EPS * abs(hi), r


def _log_k_asymptotic(x: float):
    """Certified bracket on log K(x) for x >= 10 from the asymptotic series
    K(x) = sum_k (-1)^k (2k+1)!! / x^(2k+2): K(x) = int_0^inf t e^{-t^2/2} e^{-xt} dt and the
    Taylor remainders of e^{-t^2/2} alternate in sign with magnitude below the next term, so
    consecutive partial sums bracket K(x) (Watson's lemma with an exact remainder bound).
    Returns None if the terms do not get small enough (x too small)."""
    inv = 1.0 / (x * x)
    term = inv
    total = 0.0
    sign = 1.0
    for k in range(400):
        total += sign * term
        nxt = term * (2 * k + 3) * inv
        if nxt < 1e-18 * total:
            # exact K lies between total and total - sign * nxt; floating error of the sum of
            # k+1 alternating terms with decreasing magnitudes (each <= inv): (k + 4) eps inv
            err = nxt + (k + 4.0) * 2.0 * _EPS * inv
            lo, hi = total - err, total + err
            if not lo > 0.0:
                return None
            log_lo, log_hi = math.log(lo), math.log(hi)
            return log_lo - 2.0 * _EPS * abs(log_lo), log_hi + 2.0 * _EPS * abs(log_hi)
        if nxt >= term:
            return None
        term = nxt
        sign = -sign
    return None


def _log_k_bracket(x: float) -> tuple[float, float]:
    """Certified bracket on log K(x), K(x) = 1 - x R(x) = -R'(x) > 0 (decreasing in x)."""
    if x == 0.0:
        return 0.0, 0.0
    if x >= 10.0:
        res = _log_k_asymptotic(x)
        if res is not None:
            return res
    lr, er = _log_mills(x)
    t = math.log(abs(x)) + lr  # log |x R(x)|
    et = er + _EPS * (2.0 + 2.0 * abs(t))
    if x < 0.0:  # K = 1 + |x| R(x): no cancellation
        val = float(np.logaddexp(0.0, t))
        e = et + _EPS * (4.0 + 2.0 * abs(val))
        return val - e, val + e
    if t + et >= 0.0:  # x R(x) within its error of 1: no bracket
        return -math.inf, 0.0
    y_lo = math.exp(t - et) * (1.0 - 2.0 * _EPS)
    y_hi = math.exp(t + et) * (1.0 + 2.0 * _EPS)
    if not y_hi < 1.0:
        return -math.inf, math.log1p(-y_lo) * (1.0 - 2.0 * _EPS)
    hi = math.log1p(-y_lo)
    lo = math.log1p(-y_hi)
    return lo - 2.0 * _EPS * abs(lo), hi + 2.0 * _EPS * abs(hi)


def _log_npdf_bracket(u: float) -> tuple[float, float]:
    """Certified bracket on log phi(u) = -u^2/2 - log(2 pi)/2."""
    val = -0.5 * u * u - _HALF_LOG_2PI
    e = _EPS * (4.0 + 3.0 * abs(val))
    return val - e, val + e


def _double_log_bracket(mu2: Fraction, epsilon: float) -> tuple[float, float]:
    """``(lower, upper)``: certified bounds on log delta(eps) from double-precision arithmetic
    (possibly wide, at worst ``(-inf, 0)``; in log space, so that deltas far below the float range
    are still compared precisely).

    delta = Phi(-u) - e^eps Phi(-(u + mu)) = phi(u) (R(u) - R(u + mu))
          = int_0^inf phi(u + t) (1 - e^{-mu t}) dt

    increases in mu at fixed u and decreases in u at fixed mu (and, as F(u, v) = phi(u) (R(u) -
    R(v)), decreases in u and increases in v): inputs rounded outwards only raise it, inwards only
    lower it. Two evaluations with certified error brackets:

    * direct: log Phi(-u) + log1p(-R(v)/R(u)) at (u_lo, v_hi), its lower end at (u_hi, v_lo);
    * small mu: K = -R' = 1 - x R(x) is positive and decreasing, so
      mu phi(u) K(u + mu) <= delta <= mu phi(u) K(u).
    """
    u_lo, u_hi, v_lo, v_hi, mu_lo, mu_hi = _inputs(mu2, epsilon)
    if mu_hi == math.inf:  # mu > 1.7e308: delta = 1 - (far below one ulp)
        return math.log(next_down(1.0)), 0.0
    lp_hi = sum(_log_phi_tail(u_lo))
    if lp_hi < _LOG_TINY:  # delta <= Phi(-u) < 5e-324
        return -math.inf, min(lp_hi, 0.0)
    best_hi, best_lo = 0.0, -math.inf
    res = _gauss_log_f_double(u_lo, v_hi)
    if res is not None:
        best_hi = min(best_hi, res[1])
    if v_lo > u_hi:
        res = _gauss_log_f_double(u_hi, v_lo)
        if res is not None:
            best_lo = max(best_lo, res[0])
    if mu_lo > 0.0 and mu_hi * (2.0 + abs(u_lo)) < 1e-3:
        k_lo, k_hi = _log_k_bracket(u_lo)
        p_lo, p_hi = _log_npdf_bracket(u_lo)
        hi_b = math.log(mu_hi) + p_hi + k_hi
        best_hi = min(best_hi, hi_b + 2.0 * _EPS * (abs(hi_b) + abs(math.log(mu_hi))))
        x = next_up(u_hi + mu_hi)
        k_lo, _ = _log_k_bracket(x)
        p_lo, _ = _log_npdf_bracket(u_hi)
        lo_b = math.log(mu_lo) + p_lo + k_lo
        best_lo = max(best_lo, lo_b - 2.0 * _EPS * (abs(lo_b) + abs(math.log(mu_lo))))
    return best_lo, best_hi


def _double_bracket(mu2: Fraction, epsilon: float) -> tuple[float, float]:
    """:func:`_double_log_bracket` as float bounds on delta (the upper one at least TINY)."""
    log_lo, log_hi = _double_log_bracket(mu2, epsilon)
    lower = max(next_down(next_down(math.exp(log_lo))), 0.0)
    if log_hi < _LOG_TINY:
        return lower, TINY
    return lower, min(1.0, max(next_up(next_up(math.exp(log_hi))), TINY))


# ---------------------------------------------------------------------------------------------
# mpmath: 25 significant digits
# ---------------------------------------------------------------------------------------------
_DPS = 30
_MAX_DPS = 4000
#: relative margin around the mpmath value (it keeps 25+ significant digits)
_MP_MARGIN = mp.mpf(10) ** -22


def _delta_mp(mu2: Fraction, epsilon: float) -> mp.mpf:
    """delta(eps) at a precision keeping >= 25 significant digits after the subtraction.

    With a = mu/2 - eps/mu (computed with 2 log10(mu) extra digits: it is a small difference of
    large numbers when eps ~ mu^2/2), delta = Phi(a) - e^eps Phi(a - mu) and
    e^eps Phi(a - mu) = phi(a) M(mu - a), M(x) = Phi(-x)/phi(x) the Mills ratio; for mu > 1e100
    M(x) = 1/x (1 + O(x^-2)) is used (mpmath's erfc does not reach such arguments). Outside
    |a| <= 1e4, Phi(a) is 1 or 0 to far below any float (e^{-5e7}). The working precision is
    raised (at most to 4,000 digits) until the cancellation leaves 25 digits."""
    with mp.workdps(20):
        m2 = mp.mpf(mu2.numerator) / mu2.denominator
        big = m2 > mp.mpf(10) ** 200
        extra = int(max(0.0, float(mp.log10(m2)))) + 10 if m2 > 1 else 0
    dps = _DPS + extra
    while True:
        with mp.workdps(dps):
            mu = mp.sqrt(mp.mpf(mu2.numerator) / mu2.denominator)
            e = mp.mpf(epsilon)
            a = mu / 2 - e / mu
            if a < -10000:
                return mp.mpf(0)
            t1 = mp.mpf(1) if a > 10000 else mp.ncdf(a)
            if big:
                t2 = mp.npdf(a) / (mu - a)
            else:
                t2 = mp.exp(e) * mp.ncdf(a - mu)
            diff = t1 - t2
            if t1 == 0:
                return mp.mpf(0)
            if diff > 0:
                lost = float(mp.log10(t1 / diff))
                if lost < dps - extra - 25 or dps >= _MAX_DPS:
                    return +diff
                dps = min(int(lost) + extra + 40, _MAX_DPS)
            else:
                if dps >= _MAX_DPS:
                    return mp.mpf(0)
                dps = min(dps * 4, _MAX_DPS)


def _mp_bracket(mu2: Fraction, epsilon: float) -> tuple[float, float]:
    """``(lower, upper)`` floats outside the mpmath value widened by 1e-22 relative."""
    val = _delta_mp(mu2, epsilon)
    if val == 0:  # below e^{-5e7}, or no digit left at 4,000 digits: only the trivial bounds
        return 0.0, TINY
    with mp.workdps(40):
        vlo, vhi = val * (1 - _MP_MARGIN), val * (1 + _MP_MARGIN)
        lo, hi = float(vlo), float(vhi)
        for _ in range(4):  # float() rounds to nearest: one step each way is enough
            if mp.mpf(lo) <= vlo:
                break
            lo = next_down(lo)
        for _ in range(4):
            if mp.mpf(hi) >= vhi:
                break
            hi = next_up(hi)
    return max(lo, 0.0), min(max(hi, TINY), 1.0)


# ---------------------------------------------------------------------------------------------
# public: delta, comparisons, epsilon
# ---------------------------------------------------------------------------------------------
def delta_bounds(mu2: Fraction, epsilon: float) -> tuple[float, float]:
    """``(lower, upper)`` certified bounds on delta(eps) of the Gaussian with exact mean
    difference^2 ``mu2``, each within about an ulp of the exact value (``upper`` > 0 and <= 1)."""
    if mu2 == 0:
        return 0.0, 0.0
    lo, hi = _double_bracket(mu2, epsilon)
    if hi <= TINY or hi - lo <= 4.0 * math.ulp(hi):
        return lo, hi
    m_lo, m_hi = _mp_bracket(mu2, epsilon)
    return max(lo, m_lo), min(hi, m_hi)


def _log_target(delta: float) -> tuple[float, float]:
    """Floats below and above log(delta) (math.log errs by less than an ulp)."""
    t = math.log(delta)
    return next_down(next_down(t)), next_up(next_up(t))


def _mp_value(mu2: Fraction, epsilon: float):
    """The mpmath value of delta(eps) widened by its relative margin, as (below, above); None when
    no digit of it is known (0 from :func:`_delta_mp`)."""
    val = _delta_mp(mu2, epsilon)
    if val == 0:
        return None
    with mp.workdps(40):
        return val * (1 - _MP_MARGIN), val * (1 + _MP_MARGIN)


def delta_at_most(mu2: Fraction, epsilon: float, delta: float) -> bool:
    """True only when delta(eps) <= ``delta`` is certified (double-precision log bracket, then
    mpmath compared with ``delta`` exactly)."""
    if mu2 == 0:
        return True
    log_lo, log_hi = _double_log_bracket(mu2, epsilon)
    t_lo, t_hi = _log_target(delta)
    if log_hi <= t_lo:
        return True
    if log_lo > t_hi:
        return False
    val = _mp_value(mu2, epsilon)
    return val is not None and val[1] <= delta  # (no digit known: not certified)


def _delta_above(mu2: Fraction, epsilon: float, delta: float) -> bool:
    """True only when delta(eps) > ``delta`` is certified."""
    log_lo, log_hi = _double_log_bracket(mu2, epsilon)
    t_lo, t_hi = _log_target(delta)
    if log_lo > t_hi:
        return True
    if log_hi <= t_lo:
        return False
    val = _mp_value(mu2, epsilon)
    return val is not None and val[0] > delta


def _widen(pred, e0: float, bound: float, up: bool) -> float | None:
    """The first of e0 +- e0 2^-36 64^k (k < 12) strictly inside (e0, bound) / (bound, e0) at which
    ``pred`` holds, or None."""
    w = max(e0 * 2.0**-36, 1e-300)
    for _ in range(12):
        cand = e0 + w if up else e0 - w
        if (up and cand >= bound) or (not up and cand <= bound):
            return None
        if pred(cand):
            return cand
        w *= 64.0
    return None


def epsilon_bounds(mu2: Fraction, delta: float) -> tuple[float, float]:
    """``(lower, upper)`` around the smallest eps >= 0 with delta(eps) <= ``delta`` (0 < delta < 1).

    ``upper``: the smallest float (to one ulp) at which delta(eps) <= delta is certified -- an upper
    bound on epsilon, always a point where the bound was evaluated and met the target; ``inf`` when
    no finite float qualifies. ``lower``: the largest float at which delta(eps) > delta is certified
    (0 when delta(0) <= delta may hold). An approximate root (Brent's method on
    :func:`log_delta_estimate`) seeds a narrow bracket, which is then bisected on the float grid
    (:func:`dpaudit.core.roots.bisect`); every loop has a fixed iteration bound.
    """
    if mu2 == 0:
        return 0.0, 0.0
    if mu2 > 4 * Fraction(_FMAX):  # eps >= mu^2/2 - 10 mu > float max
        return _FMAX, math.inf

    def ok(e: float) -> bool:
        return delta_at_most(mu2, e, delta)

    if ok(0.0):
        return 0.0, 0.0
    mu_hi = _sqrt_bracket(mu2)[1]
    # analytic feasible point: delta(eps) <= Phi(mu/2 - eps/mu) <= e^{-z^2/2}/2 <= delta for
    # eps = mu (mu/2 + z), z = sqrt(2 log(1/(2 delta))) (z = 0 when delta >= 1/2)
    z = math.sqrt(2.0 * max(0.0, -math.log(2.0 * delta)))
    with np.errstate(over="ignore"):
        hi = float(np.float64(mu_hi) * (0.5 * mu_hi + z + 1e-3)) * (1.0 + 1e-9) + 1e-300
    for _ in range(8):
        if math.isfinite(hi) and ok(hi):
            break
        hi = hi * 2.0
    else:
        hi = math.inf
    if not math.isfinite(hi):
        hi = _FMAX
        if not ok(hi):
            return (_FMAX if _delta_above(mu2, _FMAX, delta) else 0.0), math.inf
    lo = 0.0
    log_delta = math.log(delta)

    def g(e: float) -> float:
        return log_delta_estimate(mu_hi, e) - log_delta

    e0 = None
    try:
        if g(0.0) > 0.0 > g(hi):
            e0 = optimize.brentq(g, 0.0, hi, xtol=1e-300, rtol=1e-13, maxiter=200)
    except (ValueError, RuntimeError, OverflowError, ZeroDivisionError):
        e0 = None
    if e0 is not None and 0.0 < e0 < hi:
        cand = _widen(ok, e0, hi, up=True)
        if cand is not None:
            hi = cand
        cand = _widen(lambda e: not ok(e), e0, lo, up=False)
        if cand is not None:
            lo = cand
    lo, hi = bisect(ok, lo, hi, max_iter=80)
    # lower end: the largest float with delta certified above the target, below the upper end

    def above(e: float) -> bool:
        return _delta_above(mu2, e, delta)

    if not above(lo):
        cand = _widen(above, lo, 0.0, up=False) if lo > 0.0 else None
        if cand is None:
            if not above(0.0):
                return 0.0, hi
            cand = 0.0
        lo = cand
    low, _ = bisect(lambda e: not above(e), lo, hi, max_iter=80)
    return low, hi


def log_delta_estimate(mu: float, epsilon: float) -> float:
    """A fast approximation of log delta(epsilon) for a float mu (NO certificate: an estimate,
    used only to seed the bracketed root searches).

    Direct form ``log Phi(-u) + log1p(-R(u + mu)/R(u))`` unless the ratio is within 1e-7 of 1
    (mu small against max(1, u)); there the midpoint rule on R(u) - R(u + mu) = int K gives
    ``log(mu phi(u) K(u + mu/2))``.
    """
    with np.errstate(over="ignore"):
        u = epsilon / mu - 0.5 * mu
    if not math.isfinite(u):
        return -math.inf
    v = u + mu
    lp, _ = _log_phi_tail(u)
    if lp < _LOG_TINY - 200.0:
        return lp
    lru, _ = _log_mills(u)
    lrv, _ = _log_mills(v)
    log_r = lrv - lru
    if log_r < -1e-7:
        return lp + math.log1p(-math.exp(log_r))
    m = u + 0.5 * mu
    if m > 1e3:
        k = (1.0 - 3.0 / (m * m) + 15.0 / m**4) / (m * m)
    else:
        k = 1.0 - m * math.exp(_log_mills(m)[0])
    if not k > 0.0:
        return lp + math.log1p(-math.exp(min(log_r, -1e-300)))
    return -0.5 * u * u - _HALF_LOG_2PI + math.log(mu) + math.log(k)
