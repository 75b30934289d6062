"""Encoding of whatever a mechanism returns, so that attacks can compare outputs across runs.

A sampler returns a batch of ``size`` outputs. Two representations are used downstream:

* **numeric** -- a float array of shape ``(size, k)``: numbers, booleans, fixed-length vectors or
  arrays (flattened per run). ``NaN`` (e.g. "aborted") and ``+-inf`` are kept: they are legitimate
  outputs, and the attacks treat them as special values;
* **objects** -- an object array of shape ``(size,)`` holding one canonical, hashable *key* per run:
  anything else (variable-length transcripts such as an SVT answer list that stops at the cutoff,
  tuples mixing labels and values, ``None`` for "aborted", strings, categories, dicts). The key of
  an output is built by :func:`canonical_key`: numbers become floats (``NaN`` becomes
  :data:`NAN_KEY`, so that two NaN outputs compare equal), sequences and arrays become tuples of
  keys, dicts become sorted tuples of (key, value) pairs, sets sorted tuples; strings, bytes,
  ``None`` and booleans stay as they are; other objects are kept if their class defines value
  equality and hashing (e.g. a frozen dataclass), and refused otherwise -- an object compared by
  identity is never equal to the output of another run, so no attack could use it.

An ``encode`` hook (``audit_mechanism(..., encode=f)``) maps each raw output to something of the
above (a number, a tuple, a string, ...) first: use it for outputs that cannot be compared as they
are, or to drop a part of the output that must not be attacked (e.g. a timestamp).

For the learned attacks, :func:`object_features` turns keys into a fixed-width numeric matrix
(length of the transcript, the numeric leaves by position, indicators of missing/None/NaN and of
non-numeric leaves, and a hashed code of non-numeric leaves).
"""

from __future__ import annotations

import math
import numbers
import zlib

import numpy as np

from dpaudit.core.describe import describe_value

__all__ = ["SAMPLER_CONTRACT", "describe_returned", "as_output_batch", "canonical_key", "is_numeric_batch", "object_features", "row_keys", "NAN_KEY",
           "describe_outputs", "batch_spec", "conform"]

#: the sampler's contract, quoted by every error about what a sampler returned
SAMPLER_CONTRACT = "a sampler is `sampler(x, rng, size)` returning `size` outputs"
#: objects that are one output, never a batch of outputs (iterating them gives characters or keys)
_SINGLE_OUTPUTS = (str, bytes, bytearray, dict, set, frozenset)

#: key of a NaN leaf (NaN != NaN as a float; the key compares equal to itself)
NAN_KEY = ("<NaN>",)
#: numeric leaves by position used as features of object outputs (longer transcripts are cut)
MAX_FEATURE_POSITIONS = 64


def canonical_key(obj):
    """A hashable key of one output; equal outputs of two runs get equal keys (module docstring)."""
    if obj is None or isinstance(obj, (str, bytes, bool, np.bool_)):
        return bool(obj) if isinstance(obj, np.bool_) else obj
    if isinstance(obj, (numbers.Real, np.number)) and not isinstance(obj, (complex, np.complexfloating)):
        x = float(obj)
        return NAN_KEY if math.isnan(x) else x
    if isinstance(obj, (complex, np.complexfloating)):
        return ("<complex>", canonical_key(obj.real), canonical_key(obj.imag))
    if isinstance(obj, np.ndarray):
        return tuple(canonical_key(v) for v in obj.tolist()) if obj.ndim else canonical_key(obj.item())
    if isinstance(obj, (list, tuple)):
        return tuple(canonical_key(v) for v in obj)
    if isinstance(obj, dict):
        return ("<dict>",) + tuple(sorted(((canonical_key(k), canonical_key(v)) for k, v in obj.items()), key=repr))
    if isinstance(obj, (set, frozenset)):
        return ("<set>",) + tuple(sorted((canonical_key(v) for v in obj), key=repr))
    cls = type(obj)
    if cls.__hash__ is None or (cls.__hash__ is object.__hash__ and cls.__eq__ is object.__eq__):
        raise ValueError(
            f"mechanism outputs of type {cls.__name__} cannot be compared across runs (compared by identity, or "
            "unhashable); pass encode=... to audit_mechanism, mapping each output to numbers, tuples or strings")
    return obj


def is_numeric_batch(batch) -> bool:
    """True for the numeric representation (a float array of shape (size, k))."""
    return isinstance(batch, np.ndarray) and batch.dtype.kind == "f" and batch.ndim == 2


def _numeric(raw):
    """``raw`` as a numeric float array if it is one (regular shape, numbers/bools), else None."""
    if isinstance(raw, np.ndarray):
        arr = raw
    else:
        if isinstance(raw, (list, tuple)) and raw and not (
                all(isinstance(v, (numbers.Real, np.number)) for v in raw)
                or all(isinstance(v, np.ndarray) and v.dtype.kind in "biuf" for v in raw)):
            return None  # lists of tuples, lists, None, strings...: the object representation
        try:
            with np.errstate(all="ignore"):
                arr = np.asarray(raw)
        except (ValueError, TypeError):
            return None
    if arr.dtype.kind not in "biuf":
        return None
    arr = arr.astype(float, copy=False)
    if arr.ndim == 0:
        return arr.reshape(1, 1)
    if arr.ndim == 1:
        return arr.reshape(-1, 1)
    return arr.reshape(arr.shape[0], -1)


def describe_returned(raw) -> str:
    """What a sampler returned, for error messages: its type, its length (or shape) and a short repr."""
    if isinstance(raw, np.ndarray):
        shape = f"array of shape {raw.shape}, dtype {raw.dtype}"
    else:
        try:
            shape = f"{type(raw).__name__} of length {len(raw)}"
        except Exception:  # no len(): a scalar, None, a generator...
            shape = f"{type(raw).__name__} (no length)"
    return f"{shape}: {describe_value(raw, width=80)}"


def _contract_error(problem: str, raw, size) -> ValueError:
    wanted = f" (here size = {size})" if size is not None else ""
    return ValueError(f"{SAMPLER_CONTRACT}{wanted}; {problem}; it returned {describe_returned(raw)}")


def _check_batch_form(raw, size) -> None:
    """Refuse a batch that is one output (a string, bytes, a dict) or a scalar where ``size != 1`` outputs
    were asked for, naming the contract and what came back."""
    if isinstance(raw, _SINGLE_OUTPUTS):
        raise _contract_error(f"one {type(raw).__name__} is one output, not a batch (return a list of `size` of them)",
                              raw, size)
    scalar = raw is None or isinstance(raw, (numbers.Number, np.generic)) or (
        isinstance(raw, np.ndarray) and raw.ndim == 0)
    if scalar and size != 1:
        raise _contract_error("a single value is one output, not a batch (draw `size` of them, e.g. "
                              "rng.laplace(x, b, size))", raw, size)


def as_output_batch(raw, size: int | None = None, encode=None):
    """One sampler batch in the numeric or the object representation (module docstring).

    ``size`` checks the number of outputs (the first axis of an array, the length of a list); a
    string, bytes, a dict or a scalar is one output, never a batch of ``size != 1`` (``ValueError``
    quoting :data:`SAMPLER_CONTRACT` and what came back). ``encode`` (optional) is applied to each
    output first.
    """
    _check_batch_form(raw, size)
    if encode is not None:
        items = list(raw) if not isinstance(raw, np.ndarray) or raw.ndim else [raw.item()]
        raw = [encode(o) for o in items]
        num = _numeric(raw) if all(isinstance(v, (numbers.Real, np.number)) for v in raw) else None
    else:
        num = _numeric(raw)
    if num is not None:
        n = num.shape[0]
        if size is not None and n != size:
            raise _contract_error(f"the sampler returned {n} outputs, expected {size} (first axis = runs)", raw, size)
        return num
    if isinstance(raw, np.ndarray):
        items = list(raw) if raw.ndim else [raw.item()]
    else:
        try:
            items = list(raw)
        except TypeError:
            raise _contract_error("not a sequence of outputs", raw, size) from None
    if size is not None and len(items) != size:
        raise _contract_error(f"the sampler returned {len(items)} outputs, expected {size} (one per run; a variable-length output of "
                              "one run must be one item, e.g. a tuple, not spread along the first axis)", raw, size)
    out = np.empty(len(items), dtype=object)
    for i, o in enumerate(items):
        out[i] = canonical_key(o)
    return out


def row_keys(batch):
    """Hashable per-run keys of a batch: ``bytes`` of each row (numeric, NaNs made equal) or the object keys."""
    if is_numeric_batch(batch):
        a = np.where(np.isnan(batch), np.nan, batch)  # one NaN bit pattern
        a = np.ascontiguousarray(a + 0.0)  # -0.0 -> 0.0
        return a.view(np.dtype((np.void, a.dtype.itemsize * a.shape[1]))).ravel()
    return batch


def _leaves(key, out):
    if isinstance(key, tuple) and key is not NAN_KEY and key != NAN_KEY:
        for v in key:
            _leaves(v, out)
    else:
        out.append(key)


def object_features(keys, positions: int = MAX_FEATURE_POSITIONS) -> np.ndarray:
    """Fixed-width numeric features of object keys (see the module docstring)."""
    n = len(keys)
    p = int(positions)
    vals = np.zeros((n, p))
    missing = np.zeros((n, p))
    other = np.zeros((n, p))
    code = np.zeros((n, p))
    length = np.zeros((n, 1))
    for i, k in enumerate(keys):
        leaves: list = []
        _leaves(k, leaves)
        length[i, 0] = len(leaves)
        for j, v in enumerate(leaves[:p]):
            if isinstance(v, float):
                vals[i, j] = v if math.isfinite(v) else math.copysign(1e6, v)
            elif isinstance(v, bool):
                vals[i, j] = float(v)
            elif v is None or v == NAN_KEY:
                missing[i, j] = 1.0
            else:
                other[i, j] = 1.0
                code[i, j] = (zlib.crc32(repr(v).encode()) % 1024) / 1024.0
        missing[i, len(leaves[:p]):] = 1.0
    return np.concatenate([length, vals, missing, other, code], axis=1)


def describe_outputs(batch) -> str:
    """A short description of a batch's representation (for results)."""
    if is_numeric_batch(batch):
        k = batch.shape[1]
        special = "with NaN" if np.isnan(batch).any() else "finite" if np.isfinite(batch).all() else "with inf"
        integral = bool(np.all(np.isnan(batch) | (batch == np.round(batch))))
        return f"numeric, {k} value{'s' if k != 1 else ''} per run ({'integer-valued' if integral else 'real'}, {special})"
    return "objects (canonical keys: variable-length, mixed or non-numeric outputs)"


def batch_spec(batch) -> tuple:
    """("numeric", k) or ("objects", None): the representation every later batch must have."""
    return ("numeric", int(batch.shape[1])) if is_numeric_batch(batch) else ("objects", None)


def conform(batch, spec):
    """``batch`` in the representation ``spec`` of the first (selection) batch of the audit.

    A numeric batch is turned into object keys when the audit's outputs are objects (a chunk whose
    variable-length outputs happened to have equal lengths); an object batch into numbers when it
    can be. Raises ``ValueError`` when the outputs changed form (e.g. another vector length).
    """
    kind, k = spec
    if kind == "objects":
        if not is_numeric_batch(batch):
            return batch
        out = np.empty(batch.shape[0], dtype=object)
        for i, row in enumerate(batch.tolist()):
            out[i] = canonical_key(row[0]) if batch.shape[1] == 1 else tuple(canonical_key(v) for v in row)
        return out
    if is_numeric_batch(batch):
        if batch.shape[1] != k:
            raise ValueError(f"{SAMPLER_CONTRACT} of one form; it returned {batch.shape[1]} values per run in one batch "
                             f"and {k} in another (this batch: {describe_value(batch[:3].tolist(), width=80)}): return "
                             "variable-length outputs as objects (e.g. one tuple per run) or pass encode=")
        return batch
    try:
        rows = [[float("nan") if v == NAN_KEY else v for v in (key if isinstance(key, tuple) else (key,))]
                for key in batch.tolist()]
        arr = np.array(rows, dtype=float)
    except (ValueError, TypeError):
        arr = None
    if arr is None or arr.ndim != 2 or arr.shape[1] != k:
        raise ValueError(f"{SAMPLER_CONTRACT} of one form; it returned numeric outputs of {k} values per run in one "
                         f"batch and other objects in another (this batch: {describe_value(batch[:3].tolist(), 80)}): "
                         "return one form (or pass encode=)")
    return arr
