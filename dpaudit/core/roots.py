"""One home of the root searches: a bracketed bisection with bounded iterations, an explicit
tolerance and *directed* results.

Every search outside the audit package that looks for the point where a monotone test switches
(the smallest sigma meeting a target, the epsilon where a curve falls below delta, the largest rho
a conversion allows, ...) goes through :func:`bisect`:

* the caller states a bracket ``(lo, hi)`` with ``pred(lo)`` False and ``pred(hi)`` True (found,
  when needed, by :func:`bracket_up` / :func:`bracket_down`, geometric steps with a step bound);
* the bracket is halved keeping that invariant -- whatever ``pred`` does in between, so a
  rounding wobble of ``pred`` near the switch can never return a point where ``pred`` failed;
* it stops at an explicit tolerance (``rtol``/``atol`` on the bracket, or a caller's ``stop``
  test, e.g. "the value at ``hi`` is within 1e-9 of the target"), when the two ends are adjacent
  floats, or after ``max_iter`` evaluations (a hard bound on the loop);
* the result is the bracket: the caller returns the end on the safe side. :func:`smallest_true`
  returns ``hi`` (e.g. the smallest noise known to meet a target: every returned value was
  evaluated and passed), :func:`largest_false` returns ``lo``.

Midpoints (``midpoint=``):

* ``"float"`` (default): the midpoint of the two ends' positions in the ordered list of all
  finite floats (their bit patterns, sign folded), so the bracket shrinks by half in *number of
  floats*: any bracket, across any number of binades and through 0, reaches adjacent floats in
  at most 64 halvings;
* ``"arithmetic"``: ``(lo + hi) / 2`` (for brackets of similar magnitudes, absolute tolerances);
* ``"geometric"``: ``sqrt(lo) sqrt(hi)`` for ``0 < lo < hi`` (halving in log scale).
"""

from __future__ import annotations

import math
import struct
import sys
from collections.abc import Callable
from typing import NamedTuple

__all__ = ["Bracket", "bisect", "smallest_true", "largest_false", "bracket_up", "bracket_down", "MIDPOINTS",
           "float_midpoint"]

#: the midpoint rules understood by :func:`bisect`
MIDPOINTS = ("float", "arithmetic", "geometric")

_SIGN = 1 << 63
_FMAX = sys.float_info.max


class Bracket(NamedTuple):
    """``pred(lo)`` is False and ``pred(hi)`` is True."""

    lo: float
    hi: float


def _key(x: float) -> int:
    """The position of the finite float ``x`` in the ordered list of floats (-0.0 and 0.0 both 0)."""
    u = struct.unpack("<Q", struct.pack("<d", x))[0]
    return u if u < _SIGN else -(u - _SIGN)


def _from_key(k: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", k if k >= 0 else _SIGN - k))[0]


def float_midpoint(lo: float, hi: float) -> float:
    """The float halfway between ``lo`` and ``hi`` in the ordered list of floats (``lo <= hi``)."""
    return _from_key((_key(lo) + _key(hi)) // 2)


def bisect(pred: Callable[[float], bool], lo: float, hi: float, *, midpoint: str = "float", rtol: float = 0.0,
           atol: float = 0.0, max_iter: int | None = None,
           stop: Callable[[float, float], bool] | None = None) -> Bracket:
    """Halve the bracket ``[lo, hi]`` of the switch of ``pred`` from False to True.

    The caller guarantees ``pred(lo)`` is False and ``pred(hi)`` is True (neither is
    evaluated); the returned :class:`Bracket` keeps that invariant. Stops when
    ``hi - lo <= max(atol, rtol * max(|lo|, |hi|))``, when ``stop(lo, hi)`` is True, when the
    midpoint is no longer strictly inside (adjacent floats), or after ``max_iter`` evaluations
    of ``pred`` (default 100 for ``"float"``, which reaches adjacent floats within 64; 1100 for
    the other rules, enough to cross the float range). See the module docstring.
    """
    lo, hi = float(lo), float(hi)
    if midpoint not in MIDPOINTS:
        raise ValueError(f"midpoint must be one of {MIDPOINTS}, got {midpoint!r}")
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"bisect needs finite lo < hi, got lo={lo!r}, hi={hi!r}")
    if midpoint == "geometric" and not lo > 0.0:
        raise ValueError(f"the geometric midpoint needs lo > 0, got lo={lo!r}")
    if max_iter is None:
        max_iter = 100 if midpoint == "float" else 1100
    for _ in range(int(max_iter)):
        if hi - lo <= max(atol, rtol * max(abs(lo), abs(hi))):
            break
        if stop is not None and stop(lo, hi):
            break
        if midpoint == "float":
            mid = float_midpoint(lo, hi)
        elif midpoint == "arithmetic":
            mid = 0.5 * (lo + hi)
            if not math.isfinite(mid):  # (lo + hi beyond the float range)
                mid = 0.5 * lo + 0.5 * hi
        else:
            mid = math.sqrt(lo) * math.sqrt(hi)
        if not lo < mid < hi:
            break
        if pred(mid):
            hi = mid
        else:
            lo = mid
    return Bracket(lo, hi)


def smallest_true(pred, lo: float, hi: float, **options) -> float:
    """The upper end of :func:`bisect`: the smallest point found where ``pred`` holds (it was
    evaluated there, or is the caller's ``hi``). The safe end when ``pred`` means "meets the
    target" and larger values are safer (noise scales, epsilons of an upper bound)."""
    return bisect(pred, lo, hi, **options).hi


def largest_false(pred, lo: float, hi: float, **options) -> float:
    """The lower end of :func:`bisect`: the largest point found where ``pred`` fails. The safe
    end when ``not pred`` means "allowed" and smaller values are safer (a largest feasible rho,
    a lower bound)."""
    return bisect(pred, lo, hi, **options).lo


def bracket_up(pred, lo: float, hi: float, *, factor: float = 2.0, limit: float = _FMAX,
               max_steps: int = 2200) -> Bracket | None:
    """Grow ``hi`` geometrically until ``pred(hi)`` holds.

    ``pred(lo)`` is False (the caller's guarantee, not evaluated; ``lo`` may be 0); ``hi > 0``.
    While ``pred(hi)`` fails, ``lo, hi = hi, min(factor * hi, limit)``. Returns the bracket, or
    ``None`` when ``pred`` fails at ``limit`` or after ``max_steps`` evaluations.
    """
    if not hi > 0.0 or not factor > 1.0:
        raise ValueError(f"bracket_up needs hi > 0 and factor > 1, got hi={hi!r}, factor={factor!r}")
    for _ in range(int(max_steps)):
        if pred(hi):
            return Bracket(lo, hi)
        if hi >= limit:
            return None
        lo, hi = hi, min(hi * factor, limit)
    return None


def bracket_down(pred, hi: float, *, factor: float = 2.0, limit: float = 0.0,
                 max_steps: int = 2200) -> tuple[float | None, float]:
    """Shrink ``lo`` geometrically until ``pred(lo)`` fails.

    ``pred(hi)`` holds (the caller's guarantee, not evaluated; ``hi > 0``). Tries ``lo = hi /
    factor, hi / factor^2, ...``; returns ``Bracket(lo, hi)`` with ``pred(lo)`` False and ``hi``
    the smallest point tried where it held, or ``(None, hi)`` when ``pred`` holds at every point
    tried down to ``limit`` (or 0, or after ``max_steps`` evaluations).
    """
    if not hi > 0.0 or not factor > 1.0:
        raise ValueError(f"bracket_down needs hi > 0 and factor > 1, got hi={hi!r}, factor={factor!r}")
    for _ in range(int(max_steps)):
        lo = hi / factor
        if lo < limit or lo == 0.0:
            break
        if not pred(lo):
            return Bracket(lo, hi)
        hi = lo
    return (None, hi)
