"""dpaudit.testing: strategies, configuration and the assertion helpers."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpaudit
from dpaudit.testing import strategies as dst
from dpaudit.testing._config import AuditConfig, active_config, seed_from_name, use_config
from dpaudit.testing.assertions import (
    assert_accountant_sound,
    assert_audit_consistent,
    exact_epsilon,
)


# -- strategies ---------------------------------------------------------------------------------
@given(dst.epsilons(), dst.deltas(), dst.orders(), dst.sampling_rates(), dst.sigmas())
def test_parameters_in_legal_ranges(eps, delta, alpha, q, sigma):
    assert 0.01 <= eps <= 10 and 1e-12 <= delta <= 0.1 and 1.01 <= alpha <= 256
    assert 1e-4 <= q <= 1 and 0.3 <= sigma <= 50


@given(dst.epsilons(min_value=0.0), dst.order_lists())
def test_epsilon_zero_allowed_and_order_lists_sorted(eps, orders):
    assert eps >= 0
    assert np.all(orders > 1) and np.all(np.diff(orders) > 0)


def test_log_uniform_reaches_both_decades():
    seen = []

    @settings(max_examples=200, derandomize=True)
    @given(dst.deltas(1e-10, 1e-2))
    def collect(d):
        seen.append(d)

    collect()
    assert min(seen) < 1e-8 and max(seen) > 1e-4  # log-uniform: small values are not starved


@given(dst.neighbouring_datasets(dim=2, max_size=5))
def test_neighbouring_pairs(pair):
    x, xp, rel, i = pair
    assert x.ndim == xp.ndim == 2 and x.shape[1] == xp.shape[1] == 2
    if rel == "add_remove":
        assert len(xp) == len(x) + 1
        np.testing.assert_array_equal(np.delete(xp, i, axis=0), x)
    else:
        assert x.shape == xp.shape
        differ = np.any(x != xp, axis=1)
        assert differ.sum() == 1 and differ[i]


@given(dst.neighbouring_datasets("replace_one", min_size=1, max_size=3,
                                 elements=st.sampled_from([0.0, 1.0])))
def test_replace_one_always_differs_even_on_tiny_domains(pair):
    assert np.sum(np.any(pair.x != pair.x_prime, axis=1)) == 1


@given(dst.gaussian_mechanisms(), dst.order_lists())
def test_gaussian_strategy_builds_valid_mechanisms(mech, orders):
    assert mech.neighbouring in ("add_remove", "replace_one")
    np.testing.assert_allclose(mech.rdp(orders), orders * mech.zcdp())


@given(dst.privacy_claims())
def test_claim_strategy(claim):
    d = claim.details["delta"]
    assert claim.epsilon(min(0.5, d * 2)) == claim.details["epsilon"]


@pytest.mark.parametrize("call", [
    lambda: dst.deltas(0.0, 0.1), lambda: dst.deltas(0.1, 1.0), lambda: dst.orders(1.0, 2.0),
    lambda: dst.sampling_rates(0.0), lambda: dst.log_uniform(-1, 1), lambda: dst.epsilons(-1.0),
])
def test_strategy_bad_bounds(call):
    with pytest.raises(ValueError):
        call()


def test_neighbouring_bad_arguments():
    with pytest.raises(ValueError, match="relation"):
        dst.neighbouring_datasets("swap")
    with pytest.raises(ValueError, match="sizes"):
        dst.neighbouring_datasets(min_size=3, max_size=2)
    with pytest.raises(ValueError, match="dim"):
        dst.neighbouring_datasets(dim=0)


# -- configuration --------------------------------------------------------------------------------
def test_config_precedence_and_reset():
    base = active_config()
    with use_config(AuditConfig(trials=123, seed=7, confidence=0.9, source="outer")):
        assert active_config().trials == 123
        with use_config(trials=5):
            cfg = active_config()
            assert (cfg.trials, cfg.seed, cfg.confidence) == (5, 7, 0.9)
        assert active_config().trials == 123
    assert active_config() == base
    assert seed_from_name("a::b") == seed_from_name("a::b") != seed_from_name("a::c")


# -- exact curves ---------------------------------------------------------------------------------
def test_exact_gaussian_reference_value():
    # closed forms (Balle & Wang 2018; Bun & Steinke 2016) = dp_accounting 0.6.0: sigma/Delta = 1, delta = 1e-5 -> 4.377178095681 (closed form; = dp_accounting)
    assert exact_epsilon(dpaudit.Gaussian(1.0), 1e-5) == pytest.approx(4.377178095681, rel=1e-9)
    # closed forms (Balle & Wang 2018; Bun & Steinke 2016) = dp_accounting 0.6.0: 1000 steps at sigma/Delta = 20 -> one Gaussian with 20/sqrt(1000): 7.511275900745
    assert exact_epsilon(dpaudit.Gaussian(20.0), 1e-5, count=1000) == pytest.approx(7.511275900745, rel=1e-9)


def _laplace_hockey_stick(b, sens, eps):
    """delta(eps) = int max(0, p - e^eps q) for p = Lap(0, b), q = Lap(sens, b), by mpmath quadrature."""
    mpmath.mp.dps = 30
    def p(y):
        return mpmath.exp(-abs(y) / b) / (2 * b)

    def q(y):
        return mpmath.exp(-abs(y - sens) / b) / (2 * b)

    def f(y):
        return max(mpmath.mpf(0), p(y) - mpmath.exp(eps) * q(y))

    kink = (sens - b * eps) / 2  # where p = e^eps q (the integrand's kink)
    return float(mpmath.quad(f, [-mpmath.inf, 0, kink, sens, mpmath.inf]))


@pytest.mark.parametrize("scale,sens,delta", [(1.0, 1.0, 1e-3), (0.5, 1.0, 0.05), (2.0, 3.0, 0.2)])
def test_exact_laplace_against_quadrature(scale, sens, delta):
    mech = dpaudit.Laplace(scale, sensitivity=sens)
    eps = exact_epsilon(mech, delta)
    assert eps == pytest.approx(sens / scale + 2 * math.log1p(-delta), rel=1e-12)
    assert _laplace_hockey_stick(scale, sens, eps) == pytest.approx(delta, rel=1e-8)


def test_exact_unknown_cases_and_bad_inputs():
    assert exact_epsilon(dpaudit.Laplace(1.0), 1e-5, count=2) is None
    assert exact_epsilon(object(), 1e-5) is None
    with pytest.raises(ValueError, match="delta"):
        exact_epsilon(dpaudit.Gaussian(1.0), 0.0)
    with pytest.raises(ValueError, match="count"):
        exact_epsilon(dpaudit.Gaussian(1.0), 1e-5, count=0)


# -- assert_audit_consistent ---------------------------------------------------------------------
def laplace_sampler(scale):
    def sampler(x, rng, size):
        return np.asarray(x, dtype=float) + rng.laplace(0.0, scale, size=size)
    return sampler


def test_consistent_mechanism_passes():
    res = assert_audit_consistent(laplace_sampler(1.0), 0.0, 1.0, epsilon=1.0, trials=20_000, seed=1,
                                  statistic="auto-real")  # textbook float sampler: audit the math (issue 15)
    assert not res.violation and res.epsilon_lower <= 1.0 and res.trials == 20_000


def test_mechanism_object_is_accepted():
    res = assert_audit_consistent(dpaudit.Laplace(1.0), 0.0, 1.0, epsilon=1.0, seed=2, trials=10_000)
    assert not res.violation


def test_broken_mechanism_fails_with_an_explanation():
    # noise scaled for sensitivity 1/3: really 3-DP, claimed 1-DP
    with pytest.raises(AssertionError) as info:
        assert_audit_consistent(laplace_sampler(1 / 3), 0.0, 1.0, epsilon=1.0, trials=20_000, seed=3,
                                statistic="auto-real")
    msg = str(info.value)
    for needle in ("contradicts the claimed privacy budget", "epsilon = 1 at delta = 0", "lower bound:",
                   "method:", "20,000 per dataset, seed 3", "sensitivity", "NOT (1, 0)-DP"):
        assert needle in msg, needle
    lb = float(msg.split("epsilon >= ")[1].split()[0])
    assert 1.0 < lb <= 3.0


def test_helper_reads_active_config():
    with use_config(AuditConfig(trials=5_000, seed=11, confidence=0.9, source="test")):
        res = assert_audit_consistent(laplace_sampler(1.0), 0.0, 1.0, epsilon=1.0, statistic="auto-real")
    assert res.trials == 5_000 and res.confidence == 0.9


@pytest.mark.parametrize("kw,name", [({"epsilon": -1.0}, "epsilon"), ({"epsilon": 1.0, "delta": 1.0}, "delta"),
                                     ({"epsilon": float("nan")}, "epsilon")])
def test_audit_bad_inputs(kw, name):
    with pytest.raises(ValueError, match=name):
        assert_audit_consistent(laplace_sampler(1.0), 0.0, 1.0, **kw)


def test_bad_sampler():
    with pytest.raises(ValueError, match="sampler"):
        assert_audit_consistent(42, 0.0, 1.0, epsilon=1.0)


# -- assert_accountant_sound -----------------------------------------------------------------------
class CurveAccountant:
    """A stand-in accountant: epsilon(delta) = scale * exact Gaussian curve."""

    def __init__(self, sigma, factor=1.0, inconsistent=False, increasing=False):
        from dpaudit.conversions import gaussian_delta, gaussian_epsilon
        self._e, self._d = gaussian_epsilon, gaussian_delta
        self.sigma, self.factor, self.inconsistent, self.increasing = sigma, factor, inconsistent, increasing

    def epsilon(self, delta):
        if self.increasing:
            return 1.0 + delta
        return self.factor * self._e(self.sigma, delta)

    def delta(self, epsilon):
        d = self._d(self.sigma, epsilon / self.factor)
        return 3 * d if self.inconsistent else d


def test_exact_accountant_is_sound():
    out = assert_accountant_sound(CurveAccountant(1.0), dpaudit.Gaussian(1.0), delta=1e-5, seed=4, trials=20_000)
    assert out["epsilon"] == pytest.approx(4.377178095681, rel=1e-9)
    assert out["audit"] is not None and out["audit"].epsilon_lower <= out["epsilon"]


def test_real_rdp_accountant_is_sound_for_composed_gaussians():
    acc = dpaudit.RDPAccountant().compose(dpaudit.Gaussian(2.0), count=4)
    out = assert_accountant_sound(acc, dpaudit.Gaussian(2.0), count=4, delta=1e-5, seed=5, trials=20_000)
    assert out["epsilon"] >= out["exact"]


def test_under_reporting_accountant_fails():
    with pytest.raises(AssertionError, match="below the exact value"):
        assert_accountant_sound(CurveAccountant(1.0, factor=0.8), dpaudit.Gaussian(1.0), delta=1e-5, audit=False)


def test_under_reporting_caught_by_audit_when_no_exact_value():
    acc = CurveAccountant(0.5, factor=0.25)  # 4x under-report of a Gaussian with sigma 0.5
    with pytest.raises(AssertionError, match="contradicts the accountant's"):
        assert_accountant_sound(acc, dpaudit.Gaussian(0.5), exact=0.0, delta=1e-5, seed=6, trials=20_000)


def test_inconsistent_and_increasing_accountants_fail():
    with pytest.raises(AssertionError, match="inconsistent"):
        assert_accountant_sound(CurveAccountant(1.0, inconsistent=True), audit=False)
    with pytest.raises(AssertionError, match="increasing in delta"):
        assert_accountant_sound(CurveAccountant(1.0, increasing=True), audit=False)


def test_nan_accountant_fails_and_bad_inputs():
    class Nan:
        def epsilon(self, d):
            return float("nan")
    with pytest.raises(AssertionError, match="must be a number"):
        assert_accountant_sound(Nan())
    with pytest.raises(ValueError, match="delta"):
        assert_accountant_sound(CurveAccountant(1.0), delta=2.0)
    with pytest.raises(ValueError, match="x and x_prime"):
        assert_accountant_sound(CurveAccountant(1.0), sampler=laplace_sampler(1.0))
