"""dpaudit.optimizers.losses: derivatives against finite differences, the smooth hinge, the clipped gradient sum."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.optimizers.losses import Logistic, SmoothHinge, Squared, clipped_gradient_sum, get_loss


# ------------------------------------------------------------------------------------------------
# losses
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("loss,labels", [(Logistic(), [0.0, 1.0]), (SmoothHinge(0.5), [-1.0, 1.0]),
                                         (Squared(), [-0.7, 2.0])])
def test_loss_derivative_matches_finite_differences(loss, labels):
    z = np.linspace(-4, 4, 161) + 0.0123       # avoid the hinge's kinks exactly
    for yv in labels:
        h = 1e-6
        fd = (loss.value(z + h, yv) - loss.value(z - h, yv)) / (2 * h)
        np.testing.assert_allclose(loss.derivative(z, yv), fd, atol=1e-6)
        assert np.all(np.abs(loss.derivative(z, yv)) <= loss.derivative_bound + 1e-12) or math.isinf(
            loss.derivative_bound)


def test_smooth_hinge_close_to_hinge_and_label_maps():
    h = 0.3
    loss = SmoothHinge(h)
    z = np.linspace(-3, 3, 1001)
    hinge = np.maximum(0.0, 1.0 - z)
    diff = hinge - loss.value(z, 1.0)
    assert np.all(diff >= -1e-15) and np.all(diff <= h / 2 + 1e-15)
    np.testing.assert_array_equal(loss.prepare_labels([0, 1, -1]), [-1.0, 1.0, -1.0])
    np.testing.assert_array_equal(Logistic().prepare_labels([0, 1, -1]), [0.0, 1.0, 0.0])
    assert Logistic().value(np.array([800.0]), 1.0)[0] == pytest.approx(0.0, abs=1e-300)   # no overflow
    with pytest.raises(ValueError, match="loss"):
        get_loss("nope")


def test_clipped_gradient_sum_matches_explicit_per_example_tensor():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    y = (rng.random(30) < 0.5).astype(float)
    theta = rng.normal(size=(5, 4))
    loss = Logistic()
    A = loss.derivative(theta @ X.T, y)
    G = A[:, :, None] * X[None, :, :]                    # (trials, n, d) per-example gradients
    norms = np.linalg.norm(G, axis=2)
    clip = 0.4
    clipped = G / np.maximum(1.0, norms / clip)[:, :, None]
    total, got_norms = clipped_gradient_sum(X, A, np.linalg.norm(X, axis=1), clip)
    np.testing.assert_allclose(got_norms, norms, rtol=1e-12)
    np.testing.assert_allclose(total, clipped.sum(axis=1), rtol=1e-12, atol=1e-14)
    assert np.all(np.linalg.norm(clipped, axis=2) <= clip * (1 + 1e-12))
