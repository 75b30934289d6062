"""DiscreteLaplace (dpaudit/mechanisms/discrete_laplace.py): mpmath references for the RDP curve
and the PLD, accountant soundness, dp_accounting cross-check, the int64 sampler and its audit."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpaudit import DiscreteLaplace, PLDAccountant, RDPAccountant, make_accountant
from dpaudit.accounting.base import ACCOUNTANTS
from dpaudit.audit import audit_mechanism
from dpaudit.core.validation import UnsupportedMechanismError
from dpaudit.mechanisms.discrete_laplace import EXACT_PAIR_ATOMS, MAX_SAMPLING_SCALE, MAX_SENSITIVITY
from dpaudit.testing import assert_accountant_sound, assert_audit_consistent, exact_epsilon


def _atoms_mp(t, d):
    """(m_k, P-mass) of the loss eps*m_k, exact in mpmath, by summing the pmf over the integers."""
    t = mp.mpf(t)
    eps = 1 / t
    r = mp.e ** (-eps)
    c = mp.tanh(eps / 2)
    out = [(d, 1 / (1 + r))]  # z <= 0: c * sum_{j>=0} r^j
    out += [(d - 2 * k, c * r ** k) for k in range(1, d)]
    out.append((-d, r ** d / (1 + r)))
    return out


def _rdp_mp(t, d, alpha):
    eps = 1 / mp.mpf(t)
    if alpha == math.inf:
        return d * eps
    lam = mp.mpf(alpha) - 1
    terms = [mp.log(p) + lam * eps * m for m, p in _atoms_mp(t, d)]
    top = max(terms)
    return (top + mp.log(sum(mp.e ** (x - top) for x in terms))) / lam


def _composed_delta_mp(t, d, k, e):
    """delta(e) of k independent releases, brute force over the composed loss atoms."""
    eps, e = 1 / mp.mpf(t), mp.mpf(e)
    dist = {0: mp.mpf(1)}
    for _ in range(k):
        new: dict[int, mp.mpf] = {}
        for s, ps in dist.items():
            for m, p in _atoms_mp(t, d):
                new[s + m] = new.get(s + m, 0) + ps * p
        dist = new
    return sum(p * (1 - mp.e ** (e - s * eps)) for s, p in dist.items() if s * eps > e)


def test_pmf_is_the_discrete_laplace_law():
    # the atoms are the pmf tanh(1/(2t)) e^{-|z|/t} summed over z <= 0, z = k, z >= d
    mp.mp.dps = 40
    t, d = mp.mpf("1.7"), 3
    pmf = [mp.tanh(1 / (2 * t)) * mp.e ** (-abs(z) / t) for z in range(-400, 401)]
    zs = list(range(-400, 401))
    assert abs(sum(pmf) - 1) < mp.mpf("1e-30")
    masses = [p for _, p in _atoms_mp(t, d)]
    assert abs(masses[0] - sum(p for z, p in zip(zs, pmf) if z <= 0)) < 1e-30
    assert abs(masses[-1] - sum(p for z, p in zip(zs, pmf) if z >= d)) < 1e-30


@pytest.mark.parametrize("t", [1e-3, 0.3, 1.0, 3.7, 100.0, 1e4, 1e8, 1e15, 1e100])
@pytest.mark.parametrize("d", [1, 2, 5])
def test_rdp_matches_mpmath(t, d):
    orders = [1 + 1e-12, 1 + 1e-6, 1.01, 1.5, 2.0, 3.5, 10.0, 64.0, 1e3, 1e6, 1e12, math.inf]
    mp.mp.dps = 60 if t < 1e10 else 260
    got = DiscreteLaplace(t, d).rdp(orders)
    for a, g in zip(orders, got):
        ref = _rdp_mp(t, d, a)
        assert g >= ref, (a, g, ref)  # an upper bound
        assert (mp.mpf(g) - ref) / ref < 1e-13, (a, g, ref)  # and tight (measured < 5e-16 + rounding)


def test_rdp_extremes_stay_bounds_without_warnings():
    # huge / tiny scale: values in the float range are still upper bounds, overflow gives inf
    m = DiscreteLaplace(1e308)
    got = m.rdp([2.0, 1e300, math.inf])
    assert np.all(got > 0) and got[-1] >= 1e-308
    assert np.all(DiscreteLaplace(1e-300, 3).rdp([1 + 1e-9, 2.0, 1e10]) >= 3e300)
    assert np.all(np.isinf(DiscreteLaplace(5e-324).rdp([2.0])))
    assert DiscreteLaplace(5e-324).zcdp() == math.inf and DiscreteLaplace(5e-324).pure_epsilon() == math.inf


def test_pure_and_zcdp():
    m = DiscreteLaplace(2.5, 3)
    assert m.epsilon == 3 / 2.5
    assert 1.2 <= m.pure_epsilon() <= 1.2 * (1 + 1e-14)
    assert 0.72 <= m.zcdp() <= 0.72 * (1 + 1e-14)
    # the RDP curve never exceeds the zCDP line rho * alpha it is reported with
    orders = np.array([1.01, 2.0, 8.0, 100.0])
    assert np.all(m.rdp(orders) <= m.zcdp() * orders)


@pytest.mark.parametrize("t,d,k", [(1.0, 1, 1), (2.0, 1, 4), (3.0, 2, 3), (0.8, 3, 2), (10.0, 4, 3)])
def test_pld_brackets_the_brute_force_composition(t, d, k):
    mp.mp.dps = 40
    acc = PLDAccountant().compose(DiscreteLaplace(t, d), k)
    for e in (0.0, 0.3, 1.0, 2.5):
        lo, up = acc.delta_interval(e)
        exact = float(_composed_delta_mp(t, d, k, e))
        assert lo <= exact * (1 + 1e-9) + 1e-15 and exact <= up * (1 + 1e-9) + 1e-15, (e, lo, exact, up)
    delta = 1e-5
    lo, up = acc.epsilon_interval(delta)
    assert _composed_delta_mp(t, d, k, up) <= delta * (1 + 1e-9)  # up is a valid epsilon
    if lo > 0:
        assert _composed_delta_mp(t, d, k, lo) >= delta * (1 - 1e-9)  # lo does not overshoot


def test_single_step_is_exact():
    # one step: exact_epsilon reads the exact pair; the PLD interval contains it
    mp.mp.dps = 40
    t, d, delta = 1.5, 2, 1e-3
    m = DiscreteLaplace(t, d)
    ex = exact_epsilon(m, delta)
    assert _composed_delta_mp(t, d, 1, ex * (1 + 1e-12)) <= delta <= _composed_delta_mp(t, d, 1, ex * (1 - 1e-12))
    lo, up = PLDAccountant().compose(m).epsilon_interval(delta)
    assert lo <= ex <= up


def test_many_atoms_pair_is_sound():
    # sensitivity + 1 > EXACT_PAIR_ATOMS: randomized-response upper end, merged-pair lower end
    d = EXACT_PAIR_ATOMS + 5
    t = 40.0
    m = DiscreteLaplace(t, d)
    loss = m.privacy_loss()
    assert not loss.exact
    mp.mp.dps = 30
    lo, up = PLDAccountant().compose(m).epsilon_interval(1e-4)
    assert _composed_delta_mp(t, d, 1, up) <= 1e-4 * (1 + 1e-9)
    assert _composed_delta_mp(t, d, 1, lo) >= 1e-4 * (1 - 1e-9)


_ACCS = sorted(ACCOUNTANTS)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(log_t=st.floats(-1.5, 3.0), d=st.integers(1, 4), k=st.integers(1, 3),
       orders=st.lists(st.floats(1.0001, 1e4), min_size=2, max_size=6))
def test_property_rdp_monotone_below_eps_and_accountants_above_exact(log_t, d, k, orders):
    t = 10.0 ** log_t
    m = DiscreteLaplace(t, d)
    a = np.sort(np.asarray(orders))
    curve = m.rdp(np.append(a, math.inf))
    # monotone in alpha (Mironov 2017, Prop. 9) up to the rounding margin, and below eps = D_inf
    assert np.all(np.diff(curve) >= -1e-13 * curve[1:])
    assert np.all(curve <= m.pure_epsilon())
    delta = 1e-5
    lower, _ = PLDAccountant().compose(m, k).epsilon_interval(delta)
    for name in _ACCS:
        try:
            acc = make_accountant(name).compose(m, k)
        except UnsupportedMechanismError:  # (the exact accountant: no closed form for k > 1 steps)
            continue
        assert acc.epsilon(delta) >= lower * (1 - 1e-12) - 1e-12, name


dpa = pytest.importorskip("dp_accounting")


@pytest.mark.parametrize("t,d,k", [(1.0, 1, 1), (2.0, 1, 10), (5.0, 3, 5), (0.7, 2, 20)])
def test_cross_check_dp_accounting(t, d, k):
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant, privacy_loss_mechanism

    # one step, exact curve: dp_accounting's closed-form delta(e) lies in our interval
    pl = privacy_loss_mechanism.DiscreteLaplacePrivacyLoss(1.0 / t, sensitivity=d)
    one = PLDAccountant().compose(DiscreteLaplace(t, d))
    for e in (0.0, 0.3, 1.0):
        lo, up = one.delta_interval(e)
        ref = pl.get_delta_for_epsilon(e)
        assert lo * (1 - 1e-9) <= ref <= up * (1 + 1e-9) + 1e-15
    # k steps: dp_accounting's pessimistic PLD (discretisation 1e-4) is an upper bound, so it is
    # at least our certified lower end; and ours is at most theirs + their discretisation slack
    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(dp_event.SelfComposedDpEvent(dp_event.DiscreteLaplaceDpEvent(1.0 / t, d), k))
    theirs = acc.get_epsilon(1e-5)
    lo, up = PLDAccountant().compose(DiscreteLaplace(t, d), k).epsilon_interval(1e-5)
    assert lo <= theirs + 1e-12
    assert up <= theirs + 1e-2
    # RDP: dp_accounting's RdpAccountant has no DiscreteLaplaceDpEvent rule; ours is at least the PLD lower end
    assert RDPAccountant().compose(DiscreteLaplace(t, d), k).epsilon(1e-5) >= lo


def test_sampler_is_integer_and_has_the_pmf():
    m = DiscreteLaplace(1.3, 2)
    rng = np.random.default_rng(5)
    out = m.sample(7, rng, 200_000)
    assert out.dtype == np.int64 and out.shape == (200_000,)
    z = out - 7
    c = math.tanh(1 / 2.6)
    for v in (-3, -1, 0, 1, 2, 5):
        p = c * math.exp(-abs(v) / 1.3)
        se = math.sqrt(p * (1 - p) / z.size)
        assert abs(np.mean(z == v) - p) < 5 * se
    assert m.sample(np.array([1.0, -4.0]), rng, 3).dtype == np.int64
    assert m.sample(np.array([1, 2]), rng).shape == (2,)


@pytest.mark.parametrize("value", [0.5, np.nan, "a", True, 2.0 ** 62])
def test_sampler_rejects_non_integer_values(value):
    with pytest.raises(ValueError, match="value"):
        DiscreteLaplace(1.0).sample(value, np.random.default_rng(0), 3)


def test_sampler_rejects_a_scale_that_would_saturate_int64():
    with pytest.raises(ValueError, match="scale"):
        DiscreteLaplace(MAX_SAMPLING_SCALE * 2).sample(0, np.random.default_rng(0), 3)


@pytest.mark.parametrize("kw,name", [({"scale": -1.0}, "scale"),
                                     ({"scale": math.nan}, "scale"), ({"scale": math.inf}, "scale"),
                                     ({"scale": 1.0, "sensitivity": 1.5}, "sensitivity"),
                                     ({"scale": 1.0, "sensitivity": 0}, "sensitivity"),
                                     ({"scale": 1.0, "sensitivity": True}, "sensitivity"),
                                     ({"scale": 1.0, "sensitivity": MAX_SENSITIVITY + 1}, "sensitivity"),
                                     ({"scale": 1.0, "neighbouring": "swap"}, "neighbouring")])
def test_validation_names_the_argument(kw, name):
    with pytest.raises(ValueError, match=name):
        DiscreteLaplace(**kw)


def test_audit_never_flags_the_true_epsilon():
    m = DiscreteLaplace(2.0)
    flagged = sum(audit_mechanism(m.sample, 0, 1, epsilon=m.epsilon, trials=4000, seed=s).violation
                  for s in range(50))
    assert flagged == 0  # P(any) <= 50 * 0.05 only in the worst case; measured 0 / 50


def test_audit_flags_half_the_claimed_scale():
    # the sampler uses scale 1 (epsilon 1) while the claim is scale 2 (epsilon 0.5)
    bad = DiscreteLaplace(1.0)
    res = audit_mechanism(bad.sample, 0, 1, epsilon=0.5, trials=100_000, seed=1)
    assert res.violation and res.epsilon_lower > 0.5


def test_testing_helpers_accept_it():
    m = DiscreteLaplace(1.25, 2)
    out = assert_accountant_sound(PLDAccountant().compose(m), m, delta=1e-5, trials=4000, seed=11)
    assert out["exact"] == exact_epsilon(m, 1e-5) and out["audit"] is not None
    res = assert_audit_consistent(m, 0, 2, epsilon=m.epsilon, trials=4000, seed=12)
    assert res.verdict in ("consistent", "inconclusive")


@pytest.mark.parametrize("t,d", [(1e-149, 1), (1e-300, 3), (5e-324, 1)])
def test_huge_epsilon_pld_stays_a_valid_interval(t, d):
    # sensitivity/scale beyond 1e150 (or inf): non-private upper pair, Laplace lower pair, no warning
    m = DiscreteLaplace(t, d)
    lo, up = PLDAccountant().compose(m, 2).epsilon_interval(1e-5)
    assert 0.0 <= lo <= up and up >= min(2 * m.epsilon, 1e308) * (1 - 1e-12)
