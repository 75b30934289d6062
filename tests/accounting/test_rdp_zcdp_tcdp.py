"""Tests of RDPAccountant, ZCDPAccountant, TCDPAccountant and calibrate_sigma."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit import conversions as C
from dpaudit.accounting.calibration import calibrate_sigma
from dpaudit.accounting.rdp import DEFAULT_ORDERS, DPA_DEFAULT_ORDERS, OrderGridWarning, RDPAccountant
from dpaudit.accounting.tcdp import TCDPAccountant
from dpaudit.accounting.zcdp import ZCDPAccountant
from dpaudit.core.validation import UnsupportedMechanismError
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.gaussian import Gaussian


def _subsampled():
    mod = pytest.importorskip("dpaudit.mechanisms.subsampled")
    return mod.PoissonSampled


@dataclass(frozen=True)
class _TCDPOnly(Mechanism):
    """A test mechanism with a (rho, omega)-tCDP guarantee and the implied RDP curve."""

    rho: float
    omega: float

    def tcdp(self):
        return (self.rho, self.omega)

    def rdp(self, orders):
        orders = np.asarray(orders, dtype=float)
        return np.where(orders <= self.omega, self.rho * orders, math.inf)


@dataclass(frozen=True)
class _NoGuarantee(Mechanism):
    """A real mechanism with no guarantee at all (e.g. no noise): every curve is inf."""


# ---------------------------------------------------------------------------------------------
# grid and reference values
# ---------------------------------------------------------------------------------------------
def test_default_orders_superset_of_dp_accounting():
    from dp_accounting.rdp.rdp_privacy_accountant import DEFAULT_RDP_ORDERS

    assert set(np.asarray(DEFAULT_RDP_ORDERS, dtype=float)) <= set(DEFAULT_ORDERS)
    assert set(DPA_DEFAULT_ORDERS) == set(np.asarray(DEFAULT_RDP_ORDERS, dtype=float))
    assert np.all(np.diff(DEFAULT_ORDERS) > 0) and DEFAULT_ORDERS[0] > 1
    assert DEFAULT_ORDERS[-2] == 2.0**20 and DEFAULT_ORDERS[-1] == math.inf


def test_gaussian_reference_rdp_and_zcdp():
    # closed forms (Balle & Wang 2018; Bun & Steinke 2016) = dp_accounting 0.6.0: rho = 0.5
    acc = RDPAccountant(orders=DPA_DEFAULT_ORDERS).compose(Gaussian(1.0))
    eps, order = acc.epsilon_and_order(1e-5)
    assert eps == pytest.approx(4.728507067218, rel=1e-11) and order == 5.4
    assert acc.delta(3.0) == pytest.approx(0.005143252151, rel=1e-9)
    # default (richer) grid: never worse
    assert RDPAccountant().compose(Gaussian(1.0)).epsilon(1e-5) <= eps
    z = ZCDPAccountant().compose(Gaussian(1.0))
    assert z.rho == pytest.approx(0.5, rel=1e-14)
    assert z.epsilon(1e-5) == pytest.approx(4.728386984943, rel=1e-10)
    assert z.delta(3.0) == pytest.approx(0.005143184064, rel=1e-9)
    # T = 1000 full-batch steps, sigma = 20: exact 7.511275900745 <= accountants
    for acc in (RDPAccountant(), ZCDPAccountant(), TCDPAccountant()):
        e = acc.compose(Gaussian(20.0), count=1000).epsilon(1e-5)
        assert 7.511275900745 < e < 7.511275900745 * 1.1


def test_subsampled_gaussian_reference_1000_steps():
    # Mironov, Talwar, Zhang 2019 binomial sum; dp_accounting 0.6.0: q = 0.01, sigma = 1.1, T = 1000, delta = 1e-5.
    # dp-accounting 0.6.0 (conservative fractional orders): 1.711770166 at 9.6; exact RDP at 9.6
    # with the same conversion: 1.71177009. PLD (pessimistic, d=1e-4): 1.5153702.
    PoissonSampled = _subsampled()
    acc = RDPAccountant().compose(PoissonSampled(Gaussian(1.1), 0.01), count=1000)
    eps, order = acc.epsilon_and_order(1e-5)
    assert order == 9.6
    assert abs(eps - 1.71177009) <= 5e-9 * 1.7
    assert eps <= 1.711770166
    assert eps >= 1.5153702


def test_subsampled_gaussian_reference_rdp_values():
    PoissonSampled = _subsampled()
    curve = RDPAccountant(orders=[2, 3, 8, 32, 1.5, 2.5, 10.7]).compose(PoissonSampled(Gaussian(1.1), 0.01))
    got = dict(zip(curve.orders, curve.rdp_curve()))
    assert got[2.0] == pytest.approx(1.2851008160516e-4, rel=1e-10)
    assert got[3.0] == pytest.approx(1.96277889915e-4, rel=1e-10)
    assert got[8.0] == pytest.approx(5.8407033552e-4, rel=1e-10)
    assert got[32.0] == pytest.approx(8.4694164337, rel=1e-10)
    assert got[1.5] == pytest.approx(9.55452857e-5, rel=1e-8)
    assert got[2.5] == pytest.approx(1.62077409e-4, rel=1e-8)
    assert got[10.7] == pytest.approx(1.116644471e-3, rel=1e-8)


def test_ten_fold_laplace_reference():
    # Mironov 2017, Prop. 6; dp_accounting 0.6.0: Laplace b/D = 1, ten-fold, delta = 1e-5: dp-accounting RDP 9.99033, PLD 9.98996
    from dpaudit.mechanisms.laplace import Laplace

    on_dpa_grid = RDPAccountant(orders=DPA_DEFAULT_ORDERS).compose(Laplace(1.0), count=10).epsilon(1e-5)
    assert abs(on_dpa_grid - 9.99033) <= 5e-6
    ours = RDPAccountant().compose(Laplace(1.0), count=10).epsilon(1e-5)
    assert ours <= on_dpa_grid
    assert ours >= 9.98996 - 1e-3
    rdp2 = RDPAccountant(orders=[2.0]).compose(Laplace(1.0)).rdp_curve()[0]
    assert rdp2 == pytest.approx(0.6191236299986, rel=1e-10)


def test_pure_dp_tight_rdp_curve_reaches_accountant():
    from dpaudit.mechanisms.pure import PureDP

    curve = RDPAccountant(orders=[1.5, 3.0, 10.0]).compose(PureDP(0.8)).rdp_curve()
    np.testing.assert_allclose(curve, [0.42560015, 0.62352463, 0.75876662], rtol=1e-7)
    # an eps-DP mechanism is never reported worse than eps (alpha = inf <=> pure DP)
    acc = RDPAccountant(orders=list(DEFAULT_ORDERS) + [math.inf]).compose(PureDP(0.8))
    assert acc.epsilon(1e-9) <= 0.8 * (1 + 1e-12)


# ---------------------------------------------------------------------------------------------
# composition semantics
# ---------------------------------------------------------------------------------------------
@given(st.floats(0.3, 50.0), st.integers(1, 40), st.floats(1e-12, 0.1))
def test_compose_k_times_equals_count(sigma, k, delta):
    m = Gaussian(sigma)
    for make in (lambda: RDPAccountant(warn_at_grid_end=False), ZCDPAccountant, TCDPAccountant):
        a = make()
        for _ in range(k):
            a.compose(m)
        b = make().compose(m, count=k)
        assert a.epsilon(delta) == pytest.approx(b.epsilon(delta), rel=1e-12)
        assert a.delta(1.0) == pytest.approx(b.delta(1.0), rel=1e-9, abs=1e-300)


@given(st.floats(0.3, 50.0), st.floats(0.3, 50.0), st.integers(1, 100), st.floats(1e-12, 0.1))
def test_heterogeneous_gaussians_collapse_to_one(s1, s2, k, delta):
    # Gaussians with sigma_i compose to one Gaussian with (sum sigma_i^-2)^-1/2 (exact; Dong, Roth, Su 2019, Cor. 3.3)
    acc = RDPAccountant().compose(Gaussian(s1), count=k).compose(Gaussian(s2))
    s_eff = (k / s1**2 + 1 / s2**2) ** -0.5
    one = RDPAccountant().compose(Gaussian(s_eff))
    assert acc.epsilon(delta) == pytest.approx(one.epsilon(delta), rel=1e-12)
    z = ZCDPAccountant().compose(Gaussian(s1), count=k).compose(Gaussian(s2))
    assert z.rho == pytest.approx(0.5 / s_eff**2, rel=1e-12)
    # zCDP -> RDP -> DP never beats the exact Gaussian curve
    exact = C.gaussian_epsilon(s_eff, delta)
    assert acc.epsilon(delta) >= exact and z.epsilon(delta) >= exact


@given(st.floats(0.05, 100.0), st.integers(0, 1000), st.floats(1e-15, 0.5))
def test_tcdp_infinite_omega_equals_zcdp(sigma, k, delta):
    t = TCDPAccountant().compose(Gaussian(sigma), count=k)
    z = ZCDPAccountant().compose(Gaussian(sigma), count=k)
    assert t.omega == math.inf and t.rho == z.rho
    assert t.epsilon(delta) == z.epsilon(delta)
    assert t.delta(0.5) == z.delta(0.5)


def test_tcdp_composition_and_rdp_consistency():
    t = TCDPAccountant().compose(_TCDPOnly(0.1, 5.0), count=3).compose(_TCDPOnly(0.05, 8.0))
    assert t.rho == pytest.approx(0.35, rel=1e-14) and t.omega == 5.0
    # the same curve through the RDP accountant on a grid inside (1, omega] is never better
    orders = np.linspace(1.01, 5.0, 400)
    r = RDPAccountant(orders=orders, warn_at_grid_end=False)
    r.compose(_TCDPOnly(0.1, 5.0), count=3).compose(_TCDPOnly(0.05, 8.0))
    for delta in (1e-3, 1e-6, 1e-10):
        assert t.epsilon(delta) <= r.epsilon(delta) * (1 + 1e-12)  # both may sit at alpha = omega
        assert t.epsilon(delta) >= r.epsilon(delta) * (1 - 1e-3)
        assert t.epsilon(delta) <= C.tcdp_to_dp(0.35, 5.0, delta, method="bs")


def test_neighbouring_relations_cannot_mix():
    acc = RDPAccountant().compose(Gaussian(1.0))
    with pytest.raises(ValueError, match="neighbouring"):
        acc.compose(Gaussian(1.0, neighbouring="replace_one"))
    with pytest.raises(ValueError, match="neighbouring"):
        ZCDPAccountant().compose(Gaussian(1.0)).compose(Gaussian(1.0, neighbouring="replace_one"))


def test_empty_and_zero_count():
    for acc in (RDPAccountant(), ZCDPAccountant(), TCDPAccountant()):
        assert acc.epsilon(1e-5) == 0.0
        assert acc.delta(0.0) == 0.0
        acc.compose(Gaussian(1.0), count=0)
        assert acc.epsilon(1e-5) == 0.0
    assert RDPAccountant().compose(Gaussian(1.0)) is not None  # returns self, chains


def test_compose_returns_self():
    for make in (RDPAccountant, ZCDPAccountant, TCDPAccountant):
        a = make()
        assert a.compose(Gaussian(2.0)) is a


# ---------------------------------------------------------------------------------------------
# refusal of mechanisms without a guarantee in the accountant's notion
# ---------------------------------------------------------------------------------------------
def test_approx_dp_refused_by_zcdp_tcdp():
    from dpaudit.mechanisms.approx import ApproxDP

    m = ApproxDP(1.0, 1e-6)
    # RDPAccountant composes it (delta carried additively: tests/accounting/test_rdp_approx_event.py)
    for acc in (ZCDPAccountant(), TCDPAccountant()):
        with pytest.raises(UnsupportedMechanismError, match="ApproxDP|approx|epsilon, delta|tCDP|zCDP"):
            acc.compose(m)
    # delta = 0 is pure DP: accepted
    assert RDPAccountant().compose(ApproxDP(1.0, 0.0)).epsilon(1e-5) <= 1.0 + 1e-12


def test_infinite_curve_is_inf_not_error():
    acc = RDPAccountant().compose(_NoGuarantee())
    assert acc.epsilon(1e-5) == math.inf
    assert acc.delta(1.0) == 1.0
    with pytest.raises(UnsupportedMechanismError):
        ZCDPAccountant().compose(_NoGuarantee())
    with pytest.raises(UnsupportedMechanismError):
        TCDPAccountant().compose(_NoGuarantee())


def test_non_mechanism_refused():
    with pytest.raises(UnsupportedMechanismError):
        RDPAccountant().compose(object())
    with pytest.raises(UnsupportedMechanismError):
        ZCDPAccountant().compose("gaussian")


# ---------------------------------------------------------------------------------------------
# properties of the accountants
# ---------------------------------------------------------------------------------------------
@given(st.floats(0.2, 50.0), st.floats(0.2, 50.0), st.integers(1, 2000), st.floats(1e-12, 0.1))
def test_epsilon_decreasing_in_sigma_increasing_in_steps(s1, s2, k, delta):
    lo, hi = sorted((s1, s2))
    for make in (lambda: RDPAccountant(warn_at_grid_end=False), ZCDPAccountant, TCDPAccountant):
        assert make().compose(Gaussian(hi), k).epsilon(delta) <= make().compose(Gaussian(lo), k).epsilon(delta)
        assert make().compose(Gaussian(lo), k).epsilon(delta) <= make().compose(Gaussian(lo), k + 1).epsilon(delta)


@given(st.floats(0.2, 50.0), st.integers(1, 2000), st.floats(1e-14, 0.2), st.floats(1e-14, 0.2))
def test_epsilon_decreasing_in_delta(sigma, k, d1, d2):
    lo, hi = sorted((d1, d2))
    for make in (lambda: RDPAccountant(warn_at_grid_end=False), ZCDPAccountant, TCDPAccountant):
        acc = make().compose(Gaussian(sigma), k)
        assert acc.epsilon(hi) <= acc.epsilon(lo)


@given(st.floats(0.2, 50.0), st.integers(1, 2000), st.floats(1e-14, 0.2))
def test_delta_of_epsilon_of_delta(sigma, k, delta):
    for make in (lambda: RDPAccountant(warn_at_grid_end=False), ZCDPAccountant, TCDPAccountant):
        acc = make().compose(Gaussian(sigma), k)
        eps = acc.epsilon(delta)
        if eps > 0:
            assert acc.delta(eps) == pytest.approx(delta, rel=1e-9)


@given(st.floats(0.5, 20.0), st.floats(1e-4, 1.0), st.floats(1e-4, 1.0), st.integers(1, 500),
       st.floats(1e-10, 1e-3))
def test_subsampled_monotone_in_q_and_steps(sigma, q1, q2, k, delta):
    PoissonSampled = _subsampled()
    lo, hi = sorted((q1, q2))

    def eps(q, steps):
        return RDPAccountant(warn_at_grid_end=False).compose(PoissonSampled(Gaussian(sigma), q), steps).epsilon(delta)

    assert eps(lo, k) <= eps(hi, k)
    assert eps(lo, k) <= eps(lo, k + 1)


def test_grid_end_is_recorded_and_warned():
    acc = RDPAccountant(orders=[2.0, 3.0, 4.0]).compose(Gaussian(100.0))
    with pytest.warns(OrderGridWarning):
        acc.epsilon(1e-5)
    assert acc.at_grid_end and acc.last_order == 4.0
    quiet = RDPAccountant(orders=[2.0, 3.0, 4.0], warn_at_grid_end=False).compose(Gaussian(100.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet.epsilon(1e-5)
    assert quiet.at_grid_end
    inner = RDPAccountant().compose(Gaussian(1.0))
    inner.epsilon(1e-5)
    assert not inner.at_grid_end


def test_rdp_curve_on_other_orders():
    acc = RDPAccountant().compose(Gaussian(2.0), count=3).compose(Gaussian(1.0))
    np.testing.assert_allclose(acc.rdp_curve([1.5, 7.0]), np.array([1.5, 7.0]) * (3 / 8 + 1 / 2), rtol=1e-14)
    assert acc.rdp_curve().shape == acc.orders.shape


# ---------------------------------------------------------------------------------------------
# calibration
# ---------------------------------------------------------------------------------------------
def test_calibrate_exact_reference():
    # closed forms (Balle & Wang 2018; Bun & Steinke 2016) = dp_accounting 0.6.0: sigma/D for (1, 1e-5) = 3.7306316348 (= dp-accounting get_sigma_gaussian)
    s = calibrate_sigma(1.0, 1e-5, accountant="exact")
    assert abs(s - 3.7306316348) <= 5e-11
    assert C.gaussian_epsilon(s, 1e-5) <= 1.0
    assert calibrate_sigma(1.0, 1e-5, accountant="exact", sensitivity=2.0) == pytest.approx(2 * s, rel=1e-11)


@pytest.mark.parametrize("accountant", ["rdp", "zcdp", "tcdp", "exact"])
@pytest.mark.parametrize("target,delta,steps", [(1.0, 1e-5, 1), (2.0, 1e-6, 100), (0.3, 1e-8, 10)])
def test_calibrate_meets_target_and_is_smallest(accountant, target, delta, steps):
    s = calibrate_sigma(target, delta, steps=steps, accountant=accountant)
    make = {"rdp": lambda: RDPAccountant(warn_at_grid_end=False), "zcdp": ZCDPAccountant,
            "tcdp": TCDPAccountant}.get(accountant)
    if make is None:
        eps = C.gaussian_epsilon(s / math.sqrt(steps), delta)
        eps_smaller = C.gaussian_epsilon(s * (1 - 1e-9) / math.sqrt(steps), delta)
    else:
        eps = make().compose(Gaussian(s), steps).epsilon(delta)
        eps_smaller = make().compose(Gaussian(s * (1 - 1e-9)), steps).epsilon(delta)
    assert eps <= target
    assert eps_smaller > target
    # the exact curve needs the least noise
    assert calibrate_sigma(target, delta, steps=steps, accountant="exact") <= s * (1 + 1e-12)


def test_calibrate_subsampled_rdp():
    PoissonSampled = _subsampled()
    s = calibrate_sigma(1.5, 1e-5, sample_rate=0.01, steps=1000, accountant="rdp")
    eps = RDPAccountant().compose(PoissonSampled(Gaussian(s), 0.01), 1000).epsilon(1e-5)
    assert eps <= 1.5
    assert 1.0 < s < 1.2  # sigma = 1.1 gives 1.71 (Mironov, Talwar, Zhang 2019 binomial sum; dp_accounting 0.6.0)


def test_calibrate_pld_if_available():
    pytest.importorskip("dpaudit.accounting.pld")
    s_pld = calibrate_sigma(1.0, 1e-5, steps=10, accountant="pld")
    s_exact = calibrate_sigma(1.0, 1e-5, steps=10, accountant="exact")
    assert s_pld >= s_exact * (1 - 1e-9)
    assert s_pld <= s_exact * 1.01


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(target_epsilon=-1.0, delta=1e-5), "target_epsilon"),
        (dict(target_epsilon=math.nan, delta=1e-5), "target_epsilon"),
        (dict(target_epsilon=1.0, delta=0.0), "delta"),
        (dict(target_epsilon=1.0, delta=1e-5, sample_rate=1.5), "sample_rate"),
        (dict(target_epsilon=1.0, delta=1e-5, sample_rate=0.0), "sample_rate"),
        (dict(target_epsilon=1.0, delta=1e-5, sample_rate=math.nan), "sample_rate"),
        (dict(target_epsilon=1.0, delta=1e-5, steps=0), "steps"),
        (dict(target_epsilon=1.0, delta=1e-5, steps=1.5), "steps"),
        (dict(target_epsilon=1.0, delta=1e-5, accountant="prv"), "accountant"),
        (dict(target_epsilon=1.0, delta=1e-5, sensitivity=0.0), "sensitivity"),
        # one sampled step has a closed form (its own pair); two do not
        (dict(target_epsilon=1.0, delta=1e-5, sample_rate=0.5, steps=2, accountant="exact"), "exact"),
    ],
)
def test_calibrate_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        calibrate_sigma(**kwargs)


# ---------------------------------------------------------------------------------------------
# bad input to the accountants
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [RDPAccountant, ZCDPAccountant, TCDPAccountant])
def test_accountant_bad_input(make):
    acc = make().compose(Gaussian(1.0))
    for bad in (0.0, 1.0, -1e-5, math.nan, math.inf):
        with pytest.raises(ValueError, match="delta"):
            acc.epsilon(bad)
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="epsilon"):
            acc.delta(bad)
    for bad in (-1, 1.5, math.nan, "3"):
        with pytest.raises(ValueError, match="count"):
            acc.compose(Gaussian(1.0), count=bad)
    for bad in (-1.0, math.nan, math.inf):  # (sigma = 0 is a non-private release: epsilon = inf)
        with pytest.raises(ValueError, match="sigma"):
            acc.compose(Gaussian(bad))


def test_rdp_accountant_bad_orders():
    for bad in ([1.0, 2.0], [0.5], [], [2.0, math.nan]):
        with pytest.raises(ValueError, match="orders"):
            RDPAccountant(orders=bad)


# ---------------------------------------------------------------------------------------------
# extreme but legal inputs: finite or inf, no numpy warnings, fast
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sigma", [1e-3, 1.0, 1e4])
@pytest.mark.parametrize("steps", [1, 10**9])
@pytest.mark.parametrize("delta", [1e-300, 1e-5])
def test_extreme_inputs(sigma, steps, delta):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", OrderGridWarning)  # informative, not numerical
        for make in (RDPAccountant, ZCDPAccountant, TCDPAccountant):
            acc = make().compose(Gaussian(sigma), count=steps)
            eps = acc.epsilon(delta)
            d = acc.delta(1.0)
            assert eps >= C.gaussian_epsilon(sigma / math.sqrt(steps), delta)
            assert not math.isnan(eps) and 0 <= d <= 1


@pytest.mark.parametrize("q", [1e-9, 1e-3, 1.0])
@pytest.mark.parametrize("sigma", [1e-3, 1.0, 1e4])
def test_extreme_subsampled_inputs(q, sigma):
    PoissonSampled = _subsampled()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", OrderGridWarning)
        for steps in (1, 10**9):
            for delta in (1e-300, 1e-5):
                acc = RDPAccountant().compose(PoissonSampled(Gaussian(sigma), q), count=steps)
                eps = acc.epsilon(delta)
                assert not math.isnan(eps) and eps >= 0


@pytest.mark.parametrize("make", [RDPAccountant, ZCDPAccountant, TCDPAccountant,
                                  lambda: __import__("dpaudit").PLDAccountant(discretization=1e-3)])
def test_accountants_refuse_mixed_neighbouring_relations(make):
    acc = make().compose(Gaussian(1.0))
    with pytest.raises(ValueError, match="neighbouring relation"):
        acc.compose(Gaussian(1.0, neighbouring="replace_one"))
    assert acc.neighbouring == "add_remove"
    # same relation keeps composing
    acc.compose(Gaussian(2.0))
