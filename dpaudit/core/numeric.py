"""Numerical helpers: directed rounding and log-space arithmetic.

Conventions of the public interface: an upper bound is rounded *up* and a lower bound *down*, so that a
floating-point error never moves a guarantee towards less privacy loss. ``round_up`` and
``round_down`` move a value outwards by a few units in the last place, which dominates the
relative error (a few 1e-16) of the closed forms evaluated here.
"""

from __future__ import annotations

import math
import sys

import numpy as np

__all__ = [
    "round_up",
    "round_down",
    "next_up",
    "next_down",
    "count_to_float",
    "scale_by_count",
    "product_ratio",
    "l2_norm",
    "TINY",
    "log_expm1",
    "softplus",
    "ULPS",
]

#: number of units in the last place by which bounds are moved outwards
ULPS = 8

#: the smallest positive float (a subnormal): the upper bound reported for a positive quantity
#: whose value underflows
TINY = math.ulp(0.0)


def _step(x, direction: float, ulps: int):
    x = np.asarray(x, dtype=float)
    if x.ndim == 0:  # one value: the math module's nextafter, the same IEEE steps without array overhead
        v = float(x)
        if math.isfinite(v):
            for _ in range(ulps):
                v = math.nextafter(v, direction)  # past the largest float: inf, still a bound
        return np.asarray(v)
    out = x
    with np.errstate(over="ignore"):  # stepping past the largest float gives inf: still a bound
        for _ in range(ulps):
            out = np.nextafter(out, direction)
    return np.where(np.isfinite(x), out, x)  # infinities and NaN unchanged


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


#: log 2 = _LN2_HI + _LN2_LO + _LN2_LO2 (_LN2_HI with 32 trailing zero bits; the rest from a
#: 80-digit value), and the band [log 2 / 2, 2 log 2] where x - _LN2_HI is exact
_LN2_HI = float.fromhex("0x1.62e42fee00000p-1")
_LN2_LO = 1.9082149292705877e-10
_LN2_LO2 = 1.1612227229362532e-26
_LN2_BAND = (0.35, 1.38)


def log_expm1(x):
    """log(e^x - 1) for x > 0 without overflow (``-inf`` at 0 for arrays).

    A numpy array is evaluated element-wise by numpy; anything else as one float by the math
    module (the two agree to an ulp; each caller keeps the evaluation it was validated with).
    """
    if isinstance(x, np.ndarray):
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            near = (x >= _LN2_BAND[0]) & (x <= _LN2_BAND[1])
            d = ((x - _LN2_HI) - _LN2_LO) - _LN2_LO2
            out = np.where(x > 30.0, x + np.log1p(-np.exp(-np.minimum(x, 700.0))),
                           np.log(np.expm1(np.minimum(x, 30.0))))
            return np.where(near, np.log1p(2.0 * np.expm1(np.where(near, d, 0.0))), out)
    x = float(x)
    if x > 30.0:
        return x + math.log1p(-math.exp(-x))
    if _LN2_BAND[0] <= x <= _LN2_BAND[1]:
        # near x = log 2 the result is near 0 and log(expm1(x)) loses its relative accuracy (9e-16
        # at x = 0.75); e^x - 1 = 1 + 2 expm1(x - log 2), with x - log 2 exact to ~1e-42 from a
        # three-part log 2 (x - _LN2_HI is exact by Sterbenz's lemma on this band)
        return math.log1p(2.0 * math.expm1(((x - _LN2_HI) - _LN2_LO) - _LN2_LO2))
    return math.log(math.expm1(x))


def softplus(x):
    """log(1 + e^x) without overflow (the one home of this log-space helper).

    A numpy array is evaluated element-wise by numpy (``np.logaddexp(0, x)``); anything else as
    one float by the math module (``x + log1p(e^-x)`` above 30, ``log1p(e^x)`` below), like
    :func:`log_expm1`: the two agree to an ulp and each caller keeps the evaluation it was
    validated with.
    """
    if isinstance(x, np.ndarray):
        return np.logaddexp(0.0, x)
    x = float(x)
    if x > 30.0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


def next_up(x: float) -> float:
    """The next float above ``x`` (an upper bound on the exact result of one correctly
    rounded operation whose rounded value is ``x``)."""
    return math.nextafter(x, math.inf)


def next_down(x: float) -> float:
    """The next float below ``x``."""
    return math.nextafter(x, -math.inf)


def count_to_float(count: int, direction: str = "up") -> float:
    """An integer count as a float rounded in ``direction`` (``"up"``: a float >= count, ``inf``
    above the float range; ``"down"``: a float <= count, the largest float above the range).

    ``float(count)`` raises OverflowError for counts above ~1.8e308 (e.g. ``10**400``) and
    rounds to nearest (possibly below the count) above 2**53.
    """
    count = int(count)
    if abs(count) <= 2**53:
        return float(count)
    try:
        f = float(count)
    except OverflowError:
        return math.inf if direction == "up" else sys.float_info.max
    if direction == "up":
        return f if int(f) >= count else next_up(f)
    return f if int(f) <= count else next_down(f)


def scale_by_count(count: int, x):
    """``count * x`` for non-negative ``x`` (scalar or array), rounded up; exact zeros stay 0.

    ``count`` may exceed the float range (``10**400``): positive entries then become ``inf``
    and zero entries stay exactly 0 (a zero-cost event composed any number of times costs
    nothing; ``0 * inf`` would be NaN). Infinite entries stay ``inf``.
    """
    c = count_to_float(count, "up")
    arr = np.asarray(x, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        prod = np.where(arr == 0.0, 0.0, c * arr)
    out = np.where(prod == 0.0, prod, round_up(prod, ulps=2))
    # a positive product that underflowed to 0 is not an exact zero
    out = np.where((arr > 0.0) & (c > 0.0) & (out == 0.0), TINY, out)
    return float(out) if out.ndim == 0 else out


def _mant_exp(x) -> tuple[float, int]:
    """(m, e) with x = m * 2**e and m in [0.5, 1) (m rounded to nearest for huge ints)."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        x = int(x)
        e = x.bit_length()
        if e <= 1000:
            return math.frexp(float(x))
        top = x >> (e - 64)  # 64 leading bits; the rest only moves m by < 2^-63 relative
        return top / 2.0**64, e
    return math.frexp(float(x))


def product_ratio(nums, dens=(), direction: str = "up") -> float:
    """``prod(nums) / prod(dens)`` for non-negative finite floats and integers of any size,
    without intermediate overflow or underflow, rounded in ``direction`` ("up": a float >= the
    exact value, "down": <=). ``inf`` / 0 only when the exact result is beyond the float range
    (rounded accordingly: "up" never returns 0 for a positive value)."""
    m, e, k = 1.0, 0, 0
    for x in nums:
        if x == 0:
            return 0.0
        mx, ex = _mant_exp(x)
        m *= mx
        e += ex
        k += 1
        m, ee = math.frexp(m)
        e += ee
    for x in dens:
        if x == 0:
            return math.inf if direction == "up" else sys.float_info.max
        mx, ex = _mant_exp(x)
        m /= mx
        e -= ex
        k += 1
        m, ee = math.frexp(m)
        e += ee
    # each of the <= 2k roundings (products, quotients, big-int mantissas) errs by one ulp at most
    ulps = 2 * k + 2
    m = round_up(m, ulps) if direction == "up" else round_down(m, ulps)
    try:
        out = math.ldexp(m, e)
    except OverflowError:
        return math.inf if direction == "up" else sys.float_info.max
    if out < sys.float_info.min:  # subnormal range: ldexp rounded to nearest
        out = next_up(out) if direction == "up" else max(next_down(out), 0.0)
    return out


def l2_norm(x, axis=None, keepdims: bool = False):
    """Euclidean norm without overflow or underflow of the squares (entries are scaled by the
    largest magnitude first; ``np.linalg.norm`` overflows to inf, with a RuntimeWarning, for
    entries beyond ~1e154). ``axis=None``: the norm of the flattened array (a float)."""
    x = np.asarray(x, dtype=float)
    if axis is None:
        x = x.ravel()
        ax = 0
    else:
        ax = axis
    scale = np.max(np.abs(x), axis=ax, keepdims=True) if x.size else np.zeros((1,) * max(x.ndim, 1))
    safe = np.where((scale > 0) & np.isfinite(scale), scale, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        out = scale * np.sqrt(np.sum((x / safe) ** 2, axis=ax, keepdims=True))
    out = np.where(np.isinf(scale), np.inf, out)
    if axis is None:
        return float(out.ravel()[0]) if out.size else 0.0
    return out if keepdims else np.squeeze(out, axis=ax)
