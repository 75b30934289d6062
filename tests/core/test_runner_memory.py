"""Every auditor refuses, before any trial, an audit that would not fit in memory (issue 30, item 5): one estimate
(dpaudit.core.runner.audit_memory / check_memory), shared with the CLI."""

import numpy as np
import pytest

from dpaudit import Execution
from dpaudit.audit.mechanism import audit_mechanism
from dpaudit.audit.optimizer import audit_optimizer, optimizer_memory
from dpaudit.audit.training import audit_training
from dpaudit.core import runner
from dpaudit.core.runner import BASE_BYTES, audit_memory, available_memory, check_memory, output_bytes


def test_the_estimate_does_not_grow_with_the_evaluation_runs():
    a = audit_memory(kept_runs=600, bytes_per_kept=8, chunk_size=10_000, bytes_per_run=8)
    assert a == audit_memory(kept_runs=600, bytes_per_kept=8, chunk_size=10_000, bytes_per_run=8)
    assert a < BASE_BYTES + 2**22
    # kept runs and chunk outputs each count
    assert audit_memory(kept_runs=10**9, bytes_per_kept=8, chunk_size=1, bytes_per_run=8) > 2**34
    wide = audit_memory(kept_runs=0, bytes_per_kept=8, chunk_size=10_000, bytes_per_run=8 * 10**5)
    assert wide > 10_000 * 8 * 10**5


def test_check_memory_names_trials_and_what_would_fit():
    check_memory(2**20, trials=10, available=2**30)
    check_memory(2**40, trials=10, available=None) if available_memory() is None else None
    with pytest.raises(ValueError, match=r"trials=1,000,000 needs about .* use at most about") as err:
        check_memory(BASE_BYTES + 2**33, trials=10**6, available=BASE_BYTES + 2**32)
    assert f"{int(10**6 * (BASE_BYTES + 2**32) / 2**33):,} trials" in str(err.value)


def test_available_memory_is_read():
    mem = available_memory()
    assert mem is None or mem > 2**20


def test_output_bytes():
    assert output_bytes(np.zeros((10, 7)), 10) == 56.0
    assert output_bytes(np.zeros(10), 10) == 8.0
    assert output_bytes(["yes"] * 10, 10) > 8.0


def test_wide_outputs_refused_before_any_trial(monkeypatch):
    """A huge audit of a sampler with wide vector outputs is refused after the probe alone: with a fixed statistic
    the kept selection is capped (8 bytes a score), so what cannot fit is one chunk of 2^18-wide outputs per worker
    (10^4 runs x 2 MiB); the contest keeps its capped selection outputs (2 x 3e5 x 32 KiB)."""
    monkeypatch.setattr(runner, "available_memory", lambda: 16 * 2**30)  # the same answer on every machine
    calls = []

    def very_wide(x, rng, size):
        calls.append(size)
        return np.full((size, 2**18), float(x))

    with pytest.raises(ValueError, match="trials="):
        audit_mechanism(very_wide, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=10**9, statistic=lambda o: o[:, 0],
                        execution=Execution(chunk_size=10_000))
    assert len(calls) <= 2 and sum(calls) <= 2 * 64  # the preflight probe only
    calls.clear()

    def sampler(x, rng, size):
        calls.append(size)
        return rng.normal(x, 1.0, size=(size, 4096))

    with pytest.raises(ValueError, match="trials="):  # the contest keeps selection outputs
        audit_mechanism(sampler, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=10**8)
    assert len(calls) <= 2


def test_memory_refusal_uses_the_available_memory(monkeypatch):
    """With little memory available, moderate audits are refused by every auditor, before any trial."""
    monkeypatch.setattr(runner, "available_memory", lambda: 2**20)
    calls = []

    def sampler(x, rng, size):
        calls.append(size)
        return rng.normal(x, 1.0, size)

    with pytest.raises(ValueError, match="trials=1,000,000"):
        audit_mechanism(sampler, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=10**6, statistic="value")
    assert sum(calls) <= 2 * 64

    runs = []

    def train(include, rng):
        runs.append(include)
        return float(rng.normal())

    with pytest.raises(ValueError, match="trials="):
        audit_training(train, mode="many_runs", trials=10**6, claim=1.0, seed=0)
    assert runs == []
    with pytest.raises(ValueError, match="trials="):
        audit_optimizer("dp-sgd", trials=10**6, seed=0, execution=Execution(chunk_size=10**5))


def test_optimizer_memory_is_what_the_cli_estimates():
    from dpaudit.cli._estimate import announce
    from dpaudit.optimizers import make_optimizer

    opt = make_optimizer("dp-sgd")
    small, big = optimizer_memory(opt, 10**4), optimizer_memory(opt, 10**8)
    assert small < big < small + 10**8 * 0.3 * 2 * 8 * runner.KEPT_COPIES + 1
    from dpaudit.cli._checks import UsageError

    with pytest.raises(UsageError, match="--trials"):
        announce("audit", opt, 10**12)


def test_a_small_audit_of_wide_outputs_is_not_refused(monkeypatch):
    """A chunk holds at most the audit's trials: 14 trials of 10^5-wide outputs (0.8 MB a run) need little memory
    (the estimate charged a whole default chunk and refused them with "22.5 GB" on a 21 GB machine)."""
    monkeypatch.setattr(runner, "available_memory", lambda: 2 * 2**30)
    sampler = lambda x, rng, size: np.full((size, 100_000), float(x))  # noqa: E731
    r = audit_mechanism(sampler, 0.0, 1.0, epsilon=1.0, trials=14, seed=0, statistic=lambda o: o[:, 0])
    assert 0.0 <= r.epsilon_lower
