"""Issue 11 ("Every number trustworthy"), optimizers: regression tests for the defects of the
numerics brief (clip = inf, extreme sigma, complex data, warnings for large records,
OrderGridWarning from claims) and a property suite of ``make_optimizer(...).run`` on tiny data
with random legal hyper-parameters across the float range.

Every example: no exception other than a ValueError naming an argument, finite parameters of
shape (trials, dim), a claim whose epsilon is >= 0 (no NaN) and whose delta is in [0, 1], no
warning at all, every call finishing (a 60 s hang guard, not a speed test); for DP-GD the claim is at least
the exact epsilon of the composed Gaussian mechanism (mpmath).
"""

from __future__ import annotations

import math
from datetime import timedelta

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpaudit.optimizers import make_optimizer, optimizer_defaults
from tests.support.mpmath_oracles import mp_gauss_delta

pytestmark = pytest.mark.filterwarnings("error")

DELTA = 1e-5


def _data(n=8, d=3, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (rng.random(n) < 0.5).astype(float)
    return X * scale, y


# ============================================================================== regressions
@pytest.mark.parametrize("name", ["dp-gd", "dp-sgd"])
def test_clip_inf_with_noise_is_refused(name):
    # noise std = noise_multiplier * clip = inf gave NaN parameters (and RuntimeWarnings)
    X, y = _data()
    with pytest.raises(ValueError, match="clip"):
        make_optimizer(name, clip=math.inf, noise_multiplier=1.0, steps=3).run(X, y)


@pytest.mark.parametrize("name", ["dp-gd", "dp-sgd"])
def test_clip_inf_without_noise_is_plain_gd(name):
    X, y = _data()
    opt = make_optimizer(name, clip=math.inf, noise_multiplier=0.0, steps=3)
    assert opt.noise_std == 0.0  # was 0 * inf = NaN
    run = opt.run(X, y, trials=2, seed=0)
    assert np.all(np.isfinite(run.params))
    assert run.claim.epsilon(DELTA) == math.inf


@pytest.mark.parametrize("sigma", [1e-300, 1e300])
def test_noisy_gd_extreme_sigma(sigma):
    # sigma = 1e-300: ZeroDivisionError in the claim; 1e300: OverflowError (sigma**2)
    X, y = _data()
    run = make_optimizer("noisy-gd", sigma=sigma, steps=3).run(X, y, trials=2, seed=0)
    assert np.all(np.isfinite(run.params))
    eps = run.claim.epsilon(DELTA)
    assert not math.isnan(eps) and eps >= 0
    assert (eps == math.inf) if sigma == 1e-300 else (eps < 1e-100)


@pytest.mark.parametrize("name", ["dp-gd", "dp-sgd", "noisy-gd", "dp-agd", "output-perturbation"])
def test_complex_data_refused(name):
    # np.asarray(X, dtype=float) dropped the imaginary part with only a ComplexWarning
    X, y = _data()
    with pytest.raises(ValueError, match="X"):
        make_optimizer(name).run(X + 1j, y)
    with pytest.raises(ValueError, match="y"):
        make_optimizer(name).run(X, y + 0j)


@pytest.mark.parametrize("name", ["dp-gd", "dp-sgd", "dp-agd"])
def test_large_records_no_warning_and_correct_clipping(name):
    # row norms overflowed (RuntimeWarning) and the clipping factor became 0: zero gradients
    X, y = _data()
    kw = dict(steps=2) if name != "dp-agd" else dict(noise=False)
    if name != "dp-agd":
        kw["noise_multiplier"] = 0.0
    big = make_optimizer(name, **kw).run(X * 1e200, y, trials=2, seed=3)
    assert np.all(np.isfinite(big.params))
    if name == "dp-gd":
        # clipping binds for both scalings at theta = 0, so the first step is the same: the
        # clipped gradient is C x/||x|| times the sign of l'
        one = make_optimizer(name, steps=1, noise_multiplier=0.0).run(X * 1e200, y).params
        ref = make_optimizer(name, steps=1, noise_multiplier=0.0).run(X * 1e3, y).params
        np.testing.assert_allclose(one, ref, rtol=1e-12)
        assert np.any(one != 0.0)


@pytest.mark.parametrize("nm", [0.3, 1000.0])
def test_optimizer_claims_do_not_warn_about_the_order_grid(nm):
    # the best RDP order is the grid's first (nm = 0.3) or last (nm = 1000) order: the internal
    # accountant warned the user (OrderGridWarning) on every claim query
    claim = make_optimizer("dp-gd", noise_multiplier=nm, steps=1).claim(10)
    eps = claim.epsilon(DELTA)
    claim.delta(1.0)
    # still an upper bound: at least the exact epsilon of one Gaussian with sigma/C = nm
    assert mp_gauss_delta(1.0 / nm, eps) <= DELTA


def test_divergent_iterates_are_refused_not_released():
    # step_size = 1e300 on the squared loss: inf/NaN parameters (with RuntimeWarnings) before
    X, y = _data()
    with pytest.raises(ValueError, match="step_size"):
        make_optimizer("dp-gd", loss="squared", step_size=1e300, steps=5, noise_multiplier=0.0,
                       clip=math.inf).run(X, X[:, 0])


# ============================================================================== properties
TINY = 5e-324
#: a hang guard, not a speed test (a loop without an iteration bound would exceed it by far; 2 s flaked
#: on a loaded 2-core machine): the numbers, not the time, are what these properties check
DEADLINE = timedelta(seconds=60)
FAST = settings(max_examples=12, deadline=DEADLINE, suppress_health_check=[HealthCheck.too_slow])
MANY = settings(max_examples=120, deadline=DEADLINE, suppress_health_check=[HealthCheck.too_slow])


def log_uniform(lo, hi):
    return st.floats(lo, hi).map(lambda e: float(10.0**e))


positive = st.one_of(log_uniform(-300, 300), st.sampled_from([TINY, 1e-300, 1e-10, 0.5, 1.0, 1e10, 1e300]))
nonneg = st.one_of(st.just(0.0), positive)
prob = st.one_of(log_uniform(-300, 0), st.just(1.0))
deltas = st.one_of(log_uniform(-300, -0.01), st.sampled_from([1e-300, 1e-5, 0.5]))
small_counts = st.integers(0, 4)
scales = st.one_of(st.just(1.0), log_uniform(-300, 300))


def _hyper(name):
    """Random legal hyper-parameters for optimizer ``name`` (every key optional)."""
    loss = st.sampled_from(["logistic", "hinge", "squared"])
    lip_loss = st.sampled_from(["logistic", "hinge"])
    common = {
        "dp-gd": dict(loss=loss, steps=small_counts, step_size=positive, clip=st.one_of(positive, st.just(math.inf)),
                      noise_multiplier=nonneg, l2=nonneg, neighbouring=st.sampled_from(["add_remove", "replace_one"])),
        "dp-sgd": dict(loss=loss, steps=small_counts, step_size=positive, clip=positive, noise_multiplier=nonneg,
                       sample_rate=prob, l2=nonneg),
        "noisy-gd": dict(loss=loss, steps=small_counts, step_size=positive, sigma=nonneg, l2=nonneg,
                         feature_bound=positive, label_bound=nonneg, radius=st.one_of(positive, st.just(math.inf)),
                         clip=st.one_of(positive, st.just(math.inf))),
        "dp-agd": dict(loss=lip_loss, epsilon=positive, delta=deltas, clip=positive, clip_obj=positive,
                       splits=st.integers(1, 100), budget_increase=positive, grid_size=st.integers(2, 8),
                       alpha_max=positive, tau=st.integers(1, 5), alpha_growth=nonneg, l2=nonneg,
                       noise=st.booleans(), noisy_max=st.sampled_from(["laplace", "exponential"])),
        "rgm-gd": dict(l2=positive, steps=st.integers(1, 4), step_size=st.one_of(st.none(), positive),
                       alpha=log_uniform(-10, 3).map(lambda x: 1 + x), rdp_epsilon=positive,
                       gamma=st.one_of(st.none(), positive), noise=st.booleans()),
        "projection": dict(epsilon=positive, delta=st.one_of(st.just(0.0), deltas), lipschitz=positive,
                           sparsity=st.integers(1, 3), calibration=st.sampled_from(["classical", "analytic"]),
                           noise=st.booleans()),
        "l1-recovery": dict(epsilon=log_uniform(-300, -0.001), delta=deltas, lipschitz=positive,
                            sparsity=st.integers(1, 2), noise=st.booleans()),
        "output-perturbation": dict(loss=lip_loss, l2=positive, epsilon=positive,
                                    delta=st.one_of(st.just(0.0), deltas), feature_bound=positive,
                                    box=st.one_of(positive, st.just(math.inf)), sparsity=st.integers(1, 3),
                                    calibration=st.sampled_from(["classical", "analytic"]), noise=st.booleans()),
        "bias-reduced-sgd": dict(loss=lip_loss, epsilon=log_uniform(-300, 0), delta=deltas, feature_bound=positive,
                                 sparsity=st.integers(1, 3), step_size=positive,
                                 radius=st.one_of(positive, st.just(math.inf)), max_steps=st.integers(1, 30),
                                 noise=st.booleans()),
    }[name]
    return st.fixed_dictionaries({}, optional=common)


def _tiny_data(name, hp, scale, seed):
    """Data satisfying the optimizer's stated domain (records scaled by ``scale`` otherwise)."""
    rng = np.random.default_rng(seed)
    n, d = 6, 3
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (rng.random(n) < 0.5).astype(float)
    if name in ("noisy-gd", "output-perturbation", "bias-reduced-sgd"):
        bound = hp.get("feature_bound", 1.0)
        X = X * (bound * 0.5)
        if name == "noisy-gd" and hp.get("loss") == "squared":
            y = y * min(hp.get("label_bound", 1.0), 1.0)
        if name == "bias-reduced-sgd":
            X[:, hp.get("sparsity", 5):] = 0.0
    elif name in ("projection", "l1-recovery"):
        s = hp.get("sparsity", 5)
        X = np.zeros((n, d))
        for i in range(n):
            X[i, rng.choice(d, size=min(s, d, 1), replace=False)] = rng.choice([-1.0, 1.0])
        X *= hp.get("lipschitz", 1.0) * 0.5
    elif name == "rgm-gd":
        y = rng.standard_normal(n)
        X, y = X * scale, y * scale
    else:
        X = X * scale
    return X, y


def _check_run(name, hp, scale, seed):
    try:
        opt = make_optimizer(name, **hp)
        X, y = _tiny_data(name, opt.hp, scale, seed)
        run = opt.run(X, y, trials=2, seed=seed)
    except ValueError as exc:
        names = set(optimizer_defaults(name)) | {"X", "y", "epsilon", "delta", "sigma", "step_size", "gamma",
                                                  "rdp_epsilon", "sensitivity", "noise_std"}
        assert any(k in str(exc) for k in names), f"ValueError naming no argument: {exc}"
        return
    assert run.params.shape == (2, X.shape[1])
    assert np.all(np.isfinite(run.params)), "non-finite parameters released"
    eps = run.claim.epsilon(DELTA)
    assert not math.isnan(eps) and eps >= 0.0
    d = run.claim.delta(1.0)
    assert not math.isnan(d) and 0.0 <= d <= 1.0
    if name == "dp-gd" and math.isfinite(eps) and opt.hp["noise_multiplier"] > 0:
        k = 2.0 if opt.hp["neighbouring"] == "replace_one" else 1.0
        with mp.workdps(50):
            mu = k * mp.sqrt(opt.hp["steps"]) / mp.mpf(opt.hp["noise_multiplier"])
        if opt.hp["steps"] > 0:
            assert mp_gauss_delta(mu, eps) <= DELTA  # at least the exact composed Gaussian epsilon


NAMES = ["dp-gd", "dp-sgd", "noisy-gd", "dp-agd", "rgm-gd", "projection", "l1-recovery", "output-perturbation",
         "bias-reduced-sgd"]


@pytest.mark.parametrize("name", NAMES)
def test_optimizer_runs_property(name):
    @FAST
    @given(_hyper(name), scales, st.integers(0, 3))
    def inner(hp, scale, seed):
        _check_run(name, hp, scale, seed)

    inner()


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_optimizer_runs_property_many(name):
    @MANY
    @given(_hyper(name), scales, st.integers(0, 3))
    def inner(hp, scale, seed):
        _check_run(name, hp, scale, seed)

    inner()


# ============================================================================== found by the property suite
def test_dp_agd_extreme_budgets_refused_with_a_named_argument():
    X, y = _data()
    # per-step budget eps_step^2 / 2 overflowed: ValueError naming rho_nmax (no optimizer argument)
    with pytest.raises(ValueError, match="epsilon"):
        make_optimizer("dp-agd", epsilon=1e300).run(X, y)
    # clip / sqrt(2 rho_ng) overflowed: inf noise, NaN parameters
    with pytest.raises(ValueError, match="clip"):
        make_optimizer("dp-agd", epsilon=1e-6, clip=1e300).run(X, y)


def test_dp_agd_tiny_budget_increase_and_huge_records():
    X, y = _data()
    # budget_increase below float resolution: C / sqrt(2 (rho_new - rho_old)) = C / 0
    run = make_optimizer("dp-agd", budget_increase=1e-16).run(X, y, trials=2, seed=0)
    assert np.all(np.isfinite(run.params))
    # clip = 1e300 at moderate epsilon and records of norm 1e300: overflowing scores and norms
    run = make_optimizer("dp-agd", clip=1e300, epsilon=1e10).run(X * 1e300, y, trials=2, seed=0)
    assert np.all(np.isfinite(run.params))


def test_noisy_gd_huge_feature_bound():
    # feature_bound ** 2 raised OverflowError (smoothness)
    X, y = _data()
    run = make_optimizer("noisy-gd", feature_bound=1e155, steps=2).run(X, y, trials=2, seed=0)
    assert np.all(np.isfinite(run.params))


def test_rgm_gd_huge_records_refused_with_a_named_argument():
    X, y = _data()
    with pytest.raises(ValueError, match="X"):  # X^T X overflowed (RuntimeWarning, inf constants)
        make_optimizer("rgm-gd", steps=2).run(X * 1e154, y * 1e154)
    run = make_optimizer("rgm-gd", steps=2).run(X * 1e60, y, trials=2, seed=0)  # norms overflowed
    assert np.all(np.isfinite(run.params))


def test_l1_recovery_huge_noise_solves():
    # HiGHS treats |b| >= 1e20 as infinite: "Model error" (RuntimeError) for epsilon = 1e-20
    rng = np.random.default_rng(0)
    Z = np.zeros((6, 3))
    Z[np.arange(6), rng.integers(0, 3, 6)] = 0.5
    run = make_optimizer("l1-recovery", epsilon=1e-20, delta=0.1, sparsity=1).run(Z, trials=2, seed=0)
    assert np.all(np.isfinite(run.params))


@pytest.mark.parametrize("name,hp", [("projection", dict(epsilon=5e-324)),
                                     ("output-perturbation", dict(l2=5e-324, delta=0.0, sparsity=1, box=math.inf))])
def test_infinite_noise_scale_refused(name, hp):
    # inf noise: NaN from the l1 projection (inf - inf) / inf parameters released
    rng = np.random.default_rng(0)
    Z = np.zeros((6, 3))
    Z[np.arange(6), rng.integers(0, 3, 6)] = 0.5
    y = (rng.random(6) < 0.5).astype(float)
    with pytest.raises(ValueError, match="epsilon"):
        make_optimizer(name, **hp).run(Z, y)


def test_output_perturbation_tiny_feature_bound():
    # smoothness = feature_bound^2 / 4 underflowed to 0: ValueError naming "smoothness"
    rng = np.random.default_rng(0)
    X = rng.standard_normal((6, 3))
    X *= 1e-210 / np.linalg.norm(X, axis=1, keepdims=True)
    y = (rng.random(6) < 0.5).astype(float)
    run = make_optimizer("output-perturbation", feature_bound=1e-200, delta=0.0, sparsity=1).run(X, y, trials=2)
    assert np.all(np.isfinite(run.params))


def test_bias_reduced_sgd_divergent_steps_refused():
    X, y = _data(n=256)
    X[:, 1:] = 0.0
    # step_size 1e300 with an unbounded radius: inf/NaN iterates (RuntimeWarnings) before
    # (n = 256 keeps every step's privacy cost small enough for the filter to admit a few steps)
    with pytest.raises(ValueError, match="step_size"):
        make_optimizer("bias-reduced-sgd", step_size=1e300, radius=math.inf, sparsity=1, feature_bound=1e300,
                       noise=False, max_steps=5).run(X * 1e299, y, trials=4, seed=0)


def test_noisy_gd_projection_of_tiny_iterates_is_quiet():
    # radius / ||theta|| overflowed in the branch not taken (RuntimeWarning, an error here)
    X, y = _data()
    run = make_optimizer("noisy-gd", clip=1.0, radius=1e49, sigma=1e-300).run(X, y, trials=2, seed=157)
    assert np.all(np.isfinite(run.params))


def test_dp_agd_huge_clip_obj_names_the_argument():
    # C_obj / sqrt(2 rho_nmax) = inf reached noisy_max_charge: ValueError naming "scale"
    X, y = _data()
    with pytest.raises(ValueError, match="clip_obj"):
        make_optimizer("dp-agd", clip_obj=1e300, epsilon=1e-10).run(X, y)
