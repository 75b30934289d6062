"""PermuteAndFlip (dpaudit/mechanisms/permute_and_flip.py): the exact output law against an
mpmath enumeration of all orders, the sampler against it (chi-square) and against report-noisy-max
with exponential noise, exact epsilon of concrete pairs below the claim, accountants, audits."""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from dpaudit import PLDAccountant, make_accountant
from dpaudit.accounting.base import ACCOUNTANTS
from dpaudit.audit import audit_mechanism
from dpaudit.core.validation import UnsupportedMechanismError
from dpaudit.mechanisms import PermuteAndFlip
from dpaudit.mechanisms.permute_and_flip import MAX_EXACT_CANDIDATES, permute_and_flip_log_pmf
from dpaudit.testing import assert_accountant_sound, assert_audit_consistent, exact_epsilon


def _pmf_by_orders_mp(scores, eps, sens=1):
    """P(output = r) by enumerating all n! visiting orders (McKenna & Sheldon 2020, Algorithm 1)."""
    q = [mp.mpf(v) for v in scores]
    top = max(q)
    p = [mp.e ** (mp.mpf(eps) * (v - top) / (2 * mp.mpf(sens))) for v in q]
    n = len(q)
    out = [mp.mpf(0)] * n
    w = 1 / mp.factorial(n)
    for perm in itertools.permutations(range(n)):
        rest = mp.mpf(1)
        for r in perm:
            out[r] += w * rest * p[r]
            rest *= 1 - p[r]
    return out


@pytest.mark.parametrize("scores,eps,sens", [
    ([0.0, 0.0], 1.0, 1.0), ([0.0, 1.0, 2.5, 2.5, -3.0], 1.0, 1.0), ([3.0, -1.0, 0.5, 7.0, 7.0, 2.0], 0.3, 2.0),
    ([0.0, -40.0, -400.0, -4000.0], 2.0, 1.0), ([1e-9, 0.0, -1e-9], 1e-6, 1.0), ([5.0], 1.0, 1.0)])
def test_pmf_matches_the_enumeration_of_orders(scores, eps, sens):
    mp.mp.dps = 40
    got = permute_and_flip_log_pmf(scores, eps, sens)
    ref = _pmf_by_orders_mp(scores, eps, sens)
    for g, r in zip(got, ref):
        assert abs(mp.mpf(g) - mp.log(r)) < 1e-13 * max(1, abs(mp.log(r))), (g, r)


def test_pmf_for_many_candidates_sums_to_one_and_orders_by_score():
    rng = np.random.default_rng(3)
    q = rng.normal(0, 5, 1000)
    lp = permute_and_flip_log_pmf(q, 0.7)
    assert abs(float(np.sum(np.exp(lp))) - 1.0) < 1e-12
    order = np.argsort(q)
    assert np.all(np.diff(lp[order]) >= -1e-12)  # a higher score is never less likely


@pytest.mark.parametrize("scores,eps", [([0.0, 1.0, 2.5, 2.5, -3.0], 1.0), ([0.0, 0.0, 0.0], 5.0),
                                        ([4.0, 0.0, -1.0, 3.0], 0.5)])
def test_sampler_has_the_exact_law(scores, eps):
    m = PermuteAndFlip(eps)
    draws = m.sample(np.array(scores), np.random.default_rng(7), 200_000)
    assert draws.shape == (200_000,)
    counts = np.bincount(draws, minlength=len(scores))
    expected = np.exp(permute_and_flip_log_pmf(scores, eps)) * draws.size
    assert stats.chisquare(counts, expected).pvalue > 1e-4


def test_law_equals_report_noisy_max_with_exponential_noise():
    # Ding et al. 2021: argmax(q + Exp(scale 2 Delta/eps)) has the same law (independent of eq. (1))
    q, eps, sens = np.array([0.0, 1.0, 2.5, 2.4, -3.0]), 1.3, 1.5
    rng = np.random.default_rng(11)
    n = 400_000
    rnm = np.argmax(q + rng.exponential(2 * sens / eps, (n, q.size)), axis=1)
    counts = np.bincount(rnm, minlength=q.size)
    expected = np.exp(permute_and_flip_log_pmf(q, eps, sens)) * n
    assert stats.chisquare(counts, expected).pvalue > 1e-4


def test_sampler_batches_score_matrices():
    m = PermuteAndFlip(1.0)
    scores = np.array([[0.0, 10.0, 0.0], [50.0, 0.0, 0.0]])
    out = m.sample(scores, np.random.default_rng(0), 5)
    assert out.shape == (5, 2)
    assert np.mean(out[:, 0] == 1) >= 0.6 and np.all(out[:, 1] == 0)


_vec = st.lists(st.floats(-20, 20), min_size=1, max_size=7)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(q=_vec, shift=st.lists(st.floats(-1, 1), min_size=7, max_size=7), eps=st.floats(0.01, 8.0),
       sens=st.floats(0.1, 5.0))
def test_property_exact_epsilon_of_any_pair_is_at_most_the_claim(q, shift, eps, sens):
    qp = [v + sens * (1 - 1e-9) * s for v, s in zip(q, shift)]  # within sensitivity after rounding
    m = PermuteAndFlip(eps, sens).on(q, qp)
    log_p, log_q = m.output_log_pmfs()
    assert float(np.max(np.abs(log_p - log_q))) <= eps * (1 + 1e-12) + 1e-13
    assert m.pure_epsilon() <= eps
    for delta in (1e-6, 1e-2):
        assert exact_epsilon(m, delta) <= eps * (1 + 1e-12)
    curve = m.rdp([1.5, 2.0, 10.0, math.inf])
    cls = PermuteAndFlip(eps, sens).rdp([1.5, 2.0, 10.0, math.inf])
    assert np.all(curve <= cls) and np.all(np.diff(curve) >= -1e-12)


def _renyi_mp(log_p, log_q, alpha):
    lam = mp.mpf(alpha) - 1
    return mp.log(sum(mp.e ** (mp.mpf(a) + lam * (mp.mpf(a) - mp.mpf(b))) for a, b in zip(log_p, log_q))) / lam


def test_concrete_rdp_is_an_upper_bound_close_to_mpmath():
    mp.mp.dps = 40
    q, qp, eps = [0.0, 1.0, 2.0, -1.0], [1.0, 0.0, 2.5, -2.0], 1.2
    m = PermuteAndFlip(eps).on(q, qp)
    ref_p = [mp.log(v) for v in _pmf_by_orders_mp(q, eps)]
    ref_q = [mp.log(v) for v in _pmf_by_orders_mp(qp, eps)]
    for a, got in zip([1.01, 2.0, 7.0], m.rdp([1.01, 2.0, 7.0])):
        ref = max(_renyi_mp(ref_p, ref_q, a), _renyi_mp(ref_q, ref_p, a))
        assert got >= ref and (got - ref) < 1e-9 * ref + 1e-12, (a, got, ref)


def test_two_candidate_pair_attains_epsilon():
    # (0, 0) vs (D, -D): output 2 has P = 1/2 and Q = e^{-eps}/2, so the loss reaches eps
    m = PermuteAndFlip(0.9, 2.0).on([0, 0], [2, -2])
    assert m.pure_epsilon() == pytest.approx(0.9, rel=1e-14)
    lp, lq = m.output_log_pmfs()
    assert np.allclose(np.exp(lq), [1 - math.exp(-0.9) / 2, math.exp(-0.9) / 2], rtol=1e-14)


@pytest.mark.parametrize("k", [1, 3])
def test_accountants_are_above_the_exact_and_lower_values(k):
    m = PermuteAndFlip(1.0)
    lo, up = PLDAccountant().compose(m, k).epsilon_interval(1e-5)
    assert lo > 0.9 * k  # the two-candidate lower pair nearly attains eps per step at delta 1e-5
    for name in sorted(ACCOUNTANTS):
        try:
            acc = make_accountant(name).compose(m, k)
        except UnsupportedMechanismError:  # (the exact accountant: a dominating pair only)
            continue
        assert acc.epsilon(1e-5) >= lo * (1 - 1e-12)
    pair = m.on([0, 0], [1, -1])
    assert PLDAccountant().compose(pair, 1).epsilon(1e-5) >= exact_epsilon(pair, 1e-5) * (1 - 1e-9)


def test_testing_helpers_accept_it():
    m = PermuteAndFlip(1.0)
    out = assert_accountant_sound(PLDAccountant().compose(m, 2), m, delta=1e-5, count=2, trials=4000, seed=3)
    assert out["audit"] is not None
    pair = m.on([0, 0, 1], [1, -1, 0])
    out = assert_accountant_sound(PLDAccountant().compose(pair), pair, delta=1e-5, trials=4000, seed=4)
    assert out["exact"] == exact_epsilon(pair, 1e-5)
    res = assert_audit_consistent(m, np.array([0.0, 0.0]), np.array([1.0, -1.0]), epsilon=1.0, trials=4000, seed=5)
    assert res.verdict in ("consistent", "inconclusive")


def test_audit_never_flags_the_true_epsilon():
    m = PermuteAndFlip(1.0)
    x, xp = np.array([0.0, 0.0]), np.array([1.0, -1.0])
    flagged = sum(audit_mechanism(m.sample, x, xp, epsilon=1.0, trials=4000, seed=s).violation for s in range(10))
    assert flagged == 0  # measured 0 / 30 (10 kept for time)


def test_audit_flags_a_sensitivity_mis_scaled_by_two():
    # the broken variant uses exp(eps (q - q*)/Delta) (sensitivity taken as Delta/2): it is 2 eps-DP
    bad = PermuteAndFlip(1.0, sensitivity=0.5)
    res = audit_mechanism(bad.sample, np.array([0.0, 0.0]), np.array([1.0, -1.0]), epsilon=1.0, trials=50_000, seed=2)
    assert res.violation and res.epsilon_lower > 1.0


@pytest.mark.parametrize("kw,name", [({"epsilon": 0.0}, "epsilon"), ({"epsilon": math.nan}, "epsilon"),
                                     ({"epsilon": 1.0, "sensitivity": -1.0}, "sensitivity"),
                                     ({"epsilon": 1.0, "neighbouring": "swap"}, "neighbouring"),
                                     ({"epsilon": 1.0, "scores": (0.0,)}, "scores_prime"),
                                     ({"epsilon": 1.0, "scores": (0.0, 1.0), "scores_prime": (0.0,)}, "scores_prime"),
                                     ({"epsilon": 1.0, "scores": (0.0, 1.0), "scores_prime": (0.0, 2.5)}, "scores_prime"),
                                     ({"epsilon": 1.0, "scores": (0.0, math.nan), "scores_prime": (0.0, 0.0)}, "scores"),
                                     ({"epsilon": 1.0, "scores": (), "scores_prime": ()}, "scores")])
def test_validation_names_the_argument(kw, name):
    with pytest.raises(ValueError, match=name):
        PermuteAndFlip(**kw)


def test_pmf_refuses_too_many_candidates_and_sampler_refuses_no_candidates():
    with pytest.raises(ValueError, match="scores"):
        permute_and_flip_log_pmf(np.zeros(MAX_EXACT_CANDIDATES + 1), 1.0)
    with pytest.raises(ValueError, match="value"):
        PermuteAndFlip(1.0).sample(np.zeros(0), np.random.default_rng(0), 2)
