"""Relative-sensitivity constants (A, B) of the ridge-regression gradient.

References
----------
Hendrikx, Mangold, Bellet, "The Relative Gaussian Mechanism and its Application to Private
Gradient Descent", AISTATS 2024, Section 5 (eqs. 9-11) and Appendix B.3-B.4. Constants follow
the paper's derivation, not the authors' code, which drops the
factor 2 in B and in A and centres the features.

Objective (records are the ROWS of ``X``)::

    f_D(w) = 1/(2n) ||X w - y||^2 + (l2/2) ||w||^2,   grad f_D(w) = A_D w - b_D,
    A_D = X^T X / n + l2 I,   b_D = X^T y / n,   w*_D = A_D^{-1} b_D.

Eq. (10): for D' replacing record (x, y) by (x', y'),
``grad f_D(w) - grad f_D'(w) = (A_D - A_D') A_D^{-1} grad f_D(w) - grad f_D'(w*_D)``, hence
``||grad f_D(w) - grad f_D'(w)|| <= B ||grad f_D(w)|| + A`` for every w with

    B >= ||(A_D - A_D') A_D^{-1}||_op,   A >= ||grad f_D'(w*_D)|| <= B ||b_D|| + ||b_D - b_D'||.

Eq. (11): ``||x x^T A_D^{-1}||_op = ||x|| ||A_D^{-1} x||`` so
``B <= (||x|| ||A_D^{-1} x|| + ||x'|| ||A_D^{-1} x'||) / n`` and ``||b_D - b_D'|| <= (|y| ||x|| + |y'| ||x'||)/n``.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.bounds.ptr import gram_matrix, threshold_matrix
from dpaudit.core.numeric import l2_norm, product_ratio, round_up
from dpaudit.core.validation import check_count, check_nonnegative, check_positive, check_real_array

__all__ = ["ridge_relative_sensitivity", "ridge_smoothness_constants", "ridge_ptr_constants", "ridge_gradient"]


def _data(X, y):
    X = check_real_array("X", X)
    y = check_real_array("y", y)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must be a non-empty 2-D array of records (rows), got shape {X.shape}")
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},), got {y.shape}")
    return X, y


def ridge_gradient(X, y, l2, w) -> np.ndarray:
    """``grad f_D(w) = A_D w - b_D`` (eq. 9); ``w`` may be a batch of shape (m, d)."""
    X, y = _data(X, y)
    n = X.shape[0]
    w = np.asarray(w, dtype=float)
    return (w @ gram_matrix(X, l2).T) - X.T @ y / n


def ridge_smoothness_constants(X, l2: float = 0.0) -> tuple[float, float]:
    """``(L, mu) = (lambda_max(A_D), lambda_min(A_D))`` of the given dataset's ridge objective.

    The paper's L and mu are the sup / inf of these over the datasets considered; for a single
    dataset they are the smoothness and strong-convexity constants of ``f_D``. ``L`` is rounded
    up; ``mu`` is the computed value minus a backward-error margin (a lower estimate).
    """
    A = gram_matrix(X, l2)
    ev = np.linalg.eigvalsh(A)
    err = 8.0 * A.shape[0] * np.finfo(float).eps * float(ev[-1])
    return round_up(float(ev[-1]) + err), float(max(float(ev[0]) - err, 0.0))


def ridge_relative_sensitivity(X, y, l2: float, *, record_bound: float | None = None,
                               label_bound: float | None = None) -> tuple[float, float]:
    """Data-dependent ``(A, B)`` of the ridge gradient at the dataset D = (X, y) (eqs. 9-11).

    ``||grad f_D(w) - grad f_D'(w)|| <= A + B ||grad f_D(w)||`` for every w and every neighbour D'
    replacing one record of D by a record (x', y') of the domain, with::

        B = (max_i ||x_i|| ||A_D^{-1} x_i|| + h') / n,
        A = B ||b_D|| + (max_i |y_i| ||x_i|| + r') / n,

    where (h', r') bound the new record's ``||x'|| ||A_D^{-1} x'||`` and ``|y'| ||x'||``:

    * default (``record_bound=None``): the domain is the data's envelope, h' = max_i ||x_i|| ||A_D^{-1} x_i||
      and r' = max_i |y_i| ||x_i||, which gives eq. (11), ``B = (2/n) max_i ||x_i|| ||A_D^{-1} x_i||``
      and ``A = B ||b_D|| + 2 max_i |y_i| ||x_i|| / n``;
    * ``record_bound=C`` and ``label_bound=Y``: domain ``||x'|| <= C, |y'| <= Y``, so
      ``h' = C^2 / lambda_min(A_D)`` and ``r' = C Y``.

    These constants are anchored at D (the norm on the right is ``||grad f_D||``). The RGM needs the
    condition for every ordered neighbouring pair; use :func:`ridge_ptr_constants` with
    :func:`dpaudit.bounds.ptr.propose_test_release` for that. Both constants are rounded up.
    """
    X, y = _data(X, y)
    l2 = check_nonnegative("l2", l2)
    n, d = X.shape
    A_D = gram_matrix(X, l2)
    ev = np.linalg.eigvalsh(A_D)
    if ev[0] <= 0.0:
        raise ValueError("A_D = X^T X/n + l2 I must be positive definite (use l2 > 0 or full-rank X)")
    sol = np.linalg.solve(A_D, X.T)  # columns A_D^{-1} x_i
    norms = l2_norm(X, axis=1)
    with np.errstate(over="ignore"):
        h = norms * l2_norm(sol, axis=0)
    r = np.abs(y) * norms
    if record_bound is None:
        if label_bound is not None:
            raise ValueError("label_bound requires record_bound")
        h_new, r_new = float(h.max()), float(r.max())
    else:
        C = check_positive("record_bound", record_bound)
        if label_bound is None:
            raise ValueError("label_bound must be given with record_bound")
        Y = check_nonnegative("label_bound", label_bound)
        if norms.max() > C or np.abs(y).max() > Y:
            raise ValueError("record_bound / label_bound must bound every record of the data")
        h_new, r_new = C * C / float(ev[0]), C * Y
    # relative rounding margin for the linear solves (condition number times eps)
    margin = 1.0 + 64.0 * d * np.finfo(float).eps * float(ev[-1] / ev[0])
    B = (float(h.max()) + h_new) / n * margin
    b = X.T @ y / n
    A = B * l2_norm(b) * margin + (float(r.max()) + r_new) / n * margin
    return round_up(A), round_up(B)


def ridge_ptr_constants(n: int, *, record_bound: float, label_bound: float, threshold) -> tuple[float, float]:
    """``(A, B)`` valid for EVERY neighbouring pair of good datasets (``A_D >= T`` for both).

    With records ``||x|| <= C``, labels ``|y| <= Y`` and ``mu_T = lambda_min(T) > 0``:
    ``||(A_D - A_D') A_D^{-1}|| <= ||x x^T - x' x'^T|| / (n mu_T) <= C^2 / (n mu_T) = B`` (a difference of
    two PSD rank-one matrices has eigenvalues in ``[-C^2, C^2]``) and
    ``A = B ||b_D|| + ||b_D - b_D'|| <= B C Y + 2 C Y / n``. After a passing
    :func:`~dpaudit.bounds.ptr.propose_test_release` the dataset and all its neighbours are good,
    so the RGM's Theorem 1 applies with these constants. Rounded up.
    """
    n = check_count("n", n, minimum=1)
    C = check_positive("record_bound", record_bound)
    Y = check_nonnegative("label_bound", label_bound)
    if np.ndim(threshold) == 0:
        mu_T = check_positive("threshold", threshold)
    else:
        T = np.asarray(threshold, dtype=float)
        mu_T = float(np.linalg.eigvalsh(threshold_matrix(T, T.shape[0]))[0])
        if not mu_T > 0:
            raise ValueError("threshold must be positive definite")
        mu_T = mu_T * (1.0 - 1e-12)
    B = product_ratio([C, C], [n, mu_T], "up")
    A = round_up(B * C * Y + product_ratio([2, C, Y], [n], "up")) if Y > 0 else 0.0
    if not (math.isfinite(A) and math.isfinite(B)):
        raise ValueError("record_bound, label_bound and threshold give non-finite constants")
    return A, B
