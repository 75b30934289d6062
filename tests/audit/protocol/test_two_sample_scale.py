"""Issue 30 items 2 and 4: a selection sample that does not grow with the audit, the same answer on Dask, a killed
Dask worker survived.

Below :data:`SELECTION_CAP` (audits of at most 10^6 trials with the default selection fraction) results are those of
the rule before the cap (stored values, computed at commit a7ca694); above it the held-out threshold is chosen on the
kept selection scores and further selection runs streamed as counts on a grid fixed on the kept ones (exercised here
with the cap lowered, so the tests stay small)."""

from __future__ import annotations

import json
import os
import signal

import numpy as np
import pytest

import dpaudit.audit.protocol.two_sample as two_sample
from dpaudit.audit import audit_mechanism
from dpaudit.audit.protocol.evaluation import TAIL_POINTS, selection_grid
from dpaudit.audit.protocol.two_sample import selection_sizes, streamed_selection_seeds
from dpaudit.audit.stats.thresholds import candidate_thresholds
from dpaudit.core.execution import Execution
from dpaudit.core.seeds import as_seed_sequence
from dpaudit.mechanisms import Gaussian

GAUSS = Gaussian(1.0).sample


def first(batch):
    return np.asarray(batch, dtype=float).reshape(len(batch), -1)[:, 0]


def normal_sampler(x, rng, size):
    return x + rng.standard_normal(size)


def dumps(result) -> str:
    return json.dumps(result.to_dict(), sort_keys=True)


# ------------------------------------------------------------------ below the cap: nothing changes
def test_below_the_cap_results_are_the_stored_ones():
    r = audit_mechanism(GAUSS, 0.0, 1.0, epsilon=10.0, delta=1e-5, trials=100_000, seed=1, statistic=first)
    assert r.epsilon_lower == 2.699792584700133
    assert r.details["threshold_test"]["threshold"] == 3.2613954544067383
    assert "selection_runs" not in r.details and r.details["n_selection"] == [30_000, 30_000]
    c = audit_mechanism(GAUSS, 0.0, 1.0, epsilon=4.5, delta=1e-5, trials=3_000, seed=7, statistic="auto-real")
    assert c.epsilon_lower == 1.5311719704513458
    assert c.details["threshold_test"]["threshold"] == -0.9597997665405273


@pytest.mark.slow
def test_at_the_cap_results_are_the_stored_ones():
    """10^6 trials: 3 x 10^5 selection runs per input, all kept (the largest audit the cap leaves unchanged)."""
    r = audit_mechanism(GAUSS, 0.0, 1.0, epsilon=10.0, delta=1e-5, trials=1_000_000, seed=1, statistic=first)
    assert r.epsilon_lower == 3.2893743395513075
    assert r.details["threshold_test"]["threshold"] == -2.746293067932129
    assert "selection_runs" not in r.details


def test_selection_sizes():
    cap = two_sample.SELECTION_CAP
    assert cap == 300_000
    assert selection_sizes(cap) == (cap, 0)
    assert selection_sizes(cap + 1) == (cap, 1)
    assert selection_sizes(3_000_000) == (cap, 2_700_000)
    assert selection_sizes(10, cap=4) == (4, 6)


def test_selection_grid_reaches_beyond_the_kept_scores():
    rng = np.random.default_rng(0)
    k0, k1 = rng.standard_normal(5_000), 1.0 + rng.standard_normal(5_000)
    g = selection_grid(k0, k1, 500)
    cand = candidate_thresholds(k0, k1, 500)
    assert np.all(np.isin(cand, g)) and np.all(np.diff(g) > 0)
    lo, hi = min(k0.min(), k1.min()), max(k0.max(), k1.max())
    assert g.size == cand.size + 2 * TAIL_POINTS
    assert g[-1] == pytest.approx(hi + 0.5 * (hi - lo)) and g[0] == pytest.approx(lo - 0.5 * (hi - lo))
    # a statistic with few values: its values, and points only beyond them
    few = selection_grid([0.0, 1.0, 1.0], [2.0], 500)
    inside = few[(few >= 0.0) & (few <= 2.0)]
    assert np.array_equal(inside, [0.0, 1.0, 2.0]) and few.size == 3 + 2 * TAIL_POINTS
    # infinite scores: kept as candidates, the tails extended around the finite ones
    inf = selection_grid([0.0, np.inf], [1.0], 500)
    assert inf[-1] == np.inf and inf.size == 3 + 2 * TAIL_POINTS and inf[-2] == pytest.approx(1.5)


def test_streamed_seeds_are_apart_from_every_other_stream():
    root = as_seed_sequence(5)
    a, b = streamed_selection_seeds(root)
    keys = {tuple(c.spawn_key) for c in as_seed_sequence(5).spawn(8)}
    assert tuple(a.spawn_key) not in keys and tuple(b.spawn_key) not in keys and a.spawn_key != b.spawn_key
    assert streamed_selection_seeds(as_seed_sequence(5))[0].spawn_key == a.spawn_key  # fixed by the seed alone


# ------------------------------------------------------------------ above the cap (lowered here)
@pytest.fixture
def small_cap(monkeypatch):
    monkeypatch.setattr(two_sample, "SELECTION_CAP", 2_000)
    return 2_000


def _by_hand(trials: int, seed: int, cap: int, chunk: int):
    """The streamed held-out choice recomputed from the scores themselves (drawn again from the same streams)."""
    from dpaudit.audit.protocol.evaluation import SelectionCounts, plan_evaluation
    from dpaudit.audit.protocol.two_sample import AttackChunk
    from dpaudit.audit.stats.rules import HeldOut
    from dpaudit.core.runner import concat_chunks, run_chunks

    root = as_seed_sequence(seed)
    s_sel0, s_sel1, _, _ = root.spawn(4)
    n_sel = round(0.3 * trials)
    kept = [concat_chunks(run_chunks(AttackChunk(normal_sampler, x, first), cap, s, chunk)) for x, s in
            ((0.0, s_sel0), (1.0, s_sel1))]
    st0, st1 = streamed_selection_seeds(as_seed_sequence(seed))
    more = [concat_chunks(run_chunks(AttackChunk(normal_sampler, x, first), n_sel - cap, s, chunk)) for x, s in
            ((0.0, st0), (1.0, st1))]
    g = selection_grid(kept[0], kept[1])
    le = [np.searchsorted(np.sort(m), g, side="right") for m in more]
    plan = plan_evaluation(HeldOut(), kept[0], kept[1], delta=1e-5, beta=0.05, fpr_levels=(1e-3, 1e-2),
                           streamed=SelectionCounts(g, le[0], le[1], n_sel - cap))
    return plan.dp.thresholds[0], plan, g


def test_above_the_cap_the_threshold_is_chosen_on_kept_and_streamed_runs(small_cap):
    kw = dict(epsilon=10.0, delta=1e-5, trials=20_000, seed=3, statistic=first)
    r = audit_mechanism(normal_sampler, 0.0, 1.0, execution=Execution(chunk_size=1_000), **kw)
    d = r.details
    assert d["n_selection"] == [6_000, 6_000] and d["n_evaluation"] == [14_000, 14_000]
    assert d["selection_runs"]["kept"] == small_cap and d["selection_runs"]["streamed"] == 4_000
    t, plan, g = _by_hand(20_000, 3, small_cap, 1_000)
    assert d["threshold_test"]["threshold"] == t and t in g
    assert d["selection_runs"]["grid"] == g.size
    # only the streamed runs changed: the same audit with the cap above its selection keeps all 6,000 runs
    two_sample.SELECTION_CAP = 10_000
    whole = audit_mechanism(normal_sampler, 0.0, 1.0, execution=Execution(chunk_size=1_000), **kw)
    assert "selection_runs" not in whole.details and whole.details["n_evaluation"] == [14_000, 14_000]
    assert 0.5 < r.epsilon_lower < 4.4 and 0.5 < whole.epsilon_lower < 4.4


def test_above_the_cap_other_rules_evaluate_the_rest(small_cap):
    r = audit_mechanism(normal_sampler, 0.0, 1.0, epsilon=10.0, delta=1e-5, trials=20_000, seed=3, statistic=first,
                        threshold="bonferroni", execution=Execution(chunk_size=1_000))
    assert r.details["n_selection"] == [2_000, 2_000] and r.details["n_evaluation"] == [18_000, 18_000]
    assert "selection_runs" not in r.details


def test_above_the_cap_a_contest_fits_on_the_kept_runs(small_cap):
    r = audit_mechanism(normal_sampler, 0.0, 1.0, epsilon=10.0, delta=1e-5, trials=10_000, seed=2,
                        statistic=["value", "projection"], execution=Execution(chunk_size=1_000))
    d = r.details
    assert d["n_selection"] == [3_000, 3_000] and d["n_evaluation"] == [7_000, 7_000]
    assert f"of {small_cap} selection runs" in d["attack"]["selected_on"]
    assert d["selection_runs"]["streamed"] == 1_000
    assert d["runs"] == 2 * (3_000 + 7_000)
    assert 0.0 <= r.epsilon_lower < 4.4


# ------------------------------------------------------------------ Dask: same answer, a killed worker survived
@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=50) as c, distributed.Client(c) as client:
        yield client


@pytest.mark.slow
def test_dask_gives_the_in_process_result_with_streamed_selection(small_cap, cluster):
    kw = dict(epsilon=10.0, delta=1e-5, trials=20_000, seed=11, statistic=first)
    here = audit_mechanism(normal_sampler, 0.0, 1.0, execution=Execution(chunk_size=1_000), **kw)
    there = audit_mechanism(normal_sampler, 0.0, 1.0, execution=Execution(chunk_size=1_000,
                                                                          executor=cluster.get_executor()), **kw)
    assert "selection_runs" in here.details
    assert dumps(there) == dumps(here)


class KillsItsWorkerOnce:
    """A sampler whose first call on a chunk of ``size`` runs (after a marker file is created) kills the worker
    process it runs in with SIGKILL: the chunk is lost with the worker and must be rerun elsewhere."""

    def __init__(self, marker: str, size: int):
        self.marker, self.size = marker, size

    def __call__(self, x, rng, size):
        if size == self.size:
            try:
                fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pass
            else:
                os.close(fd)
                os.kill(os.getpid(), signal.SIGKILL)
        return normal_sampler(x, rng, size)


@pytest.mark.slow
def test_a_killed_dask_worker_is_survived_with_the_same_answer(tmp_path, cluster):
    kw = dict(epsilon=10.0, delta=1e-5, trials=20_700, seed=13, statistic=first)
    # 14,490 evaluation runs per input: the last chunk of each evaluation job holds 490; the first such chunk to
    # run kills its worker, mid-run (selection done, other evaluation chunks in flight)
    sampler = KillsItsWorkerOnce(str(tmp_path / "killed"), 490)
    ref = audit_mechanism(normal_sampler, 0.0, 1.0, execution=Execution(chunk_size=1_000), **kw)
    got = audit_mechanism(sampler, 0.0, 1.0, execution=Execution(chunk_size=1_000, executor=cluster.get_executor()),
                          **kw)
    assert os.path.exists(tmp_path / "killed")  # a worker was killed mid-run
    assert dumps(got) == dumps(ref)


# ------------------------------------------------------------------ speed-ups that change no number
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=300),
       st.lists(st.floats(0.0, 1.0), min_size=1, max_size=40))
def test_inverted_cdf_index_is_numpys_quantile(values, levels):
    from dpaudit.audit.protocol.evaluation import inverted_cdf_index

    v, q = np.asarray(values), np.asarray(levels)
    assert np.array_equal(np.sort(v)[inverted_cdf_index(v.size, q)], np.quantile(v, q, method="inverted_cdf"))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=1, max_size=200), st.lists(st.integers(-6, 6), min_size=1, max_size=30))
def test_counts_at_and_auroc_are_exact(scores, thresholds):
    from dpaudit.audit.stats.attack_stats import auroc
    from dpaudit.audit.stats.thresholds import counts_at

    s, t = np.asarray(scores, dtype=float) / 2.0, np.unique(np.asarray(thresholds, dtype=float) / 2.0)
    assert np.array_equal(counts_at(s, t), [(s <= x).sum() for x in t])
    s1 = s[::-1] + 0.5
    pairs = (s1[:, None] > s[None, :]).sum() + 0.5 * (s1[:, None] == s[None, :]).sum()
    assert auroc(s, s1) == pairs / (s.size * s1.size)
