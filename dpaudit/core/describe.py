"""Short, never-failing descriptions of whatever a user passed (inputs, outputs, mechanisms).

The failure messages of :mod:`dpaudit.testing.assertions` and the audit's checks name inputs. Those
inputs are the user's: numbers, arrays, ragged tuples such as ``(X, y)``, dicts, data frames,
objects whose ``repr`` raises. Describing them must never raise, or the user sees numpy's
"setting an array element with a sequence" instead of the diagnostic ``AssertionError``.
"""

from __future__ import annotations

import reprlib
import warnings

import numpy as np

__all__ = ["describe_value", "describe_object"]

_WIDTH = 60
_MAX_DEPTH = 3


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _numeric(value) -> str | None:
    """``array2string`` of ``value`` when it is a homogeneous numeric/bool array, else None."""
    if isinstance(value, (str, bytes)):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            arr = np.asarray(value)
    except Exception:  # ragged sequences, objects whose __array__ raises, ...
        return None
    if arr.dtype.kind not in "biufc":
        return None
    try:
        return np.array2string(arr, threshold=6, precision=4, separator=", ")
    except Exception:
        return None


def _safe_repr(value) -> str:
    try:
        return reprlib.repr(value)
    except Exception:
        return f"<{type(value).__name__} object (repr failed)>"


def _describe(value, width: int, depth: int) -> str:
    text = _numeric(value)
    if text is not None:
        return text
    if depth < _MAX_DEPTH and isinstance(value, (tuple, list)):
        open_, close = ("(", ")") if isinstance(value, tuple) else ("[", "]")
        parts = [_describe(item, width, depth + 1) for item in value[:4]]
        if len(value) > 4:
            parts.append(f"... ({len(value)} items)")
        tail = "," if isinstance(value, tuple) and len(value) == 1 else ""
        return open_ + ", ".join(parts) + tail + close
    return _safe_repr(value)


def describe_value(value, width: int = _WIDTH) -> str:
    """A one-line description of ``value`` of at most ``width`` characters; never raises."""
    try:
        text = _describe(value, width, 0)
    except Exception:  # last resort: a description must not hide the real failure
        text = f"<{type(value).__name__} object>"
    return _clip(" ".join(text.split()), width)


def describe_object(obj) -> str:
    """``obj.describe()`` when it has one, else its repr; never raises."""
    if obj is None:
        return "the mechanism"
    try:
        d = getattr(obj, "describe", None)
        if callable(d):
            return str(d())
    except Exception:
        pass
    return describe_value(obj, width=200)
