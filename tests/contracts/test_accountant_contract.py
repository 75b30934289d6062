"""The accountant contract (tests/support/accountant_contract.py) run on every registered accountant, and shown
to fail broken accountants."""

from __future__ import annotations

import pytest

import dpaudit
from dpaudit import ApproxDP, ExponentialMechanism, Gaussian, Laplace, NonPrivate, PoissonSampled, PureDP
from dpaudit.accounting.base import ACCOUNTANTS, make_accountant
from tests.support.accountant_contract import AccountantContract


class TestRDPAccountantContract(AccountantContract):
    name = "rdp"
    carries_approx_dp = True


class TestZCDPAccountantContract(AccountantContract):
    name = "zcdp"


class TestTCDPAccountantContract(AccountantContract):
    name = "tcdp"


class TestPLDAccountantContract(AccountantContract):
    name = "pld"
    # the PLD of 5 + 7 steps is two FFT powers convolved, that of 12 steps one FFT power: both
    # are upper bounds on one curve, equal to within the discretisation
    composition_rtol = 1e-3

    def mechanisms(self):
        return [Gaussian(1.3), Laplace(2.0), PoissonSampled(Gaussian(1.1), 0.05), ApproxDP(0.5, 1e-7)]


class TestExactAccountantContract(AccountantContract):
    name = "exact"

    def mechanisms(self):
        # Gaussians (any count), k-fold randomized response (pure and (eps, delta)), and a
        # non-private release sampled at a small rate (an exact (0, q) factor)
        return [Gaussian(1.3), Gaussian(0.8, 2.0), PureDP(1.0), ApproxDP(0.5, 1e-7),
                PoissonSampled(NonPrivate(), 1e-8)]

    def two_mechanisms(self):
        return Gaussian(2.0), PoissonSampled(NonPrivate(), 1e-7)


class TestPureDPAccountantContract(AccountantContract):
    name = "pure"

    def mechanisms(self):
        return [PureDP(1.0), Laplace(2.0), PoissonSampled(Laplace(1.1), 0.05), ExponentialMechanism(0.5)]

    def two_mechanisms(self):
        return PureDP(2.0), Laplace(3.0)

    def relation_mechanism(self, relation: str):
        return Laplace(1.0, neighbouring=relation)

    def huge(self):
        return PureDP(1e308), 10


def test_every_registered_accountant_has_a_contract_test():
    tested = {cls.name for cls in AccountantContract.__subclasses__() if cls.__name__.startswith("Test")}
    assert set(ACCOUNTANTS) <= tested  # (a test module may add an accountant of its own: tests/contracts/test_one_file_accountant.py)


def test_unknown_name_is_refused():
    with pytest.raises(ValueError, match="accountant must be one of"):
        make_accountant("gdp")


# -- the contract catches broken accountants (a test that cannot fail is a defect) -----------------
class _CountIgnored(dpaudit.ZCDPAccountant):
    def _add(self, mechanism, rho, count):
        return super()._add(mechanism, rho, 1)  # bug: composes one step whatever the count


class _EpsilonHalved(dpaudit.TCDPAccountant):
    def epsilon(self, delta):
        return super().epsilon(delta) / 2  # bug: epsilon(delta) below the curve delta(epsilon) describes


class _ClampsInf(dpaudit.RDPAccountant):
    def epsilon(self, delta):
        return min(super().epsilon(delta), 1e6)  # bug: no guarantee clamped to a number


class _Broken(AccountantContract):
    accountant = None

    def make(self):
        return self.accountant()


@pytest.mark.parametrize("broken, check", [
    (_CountIgnored, "test_composition_in_parts_equals_at_once"),
    (_EpsilonHalved, "test_epsilon_and_delta_describe_one_curve"),
    (_ClampsInf, "test_infinite_guarantee_is_inf_not_an_exception"),
])
def test_contract_fails_a_broken_accountant(broken, check):
    case = _Broken()
    case.accountant = broken
    with pytest.raises(AssertionError):
        getattr(case, check)()
