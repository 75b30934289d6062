"""Scale-out (issue 8): chunked trials on any executor give the same answer; failures are reported.

The chunk layout and seeds depend only on (seed, trials, chunk_size), so an audit run in this
process, on 2 or 4 worker processes, on a thread pool or on a Dask LocalCluster (two worker
processes, started once for the module) must return the same AuditResult.to_dict(), bit for bit.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import math
import os
import pickle

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.audit import audit_mechanism, audit_optimizer
from dpaudit.audit.linear_instance import linear_instance_table, simulate_noisy_gd
from dpaudit.audit.stats.gdp import gdp_delta_of, gdp_epsilon_of
from dpaudit.core.execution import Execution
from dpaudit.core.runner import (
    DEFAULT_RETRIES,
    ChunkError,
    InProcessExecutor,
    Job,
    ProcessPool,
    Workers,
    check_merged,
    chunk_sizes,
    concat_chunks,
    open_executor,
    run_chunks,
    run_jobs,
)
from dpaudit.core.seeds import as_seed_sequence, spawn
from dpaudit.mechanisms import Gaussian, Laplace

GAUSS = Gaussian(1.0).sample  # a bound method of a frozen dataclass: picklable
# true eps of GAUSS: 4.42 for the mathematical mechanism (its numpy sampler also leaks through its low bits,
# which statistic="auto-real" does not read)
SMALL = dict(epsilon=4.5, delta=1e-5, trials=3_000, seed=7, statistic="auto-real")
CHUNK = 400  # trials per chunk of the SMALL audits


# ------------------------------------------------------------------ module-level (picklable) helpers
def vector_sampler(x, rng, size):
    """Gaussian mechanism on a 3-vector query."""
    return rng.normal(np.broadcast_to(x, (size, 3)), 1.0)


def normal_chunk(size, seed_seq):
    return np.random.default_rng(seed_seq).standard_normal(size)


def fails_on_last_chunk(size, seed_seq):
    """Raises on the remainder chunk (the only one of size 500 when trials = 2500, chunk = 1000)."""
    if size == 500:
        raise RuntimeError("worker exploded")
    return normal_chunk(size, seed_seq)


def value_error_chunk(size, seed_seq):
    raise ValueError("bad input inside the chunk")


def short_chunk(size, seed_seq):
    return np.zeros(size - 1)


def raising_sampler(x, rng, size):
    raise RuntimeError("sampler crashed")


class Flaky:
    """Fails the first attempt of every chunk (an OSError, as from a lost connection), then works.

    The first attempt is detected with a marker file per chunk, so it works across processes.
    """

    def __init__(self, directory, hard=False):
        self.directory, self.hard = str(directory), hard

    def __call__(self, size, seed_seq):
        key = "-".join(map(str, seed_seq.spawn_key)) + f"-{size}"
        try:
            fd = os.open(os.path.join(self.directory, key), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return normal_chunk(size, seed_seq)
        os.close(fd)
        if self.hard:
            os._exit(3)  # the worker process dies: BrokenProcessPool
        raise OSError("transient failure")


class Counter:
    """Counts calls in this process (in-process executor only)."""

    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, size, seed_seq):
        self.calls += 1
        return self.fn(size, seed_seq)


# ------------------------------------------------------------------ executors
@pytest.fixture(scope="module")
def pool2():
    ex = ProcessPool(2)
    yield ex
    ex.shutdown()


@pytest.fixture(scope="module")
def pool4():
    ex = ProcessPool(4)
    yield ex
    ex.shutdown()


@pytest.fixture(scope="module")
def dask_executor():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=50)
    client = distributed.Client(cluster)
    try:
        yield client.get_executor()
    finally:
        client.close()
        cluster.close()


@pytest.fixture(params=["pool2", "pool4", "threads", "dask"])
def executor(request):
    if request.param == "threads":
        with cf.ThreadPoolExecutor(3) as ex:
            yield ex
    elif request.param == "dask":
        yield request.getfixturevalue("dask_executor")
    else:
        yield request.getfixturevalue(request.param)


def dumps(result) -> str:
    return json.dumps(result.to_dict(), sort_keys=True)


# ------------------------------------------------------------------ same answer everywhere
@pytest.fixture(scope="module")
def reference():
    """In-process results (the default executor)."""
    return {
        "scalar": dumps(audit_mechanism(GAUSS, 0.0, 1.0, execution=Execution(chunk_size=CHUNK), **SMALL)),
        "vector": dumps(audit_mechanism(vector_sampler, np.zeros(3), np.ones(3), execution=Execution(chunk_size=CHUNK), **SMALL)),
        "one-run": dumps(audit_mechanism(GAUSS, 0.0, 1.0, method="one-run", execution=Execution(chunk_size=CHUNK), **SMALL)),
        "optimizer": dumps(audit_optimizer("dp-gd", trials=1_200, seed=3, execution=Execution(chunk_size=250), steps=5)),
        "renyi": json.dumps(linear_instance_table((1, 4), (2.0, 8.0), trials=1_500, seed=5, execution=Execution(chunk_size=400),
                                                  methods=("gaussian", "nonparametric")), sort_keys=True),
    }


def test_reference_is_chunked_and_sane(reference):
    r = json.loads(reference["scalar"])
    assert len(chunk_sizes(SMALL["trials"], CHUNK)) > 4  # several chunks per job
    from dpaudit.conversions import gaussian_epsilon

    assert r["trials"] == SMALL["trials"] and 0.5 < r["epsilon_lower"] <= gaussian_epsilon(1.0, 1e-5)
    # the evaluation counts add up to the announced trials (merged exactly, none dropped)
    assert sum(r["details"]["n_selection"]) + sum(r["details"]["n_evaluation"]) == 2 * SMALL["trials"]


def test_same_result_on_every_executor(reference, executor):
    assert dumps(audit_mechanism(GAUSS, 0.0, 1.0, execution=Execution(chunk_size=CHUNK, executor=executor), **SMALL)) == reference["scalar"]
    got = audit_mechanism(vector_sampler, np.zeros(3), np.ones(3), execution=Execution(chunk_size=CHUNK, executor=executor), **SMALL)
    assert dumps(got) == reference["vector"]
    assert dumps(audit_mechanism(GAUSS, 0.0, 1.0, method="one-run", execution=Execution(chunk_size=CHUNK, executor=executor), **SMALL)) == reference["one-run"]


def test_optimizer_and_renyi_same_result_on_every_executor(reference, executor):
    got = audit_optimizer("dp-gd", trials=1_200, seed=3, execution=Execution(chunk_size=250, executor=executor), steps=5)
    assert dumps(got) == reference["optimizer"]
    rows = linear_instance_table((1, 4), (2.0, 8.0), trials=1_500, seed=5,
                                 execution=Execution(chunk_size=400, executor=executor),
                                 methods=("gaussian", "nonparametric"))
    assert json.dumps(rows, sort_keys=True) == reference["renyi"]


def test_workers_argument_owns_a_pool(reference):
    """workers=1 (in process), 2 and 4 (a process pool per call) give the in-process result."""
    for w in (1, 2, 4):
        assert dumps(audit_mechanism(GAUSS, 0.0, 1.0, execution=Execution(chunk_size=CHUNK, workers=w), **SMALL)) == reference["scalar"], w
    rows = linear_instance_table((1, 4), (2.0, 8.0), trials=1_500, seed=5, execution=Execution(chunk_size=400, workers=2),
                                 methods=("gaussian", "nonparametric"))
    assert json.dumps(rows, sort_keys=True) == reference["renyi"]


def test_chunk_size_is_part_of_the_layout_but_workers_are_not():
    a = simulate_noisy_gd(np.zeros((1, 1)), steps=3, step_size=0.1, sigma=1.0, trials=1000, seed=1,
                          execution=Execution(chunk_size=300))
    b = simulate_noisy_gd(np.zeros((1, 1)), steps=3, step_size=0.1, sigma=1.0, trials=1000, seed=1,
                          execution=Execution(chunk_size=300, executor=cf.ThreadPoolExecutor(2)))
    c = simulate_noisy_gd(np.zeros((1, 1)), steps=3, step_size=0.1, sigma=1.0, trials=1000, seed=1,
                          execution=Execution(chunk_size=400))
    assert np.array_equal(a, b) and a.shape == (1000, 1)
    assert not np.array_equal(a, c)  # a different layout is a different (equally valid) stream


def test_seed_sequence_seed_is_not_consumed():
    """The same SeedSequence object gives the same audit twice (spawning works on a copy)."""
    ss = np.random.SeedSequence(42)
    a = audit_mechanism(GAUSS, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=500, seed=ss)
    b = audit_mechanism(GAUSS, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=500, seed=ss)
    assert dumps(a) == dumps(b) and ss.n_children_spawned == 0
    assert dumps(a) == dumps(audit_mechanism(GAUSS, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=500, seed=42))


@given(trials=st.integers(1, 3000), chunk=st.integers(1, 1200), seed=st.integers(0, 2**32))
def test_chunk_i_uses_spawn_child_i_in_order(trials, chunk, seed):
    """Property: the merged result is fn(size_i, child_i) concatenated in chunk order, for any layout."""
    sizes = chunk_sizes(trials, chunk)
    assert sum(sizes) == trials and all(0 < s <= chunk for s in sizes)
    with cf.ThreadPoolExecutor(3) as ex:
        got = concat_chunks(run_chunks(normal_chunk, trials, seed, chunk, executor=ex), trials)
    children = np.random.SeedSequence(seed).spawn(len(sizes))
    expected = np.concatenate([normal_chunk(s, c) for s, c in zip(sizes, children)])
    assert np.array_equal(got, expected)


# ------------------------------------------------------------------ failures are reported, not dropped
def _assert_reports_last_chunk(exc_info, attempts):
    e = exc_info.value
    assert (e.chunk, e.start, e.stop, e.trials, e.attempts) == (2, 2000, 2500, 2500, attempts)
    assert "chunk 2" in str(e) and "trials 2000-2499 of 2500" in str(e) and "worker exploded" in str(e)
    assert isinstance(e.__cause__, RuntimeError) and "worker exploded" in str(e.__cause__)


def test_failing_chunk_is_reported_in_process():
    with pytest.raises(ChunkError) as info:
        run_chunks(fails_on_last_chunk, 2500, 0, 1000)
    _assert_reports_last_chunk(info, DEFAULT_RETRIES + 1)
    with pytest.raises(ChunkError) as info:
        run_chunks(fails_on_last_chunk, 2500, 0, 1000, retries=0)
    _assert_reports_last_chunk(info, 1)


def test_failing_chunk_is_reported_on_every_executor(executor):
    with pytest.raises(ChunkError) as info:
        run_chunks(fails_on_last_chunk, 2500, 0, 1000, executor=executor, retries=1)
    _assert_reports_last_chunk(info, 2)


def test_failing_sampler_fails_the_audit_with_its_chunk(pool2):
    with pytest.raises(ChunkError, match="sampler crashed") as info:
        audit_mechanism(raising_sampler, 0.0, 1.0, epsilon=1.0, trials=1000,
                        execution=Execution(chunk_size=100, executor=pool2))
    assert info.value.job_name.startswith("selection outputs") and info.value.stop - info.value.start == 100


def test_deterministic_errors_are_not_retried_and_stay_value_errors():
    fn = Counter(value_error_chunk)
    with pytest.raises(ValueError, match="bad input inside the chunk") as info:
        run_chunks(fn, 100, 0, 10, retries=5)
    assert isinstance(info.value, ChunkError) and info.value.attempts == 1 and fn.calls == 1
    assert isinstance(info.value.__cause__, ValueError)


def test_wrong_trial_count_is_an_error():
    with pytest.raises(ChunkError, match="returned 9 trials instead of 10"):
        run_chunks(short_chunk, 30, 0, 10)
    with pytest.raises(RuntimeError, match="expected 5"):
        check_merged(np.zeros(4), 5)
    with pytest.raises(RuntimeError, match="expected 5"):
        concat_chunks([np.zeros(2), np.zeros(2)], 5)


def test_transient_failure_is_retried_in_process(tmp_path):
    fn = Counter(Flaky(tmp_path))
    got = concat_chunks(run_chunks(fn, 2500, 4, 1000), 2500)
    assert fn.calls == 6  # every chunk failed once and was rerun with the same seed
    assert np.array_equal(got, concat_chunks(run_chunks(normal_chunk, 2500, 4, 1000)))


def test_transient_failure_is_retried_on_every_executor(tmp_path, executor):
    got = concat_chunks(run_chunks(Flaky(tmp_path), 2500, 4, 1000, executor=executor), 2500)
    assert np.array_equal(got, concat_chunks(run_chunks(normal_chunk, 2500, 4, 1000)))
    assert len(os.listdir(tmp_path)) == 3


def test_lost_worker_process_is_replaced_and_its_chunk_rerun(tmp_path):
    pool = ProcessPool(2)
    try:
        got = concat_chunks(run_chunks(Flaky(tmp_path, hard=True), 2500, 4, 1000, executor=pool), 2500)
    finally:
        pool.shutdown()
    assert pool.restarts >= 1
    assert np.array_equal(got, concat_chunks(run_chunks(normal_chunk, 2500, 4, 1000)))


def kills_on_last_chunk(size, seed_seq):
    if size == 500:
        os._exit(3)
    return normal_chunk(size, seed_seq)


def test_a_chunk_that_always_kills_its_worker_is_the_one_reported():
    """Chunks lost with the pool are rerun alone; only the culprit is charged and reported."""
    pool = ProcessPool(2)
    try:
        with pytest.raises(ChunkError) as info:
            run_chunks(kills_on_last_chunk, 2500, 0, 1000, executor=pool, retries=0)
    finally:
        pool.shutdown()
    e = info.value
    assert (e.chunk, e.start, e.stop, e.attempts) == (2, 2000, 2500, 1)
    assert isinstance(e.__cause__, cf.BrokenExecutor)


def test_lost_worker_in_a_user_process_pool_is_reported(tmp_path):
    with cf.ProcessPoolExecutor(2) as ex:
        with pytest.raises(ChunkError) as info:
            run_chunks(Flaky(tmp_path, hard=True), 2500, 4, 1000, executor=ex)
    assert isinstance(info.value.__cause__, cf.BrokenExecutor)


# ------------------------------------------------------------------ pickling
def test_process_pools_need_picklable_samplers():
    # a standard-pickle pool (a ProcessPoolExecutor of the caller's) cannot take lambdas; workers=N
    # (loky, cloudpickle) can: tests/core/test_runner_pools.py
    with cf.ProcessPoolExecutor(2) as ex:
        with pytest.raises(ValueError, match="process pool"):
            audit_mechanism(lambda x, rng, size: rng.normal(x, 1.0, size), 0.0, 1.0, epsilon=1.0, trials=200,
                            execution=Execution(executor=ex))
        with pytest.raises(ValueError, match="statistic cannot be sent"):
            audit_mechanism(GAUSS, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=200, execution=Execution(executor=ex),
                            statistic=lambda o: o[:, 0])
    # everything dpaudit sends itself pickles (statistics are module-level classes)
    from dpaudit.audit.attacks import statistics as attacks

    two, one = np.array([[0.3, -1.0], [2.0, 0.5]]), np.array([[0.3], [2.0]])
    for stat, o in ((attacks.projection_statistic([1.0, 2.0]), two),
                    (attacks.default_statistic(np.zeros(3), np.ones(3)), one),
                    (attacks.default_statistic(np.zeros((3, 2)), np.ones((3, 2))), two),
                    (attacks.loss_statistic([1.0, 0.0], 1.0, "hinge"), two),
                    (attacks.gaussian_lr_statistic([0.0], [1.0], 1.0, 2.0), one),
                    (attacks.laplace_lr_statistic([0.0], [1.0], 1.0), one)):
        clone = pickle.loads(pickle.dumps(stat))
        assert np.array_equal(clone(o), stat(o)) and clone.description == stat.description


def test_functions_of_an_interactive_main_are_refused_for_process_pools(monkeypatch):
    """A notebook's (or ``python -c``'s) __main__ cannot be imported by workers: refused up front."""
    import sys
    import types

    from dpaudit.core.runner import check_picklable

    main = types.ModuleType("__main__")  # no __file__, like an interactive session
    exec("def sampler(x, rng, size):\n    return rng.normal(x, 1.0, size)\n", main.__dict__)
    monkeypatch.setitem(sys.modules, "__main__", main)
    with pytest.raises(ValueError, match="interactive session"):
        check_picklable(ProcessPool(2, context="spawn"), main.sampler, "sampler")  # a standard-pickle pool
    check_picklable(InProcessExecutor(), main.sampler, "sampler")  # only process pools care
    check_picklable(ProcessPool(2, context="spawn"), GAUSS, "sampler")
    check_picklable(ProcessPool(2), main.sampler, "sampler")  # dpaudit's own pool (loky, cloudpickle) takes it


def test_dask_accepts_closures(dask_executor):
    """cloudpickle (Dask) sends lambdas and closures; the answer is still the in-process one."""
    scale = 1.0

    def sampler(x, rng, size):
        return rng.laplace(x, scale, size)

    kw = dict(epsilon=1.0, trials=1000, seed=2, statistic=lambda o: o[:, 0])
    here = Execution(chunk_size=200)
    a = audit_mechanism(sampler, 0.0, 1.0, execution=here, **kw)
    on_dask = Execution(executor=dask_executor, chunk_size=200)
    assert dumps(a) == dumps(audit_mechanism(sampler, 0.0, 1.0, execution=on_dask, **kw))
    # a mechanism's bound method travels too: the textbook sampler draws what the closure draws; the
    # float-safe default gives its own in-process answer on Dask as well
    assert dumps(a) == dumps(audit_mechanism(Laplace(1.0).sample_textbook, 0.0, 1.0, execution=on_dask, **kw))
    safe = audit_mechanism(Laplace(1.0).sample, 0.0, 1.0, execution=here, **kw)
    assert dumps(safe) == dumps(audit_mechanism(Laplace(1.0).sample, 0.0, 1.0, execution=on_dask, **kw))


# ------------------------------------------------------------------ inputs, executors, CLI
def test_bad_inputs():
    with pytest.raises(ValueError, match="workers"):
        audit_mechanism(GAUSS, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=100, execution=Execution(workers=0))
    with pytest.raises(ValueError, match="either executor= or workers="):
        audit_mechanism(GAUSS, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=100,
                        execution=Execution(workers=2, executor=InProcessExecutor()))
    with pytest.raises(ValueError, match="retries"):
        run_chunks(normal_chunk, 10, 0, 5, retries=-1)
    with pytest.raises(ValueError, match="executor"):
        run_chunks(normal_chunk, 10, 0, 5, executor=object())
    with pytest.raises(ValueError, match="chunk_size"):
        run_chunks(normal_chunk, 10, 0, 0)
    with pytest.raises(ValueError, match="callable"):
        run_jobs([Job(3, 10, 0)])
    with pytest.raises(ValueError, match="seed"):
        as_seed_sequence(1.5)
    assert run_jobs([]) == []


def test_in_process_executor_and_open_executor():
    ex = InProcessExecutor()
    assert ex.submit(pow, 2, 10).result() == 1024
    assert isinstance(ex.submit(math.log, -1.0).exception(), ValueError)
    ex.shutdown()
    with pytest.raises(RuntimeError):
        ex.submit(pow, 2, 3)
    with open_executor() as a, open_executor(workers=1) as b, open_executor(workers=2) as c:
        assert isinstance(a, InProcessExecutor) and isinstance(b, InProcessExecutor) and isinstance(c, Workers)
    mine = cf.ThreadPoolExecutor(1)
    with open_executor(mine) as d:
        assert d is mine
    assert mine.submit(pow, 3, 2).result() == 9  # a user's executor is not shut down
    mine.shutdown()
    assert [len(s) for s in (spawn(3, 2), spawn(np.random.SeedSequence(3), 5))] == [2, 5]


def test_progress_is_quiet_off_a_terminal(capsys):
    run_chunks(normal_chunk, 5000, 0, 100)
    assert capsys.readouterr().err == ""


@pytest.fixture
def progress_log(monkeypatch):
    """Record every Progress the runner creates (its total, enabled state and updates)."""
    import dpaudit.core.progress as progress

    log = []

    class Recording(progress.Progress):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self.updates = []
            log.append(self)

        def update(self, n=1):
            self.updates.append(n)
            super().update(n)

    monkeypatch.setattr(progress, "Progress", Recording)
    return log


def test_progress_counts_every_trial_once_on_a_pool(progress_log, tmp_path):
    with cf.ThreadPoolExecutor(3) as ex:
        run_jobs([Job(Flaky(tmp_path), 2500, 1), Job(normal_chunk, 700, 2)], chunk_size=300, executor=ex)
    (p,) = progress_log
    assert p.total == 3200 and sum(p.updates) == 3200 and len(p.updates) == 9 + 3  # retried chunks count once


def test_progress_follows_the_terminal_rules_in_the_cli(progress_log, monkeypatch, capsys):
    from dpaudit.cli import main

    monkeypatch.setenv("DPAUDIT_PROGRESS", "1")  # as if on a terminal
    assert main(["renyi", "--steps", "2", "--alpha", "2", "--trials", "500", "--workers", "2"]) == 0
    assert progress_log and all(p.enabled for p in progress_log)
    progress_log.clear()
    assert main(["renyi", "--steps", "2", "--alpha", "2", "--trials", "500", "--json"]) == 0
    assert progress_log and not any(p.enabled for p in progress_log)  # --json: quiet
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["trials"] == 500
    progress_log.clear()
    assert main(["audit", "output-perturbation", "--trials", "300", "--json"]) in (0, 1)
    assert progress_log and not any(p.enabled for p in progress_log)
    import dpaudit.core.progress as progress

    assert progress.progress_enabled()  # the process-wide default is left as it was
    assert json.loads(capsys.readouterr().out)["trials"] == 300


def test_cli_workers_flag_gives_the_same_json(capsys):
    from dpaudit.cli import main

    args = ["audit", "output-perturbation", "--trials", "2000", "--seed", "4", "--json"]
    assert main(args) in (0, 1)
    one = capsys.readouterr()
    assert main(args + ["--workers", "2"]) in (0, 1)
    two = capsys.readouterr()
    assert one.out == two.out and json.loads(one.out)["trials"] == 2000
    assert one.err == two.err == ""  # --json: nothing on stderr (no progress line)
    with pytest.raises(SystemExit) as e:
        main(["renyi", "--workers", "0"])
    assert e.value.code == 2
    assert main(["audit", "output-perturbation", "--workers", "2", "--scheduler", "tcp://x:1"]) == 2


# ------------------------------------------------------------------ GDP epsilon through the conversions
@pytest.mark.parametrize("mu", [1e-5, 1e-3, 0.1, 1.0, 5.0, 30.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 1e-3, 0.3])
def test_gdp_epsilon_of_is_below_the_exact_root(mu, delta):
    """gdp_epsilon_of (via conversions.gdp_epsilon) errs low, within 1e-11 (1 + eps) of a 50-digit root."""
    eps = gdp_epsilon_of(mu, delta)
    with mp.workdps(50):
        m = mp.mpf(mu)

        def d(e):
            return mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)

        if d(mp.mpf(0)) <= delta:
            assert eps == 0.0
            return
        root = mp.findroot(lambda e: mp.log(d(e)) - mp.log(delta), max(eps, 1e-300))
        assert d(root) == pytest.approx(delta, rel=1e-30)
    assert eps <= root and root - eps <= 1e-11 * (1.0 + float(root))
    assert gdp_delta_of(mu, eps) >= delta  # delta at a lower epsilon is not below the target
