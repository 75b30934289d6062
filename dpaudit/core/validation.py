"""Input validation shared by every layer.

Every public function validates its arguments with these helpers, so that a bad value
raises :class:`ValueError` whose message names the argument and its allowed range
(the public interface's conventions). Nothing here clamps: an out-of-range value is an error.

Every helper takes ``(name, x, ...)``: the name of the argument first, then its value
(tests/contracts/test_architecture.py refuses a helper with the other order).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "UnsupportedMechanismError",
    "check_integer_sensitivity",
    "check_integer_values",
    "check_real",
    "check_rates",
    "check_positive",
    "check_nonnegative",
    "check_probability",
    "check_delta",
    "check_epsilon",
    "check_count",
    "check_orders",
    "check_neighbouring",
    "check_confidence",
    "check_real_array",
    "NEIGHBOURING_RELATIONS",
]

NEIGHBOURING_RELATIONS = ("add_remove", "replace_one")


class UnsupportedMechanismError(TypeError, ValueError):
    """An accountant was asked to compose a mechanism that has no guarantee in its notion.

    Subclasses both :class:`TypeError` and :class:`ValueError` so that callers catching either
    see it; it is never raised for a *value* that merely gives an infinite bound.
    """


def _as_float(name: str, x) -> float:
    if isinstance(x, bool) or not isinstance(x, (numbers.Real, np.floating, np.integer)):
        if isinstance(x, np.ndarray) and x.ndim == 0:
            x = x.item()
        else:
            raise ValueError(f"{name} must be a real number, got {x!r}")
    x = float(x)
    if math.isnan(x):
        raise ValueError(f"{name} must not be NaN")
    return x


def check_real(name: str, x, *, allow_inf: bool = False) -> float:
    """Return ``x`` as a float; reject NaN and (unless ``allow_inf``) infinities."""
    x = _as_float(name, x)
    if not allow_inf and math.isinf(x):
        raise ValueError(f"{name} must be finite, got {x}")
    return x


def check_positive(name: str, x, *, allow_inf: bool = False) -> float:
    """A finite (or, with ``allow_inf``, possibly infinite) number > 0."""
    x = check_real(name, x, allow_inf=allow_inf)
    if not x > 0:
        raise ValueError(f"{name} must be > 0, got {x}")
    return x


def check_nonnegative(name: str, x, *, allow_inf: bool = False) -> float:
    """A finite (or, with ``allow_inf``, possibly infinite) number >= 0."""
    x = check_real(name, x, allow_inf=allow_inf)
    if not x >= 0:
        raise ValueError(f"{name} must be >= 0, got {x}")
    return x


def check_probability(name: str, q) -> float:
    """A probability in the closed interval [0, 1]."""
    q = check_real(name, q)
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {q}")
    return q


def check_delta(name: str, delta) -> float:
    """delta in the open interval (0, 1)."""
    delta = check_real(name, delta)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {delta}")
    return delta


def check_epsilon(name: str, epsilon) -> float:
    """epsilon >= 0 and finite."""
    return check_nonnegative(name, epsilon)


def check_count(name: str, count, *, minimum: int = 0) -> int:
    """An integer >= ``minimum`` (bools are rejected)."""
    if isinstance(count, bool) or not isinstance(count, (numbers.Integral, np.integer)):
        if isinstance(count, (float, np.floating)) and float(count).is_integer():
            count = int(count)
        else:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {count!r}")
    count = int(count)
    if count < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {count}")
    return count


def check_orders(name: str, orders) -> np.ndarray:
    """A 1-D float array of Renyi orders, each > 1 (``inf`` allowed), no NaN."""
    arr = np.atleast_1d(np.asarray(orders, dtype=float))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of orders > 1")
    if np.any(np.isnan(arr)):
        raise ValueError(f"{name} must not contain NaN")
    if np.any(arr <= 1.0):
        raise ValueError(f"{name} must all be > 1, got min {arr.min()}")
    return arr


def check_neighbouring(name: str, relation: str) -> str:
    """One of ``"add_remove"`` or ``"replace_one"``."""
    if relation not in NEIGHBOURING_RELATIONS:
        raise ValueError(f"{name} must be one of {NEIGHBOURING_RELATIONS}, got {relation!r}")
    return relation


def check_confidence(name: str, confidence) -> float:
    """A confidence level in the open interval (0, 1)."""
    c = check_real(name, confidence)
    if not 0.0 < c < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {c}")
    return c


def check_real_array(name: str, x, *, finite: bool = True) -> np.ndarray:
    """``x`` as a float ndarray; ValueError naming ``name`` for complex, non-numeric (object,
    string) or, with ``finite``, NaN/infinite entries.

    ``np.asarray(x, dtype=float)`` would silently drop the imaginary part of complex input
    (with only a ComplexWarning) and would accept booleans; both are refused here.
    """
    arr = np.asarray(x)
    if np.iscomplexobj(arr):
        raise ValueError(f"{name} must be real, got a complex array (dtype {arr.dtype})")
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    arr = arr.astype(float, copy=False)
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def check_rates(name: str, x) -> np.ndarray:
    """``x`` (scalar or array of error rates) as a float ndarray with every entry in [0, 1];
    ValueError naming ``name`` otherwise (NaN and inf included)."""
    arr = np.asarray(x, dtype=float)
    if np.any(~np.isfinite(arr)) or np.any((arr < 0) | (arr > 1)):
        raise ValueError(f"{name} must be in [0, 1]")
    return arr


def check_integer_sensitivity(name: str, x, *, maximum: int) -> int:
    """A positive integer (a float with an integer value accepted) at most ``maximum``, as int: the
    sensitivity of a mechanism on the integers."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise ValueError(f"{name} must be a positive integer, got {x!r}")
    s = float(x)
    if not math.isfinite(s) or s != math.floor(s) or s < 1:
        raise ValueError(f"{name} must be a positive integer, got {x!r}")
    if s > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {x!r}")
    return int(s)


def check_integer_values(name: str, value, *, max_abs: int = 2 ** 61) -> np.ndarray:
    """``value`` as an int64 array, refusing non-numeric, non-integer and non-finite values and
    ``|value| > max_abs`` (a power of two; 2^61 leaves room for noise inside int64)."""
    arr = np.asarray(value)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number) or np.iscomplexobj(arr):
        raise ValueError(f"{name} must be integer-valued, got dtype {arr.dtype}")
    if not np.issubdtype(arr.dtype, np.integer):
        with np.errstate(invalid="ignore"):
            if not np.all(np.isfinite(arr)) or np.any(arr != np.floor(arr)):
                raise ValueError(f"{name} must be integer-valued")
    if np.any(np.abs(arr.astype(float)) > max_abs):
        raise ValueError(f"{name} must satisfy |{name}| <= 2^{int(max_abs).bit_length() - 1}, got {value!r}")
    return arr.astype(np.int64)
