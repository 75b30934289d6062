"""Numerical kernels for the RDP of subsampled mechanisms (vectorised over orders).

Every function returns an *upper bound* on the Renyi divergence of order ``alpha`` (rounded up
by the caller), ``inf`` where no finite bound is known, and never emits numpy warnings.

Stability device used throughout.  A subsampled divergence is ``log(A)/(alpha-1)`` with
``A = E[(1 + qX)^alpha]`` and ``E[X] = 0``, so ``A`` is ``1 + O(q^2)`` and ``log(A)`` computed
from ``A`` loses every digit when ``q`` is small.  We compute ``A - 1`` directly as a sum of
non-negative terms (the ``1 + alpha*q*X`` part cancels *exactly* in the algebra, not in floating
point) and then ``log(A) = log1p(A - 1)`` (``logaddexp(0, log(A-1))`` in log space).

References
----------
[MTZ]  Mironov, Talwar, Zhang, "Renyi differential privacy of the sampled Gaussian mechanism",
       arXiv:1908.10530, Sec. 3.3 (integer orders: binomial expansion; fractional orders: the
       two-sided series split at z0 = sigma^2 log(1/q - 1) + 1/2).
[WBK]  Wang, Balle, Kasiviswanathan, "Subsampled Renyi differential privacy and analytical
       moments accountant", AISTATS 2019 (arXiv:1808.00087): Thm. 9 (general bound, sampling
       without replacement, replace-one), Thm. 27 (Gaussian strengthening with forward
       differences), Cor. 10 (fractional orders by interpolating log A).
[ZW]   Zhu & Wang, "Poisson subsampled Renyi differential privacy", ICML 2019, Thm. 6 (general
       upper bound for Poisson subsampling of any RDP mechanism, integer orders).
[KOV]  Kairouz, Oh, Viswanath, "The composition theorem for differential privacy", ICML 2015:
       every epsilon-DP pair is a post-processing of binary randomized response (used for the
       exact dominating pair of a Poisson-subsampled pure-DP mechanism).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import gammaln, gammasgn, log_ndtr, logsumexp

from dpaudit.core.numeric import log_expm1, softplus

__all__ = [
    "expm1mx",
    "expm1mx_over_x2",
    "log1pmx",
    "xlog1pxmx",
    "log_power_moment",
    "poisson_gaussian_rdp",
    "poisson_pure_dp_rdp",
    "poisson_general_rdp",
    "wor_gaussian_rdp",
    "wor_general_rdp",
    "gaussian_central_moments",
    "MAX_INTEGER_ORDER",
]

_EPS = np.finfo(float).eps
#: integer orders above this use a simpler valid bound (the base curve); see callers
MAX_INTEGER_ORDER = 2**16
#: WBK's forward-difference branch is used up to this order (as in dp-accounting 0.6.0)
WOR_MOMENT_MAX_ORDER = 256
#: largest order for which the general (Zhu-Wang / WBK) binomial bounds are summed
GENERAL_MAX_ORDER = 4096


# ---------------------------------------------------------------------------------------------
# stable elementary functions
# ---------------------------------------------------------------------------------------------
def _series(x, coeffs):
    """Horner evaluation of sum_k coeffs[k] x^k."""
    out = np.zeros_like(x)
    for c in coeffs[::-1]:
        out = out * x + c
    return out


_EXPM1MX_COEFFS = [1.0 / math.factorial(k) for k in range(2, 16)]  # x^2 * (1/2! + x/3! + ...)
_LOG1PMX_COEFFS = [(-1.0) ** (k + 1) / k for k in range(2, 34)]  # x^2 * (-1/2 + x/3 - ...)
_XLOG_COEFFS = [(-1.0) ** k / (k * (k - 1)) for k in range(2, 34)]  # x^2 * (1/2 - x/6 + ...)


def expm1mx(x):
    """e^x - 1 - x (>= 0), accurate to a few ulp for all real x (series for |x| < 0.1)."""
    x = np.asarray(x, dtype=float)
    small = np.abs(x) < 0.1
    xs = np.where(small, x, 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        big = np.expm1(x) - x
    big = np.where(np.isposinf(x), np.inf, big)
    return np.where(small, xs * xs * _series(xs, _EXPM1MX_COEFFS), big)


def expm1mx_over_x2(x):
    """(e^x - 1 - x) / x^2 (-> 1/2 at 0), accurate for all real x (series for |x| < 0.1); lets a
    caller factor x^2 out of a product that would underflow."""
    x = np.asarray(x, dtype=float)
    small = np.abs(x) < 0.1
    xs = np.where(small, x, 0.0)
    xb = np.where(small, 1.0, x)
    with np.errstate(over="ignore", invalid="ignore"):
        big = (np.expm1(xb) - xb) / xb / xb
    big = np.where(np.isposinf(x), np.inf, big)
    return np.where(small, _series(xs, _EXPM1MX_COEFFS), big)


def log1pmx(x):
    """log(1 + x) - x (<= 0) for x > -1, accurate for small |x| (series for |x| < 0.25)."""
    x = np.asarray(x, dtype=float)
    small = np.abs(x) < 0.25
    xs = np.where(small, x, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        big = np.log1p(x) - x
    return np.where(small, xs * xs * _series(xs, _LOG1PMX_COEFFS), big)


def xlog1pxmx(x):
    """(1 + x) log(1 + x) - x (>= 0) for x >= -1 (series for |x| < 0.25; value 1 at x = -1)."""
    x = np.asarray(x, dtype=float)
    small = np.abs(x) < 0.25
    xs = np.where(small, x, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        big = (1.0 + x) * np.log1p(x) - x
    big = np.where(x == -1.0, 1.0, big)
    return np.where(small, xs * xs * _series(xs, _XLOG_COEFFS), big)


def log_power_moment(log_w, x, log1p_x, beta):
    """log sum_i w_i (1 + x_i)^beta for weights with sum w_i = 1 and sum w_i x_i = 0.

    Arrays broadcast; the sum runs over the last axis; ``beta`` (shape broadcastable to the
    result with a trailing axis) must lie outside [0, 1] so that every summand of
    ``sum_i w_i h(beta, x_i)``, ``h(beta, x) = (1+x)^beta - 1 - beta*x >= 0``, is non-negative.
    ``h`` is evaluated without cancellation:

    * beta > 1:  h = (1+x) * expm1mx((beta-1) L) + (beta-1) * xlog1pxmx(x),  L = log(1+x)
    * beta < 0:  h = expm1mx(beta L) + beta * log1pmx(x)   (both terms >= 0)

    The sum is formed in log space, ``log(1 + sum w h) = logaddexp(0, logsumexp(log w + log h))``,
    so neither a weight underflowing (w = e^-1000) nor a term overflowing loses the excess over 1
    (the plain log-sum-exp rounds log(1 + 1e-267) to 0); where h itself overflows (huge x,
    beta > 1) ``log h = beta L + log1p(-(1 + beta x) (1+x)^-beta)``. The plain log-sum-exp is
    used only where no finite value results.
    """
    beta = np.asarray(beta, dtype=float)[..., None]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        direct = logsumexp(log_w + beta * log1p_x, axis=-1)
        h_pos = (1.0 + x) * expm1mx((beta - 1.0) * log1p_x) + (beta - 1.0) * xlog1pxmx(x)
        h_neg = expm1mx(beta * log1p_x) + beta * log1pmx(x)
        h = np.where(beta > 1.0, h_pos, h_neg)
        log_h = np.log(h)
        # h overflowed: (1+x)^beta - (1 + beta x) with the second term far below the first
        log_lin = np.where(beta * x < 1e300, np.log1p(beta * x), np.log(beta) + np.log(x))
        alt = beta * log1p_x + np.log1p(-np.exp(log_lin - beta * log1p_x))
        log_h = np.where(np.isposinf(log_h) & (beta > 1.0), alt, log_h)
        log_terms = np.where(np.isneginf(log_w), -np.inf, log_w + log_h)
        stable = np.logaddexp(0.0, logsumexp(log_terms, axis=-1))
    use_stable = np.isfinite(stable)
    return np.where(use_stable, stable, direct)


def _log_comb(n, k):
    """log |C(n, k)| for real n >= 0 and integer k >= 0, with its sign (generalised binomial)."""
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    m = n - k + 1.0
    logc = gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(m)
    sign = gammasgn(m)
    return logc, sign


def _segment_logsumexp(values, starts):
    """log-sum-exp of consecutive segments of a flat array (segments begin at ``starts``)."""
    if values.size == 0:
        return np.empty(0)
    m = np.maximum.reduceat(values, starts)
    lengths = np.diff(np.append(starts, values.size))
    mrep = np.repeat(m, lengths)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        shifted = np.where(np.isfinite(mrep), np.exp(values - mrep), 0.0)
        s = np.add.reduceat(shifted, starts)
        out = m + np.log(s)
    return np.where(np.isneginf(m), -np.inf, np.where(np.isposinf(m), np.inf, out))


def _log_comb_magnitude(n, k):
    """Sum of the magnitudes of the three log-gamma values in :func:`_log_comb` (its absolute
    rounding error is a few eps times this)."""
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    return np.abs(gammaln(n + 1.0)) + np.abs(gammaln(k + 1.0)) + np.abs(gammaln(n - k + 1.0))


def _segment_sum_error(terms, scaled_magnitudes, starts):
    """Upper bound on the error of log(sum exp(terms)) over each segment, when each term's
    logarithm errs by at most 4 times ``scaled_magnitudes`` (its magnitude times eps, formed
    term by term so that it cannot overflow) + 8 eps: the relative error of a sum of positive
    terms is at most the largest relative error of a term plus the summation error."""
    lengths = np.diff(np.append(starts, terms.size))
    mag = np.where(np.isfinite(terms), scaled_magnitudes, 0.0)
    worst = np.maximum.reduceat(mag, starts) if terms.size else np.empty(0)
    return 4.0 * worst + 8.0 * _EPS + 2.0 * _EPS * (lengths + 2.0)


def _integer_binomial_log_excess(q, orders, log_coef_fn):
    """log(A_alpha - 1) for integer orders, A - 1 = sum_{j>=2} C(a,j) q^j (1-q)^(a-j) exp(c_j),
    as an upper bound: every term is positive, and the rounding errors of the logarithms of the
    terms (proportional to their magnitudes: log-gammas, j log q, ...) are added.

    ``log_coef_fn(j, a)`` returns log c_j (arrays, broadcast over the flattened (order, j)
    pairs); ``orders`` are integers >= 2.
    """
    orders = np.asarray(orders, dtype=np.int64)
    lengths = orders - 1  # j = 2..a
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    a = np.repeat(orders, lengths).astype(float)
    j = (np.arange(lengths.sum()) - np.repeat(starts, lengths) + 2).astype(float)
    logc, _ = _log_comb(a, j)
    with np.errstate(divide="ignore", invalid="ignore"):
        lq, l1q = j * math.log(q), (a - j) * math.log1p(-q)
        coef = log_coef_fn(j, a)
        terms = logc + lq + l1q + coef
        mag = _EPS * (_log_comb_magnitude(a, j) + np.abs(lq) + np.abs(l1q)) + 2.0 * _EPS * np.abs(coef) + _EPS * np.abs(terms)
    out = _segment_logsumexp(terms, starts)
    return out + _segment_sum_error(terms, mag, starts)


# ---------------------------------------------------------------------------------------------
# Poisson-subsampled Gaussian [MTZ]
# ---------------------------------------------------------------------------------------------
def _pg_integer_log_a(q, sigma, orders):
    """log A_alpha for integer orders alpha >= 2 ([MTZ] binomial sum, A - 1 form)."""
    c = 1.0 / (2.0 * sigma**2)

    def coef(j, a):  # expm1((j^2 - j) c) >= 0: the j=0,1 binomial terms cancel the "1"
        with np.errstate(over="ignore"):  # (inf: the term, and the bound, are inf)
            return log_expm1(np.asarray((j * j - j) * c, dtype=float))

    return softplus(np.asarray(_integer_binomial_log_excess(q, orders, coef), dtype=float))


def _pg_fractional_log_a(q, sigma, alphas, max_terms=1 << 15):
    """Upper bound on log A_alpha at fractional orders by the signed two-sided series [MTZ].

    A - 1 is assembled as a signed sum whose pieces are all O(q^2) or exponentially small:

        A - 1 = P0(z<=z0) h(a, -q) + a q P1(z<=z0) expm1((a-1) log1p(-q))
                + sum_{i>=2} s0_i + sum_{i>=0} s1_i - (1 - a q) P0(z>z0) - a q P1(z>z0)

    where P0/P1 are N(0, s^2)/N(1, s^2) probabilities and s0_i, s1_i are the [MTZ] terms.
    The floating-point error (64 eps times the sum of |terms|, plus 4 eps m_i |t_i| for each
    series term, m_i the summed magnitudes of the logarithms inside it, since exp(l) inherits
    l's absolute error) and the series tail (bounded
    by N times the last terms' magnitude; terms decay like i^-(a+2)) are *added* to A - 1,
    so the result is an upper bound.  Returns (log_a, ok, budget) where ok=False marks orders
    for which the error budget exceeded 1e-6 relative (callers then use another bound) and
    budget is the relative error budget that was added to A - 1.
    """
    alphas = np.asarray(alphas, dtype=float)
    s2 = sigma * sigma
    c = 1.0 / (2.0 * s2)
    z0 = s2 * (math.log1p(-q) - math.log(q)) + 0.5
    lq, l1q = math.log(q), math.log1p(-q)
    a = alphas[:, None]
    log_a = np.full(alphas.shape, np.inf)
    ok = np.zeros(alphas.shape, dtype=bool)
    budget = np.full(alphas.shape, np.inf)

    # closed pieces (log |.|, sign)
    lp0_r0 = log_ndtr(z0 / sigma)
    lp1_r0 = log_ndtr((z0 - 1.0) / sigma)
    lp0_r1 = log_ndtr(-z0 / sigma)
    lp1_r1 = log_ndtr((1.0 - z0) / sigma)
    with np.errstate(divide="ignore"):
        # h(a, -q) = (1-q)^a - 1 + a q >= 0 as a sum of two non-negative terms (the form
        # expm1mx(a L) + a log1pmx(-q) cancels to a negative value for a next to 1)
        h_minus_q = ((1.0 - q) * expm1mx((alphas - 1.0) * l1q)
                     + (alphas - 1.0) * xlog1pxmx(np.full_like(alphas, -q)))
        p_a = lp0_r0 + np.log(h_minus_q)
        b_val = -np.expm1((alphas - 1.0) * l1q)  # = 1 - (1-q)^(a-1) > 0
        p_b = math.log(q) + np.log(alphas) + lp1_r0 + np.log(b_val)
        one_m_aq = 1.0 - alphas * q
        p_c = lp0_r1 + np.log(np.abs(one_m_aq))
        p_d = math.log(q) + np.log(alphas) + lp1_r1
    fixed_log = np.stack([p_a, p_b, p_c, p_d], axis=1)
    fixed_sign = np.stack([np.ones_like(alphas), -np.ones_like(alphas), -np.sign(one_m_aq),
                           -np.ones_like(alphas)], axis=1)

    n_terms = int(min(max(np.ceil(alphas.max()) + 64, 128), max_terms))
    active = np.ones(alphas.shape, dtype=bool)
    while True:
        rows = np.flatnonzero(active)
        ar = a[rows]
        i = np.arange(n_terms, dtype=float)[None, :]
        j = ar - i
        logc, sgn = _log_comb(ar, i)
        with np.errstate(divide="ignore", invalid="ignore"):
            n0 = log_ndtr((z0 - i) / sigma)
            n1 = log_ndtr((j - z0) / sigma)
            l0 = logc + i * lq + j * l1q + (i * i - i) * c + n0
            l1 = logc + j * lq + i * l1q + (j * j - j) * c + n1
            # magnitude of the summed logarithms: exp(l) carries a relative rounding error of
            # about eps times this (each log component is accurate to eps relative)
            m_t = (np.abs(logc) + np.abs(i * lq) + np.abs(j * l1q) + np.abs(i * i - i) * c
                   + np.abs(j * j - j) * c + np.abs(n0) + np.abs(n1))
            m_t = np.where(np.isfinite(m_t), m_t, 0.0)
        l0 = np.where(i >= 2, l0, -np.inf)  # i = 0, 1 are inside the closed pieces
        lt = np.logaddexp(l0, l1)  # |s0_i + s1_i| (same sign sgn_i)
        st = np.where(np.isneginf(lt), 0.0, sgn * np.ones_like(lt))
        logs = np.concatenate([fixed_log[rows], lt], axis=1)
        signs = np.concatenate([fixed_sign[rows], st], axis=1)
        signs = np.where(np.isneginf(logs), 0.0, signs)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            val, vsign = logsumexp(logs, b=signs, axis=1, return_sign=True)
            total_abs = logsumexp(logs, b=np.abs(signs), axis=1)
        # tail: for i > alpha the terms alternate in sign; once |t_i| decreases the sum lies
        # between the last two partial sums, so S_N + max(0, -t_N) is an upper bound.
        tail_l, tail_s = lt[:, -8:], st[:, -8:]
        alternating = np.all(tail_s[:, 1:] * tail_s[:, :-1] < 0, axis=1)
        with np.errstate(invalid="ignore"):  # -inf - -inf = nan compares False: not "decreasing"
            decreasing = np.all(np.diff(tail_l, axis=1) < 0, axis=1)
        negligible = np.all(np.isneginf(tail_l), axis=1) | (tail_l[:, -1] < total_abs - 745.0)
        last_l, last_s = lt[:, -1], st[:, -1]
        conv = ((alternating & decreasing & (n_terms - 8 > ar[:, 0] + 1.0)
                 & (last_l < val + math.log(1e-11))) | negligible)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            tail = np.where((last_s < 0) & ~negligible, last_l, -np.inf)
            # rounding: 64 eps on every piece, plus eps * 4 m_t on each series term
            term_err = logsumexp(lt + np.log(4.0 * _EPS * m_t + 1e-300), axis=1)
            err = np.logaddexp(np.logaddexp(math.log(64 * _EPS) + total_abs, term_err), tail)
            rel_err = np.exp(err - val)
        good = (vsign > 0) & conv & np.isfinite(val) & (rel_err < 1e-6)
        log_excess = val + np.log1p(np.where(good, rel_err, 0.0))
        done = conv | (n_terms >= max_terms)
        log_a[rows[done]] = np.where(good, softplus(np.asarray(log_excess, dtype=float)), np.inf)[done]
        ok[rows[done]] = good[done]
        budget[rows[done]] = np.where(good, rel_err, np.inf)[done]
        active[rows[done]] = False
        if not np.any(active):
            break
        n_terms = min(2 * n_terms, max_terms)
    return log_a, ok, budget


@functools.lru_cache(maxsize=8)
def _hermite_rule(n: int):
    """Gauss-Hermite nodes and weights for E[f(u)], u ~ N(0, 1) (probabilists' rule)."""
    u, w = np.polynomial.hermite_e.hermegauss(n)
    return u, w / math.sqrt(2.0 * math.pi)


def _pg_log_a_gauss_hermite(q, sigma, alphas, nodes=(160, 240)):
    """log A_alpha (an upper bound) by Gauss-Hermite quadrature.

    With u ~ N(0, 1) and x = q expm1(u/sigma - 1/(2 sigma^2)) (the z = sigma u form of [MTZ]'s
    A_alpha), A = E[(1 + x)^alpha] and E[x] = 0 exactly, so

        A - 1 = E[h(x)],   h(x) = (1 + x)^alpha - 1 - alpha x = expm1mx(L) + alpha log1pmx(x),
        L = alpha log1p(x),

    a quadrature of the non-negative function h (convexity): no cancellation against 1 nor
    between first-order terms. The integrand is analytic in the strip |Im u| < pi sigma, so for
    sigma >= 1 Gauss-Hermite converges geometrically; the value is accepted only if two rules
    (160 and 240 nodes) agree to 1e-11 relative, and it is inflated by that difference, by
    1e-10 relative, and by a rounding bound of 16 eps alpha/(alpha - 1) relative (the two terms
    of h cancel by at most that factor). Orders where the rules disagree get ``inf`` (the
    caller keeps its other bounds). Returns log A.
    """
    alphas = np.asarray(alphas, dtype=float)
    out = np.full(alphas.shape, np.inf)
    vals = []
    for n in nodes:
        u, w = _hermite_rule(n)
        x = q * np.expm1(u / sigma - 0.5 / (sigma * sigma))  # > -q >= -1
        with np.errstate(over="ignore", invalid="ignore"):
            big_l = alphas[:, None] * np.log1p(x)[None, :]
            h = expm1mx(big_l) + alphas[:, None] * log1pmx(x)[None, :]
        vals.append(np.maximum(h, 0.0) @ w)
    v1, v2 = vals
    with np.errstate(invalid="ignore", divide="ignore"):
        good = np.isfinite(v1) & np.isfinite(v2) & (v2 > 0) & (np.abs(v1 - v2) <= 1e-11 * np.abs(v2))
        rel = np.abs(v1 - v2) / np.abs(v2) + 1e-10 + 16 * _EPS * alphas / (alphas - 1.0)
        excess = np.maximum(v1, v2) * (1.0 + rel)
        out[good] = np.log1p(excess[good])
    return out


def _interpolated_log_a(alphas, int_log_a_fn):
    """Upper bound on log A_alpha at fractional orders by convexity of alpha -> log A_alpha.

    log A_alpha = log E_Q[(P/Q)^alpha] is a cumulant generating function, hence convex in
    alpha, and log A_1 = 0; linear interpolation between floor and ceil is an upper bound
    ([WBK] Cor. 10 uses the same argument).
    """
    alphas = np.asarray(alphas, dtype=float)
    lo = np.floor(alphas)
    hi = lo + 1.0
    ints = np.unique(np.concatenate([lo[lo >= 2], hi]))
    vals = dict(zip(ints.tolist(), np.asarray(int_log_a_fn(ints.astype(np.int64))).tolist()))
    vlo = np.array([0.0 if x < 2 else vals[x] for x in lo.tolist()])
    vhi = np.array([vals[x] for x in hi.tolist()])
    t = alphas - lo
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(vhi), np.inf, (1.0 - t) * vlo + t * vhi)


def poisson_gaussian_rdp(q: float, sigma: float, orders) -> np.ndarray:
    """RDP of the Poisson-subsampled Gaussian mechanism, add/remove neighbours [MTZ].

    ``r(alpha) = log(A_alpha)/(alpha - 1)`` with ``A_alpha = E_{mu0}[(mu/mu0)^alpha]``,
    ``mu0 = N(0, sigma^2)``, ``mu = (1-q) mu0 + q N(1, sigma^2)`` ([MTZ] Sec. 3; this direction
    dominates D(mu0 || mu)).  ``sigma`` is the noise multiplier (std / sensitivity).

    * integer alpha: ``A - 1 = sum_{k>=2} C(a,k) q^k (1-q)^(a-k) expm1((k^2-k)/(2 sigma^2))``
      (the binomial sum of [MTZ] Sec. 3.3 with the k = 0, 1 terms cancelled exactly);
    * fractional alpha: the signed two-sided series of [MTZ] Sec. 3.3 (see
      :func:`_pg_fractional_log_a`), with its error budget added; for sigma >= 1 and alpha <= 64
      also Gauss-Hermite quadrature with its error inflation (:func:`_pg_log_a_gauss_hermite`;
      it is what stays accurate for large sigma with alpha near 1, where the series converges
      slowly); and the convex interpolation of log A between integer orders (tiny q); the
      minimum of these upper bounds is returned;
    * q = 0 -> 0; q = 1 -> alpha/(2 sigma^2); alpha = inf -> inf; integer orders above
      ``MAX_INTEGER_ORDER`` -> the unsampled value alpha/(2 sigma^2) (valid by quasi-convexity).

    Inputs are assumed validated (0 <= q <= 1, sigma > 0, orders > 1). Not rounded.
    """
    orders = np.asarray(orders, dtype=float)
    with np.errstate(over="ignore"):  # alpha/(2 sigma^2) beyond the float range: inf
        base = orders / (2.0 * sigma**2)
    if q == 0.0:
        return np.zeros(orders.shape)
    if q == 1.0:
        return base
    out = np.full(orders.shape, np.inf)
    finite = np.isfinite(orders)
    is_int = finite & (orders == np.floor(orders)) & (orders <= MAX_INTEGER_ORDER)
    huge = finite & (orders > MAX_INTEGER_ORDER)
    frac = finite & ~is_int & ~huge
    if np.any(is_int):
        ints = orders[is_int].astype(np.int64)
        out[is_int] = _pg_integer_log_a(q, sigma, ints) / (ints - 1.0)
    if np.any(frac):
        al = orders[frac]
        small = al <= 4096.0
        res = np.full(al.shape, np.inf)
        if np.any(small):
            la, _, budget = _pg_fractional_log_a(q, sigma, al[small])
            gh = (al[small] <= 64.0) & (budget > 1e-10)
            if sigma >= 1.0 and np.any(gh):
                # where the series did not converge or its error budget is large (large sigma,
                # alpha near 1), Gauss-Hermite quadrature is accurate: keep the smaller bound
                la = la.copy()
                la[gh] = np.minimum(la[gh], _pg_log_a_gauss_hermite(q, sigma, al[small][gh]))
            res[small] = la
        interp = _interpolated_log_a(al, lambda ints: _pg_integer_log_a(q, sigma, ints))
        res = np.minimum(res, interp)
        out[frac] = res / (al - 1.0)
    out[huge] = base[huge]
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(orders), np.minimum(out, base), np.inf)


# ---------------------------------------------------------------------------------------------
# Poisson subsampling of pure-DP and general RDP mechanisms
# ---------------------------------------------------------------------------------------------
def poisson_pure_dp_rdp(q: float, epsilon: float, orders) -> np.ndarray:
    """Exact RDP of the dominating pair of a Poisson-subsampled epsilon-DP mechanism.

    By [KOV] (Blackwell), any epsilon-DP pair (P, Q) is a post-processing K of binary
    randomized response (RR1, RR0) with p = e^eps/(1+e^eps); the same K maps
    q RR1 + (1-q) RR0 to q P + (1-q) Q, so by data processing both
    D_alpha(qP + (1-q)Q || Q) and D_alpha(Q || qP + (1-q)Q) are at most the two-point values
    for M = q RR1 + (1-q) RR0 versus RR0 = (1-p, p).  With u = q(e^eps - 1),
    v = q(e^-eps - 1) (so (1-p)u + pv = 0):

        add:    log[(1-p)(1+u)^alpha     + p(1+v)^alpha    ] / (alpha - 1)
        remove: log[(1-p)(1+u)^(1-alpha) + p(1+v)^(1-alpha)] / (alpha - 1)

    The maximum of the two is returned; alpha = inf gives log(1 + q(e^eps - 1)).  Tight for
    randomized response itself.  Evaluated by :func:`log_power_moment` (no cancellation).
    """
    orders = np.asarray(orders, dtype=float)
    if q == 0.0 or epsilon == 0.0:
        return np.zeros(orders.shape)
    log_1mp = -np.logaddexp(0.0, epsilon)  # log(1-p)
    log_p = -np.logaddexp(0.0, -epsilon)
    # u = q (e^eps - 1) through logs: finite whenever it is representable (1e134 for q = 1e-300,
    # eps = 1000), so that the accurate evaluation applies
    log_u = math.log(q) + float(log_expm1(np.asarray(epsilon, dtype=float)))
    u = math.exp(log_u) if log_u < 709.0 else math.inf
    v = q * math.expm1(-epsilon)
    # log(1+u) = log(1 - q + q e^eps), log(1+v) = log(1 - q + q e^-eps); log1p(u) is accurate
    # (the logaddexp form cancels when q e^eps << 1: 1e-9 relative error at q = 7e-8, eps = 1e-6)
    if q == 1:
        l1u = epsilon
    elif math.isfinite(u):
        l1u = math.log1p(u)
    else:
        l1u = float(np.logaddexp(math.log1p(-q), math.log(q) + epsilon))
    l1v = math.log1p(v) if q < 1 else -epsilon
    log_w = np.array([log_1mp, log_p])
    x = np.array([u, v])
    l1x = np.array([l1u, l1v])
    out = np.full(orders.shape, l1u)
    fin = np.isfinite(orders)
    al = orders[fin]
    if al.size:
        add = log_power_moment(log_w, x, l1x, al)
        rem = log_power_moment(log_w, x, l1x, 1.0 - al)
        # floating-point error: measured below 16 eps relative against 60-digit mpmath (6,000
        # random (q, eps, alpha), tests/numerics/test_sweeps.py); inflated by 64 eps
        out[fin] = np.maximum(add, rem) / (al - 1.0) * (1.0 + 64.0 * _EPS)
    return np.minimum(out, l1u * (1.0 + 4.0 * _EPS))


def poisson_general_rdp(q: float, base_rdp, orders) -> np.ndarray:
    """[ZW] Thm. 6: Poisson subsampling of any mechanism with RDP curve eps(.), integer alpha>=2:

        A <= (1-q)^(a-1)(a q - q + 1) + C(a,2) q^2 (1-q)^(a-2) e^{eps(2)}
             + 3 sum_{l=3}^{a} C(a,l) (1-q)^(a-l) q^l e^{(l-1) eps(l)}.

    Since the binomial weights sum to 1, the first term equals 1 - sum_{l>=2} C(a,l) q^l
    (1-q)^(a-l), so A - 1 <= C(a,2) q^2 (1-q)^(a-2) expm1(eps(2)) + sum_{l>=3} C(a,l) q^l
    (1-q)^(a-l) (3 e^{(l-1) eps(l)} - 1), a sum of non-negative terms (evaluated as such).
    Fractional alpha uses the bound at ceil(alpha) (RDP is non-decreasing in alpha); orders
    above ``GENERAL_MAX_ORDER`` and alpha = inf get ``inf`` (the caller takes the minimum with
    the base curve).  ``base_rdp(orders)`` must return the base curve at integer orders.
    """
    orders = np.asarray(orders, dtype=float)
    if q == 0.0:
        return np.zeros(orders.shape)
    out = np.full(orders.shape, np.inf)
    ceil = np.ceil(orders)
    use = np.isfinite(orders) & (ceil <= GENERAL_MAX_ORDER)
    if not np.any(use):
        return out
    ints = np.unique(np.maximum(ceil[use], 2.0)).astype(np.int64)
    amax = int(ints.max())
    eps_l = np.asarray(base_rdp(np.arange(2, amax + 1, dtype=float)), dtype=float)  # index l-2

    def coef(j, a):
        jj = j.astype(np.int64)
        e = eps_l[jj - 2]
        with np.errstate(over="ignore", invalid="ignore"):
            two = log_expm1(np.asarray(e, dtype=float))
            # log(3 e^{(l-1)e} - 1) = (l-1)e + log(3 - e^{-(l-1)e}) >= 0
            three = (j - 1.0) * e + np.log(3.0 - np.exp(-(j - 1.0) * e))
        val = np.where(jj == 2, two, three)
        return np.where(np.isinf(e), np.inf, val)

    if q == 1.0:
        return np.where(use, np.inf, out)  # caller uses the base curve
    la = softplus(np.asarray(_integer_binomial_log_excess(q, ints, coef), dtype=float))
    vals = dict(zip(ints.tolist(), (la / (ints - 1.0)).tolist()))
    out[use] = [vals[max(int(x), 2)] for x in ceil[use].tolist()]
    return out


# ---------------------------------------------------------------------------------------------
# Sampling without replacement [WBK]
# ---------------------------------------------------------------------------------------------
def _wbk_j2_log(eps2, eps_inf):
    """log of min{4(e^{eps(2)} - 1), e^{eps(2)} min{2, (e^{eps(inf)} - 1)^2}} ([WBK] Thm. 9)."""
    a = math.log(4.0) + float(log_expm1(np.asarray(eps2, dtype=float)))
    b = eps2 + min(math.log(2.0), 2.0 * float(log_expm1(np.asarray(eps_inf, dtype=float)))) if eps_inf > 0 else -math.inf
    return min(a, b)


def wor_general_rdp(q: float, base_rdp, eps_inf: float, orders) -> np.ndarray:
    """[WBK] Thm. 9, sampling without replacement (replace-one), integer alpha >= 2:

        A <= 1 + q^2 C(a,2) min{4(e^{eps(2)} - 1), e^{eps(2)} min{2, (e^{eps(inf)} - 1)^2}}
               + sum_{j=3}^{a} q^j C(a,j) e^{(j-1) eps(j)} min{2, (e^{eps(inf)} - 1)^j}.

    Fractional alpha: linear interpolation of log A between floor and ceil ([WBK] Cor. 10).
    Orders above ``GENERAL_MAX_ORDER`` and alpha = inf give ``inf`` (callers take the min with
    the base curve).  Not rounded.
    """
    orders = np.asarray(orders, dtype=float)
    if q == 0.0:
        return np.zeros(orders.shape)
    out = np.full(orders.shape, np.inf)
    use = np.isfinite(orders) & (np.ceil(orders) <= GENERAL_MAX_ORDER)
    if not np.any(use) or q == 1.0:
        return out
    amax = int(np.ceil(orders[use].max()))
    amax = max(amax, 2)
    eps_l = np.asarray(base_rdp(np.arange(2, amax + 1, dtype=float)), dtype=float)
    j2 = _wbk_j2_log(float(eps_l[0]), eps_inf) if np.isfinite(eps_l[0]) else math.inf
    log_min2 = min(math.log(2.0), float(log_expm1(np.asarray(eps_inf, dtype=float)))) if eps_inf > 0 else -math.inf

    def coef(j, a):
        jj = j.astype(np.int64)
        e = eps_l[jj - 2]
        with np.errstate(invalid="ignore"):
            other = (j - 1.0) * e + np.minimum(math.log(2.0), j * log_min2)
        return np.where(jj == 2, j2, other)

    def int_log_a(ints):
        return softplus(np.asarray(_integer_binomial_log_excess_wor(q, ints, coef), dtype=float))

    out[use] = _finish_wor(orders[use], int_log_a)
    return out


def _integer_binomial_log_excess_wor(q, orders, log_coef_fn):
    """log(A - 1) = log sum_{j>=2} C(a,j) q^j c_j  (no (1-q) factors: [WBK] form)."""
    orders = np.asarray(orders, dtype=np.int64)
    lengths = orders - 1
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    a = np.repeat(orders, lengths).astype(float)
    j = (np.arange(lengths.sum()) - np.repeat(starts, lengths) + 2).astype(float)
    logc, _ = _log_comb(a, j)
    with np.errstate(invalid="ignore"):
        lq = j * math.log(q)
        coef = log_coef_fn(j, a)
        terms = logc + lq + coef
        mag = _EPS * (_log_comb_magnitude(a, j) + np.abs(lq)) + 2.0 * _EPS * np.abs(coef) + _EPS * np.abs(terms)
    out = _segment_logsumexp(terms, starts)
    return out + _segment_sum_error(terms, mag, starts)


def _finish_wor(orders, int_log_a):
    """r(alpha) from integer log A values, interpolating fractional orders ([WBK] Cor. 10)."""
    is_int = orders == np.floor(orders)
    res = np.empty(orders.shape)
    if np.any(is_int):
        ints = orders[is_int].astype(np.int64)
        res[is_int] = int_log_a(ints) / (ints - 1.0)
    if np.any(~is_int):
        al = orders[~is_int]
        res[~is_int] = _interpolated_log_a(al, int_log_a) / (al - 1.0)
    return res


@functools.lru_cache(maxsize=64)
def gaussian_central_moments(sigma: float, kmax: int) -> np.ndarray:
    """log M_k for even k = 0, 2, ..., kmax (array indexed by k/2), where

        M_k = E_{Q}[(P/Q - 1)^k] = Delta^k f(-1),  f(x) = exp(x(x+1)/(2 sigma^2)),

    P = N(1, sigma^2), Q = N(0, sigma^2): the k-th forward difference used in [WBK] Thm. 27.
    Under Q, log(P/Q) = V ~ N(-c, 2c), c = 1/(2 sigma^2), so M_k = E[(e^V - 1)^k] > 0.
    Where the alternating binomial sum sum_i (-1)^(k-i) C(k,i) e^{i(i-1)c} is well conditioned
    (condition number * eps < 1e-13) it is used; otherwise M_k is computed by the trapezoid
    rule in log space on V = -c + sqrt(2c) Z (the integrand is entire and Gaussian-decaying,
    so the rule converges geometrically; step 0.02 in Z).
    """
    c = 1.0 / (2.0 * sigma * sigma)
    ks = np.arange(0, kmax + 1, 2, dtype=float)
    out = np.zeros(ks.shape)
    # binomial sum with condition estimate
    i = np.arange(kmax + 1, dtype=float)[None, :]
    k = ks[:, None]
    logc, _ = _log_comb(k, np.minimum(i, k))
    logt = np.where(i <= k, logc + i * (i - 1.0) * c, -np.inf)
    sgn = np.where(i <= k, np.where((k - i) % 2 == 0, 1.0, -1.0), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        val, vs = logsumexp(logt, b=sgn, axis=1, return_sign=True)
        tot = logsumexp(logt, b=np.abs(sgn), axis=1)
    well = (vs > 0) & (tot - val + math.log(_EPS) * 1.0 + math.log(kmax + 2.0) < math.log(1e-13))
    out = np.where(well, val, np.nan)
    out[0] = 0.0
    bad = ~well
    bad[0] = False
    if np.any(bad):
        kb = ks[bad]
        s = math.sqrt(2.0 * c)
        zmax = float(kb.max()) * s + math.sqrt(float(kb.max())) + 40.0
        z = np.arange(-40.0, zmax, 0.02)
        v = s * z - c
        with np.errstate(divide="ignore"):
            logabs = np.log(np.abs(np.expm1(v)))
        logphi = -0.5 * z * z - 0.5 * math.log(2.0 * math.pi)
        li = kb[:, None] * logabs[None, :] + logphi[None, :]
        out[bad] = logsumexp(li, axis=1) + math.log(0.02)
    return out


def wor_gaussian_rdp(q: float, sigma: float, orders) -> np.ndarray:
    """RDP of the Gaussian mechanism (noise multiplier ``sigma``, replace-one sensitivity 1)
    under sampling without replacement of a fraction q = m/n, replace-one neighbours.

    [WBK] Thm. 27 (the Gaussian strengthening of Thm. 9, as evaluated by dp-accounting 0.6.0):
    for integer alpha,

        A <= 1 + q^2 C(a,2) min{4(e^{1/s^2} - 1), 2 e^{1/s^2}}
               + sum_{j=3}^{a} q^j C(a,j) min{4 sqrt(M_lo M_hi), 2 e^{(j-1) j/(2 s^2)}}

    with M_k the central moments of :func:`gaussian_central_moments`, lo = 2 floor(j/2),
    hi = 2 ceil(j/2) (Cauchy-Schwarz for odd j).  For alpha > 256 only the second branch of
    the minimum is used.  Fractional orders: interpolation of log A ([WBK] Cor. 10).
    q = 0 -> 0, q = 1 -> alpha/(2 sigma^2), alpha = inf -> inf; integer orders above
    ``MAX_INTEGER_ORDER`` -> alpha/(2 sigma^2).  Not rounded.
    """
    orders = np.asarray(orders, dtype=float)
    with np.errstate(over="ignore"):  # alpha/(2 sigma^2) beyond the float range: inf
        base = orders / (2.0 * sigma**2)
    if q == 0.0:
        return np.zeros(orders.shape)
    if q == 1.0:
        return base
    c = 1.0 / (2.0 * sigma**2)
    out = np.full(orders.shape, np.inf)
    use = np.isfinite(orders) & (np.ceil(orders) <= MAX_INTEGER_ORDER)
    if np.any(use):
        amax = int(np.ceil(orders[use].max()))
        kmax = 2 * ((min(amax, WOR_MOMENT_MAX_ORDER) + 1) // 2) + 2
        logm = gaussian_central_moments(float(sigma), int(kmax))
        j2 = min(math.log(4.0) + float(log_expm1(np.asarray(2.0 * c, dtype=float))), 2.0 * c + math.log(2.0))

        def coef(j, a):
            jj = j.astype(np.int64)
            simple = math.log(2.0) + (j - 1.0) * j * c
            lo = np.minimum(2 * (jj // 2), kmax) // 2
            hi = np.minimum(2 * ((jj + 1) // 2), kmax) // 2
            mom = math.log(4.0) + 0.5 * (logm[lo] + logm[hi])
            best = np.where(a <= WOR_MOMENT_MAX_ORDER, np.minimum(mom, simple), simple)
            return np.where(jj == 2, j2, best)

        def int_log_a(ints):
            return softplus(np.asarray(_integer_binomial_log_excess_wor(q, ints, coef), dtype=float))

        out[use] = _finish_wor(orders[use], int_log_a)
    huge = np.isfinite(orders) & ~use
    out[huge] = base[huge]
    return np.where(np.isfinite(orders), np.minimum(out, base), np.inf)
