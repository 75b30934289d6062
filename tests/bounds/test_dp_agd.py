"""Tests of dpaudit.bounds.dp_agd (Lee & Kifer 2018: eq. 5, NoisyMax, GradAvg, zCDP filter)."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.bounds.dp_agd import (
    BudgetExceededError,
    ZCDPFilter,
    dp_agd_budget,
    dp_agd_initial_budgets,
    gradavg,
    gradavg_charge,
    gradavg_variance,
    gradient_noise_sigma,
    noisy_max_charge,
    noisy_max_scale,
)

# Lee & Kifer 2018; docs/theorems/dp_agd.md, delta = 1e-8 (closed form, 4 significant digits)
B1_TABLE = [(0.05, 3.388e-5), (0.1, 1.353e-4), (0.2, 5.399e-4), (0.4, 2.148e-3), (0.8, 8.502e-3), (1.6, 3.331e-2)]


@pytest.mark.parametrize("eps, rho", B1_TABLE)
def test_budget_reference_table(eps, rho):
    assert dp_agd_budget(eps, 1e-8) == pytest.approx(rho, rel=5e-4)


@pytest.mark.parametrize("eps", [0.05, 0.1, 0.2, 0.4, 0.8, 1.6])
def test_budget_closed_form_both_forms(eps):
    L = math.log(1e8)
    naive = (math.sqrt(L + eps) - math.sqrt(L)) ** 2
    got = dp_agd_budget(eps, 1e-8)
    assert got <= (math.sqrt(L + eps) + math.sqrt(L)) ** -2 * eps**2  # rounded down
    assert got == pytest.approx(naive, rel=1e-9)


def test_budget_zero_epsilon():
    assert dp_agd_budget(0.0, 1e-5) == 0.0


@given(st.floats(1e-6, 50.0), st.floats(1e-15, 0.5))
def test_budget_conversion_stays_within_epsilon(eps, delta):
    from dpaudit.conversions import zcdp_to_dp

    rho = dp_agd_budget(eps, delta)
    assert rho > 0
    assert zcdp_to_dp(rho, delta, method="bs") <= eps
    # and it is the largest such rho up to rounding: a 1e-9 relative increase breaks the target
    L = -math.log(delta)
    bigger = rho * (1 + 1e-9)
    assert bigger + 2 * math.sqrt(bigger * L) > eps


@given(st.floats(1e-4, 10.0), st.floats(1e-4, 10.0), st.floats(1e-12, 0.1))
def test_budget_monotone(e1, e2, delta):
    lo, hi = sorted((e1, e2))
    assert dp_agd_budget(lo, delta) <= dp_agd_budget(hi, delta)


def test_budget_cks_allows_larger():
    from dpaudit.conversions import dp_to_zcdp

    for eps in (0.1, 1.0):
        assert dp_to_zcdp(eps, 1e-8, method="cks") > dp_agd_budget(eps, 1e-8)


@pytest.mark.parametrize("eps, delta", [(-0.1, 1e-5), (math.nan, 1e-5), (math.inf, 1e-5), (1.0, 0.0), (1.0, 1.0)])
def test_budget_bad_inputs(eps, delta):
    with pytest.raises(ValueError, match="epsilon|delta"):
        dp_agd_budget(eps, delta)


def test_initial_budgets_code_calibration():
    b = dp_agd_initial_budgets(1.0, 1e-8, 60)
    assert b.epsilon_nmax == b.epsilon_ng == pytest.approx(1.0 / 120)
    assert b.rho_nmax == pytest.approx((1 / 120) ** 2 / 2)
    # rho_ng = C^2/(2 sigma^2) with the classical sigma = C sqrt(2 ln(1.25/delta))/eps_ng
    sigma = math.sqrt(2 * math.log(1.25e8)) / (1 / 120)
    assert b.rho_ng == pytest.approx(1 / (2 * sigma**2), rel=1e-12)
    assert b.rho_nmax / b.rho_ng == pytest.approx(2 * math.log(1.25e8), rel=1e-12)  # ~37.3 (B.2)
    assert b.rho_nmax / b.rho_ng == pytest.approx(37.3, abs=0.05)
    assert b.rho_total == dp_agd_budget(1.0, 1e-8)
    assert dp_agd_initial_budgets(1.0, 1e-8, 60, calibration="pure").rho_ng == b.rho_nmax
    with pytest.raises(ValueError, match="calibration"):
        dp_agd_initial_budgets(1.0, 1e-8, 60, calibration="x")
    with pytest.raises(ValueError, match="splits"):
        dp_agd_initial_budgets(1.0, 1e-8, 0)


def test_noisy_max_scale_and_charge_roundtrip():
    for rho in (1e-6, 1e-3, 0.5):
        for c in (1.0, 3.0):
            b = noisy_max_scale(rho, c)
            assert b == pytest.approx(c / math.sqrt(2 * rho), rel=1e-14)
            ch = noisy_max_charge(b, c)
            assert ch == pytest.approx(rho, rel=1e-13)
            # replace-one: scores may move in opposite directions -> eps doubles -> 4x rho
            assert noisy_max_charge(b, c, neighbouring="replace_one") == pytest.approx(4 * rho, rel=1e-13)


def test_noisy_max_charge_is_eps_squared_over_two():
    assert noisy_max_charge(2.0, 1.0) >= 0.125
    assert noisy_max_charge(2.0, 1.0) == pytest.approx(0.125, rel=1e-14)
    with pytest.raises(ValueError, match="scale"):
        noisy_max_charge(0.0, 1.0)
    with pytest.raises(ValueError, match="neighbouring"):
        noisy_max_charge(1.0, 1.0, neighbouring="swap")


def test_gradient_noise_sigma():
    assert gradient_noise_sigma(0.5, 1.0) >= 1.0
    assert gradient_noise_sigma(0.5, 1.0) == pytest.approx(1.0, rel=1e-14)
    with pytest.raises(ValueError, match="rho_ng"):
        gradient_noise_sigma(-1, 1.0)


def test_gradavg_algebra():
    for rho_old, rho_new in [(1e-3, 1.1e-3), (0.1, 0.5)]:
        var = gradavg_variance(rho_old, rho_new, 3.0)
        w1, w2 = rho_old / rho_new, (rho_new - rho_old) / rho_new
        direct = w1**2 * 9 / (2 * rho_old) + w2**2 * 9 / (2 * (rho_new - rho_old))
        assert var == pytest.approx(direct, rel=1e-12)
        assert var == pytest.approx(9 / (2 * rho_new), rel=1e-14)
        assert gradavg_charge(rho_old, rho_new) >= rho_new - rho_old
        assert gradavg_charge(rho_old, rho_new) == pytest.approx(rho_new - rho_old, rel=1e-14)
    with pytest.raises(ValueError, match="rho_new"):
        gradavg_charge(0.2, 0.1)


def test_gradavg_monte_carlo():
    rng = np.random.default_rng(5)
    rho_old, rho_new, C, N = 0.01, 0.011, 2.0, 100_000
    g = np.array([1.0, -2.0, 0.5])
    g1 = g + rng.normal(0, C / math.sqrt(2 * rho_old), size=(N, 3))
    S, charge = gradavg(rho_old, rho_new, np.broadcast_to(g, (N, 3)), g1, C, seed=7)
    var = gradavg_variance(rho_old, rho_new, C)
    emp = S.var(axis=0, ddof=1)
    assert np.all(np.abs(emp / var - 1) < 6 * math.sqrt(2 / N))
    assert np.all(np.abs(S.mean(axis=0) - g) < 6 * math.sqrt(var / N))
    # naive average of the two measurements is worse than the weighted one
    assert var < C**2 / (2 * rho_old)
    assert charge == gradavg_charge(rho_old, rho_new)
    # same seed, same result
    S2, _ = gradavg(rho_old, rho_new, np.broadcast_to(g, (N, 3)), g1, C, seed=7)
    assert np.array_equal(S, S2)
    with pytest.raises(ValueError, match="g_tilde"):
        gradavg(rho_old, rho_new, g, g1, C, seed=1)


# ---------------------------------------------------------------- filter
def test_filter_basic_refusal():
    f = ZCDPFilter(1.0)
    assert f.request(0.4) and f.request(0.6)
    assert f.exhausted and f.spent == 1.0 and f.remaining == 0.0
    assert not f.request(1e-300)
    assert f.request(0.0)
    with pytest.raises(BudgetExceededError):
        f.charge(1e-12)
    assert f.spent == 1.0


def test_filter_float_rounding_cannot_overspend():
    # 0.1 * 10 != 1.0 in floating point (sum is 0.9999999999999999), exact sum of the float 0.1's is > 1
    f = ZCDPFilter(1.0)
    accepted = sum(f.request(0.1) for _ in range(10))
    assert accepted == 9  # the tenth would exceed 1.0 exactly (the float 0.1 is slightly above 1/10)
    assert Fraction(0.1) * 9 <= 1
    assert Fraction(0.1) * 10 > 1
    assert f.spent <= f.total
    # the remaining budget (rounded down) is always affordable
    assert f.request(f.remaining)
    assert f.spent <= f.total


def test_filter_remaining_is_affordable_and_charge_returns_remaining():
    f = ZCDPFilter(dp_agd_budget(1.0, 1e-8))
    rem = f.charge(1e-4)
    assert rem == f.remaining
    assert f.can_afford(f.remaining)
    assert not f.can_afford(f.total)
    assert f.history == (1e-4,)


@pytest.mark.parametrize("bad", [-1e-3, math.nan, math.inf])
def test_filter_bad_requests(bad):
    f = ZCDPFilter(1.0)
    with pytest.raises(ValueError, match="rho"):
        f.request(bad)
    assert f.spent == 0.0


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_filter_bad_total(bad):
    with pytest.raises(ValueError, match="total_rho"):
        ZCDPFilter(bad)


def test_filter_from_dp():
    assert ZCDPFilter.from_dp(0.8, 1e-8).total == dp_agd_budget(0.8, 1e-8)


_amounts = st.one_of(st.floats(0.0, 2.0), st.sampled_from([0.1, 0.2, 0.3, 1 / 3, 0.7, 1e-17, 5e-324]),
                     st.floats(1e-20, 1e-10))


@given(st.floats(1e-6, 10.0), st.lists(_amounts, max_size=80))
def test_filter_never_overspends(total, requests):
    f = ZCDPFilter(total)
    exact = Fraction(0)
    for r in requests:
        fits = exact + Fraction(r) <= Fraction(total)
        assert f.can_afford(r) == fits
        ok = f.request(r)
        assert ok == fits  # refuses exactly the requests that would exceed the total
        if ok:
            exact += Fraction(r)
        assert exact <= Fraction(total)
        assert f.spent <= total
        assert Fraction(f.spent) >= exact  # spent is an upper bound on the exact sum
        assert 0.0 <= f.remaining and Fraction(f.remaining) <= Fraction(total) - exact
    assert f.exhausted == (exact == Fraction(total))


@given(st.floats(1e-6, 10.0), st.lists(st.floats(0.0, 1.0), max_size=40))
def test_filter_charge_raises_and_keeps_state(total, requests):
    f = ZCDPFilter(total)
    for r in requests:
        before = f.spent
        try:
            f.charge(r)
        except BudgetExceededError:
            assert f.spent == before
        assert f.spent <= total
