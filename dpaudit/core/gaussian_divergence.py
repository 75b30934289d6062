"""Renyi divergence between isotropic Gaussians with different variances.

References
----------
Gil, Alajaji, Linder, "Renyi divergence measures for commonly used univariate continuous
distributions", Information Sciences 249 (2013), Table 2 (normal distributions).
Hendrikx, Mangold, Bellet, "The Relative Gaussian Mechanism and its Application to Private
Gradient Descent", AISTATS 2024, Lemma 2 (eq. 13).

For P = N(mu1, s1^2 I_d), Q = N(mu2, s2^2 I_d) and s_alpha^2 = alpha s2^2 + (1 - alpha) s1^2::

    D_alpha(P || Q) = alpha ||mu1 - mu2||^2 / (2 s_alpha^2)
                      + d / (2 (alpha - 1)) * log( s1^{2(1-alpha)} s2^{2 alpha} / s_alpha^2 )

when s_alpha^2 > 0, and ``+inf`` otherwise. With r = s1^2 / s2^2 = 1 + e and w = (alpha - 1) e,
s_alpha^2 = s2^2 (1 - w) and the variance part per dimension is

    -log(r) / 2 - log(1 - w) / (2 (alpha - 1)) = [ pm(e) + pm(-w) / (alpha - 1) ] / 2,

pm(u) = u - log1p(u) >= 0 (the linear terms cancel exactly), which is how it is evaluated here:
a sum of two non-negative terms, each computed without cancellation, so the value keeps its
relative accuracy when r is close to 1 and never comes out negative.

This is an *exact* value (not a bound); callers that use it as a bound round it themselves.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.core.numeric import count_to_float
from dpaudit.core.validation import check_count, check_orders, check_positive

__all__ = ["renyi_gaussians", "renyi_gaussians_moments", "gaussian_variance_term", "x_minus_log1p"]


def x_minus_log1p(u):
    """``u - log1p(u)`` for u > -1 without cancellation (>= 0; ``inf`` at u = -1).

    For |u| < 1/2 it uses log1p(u) = 2 atanh(v), v = u / (2 + u), u = 2 v / (1 - v):
    u - log1p(u) = 2 v^2 / (1 - v) - 2 v^3 (1/3 + v^2/5 + v^4/7 + ...), |v| <= 1/3.
    """
    u = np.asarray(u, dtype=float)
    small = np.abs(u) < 0.5
    us = np.where(small, u, 0.0)
    v = us / (2.0 + us)
    v2 = v * v
    tail = np.zeros_like(v)
    for k in range(35, 1, -2):  # 1/3 + v^2/5 + ... ; (1/9)^17 < 1e-16
        tail = 1.0 / k + v2 * tail
    series = 2.0 * v2 / (1.0 - v) - 2.0 * v * v2 * tail
    with np.errstate(divide="ignore", invalid="ignore"):
        ud = np.where(small, 1.0, u)
        direct = ud - np.log1p(ud)
    return np.where(small, series, direct)


def _variance_term(alpha, e, r=None):
    """Per-dimension variance part for r = 1 + e (``inf`` where (alpha-1) e >= 1 or alpha = inf, e != 0).

    ``e`` carries the accuracy near r = 1, ``r`` (default 1 + e) near r = 0, where e rounds to -1:
    pm(e) = e - log1p(e) is evaluated as (r - 1) - log(r) once |e| >= 1/2.
    """
    alpha = np.asarray(alpha, dtype=float)
    e = np.asarray(e, dtype=float)
    r = 1.0 + e if r is None else np.asarray(r, dtype=float)
    am1 = alpha - 1.0
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        w = am1 * e
        finite = (w < 1.0) & np.isfinite(alpha)
        ww = np.where(finite, w, 0.0)
        aa = np.where(finite, am1, 1.0)
        near = np.abs(e) < 0.5
        rr = np.where(near | ~finite, 1.0, r)
        pm_e = np.where(near, x_minus_log1p(np.where(near & finite, e, 0.0)), (rr - 1.0) - np.log(rr))
        val = 0.5 * (pm_e + x_minus_log1p(-ww) / aa)
    out = np.where(finite, val, np.inf)
    # alpha = inf: the divergence is infinite unless the variances are equal
    return np.where(np.isinf(alpha) & (e == 0.0), 0.0, out)


def gaussian_variance_term(alpha, ratio):
    """Variance part per dimension of D_alpha(N(., s1^2) || N(., s2^2)) with ``ratio = s1/s2``.

    Returns ``-log r - log1p(-(alpha-1)(r^2-1)) / (2(alpha-1))`` (RGM paper, Lemma 2), ``inf``
    where ``(alpha-1)(r^2-1) >= 1`` (i.e. s_alpha^2 <= 0). Broadcasts over ``alpha`` and ``ratio``.
    Evaluated as a sum of non-negative terms (module docstring).
    """
    r = np.asarray(ratio, dtype=float)
    return _variance_term(alpha, (r - 1.0) * (r + 1.0), r * r)


def renyi_gaussians_moments(alpha, dist2, var1, var2, dim: int = 1):
    """D_alpha(N(mu1, var1 I_dim) || N(mu2, var2 I_dim)) from ``dist2 = ||mu1 - mu2||^2``.

    Vectorised form of :func:`renyi_gaussians` (Gil et al. 2013; RGM paper Lemma 2): ``alpha``,
    ``dist2``, ``var1``, ``var2`` broadcast together (variances, not standard deviations;
    ``dist2 >= 0``, variances > 0, alpha > 1 or ``inf``; not validated here, callers do).
    ``inf`` where s_alpha^2 = alpha var2 + (1 - alpha) var1 <= 0, and at alpha = inf unless the
    two laws coincide. Returns a float for all-scalar input, else an array.
    """
    a = np.asarray(alpha, dtype=float)
    dist2 = np.asarray(dist2, dtype=float)
    v1 = np.asarray(var1, dtype=float)
    v2 = np.asarray(var2, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        e = (v1 - v2) / v2  # r - 1
        rel = 1.0 - (a - 1.0) * e  # s_alpha^2 / var2
        finite = (rel > 0.0) & np.isfinite(a)
        mean = np.where(dist2 == 0.0, 0.0, a * dist2 / (2.0 * v2 * np.where(finite, rel, 1.0)))
        out = np.where(finite, mean + dim * _variance_term(a, e, v1 / v2), np.inf)
    out = np.where(np.isinf(a), np.where((dist2 == 0.0) & (e == 0.0), 0.0, np.inf), out)
    return float(out) if out.ndim == 0 else out


def renyi_gaussians(alpha, mu1, s1, mu2, s2, dim: int = 1):
    """D_alpha( N(mu1, s1^2 I_dim) || N(mu2, s2^2 I_dim) ) (RGM paper Lemma 2, eq. 13).

    Parameters
    ----------
    alpha : float or array of orders > 1 (``inf`` allowed)
        Renyi orders; the result has the shape of ``np.atleast_1d(alpha)`` for array input and
        is a float for scalar input.
    mu1, mu2 : float or array
        Means. Arrays are compared by the Euclidean norm of their difference; an array of size
        greater than one must have exactly ``dim`` entries.
    s1, s2 : float > 0
        Standard deviations (not variances) of the isotropic covariances.
    dim : int >= 1
        Dimension d multiplying the variance term.

    Returns
    -------
    The exact divergence; ``inf`` where s_alpha^2 = alpha s2^2 + (1-alpha) s1^2 <= 0 (the
    divergence is infinite there), and at ``alpha = inf`` unless both laws coincide.
    """
    scalar = np.ndim(alpha) == 0
    a = check_orders("alpha", alpha)
    s1 = check_positive("s1", s1)
    s2 = check_positive("s2", s2)
    dim = check_count("dim", dim, minimum=1)
    m1 = np.atleast_1d(np.asarray(mu1, dtype=float)).ravel()
    m2 = np.atleast_1d(np.asarray(mu2, dtype=float)).ravel()
    if m1.shape != m2.shape:
        raise ValueError(f"mu1 and mu2 must have the same shape, got {m1.shape} and {m2.shape}")
    if m1.size > 1 and m1.size != dim:
        raise ValueError(f"dim must equal the number of entries of mu1/mu2 ({m1.size}), got {dim}")
    if not (np.all(np.isfinite(m1)) and np.all(np.isfinite(m2))):
        raise ValueError("mu1 and mu2 must be finite")
    with np.errstate(over="ignore"):
        dist2 = float(np.sum((m1 - m2) ** 2))
    # s1/s2 enters through r - 1 = (s1/s2 - 1)(s1/s2 + 1), exact for close standard deviations
    r = s1 / s2
    e = (r - 1.0) * (r + 1.0)
    ndim = count_to_float(dim, "up")  # dim may be 10**400
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rel = 1.0 - (a - 1.0) * e
        finite = (rel > 0.0) & np.isfinite(a)
        mean = np.where(dist2 == 0.0, 0.0, a * dist2 / (2.0 * s2 * s2 * np.where(finite, rel, 1.0)))
        vt = _variance_term(a, e, r * r)
        out = np.where(finite, mean + np.where(vt == 0.0, 0.0, ndim * vt), np.inf)
    out = np.where(np.isinf(a), np.where((dist2 == 0.0) & (r == 1.0), 0.0, math.inf), out)
    return float(out[0]) if scalar else out
