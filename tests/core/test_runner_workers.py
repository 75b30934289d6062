"""``workers=N``: this process and a shared pool of N - 1 processes run the chunks together (issue 30, item 5).

:class:`dpaudit.core.runner.Workers`: the same results as one process whatever N and the chunking; a chunk stuck in
the pool (or still waiting for the pool to start) is run here too, first result counts; the pool starts only when a
call's remaining work is worth it (else in the background, for the next call); a chunk's exception reaches the caller
as a ChunkError chained to it; a pool process that dies costs a restart, not the result; lambdas and closures are
sent with cloudpickle; executors other than dpaudit's own (Dask, a thread pool) still get every chunk submitted.
Timings are in ``benchmarks/workers_speed.py``, never asserted here.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
import time

import numpy as np
import pytest

from dpaudit.audit import audit_optimizer
from dpaudit.core import runner
from dpaudit.core.execution import Execution
from dpaudit.core.runner import (
    ChunkError,
    ChunkValueError,
    Counts,
    InProcessExecutor,
    Job,
    Workers,
    run_chunks,
    run_jobs,
)


@pytest.fixture
def warm():
    """A dedicated Workers of 2 (this process + 1), its pool started and answering before the test."""
    w = Workers(2, defer=False)
    w.submit(int, 0).result(timeout=300)
    yield w
    w.shutdown(wait=True, cancel_futures=True)


def draws(size, seed_seq):
    return np.random.default_rng(seed_seq).standard_normal(size)


def counted(size, seed_seq):
    x = np.random.default_rng(seed_seq).standard_normal(size)
    return Counts(size, np.array([(x <= t).sum() for t in (-1.0, 0.0, 1.0)], dtype=np.int64))


def where_run(delay: float):
    """A chunk function returning, per trial, the id of the process that ran it (after ``delay`` seconds)."""

    def fn(size, seed_seq):
        time.sleep(delay)
        return np.full(size, os.getpid())

    return fn


def test_results_do_not_depend_on_the_number_of_workers_or_where_chunks_ran():
    jobs = [Job(draws, 10_500, 3, "scores"), Job(counted, 7_321, 4, "counts", fold=True), Job(draws, 999, 5)]
    reference = run_jobs(jobs, chunk_size=1_000)
    for n in (2, 3):
        w = Workers(n, defer=False)
        try:
            got = run_jobs(jobs, chunk_size=1_000, executor=w)
        finally:
            w.shutdown(wait=True, cancel_futures=True)
        assert all(np.array_equal(a, b) for a, b in zip(reference[0], got[0]))
        assert np.array_equal(np.concatenate(reference[2]), np.concatenate(got[2]))
        assert got[1][0].trials == 7_321 and np.array_equal(got[1][0].counts, reference[1][0].counts)
    # the counts are those of the kept draws, whatever the chunk size of the fold
    kept = np.concatenate(run_chunks(draws, 7_321, 4, 1_000))
    assert np.array_equal(reference[1][0].counts, [(kept <= t).sum() for t in (-1.0, 0.0, 1.0)])


@pytest.mark.parametrize("chunk_size", [1, 7, 250, 4_000])
def test_chunk_sizes_with_a_pool(warm, chunk_size):
    here = run_chunks(draws, 2_003, 11, chunk_size)
    there = run_chunks(draws, 2_003, 11, chunk_size, executor=warm)
    assert len(here) == len(there) and all(np.array_equal(a, b) for a, b in zip(here, there))


def test_the_caller_and_the_pool_both_run_chunks(warm):
    pids = np.concatenate(run_chunks(where_run(0.1), 30_000, 0, 1_000, executor=warm))  # 3 s of sleep to share
    assert os.getpid() in pids  # this process ran chunks itself
    assert set(pids) - {os.getpid()}  # and the pool ran others


def stuck_in_the_pool(caller: int):
    def fn(size, seed_seq):
        if os.getpid() != caller:
            time.sleep(600)  # every chunk sent to the pool hangs
        return np.random.default_rng(seed_seq).random(size)

    return fn


def test_a_stuck_chunk_is_taken_back_by_the_caller(warm):
    got = run_chunks(stuck_in_the_pool(os.getpid()), 5_000, 7, 1_000, executor=warm)
    ref = run_chunks(stuck_in_the_pool(os.getpid()), 5_000, 7, 1_000)
    assert all(np.array_equal(a, b) for a, b in zip(got, ref))


def test_a_short_call_runs_here_and_starts_the_pool_in_the_background(monkeypatch):
    monkeypatch.setattr(runner, "POOL_START_SECONDS", 1e9)  # no call is worth a pool start
    w = Workers(2)
    try:
        assert not w.started
        pids = np.concatenate(run_chunks(where_run(0.0), 5_000, 0, 500, executor=w))
        assert set(pids) == {os.getpid()}  # nothing waited for the pool
        assert w.started  # but it is starting, for the next call
    finally:
        w.shutdown(wait=True, cancel_futures=True)


def test_a_long_call_starts_the_pool_during_the_call(monkeypatch):
    monkeypatch.setattr(runner, "POOL_START_SECONDS", 0.0)  # every call is worth a pool start
    w = Workers(2)
    try:
        ref = run_chunks(draws, 3_000, 2, 500)
        got = run_chunks(draws, 3_000, 2, 500, executor=w)
        assert w.started
        assert all(np.array_equal(a, b) for a, b in zip(got, ref))
    finally:
        w.shutdown(wait=True, cancel_futures=True)


def fails(caller: int | None = None):
    """Raises a ValueError in every process, or (``caller`` given) in every process but the caller, whose chunks
    take 10 ms each."""

    def fn(size, seed_seq):
        if caller is not None and os.getpid() == caller:
            time.sleep(0.01)
            return np.zeros(size)
        raise ValueError(f"bad chunk of {size} trials")

    return fn


def test_a_chunk_error_reaches_the_caller_chained_to_the_chunk_exception(warm):
    with pytest.raises(ChunkValueError, match=r"chunk \d+ \(trials .*ValueError: bad chunk of 100 trials") as err:
        run_chunks(fails(), 1_000, 0, 100, executor=warm)
    assert isinstance(err.value.__cause__, ValueError) and err.value.attempts == 1
    # raised in a pool process only: the same error, from there
    with pytest.raises(ChunkValueError, match="bad chunk of 100 trials") as err:
        run_chunks(fails(caller=os.getpid()), 20_000, 0, 100, executor=warm)
    assert isinstance(err.value.__cause__, ValueError)
    # the pool survives a chunk's error: the next call runs on it
    assert np.array_equal(np.concatenate(run_chunks(draws, 3_000, 1, 500, executor=warm)),
                          np.concatenate(run_chunks(draws, 3_000, 1, 500)))


def flaky(marker: str):
    """Fails (a RuntimeError, retried) the first time any process runs chunk 0, then succeeds."""

    def fn(size, seed_seq):
        if seed_seq.spawn_key[-1:] == (0,) and not os.path.exists(marker):
            open(marker, "w").close()
            raise RuntimeError("transient")
        return np.random.default_rng(seed_seq).random(size)

    return fn


def test_a_transient_failure_is_retried_with_the_same_seed(warm, tmp_path):
    got = run_chunks(flaky(str(tmp_path / "m")), 3_000, 5, 500, executor=warm)
    assert all(np.array_equal(a, b) for a, b in zip(got, run_chunks(_uniform, 3_000, 5, 500)))
    with pytest.raises(ChunkError, match="after 1 attempt"):
        run_chunks(flaky(str(tmp_path / "n")), 3_000, 5, 500, executor=warm, retries=0)


def _uniform(size, seed_seq):
    return np.random.default_rng(seed_seq).random(size)


def dies_in_the_pool(caller: int):
    def fn(size, seed_seq):
        if os.getpid() != caller:
            os._exit(3)  # the pool process dies: BrokenProcessPool
        time.sleep(0.1)  # the caller is still busy when the pool's death is reported
        return np.random.default_rng(seed_seq).random(size)

    return fn


def test_a_pool_process_that_dies_costs_a_restart_not_the_result(warm):
    got = run_chunks(dies_in_the_pool(os.getpid()), 8_000, 9, 500, executor=warm)
    assert all(np.array_equal(a, b) for a, b in zip(got, run_chunks(_uniform, 8_000, 9, 500)))
    assert warm.restarts >= 1


def test_lambdas_and_closures_go_to_the_pool(warm):
    scale = 3.0
    got = run_chunks(lambda size, ss: scale * np.random.default_rng(ss).random(size), 4_000, 2, 250, executor=warm)
    assert np.array_equal(np.concatenate(got), 3.0 * np.concatenate(run_chunks(_uniform, 4_000, 2, 250)))


class Recording(cf.ThreadPoolExecutor):
    """Any other executor (a Dask client's is one): every chunk goes through its submit, as before."""

    def __init__(self):
        super().__init__(2)
        self.calls = 0

    def submit(self, fn, /, *args, **kwargs):
        self.calls += 1
        return super().submit(fn, *args, **kwargs)


def test_other_executors_get_every_chunk_submitted():
    with Recording() as ex:
        got = run_chunks(_uniform, 2_500, 1, 500, executor=ex)
    assert ex.calls == 5
    assert all(np.array_equal(a, b) for a, b in zip(got, run_chunks(_uniform, 2_500, 1, 500)))
    assert isinstance(runner.shared_pool(2), Workers)
    assert runner.in_flight(InProcessExecutor()) == 1


def test_a_dp_sgd_audit_on_workers_gives_the_one_worker_result(monkeypatch):
    monkeypatch.setattr(runner, "POOL_START_SECONDS", 0.0)  # the shared pool starts during the call
    kw = dict(trials=1_200, seed=3, steps=5)
    one = audit_optimizer("dp-sgd", execution=Execution(chunk_size=100), **kw)
    two = audit_optimizer("dp-sgd", execution=Execution(workers=2, chunk_size=100), **kw)
    three = audit_optimizer("dp-sgd", execution=Execution(workers=3, chunk_size=100), **kw)
    d = json.dumps(one.to_dict(), sort_keys=True)
    assert d == json.dumps(two.to_dict(), sort_keys=True) == json.dumps(three.to_dict(), sort_keys=True)
