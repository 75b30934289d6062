"""A fixed-statistic audit streams its evaluation runs as counts: the same certified result as the score-keeping
path (every evaluation score kept, concatenated, then tested) on the same seed and chunk layout, whatever the chunk
size, and the same result on 1 or 2 workers (issue 30, item 1; memory measured by benchmarks/memory.py)."""

import json
import math

import numpy as np
import pytest

from dpaudit import Execution
from dpaudit.audit import audit_mechanism
from dpaudit.audit.protocol.two_sample import AttackChunk, audit_scores, split_trials
from dpaudit.core.runner import concat_chunks, run_chunks
from dpaudit.core.seeds import as_seed_sequence
from dpaudit.mechanisms import Gaussian


def statistic(outputs):
    return np.asarray(outputs, dtype=float).ravel()


def _kept_scores(trials, seed, chunk_size):
    """What the score-keeping path had: every score of the four jobs, in the audit's seed and chunk layout."""
    sampler = Gaussian(1.0).sample
    streams = as_seed_sequence(seed).spawn(4)
    n_sel, n_eval = split_trials(trials, 0.3)
    out = []
    for inp, n, s in ((0.0, n_sel, streams[0]), (1.0, n_sel, streams[1]), (0.0, n_eval, streams[2]),
                      (1.0, n_eval, streams[3])):
        out.append(concat_chunks(run_chunks(AttackChunk(sampler, inp, statistic), n, s, chunk_size), n))
    return out


def _certified(res):
    d = res.details
    stats = {k: v for k, v in d["attack_statistics"].items() if k != "auroc"}
    return json.loads(json.dumps({"epsilon_lower": res.epsilon_lower, "threshold_test": d["threshold_test"],
                                  "gdp": d["gdp"]["test"], "attack_statistics": stats}))


def _check(trials, chunk_sizes, seed=3):
    for c in chunk_sizes:
        res = audit_mechanism(Gaussian(1.0).sample, 0.0, 1.0, epsilon=math.inf, delta=1e-5, trials=trials,
                              statistic=statistic, seed=seed, execution=Execution(chunk_size=c))
        kept = audit_scores(*_kept_scores(trials, seed, c), epsilon=math.inf, delta=1e-5, trials=trials)
        assert _certified(res) == _certified(kept), c
        assert res.epsilon_lower > 0.5


def test_counts_give_the_score_keeping_result_for_every_chunk_size():
    _check(20_000, (20_000, 3_000, 7_777))


@pytest.mark.slow
def test_counts_give_the_score_keeping_result_at_1e5():
    _check(100_000, (100_000, 10_000, 33_333))


def test_workers_do_not_change_the_streamed_result():
    kw = dict(epsilon=math.inf, delta=1e-5, trials=20_000, statistic=statistic, seed=5)
    a = audit_mechanism(Gaussian(1.0).sample, 0.0, 1.0, execution=Execution(chunk_size=2_500), **kw)
    b = audit_mechanism(Gaussian(1.0).sample, 0.0, 1.0, execution=Execution(chunk_size=2_500, workers=2), **kw)
    assert a.to_dict() == b.to_dict()
