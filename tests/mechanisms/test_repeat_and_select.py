"""RepeatAndSelect (dpaudit/mechanisms/repeat_and_select.py): Papernot & Steinke 2022 Theorem 2
against its closed form for a zCDP base (mpmath), the pure-DP limits (2 + eta) eps, dp_accounting's
RepeatAndSelectDpEvent numbers, monotonicity properties, the law of K, accountants and audits."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from dpaudit import Gaussian, PLDAccountant, PureDP, RDPAccountant, ZCDPAccountant
from dpaudit.audit import audit_mechanism
from dpaudit.core.validation import UnsupportedMechanismError
from dpaudit.mechanisms import RepeatAndSelect
from dpaudit.mechanisms.repeat_and_select import repeat_and_select_rdp, tnb_gamma, tnb_mean


def _gamma_mp(mean, eta):
    mp.mp.dps = 40
    if eta == 0:
        f = lambda g: (1 - g) / (g * mp.log(1 / g)) - mean  # noqa: E731
    else:
        f = lambda g: eta * (1 - g) / (g * (1 - g ** eta)) - mean  # noqa: E731
    return mp.findroot(f, (mp.mpf("1e-30"), mp.mpf(1) - mp.mpf("1e-30")), solver="anderson")


@pytest.mark.parametrize("mean,eta", [(2.0, 1.0), (10.0, 1.0), (10.0, 0.0), (100.0, 0.5), (1e4, 3.0), (1.5, 0.0)])
def test_tnb_gamma_inverts_the_mean_from_below(mean, eta):
    g = tnb_gamma(mean, eta)
    ref = _gamma_mp(mean, eta)
    assert g <= ref and (ref - g) / ref < 1e-9
    assert tnb_mean(g, eta) >= mean


@pytest.mark.parametrize("rho,mean,eta", [(0.05, 10.0, 1.0), (0.01, 100.0, 0.0), (0.2, 5.0, 2.0), (0.001, 1e3, 0.5)])
def test_theorem_2_for_a_zcdp_base_matches_its_closed_form(rho, mean, eta):
    # base D_l = l rho: min over lh of (lh - 1) rho + L/lh is 2 sqrt(rho L) - rho at lh = sqrt(L/rho) (>= 1 here)
    sigma = 1 / math.sqrt(2 * rho)
    m = RepeatAndSelect(Gaussian(sigma), mean, eta)
    big_l = -mp.log(_gamma_mp(mean, eta))
    assert big_l >= rho
    orders = [2.0, 5.0, 20.0, 100.0]
    got = m.rdp(orders)
    for a, g in zip(orders, got):
        # the monotone envelope: the least over a2 >= a of a2 rho + const + log(mean)/(a2 - 1), whose
        # minimiser is a2 = 1 + sqrt(log(mean)/rho)
        a2 = max(mp.mpf(a), 1 + mp.sqrt(mp.log(mean) / rho))
        ref = a2 * rho + (1 + eta) * (2 * mp.sqrt(rho * big_l) - rho) + mp.log(mean) / (a2 - 1)
        assert g >= ref * (1 - 1e-12), (a, g, ref)
        assert g <= ref * (1 + 2e-3), (a, g, ref)  # our lambda_hat and envelope grids are coarser


@pytest.mark.parametrize("eta", [0.0, 1.0, 2.0])
def test_pure_dp_base_gives_at_most_two_plus_eta_epsilon(eta):
    eps = 0.7
    for mean in (2.0, 30.0, 1e6):
        pe = RepeatAndSelect(PureDP(eps), mean, eta).pure_epsilon()
        assert pe <= (2 + eta) * eps * (1 + 1e-12)
    # for a large mean the bound reaches (2 + eta) eps (Liu & Talwar 2019: 3 eps for the geometric law)
    assert pe >= (2 + eta) * eps * 0.99
    assert RepeatAndSelect(PureDP(eps), 1.0, eta).pure_epsilon() == pytest.approx(eps, rel=1e-12)


dpa = pytest.importorskip("dp_accounting")

_ORD = [1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128, 256]


@pytest.mark.parametrize("nm,mean,shape", [(2.0, 5.0, 1.0), (1.0, 100.0, 0.0), (0.8, 10.0, 0.5), (3.0, 1e4, 3.0),
                                           (2.0, 5.0, math.inf), (1.0, 100.0, math.inf), (5.0, 1.0, math.inf)])
def test_matches_dp_accounting_repeat_and_select_event(nm, mean, shape):
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    acc = rdp.RdpAccountant(_ORD)
    acc.compose(dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(nm), mean, shape))
    theirs = np.asarray(acc._rdp)
    theirs = np.minimum.accumulate(theirs[::-1])[::-1]  # (their TNB branch applies this envelope, Poisson not)
    ours = repeat_and_select_rdp(_ORD, Gaussian(nm).rdp(_ORD), _ORD, mean, shape)
    # same formula on the same orders: equal up to their gamma tolerance (1e-9); ours never below
    # except where our lambda_hat = 1 endpoint is smaller
    assert np.all(ours <= theirs * (1 + 1e-8)), (ours, theirs)
    assert np.allclose(ours, theirs, rtol=1e-8), (ours, theirs)
    # the mechanism (finer lambda_hat grid, dominating pairs for delta_hat) is at most theirs
    assert np.all(RepeatAndSelect(Gaussian(nm), mean, shape).rdp(_ORD) <= theirs * (1 + 1e-8))


def test_mean_one_is_the_base_mechanism():
    for shape in (0.0, 1.0, 4.0):
        assert np.allclose(RepeatAndSelect(Gaussian(1.3), 1.0, shape).rdp(_ORD), Gaussian(1.3).rdp(_ORD), rtol=1e-13)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s1=st.floats(0.3, 20.0), ratio=st.floats(1.0, 5.0), mean=st.floats(1.0, 1e5), more=st.floats(1.0, 10.0),
       shape=st.sampled_from([0.0, 0.5, 1.0, 3.0, math.inf]))
def test_property_monotone_in_the_base_curve_and_the_mean(s1, ratio, mean, more, shape):
    orders = np.array([1.5, 3.0, 10.0, 64.0])
    weak = RepeatAndSelect(Gaussian(s1), mean, shape).rdp(orders)  # larger base curve
    strong = RepeatAndSelect(Gaussian(s1 * ratio), mean, shape).rdp(orders)
    assert np.all(strong <= weak * (1 + 1e-12))
    bigger = RepeatAndSelect(Gaussian(s1), min(mean * more, 1e12), shape).rdp(orders)
    assert np.all(bigger >= weak * (1 - 1e-12))
    assert np.all(np.diff(weak) >= 0)  # non-decreasing in the order
    assert np.all(weak >= Gaussian(s1).rdp(orders) * (1 - 1e-12))  # never below one run


@pytest.mark.parametrize("mean,shape", [(3.0, 0.5), (4.0, 0.0), (5.0, 1.0), (2.5, 2.0), (3.0, math.inf)])
def test_number_of_runs_has_the_stated_law(mean, shape):
    m = RepeatAndSelect(PureDP(1.0), mean, shape)
    k = m.draw_counts(np.random.default_rng(3), 100_000)
    if math.isinf(shape):
        pmf = stats.poisson(mean).pmf
        lo = 0
    else:
        g = tnb_gamma(mean, shape)
        if shape == 0:
            pmf = stats.logser(1 - g).pmf
        else:
            z = 1 - g ** shape
            pmf = lambda x: stats.nbinom(shape, g).pmf(x) / z  # noqa: E731
        lo = 1
        assert k.min() >= 1
    top = 12
    counts = np.array([np.sum(k == v) for v in range(lo, top)] + [np.sum(k >= top)])
    probs = np.array([pmf(v) for v in range(lo, top)])
    probs = np.append(probs, 1 - probs.sum())
    assert stats.chisquare(counts, probs * k.size).pvalue > 1e-4
    assert abs(k.mean() - mean) < 6 * k.std() / math.sqrt(k.size)


def test_accountants():
    pure = RepeatAndSelect(PureDP(0.5), 10.0, 1.0)
    eps = pure.pure_epsilon()
    assert PLDAccountant().compose(pure, 2).epsilon(1e-6) <= 2 * eps * (1 + 1e-9)
    assert ZCDPAccountant().compose(pure).epsilon(1e-6) < math.inf
    gauss = RepeatAndSelect(Gaussian(3.0), 10.0, 1.0)
    assert RDPAccountant().compose(gauss, 3).epsilon(1e-6) > RDPAccountant().compose(Gaussian(3.0), 3).epsilon(1e-6)
    with pytest.raises(UnsupportedMechanismError):
        PLDAccountant().compose(gauss)  # no dominating pair known for a non-pure base
    with pytest.raises((UnsupportedMechanismError, ValueError)):
        ZCDPAccountant().compose(gauss)  # the log(E[K])/(alpha - 1) term: not zCDP


def _or_law(eps, gamma):
    """P(best = 0) on inputs 0 and 1 for randomized response with eps, repeated K ~ Geometric(gamma)
    times, best = max: E[p^K] and E[(1 - p)^K]."""
    p = math.exp(eps) / (1 + math.exp(eps))
    return gamma * p / (1 - (1 - gamma) * p), gamma * (1 - p) / (1 - (1 - gamma) * (1 - p))


def test_audit_no_false_alarm_and_the_ignored_repetition_is_flagged():
    m = RepeatAndSelect(PureDP(1.0), 10.0, 1.0)
    p0, p1 = _or_law(1.0, 0.1)
    assert math.log(p0 / p1) > 1.7  # the repetition leaks about 1.8, above the base's 1
    assert math.log(p0 / p1) <= m.pure_epsilon()
    flagged = sum(audit_mechanism(m.sample, 0, 1, epsilon=m.pure_epsilon(), trials=4000, seed=s).violation
                  for s in range(5))
    assert flagged == 0  # measured 0 / 5
    res = audit_mechanism(m.sample, 0, 1, epsilon=1.0, trials=20_000, seed=1)  # the base's epsilon only
    assert res.violation and res.epsilon_lower > 1.0


def test_sampler_shapes_and_poisson_zero_runs():
    m = RepeatAndSelect(Gaussian(1.0), 0.9 + 0.1, math.inf)  # mean 1: K = 0 with probability e^-1
    out = m.sample(0.0, np.random.default_rng(0), 20_000)
    assert out.shape == (20_000,)
    assert abs(np.mean(np.isneginf(out)) - math.exp(-1)) < 0.02
    assert np.ndim(m.sample(0.0, np.random.default_rng(1))) == 0


@pytest.mark.parametrize("kw,name", [({"base": 3.0}, "base"), ({"base": PureDP(1.0), "mean": 0.5}, "mean"),
                                     ({"base": PureDP(1.0), "mean": math.nan}, "mean"),
                                     ({"base": PureDP(1.0), "mean": 1e13}, "mean"),
                                     ({"base": PureDP(1.0), "shape": -1.0}, "shape"),
                                     ({"base": PureDP(1.0), "shape": math.nan}, "shape")])
def test_validation_names_the_argument(kw, name):
    with pytest.raises(ValueError, match=name):
        RepeatAndSelect(**kw)
