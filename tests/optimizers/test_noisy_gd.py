"""Noisy GD with a hidden state (dpaudit/optimizers/noisy_gd.py): projected GD without noise, the noise and initial
variance, the claim's reference values, the canary offset and bound (issue 5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.optimizers import make_optimizer
from dpaudit.optimizers.data import (
    make_dense,
)
from dpaudit.optimizers.losses import Logistic

DELTA = 1e-5


def _chi2_ok(sample_var, true_var, n, z=5.0):
    """Sample variance of n normal draws within z standard errors (sd of s^2 = var sqrt(2/(n-1)))."""
    return abs(sample_var - true_var) <= z * true_var * math.sqrt(2.0 / (n - 1))


# ------------------------------------------------------------------------------------------------
# noisy GD (Chourasia et al.)
# ------------------------------------------------------------------------------------------------
def test_noisy_gd_noise_off_is_projected_gd():
    X, y = make_dense(30, 3, seed=4)
    opt = make_optimizer("noisy-gd", steps=20, step_size=0.5, sigma=0.0, l2=0.1, radius=0.3)
    out = opt.run(X, y, trials=2, seed=0).params
    theta = np.zeros(3)
    for _ in range(20):
        theta = theta - 0.5 * (X.T @ Logistic().derivative(X @ theta, y) / 30 + 0.1 * theta)
        nrm = np.linalg.norm(theta)
        theta = theta * min(1.0, 0.3 / nrm)
    np.testing.assert_allclose(out, np.tile(theta, (2, 1)), rtol=1e-12)
    assert math.isinf(opt.claim(30).epsilon(DELTA))


def test_noisy_gd_noise_and_initial_variance():
    X, y = make_dense(5, 2, seed=5)
    T, eta, sigma, lam = 40_000, 0.2, 0.3, 0.5
    # steps = 0: theta_0 ~ N(0, 2 sigma^2 / lambda)
    run0 = make_optimizer("noisy-gd", steps=0, step_size=eta, sigma=sigma, l2=lam).run(X, y, trials=T, seed=1)
    assert _chi2_ok(run0.params[:, 0].var(ddof=1), 2 * sigma**2 / lam, T)
    # l2 = 0: theta_0 = 0 and one step adds N(0, 2 eta sigma^2)
    run1 = make_optimizer("noisy-gd", steps=1, step_size=eta, sigma=sigma, l2=0.0).run(X, y, trials=T, seed=2)
    assert _chi2_ok(run1.params[:, 1].var(ddof=1), 2 * eta * sigma**2, T)


@pytest.mark.parametrize("eta,K,thm,comp", [(0.1, 10, 0.786938680575, 0.5), (0.1, 100, 1.986524106, 5.0),
                                            (0.5, 3, 1.05526689452, 0.75)])
def test_noisy_gd_claim_reference_values(eta, K, thm, comp):
    # closed form of Theorem 1 (Chourasia, Ye, Shokri 2021) at alpha = 2, S_g = 1, sigma^2 = 1, n = 1, lambda = 1; S_g = 2R for the logistic loss -> R = 1/2
    opt = make_optimizer("noisy-gd", feature_bound=0.5, l2=1.0, step_size=eta, steps=K, sigma=1.0)
    assert opt.theorem1_applies and opt.sensitivity == 1.0
    c = opt.claim(1)
    assert c.rdp([2.0])[0] == pytest.approx(min(thm, comp), rel=1e-9)
    parts = opt.claim_components(1)
    assert parts["langevin-theorem-1"].rdp([2.0])[0] == pytest.approx(thm, rel=1e-9)
    assert parts["composition"].rdp([2.0])[0] == pytest.approx(comp, rel=1e-9)
    assert c.epsilon(1e-5) == min(p.epsilon(1e-5) for p in parts.values())
    assert c.source == "min(langevin-theorem-1, composition)"
    # no strong convexity (or clipping, or too large a step): composition only
    for hp in (dict(l2=0.0), dict(clip=0.25), dict(step_size=1.5)):
        o = make_optimizer("noisy-gd", **{**dict(feature_bound=0.5, l2=1.0, step_size=eta, steps=K, sigma=1.0), **hp})
        assert not o.theorem1_applies
        assert o.claim(1).source == "composition"


def test_noisy_gd_canary_offset_and_bound():
    X, y = make_dense(10, 2, seed=6)
    opt = make_optimizer("noisy-gd", steps=1, step_size=1.0, sigma=0.0, l2=0.0)   # S_g = 2
    base = opt.run(X, y).params[0]
    with_c = opt.run(X, y, canary_gradient=np.array([1.0, 1.0])).params[0]
    np.testing.assert_allclose(with_c - base, -np.array([1.0, 1.0]) / 10)
    with pytest.raises(ValueError, match="sensitivity"):
        opt.run(X, y, canary_gradient=np.array([3.0, 0.0]))


def test_squared_loss_noisy_gd_needs_a_radius():
    assert math.isinf(make_optimizer("noisy-gd", loss="squared").claim(10).epsilon(DELTA))
    o = make_optimizer("noisy-gd", loss="squared", radius=2.0, label_bound=1.0)
    assert o.sensitivity == pytest.approx(2 * 1.0 * (1.0 * 2.0 + 1.0))
    assert math.isfinite(o.claim(10).epsilon(DELTA))
