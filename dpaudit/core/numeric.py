"""Numerical helpers: directed rounding and log-space arithmetic.

Conventions (``API.md``): an upper bound is rounded *up* and a lower bound *down*, so that a
floating-point error never moves a guarantee towards less privacy loss. ``round_up`` and
``round_down`` move a value outwards by a few units in the last place, which dominates the
relative error (a few 1e-16) of the closed forms evaluated here.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

__all__ = [
    "round_up",
    "round_down",
    "log_add",
    "log_sub",
    "signed_logsumexp",
    "log1mexp",
    "ULPS",
]

#: number of units in the last place by which bounds are moved outwards
ULPS = 8


def _step(x, direction: float, ulps: int):
    x = np.asarray(x, dtype=float)
    out = x.copy()
    finite = np.isfinite(out)
    for _ in range(ulps):
        out = np.where(finite, np.nextafter(out, direction), out)
    return out


def round_up(x, ulps: int = ULPS):
    """Move ``x`` up by ``ulps`` units in the last place (infinities and NaN unchanged).

    Returns a Python float for scalar input and an array otherwise.
    """
    out = _step(x, np.inf, ulps)
    return float(out) if out.ndim == 0 else out


def round_down(x, ulps: int = ULPS):
    """Move ``x`` down by ``ulps`` units in the last place (infinities and NaN unchanged)."""
    out = _step(x, -np.inf, ulps)
    return float(out) if out.ndim == 0 else out


def log_add(a: float, b: float) -> float:
    """log(exp(a) + exp(b)) without overflow."""
    if a == -math.inf:
        return b
    if b == -math.inf:
        return a
    m = max(a, b)
    return m + math.log1p(math.exp(-abs(a - b)))


def log_sub(a: float, b: float) -> float:
    """log(exp(a) - exp(b)) for a >= b; ``-inf`` when equal, ValueError when a < b."""
    if b == -math.inf:
        return a
    if a < b:
        raise ValueError("log_sub: a must be >= b")
    if a == b:
        return -math.inf
    return a + log1mexp(a - b)


def log1mexp(x: float) -> float:
    """log(1 - exp(-x)) for x > 0, accurate for small and large x (Maechler 2012)."""
    if x <= 0:
        raise ValueError("log1mexp: x must be > 0")
    if x < math.log(2.0):
        return math.log(-math.expm1(-x))
    return math.log1p(-math.exp(-x))


def signed_logsumexp(log_abs, signs) -> tuple[float, float]:
    """Return (log|S|, sign(S)) for S = sum_i signs_i * exp(log_abs_i)."""
    log_abs = np.asarray(log_abs, dtype=float)
    signs = np.asarray(signs, dtype=float)
    val, sgn = logsumexp(log_abs, b=signs, return_sign=True)
    return float(val), float(sgn)
