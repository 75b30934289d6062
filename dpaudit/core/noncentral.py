"""Noncentral chi-square and noncentral F laws: CDF, survival function, inversion in lambda.

Definitions (Johnson, Kotz, Balakrishnan, *Continuous Univariate Distributions* vol. 2, 2nd ed.
1995, eq. 29.2 and eq. 30.4): with Z ~ N(0, I_d), ||mu||^2 = lambda, W ~ chi2(nu) independent,

    X = ||Z + mu||^2 ~ chi2'(d, lambda),          F = (X / d) / (W / nu) ~ F'(d, nu, lambda).

Both laws are Poisson(lambda / 2) mixtures of central ones (JKB eq. 29.2, 30.4):

    P[X <= x] = sum_j Pois(j; lambda/2) P(d/2 + j, x/2)                      (regularized gamma)
    P[F <= f] = sum_j Pois(j; lambda/2) I_y(d/2 + j, nu/2),  y = d f / (d f + nu)  (regularized beta)

scipy's ``ncx2`` / ``ncf`` return NaN or wrong tails far from the centre (e.g. ``ncf.cdf`` at
lambda ~ 4000, nu ~ 6e5), so this module evaluates them itself:

* ``lambda <= SERIES_MAX_NC``: the series above over the Poisson window that holds all but
  ~1e-33 of the mass (log Poisson weights from Loader's saddle-point form, Loader 2000), with
  ``scipy.special.gammainc/gammaincc/betainc`` terms (checked against mpmath over the domain);
  CDF and survival function are each summed from positive terms, so both tails keep their
  relative accuracy.
* ``lambda > SERIES_MAX_NC``: the series would need ~25 sqrt(lambda) terms, so exact integral
  forms are used instead. Writing X = (Z_1 + sqrt(lambda))^2 + V with V ~ chi2(d-1),

      P[X <= x]  = E_V[ Phi(sqrt(x - V) - a) - Phi(-sqrt(x - V) - a) ],           a = sqrt(lambda)
      P[F <= f]  = E_{Z_1, V}[ Q_nu(X / c) ]            (c = d f / nu; used when lambda >= 2 nu)
                 = E_{W, V}[ Phi(sqrt(c W - V) - a) - Phi(-sqrt(c W - V) - a) ]   (lambda < 2 nu)

  with V integrated by generalized Gauss-Laguerre quadrature and the inner variable (Z_1 or
  log W) by Gauss-Hermite quadrature centred at the mode of the integrand (so that tails far
  from the centre are integrated where their mass is). The variable integrated analytically is
  always the one whose spread dominates, so that the remaining integrand is smooth.

Accuracy (measured against mpmath, ``benchmarks/noncentral_accuracy.py`` and
``tests/core/test_noncentral.py``): relative error below 1e-9 on the CDF and on the
survival function wherever that value is >= 1e-20, absolute error below 1e-25 elsewhere, over
d in 1..50, nu in 1..1e8, lambda in 0..1e12 and the statistic from the far-left to the
far-right tail. No NaN is ever returned for legal input.

:func:`invert_noncentrality` solves P[stat <= observed; lambda] = p (or the survival form) in
lambda with a bracketing solver (bounded iterations) and returns the end of the final bracket
on the requested side, so that a lower confidence limit is never above the exact root of the
evaluated function and an upper one never below.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special as sc

from dpaudit.core.validation import check_count, check_nonnegative, check_probability

__all__ = [
    "ncx2_cdf",
    "ncx2_sf",
    "ncf_cdf",
    "ncf_sf",
    "poisson_logpmf",
    "invert_noncentrality",
    "noncentrality_interval",
    "SERIES_MAX_NC",
]

#: largest noncentrality evaluated by the Poisson series (beyond: quadrature)
SERIES_MAX_NC = 2.0e4

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_N_LAGUERRE = 24
_N_HERMITE = 32
_CENTRE_GRID = np.arange(-12.0, 12.5, 1.0)
_MAX_BRACKET_STEPS = 2100  # geometric growth by 1.5x from >= 1: covers every finite double
_MAX_SOLVER_STEPS = 200
_EPS = float(np.finfo(float).eps)


# ----------------------------------------------------------------------------- Poisson weights
_STIRLERR_SMALL = np.array([
    sc.gammaln(n + 1.0) - (n + 0.5) * math.log(n) + n - _LOG_SQRT_2PI if n > 0 else 0.0 for n in range(16)])


def _stirlerr(n):
    """log(n!) - log(sqrt(2 pi n) (n/e)^n) for integers n >= 1 (Loader 2000, Table / series)."""
    n = np.asarray(n, dtype=float)
    out = np.empty_like(n)
    small = n < 16
    out[small] = _STIRLERR_SMALL[n[small].astype(int)]
    m = n[~small]
    m2 = m * m
    out[~small] = (1.0 / 12 - (1.0 / 360 - (1.0 / 1260 - (1.0 / 1680 - 1.0 / (1188 * m2)) / m2) / m2) / m2) / m
    return out


def _bd0(x, mu):
    """x log(x/mu) + mu - x, accurate when x is close to mu (Loader 2000)."""
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    close = np.abs(x - mu) < 0.1 * (x + mu)
    xc = x[close]
    v = (xc - mu) / (xc + mu)
    s = (xc - mu) * v
    ej = 2.0 * xc * v
    v2 = v * v
    for k in range(1, 11):  # |v| < 0.1: the k-th term is below 1e-2k of the first
        ej = ej * v2
        s = s + ej / (2 * k + 1)
    out[close] = s
    xf = x[~close]
    with np.errstate(divide="ignore"):
        out[~close] = xf * np.log(xf / mu) + mu - xf
    return out


def poisson_logpmf(j, mu: float):
    """log Pois(j; mu) for integers j >= 0 and mu >= 0, accurate for large mu (Loader 2000)."""
    j = np.asarray(j, dtype=float)
    if mu == 0.0:
        return np.where(j == 0, 0.0, -np.inf)
    out = np.empty_like(j)
    zero = j == 0
    out[zero] = -mu
    jj = j[~zero]
    out[~zero] = -_stirlerr(jj) - _bd0(jj, mu) - 0.5 * np.log(2.0 * math.pi * jj)
    return out


def _poisson_window(mu: float):
    """Integers j and Poisson(mu) weights holding all but < 1e-33 of the mass."""
    half = 12.5 * math.sqrt(mu) + 40.0
    lo = max(0, int(math.floor(mu - half)))
    hi = int(math.ceil(mu + half))
    j = np.arange(lo, hi + 1, dtype=float)
    return j, np.exp(poisson_logpmf(j, mu))


def _log_gamma_correction(h: float) -> float:
    """lgamma(h) - h log h + h = log(sqrt(2 pi / h)) + (Stirling remainder), without cancellation."""
    if h < 16.0:
        return float(sc.gammaln(h)) - h * math.log(h) + h
    h2 = h * h
    rem = (1.0 / 12 - (1.0 / 360 - (1.0 / 1260 - (1.0 / 1680 - 1.0 / (1188 * h2)) / h2) / h2) / h2) / h
    return _LOG_SQRT_2PI - 0.5 * math.log(h) + rem


# ---------------------------------------------------------------------------- quadrature rules
@functools.lru_cache(maxsize=64)
def _laguerre(n: int, alpha: float):
    """Nodes V and normalised weights for E[g(V)], V ~ chi2(2 alpha + 2) (generalized Gauss-Laguerre)."""
    t, w = sc.roots_genlaguerre(n, alpha)
    w = w / np.sum(w)
    return 2.0 * t, np.log(w)


@functools.lru_cache(maxsize=8)
def _hermite(n: int):
    """Physicists' Gauss-Hermite nodes t and log(weights) + t^2 (for integrals without the weight)."""
    t, w = sc.roots_hermite(n)
    return t, np.log(w) + t * t


def _centred_log_integral(logf, centre, scale):
    """log of int exp(logf(u)) du, per row, by Gauss-Hermite centred at the mode of logf.

    ``logf`` maps an array of shape (rows, k) to log-integrand values of that shape; ``centre``
    and ``scale`` (shape (rows, 1)) locate the unconditional law. The mode is found on a grid of
    +-12 scales and refined by a parabola; the rule then uses the local curvature as its scale.
    """
    g = centre + scale * _CENTRE_GRID[None, :]
    with np.errstate(invalid="ignore"):
        vals = logf(g)
    vals = np.where(np.isnan(vals), -np.inf, vals)
    k = np.argmax(vals, axis=1)
    rows = np.arange(vals.shape[0])
    km = np.clip(k, 1, len(_CENTRE_GRID) - 2)
    f0, f1, f2 = vals[rows, km - 1], vals[rows, km], vals[rows, km + 1]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        curv = f0 - 2.0 * f1 + f2  # second difference in grid units (negative at a maximum)
        shift = np.where(curv < 0, 0.5 * (f0 - f2) / curv, 0.0)
        shift = np.where(np.isfinite(shift), np.clip(shift, -1.0, 1.0), 0.0)
        width = np.where(curv < 0, 1.0 / np.sqrt(-curv), 1.0)
    width = np.where(np.isfinite(width), np.clip(width, 0.05, 2.0), 1.0)
    mode = g[rows, km] + scale[:, 0] * shift
    s = scale[:, 0] * width * math.sqrt(2.0)
    t, lw = _hermite(_N_HERMITE)
    u = mode[:, None] + s[:, None] * t[None, :]
    with np.errstate(invalid="ignore"):
        lv = logf(u)
    lv = np.where(np.isnan(lv), -np.inf, lv)
    return sc.logsumexp(lv + lw[None, :], axis=1) + np.log(s)


def _tail_terms(lower_fn, upper_fn, upper: bool):
    """The requested tail of each term, from whichever tail is <= 1/2 (1 minus the other else).

    scipy's incomplete gamma / beta lose relative accuracy on the side near 1 for some
    parameters (e.g. ``betainc(a, b, y)`` is off by ~3e-10 at b = 1.7e7 integral with y in the
    bulk), never on the side below 1/2 (checked against mpmath in
    tests/core/test_noncentral.py). ``lower_fn(mask)`` / ``upper_fn(mask)`` evaluate the
    two tails on the entries selected by a boolean mask; the (slower) upper tail is evaluated
    only where the lower one exceeds 1/2.
    """
    low = lower_fn(None)
    big = low > 0.5
    if not np.any(big):
        return 1.0 - low if upper else low
    up = np.zeros_like(low)
    up[big] = upper_fn(big)
    if upper:
        return np.where(big, up, 1.0 - low)
    return np.where(big, 1.0 - up, low)


# ------------------------------------------------------------------------ noncentral chi-square
def _ncx2_series(x: float, d: int, lam: float, upper: bool) -> float:
    j, w = _poisson_window(0.5 * lam)
    a = 0.5 * d + j
    y = 0.5 * x
    g = _tail_terms(lambda m: sc.gammainc(a if m is None else a[m], y),
                    lambda m: sc.gammaincc(a if m is None else a[m], y), upper)
    return float(np.dot(w, g))


def _root_minus(x, lam, a):
    """sqrt(x) - sqrt(lam) without cancellation (arrays; x >= 0)."""
    return (x - lam) / (np.sqrt(x) + a)


def _ncx2_quad(x: float, d: int, lam: float, upper: bool) -> float:
    a = math.sqrt(lam)
    if d == 1:
        V, lw = np.zeros(1), np.zeros(1)
    else:
        V, lw = _laguerre(_N_LAGUERRE, 0.5 * (d - 1) - 1.0)
    r = np.maximum(x - V, 0.0)
    t = _root_minus(r, lam, a)
    neg = -np.sqrt(r) - a
    if upper:
        lp = np.logaddexp(sc.log_ndtr(-t), sc.log_ndtr(neg))
        lp = np.where(V >= x, 0.0, lp)
    else:
        with np.errstate(divide="ignore"):
            # Phi(t) - Phi(neg) = Phi(t) (1 - Phi(neg)/Phi(t)), Phi(neg) <= Phi(t)
            lp = sc.log_ndtr(t) + np.log1p(-np.exp(np.minimum(sc.log_ndtr(neg) - sc.log_ndtr(t), 0.0)))
        lp = np.where(V >= x, -np.inf, lp)
    return float(np.exp(sc.logsumexp(lp + lw)))


def _check_x(x, name="x") -> float:
    x = float(x)
    if math.isnan(x):
        raise ValueError(f"{name} must not be NaN")
    return x


def _ncx2(x, df, nc, upper: bool) -> float:
    x = _check_x(x)
    d = check_count("df", df, minimum=1)
    lam = check_nonnegative("nc", nc, allow_inf=False)
    if x <= 0.0:
        return 1.0 if upper else 0.0
    if math.isinf(x):
        return 0.0 if upper else 1.0
    if lam <= SERIES_MAX_NC:
        v = _ncx2_series(x, d, lam, upper)
    else:
        v = _ncx2_quad(x, d, lam, upper)
    return min(max(v, 0.0), 1.0)


def ncx2_cdf(x, df, nc) -> float:
    """P[X <= x] for X ~ chi2'(df, nc) (noncentral chi-square; see the module docstring)."""
    return _ncx2(x, df, nc, upper=False)


def ncx2_sf(x, df, nc) -> float:
    """P[X > x] for X ~ chi2'(df, nc), accurate in the right tail."""
    return _ncx2(x, df, nc, upper=True)


# -------------------------------------------------------------------------------- noncentral F
def _ncf_series(f: float, d: int, nu: float, lam: float, upper: bool) -> float:
    j, w = _poisson_window(0.5 * lam)
    a = 0.5 * d + j
    # y = d f / (d f + nu) and 1 - y without overflow or cancellation
    y = f / (f + nu / d)
    b = 0.5 * nu
    g = _tail_terms(lambda m: sc.betainc(a if m is None else a[m], b, y),
                    lambda m: sc.betaincc(a if m is None else a[m], b, y), upper)
    return float(np.dot(w, g))


def _ncf_quad(f: float, d: int, nu: float, lam: float, upper: bool) -> float:
    a = math.sqrt(lam)
    c = f * (d / nu)  # event {X <= c W}
    if d == 1:
        V, lwV = np.zeros(1), np.zeros(1)
    else:
        V, lwV = _laguerre(_N_LAGUERRE, 0.5 * (d - 1) - 1.0)
    Vc = V[:, None]
    if lam >= 2.0 * nu:
        # integrate Z_1 (centred Gauss-Hermite) and V; W analytically: P[W >= X/c] / P[W < X/c]
        h = 0.5 * nu

        def logf(z):
            X = (z + a) ** 2 + Vc
            with np.errstate(divide="ignore", over="ignore"):
                y = 0.5 * X / c
                g = _tail_terms(lambda m: sc.gammainc(h, y if m is None else y[m]),
                                lambda m: sc.gammaincc(h, y if m is None else y[m]), not upper)
                return np.log(g) - 0.5 * z * z - _LOG_SQRT_2PI

        centre = np.zeros((V.size, 1))
        scale = np.ones((V.size, 1))
    else:
        # integrate u = log(W / nu) (centred Gauss-Hermite) and V; Z_1 analytically (normal CDF)
        h = 0.5 * nu
        # log density of u: h (u - e^u + 1) - [lgamma(h) - h log h + h], written without cancellation
        lconst = -_log_gamma_correction(h)

        def logf(u):
            W = nu * np.exp(u)
            r = np.maximum(c * W - Vc, 0.0)
            t = _root_minus(r, lam, a)
            neg = -np.sqrt(r) - a
            ldens = -h * (np.expm1(u) - u) + lconst
            with np.errstate(divide="ignore"):
                if upper:
                    lp = np.logaddexp(sc.log_ndtr(-t), sc.log_ndtr(neg))
                    lp = np.where(r <= 0.0, 0.0, lp)
                else:
                    lp = sc.log_ndtr(t) + np.log1p(-np.exp(np.minimum(sc.log_ndtr(neg) - sc.log_ndtr(t), 0.0)))
                    lp = np.where(r <= 0.0, -np.inf, lp)
            return lp + ldens

        centre = np.zeros((V.size, 1))
        scale = np.full((V.size, 1), math.sqrt(2.0 / nu))
    inner = _centred_log_integral(logf, centre, scale)
    return float(np.exp(sc.logsumexp(inner + lwV)))


def _ncf(x, dfn, dfd, nc, upper: bool) -> float:
    f = _check_x(x)
    d = check_count("dfn", dfn, minimum=1)
    nu = float(dfd)
    if not (nu > 0.0 and math.isfinite(nu)):
        raise ValueError(f"dfd must be a finite number > 0, got {dfd!r}")
    lam = check_nonnegative("nc", nc, allow_inf=False)
    if f <= 0.0:
        return 1.0 if upper else 0.0
    if math.isinf(f):
        return 0.0 if upper else 1.0
    if lam <= SERIES_MAX_NC:
        v = _ncf_series(f, d, nu, lam, upper)
    else:
        v = _ncf_quad(f, d, nu, lam, upper)
    return min(max(v, 0.0), 1.0)


def ncf_cdf(x, dfn, dfd, nc) -> float:
    """P[F <= x] for F ~ F'(dfn, dfd, nc) (noncentral F; see the module docstring)."""
    return _ncf(x, dfn, dfd, nc, upper=False)


def ncf_sf(x, dfn, dfd, nc) -> float:
    """P[F > x] for F ~ F'(dfn, dfd, nc), accurate in the right tail."""
    return _ncf(x, dfn, dfd, nc, upper=True)


# ---------------------------------------------------------------------------------- inversion
def _bracket_solve(g, lo: float, hi: float, g_lo: float, g_hi: float, rtol: float, atol: float):
    """Brent's method (Brent 1973, ch. 4) on a bracket with g(lo) > 0 >= g(hi); returns the final bracket.

    At most ``_MAX_SOLVER_STEPS`` evaluations; on return the root of g lies in [lo, hi] and
    hi - lo <= 2 max(min(rtol |root|, atol), 4 eps |root|) (or the iteration bound was reached).
    """
    a, b, fa, fb = lo, hi, g_lo, g_hi
    if fb == 0.0:
        return b, b
    c, fc = a, fa
    d = e = b - a
    for _ in range(_MAX_SOLVER_STEPS):
        if (fb > 0) == (fc > 0):
            c, fc = a, fa
            d = e = b - a
        if abs(fc) < abs(fb):
            a, b, c = b, c, b
            fa, fb, fc = fb, fc, fb
        tol1 = max(min(rtol * abs(b), atol), 4.0 * _EPS * abs(b)) + 1e-300
        xm = 0.5 * (c - b)
        if abs(xm) <= tol1:
            break
        if abs(e) >= tol1 and abs(fa) > abs(fb):
            s_ = fb / fa
            if a == c:
                p_, q_ = 2.0 * xm * s_, 1.0 - s_
            else:
                q0, r0 = fa / fc, fb / fc
                p_ = s_ * (2.0 * xm * q0 * (q0 - r0) - (b - a) * (r0 - 1.0))
                q_ = (q0 - 1.0) * (r0 - 1.0) * (s_ - 1.0)
            if p_ > 0:
                q_ = -q_
            p_ = abs(p_)
            if 2.0 * p_ < min(3.0 * xm * q_ - abs(tol1 * q_), abs(e * q_)):
                e, d = d, p_ / q_
            else:
                d = e = xm
        else:
            d = e = xm
        a, fa = b, fb
        b = b + d if abs(d) > tol1 else b + math.copysign(tol1, xm)
        fb = g(b)
        if fb == 0.0:
            return b, b
    # the root lies between b and c (g changes sign there)
    return (b, c) if b <= c else (c, b)


class _Family:
    """log CDF / log SF of the statistic as functions of u = sqrt(lambda), for fixed stat."""

    def __init__(self, stat: float, dfn: int, dfd: float | None):
        self.stat, self.d, self.nu = stat, dfn, dfd

    def prob(self, u: float, upper: bool) -> float:
        lam = u * u
        if self.nu is None:
            return _ncx2(self.stat, self.d, lam, upper)
        return _ncf(self.stat, self.d, self.nu, lam, upper)

    def guess(self, p: float, upper: bool) -> tuple[float, float]:
        """Approximate root u and a scale for the bracket (normal approximation on sqrt scale)."""
        z = float(sc.ndtri(1.0 - p)) if not upper else float(sc.ndtri(p))
        # cdf target p: Phi(root_stat - u) ~ p  =>  u ~ root_stat + z_{1-p}
        if self.nu is None:
            root = math.sqrt(self.stat)
            return max(root + z, 0.0), 1.0
        root = math.sqrt(self.stat) * math.sqrt(self.d)
        u = max(root + z, 0.0)
        for _ in range(3):
            sd = math.sqrt(1.0 + u * u / (2.0 * self.nu))
            u = max(root + z * sd, 0.0)
        return u, math.sqrt(1.0 + u * u / (2.0 * self.nu))


def _log_clamped(p: float) -> float:
    return math.log(p) if p > 1e-320 else -740.0


def invert_noncentrality(stat, dfn, dfd=None, *, cdf=None, sf=None, side: str = "lower",
                         rtol: float = 1e-10) -> float:
    """The noncentrality lambda >= 0 at which P[S <= stat] = cdf (or P[S > stat] = sf).

    ``S ~ chi2'(dfn, lambda)`` when ``dfd`` is None, else ``F'(dfn, dfd, lambda)``. Both
    probabilities are monotone in lambda (the families are stochastically increasing), so the
    root is unique. When no lambda >= 0 attains the target (``P[S <= stat; 0] <= cdf``, or
    ``P[S > stat; 0] >= sf``) the answer is 0. ``side="lower"`` returns the left end of the final
    bracket (never above the root of the evaluated function), ``"upper"`` the right end;
    ``inf`` when the root exceeds the largest double.
    """
    if (cdf is None) == (sf is None):
        raise ValueError("give exactly one of cdf and sf")
    upper = sf is not None
    p = check_probability("sf" if upper else "cdf", sf if upper else cdf)
    if side not in ("lower", "upper"):
        raise ValueError(f"side must be 'lower' or 'upper', got {side!r}")
    stat = _check_x(stat, "stat")
    d = check_count("dfn", dfn, minimum=1)
    if dfd is not None:
        dfd = float(dfd)
        if not (dfd > 0.0 and math.isfinite(dfd)):
            raise ValueError(f"dfd must be a finite number > 0, got {dfd!r}")
    fam = _Family(stat, d, dfd)
    if p <= 0.0:
        return math.inf if (upper or stat < math.inf) else 0.0
    if p >= 1.0:
        return 0.0
    if stat <= 0.0:
        return 0.0  # P[S <= 0] = 0 <= cdf, P[S > 0] = 1 >= sf for every lambda
    if math.isinf(stat):
        return math.inf
    lp = math.log(p)

    def g(u: float) -> float:
        # decreasing in u: log P[S <= stat] - log p, or log p - log P[S > stat]
        v = _log_clamped(fam.prob(u, upper))
        return (lp - v) if upper else (v - lp)

    u0, scale = fam.guess(p, upper)
    g0 = math.nan  # (read only when u0 <= 0, where it is set)
    if u0 <= 0.0:
        g0 = g(0.0)
        if g0 <= 0.0:
            return 0.0
    # bracket: from the guess, steps of 0.5, 1, 2, 4, ... scales towards the root
    hi, g_hi = math.inf, -math.inf
    g_u0 = g(u0) if u0 > 0.0 else g0
    step = 0.5 * scale
    if g_u0 > 0:
        lo, g_lo = u0, g_u0
        for _ in range(_MAX_BRACKET_STEPS):
            cand = lo + step
            if cand > 1.3e154:
                return math.inf
            g_c = g(cand)
            if g_c <= 0:
                hi, g_hi = cand, g_c
                break
            lo, g_lo = cand, g_c
            step *= 2.0
        else:  # pragma: no cover - the doubling covers every finite double
            return math.inf
    else:
        hi, g_hi = u0, g_u0
        lo, g_lo, found = 0.0, math.nan, False
        for _ in range(_MAX_BRACKET_STEPS):
            cand = hi - step
            if cand <= 0.0:
                break
            g_c = g(cand)
            if g_c > 0:
                lo, g_lo, found = cand, g_c, True
                break
            hi, g_hi = cand, g_c
            step *= 2.0
        if not found:  # reached 0: is there a root at all?
            g_lo = g(0.0)
            if g_lo <= 0.0:
                return 0.0
    # u is located to rtol relative, and to rtol times the statistic's spread on the sqrt scale
    lo, hi = _bracket_solve(g, lo, hi, g_lo, g_hi, rtol, rtol * scale)
    u = lo if side == "lower" else hi
    return u * u


def noncentrality_interval(stat, dfn, dfd=None, *, confidence: float = 0.95):
    """Equal-tailed confidence interval and median-unbiased estimate of lambda.

    Returns ``(lower, median, upper)``: ``lower`` solves P[S > stat; lambda] = beta/2,
    ``upper`` solves P[S <= stat; lambda] = beta/2 and ``median`` P[S <= stat; lambda] = 1/2,
    with beta = 1 - confidence; an end with no root is 0 (see :func:`invert_noncentrality`).
    Each end is exact for its one-sided level: P[lower > lambda] = P[upper < lambda] = beta/2
    for every lambda > 0 (at lambda = 0 the upper end cannot miss).
    """
    beta = 1.0 - float(confidence)
    lo = invert_noncentrality(stat, dfn, dfd, sf=0.5 * beta, side="lower")
    med = invert_noncentrality(stat, dfn, dfd, cdf=0.5, side="lower")
    hi = invert_noncentrality(stat, dfn, dfd, cdf=0.5 * beta, side="upper")
    return lo, max(med, lo), max(hi, med, lo)
