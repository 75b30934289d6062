"""The sparse optimizers (dpaudit/optimizers/sparse.py): the l1 projection, the projection mechanism, l1 recovery,
output perturbation, bias-reduced SGD (issue 5)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.optimizers import make_optimizer
from dpaudit.optimizers.data import (
    make_dense,
    make_sparse_gradient,
)
from dpaudit.optimizers.losses import Logistic
from dpaudit.optimizers.sparse import project_l1_ball


def _chi2_ok(sample_var, true_var, n, z=5.0):
    """Sample variance of n normal draws within z standard errors (sd of s^2 = var sqrt(2/(n-1)))."""
    return abs(sample_var - true_var) <= z * true_var * math.sqrt(2.0 / (n - 1))


# ------------------------------------------------------------------------------------------------
# sparse family
# ------------------------------------------------------------------------------------------------
def _l1_proj_bisect(v, r):
    if np.abs(v).sum() <= r:
        return v
    lo, hi = 0.0, np.abs(v).max()
    for _ in range(200):
        mid = (lo + hi) / 2
        if np.maximum(np.abs(v) - mid, 0).sum() > r:
            lo = mid
        else:
            hi = mid
    return np.sign(v) * np.maximum(np.abs(v) - hi, 0)


@given(st.lists(st.floats(-10, 10), min_size=1, max_size=12), st.floats(0.01, 20))
def test_l1_projection_property(values, r):
    v = np.array(values)
    p = project_l1_ball(v[None, :], r)[0]
    assert np.abs(p).sum() <= r * (1 + 1e-9) + 1e-12
    np.testing.assert_allclose(p, _l1_proj_bisect(v, r), atol=1e-8)
    np.testing.assert_allclose(project_l1_ball(p[None, :], r)[0], p, atol=1e-9)     # idempotent


def test_projection_mechanism_noise_off_and_error_lemma():
    Z = make_sparse_gradient(400, 60, 3, seed=1)
    opt = make_optimizer("projection", sparsity=3, noise=False)
    run = opt.run(Z, None, trials=2)
    np.testing.assert_allclose(run.params, np.tile(Z.mean(axis=0), (2, 1)), atol=1e-12)
    noisy = make_optimizer("projection", sparsity=3, epsilon=0.5, delta=1e-6)
    run = noisy.run(Z, None, trials=200, seed=11)
    xi = np.random.default_rng(11).normal(0.0, run.extra["noise_scale"], size=(200, 60))   # the same draws
    err2 = np.sum((run.params - Z.mean(axis=0)) ** 2, axis=1)
    # ||z_hat - z_bar||^2 <= 2 L sqrt(s) ||xi||_inf and <= ||xi||_2^2 (variational inequality of the projection, z_bar in the ball), almost surely
    assert np.all(err2 <= 2 * math.sqrt(3) * np.abs(xi).max(axis=1) * (1 + 1e-9))
    assert np.all(err2 <= np.sum(xi**2, axis=1) * (1 + 1e-9))
    assert run.claim.neighbouring == "replace_one" and run.claim.epsilon(1e-6) == 0.5
    with pytest.raises(ValueError, match="non-zeros"):
        make_optimizer("projection", sparsity=2).run(Z, None)


def test_l1_recovery_exact_without_noise():
    v = np.zeros(50)
    v[[3, 17]] = [0.6, -0.8]
    Z = np.tile(v, (50, 1))
    opt = make_optimizer("l1-recovery", sparsity=2, noise=False, epsilon=0.5, delta=1e-6)
    run = opt.run(Z, None, trials=2, seed=0)
    assert run.extra["m"] < 50
    np.testing.assert_allclose(run.params, np.tile(v, (2, 1)), atol=1e-7)


def test_output_perturbation_noise_off_variance_and_box():
    X, y = make_dense(200, 3, seed=3)
    opt = make_optimizer("output-perturbation", noise=False, box=math.inf)
    run = opt.run(X, y, trials=2)
    th = run.params[0]
    grad = X.T @ Logistic().derivative(X @ th, y) / 200 + 0.1 * th
    assert np.linalg.norm(grad) < 1e-8                              # the regularised ERM minimiser
    T = 20_000
    noisy = make_optimizer("output-perturbation", box=math.inf, epsilon=0.5, delta=1e-6).run(X, y, trials=T, seed=4)
    assert _chi2_ok(noisy.params[:, 0].var(ddof=1), noisy.extra["noise_scale"] ** 2, T)
    boxed = make_optimizer("output-perturbation", box=0.05).run(X, y, trials=100, seed=4)
    assert np.all(np.abs(boxed.params) <= 0.05)


def test_bias_reduced_sgd_filter_invariant():
    X = make_sparse_gradient(256, 20, 3, seed=2)
    y = (X.sum(axis=1) > 0).astype(float)
    opt = make_optimizer("bias-reduced-sgd", sparsity=3, epsilon=1.0, delta=1e-6)
    run = opt.run(X, y, trials=10, seed=1)
    e2, dl = run.extra["epsilon_filter"], run.extra["delta_filter"]
    assert np.all(np.sqrt(2 * math.log(4 / 1e-6) * e2) + 0.5 * e2 <= 0.5)
    assert np.all(dl <= 1e-6 / 4)
    assert np.all(run.extra["steps"] > 0)
    assert run.claim.neighbouring == "replace_one"
