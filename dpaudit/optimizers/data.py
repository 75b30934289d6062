"""Data for the optimizers: synthetic generators, a loader for whitespace files, neighbouring pairs.

* :func:`load_dat` reads whitespace-separated numeric files whose last column is the label (the
  format of ``bank.dat``; Lee & Kifer 2018 preprocessing: every feature min-max scaled to [0, 1]
  and a constant-1 bias column prepended).
* :func:`make_dense`, :func:`make_sparse_gradient`, :func:`make_two_node_ridge`: synthetic problems.
* :func:`add_remove_pair`, :func:`replace_one_pair`: neighbouring datasets built around a chosen canary.

The shared BANK file is located by :func:`bank_path` (``$DPAUDIT_BANK`` or ``shared/data/bank.dat`` in the directory that holds the repository
relative to the repository); it is never copied into the project.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

import numpy as np

from dpaudit.core.validation import check_count, check_positive
from dpaudit.optimizers.base import check_data, make_rng

__all__ = ["load_dat", "bank_path", "make_dense", "make_sparse_gradient", "make_two_node_ridge",
           "NeighbouringPair", "add_remove_pair", "replace_one_pair"]


def bank_path() -> Path | None:
    """Path of the shared BANK data (``$DPAUDIT_BANK`` or ``shared/data/bank.dat`` beside the repository's
    directory); None if absent."""
    env = os.environ.get("DPAUDIT_BANK")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[2].parent / "shared" / "data" / "bank.dat")
    for p in candidates:
        if p.is_file():
            return p
    return None


def load_dat(path, minmax: bool = True, bias: bool = True):
    """Load a whitespace-separated numeric file; the last column is the label.

    Parameters
    ----------
    path : str or Path
    minmax : bool
        Scale every feature to [0, 1] by (x - min) / (max - min); a constant feature becomes 0.
        (Lee & Kifer 2018 code ``load_dat(minmax=(0, 1), bias_term=True)``.)
    bias : bool
        Prepend a constant-1 column.

    Returns
    -------
    X : ndarray (n, d [+1]), y : ndarray (n,)
    """
    data = np.loadtxt(path, dtype=float, ndmin=2)
    if data.shape[1] < 2:
        raise ValueError(f"path must name a file with at least 2 columns (features and label), got {data.shape[1]}")
    if not np.all(np.isfinite(data)):
        raise ValueError("path: the file contains non-finite values")
    X, y = data[:, :-1], data[:, -1].copy()
    if minmax:
        lo, hi = X.min(axis=0), X.max(axis=0)
        span = hi - lo
        safe = np.where(span > 0, span, 1.0)
        X = np.where(span > 0, (X - lo) / safe, 0.0)
    if bias:
        X = np.hstack([np.ones((X.shape[0], 1)), X])
    return X, y


def make_dense(n: int = 1000, d: int = 10, *, loss: str = "logistic", seed=None, noise: float = 0.1):
    """Dense synthetic problem: rows uniform on the unit sphere, labels from a planted model.

    ``logistic``/``hinge``: y = 1 with probability sigmoid(4 x.w*) (labels {0, 1}); ``squared``:
    y = x.w* + N(0, noise^2). ``w*`` is the unit vector (1, ..., 1)/sqrt(d).
    """
    n = check_count("n", n, minimum=1)
    d = check_count("d", d, minimum=1)
    rng = make_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    w = np.ones(d) / np.sqrt(d)
    z = X @ w
    if loss == "squared":
        y = z + noise * rng.standard_normal(n)
    elif loss in ("logistic", "hinge"):
        y = (rng.random(n) < 1.0 / (1.0 + np.exp(-4.0 * z))).astype(float)
    else:
        raise ValueError(f"loss must be 'logistic', 'hinge' or 'squared', got {loss!r}")
    return X, y


def make_sparse_gradient(n: int = 1000, d: int = 1000, s: int = 5, *, L: float = 1.0, seed=None,
                         mean_scale: float = 1.0):
    """Vectors with at most ``s`` non-zeros and L2 norm ``L`` (Ghazi et al. 2024 mean-estimation setting).

    Every record's support is drawn among the first ``2 s`` coordinates with probability 1/2 each
    and among all coordinates otherwise, so the mean has a strong sparse component; values are
    Gaussian, then each row is rescaled to norm ``L`` (the norm bound of the setting).
    Returns ``Z`` of shape (n, d) (rows = the vectors to average).
    """
    n = check_count("n", n, minimum=1)
    d = check_count("d", d, minimum=1)
    s = check_count("s", s, minimum=1)
    if s > d:
        raise ValueError(f"s must be <= d, got s={s}, d={d}")
    L = check_positive("L", L)
    rng = make_rng(seed)
    head = min(2 * s, d)
    Z = np.zeros((n, d))
    rows = np.arange(n)[:, None]
    # support: s distinct coordinates, from the head block (prob. 1/2) or from all coordinates
    keys_head = rng.random((n, head))
    keys_all = rng.random((n, d))
    idx_head = np.argsort(keys_head, axis=1)[:, :s] if head >= s else None
    idx_all = np.argsort(keys_all, axis=1)[:, :s]
    use_head = rng.random(n) < 0.5
    idx = np.where(use_head[:, None], idx_head, idx_all) if idx_head is not None else idx_all
    vals = rng.standard_normal((n, s)) + mean_scale
    Z[rows, idx] = vals
    norms = np.linalg.norm(Z, axis=1, keepdims=True)
    Z *= L / np.where(norms > 0, norms, 1.0)
    return Z


def make_two_node_ridge(n: int = 2000, d: int = 10, *, split: str = "label", seed=None, noise: float = 0.5,
                        scale_ratio: float = 10.0):
    """Heterogeneous two-node ridge problem (Hendrikx, Mangold, Bellet 2024, Section 6 setting).

    Labels are +-1 from a planted linear model. ``split="label"``: 50 + 50 random records go one to
    each node, then all remaining records of label +1 go to node 0 and of label -1 to node 1;
    ``split="random"``: random halves. Node 1's features are multiplied by ``scale_ratio`` so the two
    nodes' gradient scales differ (the heterogeneity that makes a single clipping threshold hard to tune).

    Returns ``X, y, nodes`` with ``nodes`` a list of two index arrays.
    """
    n = check_count("n", n, minimum=4)
    d = check_count("d", d, minimum=1)
    rng = make_rng(seed)
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    w = rng.standard_normal(d)
    y = np.where(X @ w + noise * rng.standard_normal(n) >= 0, 1.0, -1.0)
    perm = rng.permutation(n)
    if split == "random":
        nodes = [np.sort(perm[: n // 2]), np.sort(perm[n // 2:])]
    elif split == "label":
        k = min(50, n // 4)
        first, second, rest = perm[:k], perm[k:2 * k], perm[2 * k:]
        nodes = [np.sort(np.concatenate([first, rest[y[rest] > 0]])),
                 np.sort(np.concatenate([second, rest[y[rest] < 0]]))]
    else:
        raise ValueError(f"split must be 'label' or 'random', got {split!r}")
    X[nodes[1]] *= check_positive("scale_ratio", scale_ratio)
    return X, y, nodes


class NeighbouringPair(NamedTuple):
    """Two neighbouring datasets ``(X, y)`` and ``(X_prime, y_prime)`` and how they differ."""

    X: np.ndarray
    y: np.ndarray | None
    X_prime: np.ndarray
    y_prime: np.ndarray | None
    relation: str
    index: int  # type: ignore[assignment]  # row of the canary in X_prime (shadows tuple.index; public name)


def _canary(X, canary_x, canary_y, y):
    cx = np.asarray(canary_x, dtype=float)
    if cx.shape != (X.shape[1],) or not np.all(np.isfinite(cx)):
        raise ValueError(f"canary_x must be a finite vector of shape ({X.shape[1]},), got {cx.shape}")
    if y is not None and canary_y is None:
        raise ValueError("canary_y must be given when y is given")
    return cx, (None if canary_y is None else float(canary_y))


def add_remove_pair(X, y, canary_x, canary_y=None) -> NeighbouringPair:
    """D = (X, y) and D' = D plus the canary record appended as the last row (add/remove neighbours)."""
    X, y = check_data(X, y, need_y=False)
    cx, cy = _canary(X, canary_x, canary_y, y)
    Xp = np.vstack([X, cx[None, :]])
    yp = None if y is None else np.append(y, cy)
    return NeighbouringPair(X, y, Xp, yp, "add_remove", X.shape[0])


def replace_one_pair(X, y, canary_x, canary_y=None, index: int = 0) -> NeighbouringPair:
    """D = (X, y) and D' = D with row ``index`` replaced by the canary (replace-one neighbours, same n)."""
    X, y = check_data(X, y, need_y=False)
    cx, cy = _canary(X, canary_x, canary_y, y)
    index = check_count("index", index)
    if index >= X.shape[0]:
        raise ValueError(f"index must be in [0, {X.shape[0] - 1}], got {index}")
    Xp = X.copy()
    Xp[index] = cx
    yp = None
    if y is not None:
        yp = y.copy()
        yp[index] = cy
    return NeighbouringPair(X, y, Xp, yp, "replace_one", index)
