"""Composing exponential mechanisms (issue 27, item 5): bounded range, not pure DP.

``ExponentialMechanism(1)`` then ``ExponentialMechanism(2)``: dp_accounting's test of its
``ExponentialMechanismDpEvent`` expects epsilon(1e-12) = 3.0 (the eps-DP worst case, randomized
response). The worst case over 1-BR and 2-BR mechanisms lies in [2.999753, 2.999764]
(proofs_checks/exponential_br_composition.py: the best attained pair of generalised randomized
responses, and the exact composition of the least dominating BR pairs, both in mpmath). The PLD
accountant's interval must bracket it; b3a8540's lower end was 2.8498 (its attained candidates
stopped at t = 0.95 eta).
"""

from __future__ import annotations

import pytest

from dpaudit import ExponentialMechanism, PLDAccountant, PureDP

WORST_LO, WORST_HI = 2.999752813, 2.99976415  # proofs_checks/exponential_br_composition.py


def test_interval_brackets_the_worst_case_and_is_below_three():
    lo, up = PLDAccountant().compose(ExponentialMechanism(1.0)).compose(ExponentialMechanism(2.0)) \
        .epsilon_interval(1e-12)
    assert lo <= WORST_LO and up >= WORST_HI  # valid at both ends
    assert up < 3.0 - 2e-4 and up - WORST_HI < 3e-5  # tighter than the pure-DP 3.0, tight itself
    assert lo > 2.999  # the attained candidates reach the small-delta worst case (2.8498 at b3a8540)


def test_pure_dp_mechanisms_do_give_three():
    # the same epsilons as pure DP: randomized response, whose composition does reach 3 (dp_accounting's value)
    up = PLDAccountant().compose(PureDP(1.0)).compose(PureDP(2.0)).epsilon(1e-12)
    assert up == pytest.approx(3.0, abs=1e-6)


@pytest.mark.parametrize("delta", [1e-5, 1e-9])
def test_lower_end_stays_below_the_upper_end(delta):
    for k in (1, 2, 10):
        lo, up = PLDAccountant().compose(ExponentialMechanism(1.0), k).epsilon_interval(delta)
        assert 0.0 < lo <= up
