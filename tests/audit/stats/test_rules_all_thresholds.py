"""The all-thresholds rule (issue 29): the union bound over order statistics, its levels, power and false alarms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.audit.stats.binomial import cp_lower, cp_upper
from dpaudit.audit.stats.gdp import gdp_epsilon_of
from dpaudit.audit.stats.rules import (
    AllThresholds,
    HeldOut,
    all_thresholds_test,
    auto_rule,
    order_statistic_levels,
    threshold_rule,
    threshold_test,
)
from dpaudit.audit.stats.threshold_limit import threshold_audit_limit


@pytest.mark.parametrize("n", [1, 2, 7, 100, 4097, 100_001])
@pytest.mark.parametrize("s", [0.0, 1.0, 1.2, 2.0])
def test_levels_spend_at_most_beta(n, s):
    total = math.fsum(order_statistic_levels(np.arange(n), n, 0.05, s).tolist())
    assert 0.05 * (1 - 1e-9) <= total * (1 + 2e-10) and total <= 0.05


def test_levels_favour_both_tails():
    a = order_statistic_levels([0, 10, 499, 989, 999], 1000, 0.05)
    assert a[0] == a[-1] and a[1] == a[3] and a[0] > a[1] > a[2]


def _family_fails(x_sorted, q, bounds, n):
    """The union of the events E_k = {some t has K(t) <= k and q(t) > U_k}, K(t) = #{x > t}, q(t) = P[X > t]
    (the proof of the lemma: they cover every failure). K(t) <= k exactly for t at or above the (n-k)-th smallest
    sample, where the non-increasing q is largest at that sample."""
    return any(q(x_sorted[n - k - 1]) > bounds[k] for k in range(n))


@pytest.mark.parametrize("law", ["uniform", "three atoms"])
def test_union_over_order_statistics_holds(law):
    """The lemma of AllThresholds: over every threshold at once, P[some rate above its bound] <= sum of levels.
    With a large budget (0.3) the failure rate is measurable; the test fails if the levels over-spend."""
    n, reps, budget = 12, 3000, 0.3
    bounds = cp_upper(np.arange(n), n, order_statistic_levels(np.arange(n), n, budget))
    rng = np.random.default_rng(29)
    if law == "uniform":
        def q(x):
            return 1.0 - x

        draw = rng.random
    else:
        atoms, probs = np.array([0.0, 1.0, 2.0]), np.array([0.5, 0.3, 0.2])

        def q(x):
            return float(np.sum(probs[atoms > x]))

        def draw(size):
            return rng.choice(atoms, size=size, p=probs)
    fails = sum(_family_fails(np.sort(draw(n)), q, bounds, n) for _ in range(reps))
    assert cp_lower(fails, reps, 0.001) <= budget
    if law == "uniform":
        assert fails > 0.2 * budget * reps  # the bound is not vacuous: the union is nearly tight here


def test_valid_rule_on_identical_distributions():
    rng = np.random.default_rng(7)
    positives = 0
    for _ in range(30):
        a, b = rng.normal(size=2000), rng.normal(size=2000)
        positives += all_thresholds_test(a[:0], b[:0], a, b, delta=0.0, beta=0.3)["value"] > 0
    assert positives <= 9  # nominal 30 %


def test_power_close_to_the_limit_on_all_scores():
    """Gaussian, mu = 1, delta 1e-5, 10^4 draws per input: every score certifies (fixed statistic)."""
    rng = np.random.default_rng(3)
    n = 10_000
    s0, s1 = rng.normal(0, 1, n), rng.normal(1, 1, n)
    lim = threshold_audit_limit("gaussian", n, delta=1e-5, mu=1.0)["epsilon"]
    r = all_thresholds_test(s0[:3000], s1[:3000], s0[3000:], s1[3000:], delta=1e-5, beta=0.05)
    assert r["n0"] == n and r["pooled_selection"]
    assert 0.78 * lim <= r["value"] <= gdp_epsilon_of(1.0, 1e-5)
    fitted = threshold_test(AllThresholds(pool_selection=False), s0[:3000], s1[:3000], s0[3000:], s1[3000:],
                            delta=1e-5, beta=0.05)
    assert fitted["n0"] == 7000 and fitted["value"] < r["value"]


def test_rule_names_and_validation():
    assert isinstance(threshold_rule("all-thresholds"), AllThresholds)
    with pytest.raises(ValueError, match="exponent"):
        AllThresholds(exponent=-1.0)
    with pytest.raises(ValueError, match="beta"):
        cp_upper([1, 2], 10, np.array([0.1, 0.0]))


def test_streamed_plan_equals_kept_scores_on_a_discrete_statistic():
    """Counts at a grid fixed on the selection scores (all distinct values of a discrete statistic) give the same
    bound as every evaluation score (pool_selection off: the same scores certify)."""
    from dpaudit.audit.stats.rules import certify_plan, counts_at, plan_tests

    rng = np.random.default_rng(11)
    p = math.exp(-1.0)
    s0 = np.clip(rng.geometric(1 - p, 20_000) - rng.geometric(1 - p, 20_000), -4, 5).astype(float)
    s1 = np.clip(rng.geometric(1 - p, 20_000) - rng.geometric(1 - p, 20_000) + 1, -4, 5).astype(float)
    rule = AllThresholds(pool_selection=False)
    plan = plan_tests(rule, s0[:6000], s1[:6000], delta=0.0, beta=0.05)
    ev0, ev1 = s0[6000:], s1[6000:]
    if not (set(np.unique(ev0)) | set(np.unique(ev1))) <= set(plan.thresholds):
        pytest.skip("an evaluation value unseen in selection")
    streamed = certify_plan(plan, counts_at(ev0, plan.thresholds), counts_at(ev1, plan.thresholds), ev0.size,
                            ev1.size, delta=0.0)
    kept = threshold_test(rule, s0[:6000], s1[:6000], ev0, ev1, delta=0.0, beta=0.05)
    assert streamed["value"] == pytest.approx(kept["value"], rel=1e-12, abs=1e-12)
    assert 0.5 < kept["value"] <= 1.0


def test_auto_keeps_heldout_where_measured_best():
    assert isinstance(auto_rule(fit_free=True, values=None)[0], HeldOut)
    assert isinstance(auto_rule(fit_free=False, values=2)[0], HeldOut)


# ---------------------------------------------------------------------------------------------- false alarms
def _tight(kind, n, rng):
    """Scores of a tight mechanism on its two inputs (the value of the output) and its exact (epsilon, delta)."""
    if kind == "laplace":
        return rng.laplace(0.0, 1.0, n), rng.laplace(1.0, 1.0, n), 1.0, 0.0
    q = math.exp(1.0) / (1.0 + math.exp(1.0))
    return (rng.random(n) >= q).astype(float), (rng.random(n) < q).astype(float), 1.0, 0.0


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["laplace", "randomized-response"])
@pytest.mark.parametrize("rule", [HeldOut(), AllThresholds()])
def test_false_alarms_at_most_nominal_over_200_seeds(kind, rule):
    """A tight mechanism audited at its true epsilon: certified epsilon_lower > epsilon at most 5 % of the time
    (the Clopper-Pearson interval of the observed rate reaches below 5 %)."""
    alarms = 0
    for seed in range(200):
        s0, s1, eps, delta = _tight(kind, 4000, np.random.default_rng([29, seed]))
        alarms += threshold_test(rule, s0[:1200], s1[:1200], s0[1200:], s1[1200:], delta=delta,
                                 beta=0.05)["value"] > eps
    assert cp_lower(alarms, 200, 0.025) <= 0.05


@pytest.mark.parametrize("n", [4097, 123_457, 10**7])
@pytest.mark.parametrize("s", [1.0, 1.2, 2.0])
def test_share_sum_against_mpmath(n, s):
    """Z = sum_k (min(k, n-1-k) + 1)^-s from a_0 = beta / Z, against mpmath's Hurwitz zeta: never below it."""
    import mpmath

    m = n // 2
    h = mpmath.harmonic(m) if s == 1.0 else mpmath.zeta(s, 1) - mpmath.zeta(s, m + 1)
    ref = 2 * h + ((mpmath.mpf(m) + 1) ** -s if n % 2 else 0)
    z = 0.05 / float(order_statistic_levels(0, n, 0.05, s))
    assert z >= float(ref) * (1 - 1e-15) and z <= float(ref) * (1 + 1e-9)
