"""A new mechanism written in one file plugs into every accountant and helper (issue 16).

``_DiscreteLaplace`` below is defined entirely in this module: its RDP curve, zCDP, pure epsilon,
privacy-loss pair (for the PLD accountant), likelihood-ratio test (for the testing helpers) and
sampler. Nothing in ``dpaudit`` knows its name; RDP, zCDP, tCDP and PLD accountants,
``exact_epsilon``, ``assert_accountant_sound`` and ``assert_audit_consistent`` accept it through
the :class:`~dpaudit.mechanisms.base.Mechanism` protocol alone.

The discrete Laplace mechanism (Ghosh, Roughgarden, Sundararajan 2009; Canonne, Kamath, Steinke
2020, Def. 2) adds Z with P(Z = k) proportional to e^{-eps |k|} to an integer query of
sensitivity 1. Its privacy loss between the queries 0 and 1 is ``|k - 1| - |k|`` times eps:
``+eps`` for k <= 0 (P-mass 1/(1 + e^{-eps})) and ``-eps`` for k >= 1, i.e. exactly the
randomized-response pair (Kairouz, Oh, Viswanath 2015, Thm. 2.1), symmetric in its two
directions. Hence its Renyi divergence is that of randomized response,

    D_alpha = log(p^alpha q^{1-alpha} + (1-p)^alpha (1-q)^{1-alpha}) / (alpha - 1),
    p = e^eps/(1 + e^eps), q = 1 - p,

and its profile delta(e) = (e^eps - e^e)/(1 + e^eps) on [0, eps] gives
epsilon(delta) = log(e^eps - delta (1 + e^eps)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np
import pytest

import dpaudit
from dpaudit import PLDAccountant, PoissonSampled, RDPAccountant, TCDPAccountant, ZCDPAccountant
from dpaudit.core.validation import UnsupportedMechanismError, check_orders
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.loss_pairs import DiscretePair, PrivacyLoss
from dpaudit.testing import assert_accountant_sound, assert_audit_consistent, exact_epsilon


@dataclass(frozen=True)
class _DiscreteLaplace(Mechanism):
    """Integer query of sensitivity 1 plus discrete Laplace noise of parameter ``epsilon``."""

    epsilon: float

    def rdp(self, orders):
        orders = check_orders("orders", orders)
        eps = self.epsilon
        log_p, log_q = -math.log1p(math.exp(-eps)), -math.log1p(math.exp(eps))
        with np.errstate(over="ignore", invalid="ignore"):
            a = np.where(np.isfinite(orders), orders, 2.0)
            log_sum = np.logaddexp(a * log_p + (1 - a) * log_q, a * log_q + (1 - a) * log_p)
            out = log_sum / (a - 1)
        out = np.nextafter(np.nextafter(out, np.inf), np.inf)  # a few ulps up: an upper bound
        return np.minimum(np.where(np.isfinite(orders), out, eps), eps)  # D_alpha <= D_inf = eps

    def zcdp(self) -> float:
        return self.epsilon ** 2 / 2.0 * (1 + 1e-15)  # eps-DP => eps^2/2-zCDP (Bun & Steinke 2016, Prop. 1.4)

    def pure_epsilon(self) -> float:
        return self.epsilon

    def privacy_loss(self) -> PrivacyLoss:
        eps = self.epsilon
        p_plus = 1.0 / (1.0 + math.exp(-eps))
        pair = DiscretePair([-eps, eps], [1.0 - p_plus, p_plus])
        return PrivacyLoss((pair, pair), ((pair, pair),), "discrete-laplace", exact=True)

    def likelihood_ratio_test(self):
        eps = self.epsilon
        return 0.0, 1.0, lambda y: eps * (np.abs(y) - np.abs(y - 1.0))

    def sample(self, value, rng, size=None):
        value = np.asarray(value, dtype=float)
        shape = value.shape if size is None else tuple(np.atleast_1d(size)) + value.shape
        success = -math.expm1(-self.epsilon)  # Geometric(1 - e^-eps) - Geometric(1 - e^-eps) is discrete Laplace
        return value + (rng.geometric(success, shape) - rng.geometric(success, shape)).astype(float)


EPS = 0.8
DELTA = 1e-5


def _rr_rdp(eps, alpha):
    eps, alpha = mpmath.mpf(eps), mpmath.mpf(alpha)
    p = mpmath.e ** eps / (1 + mpmath.e ** eps)
    q = 1 - p
    return mpmath.log(p ** alpha * q ** (1 - alpha) + q ** alpha * p ** (1 - alpha)) / (alpha - 1)


def _rr_composed_delta(eps, k, e):
    """delta(e) of the k-fold randomized-response pair (binomial over the number of +eps losses)."""
    eps, e = mpmath.mpf(eps), mpmath.mpf(e)
    p = mpmath.e ** eps / (1 + mpmath.e ** eps)
    total = mpmath.mpf(0)
    for j in range(k + 1):
        loss = (2 * j - k) * eps
        if loss > e:
            total += mpmath.binomial(k, j) * p ** j * (1 - p) ** (k - j) * (1 - mpmath.e ** (e - loss))
    return total


def test_nothing_in_the_package_names_the_mechanism():
    assert _DiscreteLaplace.__module__ == __name__
    assert not hasattr(dpaudit, "_DiscreteLaplace")


def test_rdp_curve_is_the_randomized_response_divergence():
    m = _DiscreteLaplace(EPS)
    orders = np.array([1.5, 2.0, 8.0, 64.0])
    got = m.rdp(orders)
    for a, g in zip(orders, got):
        ref = float(_rr_rdp(EPS, a))
        assert ref <= g <= ref * (1 + 1e-12)


@pytest.mark.parametrize("k", [1, 10, 100])
def test_rdp_accountant_matches_the_curve(k):
    m = _DiscreteLaplace(EPS)
    acc = RDPAccountant().compose(m, k)
    assert np.array_equal(acc.rdp_curve(), k * m.rdp(acc.orders)) or np.allclose(acc.rdp_curve(), k * m.rdp(acc.orders),
                                                                                   rtol=1e-12)
    # the RDP bound is valid: at least the exact epsilon of the k-fold randomized response
    eps = acc.epsilon(DELTA)
    assert float(_rr_composed_delta(EPS, k, eps)) <= DELTA * (1 + 1e-9)
    # and not weaker than treating it as a mere eps-DP mechanism (the curve is the same)
    assert eps <= RDPAccountant().compose(dpaudit.PureDP(EPS), k).epsilon(DELTA) * (1 + 1e-9)


def test_zcdp_and_tcdp_accountants():
    m = _DiscreteLaplace(EPS)
    z = ZCDPAccountant().compose(m, 7)
    assert z.rho == pytest.approx(7 * EPS ** 2 / 2, rel=1e-12)
    t = TCDPAccountant().compose(m, 7)
    assert t.rho == pytest.approx(7 * EPS ** 2 / 2, rel=1e-12) and t.omega == math.inf
    assert math.isfinite(z.epsilon(DELTA)) and math.isfinite(t.epsilon(DELTA))


@pytest.mark.parametrize("k", [1, 5, 40])
def test_pld_interval_brackets_the_exact_composition(k):
    m = _DiscreteLaplace(EPS)
    acc = PLDAccountant().compose(m, k)
    for e in (0.0, 0.5, 2.0):
        lo, up = acc.delta_interval(e)
        exact = float(_rr_composed_delta(EPS, k, e))
        assert lo <= exact * (1 + 1e-9) + 1e-15 and exact <= up * (1 + 1e-9) + 1e-15
    lo, up = acc.epsilon_interval(DELTA)
    assert lo <= up and float(_rr_composed_delta(EPS, k, up)) <= DELTA * (1 + 1e-9)


def test_pld_accepts_it_poisson_subsampled():
    # the PoissonSampled wrapper subsamples the mechanism's own pair (both directions)
    sub = PoissonSampled(_DiscreteLaplace(EPS), 0.1)
    lo, up = PLDAccountant().compose(sub, 50).epsilon_interval(DELTA)
    full = PLDAccountant().compose(_DiscreteLaplace(EPS), 50).epsilon(DELTA)
    assert 0.0 < lo <= up < full


def test_exact_epsilon_from_its_own_pair():
    m = _DiscreteLaplace(EPS)
    ref = mpmath.log(mpmath.e ** EPS - mpmath.mpf(DELTA) * (1 + mpmath.e ** EPS))
    assert exact_epsilon(m, DELTA) == pytest.approx(float(ref), rel=1e-12, abs=1e-15)
    # its pair is randomized response with eps (sensitivity 1): two steps compose as two randomized
    # responses (Kairouz, Oh, Viswanath 2015, Thm. 3.3): delta(e) = p^2 (1 - e^{e - 2 eps}) for
    # eps <= e < 2 eps, p = e^eps/(1 + e^eps)
    p = mpmath.e ** EPS / (1 + mpmath.e ** EPS)
    two = mpmath.findroot(lambda e: p ** 2 * (1 - mpmath.e ** (e - 2 * EPS)) - DELTA, 2 * EPS - 1e-4)
    assert exact_epsilon(m, DELTA, count=2) == pytest.approx(float(two), rel=1e-12)
    assert exact_epsilon(PoissonSampled(m, 0.1), DELTA, count=2) is None  # no closed form claimed


def test_testing_helpers_accept_it():
    m = _DiscreteLaplace(EPS)
    out = assert_accountant_sound(PLDAccountant().compose(m), m, delta=DELTA, trials=4000, seed=11)
    assert out["exact"] == exact_epsilon(m, DELTA) and out["audit"] is not None  # audited via its LLR
    res = assert_audit_consistent(m, 0.0, 1.0, epsilon=EPS, trials=4000, seed=12)
    assert res.verdict in ("consistent", "inconclusive")


def test_helpers_catch_an_accountant_under_reporting_it():
    # a test that cannot fail is a defect: an accountant claiming less than the exact epsilon is caught
    class _TooSmall:
        source = "too-small"

        def epsilon(self, delta):
            return 0.5 * EPS

        def delta(self, epsilon):
            return 0.0

    with pytest.raises(AssertionError, match="below the exact value"):
        assert_accountant_sound(_TooSmall(), _DiscreteLaplace(EPS), delta=DELTA, audit=False)


def test_without_a_pair_the_pld_refuses_and_helpers_return_none():
    @dataclass(frozen=True)
    class _NoPair(Mechanism):
        def rdp(self, orders):
            return np.full(check_orders("orders", orders).shape, math.inf)

    with pytest.raises(UnsupportedMechanismError):
        PLDAccountant().compose(_NoPair())
    assert exact_epsilon(_NoPair(), DELTA) is None
