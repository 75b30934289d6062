"""Keywords that moved keep working, warn with the new spelling, and give the same result as the new spelling.

audit_mechanism / audit_optimizer / audit_training / audit_one_run / audit_scores / simulate_noisy_gd /
linear_instance_table: workers, executor, chunk_size, retries, progress -> execution=Execution(...);
selection, grid -> threshold=; features, randomize_ties -> statistic=Contest(...) / attack_choice(...).
"""

import concurrent.futures as cf

import numpy as np
import pytest

import dpaudit
from dpaudit import Execution
from dpaudit.audit import (
    Bonferroni,
    Contest,
    attack_choice,
    audit_mechanism,
    audit_one_run,
    audit_optimizer,
    audit_scores,
    audit_training,
)
from dpaudit.audit.linear_instance import linear_instance_table, simulate_noisy_gd

LAP = dpaudit.Laplace(1.0).sample


def value(o):
    return o[:, 0]


def same(a, b):
    da, db = a.to_dict(), b.to_dict()
    for d in (da, db):
        d["details"].pop("seed", None)
    return da == db


def test_execution_keywords_on_audit_mechanism():
    new = audit_mechanism(LAP, 0.0, 1.0, epsilon=1.0, trials=2000, seed=1, statistic=value,
                          execution=Execution(chunk_size=300, retries=1))
    with pytest.warns(DeprecationWarning, match=r"execution=dpaudit.Execution\(chunk_size=300, retries=1\)"):
        old = audit_mechanism(LAP, 0.0, 1.0, epsilon=1.0, trials=2000, seed=1, statistic=value, chunk_size=300,
                              retries=1)
    assert same(new, old)


def test_progress_and_executor_keywords():
    calls = []
    with cf.ThreadPoolExecutor(2) as ex, pytest.warns(DeprecationWarning, match="executor=, progress="):
        old = audit_mechanism(LAP, 0.0, 1.0, epsilon=1.0, trials=2000, seed=2, statistic=value, executor=ex,
                              progress=lambda d, t: calls.append(d))
    assert calls and calls[-1] == 4000
    assert same(old, audit_mechanism(LAP, 0.0, 1.0, epsilon=1.0, trials=2000, seed=2, statistic=value))


def test_both_spellings_at_once_is_an_error():
    with pytest.raises(ValueError, match="not both"):
        audit_mechanism(LAP, 0.0, 1.0, epsilon=1.0, trials=200, chunk_size=50, execution=Execution(workers=2))
    with pytest.raises(ValueError, match="not both"):
        audit_mechanism(LAP, 0.0, 1.0, epsilon=1.0, trials=200, selection="heldout", threshold="bonferroni")
    with pytest.raises(TypeError, match="unexpected keyword"):
        audit_mechanism(LAP, 0.0, 1.0, epsilon=1.0, trials=200, chunksize=50)


def test_selection_and_grid_move_to_threshold():
    grid = np.linspace(-2, 3, 11)
    new = audit_mechanism(LAP, 0.0, 1.0, epsilon=1.0, trials=3000, seed=3, statistic=value,
                          threshold=Bonferroni(grid=grid))
    with pytest.warns(DeprecationWarning, match="threshold="):
        old = audit_mechanism(LAP, 0.0, 1.0, epsilon=1.0, trials=3000, seed=3, statistic=value,
                              selection="bonferroni", grid=grid)
    assert same(new, old) and new.details["n_evaluation"] == [3000, 3000]
    with pytest.warns(DeprecationWarning, match="threshold="):
        old = audit_mechanism(LAP, 0.0, 1.0, epsilon=1.0, trials=3000, seed=3, selection="combined")
    assert same(old, audit_mechanism(LAP, 0.0, 1.0, epsilon=1.0, trials=3000, seed=3, threshold="combined"))


def test_features_and_randomize_ties_move_to_contest():
    def feats(batch):
        return np.asarray(batch, dtype=float)

    new = audit_mechanism(LAP, 0.0, 1.0, epsilon=1.0, trials=2000, seed=4,
                          statistic=Contest(tuple(attack_choice("logistic").families), features=feats))
    with pytest.warns(DeprecationWarning, match="Contest"):
        old = audit_mechanism(LAP, 0.0, 1.0, epsilon=1.0, trials=2000, seed=4, statistic="logistic", features=feats)
    assert same(new, old)


def test_audit_scores_selection_keyword():
    rng = np.random.default_rng(0)
    s0, s1 = rng.laplace(0, 1, 4000), rng.laplace(1, 1, 4000)
    with pytest.warns(DeprecationWarning, match="threshold="):
        old = audit_scores(s0, s1, epsilon=1.0, selection="frontier")
    assert same(old, audit_scores(s0, s1, epsilon=1.0, threshold="frontier"))


def test_optimizer_training_and_renyi_keywords():
    kw = dict(trials=400, seed=5, steps=3)
    with pytest.warns(DeprecationWarning, match="execution="):
        old = audit_optimizer("dp-gd", chunk_size=100, **kw)
    assert same(old, audit_optimizer("dp-gd", execution=Execution(chunk_size=100), **kw))
    with pytest.warns(DeprecationWarning, match="threshold="):
        audit_optimizer("dp-gd", selection="bonferroni", **kw)

    def train(include, rng):
        return rng.normal(1.0 if include else 0.0)

    with pytest.warns(DeprecationWarning, match="execution="):
        old = audit_training(train, mode="many_runs", trials=100, claim=5.0, seed=6, retries=0)
    assert same(old, audit_training(train, mode="many_runs", trials=100, claim=5.0, seed=6,
                                    execution=Execution(retries=0)))

    def one(mask, rng):
        return mask + rng.normal(size=mask.shape)

    with pytest.warns(DeprecationWarning, match="execution="):
        audit_one_run(one, canaries=100, claim=5.0, seed=7, retries=0)
    with pytest.warns(DeprecationWarning, match="execution="):
        a = simulate_noisy_gd(np.zeros((1, 1)), steps=2, step_size=0.1, sigma=1.0, trials=50, seed=8, chunk_size=20)
    assert np.array_equal(a, simulate_noisy_gd(np.zeros((1, 1)), steps=2, step_size=0.1, sigma=1.0, trials=50,
                                               seed=8, execution=Execution(chunk_size=20)))
    with pytest.warns(DeprecationWarning, match="execution="):
        linear_instance_table((1,), (2.0,), trials=100, seed=9, chunk_size=50)
