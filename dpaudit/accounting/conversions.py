"""Conversions between privacy notions: zCDP, RDP, tCDP, GDP and (epsilon, delta)-DP.

Every function returns a conservative value: an epsilon or delta that a mechanism is
*guaranteed* to satisfy is rounded up (``dpaudit.core.numeric.round_up``), and a parameter
that is the *largest* one meeting a target (``dp_to_zcdp``, ``gdp_mu``) is rounded down and
verified by recomputing the forward conversion.

References
----------
[BS16]  Bun & Steinke, "Concentrated differential privacy: simplifications, extensions, and
        lower bounds", TCC 2016, arXiv:1605.02065, Prop. 1.3 (rho + 2 sqrt(rho log(1/delta))).
[CKS20] Canonne, Kamath & Steinke, "The discrete Gaussian for differential privacy",
        NeurIPS 2020, arXiv:2004.00010, Prop. 12 (RDP form) and Cor. 13 (zCDP form, v4).
[BBGHS20] Balle, Barthe, Gaboardi, Hsu & Sato, "Hypothesis testing interpretations and Renyi
        differential privacy", AISTATS 2020, arXiv:1905.09982, Thm. 21 (same formula as CKS20).
[M17]   Mironov, "Renyi differential privacy", CSF 2017, arXiv:1702.07476.
[BW18]  Balle & Wang, "Improving the Gaussian mechanism for differential privacy: analytical
        calibration and optimal denoising", ICML 2018, arXiv:1805.06530, Thm. 8.
[DRS19] Dong, Roth & Su, "Gaussian differential privacy", arXiv:1905.02383, Cor. 2.13.
[BDRS18] Bun, Dwork, Rothblum & Steinke, "Composable and versatile privacy via truncated CDP",
        STOC 2018 (definition of (rho, omega)-tCDP: D_alpha <= rho*alpha for 1 < alpha < omega).
[TV]    Bretagnolle-Huber: TV(P, Q) <= sqrt(1 - exp(-KL(P||Q))); with KL <= D_alpha (alpha > 1)
        an RDP point (alpha, r) gives (0, sqrt(1 - exp(-r)))-DP.

The formulas are those of Bun, Dwork, Rothblum, Steinke 2018; Balle et al. 2020; Canonne, Kamath, Steinke 2020; Balle & Wang 2018.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction

import numpy as np
from scipy import optimize
from scipy.optimize import minimize_scalar

from dpaudit.accounting import gaussian_profile
from dpaudit.core.numeric import TINY, next_down, round_down, round_up, softplus
from dpaudit.core.roots import bisect, bracket_down, bracket_up, largest_false
from dpaudit.core.validation import (
    check_delta,
    check_epsilon,
    check_nonnegative,
    check_orders,
    check_positive,
    check_real,
)

__all__ = [
    "zcdp_to_dp",
    "zcdp_delta",
    "dp_to_zcdp",
    "rdp_to_dp",
    "rdp_to_delta",
    "epsilon_from_rdp_curve",
    "RDP_CURVE_CONVERSIONS",
    "tcdp_to_dp",
    "tcdp_delta",
    "gaussian_delta",
    "gaussian_epsilon",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu",
    "ZCDP_METHODS",
    "TCDP_METHODS",
]

ZCDP_METHODS = ("cks", "bs")
TCDP_METHODS = ("bs", "cks")

# largest argument of exp that does not overflow (with margin)
_MAX_EXP_ARG = 700.0
_EPS = float(np.finfo(float).eps)


# ---------------------------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------------------------
def _exp_up(log_x: float) -> float:
    """exp(log_x) rounded up; a finite log never underflows to 0 (a tiny positive is returned)."""
    if log_x == -math.inf:
        return 0.0
    if log_x > 709.0:
        return math.inf
    return round_up(math.exp(log_x))


def _up(x: float) -> float:
    """Round an upper bound up, keeping an exact 0 (an exactly certified epsilon = 0) at 0
    and mapping a computed value below 0 (a valid, looser statement) to 0."""
    x = float(x)
    if x == 0.0:
        return 0.0
    return max(round_up(x), 0.0)


def _check_method(method: str, allowed: tuple[str, ...]) -> str:
    if method not in allowed:
        raise ValueError(f"method must be one of {allowed}, got {method!r}")
    return method


def _check_omega(omega) -> float:
    omega = check_real("omega", omega, allow_inf=True)
    if not omega > 1.0:
        raise ValueError(f"omega must be > 1 (inf allowed), got {omega}")
    return omega


def _tv_rho_threshold(delta: float) -> float:
    """Largest KL bound r with sqrt(1 - exp(-r)) <= delta, i.e. -log(1 - delta^2), rounded down."""
    return round_down(-math.log1p(-delta * delta)) if delta * delta > 0 else 0.0


def _two_sum(a, b):
    """Error-free transformation (Knuth): s = fl(a + b) and e with a + b = s + e exactly."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, np.where(np.isfinite(s), e, 0.0)


def _log_ratio_alpha(alpha: np.ndarray) -> np.ndarray:
    """log(1 - 1/alpha) = log(alpha - 1) - log(alpha), accurate as alpha -> 1.

    For alpha in (1, 2] the subtraction ``alpha - 1`` is exact (Sterbenz), so the only error is
    that of two logarithms; ``log1p(-1/alpha)`` is used for larger alpha.
    """
    alpha = np.asarray(alpha, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        near = np.log(alpha - 1.0) - np.log(alpha)
        far = np.log1p(-1.0 / alpha)
    return np.where(alpha <= 2.0, near, far)


# ---------------------------------------------------------------------------------------------
# RDP -> (epsilon, delta)
# ---------------------------------------------------------------------------------------------
def _check_rdp_vector(orders, rdp) -> tuple[np.ndarray, np.ndarray]:
    orders = check_orders("orders", orders)
    rdp = np.atleast_1d(np.asarray(rdp, dtype=float))
    if rdp.shape != orders.shape:
        raise ValueError(f"rdp must have the same shape as orders, got {rdp.shape} and {orders.shape}")
    if np.any(np.isnan(rdp)):
        raise ValueError("rdp must not contain NaN")
    if np.any(rdp < 0):
        raise ValueError(f"rdp must be >= 0 (inf allowed), got min {rdp.min()}")
    return orders, rdp


def _balle_epsilon(orders: np.ndarray, rdp: np.ndarray, log_delta: float) -> np.ndarray:
    """Per-order epsilon of [BBGHS20, Thm. 21] / [CKS20, Prop. 12], as an upper bound:

        epsilon(alpha) = r + log((alpha - 1)/alpha) - (log delta + log alpha)/(alpha - 1),

    with epsilon = r at alpha = inf (D_inf is pure DP) and inf where r = inf. The three terms
    can cancel (the result is then far smaller than the terms), so a bound on the rounding error
    of the evaluation, 8 eps times the sum of their magnitudes, is added: a result <= 0 then
    really certifies (0, delta)-DP. Not yet clipped at 0 and not rounded.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        finite_order = np.isfinite(orders)
        ratio = _log_ratio_alpha(orders)
        tail = (log_delta + np.log(orders)) / (orders - 1.0)
        # r + ratio - tail summed without rounding error (two-sum), so that only the terms' own
        # errors remain: ratio and tail within ~2 eps relative (logarithms, division), plus the
        # final rounding
        s1, e1 = _two_sum(rdp, ratio)
        s2, e2 = _two_sum(s1, -tail)
        eps = s2 + (e1 + e2)
        mag = 2.0 * np.abs(ratio) + (abs(log_delta) + 2.0 * np.abs(np.log(orders))) / (orders - 1.0) + 1e-300
        eps = eps + 2.0 * _EPS * (mag + np.abs(eps))
        eps = np.where(np.isnan(eps), math.inf, eps)  # no information: no bound at this order
        eps = np.where(finite_order, eps, rdp)
        eps = np.where(np.isinf(rdp), math.inf, eps)
    return eps


def rdp_to_dp(orders, rdp, delta) -> tuple[float, float]:
    """Best (epsilon, delta)-DP guarantee implied by an RDP curve given on a grid of orders.

    For each order the tighter of two valid conversions is used:

    * [BBGHS20, Thm. 21] (= [CKS20, Prop. 12]): (alpha, r)-RDP implies (epsilon, delta)-DP with
      ``epsilon = r + log((alpha-1)/alpha) - (log(delta) + log(alpha))/(alpha-1)``
      (never worse than [M17, Prop. 3], ``r + log(1/delta)/(alpha-1)``);
    * the total-variation fallback [TV]: if ``sqrt(1 - exp(-r)) <= delta`` then (0, delta)-DP.

    The Balle et al. form is used for every order > 1: ``log((alpha-1)/alpha)`` is evaluated
    as ``log(alpha-1) - log(alpha)`` (exact subtraction for alpha <= 2), so orders close to 1
    are safe (dp_accounting 0.6.0 instead returns inf for alpha <= 1.01, which can only be
    looser). A negative per-order epsilon certifies (0, delta)-DP and is reported as 0.

    Parameters
    ----------
    orders : array_like of float > 1 (``inf`` allowed)
    rdp : array_like, same shape, >= 0 (``inf`` allowed: no bound at that order)
    delta : float in (0, 1)

    Returns
    -------
    (epsilon, order) : the smallest epsilon (rounded up) and the order that attains it.

    Example
    -------
    >>> from dpaudit.conversions import rdp_to_dp
    >>> eps, order = rdp_to_dp([2, 4, 8], [1.0, 2.0, 4.0], 1e-5)
    >>> print(f"{eps:.4f} at order {order:g}")
    5.0879 at order 4
    """
    orders, rdp = _check_rdp_vector(orders, rdp)
    delta = check_delta("delta", delta)
    eps = _balle_epsilon(orders, rdp, math.log(delta))
    eps = np.where(rdp <= _tv_rho_threshold(delta), 0.0, eps)
    i = int(np.argmin(eps))
    return _up(float(eps[i])), float(orders[i])


def rdp_to_delta(orders, rdp, epsilon) -> tuple[float, float]:
    """Smallest delta such that the RDP curve implies (epsilon, delta)-DP, and its order.

    Per order the smaller of

    * [BBGHS20, Thm. 21] solved for delta:
      ``log delta = (alpha-1)(r - epsilon + log(1 - 1/alpha)) - log(alpha)``;
    * the [TV] bound ``delta = sqrt(1 - exp(-r))`` (valid for every epsilon >= 0);
    * at alpha = inf: delta = 0 when r <= epsilon (pure DP).

    Returns ``(min(delta, 1), order)`` with delta rounded up.
    """
    orders, rdp = _check_rdp_vector(orders, rdp)
    epsilon = check_epsilon("epsilon", epsilon)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_tv = 0.5 * np.log(-np.expm1(-rdp))
        log_tv = log_tv + 4.0 * _EPS * (1.0 + np.abs(log_tv))
        finite_order = np.isfinite(orders)
        ratio = _log_ratio_alpha(orders)
        # r - epsilon + log(1 - 1/alpha) can cancel and is then multiplied by alpha - 1 (up to
        # 2^20 on the default grid): it is summed without rounding error (two-sum), leaving the
        # error of ratio (<= 2 eps |ratio|) and one final rounding; alpha - 1 is exact below 2^53,
        # the product and the last subtraction round once each, log(alpha) errs by <= eps.
        s1, e1 = _two_sum(rdp, -epsilon)
        s2, e2 = _two_sum(s1, ratio)
        inner = s2 + (e1 + e2)
        log_balle = (orders - 1.0) * inner - np.log(orders)
        err = ((_EPS * (orders - 1.0)) * (2.0 * np.abs(ratio) + np.abs(inner))
               + _EPS * (2.0 * np.abs(np.log(orders)) + np.abs(log_balle) + 1e-300))
        log_balle = log_balle + err
        log_balle = np.where(np.isnan(log_balle), 0.0, log_balle)  # no information: delta <= 1
        # at a finite order the delta is positive, however small: a log that overflowed to -inf
        # (epsilon far above r) is reported as the smallest positive double, never 0
        log_balle = np.maximum(log_balle, -800.0)
        log_balle = np.where(finite_order, log_balle, np.where(rdp <= epsilon, -math.inf, 0.0))
        log_balle = np.where(np.isinf(rdp), 0.0, log_balle)
        log_tv = np.where(rdp == 0.0, -math.inf, log_tv)
        log_d = np.minimum(np.minimum(log_tv, log_balle), 0.0)
    i = int(np.argmin(log_d))
    return min(1.0, _exp_up(float(log_d[i]))), float(orders[i])


# ---------------------------------------------------------------------------------------------
# RDP curve (a function of the order) -> (epsilon, delta)
# ---------------------------------------------------------------------------------------------
#: conversions accepted by :func:`epsilon_from_rdp_curve`
RDP_CURVE_CONVERSIONS = ("best", "mironov")


def _mironov_epsilon(orders: np.ndarray, rdp: np.ndarray, delta: float) -> np.ndarray:
    """[M17, Prop. 3] at each order: ``rdp + log(1/delta)/(alpha-1)``."""
    with np.errstate(over="ignore", invalid="ignore"):
        return rdp + (-math.log(delta)) / (orders - 1.0)


def _curve_convert(orders: np.ndarray, rdp: np.ndarray, delta: float, conversion: str) -> tuple[float, float]:
    """(epsilon, order) of the best order under ``conversion``."""
    if conversion == "mironov":
        eps = _mironov_epsilon(orders, rdp, delta)
        eps = np.where(np.isnan(eps), math.inf, eps)
        i = int(np.argmin(eps))
        return float(eps[i]), float(orders[i])
    best, order = rdp_to_dp(orders, rdp, delta)
    return float(best), float(order)


def _curve_order_grid(max_order: float, points: int = 1500) -> np.ndarray:
    """Log-spaced orders on (1, max_order), dense near both ends."""
    if math.isinf(max_order):
        return 1.0 + np.geomspace(1e-8, 1e10, points)
    w = max_order - 1.0
    inner = w * np.geomspace(1e-9, 1.0, points, endpoint=False)
    edge = w * (1.0 - np.geomspace(1e-12, 1e-2, 60))
    grid = 1.0 + np.unique(np.concatenate([inner, edge]))
    return grid[(grid > 1.0) & (grid < max_order)]


def epsilon_from_rdp_curve(curve, delta: float, *, max_order: float = math.inf,
                           conversion: str = "best") -> tuple[float, float]:
    """Minimise the (epsilon, delta) conversion of an RDP curve over continuous orders.

    ``curve(orders) -> array`` is an RDP upper bound on ``1 < alpha < max_order``. A log-spaced
    grid of 1,500+ orders is searched first, then a bounded Brent refinement runs between the
    grid neighbours of the best order. Every candidate is a valid bound at its own order, so
    the optimisation affects tightness only. Returns ``(epsilon, order)``, epsilon rounded up
    (``inf`` with order ``nan`` when no order gives a finite bound).

    ``conversion``: ``"best"`` uses the accounting layer's ``rdp_to_dp`` (best of the valid
    conversions at each order); ``"mironov"`` uses [M17, Prop. 3].
    """
    if conversion not in RDP_CURVE_CONVERSIONS:
        raise ValueError(f"conversion must be one of {RDP_CURVE_CONVERSIONS}, got {conversion!r}")
    delta = check_delta("delta", delta)
    if max_order <= 1.0:
        return math.inf, math.nan
    grid = _curve_order_grid(max_order)
    best_eps, best_order = _curve_convert(grid, np.atleast_1d(curve(grid)), delta, conversion)
    if not math.isfinite(best_eps):
        return math.inf, math.nan
    i = int(np.searchsorted(grid, best_order))
    lo = grid[max(i - 1, 0)]
    hi = grid[min(i + 1, grid.size - 1)]
    if hi > lo:
        def objective(t):
            order = np.array([1.0 + math.exp(t)])
            e, _ = _curve_convert(order, np.atleast_1d(curve(order)), delta, conversion)
            return e if math.isfinite(e) else 1e300

        res = minimize_scalar(objective, bounds=(math.log(lo - 1.0), math.log(hi - 1.0)),
                              method="bounded", options={"xatol": 1e-10})
        order = 1.0 + math.exp(float(res.x))
        if order < max_order:
            e, _ = _curve_convert(np.array([order]), np.atleast_1d(curve(np.array([order]))), delta, conversion)
            if e < best_eps:
                best_eps, best_order = e, order
    return round_up(best_eps), best_order



# ---------------------------------------------------------------------------------------------
# zCDP / tCDP -> (epsilon, delta)
# ---------------------------------------------------------------------------------------------
def _log1p_inv(t: float) -> float:
    """log(1 + 1/t) for t > 0, also where 1/t overflows (subnormal t): log1p(t) - log(t)."""
    if t >= 1.0:
        return math.log1p(1.0 / t)
    return math.log1p(t) - math.log(t)  # no cancellation: -log(t) > 0 dominates


def _t_cap(omega: float) -> float:
    """The largest float t with 1 + t <= omega in exact arithmetic (inf for omega = inf): the
    order alpha = 1 + t used for a (rho, omega)-tCDP curve must not exceed omega."""
    if omega == math.inf:
        return math.inf
    t = omega - 1.0
    while t > 0.0 and Fraction(t) + 1 > Fraction(omega):
        t = next_down(t)
    return t


def _bisect_increasing(fun, lo: float, hi: float, iters: int = 200) -> tuple[float, float]:
    """Bracket [lo, hi] of the sign change of an increasing function (fun(lo) < 0 <= fun(hi)),
    by at most ``iters`` bisections (:func:`dpaudit.core.roots.bisect`, arithmetic midpoints;
    stops when the midpoint is no longer strictly inside)."""
    br = bisect(lambda x: not fun(x) < 0.0, lo, hi, midpoint="arithmetic", max_iter=iters)
    return br.lo, br.hi


def _cks_epsilon_at(t: float, rho: float, log_delta: float) -> float:
    """[CKS20, Prop. 12] epsilon at alpha = 1 + t for the curve r(alpha) = rho * alpha,

        (1 + t) rho - log(1 + 1/t) - (log delta + log(1 + t)) / t,

    plus a bound on its rounding error (the terms can cancel): an upper bound, possibly <= 0."""
    a = (1.0 + t) * rho
    b = _log1p_inv(t)
    lt = math.log1p(t)
    val = a - b - (log_delta + lt) / t
    k = 8.0 * _EPS
    err = k * abs(a) + k * b + k * ((abs(log_delta) + lt) / t) + k * abs(val)
    return val + err


def _cks_epsilon(rho: float, omega: float, delta: float) -> float:
    """min over alpha in (1, omega] of the Balle/CKS conversion of (alpha, rho*alpha)-RDP.

    With t = alpha - 1 the derivative of the objective has the sign of
    ``g(t) = rho t^2 + log(1 + t) - log(1/delta)``, increasing in t; the minimiser is its root
    (found by bisection in log t, at most 200 steps), capped at omega - 1 (the objective is
    unimodal). The tCDP bound holds at alpha = omega too, since D_alpha is non-decreasing and
    lower semicontinuous, hence left-continuous, in alpha. Any alpha gives a valid bound, so the
    accuracy of the root affects tightness only; the value at the chosen alpha carries its
    rounding-error bound, and is reported as 0 only when that upper bound is <= 0.
    """
    if rho == 0.0:
        return 0.0
    if rho <= _tv_rho_threshold(delta):  # KL <= rho (alpha -> 1): TV fallback gives (0, delta)
        return 0.0
    log_delta = math.log(delta)
    L = -log_delta

    def g(s: float) -> float:
        t = math.exp(s)
        return rho * t * t + math.log1p(t) - L

    # g(e^s) >= 0 where rho t^2 >= L or log(1 + t) >= L
    s_hi = min(0.5 * (math.log(L) - math.log(rho)), L) + 1e-9
    s_hi = min(s_hi, 709.0)
    s_lo = -745.0
    _, s_root = _bisect_increasing(g, s_lo, s_hi)
    t = min(math.exp(s_root), _t_cap(omega))
    if not t > 0.0:
        t = TINY
    return _up(_cks_epsilon_at(t, rho, log_delta))


def zcdp_to_dp(rho, delta, method: str = "cks") -> float:
    """epsilon such that a rho-zCDP mechanism is (epsilon, delta)-DP.

    ``method="bs"``: [BS16, Prop. 1.3] ``epsilon = rho + 2 sqrt(rho log(1/delta))``.

    ``method="cks"`` (default): [CKS20, Cor. 13], the optimal conversion for a generic
    rho-zCDP mechanism, ``epsilon = min_{alpha > 1} alpha*rho + log((alpha-1)/alpha)
    - (log(delta) + log(alpha))/(alpha-1)``, minimised over continuous alpha (the minimiser
    solves ``rho (alpha-1)^2 + log(alpha) = log(1/delta)``); additionally epsilon = 0 when the
    [TV] bound ``sqrt(1 - exp(-rho)) <= delta`` holds (KL <= rho).

    Parameters
    ----------
    rho : float >= 0
    delta : float in (0, 1)
    method : {"cks", "bs"}

    Returns
    -------
    epsilon >= 0, an upper bound (rounded up; exactly 0 for rho = 0).

    Example
    -------
    >>> from dpaudit.conversions import zcdp_to_dp
    >>> print(f"{zcdp_to_dp(0.5, 1e-5):.4f} (cks), {zcdp_to_dp(0.5, 1e-5, method='bs'):.4f} (bs)")
    4.7284 (cks), 5.2985 (bs)
    """
    rho = check_nonnegative("rho", rho)
    delta = check_delta("delta", delta)
    _check_method(method, ZCDP_METHODS)
    if method == "bs":
        if rho == 0.0:
            return 0.0
        # sqrt(rho) sqrt(L), not sqrt(rho L): a subnormal product would lose its relative precision
        return round_up(rho + 2.0 * math.sqrt(rho) * math.sqrt(-math.log(delta)))
    return _cks_epsilon(rho, math.inf, delta)


def _cks_log_delta(rho: float, omega: float, epsilon: float) -> float:
    """An upper bound on the log of min over alpha in (1, omega] of the [CKS20, Prop. 12] delta
    of rho*alpha-RDP:

        log delta(alpha) = (alpha-1)(alpha*rho - epsilon) + alpha*log(1 - 1/alpha) - log(alpha-1).

    With alpha = 1 + e^u the derivative in alpha, ``(2 alpha - 1) rho - epsilon +
    log(1 - 1/alpha)``, becomes ``h(u) = (1 + 2e^u) rho - epsilon - log(1 + e^-u)``, increasing
    in u; its root (bisection, at most 200 steps; capped at log(omega - 1) and at u = 700) is the
    minimiser. Working in u keeps alpha close to 1 representable (large rho). The value at the
    chosen alpha carries a bound on its rounding error (its terms can cancel).
    """

    def h(u):
        # u - log(1 + e^u) = -log(1 + e^-u), written without cancellation
        return (1.0 + 2.0 * math.exp(u)) * rho - epsilon - softplus(-u)

    u_hi = min(math.log(max(1.0, (epsilon + 1.0) / (2.0 * rho))), _MAX_EXP_ARG)
    if h(u_hi) <= 0.0:
        u_star = u_hi
    else:
        # h(u) < 0 for u <= min(0, epsilon - 3 rho) - 1 ((1 + 2e^u) rho < 3 rho, softplus(-u) > -u);
        # found by doubling from -1 (at most ~1030 steps) so that the bisection bracket stays tight
        # (bracket_up on -u: doubling from 1, at most 1100 steps)
        br = bracket_up(lambda s: h(-s) < 0.0, 0.5, 1.0, max_steps=1100)
        u_lo = -br.hi if br is not None else -sys.float_info.max
        _, u_star = _bisect_increasing(h, u_lo, min(u_hi, 0.5 * u_lo) if h(0.5 * u_lo) >= 0.0 else u_hi)
    t_cap = _t_cap(omega)
    t = math.exp(u_star)
    if t > t_cap:
        t = t_cap
    if t == 0.0:  # alpha = 1 to double precision: the bound is delta <= 1
        return 0.0
    # (alpha-1)(alpha rho - eps) + alpha log(t/(1+t)) - log t
    #   = t((1+t) rho - eps) - t log(1 + 1/t) - log(1 + t)   (no cancellation for large t)
    a = t * ((1.0 + t) * rho - epsilon)
    b = t * _log1p_inv(t)
    c = math.log1p(t)
    log_d = a - b - c
    if log_d == -math.inf:  # the exact value is below -1e308: delta is positive but < e^-800
        return -800.0
    k = 8.0 * _EPS  # (scaled term by term: the plain sum of magnitudes can overflow)
    err = k * t * ((1.0 + t) * rho) + k * t * epsilon + k * b + k * c + k * abs(log_d)
    up = log_d + err
    if math.isnan(up):  # inf - inf: no usable value at this order
        return 0.0
    return min(up, 0.0)


def _tcdp_delta(rho: float, omega: float, epsilon: float) -> float:
    if rho == 0.0:
        return 0.0
    log_d = _cks_log_delta(rho, omega, epsilon)
    log_tv = 0.5 * math.log(-math.expm1(-rho))
    log_tv = log_tv + 4.0 * _EPS * (1.0 + abs(log_tv))
    return min(1.0, _exp_up(min(log_d, log_tv)))


def zcdp_delta(rho, epsilon) -> float:
    """delta such that a rho-zCDP mechanism is (epsilon, delta)-DP (CKS optimal conversion).

    [CKS20, Cor. 13]: ``delta = min_{alpha > 1} exp((alpha-1)(alpha*rho - epsilon))/(alpha-1)
    * (1 - 1/alpha)^alpha``, evaluated in log space at the unique root of the derivative
    ``(2 alpha - 1) rho - epsilon + log(1 - 1/alpha)``; also at most the [TV] bound
    ``sqrt(1 - exp(-rho))``. Rounded up; never underflows to 0 for rho > 0; exactly 0 for rho = 0.
    """
    rho = check_nonnegative("rho", rho)
    epsilon = check_epsilon("epsilon", epsilon)
    return _tcdp_delta(rho, math.inf, epsilon)


def tcdp_delta(rho, omega, epsilon) -> float:
    """delta such that a (rho, omega)-tCDP mechanism is (epsilon, delta)-DP.

    The [CKS20, Prop. 12] conversion of the RDP points (alpha, rho*alpha), minimised over
    alpha in (1, omega] [BDRS18 definition], and the [TV] bound ``sqrt(1 - exp(-rho))``.
    With omega = inf this is :func:`zcdp_delta`.
    """
    rho = check_nonnegative("rho", rho)
    omega = _check_omega(omega)
    epsilon = check_epsilon("epsilon", epsilon)
    return _tcdp_delta(rho, omega, epsilon)


def tcdp_to_dp(rho, omega, delta, method: str = "bs") -> float:
    """epsilon such that a (rho, omega)-tCDP mechanism is (epsilon, delta)-DP.

    ``method="bs"`` (default): the closed form of Bun, Dwork, Rothblum, Steinke 2018 [BDRS18], i.e. the
    [M17, Prop. 3] conversion ``alpha*rho + log(1/delta)/(alpha-1)`` minimised over
    alpha in (1, omega]:

        epsilon = rho + 2 sqrt(rho log(1/delta))          if log(1/delta) <= (omega-1)^2 rho,
        epsilon = rho*omega + log(1/delta)/(omega - 1)    otherwise.

    (The first branch is used only when its order 1 + sqrt(log(1/delta)/rho) is <= omega with a
    margin against rounding; the second is valid in every case.)

    ``method="cks"``: the [BBGHS20]/[CKS20] conversion minimised over alpha in (1, omega]
    (never larger than "bs"); with omega = inf it equals ``zcdp_to_dp(rho, delta, "cks")``.
    """
    rho = check_nonnegative("rho", rho)
    omega = _check_omega(omega)
    delta = check_delta("delta", delta)
    _check_method(method, TCDP_METHODS)
    if method == "cks":
        return _cks_epsilon(rho, omega, delta)
    if rho == 0.0:
        return 0.0
    L = -math.log(delta)
    t = _t_cap(omega)
    if math.isinf(omega) or L <= t * t * rho * (1.0 - 1e-12):
        return round_up(rho + 2.0 * math.sqrt(rho) * math.sqrt(L))
    if not t > 0.0:
        return math.inf
    return round_up((1.0 + t) * rho + L / t)


def dp_to_zcdp(epsilon, delta, method: str = "cks") -> float:
    """Largest rho such that the rho-zCDP conversion stays within (epsilon, delta).

    ``method="bs"``: inverse of [BS16, Prop. 1.3],
    ``rho = (sqrt(log(1/delta) + epsilon) - sqrt(log(1/delta)))^2``.
    ``method="cks"``: the largest rho with ``zcdp_delta(rho, epsilon) <= delta``; the CKS delta
    is increasing in rho, so this is a bisection on the float grid (at most 80 steps, after a
    bracketing by doubling/halving of at most 2200 steps), started from the "bs" value.

    The result is rounded down and verified: ``zcdp_to_dp(result, delta, method) <= epsilon``
    for "bs" and ``zcdp_delta(result, epsilon) <= delta`` for "cks".

    Example
    -------
    >>> from dpaudit.conversions import dp_to_zcdp, zcdp_to_dp
    >>> rho = dp_to_zcdp(1.0, 1e-5)
    >>> print(f"{rho:.6f}", zcdp_to_dp(rho, 1e-5) <= 1.0)
    0.030557 True
    """
    epsilon = check_epsilon("epsilon", epsilon)
    delta = check_delta("delta", delta)
    _check_method(method, ZCDP_METHODS)
    L = -math.log(delta)
    root = epsilon / (math.sqrt(L + epsilon) + math.sqrt(L))
    rho_bs = min(root * root, sys.float_info.max)  # (** 2 raises OverflowError near the top)
    if method == "bs":
        rho = round_down(rho_bs)
        step = 2.0**-50
        for _ in range(60):
            if not (rho > 0 and zcdp_to_dp(rho, delta, "bs") > epsilon):
                break
            rho = round_down(rho * (1.0 - step))
            step = min(2.0 * step, 0.5)
        else:
            rho = 0.0
        return max(rho, 0.0)

    def infeasible(r: float) -> bool:
        return not _tcdp_delta(r, math.inf, epsilon) <= delta

    # bracket (core/roots, geometric steps of 2, at most 2200 each): a feasible lo below the
    # start (rounding at the boundary), then an infeasible hi above it
    lo = max(rho_bs, _tv_rho_threshold(delta))
    if lo == 0.0 or infeasible(lo):
        lo = bracket_down(infeasible, lo)[0] if lo > 0.0 else None
        if lo is None:
            if infeasible(TINY):
                return 0.0
            lo = TINY
    br = bracket_up(infeasible, lo, min(2.0 * lo, sys.float_info.max), max_steps=2200)
    if br is None:  # feasible up to the largest float
        return sys.float_info.max
    return largest_false(infeasible, br.lo, br.hi, rtol=1e-13)


# ---------------------------------------------------------------------------------------------
# Exact Gaussian (Balle-Wang) and GDP
# ---------------------------------------------------------------------------------------------
def _mu2(mu_num: float, mu_den: float) -> Fraction:
    """The exact mu^2 = (mu_num / mu_den)^2 of one Gaussian mechanism."""
    return (Fraction(mu_num) / Fraction(mu_den)) ** 2


def gaussian_delta(sigma, epsilon, sensitivity=1.0) -> float:
    """Exact delta(epsilon) of one Gaussian mechanism N(f(x), sigma^2), L2 sensitivity D.

    [BW18, Thm. 8] (= [DRS19, Cor. 2.13] with mu = D/sigma):

        delta(epsilon) = Phi(D/(2 sigma) - epsilon sigma/D) - e^epsilon Phi(-D/(2 sigma) - epsilon sigma/D),

    returned as an upper bound that holds for every legal input (never below the exact value, never
    0: the exact value is positive), within about an ulp of the exact value: the upper end of
    :func:`dpaudit.accounting.gaussian_profile.delta_bounds` (a certified double-precision bracket,
    refined in mpmath to 25 significant digits where it is wider than a few ulps; mu^2 =
    (D/sigma)^2 taken exactly).
    """
    sigma = check_positive("sigma", sigma)
    epsilon = check_epsilon("epsilon", epsilon)
    sensitivity = check_positive("sensitivity", sensitivity)
    return gaussian_profile.delta_bounds(_mu2(sensitivity, sigma), epsilon)[1]


def gaussian_epsilon_lower(mu_num: float, mu_den: float, delta: float) -> float:
    """A certified LOWER bound on the exact epsilon(delta) of the Gaussian mechanism with
    mu = mu_num/mu_den: the largest float e (to one ulp) at which delta(e) > delta is certified (so
    the exact root lies above e), within a few ulps of :func:`gaussian_epsilon`'s upper root
    (:func:`dpaudit.accounting.gaussian_profile.epsilon_bounds`). 0 when delta(0) may be <= delta."""
    return gaussian_profile.epsilon_bounds(_mu2(mu_num, mu_den), delta)[0]


def gaussian_epsilon(sigma, delta, sensitivity=1.0) -> float:
    """Exact (smallest) epsilon at ``delta`` of one Gaussian mechanism [BW18, Thm. 8].

    The smallest float epsilon (to one ulp) at which delta(epsilon) <= ``delta`` is certified
    (:func:`dpaudit.accounting.gaussian_profile.epsilon_bounds`: a bracketed root seeded by Brent's
    method on a fast approximation, then bisection on the float grid, every loop bounded), so the
    exact delta of the returned epsilon is <= delta and the exact root is at most a few ulps below
    it. 0 if delta(0) <= delta; ``inf`` if no finite epsilon suffices (sensitivity/sigma beyond the
    float range or the root beyond 1.8e308).

    Example
    -------
    >>> from dpaudit.conversions import gaussian_epsilon
    >>> print(f"{gaussian_epsilon(1.0, 1e-5):.4f}")    # sigma = sensitivity = 1
    4.3772
    """
    sigma = check_positive("sigma", sigma)
    delta = check_delta("delta", delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    return gaussian_profile.epsilon_bounds(_mu2(sensitivity, sigma), delta)[1]


def gdp_delta(mu, epsilon) -> float:
    """delta(epsilon) of a mu-GDP mechanism [DRS19, Cor. 2.13]:
    ``Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2)`` (= :func:`gaussian_delta`
    with sigma/sensitivity = 1/mu); 0 for mu = 0. An upper bound (see :func:`gaussian_delta`)."""
    mu = check_nonnegative("mu", mu)
    epsilon = check_epsilon("epsilon", epsilon)
    if mu == 0.0:
        return 0.0
    return gaussian_profile.delta_bounds(_mu2(mu, 1.0), epsilon)[1]


def gdp_epsilon(mu, delta) -> float:
    """Smallest epsilon with mu-GDP => (epsilon, delta)-DP [DRS19, Cor. 2.13] (see
    :func:`gaussian_epsilon`); rounded up."""
    mu = check_nonnegative("mu", mu)
    delta = check_delta("delta", delta)
    if mu == 0.0:
        return 0.0
    return gaussian_profile.epsilon_bounds(_mu2(mu, 1.0), delta)[1]


def gdp_mu(epsilon, delta) -> float:
    """The mu whose GDP curve passes through (epsilon, delta) [DRS19, Cor. 2.13].

    delta_mu(epsilon) is increasing in mu, so this is the largest mu such that mu-GDP implies
    (epsilon, delta)-DP: the largest float mu (to 2^-46 relative) at which the certified upper
    bound :func:`gdp_delta` is ``<= delta`` (Brent's method on a fast approximation in log mu
    seeds a bracket, then bisection on the float grid; every loop bounded). The returned mu is
    always one at which the bound was evaluated and met the target. 0 when no positive mu does.
    """
    epsilon = check_epsilon("epsilon", epsilon)
    delta = check_delta("delta", delta)

    def bad(m: float) -> bool:
        return not gaussian_profile.delta_at_most(_mu2(m, 1.0), epsilon, delta)

    lo, hi = 0.0, sys.float_info.max
    if not bad(TINY):
        lo = TINY
    else:
        return 0.0
    log_delta = math.log(delta)

    def g(t: float) -> float:
        return gaussian_profile.log_delta_estimate(math.exp(t), epsilon) - log_delta

    t0 = None
    try:
        if g(-744.0) < 0.0 < g(709.0):
            t0 = optimize.brentq(g, -744.0, 709.0, xtol=1e-15, rtol=1e-14, maxiter=300)
    except (ValueError, RuntimeError, OverflowError, ZeroDivisionError):
        t0 = None
    if t0 is not None:
        m0 = math.exp(t0)
        w = 2.0**-36
        for _ in range(12):
            cand = m0 * (1.0 + w)
            if cand >= hi:
                break
            if bad(cand):
                hi = cand
                break
            w *= 64.0
        w = 2.0**-36
        for _ in range(12):
            cand = m0 * (1.0 - min(w, 0.5))
            if cand <= lo:
                break
            if not bad(cand):
                lo = cand
                break
            w *= 64.0
    return largest_false(bad, lo, hi, rtol=2.0**-46)
