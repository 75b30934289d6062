"""Regression tests for issue 11 ("Every number trustworthy"), accounting layer, mechanisms,
bounds and interop: one test per defect of the brief (hangs, crashes, wrong-direction numbers),
plus the defects found by the property suite (tests/properties/test_numerics.py).

Each test failed on the code before the fix (hangs are turned into failures by a time limit).
References are high-precision mpmath values (tests/support/mpmath_oracles.py).
"""

from __future__ import annotations

import math
import signal
from contextlib import contextmanager

import mpmath as mp
import numpy as np
import pytest

import dpaudit
from dpaudit import conversions as C
from dpaudit.accounting.calibration import calibrate_sigma
from dpaudit.mechanisms import ExponentialMechanism, Gaussian, PoissonSampled, PureDP
from tests.support.mpmath_oracles import (
    mp_balle_delta,
    mp_balle_epsilon,
    mp_cks_delta,
    mp_cks_epsilon,
    mp_gauss_delta,
    mp_mu,
    mp_poisson_gaussian_rdp_int,
    mp_subsampled_rr_rdp,
)

pytestmark = pytest.mark.filterwarnings("error")


@contextmanager
def time_limit(seconds: float):
    """Fail (TimeoutError) instead of hanging: the defects below looped for ever."""

    def handler(signum, frame):
        raise TimeoutError(f"did not return within {seconds} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def exact_delta(sigma, eps, sensitivity=1.0):
    return mp_gauss_delta(mp_mu(sigma, sensitivity), eps)


# ============================================================================== hangs
def test_gaussian_epsilon_tiny_delta_returns_and_is_an_upper_bound():
    # stepped epsilon by 1e-14 relative: run time ~ 1/epsilon, never returned
    with time_limit(20):
        eps = C.gaussian_epsilon(1.0, 1e-320)
    assert exact_delta(1.0, eps) <= 1e-320
    assert exact_delta(1.0, eps * (1 - 1e-6)) > 1e-320  # and tight


def test_gdp_mu_delta_close_to_one_returns():
    with time_limit(20):
        mu = C.gdp_mu(1.0, 1 - 1e-9)
    assert 0 < mu < math.inf
    assert mp_gauss_delta(mu, 1.0) <= 1 - 1e-9
    assert mp_gauss_delta(mu * (1 + 1e-6), 1.0) > 1 - 1e-9


def test_calibrate_sigma_target_zero_exact_returns():
    with time_limit(30):
        sigma = calibrate_sigma(0.0, 1e-5, accountant="exact")
    # epsilon 0 needs delta(0) = 2 Phi(mu/2) - 1 <= 1e-5: sigma ~ 1/(1e-5 sqrt(2 pi))
    assert exact_delta(sigma, 0.0) <= 1e-5
    assert exact_delta(sigma * (1 - 1e-6), 0.0) > 1e-5


def test_cli_account_target_epsilon_zero_returns(capsys):
    from dpaudit.cli import main

    with time_limit(120):
        code = main(["account", "gaussian", "--target-epsilon", "0", "--accountant", "all", "--json"])
    assert code == 0
    import json

    out = json.loads(capsys.readouterr().out)
    sigma = out["results"]["exact"]["sigma"]
    assert exact_delta(sigma, 0.0) <= 1e-5


# ============================================================================== crashes
@pytest.mark.parametrize("sigma", [1e-10, 1e-155, 1e-300])
def test_gaussian_epsilon_tiny_sigma_no_crash(sigma):
    # OverflowError / "math domain error" / ZeroDivisionError before
    eps = C.gaussian_epsilon(sigma, 1e-5)
    if math.isfinite(eps):
        assert exact_delta(sigma, eps) <= 1e-5
    else:  # no double epsilon suffices: the exact delta at the largest float is still > 1e-5
        assert exact_delta(sigma, 1.7976931348623157e308) > 1e-5
    assert C.gaussian_delta(sigma, 1.0) == 1.0


def test_pld_pure_gaussian_huge_count_finite():
    # the PLD accountant answers pure Gaussian compositions through conversions.gaussian_epsilon
    acc = dpaudit.PLDAccountant().compose(Gaussian(1.0), 10**20)
    eps = acc.epsilon(1e-5)
    assert math.isfinite(eps) and eps > 5e19
    assert mp_gauss_delta(mp.sqrt(mp.mpf(10) ** 20), eps) <= 1e-5


def test_exponential_mechanism_huge_epsilon():
    m = ExponentialMechanism(1e200)
    r = m.rdp([1.5, 2.0, 1e10, math.inf])  # NaN before
    assert not np.any(np.isnan(r)) and np.all(r >= 1e200)
    assert m.zcdp() == math.inf  # OverflowError before (rho = 1.25e399)
    # zCDP with a rho beyond the float range composes to epsilon = inf (not refused)
    assert dpaudit.ZCDPAccountant().compose(m).epsilon(1e-5) == math.inf
    assert dpaudit.TCDPAccountant().compose(m).epsilon(1e-5) == math.inf
    assert dpaudit.ZCDPAccountant().compose(Gaussian(1e-300)).epsilon(1e-5) == math.inf


@pytest.mark.parametrize("cls", ["RDPAccountant", "ZCDPAccountant", "TCDPAccountant"])
def test_accountant_counts_beyond_float_range(cls):
    acc = getattr(dpaudit, cls)().compose(Gaussian(1.0), 10**400)  # OverflowError before
    assert acc.epsilon(1e-5) == math.inf
    assert acc.delta(10.0) == 1.0
    # a zero-cost mechanism composed 10**400 times still costs exactly nothing
    zero = getattr(dpaudit, cls)().compose(PoissonSampled(Gaussian(1.0), 0.0), 10**400)
    assert zero.epsilon(1e-10) == 0.0 and zero.delta(0.0) == 0.0


def test_calibrate_sigma_steps_beyond_float_range():
    sigma = calibrate_sigma(1.0, 1e-5, steps=10**400, accountant="exact")  # OverflowError before
    # T = 10**400 steps of std sigma compose to one Gaussian of std sigma / 10**200
    mu = mp.mpf(10) ** 200 / mp.mpf(sigma)
    assert mp_gauss_delta(mu, 1.0) <= 1e-5
    assert mp_gauss_delta(mu * (1 + 1e-9), 1.0) > 1e-5
    # the RDP accountant cannot represent 10**400 * rho (it is inf for every sigma): a ValueError
    with pytest.raises(ValueError, match="target_epsilon"):
        calibrate_sigma(1.0, 1e-5, steps=10**400, accountant="rdp")


def test_zcdp_to_dp_tiny_rho_and_delta():
    eps = C.zcdp_to_dp(1e-310, 1e-300)  # RuntimeError (brentq) before
    assert mp.mpf(eps) >= mp_cks_epsilon(1e-310, 1e-300)
    assert eps < 1e-150


def test_dp_agd_budget_huge_epsilon():
    from dpaudit.bounds import dp_agd_budget

    rho = dp_agd_budget(1e200, 1e-5)  # OverflowError before
    assert 0 < rho <= 1e200
    with mp.workdps(50):
        R = mp.mpf(rho)
        assert R + 2 * mp.sqrt(R * -mp.log(mp.mpf(1e-5))) <= 1e200


def test_langevin_lower_rdp_zero_steps_is_exactly_zero():
    from dpaudit.bounds import langevin_lower_epsilon, langevin_lower_rdp

    kw = dict(sensitivity=1.0, step_size=0.5, sigma=1.0, n=10, steps=0)
    assert langevin_lower_rdp(2.0, **kw) == 0.0  # -1.2e-322 before (negative)
    assert np.all(langevin_lower_rdp(np.array([2.0, 10.0]), **kw) == 0.0)
    assert langevin_lower_epsilon(1e-5, **kw) == 0.0


def test_langevin_bounds_counts_beyond_float_range():
    from dpaudit.bounds import composition_rdp, langevin_lower_rdp, langevin_rdp, linear_gaussian_rdp

    kw = dict(sensitivity=1.0, step_size=0.5, sigma=1.0, n=10, steps=10**400)
    # Theorem 1 converges to alpha S^2/(lambda sigma^2 n^2) = 0.02 at alpha = 2
    assert langevin_rdp(2.0, strong_convexity=1.0, **kw) == pytest.approx(0.02, rel=1e-14)
    assert langevin_rdp(2.0, strong_convexity=1.0, **kw) >= 0.02
    assert composition_rdp(2.0, **kw) == math.inf
    assert langevin_lower_rdp(2.0, **kw) == pytest.approx(0.005, rel=1e-14)
    assert linear_gaussian_rdp(2.0, **kw) == pytest.approx(2 * 1.5 / 400, rel=1e-12)
    # huge n and steps together: eta K S^2 / (4 sigma^2 n^2) is representable
    v = composition_rdp(2.0, sensitivity=1.0, step_size=0.5, sigma=1e-300, n=10**400, steps=10**400)
    assert v == pytest.approx(2.5e199, rel=1e-12) and v >= 2.5e199  # 2 * 0.5 * 1e400 / (4 * 1e-600 * 1e800)


# ============================================================================== wrong direction
def test_gaussian_delta_large_sigma_tiny_delta_is_upper_bound():
    # up to 1.4e-10 relative BELOW the exact value before
    assert mp.mpf(C.gaussian_delta(100.0, 0.35)) >= exact_delta(100.0, 0.35)
    for sigma in [20.0, 37.0, 100.0, 1e3, 1e4]:
        for target in [1e-100, 1e-200, 1e-300]:
            # epsilon where delta ~ target: u = eps/mu - mu/2 ~ sqrt(2 log(1/target))
            mu = 1.0 / sigma
            for z in [0.9, 1.0, 1.05]:
                eps = mu * (mu / 2 + z * math.sqrt(2 * math.log(1 / target)))
                ours = C.gaussian_delta(sigma, eps)
                ex = exact_delta(sigma, eps)
                assert mp.mpf(ours) >= ex
                if ex > 1e-300:
                    assert mp.mpf(ours) <= ex * (1 + 1e-11)


def test_gaussian_epsilon_tiny_delta_exact_delta_below_target():
    eps = C.gaussian_epsilon(25.0, 1e-300)  # its exact delta exceeded 1e-300 before
    assert exact_delta(25.0, eps) <= 1e-300
    assert exact_delta(25.0, eps * (1 - 1e-10)) > 1e-300


def test_zero_cost_gives_exactly_zero_everywhere():
    zero = PoissonSampled(Gaussian(1.0), 0.0)
    for acc in (dpaudit.ZCDPAccountant(), dpaudit.TCDPAccountant(), dpaudit.RDPAccountant(),
                dpaudit.RDPAccountant(orders=[1.5, 2.0, 32.0]), dpaudit.PLDAccountant()):
        acc.compose(zero, 3)
        assert acc.delta(1e-10) == 0.0  # 4e-323 / 6e-162 before
        assert acc.epsilon(1e-10) == 0.0
    for mech in (PureDP(0.0), ExponentialMechanism(0.0), zero, PoissonSampled(PureDP(2.0), 0.0)):
        assert np.all(mech.rdp([1.5, 2.0, math.inf]) == 0.0)
        assert mech.zcdp() == 0.0
    assert PureDP(0.0).pure_epsilon() == 0.0
    assert PoissonSampled(PureDP(2.0), 0.0).pure_epsilon() == 0.0
    assert C.zcdp_delta(0.0, 0.0) == 0.0 and C.zcdp_to_dp(0.0, 1e-300) == 0.0
    assert C.tcdp_delta(0.0, 2.0, 0.0) == 0.0 and C.tcdp_to_dp(0.0, 2.0, 1e-300, "cks") == 0.0
    assert C.rdp_to_delta([2.0, 3.0], [0.0, 0.0], 0.0)[0] == 0.0
    assert C.gdp_delta(0.0, 0.0) == 0.0 and C.gdp_epsilon(0.0, 1e-300) == 0.0


def test_zero_cost_but_underflowing_is_not_zero():
    # guard for the fix above (passes before and after): exact zeros come only from q = 0 or
    # epsilon = 0; q * (e^eps - 1) underflowing is a positive (tiny) bound, never 0
    assert PoissonSampled(PureDP(1e-30), 1e-300).pure_epsilon() > 0.0


def test_rdp_to_delta_rounding_error_bound():
    # found by a search against 60-digit mpmath: the plain float formula was below the exact value
    cases = [(3504.03632401641, 4.705069274791644, 4.803351508124265),
             (42943.0, 0.02773570374707326, 0.02866184990891644),
             (2.657046146192466, 14.003235305700859, 22.247405132633606)]
    for a, r, e in cases:
        assert mp.mpf(C.rdp_to_delta([a], [r], e)[0]) >= mp_balle_delta(a, r, e)


def test_rdp_to_dp_rounding_error_bound():
    a, r, d = 803931.0, 9.00062284633546e-06, 0.0003436569919464417
    assert mp.mpf(C.rdp_to_dp([a], [r], d)[0]) >= mp_balle_epsilon(a, r, d)


def test_zcdp_delta_rounding_error_bound():
    for rho, e in [(0.001257582937925277, 0.5225465170047359), (0.006154866607624648, 3.2603209398215665),
                   (0.04229425249772699, 9.907906478199468)]:
        assert mp.mpf(C.zcdp_delta(rho, e)) >= mp_cks_delta(rho, e)


def test_tcdp_to_dp_bs_huge_omega_no_overflow():
    # (omega - 1) ** 2 raised OverflowError for omega >= 1.4e154
    eps = C.tcdp_to_dp(0.1, 1e300, 1e-5)
    assert eps == pytest.approx(0.1 + 2 * math.sqrt(0.1 * math.log(1e5)), rel=1e-14)


def test_subsampled_randomized_response_rdp_no_cancellation():
    # log(1 + q(e^eps - 1)) was computed by logaddexp: ~1e-9 relative error (below exact)
    q, eps, a = 7.02780717227889e-08, 1.312197456365126e-06, 7.0
    ours = PoissonSampled(PureDP(eps), q).rdp([a])[0]
    ex = mp_subsampled_rr_rdp(q, eps, a)
    assert mp.mpf(ours) >= ex
    assert mp.mpf(ours) <= ex * (1 + 1e-13)


def test_subsampled_gaussian_integer_order_rounding_error_bound():
    # the binomial sum in log space lost ~170 eps (below exact) without an error bound
    q, sigma, a = 6.486896792714993e-06, 17.102241467006245, 49
    assert mp.mpf(PoissonSampled(Gaussian(sigma), q).rdp([float(a)])[0]) >= mp_poisson_gaussian_rdp_int(q, sigma, a)


# ============================================================================== interop
def test_interop_one_bucket_randomized_response_is_free():
    dpa = pytest.importorskip("dp_accounting")
    from dpaudit.interop import accountant_from_dp_event, from_dp_event

    ev = dpa.RandomizedResponseDpEvent(0.5, 1)
    assert from_dp_event(ev) == []  # was PureDP(log 2): epsilon 0.69 per call
    assert accountant_from_dp_event(dpa.SelfComposedDpEvent(ev, 1000), "rdp").epsilon(1e-5) == 0.0
    assert accountant_from_dp_event(dpa.RandomizedResponseDpEvent(0.0, 1), "zcdp").epsilon(1e-5) == 0.0  # non-private before


def test_interop_degenerate_events():
    dpa = pytest.importorskip("dp_accounting")
    from dpaudit.interop import NonPrivate, accountant_from_dp_event, from_dp_event

    assert from_dp_event(dpa.GaussianDpEvent(0.0)) == [(NonPrivate(), 1)]          # noise 0 -> inf
    assert accountant_from_dp_event(dpa.GaussianDpEvent(0.0), "rdp").epsilon(1e-5) == math.inf
    assert from_dp_event(dpa.GaussianDpEvent(math.inf)) == []                      # infinite noise -> free
    assert from_dp_event(dpa.LaplaceDpEvent(math.inf)) == []
    assert from_dp_event(dpa.PoissonSampledDpEvent(0.0, dpa.GaussianDpEvent(1.0))) == []   # q = 0 -> free
    assert from_dp_event(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(1.0), 0)) == []       # count 0 -> free
    assert from_dp_event(dpa.SampledWithoutReplacementDpEvent(10, 0, dpa.GaussianDpEvent(1.0))) == []
    with pytest.raises(ValueError, match="noise_multiplier"):
        from_dp_event(dpa.GaussianDpEvent(-1.0))


def test_interop_randomized_response_keeps_neighbouring_relation():
    dpa = pytest.importorskip("dp_accounting")
    from dpaudit.interop import accountant_from_dp_event

    ev = dpa.ComposedDpEvent([dpa.GaussianDpEvent(1.0), dpa.RandomizedResponseDpEvent(0.5, 4)])
    # PureDP was created as add_remove whatever the requested relation: composing failed
    acc = accountant_from_dp_event(ev, "rdp", neighbouring="replace_one")
    assert acc.neighbouring == "replace_one" and math.isfinite(acc.epsilon(1e-5))


# ============================================================================== found by the property suite
def test_bs_conversion_subnormal_rho():
    # sqrt(rho * L) with a subnormal product lost its relative precision (7% below exact)
    from tests.support.mpmath_oracles import mp_bs_epsilon

    assert mp.mpf(C.zcdp_to_dp(5e-324, 0.1, method="bs")) >= mp_bs_epsilon(5e-324, 0.1)
    assert mp.mpf(C.tcdp_to_dp(5e-324, math.inf, 0.1, method="bs")) >= mp_bs_epsilon(5e-324, 0.1)


def test_rdp_to_delta_underflow_is_positive():
    # log delta = -1e309 overflowed to -inf and the (positive) bound was reported as exactly 0
    d, _ = C.rdp_to_delta([1e141], [1.0], 1e168)
    assert d > 0.0


def test_round_up_at_the_top_of_the_float_range_is_quiet():
    # nextafter(max float, inf) = inf raised a RuntimeWarning (an error in these tests)
    assert PureDP(1.7976931348623157e308).zcdp() == math.inf
    r = PureDP(1.7976931348623157e308).rdp([2.0, 1e300])  # (alpha - 1) * epsilon overflowed: warning
    assert np.all(r >= 1e308)
    r = dpaudit.Laplace(1e-300, 1e10).rdp([2.0, 1e300])
    assert np.all(r == math.inf)


def test_dp_agd_initial_budgets_huge_epsilon_tiny_delta():
    from dpaudit.bounds import dp_agd_initial_budgets

    b = dp_agd_initial_budgets(1e155, 2.225073858507e-311)  # log(1.25/delta) = log(inf): NaN
    assert not any(math.isnan(v) for v in (b.rho_total, b.rho_ng, b.rho_nmax, b.epsilon_ng))


def test_langevin_lower_bound_never_inf_by_overflow():
    from dpaudit.bounds import langevin_lower_rdp, langevin_rdp

    # S^2 / (4 sigma^2 n^2) overflows: a LOWER bound must stay finite (the largest float)
    v = langevin_lower_rdp(1.000000000000001, sensitivity=1e8, step_size=0.1, sigma=1e-155, n=1, steps=1)
    assert v == 1.7976931348623157e308
    # an upper bound overflowing to inf must not warn (rho * alpha)
    assert langevin_rdp(1e13, sensitivity=1e148, strong_convexity=1.0, step_size=10.0, sigma=1.0, n=1,
                        steps=1) == math.inf


def test_dp_to_zcdp_top_of_float_range():
    # (epsilon/(...)) ** 2 raised OverflowError at epsilon = 1.8e308
    rho = C.dp_to_zcdp(1.7976931348623157e308, 0.1)
    assert rho > 1e307 and math.isfinite(rho)


def test_langevin_growth_with_subnormal_step_size():
    from dpaudit.bounds import langevin_rdp

    # lambda * eta * K / 2 with a subnormal lambda * eta lost its relative precision: the
    # upper bound came out 5e-15 below the exact value
    S, eta, sigma, lam, K = 9.99999999999869e+299, 6.604902395538647e-309, 9.725445538893423e-235, 0.03651741272548377, 2**53 + 1
    n = 855691932630824822192263884877520760519827366349746558951571505361950342771617901794159134685833512165429277010753615585525315495877390429212467097909596733846079605912778662597719228420686078018520881999367890482840444250486259726728
    v = langevin_rdp(2.0, sensitivity=S, strong_convexity=lam, step_size=eta, sigma=sigma, n=n, steps=K)
    with mp.workdps(80):
        ex = 2 * (mp.mpf(S) / (mp.mpf(sigma) * n)) ** 2 / lam * -mp.expm1(-mp.mpf(lam) * mp.mpf(eta) * K / 2)
    assert mp.mpf(v) >= ex


def test_subsampled_gaussian_order_next_to_one_is_quiet():
    # the series tail test computed -inf - (-inf): RuntimeWarning (an error here)
    r = PoissonSampled(Gaussian(1.0), 1e-300).rdp([1.0000000000000002])
    assert r[0] >= 0.0 and math.isfinite(r[0])


def test_subsampled_gaussian_extreme_noise_multiplier():
    # sigma**2 raised OverflowError (sigma = 1e300) inside the subsampled-Gaussian kernels
    for sigma in (1e300, 1e-300):
        for mech in (PoissonSampled(Gaussian(sigma), 0.5),
                     dpaudit.mechanisms.SampledWithoutReplacement(Gaussian(sigma, 2.0, "replace_one"), 0.5)):
            r = mech.rdp([1.5, 2.0, 1e6])
            assert np.all(r >= 0) and not np.any(np.isnan(r))
            with mp.workdps(40):
                for _a, v in zip([1.5, 2.0, 1e6], r):  # at most the unsampled curve, at least 0
                    assert mp.mpf(v) >= 0


def test_subsampled_gaussian_order_next_to_one_no_cancellation():
    # (1-q)^a - 1 + a q was computed as a sum of terms of opposite signs: negative next to a = 1
    # (log of a negative number: RuntimeWarning, an error here)
    r = PoissonSampled(Gaussian(1.0), 0.15625).rdp([1.0000000000000002, 1.001])
    assert np.all(np.isfinite(r)) and np.all(r > 0)


def test_subsampled_randomized_response_huge_epsilon_tiny_q():
    # u = q (e^eps - 1) was set to inf for eps >= 700 and the log-sum-exp rounded
    # log(1 + 1.5e-266) to 0: the RDP came out as 4e-323, far below the exact 1.5e-266
    mech = PoissonSampled(PureDP(1000.0), 1e-300)
    for a in (1.25, 2.0):
        assert mp.mpf(mech.rdp([a])[0]) >= mp_subsampled_rr_rdp(1e-300, 1000.0, a)


def test_zcdp_delta_large_rho_is_not_zero():
    # rho in ~(709, 745): the optimal alpha - 1 = e^u is subnormal, 1/t overflowed, log delta came
    # out as -inf and the delta of a rho = 712 mechanism was reported as exactly 0 (it is ~1)
    acc = dpaudit.ZCDPAccountant().compose(Gaussian(0.0265))
    assert acc.delta(1.0) >= mp_gauss_delta(1 / mp.mpf(0.0265), 1.0)
    for rho, e in [(714.51411891411, 0.6249008141568514), (744.6032818235991, 0.024070252337361868)]:
        assert mp.mpf(C.zcdp_delta(rho, e)) >= mp_cks_delta(rho, e)
        assert mp.mpf(C.tcdp_delta(rho, 1e10, e)) >= mp_cks_delta(rho, e, 1e10)
    assert C.zcdp_to_dp(720.0, 1e-5) >= 720.0


def test_laplace_and_pure_dp_rdp_tiny_epsilon_not_below_exact():
    # (inner - 1) underflowed before the division by alpha - 1: 4e-323 against the exact 3.7e-316
    from tests.support.mpmath_oracles import mp_laplace_rdp, mp_rr_rdp

    e, a = 2.7068e-158, 1.0000000005486283
    assert mp.mpf(dpaudit.Laplace(1 / e).rdp([a])[0]) >= mp_laplace_rdp(1 / (1 / e), a)
    assert mp.mpf(PureDP(e).rdp([a])[0]) >= mp_rr_rdp(e, a)
    assert mp.mpf(PureDP(1e-160).rdp([1e6])[0]) >= mp_rr_rdp(1e-160, 1e6)


def test_subsampled_gaussian_tiny_sigma_huge_count_is_quiet():
    # guard (error bound added in this change): the magnitude sum of the binomial terms overflowed
    m = PoissonSampled(Gaussian(3.47563766403307e-150), 5.941721391004297e-29)
    assert dpaudit.RDPAccountant(warn_at_grid_end=False).compose(m, 10**20).epsilon(1e-5) == math.inf


def test_laplace_rdp_underflowing_epsilon_huge_order():
    # guard for the tiny-epsilon form above: alpha^2 overflowed and 0 * inf gave NaN
    r = dpaudit.Laplace(10.0, 5e-324).rdp([1e155, 2.0])
    assert not np.any(np.isnan(r)) and np.all(r > 0)
    r = dpaudit.Laplace(1e300, 1.0).rdp([1e155, 2.0])
    assert not np.any(np.isnan(r)) and np.all(r > 0)
