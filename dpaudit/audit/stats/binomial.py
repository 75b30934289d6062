"""Clopper-Pearson one-sided confidence bounds for a binomial proportion.

Clopper & Pearson, "The use of confidence or fiducial limits illustrated in the case of the
binomial", Biometrika 26 (1934). For ``k`` successes in ``n`` trials at level ``beta``
(Clopper & Pearson 1934):

    upper p+ = Beta^{-1}(1 - beta; k + 1, n - k)     (p+ = 1 if k = n)
    lower p- = Beta^{-1}(beta;     k,     n - k + 1) (p- = 0 if k = 0)

Both are exact (coverage >= 1 - beta for every p). ``scipy.special.betaincinv`` is accurate
to about 1e-13 relative, so bounds are moved outwards by the relative margin ``REL_PAD``
(1e-10, far below any statistical effect) and then by a few ulps: floating-point error never
shrinks the interval. The edge cases k = 0 (upper) and k = n (lower) use the closed forms
1 - beta^(1/n) and beta^(1/n).
"""

from __future__ import annotations

import numpy as np
from scipy.special import betaincinv

from dpaudit.core.numeric import round_down, round_up
from dpaudit.core.validation import check_real

__all__ = ["cp_upper", "cp_lower", "REL_PAD"]

#: relative outward margin covering the error of ``betaincinv``
REL_PAD = 1e-10


def _check(k, n, beta):
    if np.ndim(beta) == 0:
        beta = check_real("beta", beta)
        if not 0.0 < beta < 1.0:
            raise ValueError(f"beta must be in (0, 1), got {beta}")
    else:  # one level per count (a union bound with unequal shares, :class:`~dpaudit.audit.stats.rules.AllThresholds`)
        beta = np.asarray(beta, dtype=float)
        if not np.all((beta > 0.0) & (beta < 1.0)):
            raise ValueError("beta must be in (0, 1) everywhere")
    k = np.asarray(k)
    n = np.asarray(n)
    if not (np.issubdtype(k.dtype, np.number) and np.issubdtype(n.dtype, np.number)):
        raise ValueError("k and n must be numeric")
    kf = k.astype(float)
    nf = n.astype(float)
    if np.any(~np.isfinite(kf)) or np.any(kf != np.round(kf)) or np.any(kf < 0):
        raise ValueError("k must be integers >= 0")
    if np.any(~np.isfinite(nf)) or np.any(nf != np.round(nf)) or np.any(nf < 1):
        raise ValueError("n must be integers >= 1")
    if np.any(kf > nf):
        raise ValueError("k must be <= n")
    return kf, nf, beta


def cp_upper(k, n, beta: float | np.ndarray):
    """One-sided Clopper-Pearson upper bound on p from ``k`` successes in ``n`` trials.

    P[p > cp_upper(K, n, beta)] <= beta for K ~ Bin(n, p), every p. Vectorised over ``k``, ``n`` (and ``beta``:
    one level per count).
    """
    kf, nf, beta = _check(k, n, beta)
    full = kf >= nf
    with np.errstate(all="ignore"):
        p = betaincinv(kf + 1.0, np.where(full, 1.0, nf - kf), 1.0 - beta)
        p0 = -np.expm1(np.log(beta) / nf)  # k = 0: 1 - beta^(1/n), exact
    p = np.where(full, 1.0, np.where(kf == 0, p0, p))
    out = np.minimum(round_up(np.asarray(p, dtype=float) * (1.0 + REL_PAD)), 1.0)
    return float(out) if np.ndim(out) == 0 else out


def cp_lower(k, n, beta: float):
    """One-sided Clopper-Pearson lower bound on p from ``k`` successes in ``n`` trials.

    P[p < cp_lower(K, n, beta)] <= beta for K ~ Bin(n, p), every p. Vectorised over ``k``, ``n``.
    """
    kf, nf, beta = _check(k, n, beta)
    zero = kf <= 0
    with np.errstate(all="ignore"):
        p = betaincinv(np.where(zero, 1.0, kf), nf - kf + 1.0, beta)
        pn = np.exp(np.log(beta) / nf)  # k = n: beta^(1/n), exact
    p = np.where(zero, 0.0, np.where(kf >= nf, pn, p))
    out = np.maximum(round_down(np.asarray(p, dtype=float) * (1.0 - REL_PAD)), 0.0)
    return float(out) if np.ndim(out) == 0 else out


#: bisection steps of :func:`cp_upper_bracket` (the bracket only has to be tight enough to rule tests out)
_BRACKET_STEPS = 8


def cp_upper_bracket(k, n, beta):
    """``(lo, hi)`` with ``lo <= cp_upper(k, n, beta) <= hi`` elementwise, without ``betaincinv``: a few vectorised
    passes, to rule out the tests that cannot be the best before computing the exact bounds of the others.

    ``lo = k/n`` (moved down by 1e-12 relative): for ``beta <= 1/2`` the Clopper-Pearson upper bound is at least
    the estimate, since ``P[Bin(n, k/n) <= k] >= 1/2`` (the median of a binomial with an integer mean is its mean).
    ``hi``: the Chernoff bound ``P[Bin(n, q) <= k] <= exp(-n KL(k/n || q))`` for ``q >= a = k/n`` makes every ``q``
    with ``KL(a || q) >= log(1/beta) / n = c`` at least the exact bound. ``KL(a || q) >= (q - a)^2 / (2q)`` (the
    integral of ``(t - a) / (t (1 - t)) >= (t - a) / q`` from ``a`` to ``q``), so ``q = a + c + sqrt(c^2 + 2ac)``
    is one; a few bisection steps towards the smallest (kept on the side where the inequality holds), then moved
    up by 1e-9 relative. ``beta`` must be at most 1/2."""
    kf = np.asarray(k, dtype=float)
    nf = np.asarray(n, dtype=float)
    a = np.broadcast_to(kf / nf, np.broadcast(kf, nf, np.asarray(beta)).shape)
    c = np.log(1.0 / np.asarray(beta, dtype=float)) / nf
    low, high = a, np.minimum(a + c + np.sqrt(c * c + 2.0 * a * c), 1.0)
    with np.errstate(all="ignore"):
        for _ in range(_BRACKET_STEPS):
            q = 0.5 * (low + high)
            kl = np.where(a > 0.0, a * np.log(a / q), 0.0) + (1.0 - a) * (np.log1p(-a) - np.log1p(-q))
            above = kl >= c
            high = np.where(above, q, high)
            low = np.where(above, low, q)
    hi = np.where(a >= 1.0, 1.0, np.minimum(high * (1.0 + 1e-9) + 1e-300, 1.0))
    return a * (1.0 - 1e-12), hi
