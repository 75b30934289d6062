"""Choosing the attack, the neighbouring pair and the threshold rule on the selection sample (issue 15)."""

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from dpaudit.audit import audit_mechanism
from dpaudit.audit.attacks.selection import TieBreak, attack_choice, boundary_grid, statdp_pairs, tiebreak_seed
from dpaudit.audit.protocol.two_sample import audit_scores
from dpaudit.core.execution import Execution


def _limit(R, beta=0.05):
    return R * beta + 3 * math.sqrt(R * beta * (1 - beta))


def rr(x, rng, size, eps=0.3):
    keep = rng.random(size) < math.exp(eps) / (1 + math.exp(eps))
    return np.where(keep, x, 1 - x).astype(float)


def noisy_max_index(x, rng, size):
    """Report-noisy-max with Laplace(2/eps) noise, eps = 1, returning the index (correct)."""
    a = np.asarray(x, dtype=float)
    return np.argmax(a[None, :] + rng.laplace(0.0, 2.0, (size, a.size)), axis=1)


def svt_no_query_noise(x, rng, size):
    """Lyu et al. 2017 Alg. 5 (no noise on the queries: not eps-DP for any eps), eps = 1."""
    a = np.asarray(x, dtype=float)
    return (a[None, :] >= rng.laplace(0.0, 2.0, (size, 1)) + 1.0).astype(int)


def test_statdp_patterns():
    pats = statdp_pairs(4)
    assert len(pats) == 8
    for name, a, b in pats:
        assert a.shape == b.shape == (4,) and np.max(np.abs(a - b)) <= 1.0, name


def test_pair_search_picks_a_counterexample_and_records_it():
    r = audit_mechanism(svt_no_query_noise, None, None, pairs=statdp_pairs(5), epsilon=1.0, trials=4_000, seed=1)
    assert r.violation
    inp = r.details["inputs"]
    assert inp["name"] in [p[0] for p in statdp_pairs(5)] and len(inp["candidates"]) == 8
    assert r.details["runs"] == 8 * 2 * 1_200 + 2 * 2_800
    fam = r.details["attack"]
    assert fam["family"] and fam["candidates"] and "selection" in fam["selected_on"]


def test_pair_search_is_sound_on_a_correct_mechanism():
    R = 20
    hits = sum(audit_mechanism(noisy_max_index, None, None, pairs=statdp_pairs(3)[:4], epsilon=1.0, trials=1_000,
                               seed=100 + s, statistic="empirical-lr").violation for s in range(R))
    assert hits <= _limit(R)


def test_tiebreak_coding_is_monotone_and_grid_is_deterministic():
    tb = TieBreak([0.0, 1.0, 2.5])
    s = np.array([-1.0, 0.0, 0.5, 1.0, 2.5, 3.0])
    codes = tb.codes(s)
    assert codes.tolist() == [0, 1, 2, 3, 5, 6] and np.all(np.diff(codes) > 0)
    u = np.full(s.size, 0.3)
    assert np.array_equal(tb(s, u), codes)  # deterministic by default
    assert boundary_grid(tb).tolist() == [0.5, 1.5, 3.5, 5.5]
    rt = TieBreak([0.0, 1.0, 2.5], randomize=True)
    assert np.all(np.diff(rt(s, u)) > 0) and np.allclose(rt(s, u) - codes, 0.3)
    assert boundary_grid(rt).tolist() == [1.0, 3.0, 5.0, 6.0]
    ss = np.random.SeedSequence(5).spawn(3)[1]
    a = np.random.default_rng(tiebreak_seed(ss)).random(4)
    b = np.random.default_rng(tiebreak_seed(ss)).random(4)
    assert np.array_equal(a, b) and not np.array_equal(a, np.random.default_rng(ss).random(4))


def test_randomised_tie_breaking_same_result_whatever_the_executor():
    kw = dict(epsilon=0.3, trials=3_000, seed=7)
    here = Execution(chunk_size=300)
    a = audit_mechanism(rr, 0, 1, statistic="empirical-lr", execution=here, **kw)
    with ThreadPoolExecutor(3) as ex:
        b = audit_mechanism(rr, 0, 1, statistic="empirical-lr", execution=Execution(executor=ex, chunk_size=300), **kw)
    assert a.to_dict() == b.to_dict() and a.details["attack"]["tie_break"].startswith("category")
    randomised = attack_choice("empirical-lr", randomize_ties=True)
    c = audit_mechanism(rr, 0, 1, statistic=randomised, execution=here, **kw)
    with ThreadPoolExecutor(3) as ex:
        d = audit_mechanism(rr, 0, 1, statistic=randomised, execution=Execution(executor=ex, chunk_size=300), **kw)
    assert c.to_dict() == d.to_dict() and c.details["attack"]["tie_break"].startswith("randomised")


def test_combined_rule_spends_half_on_each():
    rng = np.random.default_rng(0)
    s0, s1 = rng.normal(size=(2, 4_000))
    s1 = s1 + 1.0
    r = audit_scores(s0[:1000], s1[:1000], s0[1000:], s1[1000:], epsilon=1.0, delta=0.0, confidence=0.95,
                     threshold="combined")
    t = r.details["threshold_test"]
    assert t["beta"] == pytest.approx(0.05)
    h = audit_scores(s0[:1000], s1[:1000], s0[1000:], s1[1000:], epsilon=1.0, delta=0.0, confidence=0.975,
                     threshold="heldout")
    assert t["heldout_value"] == pytest.approx(h.details["threshold_test"]["value"])
    assert r.epsilon_lower == pytest.approx(max(t["heldout_value"], t["bonferroni_value"]), abs=1e-12)


def geo(x, rng, size, eps=0.3):
    """x + two-sided geometric noise (discrete Laplace): exactly eps-DP, many tied outputs."""
    p = 1.0 - math.exp(-eps)
    return x + rng.geometric(p, size) - rng.geometric(p, size)


def test_auto_rule_by_statistic_type():
    r = audit_mechanism(rr, 0, 1, epsilon=0.3, trials=2_000, seed=3, statistic="value")
    assert r.details["selection_rule"]["used"] == "heldout"  # two values: nothing to gain from a grid
    g = audit_mechanism(geo, 0, 1, epsilon=0.3, trials=2_000, seed=3, statistic="empirical-lr")
    assert g.details["selection_rule"]["used"] == "bonferroni"
    assert g.details["selection_rule"]["grid"] == "category boundaries"


def test_small_effect_zero_rate_regression():
    """Before issue 15 the held-out rule (the only default) certified exactly 0 in most runs with small
    effects on discrete outputs; the rule chosen by output type (Bonferroni over the category boundaries
    of the empirical likelihood ratio) certifies something more often. 40 seeds."""
    R = 40
    kw = dict(epsilon=0.3, trials=3_000, statistic="empirical-lr")
    zero_h = sum(audit_mechanism(geo, 0, 1, seed=s, threshold="heldout", **kw).epsilon_lower == 0 for s in range(R))
    zero_a = sum(audit_mechanism(geo, 0, 1, seed=s, **kw).epsilon_lower == 0 for s in range(R))
    assert zero_a < zero_h, (zero_h, zero_a)


def test_low_fpr_region_and_both_orientations():
    """A large epsilon is decided at a tiny false-positive rate: randomized response with eps = 5 at
    20,000 trials certifies > 4; the leak in the lower tail (x' below x) is found too."""
    def rr5(x, rng, size):
        return rr(x, rng, size, eps=5.0)

    r = audit_mechanism(rr5, 0, 1, epsilon=4.0, trials=20_000, seed=2)
    assert r.violation and 4.0 < r.epsilon_lower <= 5.0
    d = audit_mechanism(rr5, 1, 0, epsilon=4.0, trials=20_000, seed=2)
    assert d.violation and 4.0 < d.epsilon_lower <= 5.0


def test_bad_arguments():
    with pytest.raises(ValueError, match="selection"):
        audit_mechanism(rr, 0, 1, epsilon=1.0, trials=100, threshold="best")
    with pytest.raises(ValueError, match="statistic"):
        audit_mechanism(rr, 0, 1, epsilon=1.0, trials=100, statistic="nope")
    with pytest.raises(ValueError, match="pairs"):
        audit_mechanism(rr, 0, 1, epsilon=1.0, trials=100, pairs=[(1,)])
    with pytest.raises(ValueError, match="x_prime"):
        audit_mechanism(rr, None, None, epsilon=1.0, trials=100)
    with pytest.raises(ValueError, match="candidate pairs"):
        audit_mechanism(rr, 0, 1, epsilon=1.0, trials=100, statistic=lambda o: o[:, 0], pairs=[(0, 1)])
    with pytest.raises(ValueError, match="encode"):
        audit_mechanism(rr, 0, 1, epsilon=1.0, trials=100, encode=3)


@pytest.mark.slow
def test_small_effect_rules_measured():
    """Zero rate and mean bound of the rules over 200 seeds on a small discrete effect (the numbers of
    docs/attacks-benchmark.md come from benchmarks/dp_testing_suite.py rules)."""
    R = 200
    out = {}
    for rule in ("heldout", "bonferroni", "combined", "auto"):
        b = np.array([audit_mechanism(geo, 0, 1, epsilon=0.3, trials=3_000, seed=s, statistic="empirical-lr", threshold=rule).epsilon_lower for s in range(R)])
        out[rule] = (np.mean(b == 0), np.mean(b))
    assert out["auto"][0] < out["heldout"][0]
    assert out["combined"][0] < out["heldout"][0]
    assert all(v[1] <= 0.3 for v in out.values())  # means of valid lower bounds stay below the truth


def geometric_noise(x, rng, size, eps=0.5):
    """Two-sided geometric (discrete Laplace) noise on an integer count: exactly eps-DP for x, x +- 1."""
    p = 1.0 - math.exp(-eps)
    return x + rng.geometric(p, size) - rng.geometric(p, size)


def test_fit_free_winner_chooses_its_threshold_on_all_selection_runs():
    # the output value learns nothing from the training half: when it wins, every selection run picks the
    # threshold (held-out), not only the validation half; a fitted winner keeps the validation half
    r = audit_mechanism(rr, 0, 1, epsilon=0.3, trials=4_000, seed=3)
    a = r.details["attack"]
    assert a["family"] == "value" and a["threshold_on"].startswith("all selection runs")
    assert r.details["selection_rule"]["used"] == "heldout"
    assert r.details["n_threshold_selection"] == [1_200, 1_200] == r.details["n_selection"]
    v = audit_mechanism(lambda x, rng, size: np.asarray(x, float) + rng.laplace(0, 1, (size, 2)), [0, 0], [1, 1],
                        epsilon=2.0, trials=4_000, seed=3)
    assert v.details["attack"]["family"] != "value" and v.details["attack"]["threshold_on"] == "validation half"
    assert v.details["n_threshold_selection"] == [600, 600]


def test_fit_free_threshold_on_all_selection_runs_is_sound_and_has_power():
    # soundness where the claim is exact (discrete Laplace at its own epsilon, many tied values), and power on
    # the same mechanism claimed at half its epsilon
    R = 100
    runs = [audit_mechanism(geometric_noise, 0, 1, epsilon=0.5, trials=2_000, seed=500 + s) for s in range(R)]
    assert sum(r.details["attack"]["family"] == "value" for r in runs) >= R // 4  # the path under test is taken (38 of 100)
    assert sum(r.violation for r in runs) <= _limit(R)
    assert audit_mechanism(geometric_noise, 0, 1, epsilon=0.25, trials=20_000, seed=7).violation


def test_one_run_audit_records_that_no_selection_threshold_is_used():
    r = audit_mechanism(rr, 0, 1, epsilon=0.3, trials=2_000, seed=3, method="one-run")
    assert r.details["attack"]["threshold_on"].startswith("not used (one-run")


def test_a_single_fit_free_statistic_records_that_all_selection_runs_pick_the_threshold():
    r = audit_mechanism(rr, 0, 1, epsilon=0.3, trials=4_000, seed=3, statistic="value")
    assert r.details["attack"]["threshold_on"] == "all selection runs (nothing to fit or compare)"
    assert r.details["n_threshold_selection"] == [1_200, 1_200]
