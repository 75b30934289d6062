"""The privacy profile of the Gaussian mechanism, solved once and certified.

Balle & Wang, "Improving the Gaussian mechanism for differential privacy: analytical calibration
and optimal denoising", ICML 2018, arXiv:1805.06530, Thm. 8 (= Dong, Roth, Su, "Gaussian
differential privacy", 2019, Cor. 2.13): the Gaussian mechanism with mean difference mu (in units
of the noise's standard deviation) has the exact curve

    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu).

Composing Gaussian mechanisms gives one Gaussian with mu^2 = sum_i count_i mu_i^2 (Dong, Roth, Su
2019, Cor. 3.3). Here mu^2 is always an EXACT rational (:class:`fractions.Fraction`): for one
mechanism (sensitivity/sigma)^2, for a composition the exact sum, counts above 1e308 included.

This is the one home of the certified profile and its roots (``dpaudit.accounting.conversions`` --
``gaussian_delta``, ``gaussian_epsilon``, the GDP functions -- and the PLD accountant's exact
Gaussian path call it); the curve itself and its double-precision error bounds live in
:mod:`dpaudit.core.special`, shared with the PLD discretisation of the Gaussian pair:

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
from scipy import optimize

from dpaudit.core import special as special_fns
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
# double precision: a certified (possibly wide) bracket (dpaudit.core.special)
# ---------------------------------------------------------------------------------------------
#: (the error bounds of scipy's erfcx / erfc, kept under their former names)
_ERFCX_POS_ULPS = special_fns.ERFCX_POS_ULPS
_ERFCX_NEG_ULPS = special_fns.ERFCX_NEG_ULPS
_ERFC_POS_ULPS = special_fns.ERFC_POS_ULPS
_LOG_TINY = math.log(TINY)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _double_log_bracket(mu2: Fraction, epsilon: float) -> tuple[float, float]:
    """``(lower, upper)``: certified bounds on log delta(eps) from double-precision arithmetic
    (possibly wide, at worst ``(-inf, 0)``): :func:`dpaudit.core.special.gaussian_log_delta_bracket`
    at the outward enclosures of u, v = u + mu and mu formed from the exact rational mu^2."""
    u_lo, u_hi, v_lo, v_hi, mu_lo, mu_hi = _inputs(mu2, epsilon)
    lo, hi = special_fns.gaussian_log_delta_bracket(u_lo, u_hi, v_lo, v_hi, mu_lo, mu_hi)
    return float(lo), float(hi)


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
    lp = float(special_fns.log_phi_tail(float(u))[0])
    if lp < _LOG_TINY - 200.0:
        return lp
    lru = float(special_fns.log_mills(float(u))[0])
    lrv = float(special_fns.log_mills(float(v))[0])
    log_r = lrv - lru
    if log_r < -1e-7:
        return lp + math.log1p(-math.exp(log_r))
    m = u + 0.5 * mu
    if m > 1e3:
        k = (1.0 - 3.0 / (m * m) + 15.0 / m**4) / (m * m)
    else:
        k = 1.0 - m * math.exp(float(special_fns.log_mills(float(m))[0]))
    if not k > 0.0:
        return lp + math.log1p(-math.exp(min(log_r, -1e-300)))
    return -0.5 * u * u - _HALF_LOG_2PI + math.log(mu) + math.log(k)
