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

The formulas are those of ``../shared/reference/accounting.md`` sections 5, 6 and 7.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from dpaudit.core.numeric import round_down, round_up
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
    """Per-order epsilon of [BBGHS20, Thm. 21] / [CKS20, Prop. 12]:

        epsilon(alpha) = r + log((alpha - 1)/alpha) - (log delta + log alpha)/(alpha - 1),

    with epsilon = r at alpha = inf (D_inf is pure DP) and inf where r = inf. Not yet clipped
    at 0 and not rounded.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        finite_order = np.isfinite(orders)
        eps = rdp + _log_ratio_alpha(orders) - (log_delta + np.log(orders)) / (orders - 1.0)
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
        finite_order = np.isfinite(orders)
        log_balle = (orders - 1.0) * (rdp - epsilon + _log_ratio_alpha(orders)) - np.log(orders)
        log_balle = np.where(finite_order, log_balle, np.where(rdp <= epsilon, -math.inf, 0.0))
        log_balle = np.where(np.isinf(rdp), 0.0, log_balle)
        log_tv = np.where(rdp == 0.0, -math.inf, log_tv)
        log_d = np.minimum(np.minimum(log_tv, log_balle), 0.0)
    i = int(np.argmin(log_d))
    return min(1.0, _exp_up(float(log_d[i]))), float(orders[i])


# ---------------------------------------------------------------------------------------------
# zCDP / tCDP -> (epsilon, delta)
# ---------------------------------------------------------------------------------------------
def _cks_epsilon_at(t: float, rho: float, log_delta: float) -> float:
    """[CKS20, Prop. 12] epsilon at alpha = 1 + t for the curve r(alpha) = rho * alpha."""
    alpha = 1.0 + t
    # log((alpha-1)/alpha) = -log(1 + 1/t)
    return alpha * rho - math.log1p(1.0 / t) - (log_delta + math.log1p(t)) / t


def _cks_epsilon(rho: float, omega: float, delta: float) -> float:
    """min over alpha in (1, omega] of the Balle/CKS conversion of (alpha, rho*alpha)-RDP.

    With t = alpha - 1 the derivative of the objective has the sign of
    ``g(t) = rho t^2 + log(1 + t) - log(1/delta)``, increasing in t; the minimiser is its root,
    capped at omega - 1 (the objective is unimodal). The tCDP bound holds at alpha = omega too,
    since D_alpha is non-decreasing and lower semicontinuous, hence left-continuous, in alpha.
    Any alpha gives a valid bound, so the accuracy of the root affects tightness only.
    """
    if rho == 0.0:
        return 0.0
    if rho <= _tv_rho_threshold(delta):  # KL <= rho (alpha -> 1): TV fallback gives (0, delta)
        return 0.0
    log_delta = math.log(delta)
    L = -log_delta

    def g(t):
        return rho * t * t + math.log1p(t) - L

    t_hi = min(math.sqrt(L / rho), math.expm1(min(L, _MAX_EXP_ARG)))
    t_hi = max(t_hi, 1e-300)
    while g(t_hi) < 0:
        t_hi *= 2.0
    t_star = optimize.brentq(g, 0.0, t_hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    if t_star <= 0.0:
        t_star = min(t_hi, 1e-300)
    t_star = min(t_star, omega - 1.0)
    return _up(_cks_epsilon_at(t_star, rho, log_delta))


def zcdp_to_dp(rho, delta, method: str = "cks") -> float:
    """epsilon such that a rho-zCDP mechanism is (epsilon, delta)-DP.

    ``method="bs"``: [BS16, Prop. 1.3] ``epsilon = rho + 2 sqrt(rho log(1/delta))``.

    ``method="cks"`` (default): [CKS20, Cor. 13], the optimal conversion for a generic
    rho-zCDP mechanism, ``epsilon = min_{alpha > 1} alpha*rho + log((alpha-1)/alpha)
    - (log(delta) + log(alpha))/(alpha-1)``, minimised exactly over continuous alpha (the
    minimiser solves ``rho (alpha-1)^2 + log(alpha) = log(1/delta)``); additionally
    epsilon = 0 when the [TV] bound ``sqrt(1 - exp(-rho)) <= delta`` holds (KL <= rho).

    Parameters
    ----------
    rho : float >= 0
    delta : float in (0, 1)
    method : {"cks", "bs"}

    Returns
    -------
    epsilon >= 0, rounded up.
    """
    rho = check_nonnegative("rho", rho)
    delta = check_delta(delta)
    _check_method(method, ZCDP_METHODS)
    if method == "bs":
        if rho == 0.0:
            return 0.0
        return round_up(rho + 2.0 * math.sqrt(rho * -math.log(delta)))
    return _cks_epsilon(rho, math.inf, delta)


def _cks_log_delta(rho: float, omega: float, epsilon: float) -> float:
    """log of min over alpha in (1, omega] of the [CKS20, Prop. 12] delta of rho*alpha-RDP:

        log delta(alpha) = (alpha-1)(alpha*rho - epsilon) + alpha*log(1 - 1/alpha) - log(alpha-1).

    With alpha = 1 + e^u the derivative in alpha, ``(2 alpha - 1) rho - epsilon +
    log(1 - 1/alpha)``, becomes ``h(u) = (1 + 2e^u) rho - epsilon + u - log(1 + e^u)``, increasing
    in u (evaluated as ``... - log(1 + e^-u)``); its root (capped at log(omega - 1)) is the minimiser. Working in u keeps alpha close
    to 1 representable (large rho).
    """

    def h(u):
        # u - log(1 + e^u) = -log(1 + e^-u), written without cancellation
        return (1.0 + 2.0 * math.exp(u)) * rho - epsilon - _softplus(-u)

    u_lo = min(0.0, epsilon - 3.0 * rho) - 1.0          # h(u_lo) < 0 (see docstring of caller)
    u_hi = math.log(max(1.0, (epsilon + 1.0) / (2.0 * rho)))  # h(u_hi) > 0
    u_hi = min(u_hi, _MAX_EXP_ARG)
    if h(u_hi) <= 0.0:
        u_star = u_hi
    else:
        u_star = optimize.brentq(h, u_lo, u_hi, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500)
    if math.isfinite(omega):
        u_star = min(u_star, math.log(omega - 1.0))
    t = math.exp(u_star)
    if t == 0.0:  # alpha = 1 to double precision: the bound is delta <= 1
        return 0.0
    # (alpha-1)(alpha rho - eps) + alpha log(t/(1+t)) - log t
    #   = t((1+t) rho - eps) - t log(1 + 1/t) - log(1 + t)   (no cancellation for large t)
    log_d = t * ((1.0 + t) * rho - epsilon) - t * math.log1p(1.0 / t) - math.log1p(t)
    if math.isnan(log_d):  # inf - inf: astronomically small delta
        return -math.inf
    return min(log_d, 0.0)


def _tcdp_delta(rho: float, omega: float, epsilon: float) -> float:
    if rho == 0.0:
        return 0.0
    log_d = _cks_log_delta(rho, omega, epsilon)
    log_tv = 0.5 * math.log(-math.expm1(-rho))
    return min(1.0, _exp_up(min(log_d, log_tv)))


def zcdp_delta(rho, epsilon) -> float:
    """delta such that a rho-zCDP mechanism is (epsilon, delta)-DP (CKS optimal conversion).

    [CKS20, Cor. 13]: ``delta = min_{alpha > 1} exp((alpha-1)(alpha*rho - epsilon))/(alpha-1)
    * (1 - 1/alpha)^alpha``, evaluated in log space at the unique root of the derivative
    ``(2 alpha - 1) rho - epsilon + log(1 - 1/alpha)``; also at most the [TV] bound
    ``sqrt(1 - exp(-rho))``. Rounded up; never underflows to 0 for rho > 0.
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

    ``method="bs"`` (default): the closed form of accounting.md section 5 [BDRS18], i.e. the
    [M17, Prop. 3] conversion ``alpha*rho + log(1/delta)/(alpha-1)`` minimised over
    alpha in (1, omega]:

        epsilon = rho + 2 sqrt(rho log(1/delta))          if log(1/delta) <= (omega-1)^2 rho,
        epsilon = rho*omega + log(1/delta)/(omega - 1)    otherwise.

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
    if math.isinf(omega) or L <= (omega - 1.0) ** 2 * rho:
        return round_up(rho + 2.0 * math.sqrt(rho * L))
    return round_up(rho * omega + L / (omega - 1.0))


def dp_to_zcdp(epsilon, delta, method: str = "cks") -> float:
    """Largest rho such that the rho-zCDP conversion stays within (epsilon, delta).

    ``method="bs"``: inverse of [BS16, Prop. 1.3],
    ``rho = (sqrt(log(1/delta) + epsilon) - sqrt(log(1/delta)))^2``.
    ``method="cks"``: the largest rho with ``zcdp_delta(rho, epsilon) <= delta``; the CKS delta
    is increasing in rho, so this is a bisection on ``log zcdp_delta(rho) - log delta`` in
    log(rho), started from the "bs" value (always feasible).

    The result is rounded down and verified: ``zcdp_to_dp(result, delta, method) <= epsilon``
    for "bs" and ``zcdp_delta(result, epsilon) <= delta`` for "cks".
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    _check_method(method, ZCDP_METHODS)
    L = -math.log(delta)
    rho_bs = epsilon * epsilon / (math.sqrt(L + epsilon) + math.sqrt(L)) ** 2
    if method == "bs":
        rho = round_down(rho_bs)
        while rho > 0 and zcdp_to_dp(rho, delta, "bs") > epsilon:
            rho = round_down(rho * (1.0 - 1e-15))
        return max(rho, 0.0)

    def feasible(r: float) -> bool:
        return _tcdp_delta(r, math.inf, epsilon) <= delta

    lo = max(rho_bs, _tv_rho_threshold(delta))
    while lo > 0 and not feasible(lo):  # rounding at the boundary
        lo *= 0.5
    if lo == 0.0:
        if not feasible(1e-300):
            return 0.0
        lo = 1e-300
    hi = 2.0 * lo
    while feasible(hi):
        lo, hi = hi, 2.0 * hi
    # bisection in log(rho); lo is always feasible, hi never
    for _ in range(200):
        if hi / lo - 1.0 < 1e-13:
            break
        mid = math.sqrt(lo * hi)
        if mid <= lo or mid >= hi:
            break
        if feasible(mid):
            lo = mid
        else:
            hi = mid
    return lo


# ---------------------------------------------------------------------------------------------
# Exact Gaussian (Balle-Wang) and GDP
# ---------------------------------------------------------------------------------------------
_EPS = float(np.finfo(float).eps)


def _log_gaussian_delta(s: float, epsilon: float) -> float:
    """log delta(epsilon) of the Gaussian mechanism with noise multiplier s = sigma/sensitivity,
    [BW18, Thm. 8]: delta = Phi(a) - e^eps Phi(b), a = 1/(2s) - eps*s, b = a - 1/s,
    inflated by a bound on its floating-point error (so exp of the result is an upper bound).

    Stable evaluation:

    * a >= 0 (then b < 0): delta = [Phi(a) - Phi(b)] - expm1(eps) Phi(b) with
      Phi(a) - Phi(b) = (erf(a/sqrt2) + erf(-b/sqrt2))/2, no cancellation in the first term;
    * a < 0: with b^2/2 = a^2/2 + eps, delta = exp(-a^2/2)/2 * [erfcx(-a/sqrt2) - erfcx(-b/sqrt2)]
      (scaled complementary error functions; no underflow of the tails).

    The relative error of the difference D = T1 - T2 is at most ~ (T1 + T2)/D times that of the
    terms; the result is multiplied by 1 + 64 eps (T1 + T2)/D.
    """
    a = 0.5 / s - epsilon * s
    b = a - 1.0 / s
    r2 = math.sqrt(2.0)
    if a >= 0.0:
        t1 = 0.5 * (special.erf(a / r2) + special.erf(-b / r2))
        if epsilon > 0.0:
            log_em1 = math.log(math.expm1(epsilon)) if epsilon < 700.0 else epsilon + math.log1p(-math.exp(-epsilon))
            t2 = math.exp(log_em1 + special.log_ndtr(b))
        else:
            t2 = 0.0
        d = t1 - t2
        if not d > 0.0:
            return -math.inf if t1 == 0.0 else math.log(64 * _EPS * (t1 + t2))
        return math.log(d) + math.log1p(64 * _EPS * (t1 + t2) / d)
    h = 1.0 / s
    m = 0.5 * (a + b)
    if h * (abs(m) + 1.0) <= 2.0:
        return _log_gaussian_delta_short(a, b, h, m, epsilon)
    e1 = special.erfcx(-a / r2)
    e2 = special.erfcx(-b / r2)
    d = e1 - e2
    if not d > 0.0:
        # total cancellation: bound the difference by its error
        d_bound = 64 * _EPS * (e1 + e2)
        return -0.5 * a * a - math.log(2.0) + math.log(d_bound)
    return -0.5 * a * a - math.log(2.0) + math.log(d) + math.log1p(64 * _EPS * (e1 + e2) / d)


#: 24-point Gauss-Legendre rule on [-1, 1]
_GL_X, _GL_W = np.polynomial.legendre.leggauss(24)


def _log_gaussian_delta_short(a: float, b: float, h: float, m: float, epsilon: float) -> float:
    """log delta for a < 0 when the interval [b, a] is short (h (|m| + 1) <= 2, m its midpoint).

    There ``erfcx(-a/sqrt2) - erfcx(-b/sqrt2)`` cancels (relative difference ~ h/|a|), so the
    first term is integrated directly:

        Phi(a) - Phi(b) = phi(m) * int_{-h/2}^{h/2} exp(-m t - t^2/2) dt,

    by 24-point Gauss-Legendre in log space. The integrand is entire and varies by at most a
    factor e^{h(|m|+1)/2} <= e over the interval, so the rule's error is below 1e-80 relative
    (remainder (h/2)^49 (24!)^4 / (49 (48!)^3) max|g^(48)|); 1e-15 relative is charged for it.
    Then delta = [Phi(a) - Phi(b)] - expm1(eps) Phi(b), inflated by its rounding error bound.
    """
    t = 0.5 * h * _GL_X
    log_int = math.log(0.5 * h) + float(special.logsumexp(-m * t - 0.5 * t * t, b=_GL_W))
    log_t1 = -0.5 * m * m - 0.5 * math.log(2.0 * math.pi) + log_int
    if epsilon > 0.0:
        log_em1 = math.log(math.expm1(epsilon)) if epsilon < 700.0 else epsilon + math.log1p(-math.exp(-epsilon))
        log_t2 = log_em1 + float(special.log_ndtr(b))
    else:
        log_t2 = -math.inf
    if not log_t2 < log_t1:
        # total cancellation: bound the difference by its error
        return log_t1 + math.log(1e-15 + 64 * _EPS * 2.0)
    r = math.exp(log_t2 - log_t1)  # t2 / t1 in [0, 1)
    log_d = log_t1 + math.log1p(-r)
    # error bound relative to d: (64 eps (t1 + t2) + 1e-15 t1) / d
    rel = (64 * _EPS * (1.0 + r) + 1e-15) / (1.0 - r)
    return log_d + math.log1p(rel)


def gaussian_delta(sigma, epsilon, sensitivity=1.0) -> float:
    """Exact delta(epsilon) of one Gaussian mechanism N(f(x), sigma^2), L2 sensitivity D.

    [BW18, Thm. 8] (= [DRS19, Cor. 2.13] with mu = D/sigma):

        delta(epsilon) = Phi(D/(2 sigma) - epsilon sigma/D) - e^epsilon Phi(-D/(2 sigma) - epsilon sigma/D),

    evaluated stably (see ``_log_gaussian_delta``) and rounded up.
    """
    sigma = check_positive("sigma", sigma)
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive("sensitivity", sensitivity)
    s = sigma / sensitivity
    return min(1.0, _exp_up(_log_gaussian_delta(s, epsilon)))


def _gaussian_epsilon(s: float, delta: float) -> float:
    log_delta = math.log(delta)
    if _exp_up(_log_gaussian_delta(s, 0.0)) <= delta:
        return 0.0

    def f(e):
        return _log_gaussian_delta(s, e) - log_delta

    hi = 0.5 / (s * s) + math.sqrt(2.0 * -log_delta) / s
    hi = max(hi, 1e-300)
    while f(hi) > 0:
        hi *= 2.0
    root = optimize.brentq(f, 0.0, hi, xtol=1e-300, rtol=4 * _EPS, maxiter=500)
    eps = round_up(root)
    while _exp_up(_log_gaussian_delta(s, eps)) > delta:  # certified by the public gaussian_delta
        eps = round_up(eps * (1.0 + 1e-14) + 1e-300)
    return eps


def gaussian_epsilon(sigma, delta, sensitivity=1.0) -> float:
    """Exact (smallest) epsilon at ``delta`` of one Gaussian mechanism [BW18, Thm. 8].

    Root of ``log delta(epsilon) = log(delta)`` (Brent's method on the stable log form of
    :func:`gaussian_delta`, which is decreasing in epsilon), rounded up and verified so that
    ``gaussian_delta(sigma, result) <= delta``; 0 if delta(0) <= delta.
    """
    sigma = check_positive("sigma", sigma)
    delta = check_delta(delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    return _gaussian_epsilon(sigma / sensitivity, delta)


def gdp_delta(mu, epsilon) -> float:
    """delta(epsilon) of a mu-GDP mechanism [DRS19, Cor. 2.13]:
    ``Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2)`` (= :func:`gaussian_delta`
    with sigma/sensitivity = 1/mu); 0 for mu = 0. Rounded up."""
    mu = check_nonnegative("mu", mu)
    epsilon = check_epsilon(epsilon)
    if mu == 0.0:
        return 0.0
    return min(1.0, _exp_up(_log_gaussian_delta(1.0 / mu, epsilon)))


def gdp_epsilon(mu, delta) -> float:
    """Smallest epsilon with mu-GDP => (epsilon, delta)-DP [DRS19, Cor. 2.13]; rounded up."""
    mu = check_nonnegative("mu", mu)
    delta = check_delta(delta)
    if mu == 0.0:
        return 0.0
    return _gaussian_epsilon(1.0 / mu, delta)


def gdp_mu(epsilon, delta) -> float:
    """The mu whose GDP curve passes through (epsilon, delta) [DRS19, Cor. 2.13].

    delta_mu(epsilon) is increasing in mu, so this is the largest mu such that mu-GDP implies
    (epsilon, delta)-DP. Found by Brent's method on ``log delta_mu(epsilon) - log(delta)`` in
    log(mu), then rounded down and verified: ``gdp_delta(result, epsilon) <= delta``.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    log_delta = math.log(delta)

    def f(log_mu):
        return _log_gaussian_delta(math.exp(-log_mu), epsilon) - log_delta

    lo, hi = -1.0, 1.0
    while f(lo) > 0:
        lo -= 2.0 * abs(lo)
        if lo < -700:
            return 0.0
    while f(hi) <= 0:
        hi += 2.0 * abs(hi)
        if hi > 700:
            raise ValueError("gdp_mu: no finite mu found (delta too close to 1)")
    root = optimize.brentq(f, lo, hi, xtol=1e-15, rtol=4 * _EPS, maxiter=500)
    mu = round_down(math.exp(root))
    while mu > 0 and gdp_delta(mu, epsilon) > delta:
        mu = round_down(mu * (1.0 - 1e-14))
    return mu
