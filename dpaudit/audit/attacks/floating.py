"""Bit-level attacks on floating-point outputs, and the reachable sets of ``fl(v + n)``.

``float-bits``: bit-level features of floating-point outputs: for each coordinate, the sign, the binary
    exponent and the number of significant bits of the mantissa (53 minus the trailing zeros),
    scored by their empirical log-likelihood ratio, summed over coordinates. A textbook
    floating-point Laplace or Gaussian sampler ``x + noise`` rounds differently around different
    ``x``: outputs reachable from one input are not reachable from the other (Mironov,
    "On significance of the least significant bits for differential privacy", CCS 2012), and the
    low bits tell them apart. Safe implementations snap the output to a coarse grid after
    clamping (Mironov's snapping mechanism) or draw discrete noise (e.g. the discrete Gaussian,
    Canonne, Kamath, Steinke, NeurIPS 2020) so that every output is reachable from every input.

The reachable-set models (:func:`additive_reachable`, :func:`numpy_laplace_reachable`) decide exactly whether a
double is an output of ``fl(v + n)``; :func:`dpaudit.audit.floating.check_floating_point` uses them.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.audit.attacks.base import (
    MAX_TABLE_COLUMNS,
    AttackFamily,
    CategoryTable,
    FittedStatistic,
    numeric_or_raise,
)
from dpaudit.audit.attacks.outputs import is_numeric_batch

__all__ = ["float_bit_codes", "float_bits_statistic", "float_reachability_statistic", "FloatBitsAttack",
           "additive_reachable", "numpy_laplace_reachable"]


_MANTISSA = np.uint64((1 << 52) - 1)
_HIDDEN = np.uint64(1 << 52)


def float_bit_codes(x):
    """Integer code of (sign, binary exponent, significant mantissa bits) of each double in ``x``.

    Non-finite values get codes of their own. The number of significant bits is 53 minus the
    trailing zero bits of the 53-bit significand (0 for zero).
    """
    x = np.ascontiguousarray(np.asarray(x, dtype=np.float64))
    if x.ndim != 1 or x.size <= _BLOCK:
        return _float_bit_codes_block(x)
    out = np.empty(x.size, dtype=np.int64)
    for start in range(0, x.size, _BLOCK):  # blocks whose temporaries stay in the cache
        out[start:start + _BLOCK] = _float_bit_codes_block(x[start:start + _BLOCK])
    return out


#: values per block of :func:`float_bit_codes`
_BLOCK = 1 << 14


def _float_bit_codes_block(x):
    u = x.view(np.uint64)
    field = (u >> np.uint64(52)) & np.uint64(0x7FF)  # the biased exponent
    if x.size and not bool(((field - np.uint64(1)) >= np.uint64(0x7FE)).any()):
        # normal numbers only (no zero, subnormal, inf or NaN): read off the bits. frexp's exponent is
        # field - 1022, the significand is the mantissa with its hidden bit, whose trailing zeros are the
        # set bits below its lowest set bit; ((e + 1100) * 64 + 53 - tz) * 2 + sign in one expression
        sig = (u & _MANTISSA) | _HIDDEN
        tz = _trailing_zeros(sig)
        return field.astype(np.int64) * 128 + (u >> np.uint64(63)).astype(np.int64) + 10090 - 2 * tz
    return _float_bit_codes_of_any(x)


def _trailing_zeros(sig):
    """Trailing zero bits of nonzero uint64 integers below 2^53: the set bits below the lowest set bit
    (``numpy.bitwise_count``, numpy >= 2.0), or the exponent of the lowest set bit, a power of two that a double
    holds exactly (numpy 1.x: the same numbers)."""
    with np.errstate(over="ignore"):
        low = sig & (~sig + np.uint64(1))  # lowest set bit (two's complement trick on uint64)
    if _BITWISE_COUNT is not None:
        return _BITWISE_COUNT(low - np.uint64(1)).astype(np.int64)
    return np.frexp(low.astype(np.float64))[1].astype(np.int64) - 1


#: ``numpy.bitwise_count`` where numpy has it (2.0 and later); dpaudit supports numpy 1.23 and later
_BITWISE_COUNT = getattr(np, "bitwise_count", None)


def _float_bit_codes_of_any(x):
    """:func:`float_bit_codes` of doubles that may be zero, subnormal or non-finite (through ``frexp``)."""
    fin = np.isfinite(x)
    every = bool(fin.all())  # the usual case: no non-finite value to code apart
    xf = x if every else np.where(fin, x, 0.0)
    m, e = np.frexp(np.abs(xf))  # |x| = m 2^e, m in [0.5, 1)
    sig = np.ldexp(m, 53).astype(np.uint64)  # exact 53-bit integer significand
    nz = sig != 0
    with np.errstate(over="ignore"):
        low = sig & (~sig + np.uint64(1))  # lowest set bit (two's complement trick on uint64)
    tz = np.frexp(low.astype(np.float64))[1].astype(np.int64) - 1  # exact: low is a power of two
    bits = np.where(nz, 53 - tz, 0)
    sign = (np.signbit(xf)).astype(np.int64)
    code = ((np.clip(e, -1100, 1100).astype(np.int64) + 1100) * 64 + bits) * 2 + sign
    if not every:
        code = np.where(np.isnan(x), -1, np.where(x == np.inf, -2, np.where(x == -np.inf, -3, code)))
    return code


class _FloatBits(FittedStatistic):
    family = "float-bits"
    bit_level = True

    def __init__(self, tables, description):
        self.tables, self.description = tables, description
        if len(tables) == 1:
            self.tie_values = tables[0].values()

    def __call__(self, batch):
        b = numeric_or_raise(batch, "the float-bits attack")
        if b.shape[1] != len(self.tables):
            raise ValueError(f"outputs have {b.shape[1]} values per run, the attack was fitted on {len(self.tables)}")
        out = np.zeros(b.shape[0])
        for start in range(0, b.shape[0], _BLOCK):  # row blocks whose temporaries stay in the cache
            rows = b[start:start + _BLOCK]
            for j, t in enumerate(self.tables):
                out[start:start + _BLOCK] += t(float_bit_codes(rows[:, j]))
        return out


def float_bits_statistic(train0, train1, *, alpha: float = 0.5):
    """Bit-level statistic (sign, exponent, significant bits per coordinate; module docstring)."""
    a = numeric_or_raise(train0, "the float-bits attack")
    b = numeric_or_raise(train1, "the float-bits attack")
    tables = [CategoryTable(float_bit_codes(a[:, j]), float_bit_codes(b[:, j]), alpha) for j in range(a.shape[1])]
    return _FloatBits(tables, f"bit-level features of {a.shape[1]} floating-point coordinate(s): sign, exponent, "
                              "significant mantissa bits (empirical likelihood ratio)")


class _Reachability(FittedStatistic):
    family = "float-reachability"
    bit_level = True
    tie_values: np.ndarray | None = np.array([-1.0, 0.0, 1.0])

    def __init__(self, v0, v1):
        self.v0, self.v1 = v0, v1
        self.description = f"floating-point reachability of the output from x + noise (values {v0:g} and {v1:g})"

    @staticmethod
    def _reachable(y, v):
        with np.errstate(all="ignore"):
            n0 = y - v
            ok = np.zeros(y.shape, bool)
            for k in range(-2, 3):
                n = n0
                for _ in range(abs(k)):
                    n = np.nextafter(n, np.inf if k > 0 else -np.inf)
                ok |= (v + n) == y
        return ok

    def __call__(self, batch):
        y = numeric_or_raise(batch, "the reachability statistic")[:, 0]
        return self._reachable(y, self.v1).astype(float) - self._reachable(y, self.v0).astype(float)


def float_reachability_statistic(value0: float, value1: float):
    """Score +1 if an output y is reachable as fl(value1 + n) for some double n but not as
    fl(value0 + n), -1 for the reverse, 0 otherwise (Mironov 2012's attack on ``value + noise``).

    For scalar additive-noise mechanisms whose exact query values on x and x' are known.
    """
    v0, v1 = float(value0), float(value1)
    if not (math.isfinite(v0) and math.isfinite(v1)):
        raise ValueError("value0 and value1 must be finite")
    return _Reachability(v0, v1)



class FloatBitsAttack(AttackFamily):
    name = "float-bits"
    description = "bit-level features of floating-point outputs (Mironov 2012)"

    def applicable(self, train0, train1):
        if not is_numeric_batch(train0):
            return False, "needs numeric outputs"
        both = np.concatenate([train0, train1])
        fin = both[np.isfinite(both)]
        if fin.size == 0 or np.all(fin == np.round(fin)):
            return False, "outputs are integer-valued (no floating-point rounding to read)"
        if train0.shape[1] > MAX_TABLE_COLUMNS:  # one table per column: minutes at 10^5 columns
            return False, (f"{train0.shape[1]} values per run, more than {MAX_TABLE_COLUMNS} (one table per "
                           "coordinate)")
        return True, ""

    def fit(self, train0, train1, seed=0, features=None):
        return float_bits_statistic(train0, train1)


# ------------------------------------------------------------------------------ reachable sets
def additive_reachable(y, v):
    """Boolean array: is each double ``y`` equal to ``fl(v + n)`` for some double ``n``? (exact)"""
    y = np.asarray(y, dtype=np.float64)
    v = np.broadcast_to(np.asarray(v, dtype=np.float64), y.shape)
    with np.errstate(all="ignore"):
        n0 = y - v
        ok = (v + n0) == y
        up, dn = n0, n0
        for _ in range(2):
            up, dn = np.nextafter(up, np.inf), np.nextafter(dn, -np.inf)
            ok |= ((v + up) == y) | ((v + dn) == y)
    return ok | ~np.isfinite(y)  # non-finite outputs: not decided by this model


_clog = np.frompyfunc(math.log, 1, 1)


def _laplace_noise(j, branch, b, exact):
    """numpy's ``random_laplace`` noise for ``U = j * 2**-53`` (``branch`` 0: U < 1/2, 1: U >= 1/2)."""
    u = j * 2.0**-53
    m = (u + u) if branch == 0 else ((2.0 - u) - u)
    lg = _clog(m).astype(np.float64) if exact else np.log(m)
    return b * lg if branch == 0 else -(b * lg)


def numpy_laplace_reachable(y, v, scale: float):
    """Boolean array: is each ``y`` an output of numpy's ``laplace(v, scale)`` (exact; module docstring)."""
    y = np.asarray(y, dtype=np.float64).ravel()
    v = float(v)
    b = float(scale)
    if not (math.isfinite(b) and b > 0):
        raise ValueError(f"scale must be a positive finite number, got {scale}")
    ok = np.zeros(y.shape, bool)
    for branch, lo0, hi0 in ((0, 1, 2**52 - 1), (1, 2**52, 2**53 - 1)):
        # the output v + noise(j) is non-decreasing in j on both branches: find the first j with output >= y
        lo = np.full(y.shape, float(lo0))
        hi = np.full(y.shape, float(hi0))
        with np.errstate(all="ignore"):
            for _ in range(60):  # 53 halvings suffice; the bound keeps the loop finite
                if not np.any(hi - lo > 0):
                    break
                mid = np.floor((lo + hi) / 2.0)
                out = v + _laplace_noise(mid, branch, b, exact=False)
                big = out >= y
                hi = np.where(big, mid, hi)
                lo = np.where(big, lo, mid + 1.0)
            for d in range(-3, 4):
                j = np.clip(lo + d, lo0, hi0)
                ok |= (v + _laplace_noise(j, branch, b, exact=True)) == y
    return ok | ~np.isfinite(y)
