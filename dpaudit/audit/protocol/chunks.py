"""Chunk functions that score runs where they are drawn, importing little: numpy, :mod:`dpaudit.core.runner` and
:mod:`dpaudit.audit.stats.scores` (no scipy.stats, no scipy.optimize).

A process of a pool (``workers=N``, a Dask worker) that receives a chunk function imports the module that defines
its class, and everything that module imports, before it runs its first chunk: about 950 modules and a second or
two for :mod:`dpaudit.audit.protocol.evaluation` (its selection and power modules import scipy.stats and
scipy.optimize), against the few modules here (docs/scaling.md, ``benchmarks/workers_speed.py --imports``). The
classes are re-exported where they were defined before: :class:`ScoredRunCounts` by
:mod:`dpaudit.audit.protocol.evaluation`, :class:`OptimizerRun` and :class:`OptimizerScores` by
:mod:`dpaudit.audit.optimizer`.
"""

from __future__ import annotations

import numpy as np

from dpaudit.audit.stats.scores import as_scores
from dpaudit.core.runner import Counts

__all__ = ["ScoredRunCounts", "OptimizerRun", "OptimizerScores"]


class ScoredRunCounts:
    """Chunk function (picklable): ``score_fn(size, seed_seq)`` -- runs the caller scores itself (an optimizer's
    final parameters, a user's trainings) -- reduced where it runs to the counts ``#{score <= t}`` at each sorted
    array of ``thresholds`` (concatenated): a :class:`~dpaudit.core.runner.Counts` of ``size`` trials, from the
    same scores the score-keeping path would have merged."""

    def __init__(self, score_fn, thresholds):
        self.score_fn, self.thresholds = score_fn, [np.asarray(t, dtype=float) for t in thresholds]

    def __call__(self, size, seed_seq) -> Counts:
        s = as_scores(self.score_fn(size, seed_seq), "scores")
        if s.size != size:
            raise ValueError(f"the chunk returned {s.size} scores for {size} runs (one score per run is needed)")
        s = np.sort(s)  # counts_at of every threshold array, the scores checked and sorted once
        return Counts(int(size), np.concatenate([np.searchsorted(s, np.atleast_1d(t), side="right").astype(np.int64)
                                                 for t in self.thresholds]))


class OptimizerRun:
    """``opt.run(X, y, trials=size, seed=seed, canary_gradient=canary)`` as a picklable object."""

    def __init__(self, opt, X, y, canary=None):
        self.opt, self.X, self.y, self.canary = opt, X, y, canary

    def __call__(self, size, seed):
        if self.canary is None:  # optimizers without canary support do not take the keyword
            return self.opt.run(self.X, self.y, trials=size, seed=seed)
        return self.opt.run(self.X, self.y, trials=size, seed=seed, canary_gradient=self.canary)


class OptimizerScores:
    """Chunk function: run the optimizer ``size`` times, return only the scores of the parameters."""

    def __init__(self, run, statistic):
        self.run, self.statistic = run, statistic

    def __call__(self, size, seed):
        return np.asarray(self.statistic(self.run(size, seed).params), dtype=float)
