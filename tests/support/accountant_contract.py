"""The accountant contract (issue 16): one test class that every accountant's tests inherit.

The subclasses that run it on the registered accountants are tests/contracts/test_accountant_contract.py.

:class:`AccountantContract` states what any accountant must satisfy (monotonicity, composition,
the epsilon/delta inverse pair, the neighbouring-relation checks, ``inf`` when there is no
guarantee, input validation, the registry). Each accountant gets all of it by inheriting the
class and naming its registry key; a fifth accountant adds one subclass there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

import dpaudit
from dpaudit import Gaussian, Laplace, NonPrivate, PoissonSampled, PureDP
from dpaudit.accounting.base import ACCOUNTANTS, Accountant, accountant_class, make_accountant
from dpaudit.core.validation import UnsupportedMechanismError, check_orders
from dpaudit.mechanisms.base import Mechanism

DELTAS = (1e-8, 1e-5, 1e-3, 0.1)
EPSILONS = (0.0, 0.3, 1.0, 3.0, 10.0)


@dataclass(frozen=True)
class _NoGuarantee(Mechanism):
    """A mechanism with no statement in any notion (every curve inf, no pair)."""

    def rdp(self, orders):
        return np.full(check_orders("orders", orders).shape, math.inf)

    def approx_dp(self):
        return (1.0, 0.5)  # only an (epsilon, delta) statement: no RDP, zCDP or tCDP guarantee

    def privacy_loss(self):
        return None


class AccountantContract:
    """Inherit and set ``name`` (a key of the registry); override ``mechanisms`` if needed."""

    name: str = ""
    #: relative tolerance of compose(m, a).compose(m, b) against compose(m, a + b)
    composition_rtol: float = 1e-9
    #: the accountant composes a mechanism stated only as (epsilon, delta)-DP (RDP: delta carried)
    carries_approx_dp: bool = False

    def make(self) -> Accountant:
        return make_accountant(self.name, quiet=True)

    def mechanisms(self):
        return [Gaussian(1.3), Gaussian(0.8, 2.0), Laplace(2.0), PoissonSampled(Gaussian(1.1), 0.05)]

    def two_mechanisms(self):
        """Two different mechanisms the accountant composes together."""
        return Gaussian(2.0), Laplace(3.0)

    def relation_mechanism(self, relation: str):
        """A mechanism stated under ``relation`` (the neighbouring-relation checks)."""
        return Gaussian(1.0, neighbouring=relation)

    def huge(self):
        """(mechanism, count) whose guarantee lies beyond the float range."""
        return Gaussian(1e-300), 1

    # -- registry and base class -------------------------------------------------------------------
    def test_registry(self):
        acc = make_accountant(self.name)
        assert isinstance(acc, Accountant) and isinstance(acc, accountant_class(self.name))
        assert acc.name == self.name and self.name in ACCOUNTANTS and acc.label
        assert getattr(dpaudit, type(acc).__name__) is type(acc)  # exported at the top level

    def test_compose_returns_self_and_records_events(self):
        acc = self.make()
        m = self.mechanisms()[0]
        assert acc.compose(m, 3) is acc
        assert acc.events == [(m, 3)]
        assert acc.compose(m, 0).events == [(m, 3)]  # count 0 composes nothing

    # -- empty and identity ------------------------------------------------------------------------
    def test_empty_accountant_is_perfectly_private(self):
        acc = self.make()
        for d in DELTAS:
            assert acc.epsilon(d) == 0.0
        for e in EPSILONS:
            assert acc.delta(e) == 0.0

    def test_count_zero_changes_nothing(self):
        for m in self.mechanisms():
            assert self.make().compose(m, 0).epsilon(1e-5) == 0.0

    # -- monotonicity ------------------------------------------------------------------------------
    def test_epsilon_non_increasing_in_delta_and_delta_in_epsilon(self):
        for m in self.mechanisms():
            acc = self.make().compose(m, 10)
            eps = [acc.epsilon(d) for d in DELTAS]
            assert all(b <= a for a, b in zip(eps, eps[1:])), (m, eps)
            dl = [acc.delta(e) for e in EPSILONS]
            assert all(b <= a for a, b in zip(dl, dl[1:])), (m, dl)
            assert all(0.0 <= v <= 1.0 for v in dl)

    def test_epsilon_non_decreasing_in_count(self):
        for m in self.mechanisms():
            eps = [self.make().compose(m, k).epsilon(1e-5) for k in (1, 2, 10, 50)]
            assert all(b >= a for a, b in zip(eps, eps[1:])), (m, eps)

    # -- composition -------------------------------------------------------------------------------
    def test_composition_in_parts_equals_at_once(self):
        for m in self.mechanisms():
            whole = self.make().compose(m, 12).epsilon(1e-5)
            parts = self.make().compose(m, 5).compose(m, 7).epsilon(1e-5)
            assert parts == pytest.approx(whole, rel=self.composition_rtol), m

    def test_composition_costs_at_least_each_part(self):
        a, b = self.two_mechanisms()
        both = self.make().compose(a, 4).compose(b, 2).epsilon(1e-5)
        assert both >= self.make().compose(a, 4).epsilon(1e-5)
        assert both >= self.make().compose(b, 2).epsilon(1e-5)

    # -- epsilon/delta inverse pair ----------------------------------------------------------------
    def test_epsilon_and_delta_describe_one_curve(self):
        for m in self.mechanisms():
            acc = self.make().compose(m, 10)
            for d in DELTAS:
                eps = acc.epsilon(d)
                if math.isfinite(eps):
                    assert acc.delta(eps) <= d * (1 + 1e-6) + 1e-300, (m, d, eps)

    def test_meets_agrees_with_epsilon(self):
        for m in self.mechanisms():
            acc = self.make().compose(m, 10)
            for d in DELTAS:
                eps = acc.epsilon(d)
                if math.isfinite(eps):
                    assert acc.meets(eps, d), (m, d, eps)
                    if eps > 0:
                        assert not acc.meets(min(eps * (1 - 1e-6), math.nextafter(eps, 0.0)), d), (m, d, eps)

    # -- neighbouring relation ---------------------------------------------------------------------
    def test_relation_is_recorded_and_cannot_mix(self):
        acc = self.make()
        assert acc.neighbouring is None
        acc.compose(self.relation_mechanism("replace_one"))
        assert acc.neighbouring == "replace_one"
        with pytest.raises(ValueError, match="neighbouring"):
            acc.compose(self.relation_mechanism("add_remove"))
        # a refused composition leaves the accountant as it was
        assert acc.events == [(self.relation_mechanism("replace_one"), 1)]

    # -- no guarantee ------------------------------------------------------------------------------
    def test_infinite_guarantee_is_inf_not_an_exception(self):
        acc = self.make().compose(*self.huge())  # a guarantee beyond the float range: epsilon = inf
        assert acc.epsilon(1e-5) == math.inf
        assert acc.delta(1.0) == 1.0

    def test_non_private_step_is_inf_not_an_exception(self):
        # issue 27: a release with no guarantee (no noise) is answered, never refused
        for m in (NonPrivate(), Gaussian(0.0), Laplace(0.0), PureDP(math.inf)):
            acc = self.make().compose(self.mechanisms()[0], 2).compose(m)
            assert acc.epsilon(1e-5) == math.inf and acc.epsilon(0.5) == math.inf
            assert acc.delta(0.0) == 1.0 and acc.delta(10.0) == 1.0

    def test_amplification_is_declared(self):
        acc = self.make()
        assert isinstance(type(acc).amplifies_subsampling, bool)
        assert type(acc).ignores_subsampling(Gaussian(1.0)) is False

    def test_mechanism_without_a_guarantee_is_refused(self):
        acc = self.make()
        if self.carries_approx_dp:
            # _NoGuarantee states (1, 0.5)-DP only: charged as 0.5-approximate RDP (issue 17),
            # which gives no guarantee below delta = 0.5
            acc.compose(_NoGuarantee())
            assert acc.epsilon(1e-5) == math.inf and acc.epsilon(0.4) == math.inf
            assert acc.delta(1.0) >= 0.5
            return
        with pytest.raises(UnsupportedMechanismError):
            acc.compose(_NoGuarantee())
        assert acc.events == [] and acc.neighbouring is None

    def test_pure_dp_zero_costs_nothing(self):
        assert self.make().compose(PureDP(0.0), 1000).epsilon(1e-5) == 0.0

    # -- input validation --------------------------------------------------------------------------
    @pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5, math.nan, math.inf])
    def test_bad_delta_names_the_argument(self, bad):
        with pytest.raises(ValueError, match="delta"):
            self.make().epsilon(bad)

    @pytest.mark.parametrize("bad", [-1.0, math.nan])
    def test_bad_epsilon_names_the_argument(self, bad):
        with pytest.raises(ValueError, match="epsilon"):
            self.make().delta(bad)

    @pytest.mark.parametrize("bad", [-1, 1.5, "3"])
    def test_bad_count_names_the_argument(self, bad):
        with pytest.raises((ValueError, TypeError), match="count"):
            self.make().compose(Gaussian(1.0), bad)
