"""audit_optimizer: every optimizer of API.md runs; broken optimizers are flagged; true claims hold."""

import json
import math

import numpy as np
import pytest

from dpaudit.accounting.claim import PrivacyClaim
from dpaudit.audit import audit_optimizer
from dpaudit.audit.gdp import gdp_delta_of, gdp_epsilon_of
from dpaudit.optimizers import names
from dpaudit.optimizers.base import Run

FAST_TRIALS = {"dp-agd": 200, "l1-recovery": 60}


def gdp_claim(mu, label):
    """Exact claim of a composition of Gaussian mechanisms with total GDP parameter mu."""
    return PrivacyClaim(neighbouring="add_remove", description=label, source="gdp",
                        epsilon_fn=lambda d: gdp_epsilon_of(mu, d), delta_fn=lambda e: gdp_delta_of(mu, e))


class BrokenGD:
    """A DP-GD on the canary coordinate with one deliberate bug (white-box canary contract).

    Per step: S = clip_C(canary) (+ nothing from the data on coordinate 0), theta -= S + noise.
    The claim is always the correct claim of the *intended* algorithm.
    """

    supports_canary = True
    neighbouring = "add_remove"

    def __init__(self, bug, *, steps=4, clip=1.0, noise_multiplier=2.0, q=0.05):
        self.bug, self.steps, self.C, self.nm, self.q = bug, steps, clip, noise_multiplier, q
        self.name = f"broken-{bug}"
        self.hp = {"clip": clip, "delta": 1e-5}

    def claim(self):
        T, nm = self.steps, self.nm
        if self.bug == "subsampling-claimed-not-done":  # claims the Poisson-subsampled CLT mu (Dong et al. Thm 5)
            return gdp_claim(self.q * math.sqrt(T * (math.exp(1 / nm**2) - 1)), "subsampled (claimed)")
        return gdp_claim(math.sqrt(T) / nm, "full-batch Gaussian composition")

    def run(self, X, y, *, trials=1, seed=None, canary_gradient=None):
        rng = np.random.default_rng(seed)
        d = X.shape[1]
        g = np.zeros(d) if canary_gradient is None else np.asarray(canary_gradient, float)
        if self.bug == "clipping-skipped" and canary_gradient is not None:
            g = 4.0 * g  # a large gradient that clipping would have reduced to norm C
        if self.bug == "noise-before-clipping" and canary_gradient is not None:
            g = 10.0 * g
        norm = np.linalg.norm(g)
        clipped = g if (self.bug in ("clipping-skipped", "noise-before-clipping") or norm <= self.C) else g * self.C / norm
        sd = self.nm * self.C / (2.0 if self.bug == "wrong-sensitivity" else 1.0)
        uses = 4 if self.bug == "budget-charged-once" else 1
        theta = np.zeros((trials, d))
        for _ in range(self.steps * uses):
            if self.bug == "noise-before-clipping":
                v = clipped + rng.normal(0.0, sd, (trials, d))
                nv = np.linalg.norm(v, axis=1, keepdims=True)
                theta -= v * np.minimum(1.0, self.C / nv)
            else:
                theta -= clipped + rng.normal(0.0, sd, (trials, d))
        return Run(params=theta, claim=self.claim())


@pytest.mark.parametrize("name", names)
def test_every_optimizer_is_audited(name):
    r = audit_optimizer(name, trials=FAST_TRIALS.get(name, 400), seed=0)
    assert r.details["optimizer"] == name and r.trials == FAST_TRIALS.get(name, 400)
    assert r.epsilon_lower >= 0 and r.epsilon_claimed > 0
    assert "canary" in r.details and "claim" in r.details
    json.dumps(r.to_dict())


@pytest.mark.parametrize("bug", ["wrong-sensitivity", "clipping-skipped", "subsampling-claimed-not-done",
                                 "budget-charged-once", "noise-before-clipping"])
def test_broken_optimizers_are_flagged(bug):
    r = audit_optimizer(BrokenGD(bug), trials=20_000, seed=1, delta=1e-2)
    assert r.violation, (bug, r.epsilon_lower, r.epsilon_claimed)


def test_correct_reference_optimizer_not_flagged():
    r = audit_optimizer(BrokenGD("none"), trials=20_000, seed=1, delta=1e-2)
    assert not r.violation
    g = audit_optimizer(BrokenGD("none"), trials=20_000, seed=1, delta=1e-2, method="gdp")
    assert g.epsilon_lower == pytest.approx(g.epsilon_claimed, rel=0.15)  # Dirac canary is exactly Gaussian


def test_reproducible_and_options():
    a = audit_optimizer("dp-gd", trials=300, seed=5, steps=5)
    b = audit_optimizer("dp-gd", trials=300, seed=5, steps=5)
    assert a.to_dict() == b.to_dict() and a.details["hyperparameters"]["steps"] == 5
    with pytest.raises(ValueError):
        audit_optimizer("dp-gd", trials=1)
    with pytest.raises(ValueError):
        audit_optimizer("no-such-optimizer", trials=10)
    with pytest.raises(ValueError, match="options"):
        audit_optimizer(BrokenGD("none"), trials=10, steps=3)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dp-gd", "noisy-gd", "dp-sgd", "rgm-gd", "projection", "output-perturbation",
                                  "bias-reduced-sgd"])
def test_true_claims_soundness_repeated(name):
    """200 audits with different seeds of each optimizer with its true claim: violation rate <= beta."""
    R = 200
    hits = 0
    for s in range(R):
        kw = {"steps": 10} if name in ("dp-gd", "noisy-gd", "dp-sgd") else {}
        hits += audit_optimizer(name, trials=300, seed=3000 + s, **kw).violation
    assert hits <= R * 0.05 + 3 * math.sqrt(R * 0.05 * 0.95)
