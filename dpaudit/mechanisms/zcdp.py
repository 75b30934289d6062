"""A mechanism known only by a zCDP statement (Bun & Steinke 2016, Def. 1.1).

Used for ``dp_accounting``'s ``ZCDpEvent`` (:mod:`dpaudit.interop.dp_accounting`) and for
algorithms whose total budget is rho-zCDP by construction (DP-AGD, Lee & Kifer 2018).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.core.numeric import round_up
from dpaudit.core.validation import check_neighbouring, check_nonnegative, check_orders
from dpaudit.mechanisms.base import Mechanism

__all__ = ["ZCDPMechanism"]


@dataclass(frozen=True)
class ZCDPMechanism(Mechanism):
    """A generic (xi, rho)-zCDP statement: D_alpha <= xi + rho * alpha for all alpha > 1.

    Bun & Steinke 2016, Def. 1.1. Describes a guarantee only (no sampler): it is *not* assumed
    to be a Gaussian, so it has no exact (epsilon, delta) curve beyond what zCDP implies.
    """

    rho: float
    xi: float = 0.0
    neighbouring: str = "add_remove"
    #: what the statement is about (e.g. "DP-AGD total budget"), shown by describe()
    label: str = ""

    def __post_init__(self):
        object.__setattr__(self, "rho", check_nonnegative("rho", self.rho, allow_inf=True))
        object.__setattr__(self, "xi", check_nonnegative("xi", self.xi, allow_inf=True))
        check_neighbouring("neighbouring", self.neighbouring)

    def rdp(self, orders) -> np.ndarray:
        orders = check_orders("orders", orders)
        if math.isinf(self.rho) or math.isinf(self.xi):
            return np.full(orders.shape, math.inf)
        out = np.full(orders.shape, math.inf)
        finite = np.isfinite(orders)
        with np.errstate(over="ignore"):
            val = self.xi + self.rho * orders[finite]
        out[finite] = np.where(val == 0.0, 0.0, round_up(val))  # exact 0 only for rho = xi = 0
        if self.rho == 0:
            out[~finite] = self.xi
        return out

    def zcdp(self) -> float:
        return self.rho if self.xi == 0 else math.inf

    def non_private(self) -> bool:
        """rho = inf or xi = inf: the vacuous statement, which a non-private release meets (every
        accountant answers inf)."""
        return math.isinf(self.rho) or math.isinf(self.xi)

    def has_zcdp_guarantee(self) -> bool:
        return self.xi == 0 and math.isfinite(self.rho)

    def describe(self) -> str:
        if self.label:
            return f"{self.label} (rho={self.rho:g}" + (f", xi={self.xi:g})" if self.xi else ")")
        return f"zCDP(rho={self.rho:g}" + (f", xi={self.xi:g})" if self.xi else ")")
