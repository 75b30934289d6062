"""Optimizer and many-runs training audits stream their evaluation runs as counts (issue 30, items 1 and 3).

The reference values in tests/support/stream.py were recorded from the score-keeping path (every evaluation
score returned and concatenated before the threshold test). The counting path must give the same certified bound
and every field of the threshold test, the GDP test and the descriptive statistics at fixed thresholds, bit for
bit, at the same seeds; and one result whatever the chunking or the number of workers.
"""

import json

import numpy as np
import pytest

from dpaudit import Execution
from dpaudit.accounting.claim import PrivacyClaim
from dpaudit.accounting.zcdp import ZCDPAccountant
from dpaudit.audit.optimizer import audit_optimizer
from dpaudit.audit.training import audit_training
from dpaudit.mechanisms import Gaussian
from tests.support.stream import REFERENCE  # noqa: E402


def _key(res):
    """The recorded fields (as JSON values: lists, not tuples)."""
    d = res.details
    stats = {k: v for k, v in d["attack_statistics"].items() if k != "auroc"}
    out = {"epsilon_lower": res.epsilon_lower, "epsilon_claimed": res.epsilon_claimed, "violation": res.violation,
           "method": res.method, "trials": res.trials, "confidence": res.confidence,
           "threshold_test": d["threshold_test"], "gdp": d["gdp"], "attack_statistics": stats,
           "n_selection": d["n_selection"], "n_evaluation": d["n_evaluation"], "selection": d["selection"]}
    if "deltas" in d:
        out["deltas"] = d["deltas"]
    return json.loads(json.dumps(out))


OPTIMIZER_CASES = [("dp-sgd", 1500, 3), ("dp-gd", 1200, 7), ("output-perturbation", 1000, 11),
                   ("projection", 1000, 5), ("noisy-gd", 800, 2)]


@pytest.mark.parametrize("name,trials,seed", OPTIMIZER_CASES)
def test_optimizer_audit_counts_give_the_score_keeping_result(name, trials, seed):
    res = audit_optimizer(name, trials=trials, seed=seed)
    assert _key(res) == REFERENCE[f"{name}/{trials}/{seed}"]
    assert res.details["roc"]["fpr"][0] == 0.0 and "binned at" in res.details["attack_statistics"]["auroc"]["method"]


def _train(include, rng):
    return float(include) + float(rng.normal())


def test_many_runs_training_counts_give_the_score_keeping_result():
    res = audit_training(_train, mode="many_runs", trials=600, seed=4, claim=(0.5, 1e-5))
    assert _key(res) == REFERENCE["training/600/4"]
    claim = PrivacyClaim.from_accountant(ZCDPAccountant().compose(Gaussian(sigma=1.0)), neighbouring="add_remove",
                                         description="0.5-zCDP")
    res = audit_training(_train, mode="many_runs", trials=500, seed=9, claim=claim, delta=[1e-5, 1e-6])
    assert _key(res) == REFERENCE["training/500/9"]


def _whole(res):
    return json.loads(json.dumps({"epsilon_lower": res.epsilon_lower, "details": {
        k: v for k, v in res.details.items() if k not in ("seed",)}}, default=str))


def test_optimizer_result_does_not_depend_on_where_the_counts_were_made():
    """Every field (ROC curve, AUROC, advice included) is the same on 1 or 2 workers; the selection scores, hence the
    thresholds, depend on the chunk size (part of the random-stream layout), so it is kept."""
    a = audit_optimizer("dp-sgd", trials=600, seed=1, steps=5, execution=Execution(chunk_size=100))
    b = audit_optimizer("dp-sgd", trials=600, seed=1, steps=5, execution=Execution(chunk_size=100, workers=2))
    assert _whole(a) == _whole(b)


def test_streamed_evaluation_never_returns_scores(monkeypatch):
    """The evaluation jobs are folded (fold=True: Counts summed as they arrive), the selection jobs are not."""
    import dpaudit.audit.optimizer as O
    from dpaudit.audit.protocol.two_sample import audit_scored_runs

    seen = []

    def spy(*a, run, **kw):
        def wrapped(jobs):
            seen.extend((j.fold, j.trials) for j in jobs)
            return run(jobs)
        return audit_scored_runs(*a, run=wrapped, **kw)

    monkeypatch.setattr(O, "audit_scored_runs", spy)
    audit_optimizer("dp-sgd", trials=100, seed=0, steps=3)
    assert seen == [(False, 30), (False, 30), (True, 70), (True, 70)]


def test_gdp_with_pure_dp_refused_before_any_trial():
    calls = []

    def train(include, rng):
        calls.append(include)
        return float(np.asarray(rng.normal()))

    from dpaudit.audit.protocol.two_sample import audit_scored_runs
    from dpaudit.audit.stats.rules import threshold_rule
    with pytest.raises(ValueError, match="delta"):
        audit_scored_runs(train, train, (0, 1, 2, 3), run=None, n_sel=3, n_eval=7, checks=[(1.0, 0.0, 0.95)],
                          rule=threshold_rule("heldout"), trials=10, method="gdp")
    assert calls == []
