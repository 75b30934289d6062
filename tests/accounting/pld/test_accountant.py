"""PLDAccountant: reference values, exact checks, comparisons with dp_accounting, properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from dpaudit import (
    ApproxDP,
    Gaussian,
    Laplace,
    PLDAccountant,
    PoissonSampled,
    PureDP,
    RDPAccountant,
    SampledWithoutReplacement,
    UnsupportedMechanismError,
)
from dpaudit.accounting.pld.distribution import MAX_BINS

dpa = pytest.importorskip("dp_accounting")
from dp_accounting.pld import pld_privacy_accountant as dpa_pld  # noqa: E402

COARSE = 1e-3  # discretization for property tests (fast)


# -- reference values (closed forms and dp_accounting 0.6.0) -------------------------------------------------


@pytest.fixture(scope="module")
def dpsgd_acc():
    return PLDAccountant().compose(PoissonSampled(Gaussian(1.1), 0.01), 1000)


def test_dpsgd_reference_q001_sigma11(dpsgd_acc):
    lo, up = dpsgd_acc.epsilon_interval(1e-5)
    # published PRV interval (prv-accountant 0.2.0) and dp_accounting 0.6.0 PLD at d = 1e-4
    assert 1.505354 <= up <= 1.525376
    assert up >= 1.5153702 - 2e-7
    assert abs(up - 1.5153702) < 1e-6
    # the interval contains the PRV point estimate and is narrow
    assert lo <= 1.515365 <= up
    assert up - lo < 2e-3
    assert dpsgd_acc.details["directions"] == ["add", "remove"]
    assert dpsgd_acc.epsilon(1e-5) == up


def test_dpsgd_against_dp_accounting_same_events(dpsgd_acc):
    ref = dpa_pld.PLDAccountant(value_discretization_interval=1e-4)
    ref.compose(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1)), 1000)
    ours = dpsgd_acc.epsilon(1e-5)
    theirs = ref.get_epsilon(1e-5)
    assert ours <= theirs + 1e-6  # no less tight
    assert ours >= theirs - 1e-5  # and not suspiciously below the pessimistic reference
    for eps in (0.5, 1.0, 2.0):
        lo, up = dpsgd_acc.delta_interval(eps)
        d_ref = ref.get_delta(eps)
        assert lo <= d_ref * (1 + 1e-3)
        assert up == pytest.approx(d_ref, rel=1e-3)


def test_dpsgd_rdp_is_looser(dpsgd_acc):
    rdp = RDPAccountant().compose(PoissonSampled(Gaussian(1.1), 0.01), 1000).epsilon(1e-5)
    assert rdp == pytest.approx(1.711770166, rel=1e-6)
    assert dpsgd_acc.epsilon(1e-5) < rdp - 0.15


@pytest.mark.parametrize("exact", [True, False])
def test_gaussian_brackets_balle_wang(exact):
    # Balle & Wang 2018, Thm. 8: 4.377178095681 and 0.126936737506644 to 13 digits; mpmath gives the rest
    import mpmath as mp

    truth_eps = _mp_gaussian_epsilon(1.0, "1e-5")
    with mp.workdps(40):
        truth_delta = mp.ncdf(mp.mpf(1) / 2 - 1) - mp.e * mp.ncdf(-mp.mpf(1) / 2 - 1)
    assert abs(float(truth_eps) - 4.377178095681) < 1e-12
    assert abs(float(truth_delta) - 0.126936737506644) < 1e-15
    acc = PLDAccountant(exact_gaussian=exact).compose(Gaussian(1.0))
    lo, up = acc.epsilon_interval(1e-5)
    assert lo <= truth_eps <= up
    assert up - truth_eps < 1e-3
    lo, up = acc.delta_interval(1.0)
    assert lo <= truth_delta <= up
    assert up - truth_delta < 1e-6
    if exact:
        assert up - lo < 1e-14
        assert acc.effective_discretization is None
    else:
        assert acc.effective_discretization == 1e-4


def _mp_gaussian_epsilon(mu, delta):
    """Balle-Wang epsilon at 40 digits (mpmath), an oracle independent of the code under test."""
    import mpmath as mp

    with mp.workdps(40):
        mu = mp.mpf(mu)
        f = lambda e: mp.ncdf(mu / 2 - e / mu) - mp.e**e * mp.ncdf(-mu / 2 - e / mu) - mp.mpf(delta)  # noqa: E731
        hi = mu * mu / 2 + mu * mp.sqrt(2 * mp.log(1 / mp.mpf(delta)))
        return mp.findroot(f, (mp.mpf(0), hi), solver="anderson")


@pytest.mark.parametrize("exact", [True, False])
def test_gaussian_1000_steps(exact):
    # 10.1: T = 1000 steps with sigma/Delta = 20 -> one Gaussian with sigma 20/sqrt(1000);
    # the closed form to 13 digits is 7.511275900745; mpmath gives 7.51127590074478224...
    truth = _mp_gaussian_epsilon(math.sqrt(1000) / 20, "1e-5")
    assert abs(float(truth) - 7.511275900745) < 1e-12
    acc = PLDAccountant(exact_gaussian=exact).compose(Gaussian(20.0), 1000)
    lo, up = acc.epsilon_interval(1e-5)
    assert lo <= truth <= up
    assert up - truth < 1e-3


def test_gaussian_matches_conversions():
    # the accountant evaluates the Balle-Wang curve itself (mpmath, any mu and count) and rounds
    # outwards by a few ulps; conversions' certified values lie within a hair of its interval
    from dpaudit.conversions import gaussian_delta, gaussian_epsilon

    acc = PLDAccountant().compose(Gaussian(3.0, sensitivity=2.0), 3)
    sigma_eff = 3.0 / 2.0 / math.sqrt(3)
    lo, up = acc.epsilon_interval(1e-6)
    assert lo <= gaussian_epsilon(sigma_eff, 1e-6) and up == pytest.approx(gaussian_epsilon(sigma_eff, 1e-6), rel=1e-13)
    lo, up = acc.delta_interval(0.7)
    assert lo <= gaussian_delta(sigma_eff, 0.7) and up == pytest.approx(gaussian_delta(sigma_eff, 0.7), rel=1e-13)


def test_laplace_ten_fold_reference():
    acc = PLDAccountant().compose(Laplace(1.0), 10)
    lo, up = acc.epsilon_interval(1e-5)
    # dp_accounting 0.6.0 PLD (pessimistic, d = 1e-4, an upper bound) printed to 6 digits:
    # 9.98996; computed, 9.989962317 (the accountant is compared with it at the grid spacing)
    assert up == pytest.approx(9.98996, abs=1e-5)
    ref = dpa_pld.PLDAccountant(value_discretization_interval=1e-4)
    ref.compose(dpa.LaplaceDpEvent(1.0), 10)
    theirs = ref.get_epsilon(1e-5)
    assert lo <= theirs and abs(up - theirs) < 1e-4
    assert up - lo < 1e-6
    assert up < 9.99033  # tighter than RDP (dp_accounting 0.6.0)


def _rr_composed_delta(eps0, k, eps, delta0=0.0):
    """Exact delta of k-fold randomized response (with an (eps0, delta0) atom) by brute force."""
    j = np.arange(k + 1)  # number of "+eps0" outcomes
    p_hi = math.exp(eps0) / (1 + math.exp(eps0))
    pm = binom.pmf(j, k, p_hi)
    losses = (2 * j - k) * eps0
    rr = float(np.sum(pm * np.clip(1 - np.exp(eps - losses), 0, None)))
    # (1 - delta0)^k and its complement without cancellation: 1 - (1 - 1e-6)^5 in floats loses 11 digits,
    # which put this reference 2.6e-11 (relative) above the true delta, and above the PLD's lower end
    log_s = k * math.log1p(-delta0)
    return -math.expm1(log_s) + math.exp(log_s) * rr


@pytest.mark.parametrize("eps0,k", [(0.8, 1), (0.5, 7), (0.1, 50)])
def test_pure_dp_brackets_brute_force(eps0, k):
    acc = PLDAccountant().compose(PureDP(eps0), k)
    for eps in (0.0, 0.3, 1.0, 2.5):
        exact = _rr_composed_delta(eps0, k, eps)
        lo, up = acc.delta_interval(eps)
        assert lo <= exact + 1e-15 and exact <= up + 1e-15
        assert up - exact < 1e-3


def test_approx_dp_brackets_brute_force():
    acc = PLDAccountant().compose(ApproxDP(0.5, 1e-6), 5)
    for eps in (0.0, 0.5, 1.0, 3.0):
        exact = _rr_composed_delta(0.5, 5, eps, 1e-6)
        lo, up = acc.delta_interval(eps)
        assert lo <= exact <= up
        assert up - exact < 1e-3
    # 5 * 0.5 = 2.5 is the largest loss: beyond it only the delta atoms remain; the upper end
    # also carries the FFT round-off charge (n_bins * u * log2(N) * peak, ~1e-10 here)
    lo, up = acc.delta_interval(2.6)
    exact = -math.expm1(5 * math.log1p(-1e-6))  # 1 - (1 - 1e-6)^5 without cancellation
    assert lo <= exact <= up <= exact + 1e-10


def test_heterogeneous_against_dp_accounting():
    acc = PLDAccountant()
    acc.compose(PoissonSampled(Gaussian(1.1), 0.01), 300).compose(Laplace(10.0), 5).compose(Gaussian(30.0), 10)
    acc.compose(PoissonSampled(Laplace(2.0), 0.05), 100)
    ref = dpa_pld.PLDAccountant(value_discretization_interval=1e-4)
    ref.compose(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1)), 300)
    ref.compose(dpa.LaplaceDpEvent(10.0), 5).compose(dpa.GaussianDpEvent(30.0), 10)
    ref.compose(dpa.PoissonSampledDpEvent(0.05, dpa.LaplaceDpEvent(2.0)), 100)
    lo, up = acc.epsilon_interval(1e-6)
    theirs = ref.get_epsilon(1e-6)
    assert lo <= theirs + 1e-6
    assert up <= theirs + 1e-4
    assert up >= theirs - 1e-4


def test_sampled_laplace_both_directions():
    acc = PLDAccountant().compose(PoissonSampled(Laplace(0.5), 0.1), 20)
    ref = dpa_pld.PLDAccountant(value_discretization_interval=1e-4)
    ref.compose(dpa.PoissonSampledDpEvent(0.1, dpa.LaplaceDpEvent(0.5)), 20)
    lo, up = acc.epsilon_interval(1e-5)
    assert lo <= ref.get_epsilon(1e-5) + 1e-6
    assert up == pytest.approx(ref.get_epsilon(1e-5), abs=2e-4)


def test_subsampled_pure_dp_is_tighter_than_the_amplified_statement():
    # PoissonSampled(PureDP) uses the subsampled randomized-response pair in both directions
    # (Zhu, Dong, Wang 2022, Thm. 10), not the amplified pure statement (looser; and its
    # randomized-response pair is attained by no subsampled mechanism, so it cannot give a
    # lower end: that gave the inverted interval of issue 11)
    m = PoissonSampled(PureDP(1.0), 0.1)
    acc = PLDAccountant(rdp_fallback=False).compose(m, 3)
    direct = PLDAccountant(rdp_fallback=False).compose(PureDP(m.pure_epsilon()), 3)
    lo, up = acc.epsilon_interval(1e-5)
    assert lo <= up < direct.epsilon(1e-5)


def test_q_zero_and_count_zero_are_identity():
    acc = PLDAccountant().compose(PoissonSampled(Gaussian(1.0), 0.0), 100).compose(Laplace(1.0), 0)
    assert acc.epsilon_interval(1e-5) == (0.0, 0.0)
    assert acc.delta(0.0) == 0.0


def test_q_one_is_the_base_mechanism():
    a = PLDAccountant().compose(PoissonSampled(Gaussian(2.0), 1.0), 4).epsilon(1e-5)
    b = PLDAccountant().compose(Gaussian(2.0), 4).epsilon(1e-5)
    assert a == b


def test_tiny_delta_falls_back_to_rdp_and_stays_valid():
    acc = PLDAccountant().compose(PoissonSampled(Gaussian(1.1), 0.01), 100)
    lo, up = acc.epsilon_interval(1e-18)
    assert math.isfinite(up) and lo <= up
    assert acc.details["upper_source"] == "rdp"
    no_fb = PLDAccountant(rdp_fallback=False).compose(PoissonSampled(Gaussian(1.1), 0.01), 100)
    assert no_fb.epsilon(1e-18) == math.inf  # the PLD alone cannot certify below its truncated mass


# -- bounded memory ------------------------------------------------------------------------------


def test_refuses_huge_grid_before_allocating():
    acc = PLDAccountant(discretization=1e-9, adaptive=False).compose(PoissonSampled(Gaussian(1.1), 0.01), 10)
    with pytest.raises(ValueError, match="coarser discretization"):
        acc.epsilon(1e-5)


def test_adaptive_grid_coarsens_to_the_budget():
    acc = PLDAccountant(discretization=1e-9, max_bins=2**14).compose(PoissonSampled(Gaussian(1.1), 0.01), 10)
    lo, up = acc.epsilon_interval(1e-5)
    ref = PLDAccountant().compose(PoissonSampled(Gaussian(1.1), 0.01), 10).epsilon_interval(1e-5)
    assert acc.effective_discretization > 1e-9
    assert lo <= ref[1] and ref[0] <= up and up - lo < 1e-2


def test_small_epsilon_gaussian_pld_path():
    acc = PLDAccountant(exact_gaussian=False).compose(Gaussian(500.0))
    exact = PLDAccountant().compose(Gaussian(500.0))
    lo, up = acc.epsilon_interval(1e-5)
    e_lo, e_up = exact.epsilon_interval(1e-5)
    assert lo <= e_lo <= e_up <= up
    assert up - e_up < 1e-3
    assert acc.effective_discretization < 1e-4  # refined: the single-step loss is narrow


# -- properties ----------------------------------------------------------------------------------

qs = st.floats(0.002, 0.5)
sigmas = st.floats(0.6, 5.0)
steps = st.integers(1, 200)
deltas = st.sampled_from([1e-3, 1e-5, 1e-7])


def _acc(q, sigma, k, **kw):
    return PLDAccountant(discretization=COARSE, **kw).compose(PoissonSampled(Gaussian(sigma), q), k)


@settings(max_examples=12)
@given(qs, sigmas, steps, deltas)
def test_property_interval_and_rdp(q, sigma, k, delta):
    acc = _acc(q, sigma, k, rdp_fallback=False)
    lo, up = acc.epsilon_interval(delta)
    assert lo <= up
    rdp = RDPAccountant(warn_at_grid_end=False).compose(PoissonSampled(Gaussian(sigma), q), k).epsilon(delta)
    assert up <= rdp + 1e-6
    # delta(epsilon(delta)) is consistent: the pessimistic curve is <= delta at its own epsilon
    if 0 < up < math.inf:
        assert acc.delta(up) <= delta * (1 + 1e-9)
        # and strictly above delta one grid step earlier (epsilon is not loose by more than that)
        assert acc.delta(max(up - 2 * acc.effective_discretization, 0.0)) >= delta * (1 - 1e-9) or up < 2e-3


@settings(max_examples=6)
@given(qs, sigmas, steps, st.floats(1.05, 2.0), st.floats(1.05, 2.0), st.integers(1, 50))
def test_property_monotone(q, sigma, k, fq, fs, dk):
    delta = 1e-5
    base = _acc(q, sigma, k).epsilon(delta)
    assert _acc(min(q * fq, 1.0), sigma, k).epsilon(delta) >= base - 1e-9
    assert _acc(q, sigma * fs, k).epsilon(delta) <= base + 1e-9
    assert _acc(q, sigma, k + dk).epsilon(delta) >= base - 1e-9


@settings(max_examples=10)
@given(st.floats(0.05, 3.0), st.integers(1, 30), st.floats(0.0, 4.0))
def test_property_pure_dp_contains_exact(eps0, k, eps):
    acc = PLDAccountant(discretization=COARSE).compose(PureDP(eps0), k)
    exact = _rr_composed_delta(eps0, k, eps)
    lo, up = acc.delta_interval(eps)
    assert lo <= exact + 1e-14 and exact <= up + 1e-14


@settings(max_examples=10)
@given(st.floats(0.3, 30.0), st.integers(1, 1000), deltas)
def test_property_gaussian_pld_brackets_exact(sigma, k, delta):
    exact = PLDAccountant().compose(Gaussian(sigma), k).epsilon(delta)
    acc = PLDAccountant(discretization=COARSE, exact_gaussian=False)
    lo, up = acc.compose(Gaussian(sigma), k).epsilon_interval(delta)
    assert lo <= exact <= up + 1e-12
    assert up - exact < 1e-3


# -- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize("d", [0.0, -1e-4, math.nan, math.inf, 2.0])
def test_bad_discretization(d):
    with pytest.raises(ValueError, match="discretization"):
        PLDAccountant(discretization=d)


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, math.nan])
def test_bad_delta(delta):
    acc = PLDAccountant().compose(Laplace(1.0))
    with pytest.raises(ValueError, match="delta"):
        acc.epsilon(delta)
    with pytest.raises(ValueError, match="delta"):
        acc.epsilon_interval(delta)


@pytest.mark.parametrize("eps", [-0.1, math.nan, math.inf])
def test_bad_epsilon(eps):
    acc = PLDAccountant().compose(Laplace(1.0))
    with pytest.raises(ValueError, match="epsilon"):
        acc.delta(eps)


def test_bad_count_and_tail_mass():
    with pytest.raises(ValueError, match="count"):
        PLDAccountant().compose(Gaussian(1.0), -1)
    with pytest.raises(ValueError, match="tail_mass"):
        PLDAccountant(tail_mass=0.5)


def test_unsupported_mechanisms():
    acc = PLDAccountant()
    with pytest.raises(UnsupportedMechanismError):
        acc.compose(SampledWithoutReplacement(Gaussian(1.0, neighbouring="replace_one"), 0.1))
    with pytest.raises(UnsupportedMechanismError):
        acc.compose(object())
    with pytest.raises(TypeError):  # UnsupportedMechanismError is also a TypeError
        acc.compose(object())


def test_mixed_neighbouring_refused():
    acc = PLDAccountant().compose(Gaussian(1.0))
    with pytest.raises(ValueError, match="neighbouring"):
        acc.compose(Gaussian(1.0, neighbouring="replace_one"))


def test_cap_constant_is_about_a_gigabyte():
    assert MAX_BINS * 8 <= 2**28  # one float64 array <= 256 MiB
