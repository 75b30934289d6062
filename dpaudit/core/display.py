"""Numbers as a reader sees them: one rule for every printed epsilon, rate and count.

Every surface that prints an audit (the verdict's words, the report, the pytest helpers' messages, the
command line's sentences) writes its numbers with these helpers, so the same number reads the same
everywhere:

* :func:`bound_text`: a bound to ``digits`` significant digits (default 3), rounded in its own direction
  -- a lower bound down, an upper bound or a claim up -- so that the displayed number is still a bound
  (a certified 0.9419 is shown "0.941", never "0.942"). Exact: the decimal digits of ``repr(x)`` are
  rounded, so ``float(bound_text(x, up=True)) >= x``. Trailing zeros are kept (``"7.90"``, ``"1.00"``:
  every number shows the same number of significant digits); 0 is ``"0"``.
* :func:`number_text`: any other value (a rate, a score, an estimate), rounded to nearest, same digits.
* :func:`count_text`: an integer with thousands separators (``"13,641"``).
* :func:`percent_text`: a probability as a percentage (``"97.7%"``, ``"< 0.1%"``).

``inf`` is ``"inf"``, NaN or ``None`` ``"n/a"``; numbers given as the strings of ``to_dict()`` (``"inf"``)
are read first.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal

__all__ = ["as_number", "bound_text", "number_text", "count_text", "percent_text", "DIGITS"]

#: significant digits of every displayed epsilon
DIGITS = 3


def as_number(x) -> float:
    """``x`` as a float (``"inf"``/``"nan"`` strings of ``to_dict()`` read; ``None`` or junk is NaN)."""
    if x is None:
        return math.nan
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def _special(x: float) -> str | None:
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    return None


def _digits(x: float, digits: int, rounding) -> str:
    d = Decimal(repr(x))
    q = d.quantize(Decimal(1).scaleb(d.adjusted() - (digits - 1)), rounding=rounding)
    if q.adjusted() > d.adjusted():  # 9.996 -> 10.0: keep the number of significant digits
        q = q.quantize(Decimal(1).scaleb(q.adjusted() - (digits - 1)), rounding=rounding)
    if abs(q.adjusted()) > 5:  # very small or large: scientific notation
        return f"{q:.{digits - 1}e}"
    return f"{q:f}"


def bound_text(x, *, up: bool, digits: int = DIGITS) -> str:
    """A bound rounded in its direction: up (upper bounds, claims) or down (lower bounds); module docstring."""
    x = as_number(x)
    special = _special(x)
    if special is not None:
        return special
    return _digits(x, digits, ROUND_CEILING if up else ROUND_FLOOR)


def number_text(x, digits: int = DIGITS) -> str:
    """A value that is not a bound (a rate, a score, an estimate), rounded to nearest."""
    x = as_number(x)
    special = _special(x)
    if special is not None:
        return special
    return _digits(x, digits, ROUND_HALF_EVEN)


def count_text(n) -> str:
    """An integer count with thousands separators."""
    try:
        return f"{int(n):,}"
    except (TypeError, ValueError, OverflowError):
        return "n/a"


def percent_text(p, digits: int = DIGITS) -> str:
    """A probability in [0, 1] as a percentage with ``digits`` significant digits (``"0.0%"`` and ``"100%"`` only
    when exact; a tiny non-zero rate reads ``"< 0.001%"``)."""
    p = as_number(p)
    if math.isnan(p):
        return "n/a"
    if p <= 0.0:
        return "0%"
    if p >= 1.0:
        return "100%"
    pct = 100.0 * p
    if pct < 1e-3:
        return "< 0.001%"
    text = _digits(pct, digits, ROUND_HALF_EVEN)
    if float(text) >= 100.0:  # 99.9996% must not read as 100%
        text = "99.9"
    if "e" in text:
        text = f"{pct:.3f}"
    return text + "%"
