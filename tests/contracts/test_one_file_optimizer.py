"""A new optimizer written in one file is built, documented, audited and put on the command line through its
declarations and one registry line (docs/architecture.md, "Adding something").

``NoisyMean`` below is defined entirely in this module: it releases the mean of the records plus Gaussian noise
of standard deviation ``noise_multiplier * bound / n`` (the Gaussian mechanism, Dwork and Roth 2014, Thm. A.1, at
replace-one sensitivity ``2 bound / n``), declares its two hyper-parameters once (name, type, range, default,
help), its audit scenario (mean estimation), and states its claim through the accounting layer. The registry line
-- ``"noisy-mean": ("module", "NoisyMean")`` in ``_REGISTRY`` of ``dpaudit/optimizers/__init__.py`` -- is
simulated with ``monkeypatch``; after it, ``make_optimizer``, ``optimizer_defaults``, ``audit_optimizer`` and the
hyper-parameter flags of ``dpaudit audit noisy-mean`` reach it by name.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpaudit.optimizers as optimizers
from dpaudit.audit import audit_optimizer
from dpaudit.mechanisms import Gaussian
from dpaudit.optimizers import HyperParameter, Optimizer, Run, make_optimizer, optimizer_defaults
from dpaudit.optimizers.base import accountant_claim, check_data, make_rng


class NoisyMean(Optimizer):
    """The mean of the records (rows of X, each of norm <= ``bound``) plus Gaussian noise (replace-one)."""

    name = "noisy-mean"
    hyperparameters = (
        HyperParameter("noise_multiplier", float, 2.0, 0.0, None, "noise std / sensitivity of the mean",
                       low_open=True),
        HyperParameter("bound", float, 1.0, 0.0, None, "largest norm of a record (rows are clipped to it)",
                       low_open=True),
    )
    audit_scenario = "mean-estimation"

    @property
    def lipschitz(self) -> float:  # the mean-estimation scenario moves row 0 by +-lipschitz
        return self.hp["bound"]

    def step_mechanism(self):
        return Gaussian(self.hp["noise_multiplier"], neighbouring="replace_one"), 1

    def claim(self, n: int):
        mech, steps = self.step_mechanism()
        return accountant_claim("rdp", mech, steps, neighbouring="replace_one",
                                description=f"Gaussian mean, noise multiplier {self.hp['noise_multiplier']:g}")

    def run(self, X, y=None, *, trials=1, seed=None, canary_gradient=None) -> Run:
        X, _ = check_data(X, None, need_y=False)
        n, b = X.shape[0], self.hp["bound"]
        norms = np.maximum(np.linalg.norm(X, axis=1, keepdims=True), b)
        mean = (X * (b / norms)).mean(axis=0)
        noise = make_rng(seed).normal(0.0, self.hp["noise_multiplier"] * 2.0 * b / n, size=(trials, X.shape[1]))
        return Run(params=mean + noise, claim=self.claim(n))


@pytest.fixture
def registered(monkeypatch):
    """The registry line."""
    monkeypatch.setitem(optimizers._REGISTRY, "noisy-mean", (__name__, "NoisyMean"))
    monkeypatch.setattr(optimizers, "names", tuple(optimizers._REGISTRY))


def test_built_and_documented_from_its_declarations(registered):
    opt = make_optimizer("noisy-mean", noise_multiplier=0.5)
    assert opt.hp == {"noise_multiplier": 0.5, "bound": 1.0}
    assert optimizer_defaults("noisy-mean") == {"noise_multiplier": 2.0, "bound": 1.0}
    assert "noise std / sensitivity of the mean" in NoisyMean.__doc__
    with pytest.raises(ValueError, match="noise_multiplier"):
        make_optimizer("noisy-mean", noise_multiplier=-1.0)


def test_audited_through_its_declared_scenario(registered):
    ok = audit_optimizer("noisy-mean", trials=4000, seed=0, noise_multiplier=1.0)
    assert ok.epsilon_lower > 0 and not ok.violation
    assert ok.details["claim"]["epsilon"] == pytest.approx(ok.epsilon_claimed)


def test_an_optimizer_without_run_or_claim_cannot_be_built():
    class Half(Optimizer):
        name = "half"
        hyperparameters = ()

        def claim(self, n):
            return None

    with pytest.raises(TypeError, match="abstract"):
        Half()


def test_on_the_command_line(registered, capsys):
    from dpaudit.cli import main

    with pytest.raises(SystemExit) as e:  # --help exits through SystemExit
        main(["audit", "noisy-mean", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "--noise-multiplier" in out and "--bound" in out
    code = main(["audit", "noisy-mean", "--noise-multiplier", "1.0", "--trials", "3000", "--seed", "1"])
    assert code == 0
    assert "noise_multiplier=1 (given)" in capsys.readouterr().out
