"""RGM-GD's tilted nodes (the bias-heterogeneity split of Hendrikx, Mangold, Bellet 2024, Sec. 6) and the
benchmark's clipping baseline."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from dpaudit.optimizers import make_optimizer
from dpaudit.optimizers.data import make_two_node_ridge
from dpaudit.optimizers.rgm_gd import ridge_quantities
from tests.support import BENCHMARKS

BENCH = BENCHMARKS / "rgm_ridge.py"


def _bench():
    spec = importlib.util.spec_from_file_location("rgm_ridge_bench", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_tilted_nodes_noise_off_is_gd_on_the_shifted_objectives():
    X, y, nodes = make_two_node_ridge(300, 3, split="random", seed=1)
    tilts = [np.zeros(3), np.full(3, 100.0)]
    opt = make_optimizer("rgm-gd", A=0.01, B=0.01, noise=False, steps=12, step_size=0.2)
    out = opt.run(X, y, trials=2, nodes=nodes, tilts=tilts).params
    qs = [ridge_quantities(X[g], y[g], 3e-2) for g in nodes]
    x = np.zeros(3)
    for _ in range(12):
        x = np.mean([x - 0.2 * (A @ (x - t) - b) for (A, b), t in zip(qs, tilts)], axis=0)
    np.testing.assert_allclose(out, np.tile(x, (2, 1)), rtol=1e-12)
    assert np.linalg.norm(x) > 10          # the tilt pulls the iterate far from the untilted optimum


def test_zero_tilts_change_nothing_and_the_claim_ignores_the_tilt():
    X, y, nodes = make_two_node_ridge(300, 3, split="label", seed=2)
    opt = make_optimizer("rgm-gd", steps=5, step_size=0.1, rdp_epsilon=4.0, gamma_rule="exact")
    a = opt.run(X, y, trials=3, seed=4, nodes=nodes)
    b = opt.run(X, y, trials=3, seed=4, nodes=nodes, tilts=[np.zeros(3), np.zeros(3)])
    c = opt.run(X, y, trials=3, seed=4, nodes=nodes, tilts=[np.zeros(3), np.full(3, 100.0)])
    np.testing.assert_array_equal(a.params, b.params)
    assert a.claim.rdp([2.0])[0] == c.claim.rdp([2.0])[0] == pytest.approx(4.0, rel=1e-9)
    assert a.extra["constants"] == c.extra["constants"]


def test_tilts_validated_by_name():
    X, y, nodes = make_two_node_ridge(100, 3, seed=3)
    opt = make_optimizer("rgm-gd", A=0.01, B=0.01, steps=2, step_size=0.1)
    for bad in ([np.zeros(3)], [np.zeros(3), np.zeros(2)], [np.zeros(3), np.array([0.0, np.inf, 0.0])]):
        with pytest.raises(ValueError, match="tilts"):
            opt.run(X, y, nodes=nodes, tilts=bad)


def test_benchmark_clipped_gd_matches_the_explicit_per_example_clipping():
    """The benchmark clips per-example gradients from their norms without the (trials, n, d) tensor; check it
    against the explicit construction (noise off via target -> the same sigma in both, so compare noise-free)."""
    mod = _bench()
    X, y, nodes = make_two_node_ridge(200, 3, split="random", seed=5)
    tilts = [np.zeros(3), np.full(3, 2.0)]
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 3))
    for rule in ("max", "frob"):
        for g, t in zip(nodes, tilts):
            C = 0.1 * mod.threshold(X[g], y[g], rule)
            z = x - t
            G = (z @ X[g].T - y[g])[:, :, None] * X[g][None] + mod.L2 * z[:, None, :]
            nrm = np.linalg.norm(G, axis=2)
            want = (G / np.maximum(1.0, nrm / C)[:, :, None]).sum(axis=1)
            u = z @ X[g].T
            r = u - y[g]
            sq = np.sum(X[g] ** 2, axis=1)
            n2 = np.sqrt(np.maximum(r**2 * sq + 2 * mod.L2 * r * u + mod.L2**2 * np.sum(z**2, 1, keepdims=True), 0))
            s = 1.0 / np.maximum(1.0, n2 / C)
            got = (s * r) @ X[g] + mod.L2 * z * s.sum(axis=1, keepdims=True)
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    # the Frobenius rule (authors' code) is never below the per-example maximum
    for g in nodes:
        assert mod.threshold(X[g], y[g], "frob") >= mod.threshold(X[g], y[g], "max")


def test_benchmark_step_size_meets_the_utility_theorem_condition():
    """eta <= 1 / (L (1 + 2 d gamma^2)) (Theorem 2's condition), which the old 0.5 / L broke at gamma ~ 1."""
    mod = _bench()
    for L, d, gamma in ((1.0, 10, 1.0), (3.0, 10, 0.1), (0.5, 22, 0.0), (2.0, 1, 5.0)):
        eta = mod.compliant_step(L, d, gamma)
        assert eta <= 1.0 / (L * (1.0 + 2.0 * d * gamma**2)) and eta <= 0.5 / L
    assert mod.compliant_step(1.0, 10, 1.0) == pytest.approx(1 / 21)
    assert mod.compliant_step(2.0, 10, 0.01) == 0.25
