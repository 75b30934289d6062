"""A new accountant written in one file passes the accountant contract (docs/architecture.md, "Adding something").

``FixedOrderRDPAccountant`` below is defined entirely in this module: it charges each mechanism its Renyi
divergence at ONE order alpha (Mironov 2017, Prop. 1: RDP composes additively order by order) and converts with
Mironov's Prop. 3, epsilon = rdp + log(1/delta) / (alpha - 1) -- a valid, looser cousin of dpaudit's
RDPAccountant. It subclasses :class:`~dpaudit.accounting.base.Accountant` and states only what it reads of one
step (``_step``), how steps add up (``_add``), ``epsilon`` and ``delta``. The other change a newcomer makes is
the registry line -- ``"rdp-fixed": ("module", "FixedOrderRDPAccountant")`` in ``_REGISTRY`` of
``dpaudit/accounting/base.py`` -- simulated here with ``monkeypatch``; then the contract tests every accountant
inherits (tests/support/accountant_contract.py) apply to it unchanged, and ``make_accountant("rdp-fixed")`` and
``calibrate_sigma(..., accountant="rdp-fixed")`` reach it by name.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpaudit
from dpaudit.accounting import base
from dpaudit.accounting.base import Accountant, make_accountant, non_private_step
from dpaudit.core.numeric import round_up
from dpaudit.core.validation import UnsupportedMechanismError, check_delta, check_epsilon
from tests.support import accountant_contract
from tests.support.accountant_contract import AccountantContract


class FixedOrderRDPAccountant(Accountant):
    """RDP at one order ``alpha`` (default 16): epsilon(delta) = rdp + log(1/delta)/(alpha - 1) (Mironov 2017)."""

    name = "rdp-fixed"
    label = "RDP (one order)"

    def __init__(self, alpha: float = 16.0):
        super().__init__()
        self.alpha, self.rdp = float(alpha), 0.0

    def _step(self, mechanism) -> float:
        if non_private_step(mechanism):  # a release with no guarantee: epsilon = inf, never an exception
            return math.inf
        value = float(np.asarray(mechanism.rdp([self.alpha]), dtype=float)[0])
        if math.isinf(value):
            has = getattr(mechanism, "has_zcdp_guarantee", None)
            if not (callable(has) and has()):  # no RDP statement at all (not merely one beyond the float range)
                raise UnsupportedMechanismError(f"{mechanism!r} has no RDP curve")
        return value

    def _add(self, mechanism, step: float, count: int) -> bool:
        if step > 0.0:
            self.rdp = round_up(self.rdp + count * step)
        return True

    def epsilon(self, delta) -> float:
        delta = check_delta("delta", delta)
        if self.rdp == 0.0:
            return 0.0
        return round_up(self.rdp + math.log(1.0 / delta) / (self.alpha - 1.0))

    def delta(self, epsilon) -> float:
        epsilon = check_epsilon("epsilon", epsilon)
        if self.rdp == 0.0:
            return 0.0
        if math.isinf(self.rdp):
            return 1.0
        exponent = (self.alpha - 1.0) * (self.rdp - epsilon)
        return 1.0 if exponent >= 0.0 else round_up(math.exp(exponent))


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    """The registry line, and the top-level export a public accountant gets."""
    monkeypatch.setitem(base._REGISTRY, "rdp-fixed", (__name__, "FixedOrderRDPAccountant"))
    monkeypatch.setattr(base, "ACCOUNTANTS", tuple(base._REGISTRY))
    monkeypatch.setattr(accountant_contract, "ACCOUNTANTS", base.ACCOUNTANTS)
    monkeypatch.setattr(dpaudit, "FixedOrderRDPAccountant", FixedOrderRDPAccountant, raising=False)


class TestFixedOrderRDPContract(AccountantContract):
    name = "rdp-fixed"
    composition_rtol = 1e-12


def test_it_is_reached_by_name_and_calibrates():
    acc = make_accountant("rdp-fixed").compose(dpaudit.Gaussian(2.0), 10)
    exact_at_16 = 10 * 16.0 / (2 * 2.0**2)  # Gaussian RDP: alpha / (2 sigma^2)
    assert acc.epsilon(1e-5) == pytest.approx(exact_at_16 + math.log(1e5) / 15.0, rel=1e-12)
    assert acc.epsilon(1e-5) >= dpaudit.RDPAccountant().compose(dpaudit.Gaussian(2.0), 10).epsilon(1e-5)
