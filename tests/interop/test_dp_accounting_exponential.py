"""dp_accounting's exponential-mechanism count (issue 17): our interop charges count times.

A later dp_accounting's RDP accountant charges a self-composed ``ExponentialMechanismDpEvent``
once whatever its count (count 10 and count 1 both give 0.2483 at order 2, epsilon = 1).
``dpaudit.interop`` multiplies the count of every ``SelfComposedDpEvent``, the exponential
mechanism included. dp_accounting 0.6.0 has no ``ExponentialMechanismDpEvent``: the events are
read by class name and attributes, so stand-ins with dp_accounting's names and fields are used,
and the comparison with dp_accounting itself runs where the installed version has the event.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from dpaudit import ExponentialMechanism, PLDAccountant, RDPAccountant
from dpaudit.interop.dp_accounting import accountant_from_dp_event, from_dp_event
from dpaudit.mechanisms.pure import bounded_range_kl_max


@dataclass(frozen=True)
class ExponentialMechanismDpEvent:
    epsilon: float


@dataclass(frozen=True)
class SelfComposedDpEvent:
    event: object
    count: int


@dataclass(frozen=True)
class ComposedDpEvent:
    events: list


def _order2(acc):
    return float(acc.rdp_curve(np.array([2.0]))[0])


def test_one_exponential_mechanism_at_order_2_is_0_2483():
    # bounded range eta = 1 (Cesar & Rogers 2021): KL_max(1) + (2 - 1)/8
    ref = bounded_range_kl_max(1.0) + 1.0 / 8.0
    assert ref == pytest.approx(0.2483, abs=5e-5)
    acc = accountant_from_dp_event(ExponentialMechanismDpEvent(1.0), "rdp")
    assert _order2(acc) == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("count", [1, 2, 10, 1000])
def test_self_composed_exponential_mechanism_is_charged_count_times(count):
    event = SelfComposedDpEvent(ExponentialMechanismDpEvent(1.0), count)
    assert from_dp_event(event) == [(ExponentialMechanism(1.0), count)]
    acc = accountant_from_dp_event(event, "rdp")
    one = _order2(accountant_from_dp_event(ExponentialMechanismDpEvent(1.0), "rdp"))
    assert _order2(acc) == pytest.approx(count * one, rel=1e-12)  # 10 -> 2.483, not 0.2483
    assert acc.epsilon(1e-5) == RDPAccountant().compose(ExponentialMechanism(1.0), count).epsilon(1e-5)
    # nested counts multiply, composed lists add
    nested = SelfComposedDpEvent(ComposedDpEvent([event, ExponentialMechanismDpEvent(1.0)]), 3)
    assert from_dp_event(nested) == [(ExponentialMechanism(1.0), 3 * (count + 1))]


def test_pld_also_charges_count_times():
    acc = accountant_from_dp_event(SelfComposedDpEvent(ExponentialMechanismDpEvent(0.5), 10), "pld")
    ref = PLDAccountant().compose(ExponentialMechanism(0.5), 10)
    assert acc.epsilon(1e-5) == ref.epsilon(1e-5)
    assert acc.epsilon(1e-5) > PLDAccountant().compose(ExponentialMechanism(0.5), 1).epsilon(1e-5)


def test_degenerate_and_bad_exponential_events():
    assert from_dp_event(ExponentialMechanismDpEvent(0.0)) == []
    assert math.isinf(accountant_from_dp_event(ExponentialMechanismDpEvent(math.inf), "rdp").epsilon(1e-5))
    with pytest.raises(ValueError, match="epsilon"):
        from_dp_event(ExponentialMechanismDpEvent(-1.0))


def test_against_dp_accounting_itself_where_it_has_the_event():
    dpa = pytest.importorskip("dp_accounting")
    if not hasattr(dpa, "ExponentialMechanismDpEvent"):
        pytest.skip(f"dp_accounting {getattr(dpa, '__version__', '?')} has no ExponentialMechanismDpEvent")
    orders = [2.0]
    counts = {}
    for c in (1, 10):
        event = dpa.SelfComposedDpEvent(dpa.ExponentialMechanismDpEvent(1.0), c)
        theirs = dpa.rdp.RdpAccountant(orders).compose(event)
        counts[c] = float(np.asarray(theirs._rdp)[0])
        ours = _order2(accountant_from_dp_event(event, "rdp"))
        assert ours == pytest.approx(c * 0.24830156, rel=1e-6)
    # report dp_accounting's behaviour (the issue: both 0.2483); ours is count times either way
    print(f"dp_accounting RDP at order 2: count 1 -> {counts[1]:.4f}, count 10 -> {counts[10]:.4f}")
