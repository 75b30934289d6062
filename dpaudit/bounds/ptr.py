"""Propose-Test-Release for the data-dependent constants of the Relative Gaussian Mechanism.

References
----------
Hendrikx, Mangold, Bellet, "The Relative Gaussian Mechanism and its Application to Private
Gradient Descent", AISTATS 2024, Proposition 2 / Appendix B.4 (eqs. 63-68, the sorted bound).
Dwork & Lei, "Differential privacy and robust statistics", STOC 2009 (propose-test-release);
Vadhan, "The complexity of differential privacy", 2017, Section 3.2 (PTR with Lap(1/eps)).
Weyl's inequality for eigenvalues of Hermitian matrices (lambda_min(M + E) >= lambda_min(M) - ||E||).

Setting (records are the ROWS of ``X``, dataset size n fixed, replace-one neighbours)
------------------------------------------------------------------------------------
``A_D = X^T X / n + l2 I``. A proposed relative constant B for ridge regression holds on the set
of "good" datasets ``G = {D : A_D >= T}`` (Loewner order) for a threshold matrix ``T`` (a scalar
``mu0`` means ``mu0 I``); see :func:`dpaudit.bounds.ridge.ridge_ptr_constants`. PTR must certify
privately that the dataset is far from ``G``'s complement.

Two distance lower bounds
-------------------------
* :func:`ptr_distance` -- Proposition 2's sorted bound ``k_hat``: with ``M = A_D - T`` positive
  definite and ``s_i = x_i^T M^{-1} x_i / n`` sorted decreasingly, ``k_hat = min{k : s_(1) + ... +
  s_(k) > 1}``. Replacing a set S of records gives ``A_D' >= A_D - sum_{i in S} x_i x_i^T / n``
  (new records add PSD terms), and ``M - sum_S x_i x_i^T/n >= 0`` as soon as
  ``lambda_max(sum_S v_i v_i^T) <= trace = sum_S s_i <= 1`` (``v_i = M^{-1/2} x_i / sqrt(n)``). So
  every dataset within ``k_hat - 1`` replacements is good: ``k_hat <= dist(D, G^c)``.
  **It does not have sensitivity 1** (a single replaced record can move ``k_hat`` by more than
  one: replacing an e1-record by a large e2-record inflates M along e2, and the trace bound then
  adds that record's ``s ~ 1`` to an e1 record's ``s``; ``tests/bounds/test_rgm.py`` has an
  instance where ``k_hat`` drops from 10 to 6). It is therefore a diagnostic, not a PTR statistic.
* :func:`ptr_lower_bound_statistic` -- ``g(D) = n lambda_min(A_D - T) / C^2`` for records in the
  ball ``||x|| <= C``. Replacing one record changes ``A_D`` by ``(x' x'^T - x x^T)/n`` whose
  eigenvalues lie in ``[-C^2/n, C^2/n]``, so by Weyl ``|g(D) - g(D')| <= 1``: sensitivity 1.
  Removing k records lowers ``lambda_min`` by at most ``k C^2 / n``, so ``D`` stays good while
  ``k <= g``: ``g < dist(D, G^c)`` (when ``g >= 0``; ``g < 0`` means ``D`` is not good). One also
  has ``floor(g) + 1 <= k_hat`` (each ``s_i <= 1/g``).

PTR (:func:`propose_test_release`)
----------------------------------
"Unsafe" datasets are those with a neighbour outside ``G`` (or outside ``G`` themselves): the RGM
constants are then not guaranteed for every neighbouring pair. ``dist(D, unsafe) >=
dist(D, G^c) - 1 > g(D) - 1``, and ``l(D) = g(D) - 1`` has sensitivity 1 and is ``< 0`` on every
unsafe dataset. The test releases ``l(D) + Lap(1/eps_ptr)`` and passes when it exceeds
``log(1/delta_ptr) / eps_ptr``. The test is ``eps_ptr``-DP; on an unsafe dataset it passes with
probability at most ``exp(-log(1/delta_ptr))/2 <= delta_ptr``. When it passes, running an
``(eps, delta)``-DP mechanism whose guarantee holds on safe datasets gives
``(eps_ptr + eps, delta_ptr + delta)``-DP overall (Vadhan 2017, Section 3.2).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.linalg import cho_factor, solve_triangular

from dpaudit.core.numeric import l2_norm, round_down
from dpaudit.core.validation import check_delta, check_nonnegative, check_positive, check_real_array

__all__ = [
    "ptr_distance",
    "ptr_lower_bound_statistic",
    "propose_test_release",
    "PTRResult",
    "gram_matrix",
    "threshold_matrix",
]

#: relative inflation of the s_i (conservative against rounding in the Cholesky solve)
_S_INFLATION = 1e-9


def _records(X) -> np.ndarray:
    X = check_real_array("X", X)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must be a non-empty 2-D array of records (rows), got shape {X.shape}")
    return X


def gram_matrix(X, l2: float = 0.0) -> np.ndarray:
    """``A_D = X^T X / n + l2 I`` for records as the rows of ``X`` (ridge Hessian, eq. (9))."""
    X = _records(X)
    l2 = check_nonnegative("l2", l2)
    n, d = X.shape
    with np.errstate(over="ignore", invalid="ignore"):
        A = X.T @ X / n + l2 * np.eye(d)
    if not np.all(np.isfinite(A)):
        raise ValueError("X: X^T X / n overflows the float range (records beyond ~1e154); rescale the records")
    return A


def threshold_matrix(threshold, d: int) -> np.ndarray:
    """The Loewner threshold ``T``: a scalar ``mu0`` means ``mu0 I``; a matrix must be symmetric d x d."""
    if np.ndim(threshold) == 0:
        mu0 = check_nonnegative("threshold", threshold)
        return mu0 * np.eye(d)
    T = np.asarray(threshold, dtype=float)
    if T.shape != (d, d):
        raise ValueError(f"threshold must be a scalar or a {d}x{d} matrix, got shape {T.shape}")
    if not np.all(np.isfinite(T)) or not np.allclose(T, T.T, rtol=1e-12, atol=0.0):
        raise ValueError("threshold must be a finite symmetric matrix")
    return 0.5 * (T + T.T)


def ptr_distance(X, threshold, *, l2: float = 0.0):
    """Proposition 2's sorted lower bound ``k_hat`` on the replace-one distance to ``{A_D not >= T}``.

    Parameters
    ----------
    X : array (n, d)
        Records as rows.
    threshold : float or array (d, d)
        Loewner threshold T (scalar ``mu0`` means ``mu0 I``).
    l2 : float >= 0
        Ridge term in ``A_D = X^T X / n + l2 I``.

    Returns
    -------
    ``k_hat = min{k : s_(1) + ... + s_(k) > 1}`` with ``s_i = x_i^T (A_D - T)^{-1} x_i / n`` (eq. 68),
    an ``int``; ``0`` when ``A_D - T`` is not positive definite (the dataset is not good, or is
    on the boundary); ``math.inf`` when even ``sum_i s_i <= 1`` (then ``l2 I >= T`` and no
    replacement makes the dataset bad). A valid lower bound on the distance, but *not* of
    sensitivity 1 (see the module docstring): do not use it as a PTR statistic.
    """
    X = _records(X)
    n, d = X.shape
    M = gram_matrix(X, l2) - threshold_matrix(threshold, d)
    if np.linalg.eigvalsh(M)[0] <= 0.0:
        return 0
    try:
        c, lower = cho_factor(M, lower=True)
    except np.linalg.LinAlgError:
        return 0
    V = solve_triangular(c, X.T, lower=True)  # M = L L^T, ||L^{-1} x||^2 = x^T M^{-1} x
    s = np.sum(V * V, axis=0) / n * (1.0 + _S_INFLATION)
    cums = np.cumsum(np.sort(s)[::-1])
    over = np.nonzero(cums > 1.0)[0]
    if over.size == 0:
        return math.inf
    return int(over[0] + 1)


def ptr_lower_bound_statistic(X, threshold, *, record_bound: float, l2: float = 0.0) -> float:
    """``g(D) = n lambda_min(A_D - T) / C^2``: a sensitivity-1 lower bound on the distance.

    Requires every record in the ball ``||x_i|| <= C = record_bound`` (the data domain; a record
    outside it raises ``ValueError`` rather than being clipped). Replace-one sensitivity is 1 by
    Weyl's inequality and ``g < dist(D, {A_D not >= T})`` whenever ``g >= 0`` (module docstring).
    Rounded down.
    """
    X = _records(X)
    C = check_positive("record_bound", record_bound)
    with np.errstate(over="ignore"):
        norms = np.linalg.norm(X, axis=1)  # (as users compute record_bound; overflow: scaled norm)
    norms = np.where(np.isfinite(norms), norms, l2_norm(X, axis=1))
    if np.any(norms > C):
        raise ValueError(f"record_bound must bound every record's norm (max norm {norms.max():.6g} > {C:.6g})")
    n, d = X.shape
    M = gram_matrix(X, l2) - threshold_matrix(threshold, d)
    lam = float(np.linalg.eigvalsh(M)[0])
    # eigvalsh is backward stable: error <~ d * eps * ||M||, and ||M|| <= C^2 + l2 + ||T|| for every
    # dataset in the domain; moving down by this data-independent amount keeps sensitivity 1
    T_norm = float(np.linalg.norm(threshold_matrix(threshold, d), 2))
    err = 8.0 * d * np.finfo(float).eps * (C * C + float(l2) + T_norm)
    return round_down(n * (lam - err) / (C * C))


class PTRResult(NamedTuple):
    """Outcome of :func:`propose_test_release`.

    ``passed``: run the mechanism with the proposed constants; ``noisy_statistic``: the released
    ``l(D) + Lap(1/epsilon)``; ``cutoff``: ``log(1/delta)/epsilon``; ``epsilon``, ``delta``: the
    privacy cost of the test itself, to add to the mechanism's.
    """

    passed: bool
    noisy_statistic: float
    cutoff: float
    epsilon: float
    delta: float

    def total(self, epsilon: float, delta: float) -> tuple[float, float]:
        """(epsilon, delta) of the test followed by a mechanism that is (epsilon, delta)-DP on safe data."""
        return (self.epsilon + check_nonnegative("epsilon", epsilon), self.delta + check_nonnegative("delta", delta))


def propose_test_release(X, threshold, *, record_bound: float, epsilon: float, delta: float, l2: float = 0.0,
                         rng: np.random.Generator | None = None, seed=None) -> PTRResult:
    """Propose-test-release for ``A_D >= T`` (so that the ridge constants of the proposal hold).

    Releases ``l(D) + Lap(1/epsilon)`` with the sensitivity-1 statistic
    ``l(D) = ptr_lower_bound_statistic(X, threshold, record_bound=C, l2=l2) - 1`` (a lower bound
    on the distance to the datasets with a neighbour outside ``G``) and passes when it exceeds
    ``log(1/delta)/epsilon``. Cost: ``(epsilon, delta)``; see the module docstring for the proof.
    The Proposition 2 bound :func:`ptr_distance` is NOT used because its sensitivity exceeds 1.
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta("delta", delta)
    if rng is None:
        rng = np.random.default_rng(seed)
    stat = ptr_lower_bound_statistic(X, threshold, record_bound=record_bound, l2=l2) - 1.0
    noisy = stat + float(rng.laplace(0.0, 1.0 / epsilon))
    cutoff = (-math.log(delta)) / epsilon
    return PTRResult(passed=bool(noisy > cutoff), noisy_statistic=noisy, cutoff=cutoff, epsilon=epsilon,
                     delta=delta)
