"""Optimizers state their own audit scenario (issue 16).

The audit (``dpaudit.audit.optimizer``) and the report read what each optimizer declares
(``audit_scenario``, ``canary_semantics``, ``canary_norm()``, ``max_canaries``, ``audit_dim``,
``step_mechanism()``); nothing there knows an optimizer by name. A new optimizer written in this
file is audited without touching another module.
"""

from __future__ import annotations

import ast
import math
import pathlib

import numpy as np
import pytest

import dpaudit
from dpaudit.accounting.claim import PrivacyClaim
from dpaudit.audit.optimizer import audit_optimizer, optimizer_scenario
from dpaudit.mechanisms import Gaussian
from dpaudit.optimizers import make_optimizer, names, optimizer_class
from dpaudit.optimizers.base import Optimizer, Run, accountant_claim
from dpaudit.report.data import optimizer_mechanism

# what the audit's name tables said before the declarations moved onto the optimizers
EXPECTED = {
    "dp-gd": ("gradient-canary", "record", math.inf),
    "dp-sgd": ("gradient-canary", "record", math.inf),
    "noisy-gd": ("gradient-canary", "offset", 1),
    "dp-agd": ("gradient-canary", "record", 1),
    "rgm-gd": ("gradient-canary", "record", 1),
    "projection": ("mean-estimation", "record", 0),
    "l1-recovery": ("mean-estimation", "record", 0),
    "output-perturbation": ("input-canary", "record", 0),
    "bias-reduced-sgd": ("gradient-canary", "replace", 1),
    "dp-ftrl": ("gradient-canary", "record", 1),
}


@pytest.mark.parametrize("name", names)
def test_each_optimizer_declares_its_scenario(name):
    opt = make_optimizer(name)
    assert (opt.audit_scenario, opt.canary_semantics, opt.max_canaries) == EXPECTED[name]
    assert opt.supports_canary == (opt.max_canaries >= 1)
    assert opt.canary_norm() > 0 and math.isfinite(opt.canary_norm())


def test_declared_canary_norms_and_dims():
    assert make_optimizer("dp-gd", clip=2.5).canary_norm() == 2.5
    ngd = make_optimizer("noisy-gd", clip=0.3)
    assert ngd.canary_norm() == ngd.sensitivity  # the offset canary: the gradient sensitivity, not the clip
    assert make_optimizer("l1-recovery", sparsity=9).audit_dim == 36
    assert make_optimizer("l1-recovery", sparsity=2).audit_dim == 20
    assert make_optimizer("dp-gd").audit_dim == 5


@pytest.mark.parametrize("name, hp", [("dp-gd", {}), ("dp-gd", {"neighbouring": "replace_one", "clip": 2.0}),
                                      ("dp-sgd", {"sample_rate": 0.05})])
def test_step_mechanism_is_the_one_the_claim_composes(name, hp):
    opt = make_optimizer(name, **hp)
    mech, steps = opt.step_mechanism()
    assert optimizer_mechanism(opt) == (mech, steps)
    assert opt.claim(100).details["mechanism"] == mech.describe()
    direct = dpaudit.RDPAccountant().compose(mech, steps).epsilon(1e-5)
    assert opt.claim(100).epsilon(1e-5) == direct


def test_no_optimizer_names_in_audit_and_report():
    root = pathlib.Path(dpaudit.__file__).parent
    found = []
    for path in [*(root / "audit").glob("*.py"), *(root / "report").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in EXPECTED and node.value != "projection":
                found.append(f"{path.name}:{node.lineno} {node.value!r}")
    # ("projection" is also the name of an attack family)
    assert not found, found


class _OffsetMean(Optimizer):
    """A toy optimizer written here only: theta = mean offset by the canary/n plus Gaussian noise."""

    name = "toy-offset-mean"
    defaults = {"sigma": 1.0, "neighbouring": "replace_one"}
    max_canaries = 1
    canary_semantics = "offset"

    def canary_norm(self) -> float:
        return 0.5

    def step_mechanism(self):
        return Gaussian(self.hp["sigma"], 2 * 0.5 / 20, "replace_one"), 1

    def claim(self, n: int) -> PrivacyClaim:
        mech, steps = self.step_mechanism()
        return accountant_claim("rdp", mech, steps, neighbouring="replace_one", description="toy")

    def run(self, X, y, *, trials=1, seed=None, canary_gradient=None):
        g = self._check_canary(canary_gradient, X.shape[1])
        rng = np.random.default_rng(seed)
        n = X.shape[0]
        centre = X.mean(axis=0) + (0.0 if g is None else g / n)
        params = centre + rng.normal(0.0, self.hp["sigma"], size=(trials, X.shape[1]))
        return Run(params=params, claim=self.claim(n))


def test_a_new_optimizer_is_audited_from_its_own_declarations():
    opt = _OffsetMean(sigma=0.05)
    sc = optimizer_scenario(opt, n=20)
    assert "'offset'" in sc["description"] and "absent vs present" in sc["description"]
    res = audit_optimizer(opt, trials=2000, seed=1)
    assert res.verdict in ("consistent", "inconclusive")
    with pytest.raises(ValueError, match="name must be one of"):
        optimizer_class(opt.name)  # not registered: only its own module describes it


def test_the_scenario_follows_the_declaration():
    class _Replacing(_OffsetMean):
        canary_semantics = "replace"

        def canary_norm(self) -> float:
            return 0.25

    sc = optimizer_scenario(_Replacing(), n=20)
    assert "-g vs +g" in sc["description"] and "norm 0.25" in sc["description"]
    assert "mean estimation" in optimizer_scenario(make_optimizer("projection"), n=20)["description"]
    assert "input canary" in optimizer_scenario(make_optimizer("output-perturbation"), n=20)["description"]
