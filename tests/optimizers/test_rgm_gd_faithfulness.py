"""RGM-GD (dpaudit/optimizers/rgm_gd.py): ridge GD without noise, the variance, the claim as the relative Gaussian's
RDP, the PTR test's cost (issue 5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.optimizers import make_optimizer
from dpaudit.optimizers.data import (
    make_two_node_ridge,
)

DELTA = 1e-5


def _chi2_ok(sample_var, true_var, n, z=5.0):
    """Sample variance of n normal draws within z standard errors (sd of s^2 = var sqrt(2/(n-1)))."""
    return abs(sample_var - true_var) <= z * true_var * math.sqrt(2.0 / (n - 1))


# ------------------------------------------------------------------------------------------------
# RGM-GD
# ------------------------------------------------------------------------------------------------
def test_rgm_noise_off_is_ridge_gd_and_variance():
    X, y, nodes = make_two_node_ridge(200, 3, seed=1)
    opt = make_optimizer("rgm-gd", A=0.01, B=0.01, noise=False, steps=15, step_size=0.1)
    out = opt.run(X, y, trials=2).params
    A_D = X.T @ X / 200 + 0.03 * np.eye(3)
    b = X.T @ y / 200
    x = np.zeros(3)
    for _ in range(15):
        x = x - 0.1 * (A_D @ x - b)
    np.testing.assert_allclose(out, np.tile(x, (2, 1)), rtol=1e-12)
    # one noisy step from 0: x_1 = eta (b - (sigma + gamma ||b||) xi)
    T = 40_000
    noisy = make_optimizer("rgm-gd", A=0.01, B=0.01, steps=1, step_size=0.1)
    run = noisy.run(X, y, trials=T, seed=3)
    mech = noisy.mechanism(0.01, 0.01, 3)
    std = 0.1 * (mech.sigma + mech.gamma * np.linalg.norm(b))
    assert _chi2_ok(run.params[:, 0].var(ddof=1), std**2, T)


def test_rgm_claim_is_rdp_of_relative_gaussian():
    from dpaudit.accounting.rdp import RDPAccountant
    from dpaudit.mechanisms.relative_gaussian import RelativeGaussian
    opt = make_optimizer("rgm-gd", A=0.05, B=0.01, steps=40, alpha=2.0, rdp_epsilon=1.0)
    gamma = 0.01 * math.sqrt(2.0 * 40 / 2.0)
    mech = RelativeGaussian(sigma=gamma * 5.0, gamma=gamma, A=0.05, B=0.01, dim=5)
    ref = RDPAccountant().compose(mech, count=40)
    c = opt.claim(1000, d=5)
    assert c.neighbouring == "replace_one"
    assert c.epsilon(DELTA) == ref.epsilon(DELTA)
    np.testing.assert_allclose(c.rdp([2.0]), ref.rdp_curve([2.0]))
    with pytest.raises(ValueError, match="A and B"):
        make_optimizer("rgm-gd").claim(100, d=3)


def test_rgm_ptr_claim_adds_the_test_cost():
    X, y, _ = make_two_node_ridge(3000, 3, split="random", seed=2, scale_ratio=1.0)
    X = X / np.linalg.norm(X, axis=1).max()
    hp = dict(ptr_threshold=0.05, record_bound=1.0, label_bound=1.0, ptr_epsilon=1.0, ptr_delta=1e-6, steps=5)
    opt = make_optimizer("rgm-gd", ptr=True, **hp)
    run = opt.run(X, y, trials=4, seed=0)
    assert run.extra["ptr_passed"].all()                    # lambda_min(A_D) comfortably above the threshold
    base = make_optimizer("rgm-gd", ptr=False, A=run.extra["constants"][0][0], B=run.extra["constants"][0][1],
                          steps=5).claim(3000, d=3)
    assert run.claim.epsilon(1e-5) == pytest.approx(1.0 + base.epsilon(1e-5 - 1e-6), rel=1e-12)
    assert math.isinf(run.claim.epsilon(5e-7))              # below the PTR delta: no guarantee
    failing = make_optimizer("rgm-gd", ptr=True, **{**hp, "ptr_threshold": 10.0}).run(X, y, trials=3, seed=0)
    assert not failing.extra["ptr_passed"].any() and np.all(failing.params == 0)
