"""Degenerate mechanisms are answered, not refused (issue 27, item 1).

A release with no noise has no guarantee: every accountant composes it and answers epsilon = inf,
delta = 1 (dp_accounting 0.6.0: ``NonPrivateDpEvent``, ``GaussianDpEvent(0)``). Run on a
subsample it is exactly (0, q)-DP per step, so k steps give delta(eps) = 1 - (1 - q)^k for every
eps >= 0 (derivation in dpaudit/mechanisms/nonprivate.py), mixed with Gaussians the closed form
max(delta_G(e - c), 1 - r + r delta_G(e + c)), c = -k log(1 - q), r = (1 - q)^k.
"""

from __future__ import annotations

import math
import warnings

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpaudit
from dpaudit import (
    DiscreteGaussian,
    DiscreteLaplace,
    ExponentialMechanism,
    Gaussian,
    Laplace,
    NoAmplificationWarning,
    NonPrivate,
    PoissonSampled,
    PureDP,
    SampledWithoutReplacement,
    make_accountant,
)
from dpaudit.accounting.base import ACCOUNTANTS
from dpaudit.mechanisms import (
    MixtureOfGaussians,
    PermuteAndFlip,
    TreeAggregation,
    TruncatedPoissonGaussian,
    ZCDPMechanism,
)

ORDERS = np.array([1.5, 2.0, 10.0, math.inf])


def _degenerate():
    return [NonPrivate(), Gaussian(0.0), Gaussian(0.0, 3.0), Laplace(0.0), DiscreteLaplace(0.0, 2),
            DiscreteGaussian(0.0), PureDP(math.inf), ExponentialMechanism(math.inf), PermuteAndFlip(math.inf),
            TreeAggregation(0.0, (5, 3)),
            MixtureOfGaussians(0.0, (1.0, 2.0), (0.5, 0.5)), TruncatedPoissonGaussian(0.0, 1.0, 50, 50),
            ZCDPMechanism(math.inf), ZCDPMechanism(0.5, math.inf)]


def _quiet(name):
    return make_accountant(name, quiet=True)


@pytest.mark.parametrize("mech", _degenerate(), ids=lambda m: type(m).__name__)
def test_zero_noise_is_non_private_with_infinite_curves(mech):
    assert mech.non_private()
    assert np.all(np.isinf(mech.rdp(ORDERS)))
    assert mech.zcdp() == math.inf and mech.tcdp()[0] == math.inf and mech.pure_epsilon() == math.inf
    assert mech.approx_dp() == (0.0, 1.0)
    loss = mech.privacy_loss()
    assert loss.exact and all(p.inf_mass == 1.0 and p.minf_mass == 1.0 for p in loss.upper)
    assert mech.likelihood_ratio_test() is None


@pytest.mark.parametrize("name", ACCOUNTANTS)
@pytest.mark.parametrize("mech", _degenerate(), ids=lambda m: type(m).__name__)
def test_every_accountant_answers_inf(name, mech):
    acc = _quiet(name).compose(mech, 3)
    for delta in (1e-10, 1e-5, 0.5, 0.999):
        assert acc.epsilon(delta) == math.inf
    for eps in (0.0, 1.0, 1e300):
        assert acc.delta(eps) == 1.0


@pytest.mark.parametrize("name", ACCOUNTANTS)
def test_non_private_among_ordinary_steps(name):
    first = PureDP(1.0) if name == "pure" else Gaussian(1.0)
    acc = _quiet(name).compose(first, 5).compose(Gaussian(0.0)).compose(first, 5)
    assert acc.epsilon(1e-5) == math.inf and acc.delta(3.0) == 1.0


def test_samplers_of_zero_noise_mechanisms():
    rng = np.random.default_rng(0)
    assert np.array_equal(Gaussian(0.0).sample(np.array([1.5, -2.0]), rng, 3), np.tile([1.5, -2.0], (3, 1)))
    assert np.array_equal(Laplace(0.0).sample(2.0, rng, 4), np.full(4, 2.0))
    assert np.array_equal(DiscreteLaplace(0.0).sample(7, rng, 2), [7, 7])
    assert np.array_equal(DiscreteGaussian(0.0).sample(np.array([1, 2]), rng), [1, 2])
    assert np.all(PureDP(math.inf).sample(1, rng, 50) == 1)  # randomized response without noise: the truth
    assert np.all(ExponentialMechanism(math.inf).sample([0.0, 3.0, 1.0], rng, 50) == 1)  # the argmax
    assert np.all(PermuteAndFlip(math.inf).sample([0.0, 3.0, 1.0], rng, 50) == 1)
    with pytest.raises(ValueError, match="epsilon"):
        PermuteAndFlip(math.inf).on([0.0, 1.0], [1.0, 0.0])
    ties = ExponentialMechanism(math.inf).sample([2.0, 0.0, 2.0], rng, 400)
    assert set(ties.tolist()) == {0, 2}  # ties broken at random
    assert np.array_equal(NonPrivate().sample(np.array([3.0]), rng, 2), [[3.0], [3.0]])


# -- sampled versions: exactly (0, q)-DP per step --------------------------------------------------------
def _sampled(q):
    return [PoissonSampled(NonPrivate(), q), PoissonSampled(Gaussian(0.0), q), PoissonSampled(Laplace(0.0), q),
            SampledWithoutReplacement(NonPrivate("replace_one"), q),
            SampledWithoutReplacement(Gaussian(0.0, neighbouring="replace_one"), q),
            MixtureOfGaussians(0.0, (0.0, 1.0), (1.0 - q, q)), TruncatedPoissonGaussian(0.0, q, 100, 100)]


@pytest.mark.parametrize("q, k", [(0.1, 1), (0.1, 3), (0.01, 50), (1e-6, 1000)])
@pytest.mark.parametrize("idx", range(7))
def test_sampled_non_private_step_has_the_exact_curve(q, k, idx):
    mech = _sampled(q)[idx]
    assert not mech.non_private() and mech.approx_dp()[0] == 0.0
    exact = -math.expm1(k * math.log1p(-q))  # 1 - (1 - q)^k
    for name in ("rdp", "pld", "exact"):
        acc = _quiet(name).compose(mech, k)
        for eps in (0.0, 0.5, 5.0):
            d = acc.delta(eps)
            assert exact * (1 - 1e-9) <= d <= exact * (1 + 1e-9) + 1e-15, (name, eps, d, exact)
        assert acc.epsilon(min(exact * 1.001, 0.999)) == 0.0
        assert acc.epsilon(exact * 0.999) == math.inf  # below the mass of the distinguishing event


@pytest.mark.parametrize("name", ["zcdp", "tcdp"])
def test_accountants_without_amplification_answer_inf_and_warn(name):
    m = PoissonSampled(Gaussian(0.0), 0.01)
    with pytest.warns(NoAmplificationWarning, match="rdp, pld"):
        acc = make_accountant(name).compose(m, 2)
    assert acc.epsilon(0.5) == math.inf and acc.delta(1.0) == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _quiet(name).compose(m)  # internal (quiet) instances do not warn


def test_pure_accountant_gives_no_guarantee_to_a_sampled_non_private_step():
    # (0, q)-DP is not pure DP: basic composition of pure DP has nothing to add up
    assert _quiet("pure").compose(PoissonSampled(NonPrivate(), 0.1)).epsilon(0.5) == math.inf


def _gauss_delta_mp(mu, e):
    mu, e = mpmath.mpf(mu), mpmath.mpf(e)
    return mpmath.ncdf(mu / 2 - e / mu) - mpmath.e ** e * mpmath.ncdf(-mu / 2 - e / mu)


@settings(max_examples=15, deadline=None)
@given(mu=st.floats(0.2, 3.0), q=st.floats(1e-4, 0.3), k=st.integers(1, 20), t=st.integers(1, 5),
       eps=st.floats(0.0, 6.0))
def test_mixed_with_gaussians_closed_form(mu, q, k, t, eps):
    """Gaussian steps (mu each) with k Poisson-sampled non-private steps: the closed form in both
    directions (ADD: the loss shifted by c; REMOVE: distinguished w.p. 1 - r), against mpmath."""
    acc = _quiet("exact").compose(Gaussian(1.0 / mu), t).compose(PoissonSampled(NonPrivate(), q), k)
    m = mpmath.sqrt(t) * mu
    c = -k * mpmath.log1p(-q)
    r = (1 - mpmath.mpf(q)) ** k
    add = _gauss_delta_mp(m, eps - c) if eps >= c else 1 - mpmath.e ** (eps - c) * (1 - _gauss_delta_mp(m, c - eps))
    rem = 1 - r + r * _gauss_delta_mp(m, eps + c)
    ref = float(max(add, rem))
    assert ref * (1 - 1e-9) - 1e-15 <= acc.delta(eps) <= ref * (1 + 1e-9) + 1e-15
    lo, up = _quiet("pld").compose(Gaussian(1.0 / mu), t).compose(PoissonSampled(NonPrivate(), q), k) \
        .delta_interval(eps)
    assert lo <= ref * (1 + 1e-9) and up >= ref * (1 - 1e-9)


# -- dp_accounting 0.6.0 ----------------------------------------------------------------------------------
dpa = pytest.importorskip("dp_accounting")


@pytest.mark.parametrize("event", ["NonPrivateDpEvent()", "GaussianDpEvent(0.0)", "LaplaceDpEvent(0.0)"])
def test_dp_accounting_non_private_events(event):
    ev = eval("dpa." + event)  # noqa: S307 - a fixed list of dp_accounting constructors
    pld = dpa.pld.PLDAccountant().compose(ev)
    assert pld.get_epsilon(1e-5) == math.inf and pld.get_delta(1.0) == 1
    from dpaudit.interop import accountant_from_dp_event

    for name in ACCOUNTANTS:
        ours = accountant_from_dp_event(ev, name)
        assert ours.epsilon(1e-5) == math.inf and ours.delta(1.0) == 1.0
    rdp = dpa.rdp.RdpAccountant().compose(dpa.NonPrivateDpEvent())
    assert rdp.get_epsilon(1e-5) == math.inf and _quiet("rdp").compose(NonPrivate()).epsilon(1e-5) == math.inf


def test_dp_accounting_poisson_sampled_zero_noise():
    """dp_accounting 0.6.0 answers inf for a Poisson-sampled Gaussian with noise 0 (it marks the
    ledger non-private) and refuses a Poisson-sampled NonPrivateDpEvent; the exact curve is finite,
    delta = q for every eps >= 0, the limit of its own Poisson-sampled Gaussian PLD as sigma -> 0."""
    q = 0.05
    ev = dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(0.0))
    assert dpa.pld.PLDAccountant().compose(ev).get_epsilon(0.5) == math.inf
    with pytest.raises(dpa.UnsupportedEventError):
        dpa.pld.PLDAccountant().compose(dpa.PoissonSampledDpEvent(q, dpa.NonPrivateDpEvent()))
    ours = _quiet("pld").compose(PoissonSampled(Gaussian(0.0), q))
    assert ours.epsilon(0.06) == 0.0 and ours.delta(2.0) == pytest.approx(q, rel=1e-12)
    # dp_accounting's own subsampled-Gaussian curve (exact at one step) approaches q as sigma -> 0,
    # and agrees with the exact accountant on the way
    from dp_accounting.pld import privacy_loss_distribution as pldm

    for nm, gap in ((0.3, 0.6), (0.15, 0.01)):
        theirs = pldm.from_gaussian_mechanism(nm, sampling_prob=q, value_discretization_interval=1e-3)
        mine = _quiet("exact").compose(PoissonSampled(Gaussian(nm), q)).delta(2.0)
        assert mine == pytest.approx(theirs.get_delta_for_epsilon(2.0), rel=1e-9)
        assert q * (1 - gap) < mine < q
    assert dpaudit.ExactAccountant().compose(PoissonSampled(Gaussian(0.0), q)).delta(2.0) == pytest.approx(q, rel=1e-12)


def test_pld_interval_of_a_non_private_step_is_exact():
    for m in (NonPrivate(), Gaussian(0.0), PureDP(math.inf)):
        acc = make_accountant("pld").compose(Gaussian(1.0), 3).compose(m)
        assert acc.delta_interval(1.0) == (1.0, 1.0) and acc.epsilon_interval(0.3) == (math.inf, math.inf)
