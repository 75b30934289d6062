"""A new attack family written in one file plugs into every audit (docs/architecture.md, "Adding something").

``_MaxCoordinate`` below is defined entirely in this module: an :class:`~dpaudit.audit.attacks.base.AttackFamily`
whose statistic is the largest coordinate of a vector output (the test a report-noisy-max leak calls for). The
only other change a newcomer makes is the registry line -- one more instance in
``dpaudit.audit.attacks.registry.ATTACK_FAMILIES`` -- simulated here with ``monkeypatch``. After that,
``statistic="auto"`` tries it, ``statistic="max-coordinate"`` names it, the result records it, and the audit's
guarantees (its bound valid whatever the family) are unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.audit import audit_mechanism
from dpaudit.audit.attacks import registry
from dpaudit.audit.attacks.base import AttackFamily, FittedStatistic, numeric_or_raise


class _MaxStatistic(FittedStatistic):
    family = "max-coordinate"
    description = "largest coordinate of the output vector"

    def __call__(self, batch):
        return numeric_or_raise(batch, "the max-coordinate attack").max(axis=1)


class _MaxCoordinate(AttackFamily):
    name = "max-coordinate"
    description = "the largest coordinate of a numeric vector"
    needs_fit = False

    def applicable(self, train0, train1):
        b = np.asarray(train0)
        if b.dtype == object or b.ndim != 2 or b.shape[1] < 2:
            return False, "needs numeric vectors of a fixed length >= 2"
        return True, ""

    def fit(self, train0, train1, seed=0, features=None):
        return _MaxStatistic()


@pytest.fixture
def registered(monkeypatch):
    """The registry line: ``ATTACK_FAMILIES = (..., _MaxCoordinate())``."""
    families = registry.ATTACK_FAMILIES + (_MaxCoordinate(),)
    monkeypatch.setattr(registry, "ATTACK_FAMILIES", families)
    monkeypatch.setattr(registry, "FAMILY_NAMES", tuple(f.name for f in families))


def noisy_vector(shift):
    """Gaussian noise on a 4-vector whose first coordinate moves by ``shift`` on x'."""
    def sampler(x, rng, size):
        return rng.normal(0.0, 1.0, (size, 4)) + np.array([shift * x, 0.0, 0.0, 0.0])
    return sampler


def test_named_after_its_registry_line(registered):
    res = audit_mechanism(noisy_vector(3.0), 0, 1, epsilon=100.0, delta=1e-5, trials=4000, seed=0,
                          statistic="max-coordinate")
    assert res.details["attack"]["family"] == "max-coordinate"
    assert res.details["attack"]["description"] == "largest coordinate of the output vector"
    assert res.epsilon_lower > 0.5  # the leak is visible to it


def test_auto_tries_it(registered):
    res = audit_mechanism(noisy_vector(3.0), 0, 1, epsilon=100.0, delta=1e-5, trials=4000, seed=1)
    tried = {c["family"] for c in res.details["attack"]["candidates"]}
    assert "max-coordinate" in tried and "projection" in tried


def test_unknown_without_the_registry_line():
    with pytest.raises(ValueError, match="attack family names"):
        audit_mechanism(noisy_vector(3.0), 0, 1, epsilon=1.0, trials=200, statistic="max-coordinate")


def test_sound_on_identical_outputs(registered):
    # the same law on x and x': a valid audit certifies nothing (at most 1 - confidence of the time)
    hits = sum(audit_mechanism(noisy_vector(0.0), 0, 1, epsilon=0.0, delta=1e-5, trials=1000, seed=s,
                               statistic="max-coordinate").epsilon_lower > 0 for s in range(20))
    assert hits <= 3
