"""Tests of dpaudit.bounds.sparse (Ghazi et al. 2024, sparse-gradient calibrations and accounting)."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.bounds.sparse import (
    RandomStoppingFilter,
    bias_reduced_level_probabilities,
    bias_reduced_step_cost,
    l1_recovery_calibration,
    output_perturbation_calibration,
    projection_mechanism_calibration,
    sparse_mean_sensitivity,
)


def _sparse_dataset(rng, n, d, s, L):
    Z = np.zeros((n, d))
    for r in range(n):
        k = int(rng.integers(1, s + 1))
        idx = rng.choice(d, size=k, replace=False)
        v = rng.normal(size=k)
        Z[r, idx] = v / np.linalg.norm(v) * L * rng.uniform(0.1, 1.0)
    return Z


def _extremal(rng, d, s, L):
    z = np.zeros(d)
    z[rng.choice(d, size=s, replace=False)] = rng.choice([-1.0, 1.0], size=s) * L / math.sqrt(s)
    return z


@given(st.integers(0, 10_000), st.integers(2, 8), st.integers(2, 12), st.integers(1, 4), st.floats(0.1, 5.0))
def test_sensitivity_vs_brute_force(seed, n, d, s, L):
    s = min(s, d)
    rng = np.random.default_rng(seed)
    D = _sparse_dataset(rng, n, d, s, L)
    cands = np.vstack([_sparse_dataset(rng, 60, d, s, L), -D, [_extremal(rng, d, s, L) for _ in range(10)]])
    worst1 = worst2 = 0.0
    for i in range(n):
        Dp = np.broadcast_to(D, (len(cands), n, d)).copy()
        Dp[:, i] = cands
        diff = Dp.mean(axis=1) - D.mean(axis=0)
        worst1 = max(worst1, np.abs(diff).sum(axis=1).max())
        worst2 = max(worst2, np.linalg.norm(diff, axis=1).max())
    assert worst1 <= sparse_mean_sensitivity(L, s, n, "l1")
    assert worst2 <= sparse_mean_sensitivity(L, s, n, "l2")


@pytest.mark.parametrize("n, d, s, L", [(3, 5, 1, 1.0), (10, 20, 4, 2.0), (7, 9, 9, 0.3)])
def test_sensitivity_attained(n, d, s, L):
    rng = np.random.default_rng(0)
    z = _extremal(rng, d, s, L)
    assert np.abs(2 * z).sum() / n == pytest.approx(sparse_mean_sensitivity(L, s, n, "l1"), rel=1e-12)
    assert np.linalg.norm(2 * z) / n == pytest.approx(sparse_mean_sensitivity(L, s, n, "l2"), rel=1e-12)
    assert np.abs(2 * z).max() / n <= sparse_mean_sensitivity(L, s, n, "linf")


def test_sensitivity_bad_inputs():
    with pytest.raises(ValueError, match="lipschitz"):
        sparse_mean_sensitivity(0.0, 2, 10)
    with pytest.raises(ValueError, match="sparsity"):
        sparse_mean_sensitivity(1.0, 0, 10)
    with pytest.raises(ValueError, match="norm"):
        sparse_mean_sensitivity(1.0, 2, 10, "l3")
    with pytest.raises(ValueError, match="neighbouring"):
        sparse_mean_sensitivity(1.0, 2, 10, neighbouring="add_remove")


def test_projection_calibration_values():
    lap = projection_mechanism_calibration(1.0, 4, 100, 0.5)
    assert lap.noise == "laplace" and lap.delta == 0.0
    assert lap.scale == pytest.approx(2 * 1.0 * 2 / (100 * 0.5), rel=1e-14)
    assert lap.scale >= 2 * 2 / 50
    g = projection_mechanism_calibration(1.0, 4, 100, 0.5, 1e-5)
    assert g.scale**2 == pytest.approx(8 * math.log(1.25e5) / (100 * 0.5) ** 2, rel=1e-13)
    assert g.sensitivity == pytest.approx(0.02)
    # Gaussian scale does not depend on s
    assert projection_mechanism_calibration(1.0, 40, 100, 0.5, 1e-5).scale == g.scale
    assert g.claim.neighbouring == "replace_one"
    assert g.claim.epsilon(1e-5) == 0.5 and g.claim.epsilon(1e-6) == math.inf
    with pytest.raises(ValueError, match="epsilon"):
        projection_mechanism_calibration(1.0, 4, 100, 1.5, 1e-5)


def test_projection_analytic_calibration_is_exact_and_smaller():
    from dpaudit.conversions import gaussian_delta

    for eps in (0.3, 0.9, 2.0, 5.0):
        g = projection_mechanism_calibration(1.0, 4, 100, eps, 1e-6, calibration="analytic")
        assert gaussian_delta(g.scale, eps, sensitivity=g.sensitivity) <= 1e-6
        # smallest: 0.1% less noise violates the target
        assert gaussian_delta(g.scale * 0.999, eps, sensitivity=g.sensitivity) > 1e-6
        if eps < 1:
            assert g.scale < projection_mechanism_calibration(1.0, 4, 100, eps, 1e-6).scale
    with pytest.raises(ValueError, match="calibration"):
        projection_mechanism_calibration(1.0, 4, 100, 0.5, 1e-6, calibration="magic")


def test_l1_recovery_calibration():
    c = l1_recovery_calibration(1.0, 4, 1000, 10_000, 0.5, 1e-6)
    m = math.ceil(10_000 * 0.5 * math.sqrt(4 * math.log(250) / math.log(1e6)))
    assert c.details["m"] == m
    assert c.scale**2 == pytest.approx(18 * math.log(2.5e6) / (10_000 * 0.5) ** 2, rel=1e-13)
    # 18 ln(2.5/delta) = 2 ln(1.25/(delta/2)) * 9: classical Gaussian at (eps, delta/2), sensitivity 3L/n
    assert c.scale == pytest.approx(3 / 10_000 * math.sqrt(2 * math.log(1.25 / 5e-7)) / 0.5, rel=1e-13)
    assert "unconfirmed" in c.details["note"]
    with pytest.raises(ValueError, match="sparsity"):
        l1_recovery_calibration(1.0, 10, 10, 100, 0.5, 1e-6)
    with pytest.raises(ValueError, match="epsilon"):
        l1_recovery_calibration(1.0, 2, 10, 100, 1.0, 1e-6)
    with pytest.raises(ValueError, match="delta"):
        l1_recovery_calibration(1.0, 2, 10, 100, 0.5, 0.0)


def test_output_perturbation_calibration():
    g = output_perturbation_calibration(1.0, 1000, 0.1, 0.5, 1e-6)
    assert g.scale**2 == pytest.approx(8 * math.log(1.25e6) / (0.1 * 1000 * 0.5) ** 2, rel=1e-13)
    lap = output_perturbation_calibration(1.0, 1000, 0.1, 0.5, sparsity=3, smoothness=0.25)
    assert lap.scale == pytest.approx(2 * math.sqrt(6) / (0.1 * 1000 * 0.5) * (2 * 0.25 / 0.1 + 1), rel=1e-13)
    with pytest.raises(ValueError, match="sparsity"):
        output_perturbation_calibration(1.0, 1000, 0.1, 0.5)
    with pytest.raises(ValueError, match="l2"):
        output_perturbation_calibration(1.0, 1000, 0.0, 0.5, 1e-6)


@given(st.floats(0.01, 0.99), st.floats(0.01, 0.99), st.floats(1e-10, 0.1))
def test_calibrations_monotone_in_epsilon(e1, e2, delta):
    lo, hi = sorted((e1, e2))
    for f in (lambda e: projection_mechanism_calibration(1.0, 3, 50, e, delta),
              lambda e: projection_mechanism_calibration(1.0, 3, 50, e),
              lambda e: output_perturbation_calibration(1.0, 50, 0.5, e, delta)):
        assert f(lo).scale >= f(hi).scale


@pytest.mark.parametrize("n", [4, 5, 8, 16, 1000, 2**20])
def test_level_probabilities(n):
    p = bias_reduced_level_probabilities(n)
    M = int(math.floor(math.log2(n))) - 1
    assert len(p) == M + 1
    assert p.sum() == pytest.approx(1.0, abs=1e-15)
    assert np.allclose(p[1:] / p[:-1], 0.5)
    assert 2 ** (M + 1) <= n


def _proj_l1(v, radius):
    a = np.abs(v)
    if a.sum() <= radius:
        return v
    u = np.sort(a)[::-1]
    css = np.cumsum(u) - radius
    k = np.nonzero(u - css / np.arange(1, len(u) + 1) > 0)[0][-1]
    return np.sign(v) * np.maximum(a - css[k] / (k + 1), 0)


@pytest.mark.parametrize("n", [8, 4])
def test_bias_reduced_telescoping_exact(n):
    """E[G] = est(full batch) for a nonlinear est, exact enumeration over N, B and (O, E) (n power of 2)."""
    rng = np.random.default_rng(n)
    Z = rng.normal(size=(n, 4)) + 0.5

    def est(idx):
        return _proj_l1(Z[list(idx)].mean(axis=0), 0.4)

    p = bias_reduced_level_probabilities(n)
    EG = np.mean([est((i,)) for i in range(n)], axis=0)
    for N, pN in enumerate(p):
        size = 2 ** (N + 1)
        terms = [(est(B) - 0.5 * (est(O) + est(tuple(x for x in B if x not in O)))) / pN
                 for B in itertools.combinations(range(n), size) for O in itertools.combinations(B, size // 2)]
        EG = EG + pN * np.mean(terms, axis=0)
    assert np.allclose(EG, est(range(n)), atol=1e-13)
    # the single-record estimate alone is biased (the test can fail)
    assert not np.allclose(np.mean([est((i,)) for i in range(n)], axis=0), est(range(n)), atol=1e-3)


def test_step_cost_values_and_vectorised():
    eps_t, delta_t = bias_reduced_step_cost(2, 1024, 1.0, 1e-7)
    assert eps_t == pytest.approx((3 * 8 + 1) / (16 * 1024), rel=1e-14)
    assert delta_t == pytest.approx((3 * 8 + 1) * 1e-7 / (16 * 1024), rel=1e-14)
    levels = np.arange(9)
    e, d = bias_reduced_step_cost(levels, 1024, 0.5, 1e-7)
    assert np.all(np.diff(e) > 0) and e.shape == (9,)
    assert np.allclose(e, (3 * 2.0 ** (levels + 1) + 1) * 0.5 / (16 * 1024))
    with pytest.raises(ValueError, match="level"):
        bias_reduced_step_cost(10, 1024, 0.5, 1e-7)
    with pytest.raises(ValueError, match="level"):
        bias_reduced_step_cost(1.5, 1024, 0.5, 1e-7)
    with pytest.raises(ValueError, match="epsilon"):
        bias_reduced_step_cost(1, 1024, 1.5, 1e-7)


def test_random_stopping_filter_thresholds():
    eps, delta, n = 1.0, 1e-8, 1024
    f = RandomStoppingFilter(eps, delta)
    rng = np.random.default_rng(3)
    p = bias_reduced_level_probabilities(n)
    taken_eps2, taken_delta = [], []
    while True:
        e_t, d_t = bias_reduced_step_cost(int(rng.choice(len(p), p=p)), n, eps, delta)
        if not f.step(e_t, d_t):
            break
        taken_eps2.append(e_t**2)
        taken_delta.append(d_t)
    s2 = math.fsum(taken_eps2)
    assert math.sqrt(2 * math.log(4 / delta) * s2) + 0.5 * s2 <= eps / 2
    assert math.fsum(taken_delta) <= delta / 4
    assert f.steps == len(taken_eps2) > 10
    # filter slack delta/4 (the ln(4/delta)) + delta-arm budget delta/4 = delta/2
    assert f.claim().epsilon(delta / 2) == eps / 2
    assert f.claim().epsilon(delta / 4) == math.inf
    # refused step leaves state unchanged and repeated refusal is consistent
    assert not f.allows(e_t, d_t) and f.steps == len(taken_eps2)


@given(st.lists(st.tuples(st.floats(1e-6, 0.2), st.floats(1e-14, 1e-9)), max_size=60))
def test_random_stopping_filter_never_exceeds(costs):
    eps, delta = 0.8, 1e-6
    f = RandomStoppingFilter(eps, delta)
    acc_e, acc_d = [], []
    for e, d in costs:
        if f.step(e, d):
            acc_e.append(e * e)
            acc_d.append(d)
        s2 = math.fsum(acc_e)
        assert math.sqrt(2 * math.log(4 / delta) * s2) + 0.5 * s2 <= eps / 2
        assert math.fsum(acc_d) <= delta / 4
