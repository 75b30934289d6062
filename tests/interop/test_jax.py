"""A JAX DP-SGD loop on jax-privacy's clipped gradients, audited with gradient canaries (dpaudit.interop.jax)."""

import math

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="jax is not installed (pip install 'dpaudit[jax]')")
pytest.importorskip("jax_privacy", reason="jax-privacy is not installed (pip install 'dpaudit[jax]')")

import jax.numpy as jnp  # noqa: E402

import dpaudit  # noqa: E402
from dpaudit.interop.jax import JaxCanaries  # noqa: E402

M = 1000


def init(key):
    return {"w": 0.01 * jax.random.normal(key, (10, 2)), "b": jnp.zeros(2)}


def apply(p, x):
    return x @ p["w"] + p["b"]


def data(n=500):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 10)).astype(np.float32)
    return X, (X[:, 0] > 0).astype(np.int64)


def training(sigma=1.5, **kw):
    X, y = data()
    opts = dict(canaries=M, noise_multiplier=sigma, max_grad_norm=1.0, sample_rate=0.05, steps=300, lr=0.5)
    opts.update(kw)
    return JaxCanaries(init, apply, X, y, **opts)


@pytest.fixture(scope="module")
def claim():
    return training().claim()


def test_claim_is_dp_sgd(claim):
    assert claim.epsilon(1e-5) == pytest.approx(2.90, abs=0.03)  # Opacus' PRV number for the same loop: 2.90
    assert math.isinf(training(sigma=0.0).claim().epsilon(1e-5))


def test_canary_gradients_without_noise():
    """No noise, one step with every row: an included canary's coordinate moves by exactly
    lr * max_grad_norm / expected batch (its gradient clipped to the clip norm), an absent one not at all."""
    X, y = data(n=20)
    run = JaxCanaries(init, apply, X, y, canaries=4, noise_multiplier=0.0, max_grad_norm=1.0, sample_rate=1.0,
                      steps=1, lr=2.0)
    mask = np.array([True, False, True, False])
    s = run(mask, np.random.default_rng(0))
    np.testing.assert_allclose(s, np.where(mask, 2.0 * 1.0 / 24, 0.0), rtol=1e-5, atol=1e-7)


@pytest.mark.slow  # two compilations and four trainings: about 6 s
def test_one_run_positive_below_the_claim_and_ten_times_too_little_noise(claim):
    ok = dpaudit.audit_training(training(), canaries=M, claim=claim, delta=1e-5, seed=0)
    assert 0.0 < ok.epsilon_lower < claim.epsilon(1e-5)
    bad = dpaudit.audit_training(training(sigma=0.15), canaries=M, claim=claim, delta=1e-5, seed=0)
    assert bad.verdict == "violation"


def test_seeded_and_validated():
    run = training(steps=5)
    a = run(np.ones(M, bool), np.random.default_rng(3))
    np.testing.assert_array_equal(a, run(np.ones(M, bool), np.random.default_rng(3)))
    with pytest.raises(ValueError, match="canary_norm"):
        training(canary_norm=0.5)
    with pytest.raises(ValueError, match="sample_rate"):
        training(sample_rate=0.0)
    with pytest.raises(ValueError, match="inclusion_mask"):
        run(np.ones(3, bool), np.random.default_rng(0))
