"""(epsilon, delta)-DP events in the accountants (issue 17).

RDPAccountant composes an (epsilon, delta) statement as delta-approximate RDP: the epsilon part
charged with the randomized-response curve of epsilon (Mironov 2017, Prop. 5), the deltas
combined with the conversion's delta as independent bad events (Kairouz, Oh, Viswanath 2015,
Thm. 2.1; Bun & Steinke 2016, Sec. 8): d0 = 1 - prod(1 - delta_i)^k_i and delta(eps) = 1 - (1 -
d0)(1 - d'(eps)) (issue 27: exact, where b3a8540 charged d' + sum k_i delta_i).
PLDAccountant uses the exact two-atom pair with mass delta at +inf (Zhu, Dong, Wang 2022);
zCDP and tCDP refuse it with an error that names it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit import (
    ApproxDP,
    Gaussian,
    PLDAccountant,
    PureDP,
    RDPAccountant,
    TCDPAccountant,
    ZCDPAccountant,
)
from dpaudit.accounting.conversions import rdp_to_dp
from dpaudit.core.validation import UnsupportedMechanismError
from dpaudit.interop.dp_accounting import accountant_from_dp_event, from_dp_event


def _d0(*steps) -> float:
    """1 - prod (1 - delta)^count over (delta, count) steps (the mass of the bad events)."""
    return -math.expm1(sum(k * math.log1p(-d) for d, k in steps))


def _left(delta: float, d0: float) -> float:
    """The delta a conversion may use when the bad events have mass d0: 1 - (1 - delta)/(1 - d0)."""
    return -math.expm1(math.log1p(-delta) - math.log1p(-d0))


def _rr_rdp_mp(eps: float, alpha: float) -> float:
    """RDP of randomized response (Mironov 2017, Prop. 5) in mpmath, 50 digits."""
    with mp.workdps(50):
        e, a = mp.mpf(eps), mp.mpf(alpha)
        p = mp.e**e / (1 + mp.e**e)
        return float(mp.log(p * mp.e**((a - 1) * e) + (1 - p) * mp.e**(-(a - 1) * e)) / (a - 1))


# -- regression: the RDP accountant refused every (epsilon, delta) step before issue 17 -----------
def test_rdp_accountant_composes_an_epsilon_delta_step():
    acc = RDPAccountant().compose(Gaussian(2.0), 10).compose(ApproxDP(0.5, 1e-6), 3)
    d0 = _d0((1e-6, 3))
    assert acc.approx_delta == pytest.approx(d0, rel=1e-12) and acc.approx_delta >= d0
    eps = acc.epsilon(1e-5)
    assert math.isfinite(eps)
    # the same number as the ledger with the eps part as pure DP, at the delta the steps leave
    ref = RDPAccountant().compose(Gaussian(2.0), 10).compose(PureDP(0.5), 3).epsilon(_left(1e-5, d0))
    assert eps == pytest.approx(ref, rel=1e-12) and eps >= ref


def test_good_part_curve_is_k_times_randomized_response_mpmath():
    k, eps0 = 4, 0.7
    acc = RDPAccountant().compose(ApproxDP(eps0, 1e-7), k)
    curve, dl = acc.approximate_rdp_curve()
    assert dl >= _d0((1e-7, k)) and dl == pytest.approx(_d0((1e-7, k)), rel=1e-12)
    for i in range(0, acc.orders.size, 17):
        a = float(acc.orders[i])
        ref = k * (eps0 if math.isinf(a) else _rr_rdp_mp(eps0, a))
        assert curve[i] >= ref * (1 - 1e-13)
        assert curve[i] == pytest.approx(ref, rel=1e-10)
    # no RDP guarantee remains once delta > 0 was composed (claims read rdp_curve)
    assert np.all(np.isinf(acc.rdp_curve()))


def test_closed_forms_pure_part():
    k, eps0, d0 = 5, 0.3, 1e-6
    acc = RDPAccountant.quiet().compose(ApproxDP(eps0, d0), k)
    total = _d0((d0, k))
    # delta at or below the mass of the bad events: no guarantee
    assert acc.epsilon(total * (1 - 1e-9)) == math.inf and acc.epsilon(1e-7) == math.inf
    # basic composition (the alpha = inf order): epsilon <= k eps0 at any delta above that mass
    assert acc.epsilon(1e-5) <= k * eps0 * (1 + 1e-12)
    # delta at epsilon = k eps0: the bad events and the pure ledger's delta, as independent events
    pure = RDPAccountant.quiet().compose(PureDP(eps0), k).delta(k * eps0)
    expect = total + pure - total * pure  # = 1 - (1 - total)(1 - pure), without cancellation
    assert acc.delta(k * eps0) >= expect * (1 - 1e-15)
    assert acc.delta(k * eps0) == pytest.approx(expect, rel=1e-12)
    # (0, delta) steps: only delta
    z = RDPAccountant().compose(ApproxDP(0.0, 1e-3), 10)
    z0 = _d0((1e-3, 10))  # 0.0099551..., below the 0.01 of b3a8540
    assert z.epsilon(0.02) == 0.0 and z.epsilon(0.01) == 0.0 and z.epsilon(z0 * (1 - 1e-9)) == math.inf
    assert z.delta(0.0) == pytest.approx(z0, rel=1e-12)


def test_large_deltas_leave_no_guarantee():
    acc = RDPAccountant().compose(ApproxDP(0.1, 0.3), 4)
    assert acc.approx_delta == pytest.approx(1 - 0.7**4, rel=1e-12)  # (b3a8540: the sum 1.2, capped at 1)
    assert acc.epsilon(0.5) == math.inf and acc.delta(100.0) == pytest.approx(1 - 0.7**4, rel=1e-12)
    huge = RDPAccountant().compose(ApproxDP(0.1, 1e-9), 10**400)
    assert huge.approx_delta == 1.0 and huge.epsilon(0.5) == math.inf and huge.delta(100.0) == 1.0


def test_rdp_upper_bound_is_at_least_the_pld_lower_bound():
    """Validity against the exact PLD of the same ledger (Zhu, Dong, Wang 2022 pair)."""
    for sigma, eps0, d0, k in [(1.0, 0.5, 1e-7, 3), (3.0, 1.0, 1e-6, 2), (0.8, 0.1, 1e-8, 20)]:
        rdp = RDPAccountant.quiet().compose(Gaussian(sigma), 5).compose(ApproxDP(eps0, d0), k)
        pld = PLDAccountant().compose(Gaussian(sigma), 5).compose(ApproxDP(eps0, d0), k)
        for delta in (1e-5, 1e-3):
            lo, up = pld.epsilon_interval(delta)
            assert rdp.epsilon(delta) >= lo, (sigma, eps0, d0, k, delta)
            assert up <= rdp.epsilon(delta) * 1.001 + 1e-9  # PLD is the tighter accountant here


def test_zcdp_and_tcdp_refuse_naming_the_event():
    for acc in (ZCDPAccountant(), TCDPAccountant()):
        with pytest.raises(UnsupportedMechanismError, match=r"\(epsilon, delta\)-DP statement"):
            acc.compose(ApproxDP(1.0, 1e-6))
        with pytest.raises(ValueError, match="ApproxDP"):
            acc.compose(ApproxDP(1.0, 1e-6))
    # delta = 0 is pure DP: accepted by all
    assert ZCDPAccountant().compose(ApproxDP(1.0, 0.0)).epsilon(1e-5) < math.inf


# -- Hypothesis: adding an (epsilon, delta) event never decreases epsilon; delta adds -----------
@settings(max_examples=60, deadline=None)
@given(
    sigma=st.floats(0.5, 20.0),
    steps=st.integers(1, 50),
    eps0=st.floats(0.0, 5.0),
    d0=st.floats(1e-12, 1e-4),
    k=st.integers(1, 5),
    delta=st.floats(1e-6, 0.5),
    epsilon=st.floats(0.0, 20.0),
)
def test_adding_an_epsilon_delta_event_never_helps(sigma, steps, eps0, d0, k, delta, epsilon):
    base = RDPAccountant.quiet().compose(Gaussian(sigma), steps)
    more = RDPAccountant.quiet().compose(Gaussian(sigma), steps).compose(ApproxDP(eps0, d0), k)
    assert more.epsilon(delta) >= base.epsilon(delta)
    assert more.delta(epsilon) >= base.delta(epsilon)
    # the (eps, delta) steps' bad events and the pure-DP ledger's delta combine as independent events
    pure = RDPAccountant.quiet().compose(Gaussian(sigma), steps).compose(PureDP(eps0), k)
    total = _d0((d0, k))
    expect = total + pure.delta(epsilon) - total * pure.delta(epsilon)  # 1 - (1 - total)(1 - d')
    assert more.delta(epsilon) >= expect * (1 - 1e-12)
    assert more.delta(epsilon) == pytest.approx(expect, rel=1e-9, abs=1e-300)
    assert more.delta(epsilon) <= min(1.0, pure.delta(epsilon) + k * d0) * (1 + 1e-12)  # never looser
    # and epsilon equals the pure ledger's epsilon at the delta left over
    if delta > total * (1 + 1e-9):
        assert more.epsilon(delta) >= pure.epsilon(_left(delta, total)) * (1 - 1e-12)
    elif delta < total * (1 - 1e-9):
        assert more.epsilon(delta) == math.inf


# -- dp_accounting interop ------------------------------------------------------------------------
@dataclass(frozen=True)
class EpsilonDeltaDpEvent:
    """Stand-in with the attributes of dp_accounting's EpsilonDeltaDpEvent (not in 0.6.0)."""

    epsilon: float
    delta: float


@dataclass(frozen=True)
class SelfComposedDpEvent:
    event: object
    count: int


def test_interop_maps_the_epsilon_delta_event():
    assert from_dp_event(EpsilonDeltaDpEvent(0.5, 1e-6)) == [(ApproxDP(0.5, 1e-6), 1)]
    assert from_dp_event(SelfComposedDpEvent(EpsilonDeltaDpEvent(0.5, 1e-6), 7)) == [(ApproxDP(0.5, 1e-6), 7)]
    assert from_dp_event(EpsilonDeltaDpEvent(0.0, 0.0)) == []
    acc = accountant_from_dp_event(SelfComposedDpEvent(EpsilonDeltaDpEvent(0.5, 1e-6), 3), "rdp")
    assert acc.approx_delta == pytest.approx(_d0((1e-6, 3)), rel=1e-12)
    with pytest.raises(ValueError, match="delta"):
        from_dp_event(EpsilonDeltaDpEvent(0.5, 1.5))
    with pytest.raises(ValueError, match="epsilon"):
        from_dp_event(EpsilonDeltaDpEvent(-1.0, 0.1))
    with pytest.raises(UnsupportedMechanismError, match="zCDP"):
        accountant_from_dp_event(EpsilonDeltaDpEvent(0.5, 1e-6), "zcdp")


def test_pld_matches_dp_accounting_pld_of_the_epsilon_delta_pair():
    """dp_accounting's PLD of an (epsilon, delta) pair (its PLDAccountant's treatment of
    EpsilonDeltaDpEvent in later versions) composed with a Gaussian, against ours."""
    pld_mod = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    common = pytest.importorskip("dp_accounting.pld.common")
    for eps0, d0, k, sigma in [(0.5, 1e-6, 3, 2.0), (1.0, 1e-7, 1, 1.0)]:
        theirs = pld_mod.from_privacy_parameters(
            common.DifferentialPrivacyParameters(eps0, d0), value_discretization_interval=1e-4
        ).self_compose(k).compose(pld_mod.from_gaussian_mechanism(sigma, value_discretization_interval=1e-4))
        ours = PLDAccountant().compose(ApproxDP(eps0, d0), k).compose(Gaussian(sigma))
        for delta in (1e-5, 1e-3):
            assert ours.epsilon(delta) == pytest.approx(theirs.get_epsilon_for_delta(delta), rel=2e-3, abs=2e-3)
        assert ours.delta(1.0) == pytest.approx(theirs.get_delta_for_epsilon(1.0), rel=2e-3)
        # the delta mass at +inf: no epsilon at a delta below 1 - (1 - d0)^k
        assert ours.epsilon(d0 / 2) == math.inf


def test_rdp_epsilon_uses_the_conversion_of_the_composed_curve():
    acc = RDPAccountant.quiet().compose(Gaussian(1.5), 8).compose(ApproxDP(0.2, 2e-6), 2)
    curve, dl = acc.approximate_rdp_curve()
    eps, _ = rdp_to_dp(acc.orders, curve, _left(1e-4, dl))
    assert acc.epsilon(1e-4) >= eps * (1 - 1e-12) and acc.epsilon(1e-4) == pytest.approx(eps, rel=1e-12)


# -- the accountant contract, with (epsilon, delta) steps in the RDP accountant --------------------
from tests.support.accountant_contract import AccountantContract  # noqa: E402


class TestRDPContractWithEpsilonDeltaSteps(AccountantContract):
    name = "rdp"
    carries_approx_dp = True

    def mechanisms(self):
        return [ApproxDP(0.5, 1e-8), ApproxDP(0.0, 1e-9), Gaussian(1.3), ApproxDP(2.0, 1e-10)]


def test_subsampled_epsilon_delta_step_and_claims():
    """PoissonSampled(ApproxDP) states (log(1 + q(e^eps - 1)), q delta) (amplification by Poisson
    subsampling, Balle, Barthe, Gaboardi 2018); the RDP accountant charges that statement."""
    from dpaudit import PoissonSampled, PrivacyClaim

    m = PoissonSampled(ApproxDP(1.0, 1e-5), 0.1)
    acc = RDPAccountant.quiet().compose(m, 10)
    eps1 = math.log1p(0.1 * math.expm1(1.0))
    assert acc.approx_delta == pytest.approx(_d0((1e-6, 10)), rel=1e-9)
    ref = RDPAccountant.quiet().compose(PureDP(eps1), 10).epsilon(_left(1e-4, acc.approx_delta))
    assert acc.epsilon(1e-4) >= ref and acc.epsilon(1e-4) == pytest.approx(ref, rel=1e-12)
    claim = PrivacyClaim.from_accountant(acc, neighbouring="add_remove", description="t")
    assert claim.epsilon(1e-4) == acc.epsilon(1e-4)
    assert np.all(np.isinf(claim.rdp([2.0, 8.0])))  # no RDP statement is claimed
