"""Truncated-CDP accountant.

References
----------
Bun, Dwork, Rothblum & Steinke, "Composable and versatile privacy via truncated CDP",
STOC 2018: (rho, omega)-tCDP means D_alpha <= rho*alpha for 1 < alpha < omega; composition
gives (rho1 + rho2, min(omega1, omega2)) (RDP additivity on the common range).
Conversion to (epsilon, delta): the Balle et al. 2020 / Canonne-Kamath-Steinke 2020
conversion minimised over alpha in (1, omega]
(:func:`dpaudit.accounting.conversions.tcdp_to_dp`, method "cks"), so omega = inf gives the
same numbers as :class:`~dpaudit.accounting.zcdp.ZCDPAccountant`.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.accounting.base import Accountant, infinite_curvature
from dpaudit.accounting.conversions import tcdp_delta, tcdp_to_dp
from dpaudit.core.numeric import round_up, scale_by_count
from dpaudit.core.validation import (
    UnsupportedMechanismError,
    check_delta,
    check_epsilon,
    check_orders,
)
from dpaudit.mechanisms.base import rdp_from_zcdp

__all__ = ["TCDPAccountant"]


def _mechanism_tcdp(mechanism) -> tuple[float, float]:
    if not hasattr(mechanism, "tcdp"):
        raise UnsupportedMechanismError(f"{type(mechanism).__name__} has no tcdp() method")
    rho, omega = (float(v) for v in mechanism.tcdp())
    if math.isnan(rho) or rho < 0 or math.isnan(omega) or not omega > 1:
        raise ValueError(f"{mechanism!r}.tcdp() returned ({rho}, {omega}), expected rho >= 0 and omega > 1")
    if math.isinf(rho):  # a guarantee beyond the float range composes to epsilon = inf; otherwise refused
        infinite_curvature(mechanism, "TCDPAccountant", "tCDP",
                           f"{mechanism!r} has no tCDP guarantee (rho = inf); TCDPAccountant cannot compose it")
    return rho, omega


class TCDPAccountant(Accountant):
    """(rho, omega)-tCDP accountant: ``rho`` adds up (rounded up), ``omega`` is the minimum.

    Amplification by subsampling only through the mechanisms' ``tcdp()`` (sampling without
    replacement under the conditions of Bun et al. 2018; ``amplifies_subsampling = False``): a
    Poisson-sampled mechanism is charged the unsampled one's (rho, omega), and composing one
    warns with :class:`~dpaudit.accounting.base.NoAmplificationWarning` rather than refusing (the
    number is valid, only loose). A non-private step composes to rho = inf: epsilon = inf.
    """

    name = "tcdp"
    label = "tCDP"
    amplifies_subsampling = False

    @classmethod
    def _charge(cls, mechanism) -> float:
        return float(mechanism.tcdp()[0])

    def __init__(self):
        super().__init__()
        self.rho = 0.0
        self.omega = math.inf

    def _step(self, mechanism) -> tuple[float, float]:
        """``mechanism.tcdp()``; raises :class:`UnsupportedMechanismError` when its rho is inf."""
        return _mechanism_tcdp(mechanism)

    def _add(self, mechanism, step, count: int) -> bool:
        rho, omega = step
        if rho > 0.0:  # a zero-cost mechanism leaves rho exactly unchanged
            self.rho = round_up(self.rho + scale_by_count(count, rho))
        self.omega = min(self.omega, omega)
        return True

    def epsilon(self, delta) -> float:
        """Best Balle/CKS conversion over alpha in (1, omega] (rounded up; inf when rho is)."""
        delta = check_delta("delta", delta)
        if math.isinf(self.rho):
            return math.inf
        return tcdp_to_dp(self.rho, self.omega, delta, method="cks")

    def delta(self, epsilon) -> float:
        """Smallest CKS delta over alpha in (1, omega] (rounded up, at most 1)."""
        epsilon = check_epsilon("epsilon", epsilon)
        if math.isinf(self.rho):
            return 1.0
        return tcdp_delta(self.rho, self.omega, epsilon)

    def epsilon_details(self, delta) -> dict:
        return {"epsilon": self.epsilon(delta), "rho": self.rho, "omega": self.omega}

    def rdp_curve(self, orders) -> np.ndarray:
        """RDP curve rho*alpha for alpha < omega (alpha = omega included, by left-continuity), inf beyond."""
        orders = check_orders("orders", orders)
        return np.where(orders <= self.omega, rdp_from_zcdp(self.rho, orders), math.inf)

    def __repr__(self) -> str:
        return f"TCDPAccountant(rho={self.rho:g}, omega={self.omega:g})"
