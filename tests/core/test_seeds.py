"""seed_record of a SeedSequence built from a list of ints (numpy accepts it; ``int(entropy)`` raised TypeError,
so audit_one_run(..., seed=SeedSequence([run, m, a])) crashed before any work)."""

import json

import numpy as np

from dpaudit.core.seeds import seed_record


def test_list_entropy_is_recorded_and_rebuilds_the_streams():
    ss = np.random.SeedSequence([0, 1000, 3])
    rec = seed_record(ss)
    json.dumps(rec)
    again = np.random.SeedSequence(rec["entropy"], spawn_key=rec["spawn_key"])
    assert np.array_equal(np.random.default_rng(again).random(5), np.random.default_rng(ss).random(5))


def test_int_entropy_and_spawned_children_unchanged():
    assert seed_record(np.random.SeedSequence(7)) == 7
    child = np.random.SeedSequence(7).spawn(2)[1]
    assert seed_record(child) == {"entropy": 7, "spawn_key": [1], "n_children_spawned": 0}


def test_audit_one_run_accepts_a_list_entropy_seed():
    from dpaudit import audit_one_run

    def run(mask, rng):
        return mask + rng.normal(0.0, 1.0, len(mask))

    r = audit_one_run(run, canaries=200, claim=1.0, seed=np.random.SeedSequence([0, 200, 1]))
    assert r.details["seed"]["entropy"] == [0, 200, 1]
