"""Seeds: the one rule turning a ``seed`` argument into numpy random streams.

Every drawing function of dpaudit takes ``seed`` (None, an int >= 0 or a ``SeedSequence``; the
optimizers' ``run`` also a ``Generator``) and turns it into streams here: a ``SeedSequence`` is
copied before spawning (the caller's object is never advanced, so one seed object gives the same
streams on every call), children come from numpy's spawn tree (independent streams, O'Neill 2015 /
numpy NEP 19), and :func:`seed_record` gives the JSON value that reproduces a run.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from dpaudit.core.validation import check_count

__all__ = ["as_seed_sequence", "copy_seed", "pin_seed", "seed_record", "spawn", "child", "make_rng"]


def copy_seed(ss: np.random.SeedSequence) -> np.random.SeedSequence:
    """An equal SeedSequence that does not share the spawn counter of ``ss``."""
    return np.random.SeedSequence(entropy=ss.entropy, spawn_key=ss.spawn_key, pool_size=ss.pool_size,
                                  n_children_spawned=ss.n_children_spawned)


def as_seed_sequence(seed, *, generator: bool = False) -> np.random.SeedSequence:
    """``seed`` (None, int >= 0, or SeedSequence) as a SeedSequence.

    A SeedSequence is copied (same entropy, spawn key and spawn counter), so spawning from the
    result never advances the caller's object: the same seed object gives the same streams on
    every call. With ``generator`` a ``numpy.random.Generator`` is accepted too (the optimizers'
    ``run``): one 63-bit entropy is drawn from it (advancing it), as ``Generator.spawn`` would.
    Audits refuse it (their ``details["seed"]`` must reproduce the run).
    """
    if isinstance(seed, np.random.SeedSequence):
        return copy_seed(seed)
    if generator and isinstance(seed, np.random.Generator):
        return np.random.SeedSequence(int(seed.integers(2**63)))
    if seed is None:
        return np.random.SeedSequence()
    if isinstance(seed, bool) or not isinstance(seed, (numbers.Integral, np.integer)) or int(seed) < 0:
        raise ValueError(f"seed must be None, an integer >= 0{', a numpy Generator' if generator else ''} or a numpy "
                         f"SeedSequence, got {seed!r}")
    return np.random.SeedSequence(int(seed))


def pin_seed(seed):
    """``seed`` made reproducible: ``None`` becomes a ``SeedSequence`` with freshly drawn entropy (same
    randomness as ``None``, but :func:`seed_record` can then say which seed reproduces the run); an
    int or a SeedSequence is returned unchanged (after validation)."""
    if seed is None:
        return np.random.SeedSequence()
    as_seed_sequence(seed)
    return seed


def seed_record(seed):
    """A JSON-able value that reproduces ``seed``'s random streams when passed back as ``seed=``: the
    int itself, a SeedSequence's entropy, or ``{"entropy": ..., "spawn_key": [...]}`` for a spawned
    child or a SeedSequence built from a sequence of ints (``numpy.random.SeedSequence(entropy,
    spawn_key=...)`` rebuilds it)."""
    if seed is None:
        return None
    if isinstance(seed, np.random.SeedSequence):
        ent: Any = seed.entropy  # numpy's stubs allow None: never the case once a SeedSequence is built
        # entropy is an int, or a sequence of ints when the SeedSequence was built from one ([run, cell, ...])
        entropy = int(ent) if isinstance(ent, (numbers.Integral, np.integer)) else [int(e) for e in ent]
        if seed.spawn_key or seed.n_children_spawned or isinstance(entropy, list):
            return {"entropy": entropy, "spawn_key": [int(k) for k in seed.spawn_key],
                    "n_children_spawned": int(seed.n_children_spawned)}
        return entropy
    return int(seed)


def spawn(seed, n: int) -> list[np.random.SeedSequence]:
    """``n`` independent child seed sequences of ``seed`` (children 0..n-1 of its spawn tree)."""
    return as_seed_sequence(seed).spawn(check_count("n", n, minimum=1))


def child(seed: np.random.SeedSequence, i: int) -> np.random.SeedSequence:
    """Child ``i`` of ``seed``'s spawn tree without spawning the ``i`` children before it: the same sequence as
    ``copy_seed(seed).spawn(i + 1)[i]`` (numpy's ``SeedSequence.spawn`` numbers its children from
    ``n_children_spawned``), so a job of millions of chunks never holds their seeds at once."""
    i = check_count("i", i)
    return np.random.SeedSequence(entropy=seed.entropy, spawn_key=tuple(seed.spawn_key) + (seed.n_children_spawned + i,),
                                  pool_size=seed.pool_size)


def make_rng(seed) -> np.random.Generator:
    """A ``numpy.random.Generator`` from ``seed`` (a Generator is used as it is; otherwise
    ``default_rng`` of :func:`as_seed_sequence`, the same stream as ``default_rng(seed)``)."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(as_seed_sequence(seed))
