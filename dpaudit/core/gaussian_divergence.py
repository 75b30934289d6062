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

when s_alpha^2 > 0, and ``+inf`` otherwise. With r = s1/s2 the variance part per dimension is
``-log r - log1p(-(alpha - 1)(r^2 - 1)) / (2 (alpha - 1))``, which is how it is evaluated here
(``log1p`` keeps it accurate when r is close to 1).

This is an *exact* value (not a bound); callers that use it as a bound round it themselves.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.core.numeric import count_to_float
from dpaudit.core.validation import check_count, check_orders, check_positive

__all__ = ["renyi_gaussians", "gaussian_variance_term"]


def gaussian_variance_term(alpha, ratio):
    """Variance part per dimension of D_alpha(N(., s1^2) || N(., s2^2)) with ``ratio = s1/s2``.

    Returns ``-log r - log1p(-(alpha-1)(r^2-1)) / (2(alpha-1))`` (RGM paper, Lemma 2), ``inf``
    where ``(alpha-1)(r^2-1) >= 1`` (i.e. s_alpha^2 <= 0). Broadcasts over ``alpha`` and ``ratio``.
    """
    alpha = np.asarray(alpha, dtype=float)
    r = np.asarray(ratio, dtype=float)
    am1 = alpha - 1.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t = am1 * ((r - 1.0) * (r + 1.0))
        finite = (t < 1.0) & np.isfinite(alpha)
        val = -np.log(r) - np.log1p(-np.where(finite, t, 0.0)) / (2.0 * np.where(finite, am1, 1.0))
    # alpha = inf: the divergence is infinite unless the variances are equal
    out = np.where(finite, val, np.inf)
    out = np.where(np.isinf(alpha) & (r == 1.0), 0.0, out)
    return out


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
    a = check_orders(alpha, "alpha")
    s1 = check_positive("s1", s1)
    s2 = check_positive("s2", s2)
    dim = check_count(dim, "dim", minimum=1)
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
    r = s1 / s2
    term = gaussian_variance_term(a, r)
    with np.errstate(over="ignore", invalid="ignore"):
        var = np.where(term == 0.0, 0.0, count_to_float(dim, "up") * term)  # dim may be 10**400
    # s_alpha^2 / s2^2 = 1 - (alpha-1)(r^2-1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rel = 1.0 - (a - 1.0) * ((r - 1.0) * (r + 1.0))
        mean = np.where(rel > 0, a * dist2 / (2.0 * s2 * s2 * np.where(rel > 0, rel, 1.0)), np.inf)
    mean = np.where(dist2 == 0.0, np.where(rel > 0, 0.0, np.inf), mean)
    out = mean + var
    out = np.where(np.isinf(a), np.where((dist2 == 0.0) & (r == 1.0), 0.0, math.inf), out)
    return float(out[0]) if scalar else out
