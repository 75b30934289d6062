"""TreeAggregation (dpaudit/mechanisms/tree_aggregation.py): the depth formula by enumerating the
completed dyadic nodes, dp_accounting's SingleEpochTreeAggregationDpEvent numbers, the prefix-sum
noise of the sampler, accountants, audits."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpaudit import PLDAccountant, RDPAccountant, make_accountant
from dpaudit.accounting.base import ACCOUNTANTS
from dpaudit.audit import audit_mechanism
from dpaudit.conversions import gaussian_epsilon
from dpaudit.core.validation import UnsupportedMechanismError
from dpaudit.mechanisms import TreeAggregation
from dpaudit.mechanisms.tree_aggregation import prefix_noise_matrix, tree_depth
from dpaudit.testing import assert_accountant_sound, exact_epsilon


def _nodes_containing(step, steps):
    """Completed dyadic nodes [j 2^k + 1, (j + 1) 2^k] ((j + 1) 2^k <= steps) holding ``step``."""
    out, k = 0, 0
    while 2 ** k <= steps:
        j = (step - 1) // 2 ** k
        out += (j + 1) * 2 ** k <= steps
        k += 1
    return out


def test_depth_is_the_most_completed_nodes_a_step_lies_in():
    for steps in range(1, 300):
        worst = max(_nodes_containing(s, steps) for s in range(1, steps + 1))
        assert tree_depth(steps) == worst == math.ceil(math.log2(steps + 1)), steps
    # ceil(log2 T) + 1 counts nodes of the full tree that are never completed: T = 3 has depth 2, not 3
    assert tree_depth(3) == 2 and math.ceil(math.log2(3)) + 1 == 3
    assert tree_depth(0) == 0


def test_prefix_noise_matrix_uses_the_binary_decomposition():
    a = prefix_noise_matrix(5)
    # nodes: level 0 [1]..[5], level 1 [1,2] [3,4], level 2 [1,4]
    assert a.shape == (5, 8)
    assert np.array_equal(a.sum(axis=1), [bin(t).count("1") for t in range(1, 6)])
    assert a[4, 4] == 1 and a[4, 7] == 1  # s_5 = [5] + [1,4]
    assert a[2, 2] == 1 and a[2, 5] == 1  # s_3 = [3] + [1,2]


@pytest.mark.parametrize("steps", [1, 2, 3, 7, 8, 100, 1000])
def test_prefix_sums_leak_exactly_the_node_release(steps):
    # the prefix at 2^k is the node [1, 2^k] alone: the prefix sums reveal all depth nodes of step 1
    m = TreeAggregation(1.7, steps, sensitivity=0.6)
    assert m.prefix_sum_mu() ** 2 == pytest.approx(m.depth * (0.6 / 1.7) ** 2, rel=1e-9)


dpa = pytest.importorskip("dp_accounting")


@pytest.mark.parametrize("nm,steps", [(1.0, 1), (0.7, 3), (2.5, 1000), (1.3, [7, 3, 4]), (0.9, [1, 1, 1]),
                                      (4.0, [0, 1023, 1024]), (1.1, [2 ** 20])])
def test_matches_dp_accounting_single_epoch_tree_event(nm, steps):
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    orders = [1.25, 1.5, 2.0, 3.0, 8.0, 32.0, 256.0]
    acc = rdp.RdpAccountant(orders, rdp.NeighborRel.REPLACE_SPECIAL)
    acc.compose(dp_event.SelfComposedDpEvent(dp_event.SingleEpochTreeAggregationDpEvent(nm, steps), 3))
    theirs = np.asarray(acc._rdp)
    ours = 3 * TreeAggregation(nm, steps).rdp(orders)
    assert np.all(ours >= theirs) and np.allclose(ours, theirs, rtol=1e-13)
    # and the (epsilon, delta) of our RDP accountant on the same orders is no larger than theirs + slack
    assert RDPAccountant(orders=orders).compose(TreeAggregation(nm, steps), 3).epsilon(1e-5) <= acc.get_epsilon(1e-5) * (1 + 1e-9)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(st.integers(0, 10 ** 6), min_size=1, max_size=5), sigma=st.floats(0.2, 20.0),
       sens=st.floats(0.1, 3.0))
def test_property_the_curves_are_a_gaussian_with_sqrt_depth_sensitivity(steps, sigma, sens):
    m = TreeAggregation(sigma, steps, sensitivity=sens)
    d = max(s.bit_length() for s in steps)
    assert m.depth == d
    orders = np.array([1.5, 2.0, 16.0])
    ref = orders * d * sens ** 2 / (2 * sigma ** 2)
    assert np.all(m.rdp(orders) >= ref) and np.allclose(m.rdp(orders), ref, rtol=1e-13, atol=0)
    assert m.zcdp() >= d * sens ** 2 / (2 * sigma ** 2)
    # more steps never decrease the curve
    more = TreeAggregation(sigma, [s + 1 for s in steps], sensitivity=sens)
    assert np.all(more.rdp(orders) >= m.rdp(orders))


def test_pld_is_the_exact_gaussian_and_other_accountants_are_above():
    m = TreeAggregation(2.0, [100, 50], sensitivity=1.5)  # depth 7
    ref = float(gaussian_epsilon(2.0 / math.sqrt(4), 1e-6, sensitivity=1.5 * math.sqrt(7)))
    assert exact_epsilon(m, 1e-6, 4) == pytest.approx(ref, rel=1e-12)
    lo, up = PLDAccountant().compose(m, 4).epsilon_interval(1e-6)
    assert lo <= ref * (1 + 1e-12) and up >= ref * (1 - 1e-12) and up <= ref * 1.01
    for name in sorted(ACCOUNTANTS):
        try:
            acc = make_accountant(name).compose(m, 4)
        except UnsupportedMechanismError:  # (the pure-DP accountant: a Gaussian is not pure DP)
            continue
        assert acc.epsilon(1e-6) >= ref * (1 - 1e-12), name


def test_empty_trees_release_nothing():
    m = TreeAggregation(1.0, [0, 0])
    assert m.depth == 0 and m.zcdp() == 0.0 and np.all(m.rdp([2.0, 5.0]) == 0)
    assert PLDAccountant().compose(m, 3).epsilon(1e-5) == 0.0


def test_sampler_prefix_sums_and_their_noise_covariance():
    m = TreeAggregation(0.8, [6, 5])
    value = np.arange(11, dtype=float)
    draws = m.sample(value, np.random.default_rng(1), 100_000)
    assert draws.shape == (100_000, 11)
    means = np.concatenate([np.cumsum(value[:6]), np.cumsum(value[6:])])
    assert np.all(np.abs(draws.mean(axis=0) - means) < 5 * 0.8 * 3 / math.sqrt(100_000))
    cov = np.cov((draws - means).T)
    a6, a5 = prefix_noise_matrix(6), prefix_noise_matrix(5)
    ref = np.zeros((11, 11))
    ref[:6, :6], ref[6:, 6:] = 0.64 * a6 @ a6.T, 0.64 * a5 @ a5.T
    assert np.max(np.abs(cov - ref)) < 0.03  # sd of each entry <= 0.64 * 3 * sqrt(2/1e5) = 0.009
    vec = m.sample(np.ones((11, 3)), np.random.default_rng(2))
    assert vec.shape == (11, 3)


def _llr_sampler(m):
    x, xp, llr = m.prefix_sum_test()
    return (lambda v, rng, size: llr(m.sample(v, rng, size))), x, xp


def test_testing_helpers_accept_it_through_the_prefix_sum_statistic():
    m = TreeAggregation(1.0, [15, 4])
    s, x, xp = _llr_sampler(m)
    out = assert_accountant_sound(PLDAccountant().compose(m), m, delta=1e-5, sampler=s, x=x, x_prime=xp,
                                  trials=4000, seed=3)
    assert out["audit"] is not None and out["exact"] is not None


def test_audit_never_flags_the_true_curve_and_flags_an_under_counted_depth():
    m = TreeAggregation(1.0, 15)  # depth 4: mu = 2
    s, x, xp = _llr_sampler(m)
    true_eps = float(gaussian_epsilon(1.0, 1e-2, sensitivity=2.0))
    flagged = sum(audit_mechanism(s, x, xp, epsilon=true_eps, delta=1e-2, trials=4000, seed=k).violation
                  for k in range(5))
    assert flagged == 0  # measured 0 / 10 (5 kept for time)
    # a claim that counts one node per record (mu = 1) is contradicted
    wrong = float(gaussian_epsilon(1.0, 1e-2, sensitivity=1.0))
    res = audit_mechanism(s, x, xp, epsilon=wrong, delta=1e-2, trials=50_000, seed=4)
    assert res.violation and res.epsilon_lower > wrong


@pytest.mark.parametrize("kw,name", [({"sigma": -1.0}, "sigma"), ({"sigma": 1.0, "step_counts": []}, "step_counts"),
                                     ({"sigma": 1.0, "step_counts": [3, -1]}, "step_counts"),
                                     ({"sigma": 1.0, "step_counts": 2.5}, "step_counts"),
                                     ({"sigma": 1.0, "step_counts": [True]}, "step_counts"),
                                     ({"sigma": 1.0, "step_counts": 2 ** 41}, "step_counts"),
                                     ({"sigma": 1.0, "sensitivity": math.inf}, "sensitivity"),
                                     ({"sigma": 1.0, "neighbouring": "x"}, "neighbouring")])
def test_validation_names_the_argument(kw, name):
    with pytest.raises(ValueError, match=name):
        TreeAggregation(**kw)


def test_sampler_refuses_a_stream_of_the_wrong_length():
    with pytest.raises(ValueError, match="value"):
        TreeAggregation(1.0, [3, 2]).sample(np.zeros(4), np.random.default_rng(0))
