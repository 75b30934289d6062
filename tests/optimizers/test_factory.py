"""Faithfulness, claims, batching and input checks of dpaudit.optimizers (issue 5)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.optimizers import make_optimizer, names, optimizer_defaults
from dpaudit.optimizers.data import (
    add_remove_pair,
    bank_path,
    load_dat,
    make_dense,
    make_sparse_gradient,
    make_two_node_ridge,
    replace_one_pair,
)
from dpaudit.optimizers.losses import Logistic, SmoothHinge, Squared, clipped_gradient_sum, get_loss
from dpaudit.optimizers.sparse import project_l1_ball

DELTA = 1e-5


def _chi2_ok(sample_var, true_var, n, z=5.0):
    """Sample variance of n normal draws within z standard errors (sd of s^2 = var sqrt(2/(n-1)))."""
    return abs(sample_var - true_var) <= z * true_var * math.sqrt(2.0 / (n - 1))


# ------------------------------------------------------------------------------------------------
# factory and hyper-parameters
# ------------------------------------------------------------------------------------------------
def test_names_match_api():
    assert set(names) == {"dp-gd", "dp-sgd", "noisy-gd", "dp-agd", "rgm-gd", "projection", "l1-recovery",
                          "output-perturbation", "bias-reduced-sgd", "dp-ftrl"}
    for name in names:
        opt = make_optimizer(name)          # every hyper-parameter has a default
        assert opt.name == name
        assert opt.neighbouring in ("add_remove", "replace_one")
        assert set(optimizer_defaults(name)) == set(opt.hp)


def test_bad_inputs():
    with pytest.raises(ValueError, match="name"):
        make_optimizer("sgd")
    with pytest.raises(ValueError, match="unknown hyper-parameter"):
        make_optimizer("dp-gd", sigma=1.0)
    with pytest.raises(ValueError, match="noise_multiplier"):
        make_optimizer("dp-gd", noise_multiplier=-1.0)
    with pytest.raises(ValueError, match="step_size"):
        make_optimizer("dp-sgd", step_size=float("nan"))
    with pytest.raises(ValueError, match="sample_rate"):
        make_optimizer("dp-sgd", sample_rate=1.5)
    with pytest.raises(ValueError, match="neighbouring"):
        make_optimizer("dp-sgd", neighbouring="replace_one")
    with pytest.raises(ValueError, match="loss"):
        make_optimizer("dp-gd", loss="hinge2")
    with pytest.raises(ValueError, match="delta"):
        make_optimizer("dp-agd", delta=0.0)
    with pytest.raises(ValueError, match="epsilon"):
        make_optimizer("bias-reduced-sgd", epsilon=2.0)
    X, y = make_dense(20, 3, seed=0)
    opt = make_optimizer("dp-gd")
    with pytest.raises(ValueError, match="y"):
        opt.run(X, y[:-1])
    with pytest.raises(ValueError, match="X"):
        opt.run(X[:, :, None], y)
    with pytest.raises(ValueError, match="trials"):
        opt.run(X, y, trials=0)
    with pytest.raises(ValueError, match="canary_gradient"):
        opt.run(X, y, canary_gradient=np.ones(4))
    with pytest.raises(ValueError, match="canary_gradient"):
        make_optimizer("projection").run(np.zeros((5, 3)), None, canary_gradient=np.ones(3))
    with pytest.raises(ValueError, match="labels"):
        opt.run(X, y + 3)
    with pytest.raises(ValueError, match="feature_bound"):
        make_optimizer("noisy-gd", feature_bound=0.1).run(X, y)


def test_seed_reproducible_and_trials_independent():
    X, y = make_dense(50, 4, seed=1)
    opt = make_optimizer("dp-sgd", steps=5)
    a = opt.run(X, y, trials=6, seed=3).params
    b = opt.run(X, y, trials=6, seed=3).params
    np.testing.assert_array_equal(a, b)
    assert a.shape == (6, 4)
    assert len({tuple(r) for r in a}) == 6        # trials differ


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


# ------------------------------------------------------------------------------------------------
# DP-AGD
# ------------------------------------------------------------------------------------------------
def _agd_reference(opt, X, y):
    """Scalar, loop-based DP-AGD with noise off (same charges), for the batched implementation."""
    from dpaudit.bounds.dp_agd import ZCDPFilter, noisy_max_charge, noisy_max_scale
    from dpaudit.core.numeric import round_up
    hp = opt.hp
    loss = get_loss(hp["loss"])
    y = loss.prepare_labels(y)
    rho_nmax, rho_ng = opt.initial_budgets
    f = ZCDPFilter(opt.rho)
    nmax = noisy_max_charge(noisy_max_scale(rho_nmax, hp["clip_obj"]), hp["clip_obj"])
    w = np.zeros(X.shape[1])
    amax, hist, steps = hp["alpha_max"], [], 0
    while True:
        if not f.request(rho_ng):
            break
        a = loss.derivative(X @ w, y)
        norms = np.abs(a) * np.linalg.norm(X, axis=1)
        g = (a / np.maximum(1.0, norms / hp["clip"])) @ X
        direction = g / np.linalg.norm(g)
        done = False
        while True:
            if not f.request(nmax):
                done = True
                break
            grid = np.linspace(0, amax, hp["grid_size"])
            scores = [np.minimum(loss.value(X @ (w - al * direction), y), hp["clip_obj"]).sum() for al in grid]
            i = int(np.argmax(-np.array(scores)))
            if i > 0:
                w = w - grid[i] * direction
                hist.append(grid[i])
                steps += 1
                if steps % hp["tau"] == 0:
                    amax = (1 + hp["alpha_growth"]) * max(hist[-hp["tau"]:])
                break
            new = (1 + hp["budget_increase"]) * rho_ng
            if not f.request(round_up(new - rho_ng)):
                done = True
                break
            rho_ng = new
        if done:
            break
    return w, steps, f


def test_dp_agd_noise_off_matches_scalar_reference():
    X, y = make_dense(300, 4, seed=7)
    opt = make_optimizer("dp-agd", epsilon=0.05, noise=False, splits=10)
    run = opt.run(X, y, trials=3, seed=0)
    w, steps, f = _agd_reference(opt, X, y)
    np.testing.assert_allclose(run.params, np.tile(w, (3, 1)), rtol=1e-10, atol=1e-12)
    assert np.all(run.extra["steps"] == steps)
    assert math.isinf(run.claim.epsilon(DELTA))


def test_dp_agd_budget_invariant_and_exhaustion():
    from dpaudit.bounds.dp_agd import ZCDPFilter, dp_agd_budget
    X, y = make_dense(400, 3, seed=8)
    opt = make_optimizer("dp-agd", epsilon=0.2, delta=1e-8, splits=8, record_charges=True)
    run = opt.run(X, y, trials=12, seed=4)
    rho = dp_agd_budget(0.2, 1e-8)
    ex = run.extra
    assert ex["rho_total"] == rho
    assert np.all(ex["spent"] <= rho)
    assert np.all(ex["spent"] + ex["stop_charge"] > rho)               # stopped because the next charge did not fit
    assert len(set(ex["steps"].tolist())) > 1 or len(set(ex["gradavg"].tolist())) > 1   # trials diverge
    for t in range(12):                                                 # replay through the exact filter
        f = ZCDPFilter(rho)
        assert all(f.request(c) for c in ex["charges"][t])
        assert not f.can_afford(ex["stop_charge"][t])
        assert len(ex["charges"][t]) == ex["gradient_measurements"][t] + ex["selections"][t] + ex["gradavg"][t]
    c = run.claim
    assert c.neighbouring == "add_remove" and c.rho == pytest.approx(rho)
    assert c.epsilon(1e-8) <= 0.2


def test_dp_agd_gradavg_happens_and_budget_grows():
    X, y = make_dense(200, 3, seed=9)
    run = make_optimizer("dp-agd", epsilon=0.1, splits=5).run(X, y, trials=20, seed=1)
    rho_ng0 = make_optimizer("dp-agd", epsilon=0.1, splits=5).initial_budgets[1]
    grew = run.extra["gradavg"] > 0
    assert grew.any()
    np.testing.assert_allclose(run.extra["final_rho_ng"][grew] / rho_ng0,
                               1.1 ** run.extra["gradavg"][grew], rtol=1e-9)


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


# ------------------------------------------------------------------------------------------------
# data
# ------------------------------------------------------------------------------------------------
def test_load_dat_tmp(tmp_path):
    p = tmp_path / "small.dat"
    p.write_text("1 10 5 0\n3 20 5 1\n2 30 5 1\n")
    X, y = load_dat(p)
    np.testing.assert_allclose(X, [[1, 0, 0, 0], [1, 1, 0.5, 0], [1, 0.5, 1, 0]])
    np.testing.assert_array_equal(y, [0, 1, 1])
    X2, _ = load_dat(p, minmax=False, bias=False)
    np.testing.assert_array_equal(X2[:, 0], [1, 3, 2])


def test_load_bank_if_present():
    path = bank_path()
    if path is None:
        pytest.skip("bank.dat not available")
    X, y = load_dat(path)
    assert X.shape == (45_211, 33)
    assert int(y.sum()) == 5_289
    assert X.min() >= 0 and X.max() <= 1 and np.all(X[:, 0] == 1)


def test_neighbouring_pairs():
    X, y = make_dense(5, 2, seed=0)
    pair = add_remove_pair(X, y, [9.0, 9.0], 1.0)
    assert pair.X_prime.shape == (6, 2) and pair.relation == "add_remove" and pair.index == 5
    np.testing.assert_array_equal(pair.X_prime[:5], X)
    rep = replace_one_pair(X, y, [9.0, 9.0], 1.0, index=2)
    assert rep.X_prime.shape == X.shape and np.sum(np.any(rep.X_prime != X, axis=1)) == 1
    assert rep.y_prime[2] == 1.0 and X[2, 0] != 9.0
    with pytest.raises(ValueError, match="index"):
        replace_one_pair(X, y, [9.0, 9.0], 1.0, index=7)
    with pytest.raises(ValueError, match="canary_x"):
        add_remove_pair(X, y, [1.0], 1.0)


def test_generators():
    Z = make_sparse_gradient(100, 30, 4, L=2.0, seed=0)
    assert np.all(np.count_nonzero(Z, axis=1) <= 4)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), 2.0)
    X, y, nodes = make_two_node_ridge(300, 4, seed=0)
    assert sorted(np.concatenate(nodes).tolist()) == list(range(300))
    assert set(np.unique(y)) == {-1.0, 1.0}


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


def test_dp_agd_alpha_cap():
    X, y = make_dense(300, 3, seed=10)
    run = make_optimizer("dp-agd", epsilon=0.05, splits=5, alpha_cap=2.0).run(X, y, trials=6, seed=0)
    assert np.all(run.extra["alpha_max"] <= 2.0)
