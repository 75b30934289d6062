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
from scipy import optimize, special

from dpaudit.core.numeric import TINY, bisect_float, next_down, next_up, round_down, round_up
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


def _softplus(x: float) -> float:
    """log(1 + e^x) without overflow."""
    if x > 30.0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


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
    orders = check_orders(orders)
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
    """
    orders, rdp = _check_rdp_vector(orders, rdp)
    delta = check_delta(delta)
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
    epsilon = check_epsilon(epsilon)
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
    by at most ``iters`` bisections (stops when the midpoint is no longer strictly inside)."""
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        if fun(mid) < 0.0:
            lo = mid
        else:
            hi = mid
    return lo, hi


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
    """
    rho = check_nonnegative("rho", rho)
    delta = check_delta(delta)
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
        return (1.0 + 2.0 * math.exp(u)) * rho - epsilon - _softplus(-u)

    u_hi = min(math.log(max(1.0, (epsilon + 1.0) / (2.0 * rho))), _MAX_EXP_ARG)
    if h(u_hi) <= 0.0:
        u_star = u_hi
    else:
        # h(u) < 0 for u <= min(0, epsilon - 3 rho) - 1 ((1 + 2e^u) rho < 3 rho, softplus(-u) > -u);
        # found by doubling from -1 (at most ~1030 steps) so that the bisection bracket stays tight
        u_lo = -1.0
        for _ in range(1100):
            if h(u_lo) < 0.0:
                break
            u_lo *= 2.0
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
    epsilon = check_epsilon(epsilon)
    return _tcdp_delta(rho, math.inf, epsilon)


def tcdp_delta(rho, omega, epsilon) -> float:
    """delta such that a (rho, omega)-tCDP mechanism is (epsilon, delta)-DP.

    The [CKS20, Prop. 12] conversion of the RDP points (alpha, rho*alpha), minimised over
    alpha in (1, omega] [BDRS18 definition], and the [TV] bound ``sqrt(1 - exp(-rho))``.
    With omega = inf this is :func:`zcdp_delta`.
    """
    rho = check_nonnegative("rho", rho)
    omega = _check_omega(omega)
    epsilon = check_epsilon(epsilon)
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
    delta = check_delta(delta)
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
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
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

    def feasible(r: float) -> bool:
        return _tcdp_delta(r, math.inf, epsilon) <= delta

    lo = max(rho_bs, _tv_rho_threshold(delta))
    for _ in range(2200):  # rounding at the boundary
        if lo == 0.0 or feasible(lo):
            break
        lo *= 0.5
    if lo == 0.0 or not feasible(lo):
        if not feasible(TINY):
            return 0.0
        lo = TINY
    hi = 2.0 * lo
    for _ in range(2200):
        if hi == math.inf or not feasible(hi):
            break
        lo, hi = hi, 2.0 * hi
    if hi == math.inf:
        hi = sys.float_info.max
        if feasible(hi):
            return hi
    lo, _ = bisect_float(lambda r: not feasible(r), lo, hi, rel=1e-13)
    return lo


# ---------------------------------------------------------------------------------------------
# Exact Gaussian (Balle-Wang) and GDP
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
#: the double-precision evaluation is accepted when its certified bracket on log(delta) is narrower
#: than this plus 16 eps |log delta| (about the relative width of the delta bracket; the rounding
#: of u^2/2 alone is ~eps |log delta|); otherwise delta is recomputed with mpmath
_GAUSS_TOL = 1e-12
_LOG_TINY = math.log(TINY)
#: cap on the digits the mpmath fallback may need to resolve the cancellation: at most
#: log10(u/mu) <= log10(40/5e-324) ~ 325 in the regime where it is used; beyond, the safe bound
#: Phi(-u) is returned (a bounded run time whatever the input)
_MAX_CANCEL_DIGITS = 1200.0


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


def _frac_down(x: Fraction) -> float:
    """The largest float <= x (``-inf``/max-float saturation outside the range)."""
    try:
        f = float(x)
    except OverflowError:
        return sys.float_info.max if x > 0 else -math.inf
    return next_down(f) if Fraction(f) > x else f


def _frac_up(x: Fraction) -> float:
    """The smallest float >= x."""
    try:
        f = float(x)
    except OverflowError:
        return math.inf if x > 0 else -sys.float_info.max
    return next_up(f) if Fraction(f) < x else f


def _gauss_inputs(mu_num: float, mu_den: float, epsilon: float):
    """Outward-rounded doubles ``(u_lo, u_hi, v_lo, v_hi, mu_lo, mu_hi)`` around the exact
    u* = epsilon/mu - mu/2, v* = u* + mu and mu = mu_num/mu_den (rational arithmetic on the double
    inputs; exact arithmetic matters when epsilon/mu and mu/2 nearly cancel, mu > 1e8, where
    double arithmetic would lose every digit of u*)."""
    mu = Fraction(mu_num) / Fraction(mu_den)
    e = Fraction(epsilon) / mu
    h = mu / 2
    u, v = e - h, e + h
    return _frac_down(u), _frac_up(u), _frac_down(v), _frac_up(v), _frac_down(mu), _frac_up(mu)


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


def _gauss_f_mpmath(u: float, mu: float, cancel: float, upward: bool = True) -> float:
    """F(u, mu) = Phi(-u) - exp(mu (u + mu/2)) Phi(-(u + mu)) = phi(u) (R(u) - R(u + mu)) for the
    exact doubles u and mu, evaluated in mpmath with a working precision raised until the
    difference keeps 20+ significant digits (``cancel``: estimated digits lost); rounded up
    (``upward``) or down."""
    import mpmath as mp

    t1 = 1.0  # (the loop below runs at least once and sets it)
    cancel = min(cancel, _MAX_CANCEL_DIGITS)
    for _ in range(4):
        dps = int(40 + cancel)
        with mp.workdps(dps):
            U, M = mp.mpf(u), mp.mpf(mu)
            t1 = mp.ncdf(-U)
            f = t1 - mp.exp(M * (U + M / 2)) * mp.ncdf(-(U + M))
            if f > 0 and f > t1 * mp.mpf(10) ** (25 - dps):
                # relative error of f is below 1e-20: one ulp outwards covers the conversion
                if upward:
                    return min(1.0, max(next_up(float(f * (1 + mp.mpf(10) ** -18))), TINY))
                return max(next_down(float(f * (1 - mp.mpf(10) ** -18))), 0.0)
        if cancel >= _MAX_CANCEL_DIGITS:
            break
        cancel = min(2.0 * cancel + 40.0, _MAX_CANCEL_DIGITS)
    if upward:
        return min(1.0, max(next_up(next_up(float(t1))), TINY))  # Phi(-u) >= F(u, mu)
    return 0.0


def _gauss_delta_bounds(mu_num: float, mu_den: float, epsilon: float, need_lower: bool = False):
    """``(lower, upper)``: certified bounds on the exact delta(epsilon) of the Gaussian mechanism
    with GDP parameter mu = mu_num/mu_den (= sensitivity/sigma, taken exactly: the ratio is not
    rounded). ``lower`` is only computed (otherwise 0.0) when ``need_lower``.

    [BW18, Thm. 8] with u = epsilon/mu - mu/2 and R(x) = Phi(-x)/phi(x) the Mills ratio:

        delta = Phi(-u) - e^eps Phi(-(u + mu)) = phi(u) (R(u) - R(u + mu))
              = int_0^inf phi(u + t) (1 - e^{-mu t}) dt,

    which increases in mu at fixed u and decreases in u at fixed mu (and, as F(u, v) = phi(u)
    (R(u) - R(v)), decreases in u and increases in v): inputs rounded outwards only raise it,
    inwards only lower it. Two double-precision evaluations with certified error brackets (the
    measured error bounds of erfc/erfcx and every rounding accounted for):

    * direct: log Phi(-u) + log1p(-R(v)/R(u)) at (u_lo, v_hi), its lower end at (u_hi, v_lo);
    * small mu: K = -R' = 1 - x R(x) is positive and decreasing, so
      mu phi(u) K(u + mu) <= delta <= mu phi(u) K(u).

    When the bracket is narrower than 1e-12 relative (plus 16 eps |log delta|) its ends are
    returned; otherwise (cancellation: mu small against u, or x R(x) close to 1) F(u_lo, mu_hi)
    (and F(u_hi, mu_lo) for the lower end) is recomputed in mpmath. The upper bound is never 0
    (the exact value is positive) and at most 1.
    """
    if mu_num / mu_den == math.inf:  # mu > 1.7e308: delta = 1 - (far below one ulp)
        return (next_down(1.0) if need_lower else 0.0), 1.0
    u_lo, u_hi, v_lo, v_hi, mu_lo, mu_hi = _gauss_inputs(mu_num, mu_den, epsilon)
    lp_hi = sum(_log_phi_tail(u_lo))
    if lp_hi < _LOG_TINY:  # delta <= Phi(-u) < 5e-324
        return 0.0, TINY
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
    lower = max(next_down(next_down(math.exp(best_lo))), 0.0) if need_lower else 0.0
    if best_hi < _LOG_TINY:
        return lower, TINY
    if best_hi - best_lo <= _GAUSS_TOL + 16.0 * _EPS * abs(best_hi) or max(abs(u_lo), abs(v_hi)) > 1e6:
        # (arguments beyond 1e6 never cancel: R(v)/R(u) <= u/v there, and mpmath is not used)
        return lower, min(1.0, max(next_up(next_up(math.exp(best_hi))), TINY))
    if math.isfinite(best_lo):
        cancel = max(0.0, (lp_hi - best_lo) / math.log(10.0)) + 5.0
    else:
        cancel = max(0.0, -math.log10(mu_hi)) + 2.0 * math.log10(2.0 + abs(u_lo)) + 10.0
    upper = _gauss_f_mpmath(u_lo, mu_hi, cancel)
    if need_lower and mu_lo > 0.0:
        lower = max(lower, _gauss_f_mpmath(u_hi, mu_lo, cancel, upward=False))
    return lower, upper


def _gauss_delta_up(mu_num: float, mu_den: float, epsilon: float) -> float:
    """Certified upper bound on the exact Gaussian delta (see :func:`_gauss_delta_bounds`)."""
    return _gauss_delta_bounds(mu_num, mu_den, epsilon)[1]


def _gauss_log_delta_approx(mu: float, epsilon: float) -> float:
    """A fast approximation of log delta(epsilon) (no certificate), for bracketing roots.

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


def gaussian_delta(sigma, epsilon, sensitivity=1.0) -> float:
    """Exact delta(epsilon) of one Gaussian mechanism N(f(x), sigma^2), L2 sensitivity D.

    [BW18, Thm. 8] (= [DRS19, Cor. 2.13] with mu = D/sigma):

        delta(epsilon) = Phi(D/(2 sigma) - epsilon sigma/D) - e^epsilon Phi(-D/(2 sigma) - epsilon sigma/D),

    returned as an upper bound that holds for every legal input (rounded up, never below the
    exact value, never 0: the exact value is positive): with u = epsilon/mu - mu/2 and
    R(x) = Phi(-x)/phi(x) the Mills ratio, delta = Phi(-u) (1 - R(u + mu)/R(u)), evaluated in
    double precision with a certified error bracket (the measured error bounds of scipy's
    erfc/erfcx, every rounding accounted for, inputs taken exactly: u and mu are computed in
    rational arithmetic and rounded outwards); when the bracket is wider than about 1e-12
    relative (cancellation: mu small against u) the difference is recomputed in mpmath at a
    working precision that keeps 20 significant digits.
    """
    sigma = check_positive("sigma", sigma)
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive("sensitivity", sensitivity)
    return _gauss_delta_up(sensitivity, sigma, epsilon)


def gaussian_epsilon_lower(mu_num: float, mu_den: float, delta: float) -> float:
    """A certified LOWER bound on the exact epsilon(delta) of the Gaussian mechanism with
    mu = mu_num/mu_den: a float e with certified lower bound on delta(e) > delta (so the exact
    root lies above e), within 2^-46 relative of the upper root :func:`_gaussian_min_epsilon`
    plus the width of the certified delta bracket. 0 when delta(0) may be <= delta."""
    hi = _gaussian_min_epsilon(mu_num, mu_den, delta)
    if hi == 0.0:
        return 0.0

    def low_above(e: float) -> bool:  # certified: exact delta(e) > delta
        return _gauss_delta_bounds(mu_num, mu_den, e, need_lower=True)[0] > delta

    if not math.isfinite(hi):
        hi = sys.float_info.max
        if low_above(hi):
            return hi
    if not low_above(0.0):
        return 0.0
    w = max(hi * 2.0**-40, 1e-300)
    lo = 0.0
    for _ in range(12):
        cand = hi - w
        if cand <= 0.0:
            break
        if low_above(cand):
            lo = cand
            break
        w *= 64.0
    lo, _ = bisect_float(lambda e: not low_above(e), lo, hi)
    return lo


def _gaussian_min_epsilon(mu_num: float, mu_den: float, delta: float) -> float:
    """Smallest float epsilon (to 2^-52 relative) with ``_gauss_delta_up(mu_num, mu_den, epsilon) <= delta``.

    An approximate root (Brent's method on :func:`_gauss_log_delta_approx`) seeds a narrow
    bracket [lo, hi] with lo certified infeasible and hi certified feasible, which is then
    bisected on the float grid (:func:`dpaudit.core.numeric.bisect_float`). Every loop has a
    fixed iteration bound; the returned value is always a point at which the certified upper
    bound on delta was evaluated and found <= delta (so the exact delta there is <= delta).
    ``inf`` when no finite epsilon qualifies.
    """
    mu_hi = next_up(mu_num / mu_den)
    if mu_hi == math.inf:
        return math.inf

    def ok(e: float) -> bool:
        return _gauss_delta_up(mu_num, mu_den, e) <= delta

    if ok(0.0):
        return 0.0
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
        hi = sys.float_info.max
        if not ok(hi):
            return math.inf
    lo = 0.0
    # seed: approximate root
    log_delta = math.log(delta)

    def g(e: float) -> float:
        return _gauss_log_delta_approx(mu_hi, e) - log_delta

    e0 = None
    try:
        if g(0.0) > 0.0 > g(hi):
            e0 = optimize.brentq(g, 0.0, hi, xtol=1e-300, rtol=1e-13, maxiter=200)
    except (ValueError, RuntimeError, OverflowError, ZeroDivisionError):
        e0 = None
    if e0 is not None and 0.0 < e0 < hi:
        w = max(e0 * 2.0**-36, 1e-300)
        for _ in range(12):
            cand = e0 + w
            if cand >= hi:
                break
            if ok(cand):
                hi = cand
                break
            w *= 64.0
        w = max(e0 * 2.0**-36, 1e-300)
        for _ in range(12):
            cand = e0 - w
            if cand <= lo:
                break
            if not ok(cand):
                lo = cand
                break
            w *= 64.0
    _, hi = bisect_float(ok, lo, hi, rel=2.0**-52)
    return hi


def gaussian_epsilon(sigma, delta, sensitivity=1.0) -> float:
    """Exact (smallest) epsilon at ``delta`` of one Gaussian mechanism [BW18, Thm. 8].

    The smallest float epsilon (to 2^-52 relative) at which the certified upper bound
    :func:`gaussian_delta` is ``<= delta``: a bracketed root (seeded by Brent's method on a fast
    approximation, then bisection on the float grid, every loop bounded) whose final point is
    always one where the upper bound was evaluated and met the target, so the exact delta of the
    returned epsilon is <= delta. 0 if delta(0) <= delta; ``inf`` if no finite epsilon suffices
    (sensitivity/sigma beyond the float range or the root beyond 1.8e308).
    """
    sigma = check_positive("sigma", sigma)
    delta = check_delta(delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    return _gaussian_min_epsilon(sensitivity, sigma, delta)


def gdp_delta(mu, epsilon) -> float:
    """delta(epsilon) of a mu-GDP mechanism [DRS19, Cor. 2.13]:
    ``Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2)`` (= :func:`gaussian_delta`
    with sigma/sensitivity = 1/mu); 0 for mu = 0. An upper bound (see :func:`gaussian_delta`)."""
    mu = check_nonnegative("mu", mu)
    epsilon = check_epsilon(epsilon)
    if mu == 0.0:
        return 0.0
    return _gauss_delta_up(mu, 1.0, epsilon)


def gdp_epsilon(mu, delta) -> float:
    """Smallest epsilon with mu-GDP => (epsilon, delta)-DP [DRS19, Cor. 2.13] (see
    :func:`gaussian_epsilon`); rounded up."""
    mu = check_nonnegative("mu", mu)
    delta = check_delta(delta)
    if mu == 0.0:
        return 0.0
    return _gaussian_min_epsilon(mu, 1.0, delta)


def gdp_mu(epsilon, delta) -> float:
    """The mu whose GDP curve passes through (epsilon, delta) [DRS19, Cor. 2.13].

    delta_mu(epsilon) is increasing in mu, so this is the largest mu such that mu-GDP implies
    (epsilon, delta)-DP: the largest float mu (to 2^-46 relative) at which the certified upper
    bound :func:`gdp_delta` is ``<= delta`` (Brent's method on a fast approximation in log mu
    seeds a bracket, then bisection on the float grid; every loop bounded). The returned mu is
    always one at which the bound was evaluated and met the target. 0 when no positive mu does.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)

    def bad(m: float) -> bool:
        return _gauss_delta_up(m, 1.0, epsilon) > delta

    lo, hi = 0.0, sys.float_info.max
    if not bad(TINY):
        lo = TINY
    else:
        return 0.0
    log_delta = math.log(delta)

    def g(t: float) -> float:
        return _gauss_log_delta_approx(math.exp(t), epsilon) - log_delta

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
    lo, _ = bisect_float(bad, lo, hi)
    return lo
