"""DP-AGD (dpaudit/optimizers/dp_agd.py) against a scalar reference of the algorithm: without noise, the budget
invariant and exhaustion, GradAvg, the alpha cap (issue 5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.optimizers import make_optimizer
from dpaudit.optimizers.data import (
    make_dense,
)
from dpaudit.optimizers.losses import get_loss

DELTA = 1e-5


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


def test_dp_agd_alpha_cap():
    X, y = make_dense(300, 3, seed=10)
    run = make_optimizer("dp-agd", epsilon=0.05, splits=5, alpha_cap=2.0).run(X, y, trials=6, seed=0)
    assert np.all(run.extra["alpha_max"] <= 2.0)
