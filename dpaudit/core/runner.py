"""Chunked, seed-deterministic execution of audit trials on any ``concurrent.futures`` executor.

Layout (fixed before anything runs, independent of where the chunks run):

* a job of ``trials`` trials is split into chunks of ``chunk_size`` trials (the last one holds the
  remainder; :func:`chunk_sizes`). ``chunk_size`` is a constant of the caller
  (:data:`DEFAULT_CHUNK_SIZE`), never derived from the number of workers;
* chunk ``i`` draws only from ``numpy.random.SeedSequence(seed).spawn(n_chunks)[i]`` (numpy's
  spawn tree: children are statistically independent streams, O'Neill 2015 / numpy NEP 19);
* results are returned in chunk order whatever order the chunks finish in, and callers merge them
  exactly (concatenated scores, summed counts) -- never by averaging per-chunk estimates.

Hence the merged result depends only on ``seed``, ``trials`` and ``chunk_size``: not on the number
of workers, the completion order or the executor (the public interface: "the same seed gives the same
result whatever the number of workers").

Executors (``executor=`` / ``workers=``):

* default: :class:`InProcessExecutor`, the chunks run one after the other in this process (without futures);
* ``workers=N`` (N >= 2): :class:`Workers`, this process and the shared pool of N - 1 processes
  (:func:`shared_pool`): this process runs chunks itself while a feeder thread keeps the pool busy; a chunk stuck in
  the pool (or waiting for it to start) is run here too when nothing else is left, the first result counting. The
  pool is started only when a call's remaining work is estimated above ``2 * POOL_START_SECONDS`` (else in the
  background, for the next call) and kept warm between calls. It runs on loky (a maintained ``concurrent.futures``
  process pool that serialises with cloudpickle and starts workers without re-running the caller's script), so
  samplers and statistics may be lambdas or closures, defined in a notebook or in a script without an
  ``if __name__ == "__main__":`` guard. It is restarted when a pool process dies (``BrokenProcessPool``; loky's
  ``TerminatedWorkerError`` is one), and the lost chunks are run again (here or there);
* any ``concurrent.futures.Executor`` passed as ``executor=`` -- a ``ThreadPoolExecutor``, a
  ``ProcessPoolExecutor``, a loky executor, or a Dask cluster's
  ``distributed.Client(...).get_executor()``.

What is sent to a pool must serialise with that pool's pickler: cloudpickle for dpaudit's own
pool, loky and Dask (lambdas and closures are fine), the standard :mod:`pickle` for a
``concurrent.futures.ProcessPoolExecutor`` you pass yourself (module-level functions only, and
the script needs a main guard). :func:`check_picklable` tests this before any chunk runs.

Failures: a chunk that raises is resubmitted up to ``retries`` times (same seed, so a transient
failure -- a lost worker, a connection error -- leaves no trace in the result); errors that a rerun
with the same seed would raise again (``ValueError``, ``TypeError``, ... see :data:`NOT_RETRIED`)
are reported at once. When a process pool passed as ``executor=`` breaks (a worker process died), every chunk in
flight fails without being the culprit: those chunks are rerun one at a time on a restarted pool, and
only a chunk that breaks the pool while running alone is charged an attempt. With :class:`Workers` (one chunk per
pool process) the lost chunk is charged an attempt and queued again, and may then run in this process: a chunk that
kills its process kills the caller too when the caller runs it. A chunk that still fails raises :class:`ChunkError` naming the job, the
chunk index and its trial range, chained (``__cause__``) to the worker's exception; the other
chunks are cancelled. A chunk that returns a different number of trials than it was given is a
:class:`ChunkError` too, and the merged trial count is checked, so an audit never returns a
result computed from fewer trials than it says.
"""

from __future__ import annotations

import atexit
import collections
import concurrent.futures as cf
import contextlib
import multiprocessing
import os
import pickle
import sys
import threading
from dataclasses import dataclass
from time import perf_counter as _now

import numpy as np

from dpaudit.core import progress as progress_bar
from dpaudit.core.seeds import as_seed_sequence, child, copy_seed
from dpaudit.core.threads import one_blas_thread
from dpaudit.core.validation import check_count

__all__ = [
    "chunk_sizes", "run_chunks", "run_jobs", "Job", "Counts", "concat_chunks", "in_flight",
    "check_merged", "check_picklable", "ChunkError", "ChunkValueError", "ChunkTypeError", "InProcessExecutor", "ProcessPool",
    "Workers", "POOL_START_SECONDS",
    "open_executor", "dask_executor", "shared_pool", "shutdown_shared_pools",
    "DEFAULT_CHUNK_SIZE", "DEFAULT_RETRIES", "NOT_RETRIED",
    "available_memory", "audit_memory", "check_memory", "output_bytes", "format_bytes", "BASE_BYTES", "KEPT_COPIES", "CHUNK_COPIES",
]

#: default number of trials per chunk (fixed: changing it changes the random streams)
DEFAULT_CHUNK_SIZE = 10_000
#: default number of resubmissions of a failed chunk
DEFAULT_RETRIES = 2
#: exception types reported without retry: a rerun of a chunk with the same seed raises them again
NOT_RETRIED = (ValueError, TypeError, AttributeError, LookupError, ArithmeticError, AssertionError,
               NotImplementedError, pickle.PickleError)


#: the interpreter with numpy and scipy loaded (resident bytes before any trial)
BASE_BYTES = 150 * 2**20
#: working copies of what an audit keeps (merged chunks, the sorted and pooled copies of the threshold plan)
KEPT_COPIES = 4
#: working copies of one chunk where it runs (the raw outputs, their batch, scores or features)
CHUNK_COPIES = 3


def available_memory() -> int | None:
    """Bytes a new allocation can use on this machine: ``MemAvailable`` of ``/proc/meminfo`` (Linux), else the free
    physical pages (``os.sysconf``), else the physical memory; ``None`` when none of them is known."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    for pages in ("SC_AVPHYS_PAGES", "SC_PHYS_PAGES"):
        try:
            return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf(pages))
        except (ValueError, OSError, AttributeError):
            continue
    return None


def output_bytes(outputs, size: int) -> float:
    """Bytes per run of ``size`` runs' ``outputs`` (an array, or a sequence of objects: 8 bytes a reference plus the
    average size of the first objects): what a probe call tells about every later chunk."""
    arr = outputs if isinstance(outputs, np.ndarray) else None
    if arr is None:
        try:
            arr = np.asarray(outputs)
        except Exception:  # noqa: BLE001 - ragged or exotic outputs: a generous guess per run
            return 1024.0
    per = arr.nbytes / max(int(size), 1)
    if arr.dtype == object and arr.size:
        first = arr.ravel()[:64]
        per += sum(sys.getsizeof(o) for o in first) / first.size * (arr.size / max(int(size), 1))
    return float(per)


def audit_memory(*, kept_runs: int, bytes_per_kept: float, chunk_size: int, bytes_per_run: float,
                 slots: int = 1, grid: int = 0) -> int:
    """Peak bytes of an audit that keeps ``kept_runs`` runs (selection scores or outputs, ``bytes_per_kept`` each,
    times :data:`KEPT_COPIES` working copies), holds one chunk of ``chunk_size`` runs (``bytes_per_run`` each, times
    :data:`CHUNK_COPIES`) in each of ``slots`` places where chunks run (this process, or each worker), and counts
    at ``grid`` thresholds, on top of :data:`BASE_BYTES` (per worker process, too). The evaluation runs are not kept
    (their counts are summed as they arrive), so the estimate does not grow with them."""
    slots = max(int(slots), 1)
    return int(BASE_BYTES * (slots + (slots > 1)) + KEPT_COPIES * kept_runs * bytes_per_kept
               + CHUNK_COPIES * slots * chunk_size * bytes_per_run + 16 * (grid + 2**16))


def check_memory(need: int, *, trials: int, available: int | None = None, argument: str = "trials") -> None:
    """Refuse, before any trial, an audit whose ``need`` (:func:`audit_memory`, this interpreter's
    :data:`BASE_BYTES` included) exceeds by more than that what is available (:func:`available_memory`
    unless ``available`` is given; nothing is refused when it is unknown): a ``ValueError`` naming ``argument``
    (``trials``), with the estimate, what is available and the largest count that would fit."""
    mem = available_memory() if available is None else int(available)
    new = need - BASE_BYTES  # this interpreter is already resident
    if mem is None or new <= mem:
        return
    fit = int(trials * mem / new)
    raise ValueError(f"{argument}={trials:,} needs about {format_bytes(need)} of memory, more than the "
                     f"{format_bytes(mem)} available on this machine; use at most about {fit:,} {argument}, "
                     "fewer or smaller outputs per run, a smaller chunk_size, or a cluster with more memory")


def format_bytes(n: float) -> str:
    """``n`` bytes in kB, MB, GB or TB (3 significant digits)."""
    for unit, size in (("TB", 2**40), ("GB", 2**30), ("MB", 2**20)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n / 2**10:.3g} kB"


def chunk_sizes(trials: int, chunk_size: int) -> list[int]:
    """Sizes of the chunks: ``chunk_size`` each, the last one holding the remainder."""
    trials = check_count("trials", trials, minimum=1)
    chunk_size = check_count("chunk_size", chunk_size, minimum=1)
    full, rem = divmod(trials, chunk_size)
    return [chunk_size] * full + ([rem] if rem else [])


# ------------------------------------------------------------------------------------- executors
class InProcessExecutor(cf.Executor):
    """Runs each submitted call at once, in the calling thread (the default executor).

    ``submit`` returns an already finished ``Future`` holding the result or the exception.
    """

    def __init__(self):
        self._shutdown = False

    def submit(self, fn, /, *args, **kwargs):
        if self._shutdown:
            raise RuntimeError("cannot submit to an InProcessExecutor after shutdown")
        fut: cf.Future = cf.Future()
        fut.set_running_or_notify_cancel()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - delivered through the future, like any executor
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            fut.set_exception(exc)
        return fut

    def shutdown(self, wait=True, *, cancel_futures=False):
        self._shutdown = True


def _mp_context(context):
    if context is not None:
        return multiprocessing.get_context(context) if isinstance(context, str) else context
    # forkserver: workers are forked from a clean server process, not from this (possibly
    # multi-threaded) one; spawn where forkserver does not exist (Windows).
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _loky():
    """loky's ProcessPoolExecutor, or None when loky is not installed."""
    try:
        from loky import ProcessPoolExecutor
    except ImportError:
        return None
    return ProcessPoolExecutor


class ProcessPool(cf.Executor):
    """A process pool of ``workers`` processes that can be restarted.

    By default it is a loky pool (cloudpickle: lambdas, closures and functions of a script without
    a main guard or of a notebook are accepted; workers never re-run the caller's script). With an
    explicit ``context`` (a multiprocessing start method or context), or where loky cannot be imported
    (it is a core dependency: only a broken install lacks it), it is a standard ``ProcessPoolExecutor``
    ("forkserver" where available, else "spawn"), which pickles with the standard :mod:`pickle`. A worker process that dies (killed,
    out of memory, ``os._exit``) breaks a pool for good; :func:`run_jobs` then calls
    :meth:`restart` and resubmits the lost chunks. The pool starts lazily.
    """

    def __init__(self, workers: int, context=None):
        self.workers = check_count("workers", workers, minimum=1)
        self._loky = _loky() if context is None else None
        self._ctx = None if self._loky is not None else _mp_context(context)
        self._pool: cf.Executor | None = None
        self._lock = threading.Lock()
        self.restarts = 0

    @property
    def uses_cloudpickle(self) -> bool:
        """True when the pool serialises with cloudpickle (loky), False for the standard pickle."""
        return self._loky is not None

    def _current(self):
        with self._lock:
            if self._pool is None:
                if self._loky is not None:
                    self._pool = self._loky(max_workers=self.workers)
                else:
                    self._pool = cf.ProcessPoolExecutor(max_workers=self.workers, mp_context=self._ctx)
            return self._pool

    def submit(self, fn, /, *args, **kwargs):
        return self._current().submit(fn, *args, **kwargs)

    def _stop(self, pool, wait: bool, cancel: bool) -> None:
        if pool is None:
            return
        if self._loky is not None:  # loky has no cancel_futures; run_jobs cancels its own pending futures
            pool.shutdown(wait=wait, kill_workers=cancel)
        else:
            pool.shutdown(wait=wait, cancel_futures=cancel)

    def restart(self) -> None:
        """Drop the current (broken) pool; the next submission starts a fresh one."""
        with self._lock:
            old, self._pool = self._pool, None
            self.restarts += 1
        self._stop(old, wait=False, cancel=True)

    def shutdown(self, wait=True, *, cancel_futures=False):
        with self._lock:
            old, self._pool = self._pool, None
        self._stop(old, wait=wait, cancel=cancel_futures)


#: seconds a pool start costs before its first result (processes started, the chunk function's modules imported:
#: about a second on this 2-core machine, docs/scaling.md): ``workers=N`` starts its pool during a call only when
#: the call's remaining work is estimated above twice this, and otherwise starts it in the background for later calls
POOL_START_SECONDS = 1.0
#: a chunk out in the pool for this many times the expected time of a chunk of its size (measured on the caller's
#: own chunks), and at least STUCK_MIN_SECONDS, is run by the caller too once it has nothing else to do
STUCK_FACTOR = 3.0
STUCK_MIN_SECONDS = 0.25


def _warm(fn) -> None:
    """A pool's warm-up task: receiving ``fn`` imports the modules its chunks need."""
    return None


class Workers(cf.Executor):
    """``workers=N``: this process and a pool of N - 1 processes (a :class:`ProcessPool`) run the chunks together.

    :func:`run_jobs` hands the chunks out one at a time, to this process (which runs them itself, one after the other)
    and to the pool (kept busy by a feeder thread, one chunk per pool process). A chunk still out in the pool when
    this process has nothing else to do, and out for longer than :data:`STUCK_FACTOR` times its expected time, is run
    here too; the first result counts (both are the same: a chunk's random stream is its own). The pool outlives the
    call (:func:`shared_pool` keeps one per N). It is started lazily: with ``defer=True`` (the default), a call runs
    in this process until its remaining work is estimated above ``2 * POOL_START_SECONDS`` and starts the pool only
    then; a call too short for that starts it in the background for the next call.

    Trade-offs: a chunk that kills its process (``os._exit``, a segfault) kills the caller too when the caller runs
    it (an explicit :class:`ProcessPool` as ``executor=`` isolates every chunk); memory estimates count one process
    more than run chunks (:func:`audit_memory` with ``slots=N``); and a short script that started the pool in the
    background waits for its processes to start (and be stopped) at exit.
    """

    def __init__(self, workers: int, *, defer: bool = True, context=None):
        self.workers = check_count("workers", workers, minimum=2)
        self.pool = ProcessPool(self.workers - 1, context=context)
        self.defer = bool(defer)
        self._lock = threading.Lock()
        self._started = False

    @property
    def uses_cloudpickle(self) -> bool:
        return self.pool.uses_cloudpickle

    @property
    def restarts(self) -> int:
        return self.pool.restarts

    @property
    def started(self) -> bool:
        """True once the pool was asked to start (its processes may still be starting)."""
        return self._started

    def start(self, fn=None) -> None:
        """Start the pool (at once, without waiting for it): each process receives ``fn`` (imports its modules)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        try:
            for _ in range(self.workers - 1):
                self.pool.submit(_warm, fn)
        except cf.BrokenExecutor:
            self.restart()

    def submit(self, fn, /, *args, **kwargs):
        """Run ``fn(*args, **kwargs)`` in the pool (as a plain executor; :func:`run_jobs` also runs chunks here)."""
        self._started = True
        return self.pool.submit(fn, *args, **kwargs)

    def restart(self) -> None:
        """Drop the pool (a broken one); the next use starts a fresh one."""
        with self._lock:
            self._started = False
        self.pool.restart()

    def shutdown(self, wait=True, *, cancel_futures=False):
        with self._lock:
            self._started = False
        self.pool.shutdown(wait=wait, cancel_futures=cancel_futures)


#: dpaudit's own pools, one per number of workers, kept between calls (their workers stay warm)
_SHARED_POOLS: dict = {}
_SHARED_LOCK = threading.Lock()


def shared_pool(workers: int) -> Workers:
    """The :class:`Workers` (this process and a pool of ``workers - 1`` processes) that ``workers=N`` audits share:
    its pool is started when a call needs it (or in the background after a short call) and kept for the next call
    (a pool start costs each process its imports, about a second; a warm pool costs nothing), shut down when the
    interpreter exits, and restarted when a process dies. Results never depend on it."""
    workers = check_count("workers", workers, minimum=2)
    with _SHARED_LOCK:
        pool = _SHARED_POOLS.get(workers)
        if pool is None:
            pool = _SHARED_POOLS[workers] = Workers(workers)
        return pool


def shutdown_shared_pools() -> None:
    """Shut down the shared pools (they are also shut down at interpreter exit)."""
    with _SHARED_LOCK:
        pools = list(_SHARED_POOLS.values())
        _SHARED_POOLS.clear()
    for pool in pools:
        pool.shutdown(wait=True, cancel_futures=True)


atexit.register(shutdown_shared_pools)


@contextlib.contextmanager
def open_executor(executor=None, workers=None):
    """The executor to run chunks on, as a context manager.

    ``executor`` given: yielded as is (never shut down here). ``workers`` None or 1: an
    :class:`InProcessExecutor`. ``workers >= 2``: the :func:`shared_pool` of that size (:class:`Workers`: this
    process and a pool kept warm for the next call; a pool that broke is restarted). Use it to share one pool
    between several :func:`run_jobs` calls.
    """
    if executor is not None and workers is not None:
        raise ValueError("give either executor= or workers=, not both")
    if executor is not None:
        if not callable(getattr(executor, "submit", None)):
            raise ValueError("executor must be a concurrent.futures.Executor (an object with submit(fn, *args))")
        yield executor
        return
    workers = 1 if workers is None else check_count("workers", workers, minimum=1)
    if workers == 1:
        yield InProcessExecutor()
        return
    pool = shared_pool(workers)
    try:
        yield pool
    except Exception:
        raise  # a chunk failed: what it left in the pool is cancelled or ends by itself; the pool stays warm
    except BaseException:
        pool.restart()  # an interrupted call may leave chunks running: the next call gets a fresh pool
        raise


def _is_process_pool(executor) -> bool:
    return _pickler(executor) is not None


def _pickler(executor):
    """How ``executor`` serialises what it is sent: "cloudpickle", "pickle", or None (in process, threads,
    or an executor that does its own thing, like Dask)."""
    if isinstance(executor, (ProcessPool, Workers)):
        return "cloudpickle" if executor.uses_cloudpickle else "pickle"
    if isinstance(executor, cf.ProcessPoolExecutor):
        return "pickle"
    if type(executor).__module__.startswith("loky"):
        return "cloudpickle"
    return None


def check_picklable(executor, obj, what: str) -> None:
    """Raise ``ValueError`` (naming ``what``) if ``executor`` is a process pool and ``obj`` cannot be sent to it."""
    pickler = _pickler(executor)
    if pickler is not None:
        _check_picklable(obj, what, pickler)


def _check_picklable(fn, what: str, pickler: str = "pickle") -> None:
    if pickler == "cloudpickle":
        import cloudpickle

        try:
            cloudpickle.dumps(fn)
        except Exception as exc:  # noqa: BLE001 - any serialisation failure has the same remedy
            raise ValueError(f"{what} cannot be sent to a process pool (workers=N): {exc}. It (or something it "
                             "refers to) cannot be serialised, e.g. an open file, a lock or a generator; run "
                             "in-process (workers=1) or refer to such objects by name") from exc
        return
    try:
        data = pickle.dumps(fn)
    except Exception as exc:  # noqa: BLE001 - any pickling failure has the same remedy
        raise ValueError(
            f"{what} cannot be sent to this process pool (it pickles with the standard pickle): {exc}. Use "
            "module-level functions for the sampler and the statistic (no lambdas or closures), or workers=N "
            "(dpaudit's own pool: loky with cloudpickle), or run in-process (workers=1)") from exc
    main = sys.modules.get("__main__")
    if b"__main__" in data and getattr(main, "__file__", None) is None:
        # pickled by reference to an interactive __main__ (notebook, python -c): workers cannot
        # import it and would die unpickling it
        raise ValueError(
            f"{what} cannot be sent to this process pool (standard pickle): it uses a function or class defined "
            "in an interactive session, which worker processes cannot import. Use workers=N (dpaudit's own pool, "
            "loky with cloudpickle), move it to a module, or run in-process (workers=1)")


# ------------------------------------------------------------------------------------ errors
class ChunkError(RuntimeError):
    """A chunk failed (after its retries) or returned the wrong number of trials.

    Attributes: ``job`` (index of the job), ``job_name``, ``chunk`` (index of the chunk in its
    job), ``start``, ``stop`` (its trials are ``start .. stop - 1`` of the job's ``trials``),
    ``attempts``. The worker's exception is ``__cause__``.
    """

    def __init__(self, message: str, *, job: int, job_name: str, chunk: int, start: int, stop: int,
                 trials: int, attempts: int):
        super().__init__(message)
        self.job, self.job_name, self.chunk = job, job_name, chunk
        self.start, self.stop, self.trials, self.attempts = start, stop, trials, attempts


class ChunkValueError(ChunkError, ValueError):
    """:class:`ChunkError` caused by a ``ValueError`` (still caught by ``except ValueError``)."""


class ChunkTypeError(ChunkError, TypeError):
    """:class:`ChunkError` caused by a ``TypeError``."""


def _chunk_error(cause, *, reason: str, **where) -> ChunkError:
    cls = ChunkValueError if isinstance(cause, ValueError) else (
        ChunkTypeError if isinstance(cause, TypeError) else ChunkError)
    name = f" of {where['job_name']}" if where["job_name"] else (f" of job {where['job']}" if where["job"] else "")
    n = where["attempts"]
    msg = (f"chunk {where['chunk']}{name} (trials {where['start']}-{where['stop'] - 1} of {where['trials']}) "
           f"{reason} after {n} attempt{'s' if n != 1 else ''}")
    if cause is not None:
        msg += f": {type(cause).__name__}: {cause}"
    if isinstance(cause, cf.BrokenExecutor):
        msg += (" (its worker process died: killed, out of memory, or unable to import a function it was "
                "sent; the worker's traceback, if any, is on stderr)")
    return cls(msg, **where)


# ------------------------------------------------------------------------------------ running
@dataclass(frozen=True)
class Job:
    """``trials`` trials of ``fn(size, seed_sequence)`` seeded from ``seed``; ``name`` for messages.

    ``fold=True``: the chunk results are :class:`Counts` (or any value whose ``+`` is exact and order-free and
    which states its ``trials``) and are summed as they arrive, in any order: :func:`run_jobs` then returns the one
    total for the job and holds only it, whatever the number of chunks."""

    fn: object
    trials: int
    seed: object = None
    name: str = ""
    fold: bool = False


@dataclass(frozen=True)
class Counts:
    """Integer counts computed from ``trials`` trials of a chunk: exact to merge (sum) in any order, so an audit
    gets the same total whatever the chunking, the number of workers or the executor. ``counts`` is an int64
    array (its meaning is the caller's, e.g. ``#{score <= t}`` at fixed thresholds); ``extra`` holds further
    mergeable arrays by name (each summed)."""

    trials: int
    counts: np.ndarray
    extra: tuple = ()

    def __add__(self, other: Counts) -> Counts:
        if not isinstance(other, Counts):
            return NotImplemented
        if self.counts.shape != other.counts.shape or len(self.extra) != len(other.extra):
            raise ValueError("cannot add Counts of different shapes")
        return Counts(self.trials + other.trials, self.counts + other.counts,
                      tuple(a + b for a, b in zip(self.extra, other.extra)))


def _call_chunk(fn, size, seed_seq, attempt):
    """What executors run: ``fn(size, seed_seq)``. ``attempt`` only makes the call of a retry
    distinct for executors that cache calls by their arguments (a Dask client with
    ``pure=True``, its default, would otherwise hand back the failed task). The chunk runs with one BLAS
    thread wherever it runs (:mod:`dpaudit.core.threads`)."""
    with one_blas_thread():
        return fn(size, seed_seq)


def _default_count(result):
    """Trials held by a chunk result: ``Counts.trials``, the first axis of an array, ``None`` (unchecked)
    otherwise."""
    if isinstance(result, Counts):
        return int(result.trials)
    shape = getattr(result, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    return None


def run_jobs(jobs, *, chunk_size: int = DEFAULT_CHUNK_SIZE, executor=None, workers=None,
             retries: int = DEFAULT_RETRIES, label: str = "audit") -> list[list]:
    """Run several jobs' chunks concurrently; return, per job, its chunk results in chunk order (or, for a job
    with ``fold=True``, a one-element list holding their sum).

    Parameters
    ----------
    jobs : sequence of :class:`Job` or ``(fn, trials, seed)`` tuples
        ``fn(size, seed_sequence)`` must be a pure function of its arguments (picklable for
        process pools). Job ``j`` is split by :func:`chunk_sizes` and its chunk ``i`` gets child
        ``i`` of ``SeedSequence(seed_j)`` (:func:`dpaudit.core.seeds.child`, the same stream as
        ``spawn(n_chunks)[i]``; the seeds are made when their chunk is submitted, so a job of millions of
        chunks holds none of them in advance).
    chunk_size : int
        Trials per chunk: part of the random-stream layout (keep it fixed to reproduce a result).
    executor : concurrent.futures.Executor, optional
        Where chunks run (see the module docstring). Mutually exclusive with ``workers``.
    workers : int, optional
        ``N >= 2``: this process and the shared pool of N - 1 processes (:class:`Workers`); 1 or None: in this
        process.
    retries : int
        Resubmissions of a failing chunk (exceptions in :data:`NOT_RETRIED` are not retried).
    label : str
        Prefix of the progress line (stderr, only on a terminal; :mod:`dpaudit.core.progress`).

    At most :func:`in_flight` chunks are submitted at a time to an executor (a few per worker), so a cluster is never
    handed the whole job at once and the client holds O(workers) pending results; :class:`Workers` keeps one chunk
    per pool process.

    Raises
    ------
    ChunkError
        A chunk failed after its retries, or returned a different number of trials.
    """

    jobs = [j if isinstance(j, Job) else Job(*j) for j in jobs]
    if not jobs:
        return []
    retries = check_count("retries", retries)
    chunk_size = check_count("chunk_size", chunk_size, minimum=1)
    layout = _Layout(jobs, chunk_size)
    with open_executor(executor, workers) as ex:
        if _is_process_pool(ex):
            for j, job in enumerate(jobs):
                _check_picklable(job.fn, f"the chunk function of {job.name or f'job {j}'}", _pickler(ex))
        if isinstance(ex, (InProcessExecutor, Workers)):  # chunks run here (and in the pool), without futures
            run: _Schedule = _Hybrid(ex if isinstance(ex, Workers) else None, jobs, layout, retries)
        else:
            run = _Schedule(ex, jobs, layout, retries)
        with progress_bar.Progress(sum(job.trials for job in jobs), label=label) as progress:
            run.until_done(progress)
    return run.merged()


#: chunks in flight per worker of an executor (enough to keep every worker busy between submissions)
IN_FLIGHT_PER_WORKER = 4
#: chunks in flight when an executor does not say how many workers it has
DEFAULT_IN_FLIGHT = 64


def in_flight(executor) -> int:
    """How many chunks :func:`run_jobs` keeps submitted at once on ``executor``: 1 in this process,
    ``IN_FLIGHT_PER_WORKER`` per worker of a pool that says how many it has (a dpaudit or concurrent.futures pool,
    a Dask client's executor), else ``DEFAULT_IN_FLIGHT``."""
    if isinstance(executor, InProcessExecutor):
        return 1
    n = getattr(executor, "workers", None) or getattr(executor, "_max_workers", None)
    client = getattr(executor, "_client", None)
    if n is None and client is not None:
        try:
            n = sum(client.nthreads().values())
        except Exception:  # noqa: BLE001 - a client that cannot say: the default
            n = None
    return max(2, IN_FLIGHT_PER_WORKER * int(n)) if n else DEFAULT_IN_FLIGHT


class _Layout:
    """The chunks of the jobs, fixed before anything runs but made on demand: task ``t`` is chunk ``i`` of job
    ``j`` (jobs in order), trials ``start .. start + size - 1``, seeded by child ``i`` of the job's seed."""

    def __init__(self, jobs, chunk_size: int):
        for j, job in enumerate(jobs):
            if not callable(job.fn):
                raise ValueError(f"the function of job {j} must be callable as fn(size, seed_sequence)")
            check_count("trials", job.trials, minimum=1)
        self.chunk_size = chunk_size
        self.n_chunks = [-(-job.trials // chunk_size) for job in jobs]
        self.first = np.concatenate([[0], np.cumsum(self.n_chunks)]).astype(np.int64)
        self.seeds = [as_seed_sequence(job.seed) for job in jobs]  # fixed once: a None seed is drawn here
        self.trials = [job.trials for job in jobs]

    def __len__(self) -> int:
        return int(self.first[-1])

    def place(self, t: int) -> tuple:
        """``(job, chunk, start, size)`` of task ``t``."""
        j = int(np.searchsorted(self.first, t, side="right")) - 1
        i = int(t - self.first[j])
        start = i * self.chunk_size
        return j, i, start, min(self.chunk_size, self.trials[j] - start)

    def task(self, t: int) -> tuple:
        """``(job, chunk, start, size, seed)`` of task ``t``."""
        j, i, start, size = self.place(t)
        return j, i, start, size, child(self.seeds[j], i)

    def order(self):
        """The tasks in the order :class:`_Hybrid` hands them out: every full chunk, then the remainder chunks
        (the short ones last, so that the last chunks to finish are short)."""
        short = [int(self.first[j + 1]) - 1 for j, n in enumerate(self.trials) if n % self.chunk_size]
        skip = set(short)
        yield from (t for t in range(len(self)) if t not in skip)
        yield from short


class _Schedule:
    """Submission, retries and pool-breakage isolation of the tasks of :func:`run_jobs` on ``ex``."""

    def __init__(self, ex, jobs, layout: _Layout, retries: int):
        self.ex, self.jobs, self.layout, self.retries = ex, jobs, layout, retries
        self.results: list[list] = [[None] if job.fold else [None] * n for job, n in zip(jobs, layout.n_chunks)]
        self.completed = [np.zeros(n, dtype=bool) for n in layout.n_chunks]
        self.done_trials = [0] * len(jobs)
        # in-process: stop at the first failure
        self.window = in_flight(ex)
        self.next_task = 0                      # tasks below it were submitted at least once
        self.queue: collections.deque = collections.deque()  # (task, attempt) to resubmit, before any new task
        self.pending: dict = {}  # future -> (task, attempt, ran alone)
        self.suspects: set = set()  # tasks lost with a broken pool: rerun one at a time

    def where(self, t, attempts) -> dict:
        j, i, start, size, _ = self.layout.task(t)
        return dict(job=j, job_name=self.jobs[j].name, chunk=i, start=start, stop=start + size,
                    trials=self.jobs[j].trials, attempts=attempts)

    def submit(self, t, attempt) -> None:
        j, _, _, size, ss = self.layout.task(t)
        fn = self.jobs[j].fn
        try:
            fut = self.ex.submit(_call_chunk, fn, size, copy_seed(ss), attempt)  # a fresh copy: same stream
        except cf.BrokenExecutor as exc:
            if not callable(getattr(self.ex, "restart", None)):
                raise _chunk_error(exc, reason="could not be submitted", **self.where(t, attempt)) from exc
            self.ex.restart()
            fut = self.ex.submit(_call_chunk, fn, size, copy_seed(ss), attempt)
        self.pending[fut] = (t, attempt, bool(self.suspects))

    def _next(self):
        """The next (task, attempt) to submit: a resubmission first, then the next new task; None when none."""
        if self.queue:
            return self.queue.popleft()
        if self.next_task < len(self.layout):
            self.next_task += 1
            return self.next_task - 1, 1
        return None

    def fill(self) -> None:
        if self.suspects:  # isolation: one suspect at a time, alone, so a crash is charged to its culprit
            if not self.pending:
                k = next(k for k, (t, _) in enumerate(self.queue) if t in self.suspects)
                t, attempt = self.queue[k]
                del self.queue[k]
                self.submit(t, attempt)
            return
        while len(self.pending) < self.window:
            nxt = self._next()
            if nxt is None:
                return
            self.submit(*nxt)

    def until_done(self, progress) -> None:
        try:
            self.fill()
            while self.pending:
                finished, _ = cf.wait(list(self.pending), return_when=cf.FIRST_COMPLETED)
                for fut in sorted(finished, key=lambda f: self.pending[f][0]):
                    self.collect(fut, progress)
                self.fill()
        finally:
            for fut in self.pending:
                fut.cancel()

    def collect(self, fut, progress) -> None:
        """Record a finished chunk, or queue its rerun (or raise when it is out of attempts)."""
        t, attempt, alone = self.pending.pop(fut)
        try:
            res = fut.result()
        except Exception as exc:  # noqa: BLE001 - classified below
            if isinstance(exc, cf.BrokenExecutor) and not alone and t not in self.suspects:
                # the pool died under several chunks: not attributable, not charged
                self.suspects.add(t)
                self.queue.appendleft((t, attempt))
                return
            if isinstance(exc, NOT_RETRIED) or attempt > self.retries:
                raise _chunk_error(exc, reason="failed", **self.where(t, attempt)) from exc
            self.queue.appendleft((t, attempt + 1))
            return
        self.suspects.discard(t)
        self.record(t, attempt, res, progress)

    def record(self, t, attempt, res, progress) -> bool:
        """Keep chunk ``t``'s result (checked for its trial count); False for a duplicate delivery."""
        j, i, _, size = self.layout.place(t)
        got = _default_count(res)
        if got is not None and got != size:
            raise _chunk_error(None, reason=f"returned {got} trials instead of {size}", **self.where(t, attempt))
        if self.completed[j][i]:  # a duplicate delivery must not count twice
            return False
        if self.jobs[j].fold:
            acc = self.results[j][0]
            self.results[j][0] = res if acc is None else acc + res
        else:
            self.results[j][i] = res
        self.completed[j][i] = True
        self.done_trials[j] += size
        progress.update(size)
        return True

    def merged(self) -> list[list]:
        for j, job in enumerate(self.jobs):  # never a result from fewer trials than announced
            if self.done_trials[j] != job.trials or not self.completed[j].all():
                raise RuntimeError(f"job {j}: merged {self.done_trials[j]} trials, expected {job.trials}")
            if job.fold and getattr(self.results[j][0], "trials", job.trials) != job.trials:
                raise RuntimeError(f"job {j}: the folded counts cover {self.results[j][0].trials} trials, "
                                   f"expected {job.trials}")
        return self.results


class _Hybrid(_Schedule):
    """:func:`run_jobs` in this process, alone (``pool`` None) or with a :class:`Workers` pool: chunks are handed out
    in :meth:`_Layout.order`, run here without futures, and fed to the pool by a thread (see :class:`Workers`)."""

    def __init__(self, workers, jobs, layout: _Layout, retries: int):
        super().__init__(None, jobs, layout, retries)
        self.workers = workers
        self.order = layout.order()
        self.cv = threading.Condition()
        self.inbox: collections.deque = collections.deque()  # (task, attempt, generation, future) back from the pool
        self.out: dict = {}  # task -> [attempt, time sent, generation, future] out in the pool
        self.taken: set = set()  # (task, attempt) out in the pool that this process runs too
        self.failed: set = set()  # (task, attempt) whose failure was handled (by whichever ran it first)
        self.n_done = 0
        self.per_trial: float | None = None  # seconds per trial of the chunks run here
        self.feeder: threading.Thread | None = None
        self.stop = False

    # ---- handing out tasks (under self.cv)
    def _take(self) -> tuple[int, int] | None:
        while self.queue:
            t, attempt = self.queue.popleft()
            if not self._done(t):
                return t, attempt
        t = next(self.order, None)
        return None if t is None else (t, 1)

    def _done(self, t) -> bool:
        j, i, _, _ = self.layout.place(t)
        return bool(self.completed[j][i])

    # ---- the pool side
    def _feed(self, fn) -> None:
        if self.workers is None or self.feeder is not None:
            return
        self.workers.start(fn)
        self.feeder = threading.Thread(target=self._feed_loop, name="dpaudit-feeder", daemon=True)
        self.feeder.start()

    def _feed_loop(self) -> None:
        cap = self.workers.workers - 1
        while True:
            with self.cv:
                nxt: tuple[int, int] | None = None
                while not self.stop and (len(self.out) >= cap or (nxt := self._take()) is None):
                    self.cv.wait()
                if self.stop:
                    if nxt is not None:
                        self.queue.appendleft(nxt)
                    return
                assert nxt is not None
                t, attempt = nxt
                gen = self.workers.restarts
                self.out[t] = [attempt, _now(), gen, None]
            _, _, _, size, ss = self.layout.task(t)
            try:
                fut = self.workers.submit(_call_chunk, self.jobs[self.layout.place(t)[0]].fn, size,
                                          copy_seed(ss), attempt)
            except Exception:  # noqa: BLE001 - a broken or closed pool: the task goes back, this process runs it
                with self.cv:
                    self.out.pop(t, None)
                    self.queue.appendleft((t, attempt))
                    self.cv.notify_all()
                if self.workers.restarts == gen:
                    self.workers.restart()
                return
            with self.cv:
                if t in self.out:
                    self.out[t][3] = fut
            fut.add_done_callback(lambda f, t=t, a=attempt, g=gen: self._arrived(t, a, g, f))

    def _arrived(self, t, attempt, gen, fut) -> None:
        with self.cv:
            if t in self.out and self.out[t][0] == attempt:
                del self.out[t]
            self.inbox.append((t, attempt, gen, fut))
            self.cv.notify_all()

    def _drain(self, progress) -> None:
        while True:
            with self.cv:
                if not self.inbox:
                    return
                t, attempt, gen, fut = self.inbox.popleft()
            if fut.cancelled() or self._done(t):
                continue
            exc = fut.exception()
            if exc is None:
                self._keep(t, attempt, fut.result(), progress)
                continue
            if isinstance(exc, cf.BrokenExecutor) and self.workers.restarts == gen:
                self.workers.restart()  # the next submission starts a fresh pool
            self._failed(t, attempt, exc)

    # ---- this process
    def _keep(self, t, attempt, res, progress) -> None:
        if self.record(t, attempt, res, progress):
            self.n_done += 1

    def _failed(self, t, attempt, exc) -> None:
        if (t, attempt) in self.failed:  # the same attempt failed here and in the pool: charged once
            return
        self.failed.add((t, attempt))
        if isinstance(exc, NOT_RETRIED) or attempt > self.retries:
            raise _chunk_error(exc, reason="failed", **self.where(t, attempt)) from exc
        with self.cv:
            self.queue.appendleft((t, attempt + 1))
            self.cv.notify_all()

    def _run_here(self, t, attempt, progress) -> None:
        j, _, _, size, ss = self.layout.task(t)
        t0 = _now()
        try:
            res = _call_chunk(self.jobs[j].fn, size, copy_seed(ss), attempt)
        except Exception as exc:  # noqa: BLE001 - classified like a pool's failure
            if not self._done(t):
                self._failed(t, attempt, exc)
            return
        seconds = (_now() - t0) / size
        self.per_trial = seconds if self.per_trial is None else 0.8 * self.per_trial + 0.2 * seconds
        self._keep(t, attempt, res, progress)

    def _stuck_after(self, t) -> float:
        size = self.layout.place(t)[3]
        expected = POOL_START_SECONDS if self.per_trial is None else size * self.per_trial
        return max(STUCK_MIN_SECONDS, STUCK_FACTOR * expected)

    def _take_back(self) -> tuple[tuple[int, int] | None, float | None]:
        """A task out in the pool for too long (stuck, or its pool still starting); else the seconds to wait."""
        with self.cv:
            now, wait = _now(), None  # type: float, float | None
            for t, (attempt, sent, _, _) in self.out.items():
                if (t, attempt) in self.taken or self._done(t):
                    continue
                late = sent + self._stuck_after(t) - now
                if late <= 0:
                    self.taken.add((t, attempt))
                    return (t, attempt), None
                wait = late if wait is None else min(wait, late)
            return None, wait

    def _remaining_seconds(self) -> float:
        left = sum(self.layout.trials) - sum(self.done_trials)
        return left * (self.per_trial or 0.0)

    def until_done(self, progress) -> None:
        fn = self.jobs[0].fn
        if self.workers is not None and (self.workers.started or not self.workers.defer):
            self._feed(fn)
        try:
            while self.n_done < len(self.layout):
                self._drain(progress)
                with self.cv:
                    nxt = self._take()
                if nxt is not None:
                    self._run_here(*nxt, progress)
                    if self.workers is not None and self.feeder is None and \
                            self._remaining_seconds() > 2 * POOL_START_SECONDS:
                        self._feed(fn)
                    continue
                back, wait = self._take_back()
                if back is not None:
                    self._run_here(*back, progress)
                    continue
                with self.cv:
                    if not self.inbox and self.n_done < len(self.layout):
                        self.cv.wait(timeout=wait)
        finally:
            self._close(fn)

    def _close(self, fn) -> None:
        with self.cv:
            self.stop = True
            self.cv.notify_all()
            futures = [f for _, _, _, f in self.out.values() if f is not None]
        if self.feeder is not None:
            self.feeder.join()
        for fut in futures:
            fut.cancel()
        if self.workers is not None and not self.workers.started:
            self.workers.start(fn)  # in the background: warm for the next call


def run_chunks(fn, trials: int, seed=None, chunk_size: int = DEFAULT_CHUNK_SIZE, executor=None, *,
               workers=None, retries: int = DEFAULT_RETRIES, label: str = "audit") -> list:
    """Run ``fn(size, seed_sequence)`` on every chunk of one job; return the results in chunk order.

    Parameters
    ----------
    fn : callable(int, SeedSequence) -> object
    trials : int
        Total number of trials (>= 1).
    seed : None, int or SeedSequence
        Root seed; chunk i uses ``SeedSequence(seed).spawn(n_chunks)[i]``.
    chunk_size : int
        Trials per chunk. Part of the random-stream layout: keep it fixed for reproducibility.
    executor, workers, retries, label : see :func:`run_jobs`.
    """
    return run_jobs([Job(fn, trials, seed)], chunk_size=chunk_size, executor=executor, workers=workers,
                    retries=retries, label=label)[0]


def concat_chunks(results, expected: int | None = None) -> np.ndarray:
    """Merge per-chunk score arrays (exact sufficient statistics of threshold tests) in order.

    With ``expected``, the merged number of trials (first axis) is checked against it.
    """
    out = np.concatenate([np.asarray(r) for r in results], axis=0)
    if expected is not None:
        check_merged(out, expected)
    return out


def check_merged(array, expected: int, what: str = "merged chunks") -> np.ndarray:
    """Raise ``RuntimeError`` unless ``array`` holds exactly ``expected`` trials (first axis)."""
    n = int(np.shape(array)[0]) if np.ndim(array) else 1
    if n != int(expected):
        raise RuntimeError(f"{what}: {n} trials, expected {int(expected)} (a chunk was lost)")
    return array


@contextlib.contextmanager
def dask_executor(address: str):
    """A Dask distributed client's executor for the scheduler at ``address`` (needs ``dpaudit[dask]``).

    Yields ``distributed.Client(address).get_executor()``; the client is closed on exit.
    """
    try:
        from distributed import Client
    except ImportError:
        raise ValueError("a Dask scheduler needs the 'dask' extra: pip install 'dpaudit[dask]'") from None
    client = Client(address)
    try:
        yield client.get_executor()
    finally:
        client.close()
