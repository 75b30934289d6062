"""The central-limit GDP approximation (Bu, Dong, Long, Su 2020; Opacus' ``gdp``), issue 17.

It is an approximation that can under-estimate: checked against a re-implementation of Opacus'
formulas, shown below the certified PLD epsilon at small T, and kept out of the accountant
registry (calibration, claims, CLI and verdicts cannot pick it).
"""

from __future__ import annotations

import math

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize
from scipy.stats import norm

import dpaudit
from dpaudit import Gaussian, Laplace, PLDAccountant, PoissonSampled, calibrate_sigma
from dpaudit.accounting.base import ACCOUNTANTS, Accountant, make_accountant
from dpaudit.accounting.calibration import CALIBRATION_ACCOUNTANTS, LAPLACE_CALIBRATION_ACCOUNTANTS
from dpaudit.accounting.gdp_clt import CLT_LABEL, CentralLimitGDP, clt_mu_poisson
from dpaudit.core.validation import UnsupportedMechanismError


# -- Opacus 1.x ``opacus/accountants/analysis/gdp.py``, re-implemented here (named as such) -------
def _opacus_compute_mu_poisson(*, steps, noise_multiplier, sample_rate):
    return math.sqrt(math.exp(noise_multiplier ** (-2)) - 1) * math.sqrt(steps) * sample_rate


def _opacus_delta_eps_mu(*, eps, mu):
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def _opacus_eps_from_mu(*, mu, delta):
    return optimize.root_scalar(lambda x: _opacus_delta_eps_mu(eps=x, mu=mu) - delta,
                                bracket=[0, 500], method="brentq").root


CASES = [(256 / 60000, 1.1, 60 * 60000 // 256), (256 / 60000, 0.7, 15 * 60000 // 256), (0.01, 1.0, 1000),
         (0.05, 2.0, 500), (0.001, 0.8, 10_000)]


@pytest.mark.parametrize("q, sigma, steps", CASES)
def test_matches_the_opacus_formulas(q, sigma, steps):
    acc = CentralLimitGDP().compose(PoissonSampled(Gaussian(sigma), q), steps)
    mu = _opacus_compute_mu_poisson(steps=steps, noise_multiplier=sigma, sample_rate=q)
    assert acc.mu_estimate == pytest.approx(mu, rel=1e-12)
    for delta in (1e-5, 1e-3):
        assert acc.epsilon_estimate(delta) == pytest.approx(_opacus_eps_from_mu(mu=mu, delta=delta), rel=1e-6)
    assert acc.delta_estimate(1.0) == pytest.approx(_opacus_delta_eps_mu(eps=1.0, mu=mu), rel=1e-9)


def test_mu_against_mpmath_over_the_range():
    for q, sigma, steps in [(1e-6, 0.05, 10), (0.5, 0.3, 7), (1.0, 100.0, 10**6), (1e-3, 1e4, 10**9)]:
        with mp.workdps(40):
            ref = mp.mpf(q) * mp.sqrt(steps * (mp.e ** (1 / mp.mpf(sigma) ** 2) - 1))
        assert clt_mu_poisson(q, sigma, steps) == pytest.approx(float(ref), rel=1e-13)
    assert clt_mu_poisson(0.1, 0.01, 10) == math.inf  # e^{10^4} overflows: inf, not an error
    assert clt_mu_poisson(0.0, 1.0, 10) == 0.0


@pytest.mark.parametrize("q, sigma, steps", [(0.01, 1.0, 10), (0.01, 0.8, 100), (0.1, 1.0, 10),
                                             (256 / 60000, 1.1, 1000), (0.5, 1.0, 5)])
def test_under_estimates_the_certified_pld_epsilon_at_small_T(q, sigma, steps):
    """The CLT value lies BELOW the certified lower end of the PLD epsilon: it is not a bound.
    Measured (delta 1e-5): (0.01, 1, 10) 0.130 vs PLD [0.380, 0.380]; (0.01, 0.8, 100) 0.702 vs
    1.511; (0.1, 1, 10) 1.618 vs 2.855; (256/60000, 1.1, 1000) 0.541 vs 0.599; (0.5, 1, 5) 6.86 vs 7.42."""
    clt = CentralLimitGDP().compose(PoissonSampled(Gaussian(sigma), q), steps).epsilon_estimate(1e-5)
    lower, _ = PLDAccountant().compose(PoissonSampled(Gaussian(sigma), q), steps).epsilon_interval(1e-5)
    assert clt < lower


def test_results_are_labelled_and_never_a_bound():
    acc = CentralLimitGDP().compose(PoissonSampled(Gaussian(1.0), 0.01), 100)
    est = acc.estimate(1e-5)
    assert est.is_bound is False and est.label == CLT_LABEL and "NOT a bound" in est.label
    assert "under-estimate" in est.label
    d = est.to_dict()
    assert d["is_bound"] is False and "epsilon" not in d and d["epsilon_estimate"] == est.epsilon
    assert "not a bound" in repr(acc)
    assert not isinstance(acc, Accountant)
    assert not hasattr(acc, "epsilon") and not hasattr(acc, "delta")  # no bound-shaped query


def test_not_registered_anywhere_a_bound_is_chosen():
    for name in ("gdp", "clt", "gdp_clt", "CentralLimitGDP"):
        assert name not in ACCOUNTANTS and name not in CALIBRATION_ACCOUNTANTS
        assert name not in LAPLACE_CALIBRATION_ACCOUNTANTS
        with pytest.raises(ValueError, match="accountant"):
            make_accountant(name)
        with pytest.raises(ValueError, match="accountant"):
            calibrate_sigma(1.0, 1e-5, accountant=name)
    assert dpaudit.CentralLimitGDP is CentralLimitGDP


def test_unsampled_gaussian_is_exact_gdp_and_refusals():
    acc = CentralLimitGDP().compose(Gaussian(2.0), 4)
    assert acc.mu_estimate == pytest.approx(1.0, rel=1e-15)
    assert acc.epsilon_estimate(1e-5) == dpaudit.conversions.gaussian_epsilon(1.0, 1e-5)
    assert CentralLimitGDP().epsilon_estimate(1e-5) == 0.0
    with pytest.raises(UnsupportedMechanismError):
        CentralLimitGDP().compose(Laplace(1.0))
    with pytest.raises(ValueError, match="delta"):
        acc.epsilon_estimate(0.0)
    with pytest.raises(ValueError, match="count"):
        acc.compose(Gaussian(1.0), -1)
    with pytest.raises(ValueError, match="noise_multiplier"):
        clt_mu_poisson(0.1, 0.0, 10)


@settings(max_examples=50, deadline=None)
@given(q=st.floats(1e-4, 1.0), sigma=st.floats(0.3, 50.0), a=st.integers(0, 10**5), b=st.integers(0, 10**5))
def test_composition_adds_mu_squared(q, sigma, a, b):
    m = PoissonSampled(Gaussian(sigma), q)
    parts = CentralLimitGDP().compose(m, a).compose(m, b).mu_estimate
    whole = CentralLimitGDP().compose(m, a + b).mu_estimate
    assert parts == pytest.approx(whole, rel=1e-12, abs=1e-300)
