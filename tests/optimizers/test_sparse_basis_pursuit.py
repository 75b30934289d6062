"""Basis pursuit by column generation equals the full linear programme (dpaudit.optimizers.sparse)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from dpaudit.optimizers.sparse import basis_pursuit


def _full_lp(A, b):
    """The whole LP min 1'(u + v) s.t. A(u - v) = b, u, v >= 0 in one HiGHS call (the reference)."""
    d = A.shape[1]
    res = linprog(np.ones(2 * d), A_eq=np.hstack([A, -A]), b_eq=b, bounds=(0, None), method="highs")
    assert res.status == 0
    return res.x[:d] - res.x[d:]


def _problem(seed, m, d, noise=0.02):
    rng = np.random.default_rng(seed)
    A = rng.normal(0.0, 1.0 / math.sqrt(m), (m, d))
    x = np.zeros(d)
    x[rng.choice(d, min(5, d), replace=False)] = rng.normal(0.0, 1.0, min(5, d))
    return A, A @ x + rng.normal(0.0, noise, m)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(3, 25), ratio=st.integers(5, 40))
def test_column_generation_equals_full_lp(seed, m, ratio):
    # d > 4m: the column-generation path; its optimum is the full LP's (objective to 1e-9 relative, the
    # point itself too: with Gaussian A the minimiser is unique with probability one)
    A, b = _problem(seed, m, m * ratio)
    x = basis_pursuit(A, b)
    ref = _full_lp(A, b)
    assert np.linalg.norm(A @ x - b) <= 1e-8 * max(1.0, np.linalg.norm(b))
    assert abs(np.abs(x).sum() - np.abs(ref).sum()) <= 1e-9 * np.abs(ref).sum()
    assert np.linalg.norm(x - ref) <= 1e-6 * max(np.linalg.norm(ref), 1e-12)


def test_optimality_certificate_over_all_columns():
    # KKT of basis pursuit: a dual y with ||A'y||_inf <= 1 and b'y = ||x||_1 (strong duality) exists; the
    # least-squares sign vector on the support recovers it when the support has at most m columns
    A, b = _problem(7, 40, 2000)
    x = basis_pursuit(A, b)
    supp = np.flatnonzero(np.abs(x) > 1e-10)
    assert 0 < supp.size <= 40
    y = np.linalg.lstsq(A[:, supp].T, np.sign(x[supp]), rcond=None)[0]
    assert np.max(np.abs(A.T @ y)) <= 1.0 + 1e-6
    assert b @ y == pytest.approx(np.abs(x).sum(), rel=1e-8)


def test_homogeneous_scaling_and_zero():
    A, b = _problem(3, 10, 300)
    x = basis_pursuit(A, b)
    assert np.allclose(basis_pursuit(A, 1e30 * b), 1e30 * x, rtol=1e-7, atol=0.0)
    assert np.array_equal(basis_pursuit(A, np.zeros(10)), np.zeros(300))


def test_round_bound_and_validation():
    A, b = _problem(5, 20, 4000)
    with pytest.raises(RuntimeError, match="did not price out in 1 rounds"):
        basis_pursuit(A, b, max_rounds=1)
    with pytest.raises(ValueError, match="max_rounds"):
        basis_pursuit(A, b, max_rounds=0)
    with pytest.raises(ValueError, match="^b:"):
        basis_pursuit(A, np.full(20, np.inf))
