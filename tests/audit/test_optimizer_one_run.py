"""One-run auditing of dp-gd / dp-sgd (Steinke, Nasr, Jagielski 2023).

Covers: the optimizers' ``canary_gradients``/``canary_mask`` semantics, bit-identical single-canary
behaviour (values recorded before the multi-canary change), ``audit_optimizer(method="one-run")``
(result fields, refusals), the vectorised guess counting against ``one_run_audit``, soundness
(null optimizer that ignores its canaries; true claims; exact GDP epsilon), power (broken dp-gd /
dp-sgd with 10x too little noise) and the fraction of the one-run ceiling reached at low noise.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from dpaudit.audit import audit_optimizer
from dpaudit.audit.optimizer import _correct_counts, one_run_optimizer_audits
from dpaudit.audit.stats.gdp import gdp_epsilon_of
from dpaudit.audit.stats.one_run import one_run_audit, one_run_epsilon_lower
from dpaudit.optimizers import make_optimizer
from dpaudit.optimizers.dp_gd import DPGD, DPSGD

METHOD = "one-run (Steinke-Nasr-Jagielski 2023)"


def violation_limit(audits, confidence, level=0.999):
    """The `level` quantile of Bin(audits, 1 - confidence): the most violations a sound auditor shows
    (count stochastically below that binomial), spurious failure probability <= 1 - level."""
    return int(binom.ppf(level, audits, 1.0 - confidence))


# ------------------------------------------------------------------ regression (recorded before the change)
def _regression_data():
    rng = np.random.default_rng(123)
    X = rng.standard_normal((6, 3))
    X[:, 0] = 0
    y = (rng.random(6) < 0.5).astype(float)
    return X, y


# opt.run(X, y, trials=3, seed=7, canary_gradient=cg).params with the code of commit 3dd7cc4
BEFORE = {
    ("dp-gd", None): [[0.09151425312982936, -0.4117917459895113, -0.4408327773426258],
                      [0.007496599003589885, -0.17600280454285183, -0.476018835743869],
                      [0.13488954618845775, -0.4357899776397689, -0.24710202835309603]],
    ("dp-gd", 1.5): [[-0.3251524135368373, -0.4117917459895113, -0.4408327773426258],
                     [-0.4091700676630768, -0.17600280454285183, -0.476018835743869],
                     [-0.2817771204782089, -0.4357899776397689, -0.24710202835309603]],
    ("dp-gd", -1.5): [[0.508180919796496, -0.4117917459895113, -0.4408327773426258],
                      [0.42416326567025653, -0.17600280454285183, -0.476018835743869],
                      [0.5515562128551244, -0.4357899776397689, -0.24710202835309603]],
    ("dp-sgd", None): [[-0.5257774724279427, 0.1034195102054681, -0.36666352218669984],
                       [-0.041468993798819895, -0.3717099124815404, -0.512012555277331],
                       [-0.24562153938011927, -0.6697360846117291, -0.1414563100147026]],
    ("dp-sgd", 1.5): [[0.6239797917978377, -0.534060816106025, -0.24229185767278563],
                      [-0.5666091345609748, 0.035618927945198775, -0.25489408600508046],
                      [0.16293191291468817, 0.4924214624614017, -0.6346455272903359]],
    ("dp-sgd", -1.5): [[0.9573131251311711, -0.534060816106025, -0.24229185767278563],
                       [1.1000575321056918, 0.035618927945198775, -0.25489408600508046],
                       [1.1629319129146882, 0.4924214624614017, -0.6346455272903359]],
}
# audit_optimizer(name, trials=200, seed=3).epsilon_lower before the change
BEFORE_AUDIT = {"dp-gd": 0.6613720345274305, "dp-sgd": 0.6312424581183811}


def _regression_opt(name):
    if name == "dp-sgd":
        return make_optimizer(name, steps=5, noise_multiplier=1.0, sample_rate=0.5)
    return make_optimizer(name, steps=5, noise_multiplier=1.0)


@pytest.mark.parametrize("name,c", sorted(BEFORE, key=str))
def test_single_canary_bit_identical(name, c):
    X, y = _regression_data()
    cg = None if c is None else np.array([c, 0.0, 0.0])
    params = _regression_opt(name).run(X, y, trials=3, seed=7, canary_gradient=cg).params
    np.testing.assert_array_equal(params, np.array(BEFORE[name, c]))


@pytest.mark.parametrize("name", ["dp-gd", "dp-sgd"])
def test_threshold_audit_unchanged(name):
    assert audit_optimizer(name, trials=200, seed=3).epsilon_lower == BEFORE_AUDIT[name]


# ------------------------------------------------------------------ optimizer semantics
def _padded(n=8, d=3, m=4, seed=0):
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.standard_normal((n, d)), np.zeros((n, m))], axis=1)
    y = (rng.random(n) < 0.5).astype(float)
    G = np.zeros((m, d + m))
    G[np.arange(m), d + np.arange(m)] = 1.0
    return X, y, G


def test_dp_gd_canaries_match_single_canary_and_no_canary():
    """All-False mask == no canary; one always-included canary == canary_gradient (dp-gd draws nothing more)."""
    X, y, G = _padded()
    opt = make_optimizer("dp-gd", steps=7, noise_multiplier=0.5)
    base = opt.run(X, y, trials=5, seed=11).params
    none_in = opt.run(X, y, trials=5, seed=11, canary_gradients=G, canary_mask=np.zeros((5, 4), bool)).params
    np.testing.assert_allclose(none_in, base, rtol=0, atol=1e-14)
    single = opt.run(X, y, trials=5, seed=11, canary_gradient=G[2]).params
    multi = opt.run(X, y, trials=5, seed=11, canary_gradients=G[2:3], canary_mask=np.ones((5, 1), bool)).params
    np.testing.assert_allclose(multi, single, rtol=0, atol=1e-14)


def test_dp_gd_canary_coordinates_noiseless_exact():
    """Noise 0, Dirac canaries of norm 3 clipped to C = 1: theta_T[d+j] = -eta * steps * C * z_j / n exactly."""
    X, y, G = _padded(m=6)
    opt = make_optimizer("dp-gd", steps=9, noise_multiplier=0.0, step_size=0.5)
    rng = np.random.default_rng(1)
    mask = rng.random((4, 6)) < 0.5
    run = opt.run(X, y, trials=4, seed=0, canary_gradients=3.0 * G, canary_mask=mask)
    np.testing.assert_allclose(run.params[:, 3:], -0.5 * 9 * 1.0 * mask / 8, rtol=1e-13)
    np.testing.assert_array_equal(run.extra["canaries_included"], mask.sum(axis=1))
    # the data part does not see the canaries (orthogonal coordinates)
    base = opt.run(X[:, :3], y, trials=4, seed=0).params
    np.testing.assert_allclose(run.params[:, :3], base, rtol=0, atol=1e-14)


def test_dense_and_dirac_canary_paths_agree():
    """A non-Dirac canary matrix takes the generic product path; rotating nothing, the numbers agree."""
    X, y, G = _padded(m=3)
    opt = make_optimizer("dp-gd", steps=4, noise_multiplier=0.3)
    mask = np.array([[True, False, True], [False, True, True]])
    dirac = opt.run(X, y, trials=2, seed=4, canary_gradients=G, canary_mask=mask).params
    G2 = G.copy()
    G2[0, 3 + 1] = 1e-300  # a second non-zero breaks the Dirac structure, changes nothing numerically
    dense = opt.run(X, y, trials=2, seed=4, canary_gradients=G2, canary_mask=mask).params
    np.testing.assert_allclose(dense, dirac, rtol=0, atol=1e-14)


def test_dp_sgd_canaries_poisson_sampled():
    """Noise 0: included canary j's coordinate is -eta * C * B_j / (q n) with B_j ~ Bin(steps, q); excluded: 0."""
    n, steps, q, eta = 10, 40, 0.25, 0.5
    X, y, G = _padded(n=n, m=200)
    opt = make_optimizer("dp-sgd", steps=steps, noise_multiplier=0.0, sample_rate=q, step_size=eta)
    mask = np.random.default_rng(2).random((3, 200)) < 0.5
    p = opt.run(X, y, trials=3, seed=5, canary_gradients=G, canary_mask=mask).params[:, 3:]
    counts = -p * q * n / eta
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-9)
    assert np.all(p[~mask] == 0.0)
    b = np.round(counts[mask])
    # mean of ~300 Bin(40, 0.25) counts: 10 +- 3 sd (sd of the mean ~0.16)
    assert abs(b.mean() - steps * q) < 3 * np.sqrt(steps * q * (1 - q) / b.size)
    assert 0 < b.min() and b.max() < steps  # really random per step, not all-or-nothing


@pytest.mark.parametrize("kw,match", [
    (dict(canary_gradients=np.ones((2, 7))), "canary_mask"),
    (dict(canary_gradients=np.ones((2, 4)), canary_mask=np.ones((3, 2), bool)), "canary_gradients must"),
    (dict(canary_gradients=np.ones(7), canary_mask=np.ones((3, 1), bool)), "canary_gradients must"),
    (dict(canary_gradients=np.full((2, 7), np.nan), canary_mask=np.ones((3, 2), bool)), "canary_gradients must"),
    (dict(canary_gradients=np.ones((2, 7)), canary_mask=np.ones((3, 2))), "boolean"),
    (dict(canary_gradients=np.ones((2, 7)), canary_mask=np.ones((2, 2), bool)), r"shape \(trials, m\)"),
    (dict(canary_gradients=np.ones((2, 7)), canary_mask=np.ones((3, 2), bool), canary_gradient=np.ones(7)),
     "not both"),
    (dict(canary_mask=np.ones((3, 2), bool)), "only used with"),
])
@pytest.mark.parametrize("name", ["dp-gd", "dp-sgd"])
def test_canary_bad_inputs(name, kw, match):
    X, y, _ = _padded()
    with pytest.raises(ValueError, match=match):
        make_optimizer(name).run(X, y, trials=3, seed=0, **kw)


# ------------------------------------------------------------------ the audit
def test_correct_counts_match_one_run_audit():
    """Vectorised top-k / bottom-k counting == one_run_audit on each row (ties included)."""
    rng = np.random.default_rng(3)
    scores = np.round(rng.standard_normal((20, 50)), 1)  # many ties
    coins = rng.random((20, 50)) < 0.5
    scores[coins] += 0.3
    ks = np.array([1, 3, 10, 25])
    v = _correct_counts(scores, coins, ks)
    for a in range(20):
        for i, k in enumerate(ks):
            ref = one_run_audit(scores[a], coins[a], k_in=k, k_out=k, delta=1e-5)
            assert ref["v"] == v[a, i]


def test_audit_result_fields_and_reproducible():
    res = audit_optimizer("dp-gd", method="one-run", canaries=200, seed=1)
    d = res.details
    assert d["one_run_bound"]["test"] == "snj" and res.method == METHOD and res.trials == 1
    assert d["m"] == 200 and 0 < d["r"] <= 200 and 0 <= d["correct"] <= d["r"] and 0 < d["canaries_included"] < 200
    assert d["k_in"] + d["k_out"] == d["r"] and d["dim"] == 205  # k_in, k_out chosen separately (issue 15)
    assert res.epsilon_claimed == pytest.approx(make_optimizer("dp-gd").claim(20).epsilon(1e-5))
    assert res.epsilon_lower == one_run_epsilon_lower(m=200, r=d["r"], v=d["correct"], delta=1e-5)
    assert not res.violation
    again = audit_optimizer("dp-gd", method="one-run", canaries=200, seed=1)
    assert again.to_dict() == res.to_dict()
    fixed = audit_optimizer("dp-gd", method="one-run", canaries=200, guesses=30, seed=1)
    assert fixed.details["r"] == 60 and fixed.details["guesses_chosen_by"].startswith("fixed")


@pytest.mark.parametrize("args,kw,match", [
    (("noisy-gd",), {}, "hosts many canaries"),
    (("rgm-gd",), {}, "hosts many canaries"),
    (("dp-gd",), {"neighbouring": "replace_one"}, "add/remove"),
    (("dp-gd",), {"canaries": 1}, "canaries"),
    (("dp-gd",), {"canaries": 100, "guesses": 51}, "guesses"),
    (("dp-gd",), {"canaries": 100, "guesses": 0}, "guesses"),
    (("dp-gd",), {"selection_fraction": 0.5}, "do not apply"),
])
def test_one_run_refusals(args, kw, match):
    with pytest.raises(ValueError, match=match):
        audit_optimizer(*args, method="one-run", seed=0, **kw)


def test_canaries_option_needs_one_run():
    with pytest.raises(ValueError, match="only to method='one-run'"):
        audit_optimizer("dp-gd", trials=100, canaries=100, seed=0)


class _TooLittleNoise:
    """Mixin: 10x less noise than the hyper-parameters say; the claim is the one of the stated noise."""

    @property
    def noise_std(self):
        return 0.1 * self.hp["noise_multiplier"] * self.hp["clip"]

    honest = None

    def claim(self, n):
        return self.honest(**self.hp).claim(n)


class BrokenDPGD(_TooLittleNoise, DPGD):
    honest = DPGD


class BrokenDPSGD(_TooLittleNoise, DPSGD):
    honest = DPSGD


class DeafDPGD(DPGD):
    """Accepts canaries and ignores them: the output is independent of every coin (true epsilon 0)."""

    def _check_canaries(self, canary_gradients, canary_mask, trials, dim):
        G, mask = super()._check_canaries(canary_gradients, canary_mask, trials, dim)
        return np.zeros_like(G), mask


def test_broken_claim_mixin_keeps_claim():
    assert BrokenDPGD().claim(20).epsilon(1e-5) == DPGD().claim(20).epsilon(1e-5)
    assert BrokenDPGD().noise_std == pytest.approx(0.1 * DPGD().noise_std)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_power_broken_dp_gd_flagged_in_one_run(seed):
    """Noise 10x too small (effective mu = 10 instead of 1), claim 4.73: one run with 1000 canaries flags it."""
    res = audit_optimizer(BrokenDPGD(), method="one-run", canaries=1000, seed=seed)
    assert res.violation, res.summary()
    assert res.epsilon_lower > 5.0 > res.epsilon_claimed


def test_power_broken_dp_sgd_flagged_in_one_run():
    hp = dict(steps=20, noise_multiplier=3.0, sample_rate=0.2)
    res = audit_optimizer(BrokenDPSGD(**hp), method="one-run", canaries=1000, seed=0)
    assert res.epsilon_claimed == pytest.approx(DPSGD(**hp).claim(20).epsilon(1e-5))
    assert res.violation and res.epsilon_lower > 2.0 * res.epsilon_claimed, res.summary()


def test_low_noise_reaches_the_ceiling():
    """Low-noise dp-gd (mu = 100): the calibrated one-run audit reaches >= 90% of the all-correct ceiling
    epsilon_LB(m=1000, r=1000, v=1000, delta=1e-5) = 5.78 (Steinke, Nasr, Jagielski 2023); measured 5.68 (98%)."""
    ceiling = one_run_epsilon_lower(m=1000, r=1000, v=1000, delta=1e-5)
    res = audit_optimizer("dp-gd", method="one-run", canaries=1000, noise_multiplier=0.1, seed=0)
    assert res.epsilon_lower >= 0.9 * ceiling
    assert res.details["correct"] == res.details["r"]


def test_null_soundness_fast():
    """Canaries ignored (true epsilon 0), 100 batched one-run audits: epsilon_LB > 0 in <= the binomial limit."""
    res = one_run_optimizer_audits(DeafDPGD(steps=20), canaries=200, audits=100, seed=7)
    assert np.sum(res["epsilon_lower"] > 0) <= violation_limit(100, 0.95)


@pytest.mark.slow
@pytest.mark.parametrize("guesses", [None, 250])
def test_null_soundness_repeated(guesses):
    """400 one-run audits of an optimizer that ignores its canaries (exact epsilon 0): the fraction with
    epsilon_LB > 0 is <= 1 - confidence (binomial limit, 35). Measured: 15/400 (calibrated), 20/400 (k = 250)."""
    res = one_run_optimizer_audits(DeafDPGD(), canaries=1000, audits=400, seed=11, guesses=guesses)
    hits = int(np.sum(res["epsilon_lower"] > 0))
    assert hits <= violation_limit(400, 0.95)
    if guesses is not None:
        assert hits > 0  # the test has power to see a leak: at k = 250 the null rate is a few percent


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dp-gd", "dp-sgd"])
def test_true_claim_soundness_repeated(name):
    """200 one-run audits (1000 canaries each) of the honest optimizer: violations within the binomial limit;
    for dp-gd the canary coordinate is exactly mu-GDP with mu = sqrt(steps)/noise_multiplier = 1, so
    epsilon_LB must also stay below the exact epsilon(1e-5) = 4.38 within that limit."""
    opt = make_optimizer(name)
    res = one_run_optimizer_audits(opt, canaries=1000, audits=200, seed=21)
    eps = res["epsilon_lower"]
    claimed = res["claim"].epsilon(1e-5)
    assert np.sum(eps > claimed) <= violation_limit(200, 0.95)
    assert eps.mean() > 1.0  # a real audit, not zeros (measured mean 1.6 for both)
    if name == "dp-gd":
        exact = gdp_epsilon_of(np.sqrt(opt.hp["steps"]) / opt.hp["noise_multiplier"], 1e-5)
        assert exact == pytest.approx(4.38, abs=0.01)
        assert np.sum(eps > exact) <= violation_limit(200, 0.95)
