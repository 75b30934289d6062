"""DP-GD and DP-SGD (dpaudit/optimizers/dp_gd.py): faithful to plain GD without noise, the noise variance, Poisson
sampling and clipping, the canary gradient, and the claims against closed forms and dp_accounting (issue 5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.optimizers import make_optimizer
from dpaudit.optimizers.data import (
    make_dense,
)
from dpaudit.optimizers.losses import Logistic, get_loss

DELTA = 1e-5


def _chi2_ok(sample_var, true_var, n, z=5.0):
    """Sample variance of n normal draws within z standard errors (sd of s^2 = var sqrt(2/(n-1)))."""
    return abs(sample_var - true_var) <= z * true_var * math.sqrt(2.0 / (n - 1))


# ------------------------------------------------------------------------------------------------
# DP-GD / DP-SGD
# ------------------------------------------------------------------------------------------------
def _plain_gd(X, y, loss, steps, eta, l2, theta0=None):
    theta = np.zeros(X.shape[1]) if theta0 is None else theta0.copy()
    for _ in range(steps):
        theta = theta - eta * (X.T @ loss.derivative(X @ theta, y) / X.shape[0] + l2 * theta)
    return theta


@pytest.mark.parametrize("name", ["dp-gd", "dp-sgd"])
@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared"])
def test_noise_off_is_plain_gd(name, loss):
    X, y = make_dense(40, 3, loss=loss, seed=2)
    hp = dict(loss=loss, steps=25, step_size=0.3, clip=math.inf, noise_multiplier=0.0, l2=0.05)
    if name == "dp-sgd":
        hp["sample_rate"] = 1.0
    run = make_optimizer(name, **hp).run(X, y, trials=3, seed=0)
    ref = _plain_gd(X, get_loss(loss).prepare_labels(y), get_loss(loss), 25, 0.3, 0.05)
    np.testing.assert_allclose(run.params, np.tile(ref, (3, 1)), rtol=1e-12, atol=1e-13)
    assert math.isinf(run.claim.epsilon(DELTA))


def test_dp_gd_noise_variance():
    # one step from theta = 0: theta_1 = -eta (S + N(0, (nm C)^2)) / n
    X, y = make_dense(10, 2, seed=3)
    nm, C, eta, n, T = 1.3, 0.7, 0.5, 10, 40_000
    run = make_optimizer("dp-gd", steps=1, step_size=eta, clip=C, noise_multiplier=nm).run(X, y, trials=T, seed=1)
    true_var = (eta * nm * C / n) ** 2
    assert _chi2_ok(run.params.var(axis=0, ddof=1)[0], true_var, T)
    assert _chi2_ok(run.params.var(axis=0, ddof=1)[1], true_var, T)
    ref = _plain_gd(X, y, Logistic(), 1, eta, 0.0)     # mean = one clipped step (no clipping binds: ||g_i|| <= 1)
    assert np.all(np.abs(run.params.mean(axis=0) - ref * 0 - run.params.mean(axis=0)) == 0)
    se = math.sqrt(true_var / T)
    S = make_optimizer("dp-gd", steps=1, step_size=eta, clip=C, noise_multiplier=0.0).run(X, y).params[0]
    assert np.all(np.abs(run.params.mean(axis=0) - S) < 5 * se)


def test_dp_sgd_poisson_mask_rate_and_clipping():
    # n identical records with gradient e_1 scaled to norm 3 (clipped to C = 1): sum = (#sampled) e_1
    n, q, T, eta = 200, 0.1, 20_000, 1.0
    X = np.zeros((n, 2))
    X[:, 0] = 3.0
    y = -np.ones(n)                                   # squared loss at theta = 0: l' = 0 - (-1) = 1 -> g = x
    opt = make_optimizer("dp-sgd", loss="squared", steps=1, step_size=eta, clip=1.0, noise_multiplier=0.0,
                         sample_rate=q)
    run = opt.run(X, y, trials=T, seed=5)
    counts = -run.params[:, 0] * q * n / eta
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-9)
    assert abs(counts.mean() - n * q) < 5 * math.sqrt(n * q * (1 - q) / T)
    assert _chi2_ok(counts.var(ddof=1), n * q * (1 - q), T, z=6)
    assert np.all(run.params[:, 1] == 0)


def test_canary_gradient_clipped_and_sampled():
    n, q, T = 50, 0.25, 20_000
    X = np.zeros((n, 2))
    y = np.zeros(n)
    g = np.array([3.0, 4.0])                          # norm 5 -> clipped to C = 2: (1.2, 1.6)
    run = make_optimizer("dp-sgd", loss="squared", steps=1, step_size=1.0, clip=2.0, noise_multiplier=0.0,
                         sample_rate=q).run(X, y, trials=T, seed=2, canary_gradient=g)
    incl = run.params[:, 0] != 0
    np.testing.assert_allclose(run.params[incl], np.tile(-np.array([1.2, 1.6]) / (q * n), (incl.sum(), 1)))
    assert abs(incl.mean() - q) < 5 * math.sqrt(q * (1 - q) / T)
    gd = make_optimizer("dp-gd", loss="squared", steps=1, step_size=1.0, clip=2.0, noise_multiplier=0.0)
    np.testing.assert_allclose(gd.run(X, y, canary_gradient=g).params[0], -np.array([1.2, 1.6]) / n)


def test_dp_gd_claim_closed_form():
    opt = make_optimizer("dp-gd", steps=7, noise_multiplier=2.0, clip=3.0)
    orders = np.array([1.5, 2.0, 8.0, 64.0])
    np.testing.assert_allclose(opt.claim(100).rdp(orders), orders * 7 / (2 * 4.0), rtol=1e-9)
    ro = make_optimizer("dp-gd", steps=7, noise_multiplier=2.0, clip=3.0, neighbouring="replace_one")
    assert ro.claim(100).neighbouring == "replace_one"
    np.testing.assert_allclose(ro.claim(100).rdp(orders), 4 * orders * 7 / (2 * 4.0), rtol=1e-9)
    assert ro.claim(100).epsilon(DELTA) > opt.claim(100).epsilon(DELTA)


def test_dp_gd_claim_matches_dp_accounting():
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import RdpAccountant
    acc = RdpAccountant()
    acc.compose(dpa.GaussianDpEvent(1.1), 50)
    ours = make_optimizer("dp-gd", steps=50, noise_multiplier=1.1).claim(1000).epsilon(DELTA)
    ref = acc.get_epsilon(DELTA)
    assert ours <= ref * (1 + 1e-6)        # our orders are at least as rich; conversions at least as tight
    assert ours >= ref * 0.9


def test_dp_sgd_claim_is_the_subsampled_accountant():
    sub = pytest.importorskip("dpaudit.mechanisms.subsampled")
    from dpaudit.accounting.rdp import RDPAccountant
    from dpaudit.mechanisms.gaussian import Gaussian
    opt = make_optimizer("dp-sgd", steps=100, noise_multiplier=1.1, sample_rate=0.01, clip=2.0)
    acc = RDPAccountant().compose(sub.PoissonSampled(Gaussian(sigma=2.2, sensitivity=2.0), 0.01), count=100)
    assert opt.claim(1000).epsilon(DELTA) == acc.epsilon(DELTA)
    assert opt.claim(1000).neighbouring == "add_remove"
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import RdpAccountant
    ref = RdpAccountant()
    ref.compose(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1)), 100)
    assert opt.claim(1000).epsilon(DELTA) == pytest.approx(ref.get_epsilon(DELTA), rel=0.05)
