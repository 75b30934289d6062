"""JSON-serialisable views of results: :func:`to_jsonable` (one rule for ``inf``, NaN and numpy types)."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["to_jsonable"]


def to_jsonable(obj):
    """Convert numpy scalars/arrays, tuples and non-finite floats into JSON-serialisable values.

    ``inf``/``-inf`` become the strings ``"inf"``, ``"-inf"`` (an epsilon of ``"inf"`` means no
    guarantee) and NaN becomes ``None`` (JSON ``null``): strict JSON has no representation for
    them. The CLI's ``--json`` output follows the same rule.
    """
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        if math.isnan(x):
            return None
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return x
    if obj is None or isinstance(obj, str):
        return obj
    if hasattr(obj, "to_dict"):
        return to_jsonable(obj.to_dict())
    return repr(obj)
