"""Zero-concentrated DP accountant.

References
----------
Bun & Steinke, "Concentrated differential privacy: simplifications, extensions, and lower
bounds", TCC 2016, arXiv:1605.02065: Def. 1.1 (rho-zCDP: D_alpha <= rho*alpha for all
alpha > 1) and Lemma 2.3 (adaptive composition adds rho).
Canonne, Kamath & Steinke, NeurIPS 2020, arXiv:2004.00010, Cor. 13: conversion to
(epsilon, delta) (:func:`dpaudit.accounting.conversions.zcdp_to_dp`, method "cks").
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.accounting.base import Accountant, infinite_curvature
from dpaudit.accounting.conversions import zcdp_delta, zcdp_to_dp
from dpaudit.core.numeric import round_up, scale_by_count
from dpaudit.core.validation import (
    UnsupportedMechanismError,
    check_delta,
    check_epsilon,
)
from dpaudit.mechanisms.base import rdp_from_zcdp

__all__ = ["ZCDPAccountant"]


def _mechanism_rho(mechanism) -> float:
    if not hasattr(mechanism, "zcdp"):
        raise UnsupportedMechanismError(f"{type(mechanism).__name__} has no zcdp() method")
    rho = float(mechanism.zcdp())
    if math.isnan(rho) or rho < 0:
        raise ValueError(f"{mechanism!r}.zcdp() returned {rho}, expected rho >= 0")
    if math.isinf(rho):  # a guarantee beyond the float range composes to epsilon = inf; otherwise refused
        infinite_curvature(mechanism, "ZCDPAccountant", "zCDP",
                           f"{mechanism!r} is not zCDP (zcdp() = inf); ZCDPAccountant cannot compose it "
                           "(use RDPAccountant or PLDAccountant)")
    return rho


class ZCDPAccountant(Accountant):
    """rho-zCDP accountant: ``rho`` is the sum of the composed mechanisms' rho (rounded up).

    ``epsilon(delta)`` uses the Canonne-Kamath-Steinke conversion (optimal for a generic
    rho-zCDP mechanism), ``delta(epsilon)`` its inverse :func:`zcdp_delta`.

    No amplification by subsampling (``amplifies_subsampling = False``): a sampled mechanism is
    charged the rho of the unsampled one (valid by quasi-convexity, but far from tight), and
    composing one warns with :class:`~dpaudit.accounting.base.NoAmplificationWarning` (naming the
    accountants that amplify) rather than refusing: a zCDP budget of a sampled step may be wanted.
    A non-private step (``non_private()``, or one run on a subsample) composes to rho = inf:
    epsilon = inf, delta = 1.
    """

    name = "zcdp"
    label = "zCDP"
    amplifies_subsampling = False

    @classmethod
    def _charge(cls, mechanism) -> float:
        return float(mechanism.zcdp())

    def __init__(self):
        super().__init__()
        self.rho = 0.0

    def _step(self, mechanism) -> float:
        """``mechanism.zcdp()``; raises :class:`UnsupportedMechanismError` when it is inf."""
        return _mechanism_rho(mechanism)

    def _add(self, mechanism, rho: float, count: int) -> bool:
        """Add ``count`` times rho (BS16 Lemma 2.3); any integer count (beyond the float range
        rho becomes inf); a mechanism with rho = 0 leaves rho exactly 0."""
        if rho > 0.0:  # a zero-cost mechanism leaves rho exactly unchanged
            self.rho = round_up(self.rho + scale_by_count(count, rho))
        return True

    def epsilon(self, delta) -> float:
        """CKS epsilon at ``delta`` (rounded up)."""
        delta = check_delta("delta", delta)
        if math.isinf(self.rho):
            return math.inf
        return zcdp_to_dp(self.rho, delta, "cks")

    def delta(self, epsilon) -> float:
        """CKS delta at ``epsilon`` (rounded up, at most 1)."""
        epsilon = check_epsilon("epsilon", epsilon)
        if math.isinf(self.rho):
            return 1.0
        return zcdp_delta(self.rho, epsilon)

    def epsilon_details(self, delta) -> dict:
        return {"epsilon": self.epsilon(delta), "rho": self.rho}

    def rdp_curve(self, orders) -> np.ndarray:
        """The RDP curve rho*alpha implied by rho-zCDP."""
        return rdp_from_zcdp(self.rho, orders)

    def __repr__(self) -> str:
        return f"ZCDPAccountant(rho={self.rho:g})"
