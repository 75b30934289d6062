"""Issue 18: outputs the chosen statistic cannot read fail before the audit starts, saying how to map them."""

import numpy as np
import pytest

import dpaudit
import dpaudit.audit.protocol.sampler as mech
from dpaudit.audit.attacks.preflight import PROBE_SIZE
from dpaudit.core.execution import Execution
from dpaudit.core.runner import ChunkError


class _Counting:
    """A yes/no mechanism (randomised response, epsilon = log(0.7/0.3)) that counts its calls."""

    def __init__(self):
        self.calls = 0
        self.sizes = []

    def __call__(self, x, rng, size):
        self.calls += 1
        self.sizes.append(size)
        return np.where(rng.random(size) < (0.7 if x else 0.3), "yes", "no")


@pytest.mark.parametrize("statistic", ["value", "projection", ["value", "projection"]])
def test_numeric_families_on_strings_fail_before_any_trial(statistic):
    s = _Counting()
    with pytest.raises(ValueError, match="encode=") as info:
        dpaudit.audit_mechanism(s, 0, 1, epsilon=1.0, trials=2000, seed=0, statistic=statistic)
    assert s.sizes == [PROBE_SIZE, PROBE_SIZE]  # only the probe ran
    text = str(info.value)
    assert "'yes'" in text and "encode=lambda o: {'no': 0.0, 'yes': 1.0}[o]" in text


def test_user_statistic_that_cannot_read_strings_fails_before_any_chunk():
    s = _Counting()
    with pytest.raises(ValueError, match="could not convert string to float") as info:
        dpaudit.audit_mechanism(s, 0, 1, epsilon=1.0, trials=2000, seed=0,
                                statistic=lambda b: np.asarray(b, dtype=float).ravel())
    assert not isinstance(info.value, ChunkError)
    assert "before the audit started" in str(info.value) and "encode=" in str(info.value)
    assert s.sizes == [PROBE_SIZE, PROBE_SIZE]


def test_statistic_returning_the_wrong_number_of_scores_fails_early():
    s = _Counting()
    with pytest.raises(ValueError, match="one score per run"):
        dpaudit.audit_mechanism(s, 0, 1, epsilon=1.0, trials=2000, seed=0, statistic=lambda b: np.zeros(1),
                                encode=lambda o: 1.0 if o == "yes" else 0.0)
    assert s.calls == 2


def test_encode_as_advised_makes_the_audit_run():
    res = dpaudit.audit_mechanism(_Counting(), 0, 1, epsilon=1.0, trials=4000, seed=0, statistic="value",
                                  encode=lambda o: {"no": 0.0, "yes": 1.0}[o])
    assert 0.0 < res.epsilon_lower <= np.log(0.7 / 0.3)


def test_the_probe_does_not_change_the_audit(monkeypatch):
    def gauss(x, rng, size):
        return x + rng.normal(0.0, 1.0, size)

    kw = dict(epsilon=10.0, delta=1e-5, trials=3000, seed=7, statistic="value")
    with_probe = dpaudit.audit_mechanism(gauss, 0.0, 1.0, **kw)
    monkeypatch.setattr(mech, "preflight_outputs", lambda *a, **k: None)
    without = dpaudit.audit_mechanism(gauss, 0.0, 1.0, **kw)
    assert with_probe.epsilon_lower == without.epsilon_lower


def test_a_sampler_that_raises_is_still_reported_by_its_chunk():
    def broken(x, rng, size):
        raise RuntimeError("boom")

    with pytest.raises(ChunkError, match="boom"):
        dpaudit.audit_mechanism(broken, 0, 1, epsilon=1.0, trials=100, seed=0, execution=Execution(retries=0))


def test_auto_still_reads_strings():
    res = dpaudit.audit_mechanism(_Counting(), 0, 1, epsilon=1.0, trials=2000, seed=0)
    assert res.details["attack"]["family"] == "empirical-lr"


def test_probe_runs_are_recorded():
    res = dpaudit.audit_mechanism(_Counting(), 0, 1, epsilon=1.0, trials=500, seed=0)
    assert res.details["preflight_runs"] == 2 * PROBE_SIZE
