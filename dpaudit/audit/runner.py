"""Chunked, seed-deterministic execution of audit trials.

Trials are split into chunks of a fixed size; chunk ``i`` draws from its own
``numpy.random.SeedSequence(seed).spawn(n_chunks)[i]``. Results are merged in chunk order, and
the chunk layout depends only on ``trials`` and ``chunk_size``, so the merged result depends
only on ``seed`` and ``trials`` -- not on how many workers ran the chunks (``API.md``:
"the same seed gives the same result whatever the number of workers").

``run_chunks(fn, trials, seed, chunk_size, executor=None)`` accepts any executor with a
``map(fn, *iterables)`` method (``concurrent.futures`` executors, or an adapter around a
dask/distributed client) as a drop-in. ``fn(size, seed_sequence)`` must be a pure function of its
arguments (and picklable for process pools).
"""

from __future__ import annotations

import numbers

import numpy as np

from dpaudit.core.validation import check_count

__all__ = ["as_seed_sequence", "spawn", "chunk_sizes", "run_chunks", "concat_chunks", "DEFAULT_CHUNK_SIZE"]

#: default number of trials per chunk (fixed: changing it changes the random streams)
DEFAULT_CHUNK_SIZE = 10_000


def as_seed_sequence(seed) -> np.random.SeedSequence:
    """``seed`` (None, int >= 0, or SeedSequence) as a SeedSequence."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if seed is None:
        return np.random.SeedSequence()
    if isinstance(seed, bool) or not isinstance(seed, (numbers.Integral, np.integer)) or int(seed) < 0:
        raise ValueError(f"seed must be None, an integer >= 0 or a numpy SeedSequence, got {seed!r}")
    return np.random.SeedSequence(int(seed))


def spawn(seed, n: int) -> list[np.random.SeedSequence]:
    """``n`` independent child seed sequences of ``seed``."""
    return as_seed_sequence(seed).spawn(check_count(n, "n", minimum=1))


def chunk_sizes(trials: int, chunk_size: int) -> list[int]:
    """Sizes of the chunks: ``chunk_size`` each, the last one holding the remainder."""
    trials = check_count(trials, "trials", minimum=1)
    chunk_size = check_count(chunk_size, "chunk_size", minimum=1)
    full, rem = divmod(trials, chunk_size)
    return [chunk_size] * full + ([rem] if rem else [])


def run_chunks(fn, trials: int, seed=None, chunk_size: int = DEFAULT_CHUNK_SIZE, executor=None) -> list:
    """Run ``fn(size, seed_sequence)`` on every chunk; return the results in chunk order.

    Parameters
    ----------
    fn : callable(int, SeedSequence) -> object
    trials : int
        Total number of trials (>= 1).
    seed : None, int or SeedSequence
        Root seed; chunk i uses ``SeedSequence(seed).spawn(n_chunks)[i]``.
    chunk_size : int
        Trials per chunk. Part of the random-stream layout: keep it fixed for reproducibility.
    executor : object with ``map``, optional
        Runs the chunks (e.g. ``concurrent.futures.ThreadPoolExecutor``); default: in this process.
    """
    sizes = chunk_sizes(trials, chunk_size)
    seeds = spawn(seed, len(sizes))
    from dpaudit.core.progress import Progress  # stderr progress, quiet off-TTY / --json (issue 7)

    results = map(fn, sizes, seeds) if executor is None else executor.map(fn, sizes, seeds)
    out = []
    with Progress(trials, label="audit") as progress:
        for size, result in zip(sizes, results):
            out.append(result)
            progress.update(size)
    return out


def concat_chunks(results) -> np.ndarray:
    """Merge per-chunk score arrays (exact sufficient statistics of threshold tests) in order."""
    return np.concatenate([np.asarray(r) for r in results], axis=0)
