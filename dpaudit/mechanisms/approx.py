"""A mechanism described only by one (epsilon, delta)-DP statement.

Such a statement carries no Renyi or zCDP guarantee when delta > 0 (the privacy loss may be
infinite with probability delta), so ``rdp`` is ``inf`` at every order and ``zcdp`` is ``inf``:
RDP/zCDP accountants refuse it, while the PLD accountant can use ``approx_dp()`` (the
privacy-loss distribution of an (eps, delta) pair: Kairouz, Oh, Viswanath 2015, Thm. 2.1).
With delta = 0 the statement is pure DP and the randomized-response curves apply.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.core.validation import check_epsilon, check_neighbouring, check_orders, check_real
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.loss_pairs import ApproxDPPair, PrivacyLoss
from dpaudit.mechanisms.pure import PureDP

__all__ = ["ApproxDP"]


@dataclass(frozen=True)
class ApproxDP(Mechanism):
    """A single (epsilon, delta)-DP guarantee, delta in [0, 1). Describes a guarantee only."""

    epsilon: float
    delta: float
    neighbouring: str = "add_remove"

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon("epsilon", self.epsilon))
        d = check_real("delta", self.delta)
        if not 0.0 <= d < 1.0:
            raise ValueError(f"delta must be in [0, 1), got {d}")
        object.__setattr__(self, "delta", d)
        check_neighbouring("neighbouring", self.neighbouring)

    def rdp(self, orders) -> np.ndarray:
        orders = check_orders("orders", orders)
        if self.delta == 0.0:
            return PureDP(self.epsilon).rdp(orders)
        return np.full(orders.shape, math.inf)

    def zcdp(self) -> float:
        return PureDP(self.epsilon).zcdp() if self.delta == 0.0 else math.inf

    def pure_epsilon(self) -> float:
        return self.epsilon if self.delta == 0.0 else math.inf

    def approx_dp(self) -> tuple[float, float]:
        return (self.epsilon, self.delta)

    def privacy_loss(self) -> PrivacyLoss:
        """The (epsilon, delta) pair, dominating and attained (Kairouz, Oh, Viswanath 2015,
        Thm. 2.1)."""
        eps, dl = float(self.epsilon), float(self.delta)
        if eps == 0.0 and dl == 0.0:
            return PrivacyLoss.nothing()
        pair = ApproxDPPair(eps, dl)
        return PrivacyLoss.symmetric_pair(pair, [pair], "approx")

    def describe(self) -> str:
        return f"ApproxDP(epsilon={self.epsilon:g}, delta={self.delta:g}, {self.neighbouring})"
