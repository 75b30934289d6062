"""Cross-fitted model choice inside the naive-Bayes and empirical-likelihood-ratio attacks (issue 15):
columns (values / increments / both) and bin counts chosen on the TRAINING sample alone, so that the
certified bound stays valid, and the choice finds the structure of cumulative releases."""

import math

import numpy as np
import pytest

from dpaudit.audit import audit_mechanism
from dpaudit.audit.attacks.families import ELR_BINS, NB_BINS, empirical_lr_statistic, naive_bayes_statistic
from dpaudit.audit.stats.thresholds import evaluate_test, select_test


def _limit(R, beta=0.05):
    return R * beta + 3 * math.sqrt(R * beta * (1 - beta))


def prefix_sums(x, rng, size, scale=1.0):
    """Cumulative sums of x + Laplace(scale) noise (scale 1 per coordinate: 5-DP for the pair below)."""
    a = np.asarray(x, dtype=float)
    return np.cumsum(a[None, :] + rng.laplace(0.0, scale, (size, a.size)), axis=1)


def prefix_sums_correct(x, rng, size):
    return prefix_sums(x, rng, size, scale=5.0 / 0.5)  # Lap(n/eps) for eps = 0.5, n = 5: correct


def discrete_laplace_hist(x, rng, size, eps=0.5):
    p = 1.0 - math.exp(-eps)
    a = np.asarray(x)
    return a[None, :] + rng.geometric(p, (size, a.size)) - rng.geometric(p, (size, a.size))


X, XP = np.ones(5), np.zeros(5)


def _bound(st, rng, mech, n):
    s0, s1 = st(mech(X, rng, n)), st(mech(XP, rng, n))
    c = select_test(s0[: n // 3], s1[: n // 3], delta=0.0, beta=0.05)
    return evaluate_test(s0[n // 3:], s1[n // 3:], c["threshold"], c["orientation"], delta=0.0, beta=0.05)["value"]


def prefix_sums_5(x, rng, size):
    return prefix_sums(x, rng, size, scale=5.0)  # exactly 1-DP for the pair below (5 x 1/5)


def test_naive_bayes_finds_the_increments_of_a_cumulative_release():
    rng = np.random.default_rng(0)
    tr0, tr1 = prefix_sums_5(X, rng, 20_000), prefix_sums_5(XP, rng, 20_000)
    auto = naive_bayes_statistic(tr0, tr1)
    assert "increments" in auto.description
    both = naive_bayes_statistic(tr0, tr1, columns="values+differences")
    assert "first differences" in both.description
    # on the same fresh draws the cross-fitted choice certifies more than the old default, which counts
    # a cumulative release's evidence twice (measured 0.815 vs 0.59, truth 1; on the benchmark's
    # PrefixSum at 10^6 trials 0.74 vs 0.52, where no test can certify more than about 0.82)
    b_auto = _bound(auto, np.random.default_rng(1), prefix_sums_5, 30_000)
    b_both = _bound(both, np.random.default_rng(1), prefix_sums_5, 30_000)
    assert b_auto > b_both + 0.1, (b_auto, b_both)


def test_naive_bayes_choices_are_recorded_and_explicit_ones_kept():
    rng = np.random.default_rng(2)
    tr0, tr1 = prefix_sums(X, rng, 4_000), prefix_sums(XP, rng, 4_000)
    st = naive_bayes_statistic(tr0, tr1, bins=8, columns="values")
    assert "5 coordinate(s)" in st.description and "(8 quantile bins each)" in st.description
    assert "first differences" in naive_bayes_statistic(tr0, tr1, differences=True).description
    auto = naive_bayes_statistic(tr0, tr1)
    assert any(f"({k} quantile bins each)" in auto.description for k in NB_BINS)
    # deterministic: the same training sample gives the same statistic
    again = naive_bayes_statistic(tr0, tr1)
    assert again.description == auto.description
    assert np.array_equal(again(tr0[:50]), auto(tr0[:50]))


@pytest.mark.parametrize("kw,name", [({"columns": "diffs"}, "columns"), ({"bins": 0}, "bins")])
def test_naive_bayes_validates_its_arguments(kw, name):
    rng = np.random.default_rng(3)
    with pytest.raises(ValueError, match=name):
        naive_bayes_statistic(prefix_sums(X, rng, 100), prefix_sums(XP, rng, 100), **kw)


def test_naive_bayes_power_on_a_broken_prefix_sum():
    r = audit_mechanism(prefix_sums, X, XP, epsilon=0.5, trials=20_000, seed=4, statistic="naive-bayes")
    assert r.violation and r.epsilon_lower <= 5.0
    assert "increments" in r.details["attack"]["description"]


@pytest.mark.parametrize("family,sampler,claim,R", [
    ("naive-bayes", prefix_sums_correct, 0.5, 40),
    ("naive-bayes", discrete_laplace_hist, 0.5, 40),
    ("empirical-lr", prefix_sums_correct, 0.5, 30),
])
def test_cross_fitted_families_sound_on_correct_mechanisms(family, sampler, claim, R):
    """The pair differs by 1 in every coordinate: discrete_laplace_hist is 2.5-DP for it, so the claim
    0.5 is checked on the single-coordinate pair there; the prefix sums are exactly 0.5-DP."""
    x, xp = (X, XP) if sampler is prefix_sums_correct else (np.ones(3), np.array([2.0, 1.0, 1.0]))
    hits = sum(audit_mechanism(sampler, x, xp, epsilon=claim, trials=1_500, seed=700 + s,
                               statistic=family).violation for s in range(R))
    assert hits <= _limit(R), (family, hits)


def test_empirical_lr_bin_count_chosen_on_training_data():
    rng = np.random.default_rng(5)
    tr0, tr1 = prefix_sums(X[:2], rng, 20_000), prefix_sums(XP[:2], rng, 20_000)
    st = empirical_lr_statistic(tr0, tr1)
    assert any(f"({k} per coordinate" in st.description for k in ELR_BINS)
    fixed = empirical_lr_statistic(tr0, tr1, bins=4)
    assert "(4 per coordinate" in fixed.description
