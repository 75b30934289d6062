"""Issue 18: the neighbouring relation of the audited pair is recorded (details, JSON, report) and a
mismatch with the claim's relation warns; a progress callback and logging from the Python API."""

import json
import logging
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpaudit
from dpaudit.audit.protocol.relation import NeighbouringRelationWarning, relation_record
from dpaudit.core.execution import Execution
from dpaudit.core.progress import Progress, reporting
from dpaudit.report.writer import render_report


def _count(data, rng, size):  # discrete Laplace on a count: exactly 1-DP under add/remove
    p = 1.0 - math.exp(-1.0)
    return int(np.sum(data)) + rng.geometric(p, size) - rng.geometric(p, size)


def _weighted(data, rng, size):
    # a weighted histogram bin: records of weight 10 but noise of sensitivity 1 (1-DP under add/remove
    # only for weight 1); a replace-one pair [10] -> [0] moves the count by 10
    p = 1.0 - math.exp(-1.0)
    return int(np.sum(data)) + rng.geometric(p, size) - rng.geometric(p, size)


KW = dict(epsilon=1.0, trials=3000, seed=0, statistic="value")


def test_relation_recorded_in_details_json_summary_and_report():
    with pytest.warns(NeighbouringRelationWarning, match="group privacy"):
        res = dpaudit.audit_mechanism(_count, [1, 0], [1, 1], neighbouring="replace_one",
                                      claim_neighbouring="add_remove", **KW)
    rel = res.details["relation"]
    assert rel["pair"] == "replace_one" and rel["claim"] == "add_remove" and "2 epsilon" in rel["warning"]
    assert res.details["neighbouring"] == "replace_one"
    back = json.loads(json.dumps(res.to_dict()))
    assert back["details"]["relation"] == rel
    assert "warning" in res.summary() and "replace-one" in res.summary()
    text, _ = render_report(audit=res, fmt="md")
    assert "replace one record" in text and "relation warning" in text and "add/remove one record" in text


def test_same_relation_gives_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", NeighbouringRelationWarning)
        res = dpaudit.audit_mechanism(_count, [1], [1, 1], neighbouring="add_remove",
                                      claim_neighbouring="add_remove", **KW)
    assert res.details["relation"]["warning"] is None
    assert "warning" not in res.summary()


def test_unstated_relation_is_recorded_as_none():
    res = dpaudit.audit_mechanism(_count, [1], [1, 1], **KW)
    assert res.details["relation"] == {"pair": None, "claim": None, "warning": None}


def test_add_remove_pair_against_replace_one_claim_warns():
    with pytest.warns(NeighbouringRelationWarning, match="different sizes"):
        dpaudit.audit_mechanism(_count, [1], [1, 1], neighbouring="add_remove", claim_neighbouring="replace_one",
                                **KW)


@pytest.mark.parametrize("name", ["neighbouring", "claim_neighbouring"])
def test_bad_relation_names_the_argument(name):
    with pytest.raises(ValueError, match=name):
        dpaudit.audit_mechanism(_count, [1], [1, 1], **{name: "bounded"}, **KW)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["add_remove", "replace_one", None]), st.sampled_from(["add_remove", "replace_one", None]))
def test_warning_exactly_when_both_stated_and_different(pair, claim):
    rec = relation_record(pair, claim)
    assert (rec["warning"] is not None) == (pair is not None and claim is not None and pair != claim)


def test_weighted_histogram_replace_one_violation_is_flagged_as_a_relation_mismatch():
    # the example: a replace-one pair of weight-10 records "violates" the add/remove claim
    with pytest.warns(NeighbouringRelationWarning):
        res = dpaudit.audit_mechanism(_weighted, [10], [0], neighbouring="replace_one",
                                      claim_neighbouring="add_remove", **KW)
    assert res.violation and res.details["relation"]["warning"]


# -- progress ------------------------------------------------------------------------------------
def test_audit_mechanism_progress_callback_counts_every_trial():
    calls = []
    dpaudit.audit_mechanism(_count, [1], [1, 1],
                            execution=Execution(chunk_size=500, progress=lambda d, t: calls.append((d, t))), **KW)
    assert calls[-1] == (6000, 6000)  # 3000 trials on each input
    done = [d for d, _ in calls]
    assert done == sorted(done) and len(calls) >= 12
    assert all(t == 6000 for _, t in calls)


def test_audit_mechanism_progress_same_result():
    a = dpaudit.audit_mechanism(_count, [1], [1, 1], execution=Execution(progress=lambda d, t: None), **KW)
    b = dpaudit.audit_mechanism(_count, [1], [1, 1], **KW)
    assert a.epsilon_lower == b.epsilon_lower


def test_audit_optimizer_progress_callback():
    calls = []
    dpaudit.audit_optimizer("dp-sgd", trials=400, seed=0, execution=Execution(progress=lambda d, t: calls.append((d, t))))
    assert calls[-1] == (800, 800)
    one = []
    dpaudit.audit_optimizer("dp-sgd", seed=0, method="one-run", canaries=100,
                            execution=Execution(progress=lambda d, t: one.append((d, t))))
    assert one == [(1, 1)]


@pytest.mark.parametrize("bad", [3, "yes"])
def test_progress_must_be_callable(bad):
    with pytest.raises(ValueError, match="progress"):
        dpaudit.audit_mechanism(_count, [1], [1, 1], execution=Execution(progress=bad), **KW)
    with pytest.raises(ValueError, match="progress"):
        dpaudit.audit_optimizer("dp-sgd", trials=10, seed=0, execution=Execution(progress=bad))


def test_callback_exception_stops_the_audit():
    class Stop(Exception):
        pass

    def stop(done, total):
        raise Stop

    with pytest.raises(Stop):
        dpaudit.audit_mechanism(_count, [1], [1, 1], execution=Execution(progress=stop), **KW)


def test_reporting_sums_phases_and_ends_at_total():
    calls = []
    with reporting(lambda d, t: calls.append((d, t)), total=10):
        with Progress(4, enabled=False) as p:
            p.update(4)
        with Progress(8, enabled=False) as p:  # more than planned: the total grows
            p.update(8)
    assert calls == [(4, 10), (12, 12)]


def test_reporting_is_inert_outside_and_none():
    with reporting(None):
        Progress(3, enabled=False).update(3)


def test_logging_messages(caplog):
    with caplog.at_level(logging.INFO, logger="dpaudit"):
        dpaudit.audit_mechanism(_count, [1], [1, 1], **KW)
    text = caplog.text
    assert "trials to run" in text and "audit_mechanism: epsilon >=" in text


def test_progress_logs_a_status_line_at_most_every_log_interval(caplog):
    from dpaudit.core import progress as pr

    now = [0.0]
    with caplog.at_level(logging.INFO, logger="dpaudit"):
        p = Progress(100, enabled=False, clock=lambda: now[0])
        for _ in range(10):
            now[0] += pr.LOG_INTERVAL / 4
            p.update(10)
        p.close()
    lines = [r.getMessage() for r in caplog.records if r.name == "dpaudit.core.progress"]
    assert lines[0] == "audit: 100 trials to run"
    assert sum("/100 trials" in m for m in lines) == 2 + 1  # at 10 s, 20 s of 25 s, and the end


def test_one_run_progress_total_is_planned_from_the_start():
    calls = []
    dpaudit.audit_mechanism(lambda x, rng, size: x + rng.normal(0.0, 1.0, size), 0.0, 1.0, epsilon=2.0, delta=1e-5,
                            trials=3000, seed=0, method="one-run",
                            execution=Execution(progress=lambda d, t: calls.append((d, t))))
    assert {t for _, t in calls} == {3900}  # 3000 canaries and a calibration run of 900
    assert calls[-1] == (3900, 3900)
