"""The Gaussian hockey-stick curve and the normal-tail functions it rests on, with error bounds.

One home for the privacy curve of the Gaussian mechanism (Balle & Wang, "Improving the Gaussian
mechanism for differential privacy", ICML 2018, Thm. 8; Dong, Roth, Su, "Gaussian differential
privacy", 2019, Cor. 2.13): with mean difference mu (in units of the noise's standard deviation),

    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)
               = phi(u) (R(u) - R(v)),     u = eps/mu - mu/2,  v = u + mu,                 (1)

R(x) = Phi(-x)/phi(x) the Mills ratio. Everything here is vectorised (numpy arrays in, arrays
out) and returns error bounds for directed use (upper bounds add them, lower bounds subtract):

* :func:`log_phi_tail` and :func:`log_mills`: log Phi(-u) and log R(x) with absolute error bounds
  of the computed logarithms (log space: no underflow at any argument);
* :func:`gaussian_log_delta_bracket`: certified bounds on log delta for input *intervals*
  [u_lo, u_hi], [v_lo, v_hi], [mu_lo, mu_hi] (delta decreases in u and increases in v, so the
  corners bound it); the double-precision stage of :mod:`dpaudit.accounting.gaussian_profile`
  (which encloses u, v, mu from an exact rational mu^2 and falls back to mpmath);
* :func:`gaussian_delta`: (1) for a float mu at float eps, ``(value, absolute error bound)``:
  the closed-form evaluation used to discretise the Gaussian pair
  (:class:`dpaudit.mechanisms.loss_pairs.GaussianPair`) intersected with the certified log-space
  bracket of the same point (both are valid, so their intersection is; it is never wider than
  either).

Error model: scipy's erfcx / erfc carry relative errors measured against 40-digit mpmath over the
whole double range (``tests/numerics/test_sweeps.py`` re-checks the constants below); every
other operation is charged a few units of roundoff; the argument's own rounding enters through the
logarithmic derivative of the function.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

__all__ = [
    "ERFCX_POS_ULPS",
    "ERFCX_NEG_ULPS",
    "ERFC_POS_ULPS",
    "log_phi_tail",
    "log_mills",
    "log_k_bracket",
    "log_npdf_bracket",
    "gaussian_log_f",
    "gaussian_log_delta_bracket",
    "gaussian_delta",
]

_EPS = float(np.finfo(float).eps)
#: relative error bounds, in units of eps, of scipy's erfcx / erfc (scipy 1.17), measured against
#: 40-digit mpmath on 25,000+ points each over the whole double range (max found: 3.9, 3.9 (1 + 2x^2),
#: 1.8 (1 + 2x^2)) and multiplied by 4: erfcx(x) for x >= 0; erfcx(x) for x < 0 (per 1 + 2x^2);
#: erfc(x) for x >= 0 (per 1 + 2x^2).
ERFCX_POS_ULPS = 16.0
ERFCX_NEG_ULPS = 16.0
ERFC_POS_ULPS = 8.0
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_HALF_LOG_PI_2 = 0.5 * math.log(math.pi / 2.0)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG2 = math.log(2.0)
_LOG_TINY = math.log(math.ulp(0.0))


def _arr(x) -> np.ndarray:
    return np.atleast_1d(np.asarray(x, dtype=float))


def log_phi_tail(u) -> tuple[Any, Any]:
    """``(log Phi(-u), err)``: the upper tail of the standard normal at u, with a bound on the
    absolute error of the computed logarithm (for the exact double u).

    u >= 0: ``log(erfcx(u/sqrt2)/2) - u^2/2``; u < 0: ``log1p(-erfc(|u|/sqrt2)/2)``.
    """
    if isinstance(u, float):
        return _log_phi_tail_1(u)
    u = _arr(u)
    val = np.empty(u.shape)
    err = np.empty(u.shape)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        pos = u >= 0.0
        huge = pos & (u > 1e150)  # log Phi(-u) < -5e299
        mid = pos & ~huge
        if np.any(mid):
            up = u[mid]
            e = special.erfcx(up * _INV_SQRT2)
            half_u2 = 0.5 * up * up
            le = np.log(e)
            v = le - _LOG2 - half_u2
            # erfcx's own error, the argument's rounding (|d log erfcx / d log z| <= 1 for z >= 0),
            # the rounding of u*u, of the logarithm and of the two subtractions
            val[mid] = v
            err[mid] = _EPS * (ERFCX_POS_ULPS + 4.0 + np.abs(le) + 2.0 * half_u2 + 2.0 * np.abs(v))
        val[huge], err[huge] = -np.inf, 0.0
        neg = ~pos
        # Phi(-w) < 5e-308 from w = 37.5 on (scipy's erfc turns subnormal or 0 past w = 37.55):
        # log Phi(-u) in (-1e-300, 0]
        far = neg & (u < -37.5)
        near = neg & ~far
        if np.any(near):
            w = -u[near]
            p = 0.5 * special.erfc(w * _INV_SQRT2)  # Phi(u) <= 1/2
            # relative error of p: erfc's own, plus the argument rounding amplified by
            # |d log erfc / d log z| <= 1 + 2 z^2 (z = w/sqrt2)
            rel_p = _EPS * (ERFC_POS_ULPS * (1.0 + w * w) + 4.0 * (1.0 + w * w))
            # (log1p(-p) = -p (1 + p/2 + ...): -p itself below 1e-15, where numpy's log1p may
            # flush a subnormal p to zero)
            v = np.where(p < 1e-15, -p, np.log1p(-p))
            val[near] = v
            err[near] = 2.0 * p * rel_p + 2.0 * _EPS * np.abs(v) + 1e-320
        val[far], err[far] = 0.0, 1e-300
    return val, err


def log_mills(x) -> tuple[Any, Any]:
    """``(log R(x), err)`` with R(x) = Phi(-x)/phi(x) = sqrt(pi/2) erfcx(x/sqrt2) the Mills ratio."""
    if isinstance(x, float):
        return _log_mills_1(x)
    x = _arr(x)
    val = np.empty(x.shape)
    err = np.empty(x.shape)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        pos = x >= 0.0
        if np.any(pos):
            v = np.log(special.erfcx(x[pos] * _INV_SQRT2)) + _HALF_LOG_PI_2
            val[pos], err[pos] = v, _EPS * (ERFCX_POS_ULPS + 4.0 + 2.0 * np.abs(v))
        mid = (~pos) & (x > -20.0)
        if np.any(mid):
            z = x[mid] * _INV_SQRT2
            v = np.log(special.erfcx(z)) + _HALF_LOG_PI_2
            # own error and argument rounding (|d log erfcx / d log z| <= 1 + 2 z^2)
            val[mid] = v
            err[mid] = _EPS * ((ERFCX_NEG_ULPS + 4.0) * (1.0 + 2.0 * z * z) + 2.0 * np.abs(v))
        low = (~pos) & ~(x > -20.0)
        if np.any(low):
            # R(x) = Phi(-x) e^{x^2/2} sqrt(2 pi): no overflow of erfcx
            xl = x[low]
            lp, errp = log_phi_tail(xl)
            half_x2 = 0.5 * xl * xl
            v = lp + half_x2 + _HALF_LOG_2PI
            val[low], err[low] = v, errp + _EPS * (2.0 * half_x2 + 2.0 * np.abs(v) + 2.0)
    return val, err


def _log_k_asymptotic(x: np.ndarray):
    """Certified bracket on log K(x) for x >= 10 from the asymptotic series
    K(x) = sum_k (-1)^k (2k+1)!! / x^(2k+2): K(x) = int_0^inf t e^{-t^2/2} e^{-xt} dt and the
    Taylor remainders of e^{-t^2/2} alternate in sign with magnitude below the next term, so
    consecutive partial sums bracket K(x) (Watson's lemma with an exact remainder bound).
    Returns (lo, hi, ok): ok False where the terms do not get small enough (x too small)."""
    inv = 1.0 / (x * x)
    term = inv.copy()
    total = np.zeros(x.shape)
    sign = 1.0
    lo = np.full(x.shape, -np.inf)
    hi = np.zeros(x.shape)
    done = np.zeros(x.shape, dtype=bool)
    failed = np.zeros(x.shape, dtype=bool)
    for k in range(400):
        act = ~(done | failed)
        if not np.any(act):
            break
        total = np.where(act, total + sign * term, total)
        nxt = term * (2 * k + 3) * inv
        fin = act & (nxt < 1e-18 * total)
        if np.any(fin):
            # exact K lies between total and total - sign * nxt; floating error of the sum of
            # k+1 alternating terms with decreasing magnitudes (each <= inv): (k + 4) eps inv
            e = nxt[fin] + (k + 4.0) * 2.0 * _EPS * inv[fin]
            t_lo, t_hi = total[fin] - e, total[fin] + e
            good = t_lo > 0.0
            with np.errstate(divide="ignore", invalid="ignore"):
                l_lo = np.log(np.where(good, t_lo, 1.0))
                l_hi = np.log(t_hi)
            idx = np.nonzero(fin)[0]
            lo[idx] = np.where(good, l_lo - 2.0 * _EPS * np.abs(l_lo), -np.inf)
            hi[idx] = np.where(good, l_hi + 2.0 * _EPS * np.abs(l_hi), 0.0)
            failed[idx[~good]] = True
            done[idx[good]] = True
        failed |= act & ~fin & (nxt >= term)
        term = np.where(act & ~fin, nxt, term)
        sign = -sign
    ok = done & ~failed
    return lo, hi, ok


def log_k_bracket(x) -> tuple[np.ndarray, np.ndarray]:
    """Certified bracket on log K(x), K(x) = 1 - x R(x) = -R'(x) > 0 (decreasing in x)."""
    x = _arr(x)
    lo = np.full(x.shape, -np.inf)
    hi = np.zeros(x.shape)
    zero = x == 0.0
    lo[zero], hi[zero] = 0.0, 0.0
    todo = ~zero
    big = todo & (x >= 10.0)
    if np.any(big):
        a_lo, a_hi, ok = _log_k_asymptotic(x[big])
        idx = np.nonzero(big)[0]
        lo[idx[ok]], hi[idx[ok]] = a_lo[ok], a_hi[ok]
        todo[idx[ok]] = False
    if np.any(todo):
        xs = x[todo]
        lr, er = log_mills(xs)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            t = np.log(np.abs(xs)) + lr  # log |x R(x)|
            et = er + _EPS * (2.0 + 2.0 * np.abs(t))
            # x < 0: K = 1 + |x| R(x), no cancellation
            val = np.logaddexp(0.0, t)
            e = et + _EPS * (4.0 + 2.0 * np.abs(val))
            n_lo, n_hi = val - e, val + e
            # x > 0: K = 1 - x R(x)
            y_lo = np.exp(t - et) * (1.0 - 2.0 * _EPS)
            y_hi = np.exp(t + et) * (1.0 + 2.0 * _EPS)
            p_hi = np.log1p(-np.minimum(y_lo, 1.0))
            p_lo = np.log1p(-np.minimum(y_hi, 1.0))
            p_lo2 = p_lo - 2.0 * _EPS * np.abs(p_lo)
            p_hi2 = p_hi + 2.0 * _EPS * np.abs(p_hi)
        neg = xs < 0.0
        no_bracket = (~neg) & (t + et >= 0.0)  # x R(x) within its error of 1
        only_hi = (~neg) & ~no_bracket & ~(y_hi < 1.0)
        r_lo = np.where(neg, n_lo, np.where(no_bracket | only_hi, -np.inf, p_lo2))
        r_hi = np.where(neg, n_hi, np.where(no_bracket, 0.0,
                                           np.where(only_hi, np.log1p(-np.minimum(y_lo, 1.0)) * (1.0 - 2.0 * _EPS),
                                                    p_hi2)))
        lo[todo], hi[todo] = r_lo, r_hi
    return lo, hi


def log_npdf_bracket(u) -> tuple[np.ndarray, np.ndarray]:
    """Certified bracket on log phi(u) = -u^2/2 - log(2 pi)/2."""
    u = _arr(u)
    val = -0.5 * u * u - _HALF_LOG_2PI
    e = _EPS * (4.0 + 3.0 * np.abs(val))
    return val - e, val + e


def gaussian_log_f(u, v) -> tuple[np.ndarray, np.ndarray]:
    """Certified bracket ``(lo, hi)`` on log F(u, v), F(u, v) = phi(u) (R(u) - R(v)) = Phi(-u)
    (1 - r), r = R(v)/R(u), for exact doubles u < v (double precision). Where r is within its
    error bound of 1 the bracket is the trivial ``(-inf, log Phi(-u) upper)``."""
    u, v = np.broadcast_arrays(_arr(u), _arr(v))
    lp, errp = log_phi_tail(u)
    lp_hi = np.minimum(lp + errp, 0.0)
    lp_lo = lp - errp
    lo = np.full(u.shape, -np.inf)
    hi = lp_hi.copy()
    tiny = lp_hi < _LOG_TINY - 10.0
    lo[tiny] = lp_lo[tiny]
    rest = ~tiny
    if not np.any(rest):
        return lo, hi
    lru, eru = log_mills(u[rest])
    lrv, erv = log_mills(v[rest])
    l_lo, l_hi = lp_lo[rest], lp_hi[rest]
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        log_r = lrv - lru
        err_r = eru + erv + _EPS * np.abs(log_r)
        r_inf = lru == np.inf  # R(u) > e^{1e308}: r = 0 to double precision
        finite = np.isfinite(log_r) & np.isfinite(err_r)
        negligible = finite & (log_r + err_r < -745.0)  # r < 5e-324: log1p(-r) in (-1e-300, 0]
        undecided = ~finite | (log_r + err_r >= 0.0)
        r_lo = np.exp(log_r - err_r) * (1.0 - 2.0 * _EPS)
        r_hi = np.exp(log_r + err_r) * (1.0 + 2.0 * _EPS)
        undecided |= ~(r_hi < 1.0)
        l1_hi = np.log1p(-np.minimum(r_lo, 1.0))
        l1_hi = l1_hi + 2.0 * _EPS * np.abs(l1_hi)
        l1_lo = np.log1p(-np.minimum(r_hi, 1.0))
        l1_lo = l1_lo - 2.0 * _EPS * np.abs(l1_lo)
        b_hi = l_hi + l1_hi
        b_lo = l_lo + l1_lo
        b_lo = b_lo - 2.0 * _EPS * np.abs(b_lo)
        b_hi = b_hi + 2.0 * _EPS * np.abs(b_hi)
    out_lo = np.where(r_inf | negligible, l_lo - 1e-300, np.where(undecided, -np.inf, b_lo))
    out_hi = np.where(r_inf | negligible, l_hi, np.where(undecided, l_hi, b_hi))
    lo[rest], hi[rest] = out_lo, out_hi
    return lo, hi


def gaussian_log_delta_bracket(u_lo, u_hi, v_lo, v_hi, mu_lo, mu_hi) -> tuple[Any, Any]:
    """``(lower, upper)``: certified bounds on log delta for u in [u_lo, u_hi], v = u + mu in
    [v_lo, v_hi], mu in [mu_lo, mu_hi] (doubles; possibly wide, at worst ``(-inf, 0)``; log space,
    so that deltas far below the float range are still compared precisely).

    delta = Phi(-u) - e^eps Phi(-(u + mu)) = phi(u) (R(u) - R(u + mu))
          = int_0^inf phi(u + t) (1 - e^{-mu t}) dt

    increases in mu at fixed u and decreases in u at fixed mu (and, as F(u, v) = phi(u) (R(u) -
    R(v)), decreases in u and increases in v): inputs rounded outwards only raise it, inwards only
    lower it. Two evaluations with certified error brackets:

    * direct: log Phi(-u) + log1p(-R(v)/R(u)) at (u_lo, v_hi), its lower end at (u_hi, v_lo);
    * small mu: K = -R' = 1 - x R(x) is positive and decreasing, so
      mu phi(u) K(u + mu) <= delta <= mu phi(u) K(u).

    Six floats give two floats (the scalar path); arrays give arrays.
    """
    if all(isinstance(t, float) for t in (u_lo, u_hi, v_lo, v_hi, mu_lo, mu_hi)):
        return _bracket_1(u_lo, u_hi, v_lo, v_hi, mu_lo, mu_hi)
    u_lo, u_hi, v_lo, v_hi, mu_lo, mu_hi = np.broadcast_arrays(
        _arr(u_lo), _arr(u_hi), _arr(v_lo), _arr(v_hi), _arr(mu_lo), _arr(mu_hi))
    best_hi = np.zeros(u_lo.shape)
    best_lo = np.full(u_lo.shape, -np.inf)
    huge = mu_hi == np.inf  # mu > 1.7e308: delta = 1 - (far below one ulp)
    lp_hi = log_phi_tail(u_lo)
    lp_hi = lp_hi[0] + lp_hi[1]
    below = ~huge & (lp_hi < _LOG_TINY)  # delta <= Phi(-u) < 5e-324
    best_hi[below] = np.minimum(lp_hi[below], 0.0)
    act = ~(huge | below)
    if np.any(act):
        _, hi1 = gaussian_log_f(u_lo[act], v_hi[act])
        best_hi[act] = np.minimum(best_hi[act], hi1)
        sel = act & (v_lo > u_hi)
        if np.any(sel):
            lo1, _ = gaussian_log_f(u_hi[sel], v_lo[sel])
            best_lo[sel] = np.maximum(best_lo[sel], lo1)
        small = act & (mu_lo > 0.0) & (mu_hi * (2.0 + np.abs(u_lo)) < 1e-3)
        if np.any(small):
            ul, uh, ml, mh = u_lo[small], u_hi[small], mu_lo[small], mu_hi[small]
            _, k_hi = log_k_bracket(ul)
            _, p_hi = log_npdf_bracket(ul)
            lm_hi = np.log(mh)
            hi_b = lm_hi + p_hi + k_hi
            best_hi[small] = np.minimum(best_hi[small], hi_b + 2.0 * _EPS * (np.abs(hi_b) + np.abs(lm_hi)))
            x = np.nextafter(uh + mh, np.inf)
            k_lo, _ = log_k_bracket(x)
            p_lo, _ = log_npdf_bracket(uh)
            lm_lo = np.log(ml)
            lo_b = lm_lo + p_lo + k_lo
            best_lo[small] = np.maximum(best_lo[small], lo_b - 2.0 * _EPS * (np.abs(lo_b) + np.abs(lm_lo)))
    best_lo[huge] = math.log(1.0 - _EPS / 2.0)
    best_hi[huge] = 0.0
    return best_lo, best_hi




# ------------------------------------------------------------------------------------------------
# the same functions for one float (no array overhead: the certified profile's root searches call
# them thousands of times); the public functions above dispatch here for float arguments and
# tests/core/test_special.py checks that both paths agree


def _log_phi_tail_1(u: float) -> tuple[float, float]:
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
        err = _EPS * (ERFCX_POS_ULPS + 4.0 + abs(math.log(e)) + 2.0 * half_u2 + 2.0 * abs(val))
        return val, err
    w = -u
    if w > 37.5:  # Phi(-w) < 5e-308 (erfc subnormal or 0 past 37.55): log Phi(-u) in (-1e-300, 0]
        return 0.0, 1e-300
    p = 0.5 * float(special.erfc(w * _INV_SQRT2))  # Phi(u) <= 1/2
    # relative error of p: erfc's own, plus the argument rounding amplified by
    # |d log erfc / d log z| <= 1 + 2 z^2 (z = w/sqrt2)
    rel_p = _EPS * (ERFC_POS_ULPS * (1.0 + w * w) + 4.0 * (1.0 + w * w))
    val = math.log1p(-p)
    err = 2.0 * p * rel_p + 2.0 * _EPS * abs(val) + 1e-320
    return val, err


def _log_mills_1(x: float) -> tuple[float, float]:
    """``(log R(x), err)`` with R(x) = Phi(-x)/phi(x) = sqrt(pi/2) erfcx(x/sqrt2) the Mills ratio."""
    if x >= 0.0:
        e = float(special.erfcx(x * _INV_SQRT2))
        val = math.log(e) + _HALF_LOG_PI_2
        return val, _EPS * (ERFCX_POS_ULPS + 4.0 + 2.0 * abs(val))
    if x > -20.0:
        z = x * _INV_SQRT2
        e = float(special.erfcx(z))
        val = math.log(e) + _HALF_LOG_PI_2
        # own error and argument rounding (|d log erfcx / d log z| <= 1 + 2 z^2)
        return val, _EPS * ((ERFCX_NEG_ULPS + 4.0) * (1.0 + 2.0 * z * z) + 2.0 * abs(val))
    # R(x) = Phi(-x) e^{x^2/2} sqrt(2 pi): no overflow of erfcx
    lp, errp = _log_phi_tail_1(x)
    half_x2 = 0.5 * x * x
    val = lp + half_x2 + _HALF_LOG_2PI
    return val, errp + _EPS * (2.0 * half_x2 + 2.0 * abs(val) + 2.0)


def _gauss_log_f_1(u: float, v: float):
    """Certified bracket ``(lo, hi, r)`` on log F(u, v), F(u, v) = phi(u) (R(u) - R(v))
    = Phi(-u) (1 - r), r = R(v)/R(u), for the exact doubles u < v, in double precision (r is
    the computed ratio). Returns None when r is within its error bound of 1."""
    lp, errp = _log_phi_tail_1(u)
    lp_hi = min(lp + errp, 0.0)
    lp_lo = lp - errp
    if lp_hi < _LOG_TINY - 10.0:
        return lp_lo, lp_hi, 0.0
    lru, eru = _log_mills_1(u)
    lrv, erv = _log_mills_1(v)
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


def _log_k_asymptotic_1(x: float):
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


def _log_k_bracket_1(x: float) -> tuple[float, float]:
    """Certified bracket on log K(x), K(x) = 1 - x R(x) = -R'(x) > 0 (decreasing in x)."""
    if x == 0.0:
        return 0.0, 0.0
    if x >= 10.0:
        res = _log_k_asymptotic_1(x)
        if res is not None:
            return res
    lr, er = _log_mills_1(x)
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


def _log_npdf_bracket_1(u: float) -> tuple[float, float]:
    """Certified bracket on log phi(u) = -u^2/2 - log(2 pi)/2."""
    val = -0.5 * u * u - _HALF_LOG_2PI
    e = _EPS * (4.0 + 3.0 * abs(val))
    return val - e, val + e


def _bracket_1(u_lo: float, u_hi: float, v_lo: float, v_hi: float, mu_lo: float, mu_hi: float) -> tuple[float, float]:
    """:func:`gaussian_log_delta_bracket` for floats."""
    if mu_hi == math.inf:  # mu > 1.7e308: delta = 1 - (far below one ulp)
        return math.log(1.0 - _EPS / 2.0), 0.0
    lp_hi = sum(_log_phi_tail_1(u_lo))
    if lp_hi < _LOG_TINY:  # delta <= Phi(-u) < 5e-324
        return -math.inf, min(lp_hi, 0.0)
    best_hi, best_lo = 0.0, -math.inf
    res = _gauss_log_f_1(u_lo, v_hi)
    if res is not None:
        best_hi = min(best_hi, res[1])
    if v_lo > u_hi:
        res = _gauss_log_f_1(u_hi, v_lo)
        if res is not None:
            best_lo = max(best_lo, res[0])
    if mu_lo > 0.0 and mu_hi * (2.0 + abs(u_lo)) < 1e-3:
        k_lo, k_hi = _log_k_bracket_1(u_lo)
        p_lo, p_hi = _log_npdf_bracket_1(u_lo)
        hi_b = math.log(mu_hi) + p_hi + k_hi
        best_hi = min(best_hi, hi_b + 2.0 * _EPS * (abs(hi_b) + abs(math.log(mu_hi))))
        x = math.nextafter(u_hi + mu_hi, math.inf)
        k_lo, _ = _log_k_bracket_1(x)
        p_lo, _ = _log_npdf_bracket_1(u_hi)
        lo_b = math.log(mu_lo) + p_lo + k_lo
        best_lo = max(best_lo, lo_b - 2.0 * _EPS * (abs(lo_b) + abs(math.log(mu_lo))))
    return best_lo, best_hi


# ------------------------------------------------------------------------------------------------
# (1) at a float mu: the closed form, intersected with the certified bracket

#: relative error allowance of a closed-form evaluation (a few ulps per elementary operation)
_REL = 64.0 * _EPS
#: absolute floor of every error bound (underflowed values)
_ABS = 1e-300
_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)
_SQRT2 = math.sqrt(2.0)


def _gl_interval(m: np.ndarray, h: float) -> np.ndarray:
    """int_{-h}^{h} exp(-m s - s^2/2) ds by 16-point Gauss-Legendre (used when h (|m| + 1) <= 1,
    where the integrand's log varies by at most ~1 over the interval)."""
    out = np.empty(m.shape)
    s = h * _GL_X
    step = 1 << 15
    for i in range(0, m.size, step):
        mm = m[i:i + step, None]
        out[i:i + step] = h * np.exp(-mm * s - 0.5 * s * s) @ _GL_W
    return out


def _expm1_times_ndtr(e: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(expm1(e) Phi(z), an absolute error bound): a direct product where neither factor leaves
    the float range, else formed in log space (whose rounding, u times the size of the logs, is
    part of the bound)."""
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        direct = np.expm1(np.minimum(e, 700.0)) * special.ndtr(z)
        ok = (e < 700.0) & (special.ndtr(z) > 1e-290)
        ep = np.maximum(e, 1e-300)
        log_em1 = np.where(ep > 30.0, ep + np.log1p(-np.exp(-np.minimum(ep, 745.0))), np.log(np.expm1(np.minimum(ep, 30.0))))
        lz = special.log_ndtr(z)
        via_log = np.exp(log_em1 + lz)
        val = np.where(ok | (e <= 0), direct, via_log)
        err = np.where(ok | (e <= 0), _REL * np.abs(direct), _REL * (2.0 + np.abs(log_em1) + np.abs(lz)) * via_log)
    return val, err


def _rel_ndtr(x: np.ndarray, dx: np.ndarray) -> np.ndarray:
    """Relative error bound of scipy's ndtr(x) (Phi(x) = erfc(-x/sqrt2)/2 for x < 0: erfc's
    (1 + 2 (x/sqrt2)^2) ulps; near 1 above 0) plus the argument's rounding dx times
    |d log Phi/dx| <= |x| + 2."""
    return np.where(x < 0, _EPS * (ERFC_POS_ULPS * (1.0 + x * x) + 8.0), 8.0 * _EPS) + (np.abs(x) + 2.0) * dx


def _closed_form(mu: float, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(1) evaluated without destructive cancellation, with an absolute error bound:

    * short interval, h (|m| + 1) <= 1 with h = mu/2, m = -e/mu (the midpoint of [z - mu, z],
      z = mu/2 - e/mu): ``Phi(z) - Phi(z - mu) = phi(m) int_{-h}^{h} exp(-m s - s^2/2) ds`` by
      Gauss-Legendre, then minus ``expm1(e) Phi(z - mu)``;
    * z >= 0: ``[Phi(z) - Phi(z - mu)] - expm1(e) Phi(z - mu)`` with the first bracket from
      erf / erfc (whichever does not cancel);
    * z < 0: with (z - mu)^2/2 = z^2/2 + e, ``delta = e^{-z^2/2}/2 [erfcx(-z/sqrt2) -
      erfcx((mu - z)/sqrt2)]`` (Mills-ratio form; no underflow of the two tails).

    The bound: 64 ulps of the sum of the magnitudes of the terms that are subtracted, plus each
    special function's measured relative error (erfc: ERFC_POS_ULPS (1 + 2 x^2) ulps, erfcx:
    ERFCX_POS_ULPS, exp(-x^2/2): x^2 ulps from its argument) and the effect of the rounding of
    its argument (e/mu, z and z - mu carry an ulp each) through its logarithmic derivative.
    """
    z = 0.5 * mu - e / mu
    zb = z - mu
    m = -e / mu
    h = 0.5 * mu
    val = np.empty(e.shape)
    err = np.empty(e.shape)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        da = np.spacing(np.abs(e / mu))  # (rounding of e/mu)
        dz = da + np.spacing(np.abs(z))
        dzb = dz + np.spacing(np.abs(zb))
        short = h * (np.abs(m) + 1.0) <= 1.0
        pos = (~short) & (z >= 0)
        neg = (~short) & (z < 0)
        if np.any(short):
            ms = m[short]
            d1 = np.exp(-0.5 * ms * ms) / math.sqrt(2.0 * math.pi) * _gl_interval(ms, h)
            d2, e2 = _expm1_times_ndtr(e[short], zb[short])
            rel1 = _EPS * (ms * ms + 8.0) + np.abs(ms) * da[short]
            rel2 = 4.0 * _EPS + _rel_ndtr(zb[short], dzb[short])
            val[short] = d1 - d2
            err[short] = _REL * (d1 + np.abs(d2)) + 1e-14 * d1 + e2 + d1 * rel1 + np.abs(d2) * rel2
        if np.any(pos):
            zp, zbp = z[pos], zb[pos]
            ec_zb = special.erfc(zbp / _SQRT2)
            ec_z = special.erfc(zp / _SQRT2)
            d1 = np.where(zbp >= 0, 0.5 * (ec_zb - ec_z),
                          0.5 * (special.erf(zp / _SQRT2) + special.erf(-zbp / _SQRT2)))
            d1_scale = np.where(zbp >= 0, ec_zb, 1.0)
            # erfc pair: each with its (1 + x^2) ulps and argument rounding; erf pair: a few ulps
            # of 1 and slope <= 2/sqrt(pi) times the argument rounding
            e_erfc = 0.5 * (ec_zb * (_EPS * (ERFC_POS_ULPS * (1.0 + zbp * zbp) + 8.0) + (zbp + 2.0) * dzb[pos])
                            + ec_z * (_EPS * (ERFC_POS_ULPS * (1.0 + zp * zp) + 8.0) + (zp + 2.0) * dz[pos]))
            e_erf = 0.5 * (16.0 * _EPS + 0.8 * (dz[pos] + dzb[pos]))
            d2, e2 = _expm1_times_ndtr(e[pos], zbp)
            rel2 = 4.0 * _EPS + _rel_ndtr(zbp, dzb[pos])
            val[pos] = d1 - d2
            err[pos] = _REL * (d1_scale + np.abs(d2)) + e2 + np.where(zbp >= 0, e_erfc, e_erf) + np.abs(d2) * rel2
        if np.any(neg):
            zn = z[neg]
            pre = 0.5 * np.exp(-0.5 * zn * zn)
            e1 = special.erfcx(-zn / _SQRT2)
            e2 = special.erfcx((mu - zn) / _SQRT2)
            rel_pre = _EPS * (zn * zn + 8.0) + np.abs(zn) * dz[neg]
            rel_e1 = _EPS * (ERFCX_POS_ULPS + 8.0) + 1.13 * dz[neg]
            rel_e2 = _EPS * (ERFCX_POS_ULPS + 8.0) + 1.13 * dzb[neg]
            val[neg] = pre * (e1 - e2)
            err[neg] = pre * (_REL * (e1 + e2) + (e1 + e2) * rel_pre + e1 * rel_e1 + e2 * rel_e2)
    val = np.clip(np.nan_to_num(val, nan=0.0), 0.0, 1.0)
    return val, np.nan_to_num(err, nan=1.0) + _ABS


def _outward(x: np.ndarray, ulps: int) -> tuple[np.ndarray, np.ndarray]:
    """x moved ``ulps`` floats down and up."""
    lo, hi = x, x
    for _ in range(ulps):
        lo, hi = np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)
    return lo, hi


def gaussian_delta(mu: float, eps) -> tuple[np.ndarray, np.ndarray]:
    """(1) for the Gaussian with mean difference ``mu`` (a float, 0 < mu < 1e150) at each real
    ``eps``: ``(value, err)`` with the exact curve in [value - err, value + err].

    The closed form (:func:`_closed_form`, with its bound) and the certified log-space bracket of
    :func:`gaussian_log_delta_bracket` at the enclosures of u = eps/mu - mu/2 and v = u + mu (each
    formed in double precision and widened by an ulp of eps/mu and one of the result, then one
    float more, for the two roundings; mu exact) are intersected;
    both contain the exact value, so the result never widens either. ``value`` is the midpoint
    and ``err`` the half-width of the intersection (plus the rounding of forming them)."""
    e = _arr(eps)
    mu = float(mu)
    v1, e1 = _closed_form(mu, e)
    # the bracket where the closed form's bound is loose (cancellation, tails: above 1e-10
    # relative); elsewhere the gain would not pay for the cost
    need = np.isfinite(e) & (e1 > 1e-10 * v1 + 2.0 * _ABS)
    if not np.any(need):
        return v1, e1
    en, vn, ern = e[need], v1[need], e1[need]
    lo1, hi1 = np.maximum(vn - ern, 0.0), np.minimum(vn + ern, 1.0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        a = en / mu  # (one rounding: half an ulp of a)
        half = 0.5 * mu  # (exact)
        u_c, v_c = a - half, a + half  # (one more rounding each)
        du = np.spacing(np.abs(a)) + np.spacing(np.abs(u_c))
        dv = np.spacing(np.abs(a)) + np.spacing(np.abs(v_c))
        u_lo, u_hi = _outward(u_c - du, 1)[0], _outward(u_c + du, 1)[1]
        v_lo, v_hi = _outward(v_c - dv, 1)[0], _outward(v_c + dv, 1)[1]
        llo, lhi = gaussian_log_delta_bracket(u_lo, u_hi, v_lo, v_hi, np.full(en.shape, mu), np.full(en.shape, mu))
        lo2 = np.nextafter(np.nextafter(np.exp(llo), 0.0), 0.0)
        hi2 = np.nextafter(np.nextafter(np.exp(lhi), np.inf), np.inf)
    lo = np.maximum(lo1, np.nan_to_num(lo2, nan=0.0))
    hi = np.maximum(np.minimum(hi1, np.nan_to_num(hi2, nan=1.0)), lo)
    val = 0.5 * (lo + hi)
    err = 0.5 * (hi - lo) * (1.0 + 4.0 * _EPS) + 4.0 * _EPS * val + _ABS
    # (the closed form's own value and bound where the bracket does not make it narrower)
    better = (err < ern) & (val - err >= vn - ern) & (val + err <= vn + ern)
    v_out, e_out = v1.copy(), e1.copy()
    v_out[need] = np.where(better, val, vn)
    e_out[need] = np.where(better, err, ern)
    return v_out, e_out
