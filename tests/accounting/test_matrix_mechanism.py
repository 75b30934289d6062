"""Amplified accounting of matrix-factorization runs: banded strategies under cyclic Poisson sampling,
MMCC, the Monte Carlo accountant, and the strategy comparison at the same epsilon."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import special

from dpaudit import Gaussian, PLDAccountant, PoissonSampled, RDPAccountant
from dpaudit.accounting.matrix_mechanism import banded_cyclic_poisson, compare_strategies
from dpaudit.accounting.mmcc_bound import mmcc
from dpaudit.accounting.monte_carlo import (
    BandedMinSepLosses,
    GaussianLosses,
    MonteCarloEpsilon,
    PoissonGaussianLosses,
    kl_upper_bound,
    loss_samples,
    monte_carlo_delta,
    monte_carlo_epsilon,
)
from dpaudit.conversions import gaussian_delta, gaussian_epsilon
from dpaudit.mechanisms.matrix_factorization import MatrixFactorization
from dpaudit.mechanisms.mf_participation import Participation
from dpaudit.mechanisms.mf_strategies import (
    BandedToeplitz,
    BLTStrategy,
    DenseStrategy,
    IdentityStrategy,
    geometric_bands,
)

#: a coarser PLD grid than the default keeps these tests fast (every value is still an upper bound)
FAST = {"discretization": 1e-3}


def _dpsgd(sigma, q, count, delta):
    return PLDAccountant(**FAST).compose(PoissonSampled(Gaussian(sigma, 1.0), q), count=count).epsilon(delta)


# -- banded strategies under cyclic Poisson sampling (arXiv:2306.08153, Thm. 4) --------------------

def test_identity_under_cyclic_poisson_is_dpsgd():
    amp = banded_cyclic_poisson(IdentityStrategy(20), 1.2, 0.1)
    assert amp.count == 20 and amp.exact
    exact = _dpsgd(1.2, 0.1, 20, 1e-5)
    # the same accounting up to the sensitivity's 2-ulp rounding (each PLD value is an upper bound on its grid)
    assert amp.epsilon(1e-5, **FAST) == pytest.approx(exact, rel=1e-9)
    assert amp.epsilon(1e-5, "rdp") >= amp.epsilon(1e-5, **FAST)


def test_banded_reduction_counts_participations_and_states_exactness():
    s = geometric_bands(8, 64)
    amp = banded_cyclic_poisson(s, 2.0, 0.2)
    assert (amp.count, amp.groups, amp.bands, amp.exact) == (8, 8, 8, True)
    assert amp.epsilon(1e-6, **FAST) == pytest.approx(_dpsgd(2.0, 0.2, 8, 1e-6), rel=1e-8)  # column norm 1
    ragged = banded_cyclic_poisson(geometric_bands(8, 60), 2.0, 0.2)  # last participation: a short column
    assert ragged.count == 8 and not ragged.exact
    wider = banded_cyclic_poisson(s, 2.0, 0.2, groups=16)
    assert wider.count == 4 and wider.epsilon(1e-6, **FAST) < amp.epsilon(1e-6, **FAST)


def test_banded_reduction_refuses_what_the_theorem_does_not_cover():
    with pytest.raises(ValueError, match="groups"):
        banded_cyclic_poisson(geometric_bands(8, 64), 1.0, 0.1, groups=4)
    with pytest.raises(ValueError, match="banded"):
        banded_cyclic_poisson(BLTStrategy((0.9,), (0.5,), 64), 1.0, 0.1)
    with pytest.raises(ValueError, match="sample_rate"):
        banded_cyclic_poisson(geometric_bands(4, 16), 1.0, 1.5)


def test_amplification_never_below_the_unamplified_exact_value_at_q_one():
    # q = 1 is no amplification: the reduction must then equal (never undercut) the exact Gaussian of
    # the banded run with min separation = bands (sqrt(k) column norms)
    s = geometric_bands(4, 32)
    amp = banded_cyclic_poisson(s, 3.0, 1.0)
    exact = PLDAccountant().compose(MatrixFactorization(s, 3.0, Participation.min_sep(4))).epsilon(1e-5)
    assert amp.epsilon(1e-5) >= exact * (1 - 1e-9)
    assert amp.epsilon(1e-5) == pytest.approx(exact, rel=1e-6)  # q = 1: both are the exact Gaussian


# -- MMCC -------------------------------------------------------------------------------------------

def test_mmcc_of_the_identity_is_dpsgd_plus_slack():
    b = mmcc(IdentityStrategy(40), 2.0, 0.1, slack=1e-9)
    assert b.details["distinct_rows"] == 1 and b.details["pairs"] == 0
    exact = PLDAccountant().compose(PoissonSampled(Gaussian(2.0, 1.0), 0.1), count=40)
    lower, upper = exact.epsilon_interval(1e-5)  # lower: certified below the true epsilon
    assert b.epsilon(1e-5) >= lower
    assert b.epsilon(1e-5) == pytest.approx(upper, rel=1e-3)
    assert b.delta(1.0) >= exact.delta_interval(1.0)[0]
    assert math.isinf(b.epsilon(1e-10))  # delta below the slack: no statement


def test_mmcc_is_never_below_the_exact_two_step_curve():
    # exact curve of the 2-step mechanism (record sampled w.p. q per step, contributions 1), by quadrature
    C = np.array([[1.0, 0.0], [0.6, 0.8]])
    sigma, q = 1.0, 0.3
    y = np.arange(-9, 11, 0.04)
    Y1, Y2 = np.meshgrid(y, y, indexing="ij")
    logs = []
    for x in itertools.product((0, 1), repeat=2):
        m = C @ np.array(x, dtype=float)
        w = q ** sum(x) * (1 - q) ** (2 - sum(x))
        logs.append(math.log(w) - ((Y1 - m[0]) ** 2 + (Y2 - m[1]) ** 2) / 2)
    p = np.exp(special.logsumexp(np.stack(logs), axis=0)) / (2 * math.pi) * 0.04 ** 2
    qd = np.exp(-(Y1 ** 2 + Y2 ** 2) / 2) / (2 * math.pi) * 0.04 ** 2
    b = mmcc(C, sigma, q, slack=1e-6)
    for eps in (0.3, 1.0):
        exact = max(np.sum(np.maximum(p - math.exp(eps) * qd, 0)), np.sum(np.maximum(qd - math.exp(eps) * p, 0)))
        assert b.delta(eps) >= exact + 1e-4


def test_mmcc_amplifies_a_banded_strategy_and_refuses_signed_c():
    s = geometric_bands(3, 24)
    b = mmcc(s, 4.0, 0.05)
    unamplified = PLDAccountant().compose(MatrixFactorization(s, 4.0, Participation.min_sep(1))).epsilon(1e-5)
    eps = b.epsilon(1e-5)
    assert _dpsgd(4.0 / float(np.linalg.norm(s.coefs)), 0.05, 24, 1e-5) <= eps < unamplified
    assert b.details["largest_conditional_rate"] >= 0.05
    with pytest.raises(ValueError, match="non-negative"):
        mmcc(BandedToeplitz((1.0, -0.5), 8), 1.0, 0.1)
    with pytest.raises(ValueError, match="steps"):
        mmcc(IdentityStrategy(2000), 1.0, 0.1)


# -- Monte Carlo accountant (Wang et al. 2023) --------------------------------------------------------

def test_kl_upper_bound_is_the_chernoff_bound():
    assert kl_upper_bound(0.0, 1000, 0.05) == pytest.approx(1 - 0.05 ** (1 / 1000), rel=1e-6)
    u = kl_upper_bound(0.01, 10_000, 0.05)
    cp = 0.011797233971347621  # Clopper-Pearson (binomial) bound: the Chernoff bound is a little wider
    assert cp < u < 1.1 * cp
    kl = 0.01 * math.log(0.01 / u) + 0.99 * math.log(0.99 / (1 - u))
    assert 10_000 * kl == pytest.approx(math.log(20), rel=1e-9)
    assert kl_upper_bound(1.0, 10, 0.05) == 1.0


def test_monte_carlo_states_a_probabilistic_epsilon_above_the_exact_gaussian():
    res = monte_carlo_epsilon(GaussianLosses(0.5, 4), 1e-3, samples=100_000, confidence=0.999, seed=3)
    assert isinstance(res, MonteCarloEpsilon) and res.probabilistic
    assert "with confidence 0.999" in res.statement() and "probabilistic" in res.statement()
    exact = gaussian_epsilon(1.0, 1e-3)
    assert res.epsilon >= exact and res.estimate == pytest.approx(exact, abs=0.15)
    d = monte_carlo_delta(GaussianLosses(0.5, 4), 1.0, samples=100_000, confidence=0.999, seed=4)
    assert d.delta >= gaussian_delta(1.0, 1.0) and d.probabilistic


def test_monte_carlo_of_the_cyclic_poisson_reduction_against_its_exact_pld():
    amp = banded_cyclic_poisson(geometric_bands(4, 32), 1.0, 0.2)
    pair = PoissonGaussianLosses(0.2, 1.0, amp.count)
    res = monte_carlo_epsilon(pair, 1e-3, samples=50_000, confidence=0.999, seed=11)
    exact = amp.epsilon(1e-3)
    assert res.epsilon >= exact
    assert res.estimate == pytest.approx(exact, rel=0.1)


def test_min_sep_log_ratio_equals_pattern_enumeration():
    c = (0.8, 0.5)
    n, b, p, sigma = 5, 2, 0.4, 0.9
    for warm in (False, True):
        s = BandedMinSepLosses(c, sigma, b, p, n, warm_start=warm)
        y = np.random.default_rng(0).normal(0, 1, (n, 3))
        # enumerate participation patterns with their probabilities under the process
        starts = [(0, 1.0)] if not warm else [(0, 1 / (1 + (b - 1) * p))] + [
            (r, p / (1 + (b - 1) * p)) for r in range(1, b)]
        total = np.zeros(3)
        for start, w0 in starts:
            for pat in itertools.product((0, 1), repeat=n):
                prob, nxt, ok = w0, start, True
                for t, v in enumerate(pat):
                    if t < nxt:
                        if v:
                            ok = False
                        continue
                    prob *= p if v else 1 - p
                    if v:
                        nxt = t + b
                if not ok or prob == 0:
                    continue
                mean = np.zeros(n)
                for t, v in enumerate(pat):
                    if v:
                        seg = np.asarray(c)[: n - t]
                        mean[t:t + seg.size] += seg
                ll = (mean @ y - mean @ mean / 2) / sigma ** 2
                total += prob * np.exp(ll)
        np.testing.assert_allclose(s.log_ratio(y), np.log(total), rtol=1e-10)


def test_min_sep_with_separation_one_is_poisson_sampling():
    a = loss_samples(BandedMinSepLosses((1.0,), 1.5, 1, 0.1, 20, warm_start=False), 40_000, seed=1)
    b = loss_samples(PoissonGaussianLosses(0.1, 1 / 1.5, 20), 40_000, seed=2)
    for side in (0, 1):
        assert np.mean(a[side]) == pytest.approx(np.mean(b[side]), abs=0.01)
        assert np.std(a[side]) == pytest.approx(np.std(b[side]), rel=0.03)


def test_monte_carlo_validation():
    with pytest.raises(ValueError, match="sampler"):
        monte_carlo_epsilon(object(), 1e-5)
    with pytest.raises(ValueError, match="coefs"):
        BandedMinSepLosses((1.0, 0.5, 0.2), 1.0, 2, 0.1, 10)
    with pytest.raises(ValueError, match="losses"):
        monte_carlo_delta(None, 1.0, losses=(np.ones(3), np.ones(4)))


@pytest.mark.slow
def test_monte_carlo_coverage_over_seeds():
    exact = gaussian_epsilon(1.0, 1e-2)
    misses = sum(monte_carlo_epsilon(GaussianLosses(1.0), 1e-2, samples=5_000, confidence=0.9, seed=s).epsilon < exact
                 for s in range(200))
    assert misses <= 0.1 * 200 + 3 * math.sqrt(200 * 0.1 * 0.9)


@pytest.mark.slow
def test_monte_carlo_agrees_with_jax_privacy_on_min_sep_sampling():
    pytest.importorskip("jax_privacy")
    from jax_privacy import batch_selection
    from jax_privacy.experimental.monte_carlo import delta_calculation as dc
    from jax_privacy.experimental.monte_carlo import sample_generation as sg

    c = np.array([1.0, 0.5, 0.25, 0.1])
    c = c / np.linalg.norm(c)
    n, b, p, sigma, N = 64, 8, 0.2, 1.0, 100_000
    ours = loss_samples(BandedMinSepLosses(tuple(c), sigma, b, p, n), N, seed=3)
    strat = batch_selection.BMinSepSampling(sampling_prob=p, iterations=n, min_sep=b)
    theirs_p, _ = sg.get_privacy_loss_sample(strat, sigma, c, seed=5, num_samples=N)
    theirs_q, _ = sg.get_privacy_loss_sample(strat, sigma, c, seed=6, positive_sample=False, num_samples=N)
    for eps in (1.0, 2.0, 3.0):
        ours_d = monte_carlo_delta(None, eps, losses=ours, confidence=0.999)
        j = max(dc.delta_from_epsilon_and_samples(eps, theirs_p), dc.delta_from_epsilon_and_samples(eps, theirs_q))
        assert ours_d.estimate == pytest.approx(j, rel=0.05)
        assert ours_d.delta >= j * 0.97


# -- the comparison at the same epsilon ---------------------------------------------------------------

def test_compare_strategies_at_the_same_epsilon():
    n = 64
    part = Participation.fixed_epoch(4)
    rows = compare_strategies({"banded": geometric_bands(16, n), "dense": DenseStrategy(np.eye(n))}, part, 4.0, 1e-5)
    names = [r.name for r in rows]
    assert names[0].startswith("identity") and names[-1].startswith("binary tree")
    ident = rows[0]
    assert ident.ratio_to_identity == 1.0 and ident.sensitivity == pytest.approx(2.0)
    assert rows[2].rmse == pytest.approx(ident.rmse)  # the dense identity is the identity
    mu = ident.sensitivity / ident.sigma
    assert gaussian_epsilon(1 / mu, 1e-5) == pytest.approx(4.0, rel=1e-6)
    assert rows[1].ratio_to_identity < 1.0
    assert RDPAccountant().compose(MatrixFactorization(geometric_bands(16, n), rows[1].sigma, part)).epsilon(1e-5) >= 4.0


def test_scipy_normal_quantile_used_by_mmcc_matches_mpmath():
    # mmcc's Gaussian threshold is -ndtri(beta/2) (inflated by 1e-12 relative); beta/2 in [1e-300, 0.5]
    import mpmath as mp

    mp.mp.dps = 40
    for e in np.linspace(-300, math.log10(0.5), 31):
        p = 10.0 ** e
        z = float(special.ndtri(p))
        exact = mp.findroot(lambda x: mp.ncdf(x) - p, z)
        assert abs(z - exact) <= 1e-14 * abs(exact)
