"""The public interface promised to users: every promised name exists with the promised arguments."""

import inspect
import math

import numpy as np
import pytest

import dpaudit

TOP_LEVEL = {
    "Gaussian": ["sigma", "sensitivity"],
    "Laplace": ["scale", "sensitivity"],
    "PureDP": ["epsilon"],
    "ExponentialMechanism": ["epsilon"],
    "PoissonSampled": ["mechanism", "q"],
    "RelativeGaussian": ["sigma", "gamma", "A", "B", "dim"],
    "RDPAccountant": ["orders"],
    "ZCDPAccountant": [],
    "TCDPAccountant": [],
    "PLDAccountant": ["discretization"],
}

MODULE_FUNCTIONS = {
    "dpaudit.conversions": {
        "zcdp_to_dp": ["rho", "delta", "method"],
        "zcdp_delta": ["rho", "epsilon"],
        "dp_to_zcdp": ["epsilon", "delta", "method"],
        "rdp_to_dp": ["orders", "rdp", "delta"],
        "tcdp_to_dp": ["rho", "omega", "delta"],
        "gaussian_delta": ["sigma", "epsilon", "sensitivity"],
        "gaussian_epsilon": ["sigma", "delta", "sensitivity"],
    },
    "dpaudit.bounds": {
        "langevin_rdp": ["alpha", "sensitivity", "strong_convexity", "step_size", "sigma", "n", "steps"],
        "langevin_lower_rdp": ["alpha", "sensitivity", "step_size", "sigma", "n", "steps"],
        "linear_gaussian_rdp": ["alpha", "sensitivity", "step_size", "sigma", "n", "steps"],
        "composition_rdp": ["alpha", "sensitivity", "step_size", "sigma", "n", "steps"],
        "rgm_rdp": ["alpha", "A", "B", "gamma", "dim", "sigma"],
        "rgm_epsilon": ["delta", "A", "B", "gamma", "dim", "sigma", "steps"],
        "ptr_distance": ["X", "threshold"],
        "dp_agd_budget": ["epsilon", "delta"],
    },
    "dpaudit.optimizers": {"make_optimizer": ["name"]},
    "dpaudit.audit": {
        "audit_mechanism": ["sampler", "x", "x_prime", "epsilon", "delta", "trials", "confidence", "statistic", "seed"],
        "audit_optimizer": ["name_or_optimizer", "trials", "confidence", "seed"],
        "renyi_divergence": ["samples_p", "samples_q", "alpha", "method", "confidence", "seed"],
    },
}

OPTIMIZERS = ["dp-gd", "dp-sgd", "noisy-gd", "dp-agd", "rgm-gd", "projection", "l1-recovery",
              "output-perturbation", "bias-reduced-sgd", "dp-ftrl"]


def _params(obj):
    return list(inspect.signature(obj).parameters)


@pytest.mark.parametrize("name", sorted(TOP_LEVEL))
def test_top_level_names_and_arguments(name):
    obj = getattr(dpaudit, name)
    params = _params(obj)
    assert params[: len(TOP_LEVEL[name])] == TOP_LEVEL[name]


@pytest.mark.parametrize("module,name", [(m, f) for m, fs in MODULE_FUNCTIONS.items() for f in fs])
def test_module_functions_and_arguments(module, name):
    import importlib

    fn = getattr(importlib.import_module(module), name)
    params = _params(fn)
    for p in MODULE_FUNCTIONS[module][name]:
        assert p in params, f"{module}.{name} lacks argument {p!r}"


def test_mechanism_methods_and_accountant_chain():
    m = dpaudit.Gaussian(2.0)
    assert isinstance(m.rdp([2.0, 3.0]), np.ndarray) and isinstance(m.zcdp(), float)
    out = m.sample(0.0, np.random.default_rng(0), size=5)
    assert out.shape == (5,)
    for acc in (dpaudit.RDPAccountant(), dpaudit.ZCDPAccountant(), dpaudit.TCDPAccountant(), dpaudit.PLDAccountant()):
        assert acc.compose(m, count=3) is acc  # calls chain
        e = acc.epsilon(1e-5)
        assert 0 < e < math.inf and 0 < acc.delta(e) <= 1e-5 * (1 + 1e-6)
    assert dpaudit.ZCDPAccountant().compose(m).rho == pytest.approx(1 / 8)
    t = dpaudit.TCDPAccountant().compose(m)
    assert t.rho == pytest.approx(1 / 8) and t.omega == math.inf


def test_optimizer_names_and_run_contract():
    from dpaudit.optimizers import make_optimizer, names

    assert sorted(names) == sorted(OPTIMIZERS)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)) / 3
    y = (rng.random(40) < 0.5).astype(float)
    for name in ("dp-gd", "dp-sgd", "noisy-gd"):
        run = make_optimizer(name, steps=3).run(X, y, trials=4, seed=1)
        assert run.params.shape == (4, 3)
        c = run.claim
        assert c.neighbouring in ("add_remove", "replace_one")
        assert c.epsilon(1e-5) > 0 and 0 <= c.delta(c.epsilon(1e-5)) <= 1
        assert c.rdp([2.0]).shape == (1,)


def test_audit_result_fields_and_json():
    import json

    res = dpaudit.audit.audit_mechanism(lambda x, rng, size: x + rng.laplace(0, 1, size), 0.0, 1.0,
                                        epsilon=1.0, trials=500, seed=0)
    for f in ("epsilon_lower", "epsilon_claimed", "delta", "confidence", "violation", "method", "trials", "details"):
        assert hasattr(res, f)
    json.dumps(res.to_dict())
    est = dpaudit.audit.renyi_divergence(np.random.default_rng(0).normal(0, 1, 2000),
                                         np.random.default_rng(1).normal(0.5, 1, 2000), 2.0, seed=0)
    for f in ("value", "lower", "upper", "method"):
        assert hasattr(est, f)
    assert est.lower <= est.value <= est.upper
