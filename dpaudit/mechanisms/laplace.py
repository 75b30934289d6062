"""The Laplace mechanism f(x) + Lap(scale).

References
----------
Mironov, "Renyi differential privacy", CSF 2017, Prop. 6 (Table II): for epsilon = D/b,
    r(alpha) = 1/(alpha-1) log( alpha/(2alpha-1) e^{(alpha-1) eps} + (alpha-1)/(2alpha-1) e^{-alpha eps} ),
    r(1) = eps + e^{-eps} - 1 (KL), r(inf) = eps.
Bun & Steinke, "Concentrated differential privacy", TCC 2016, Def. 1.1 (rho-zCDP); the tight rho of
the Laplace mechanism is sup_alpha r(alpha)/alpha = r(1) (attained as alpha -> 1; see
proofs_checks/laplace_rdp.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.core.numeric import round_up
from dpaudit.core.validation import check_neighbouring, check_nonnegative, check_orders, check_positive
from dpaudit.mechanisms._subsampled_rdp import expm1mx, expm1mx_over_x2
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.float_safe import grid_laplace
from dpaudit.mechanisms.loss_pairs import LaplacePair, NonPrivatePair, PrivacyLoss, nonprivate_loss
from dpaudit.mechanisms.nonprivate import nonprivate_rdp

__all__ = ["Laplace", "laplace_rdp"]


def laplace_rdp(epsilon: float, orders) -> np.ndarray:
    """Mironov's closed form for the Laplace mechanism with epsilon = sensitivity/scale.

    Evaluated without cancellation: with A = alpha/(2alpha-1), B = (alpha-1)/(2alpha-1)
    (A + B = 1 and A(alpha-1) = B alpha, so the linear terms cancel exactly),

        inner - 1 = A * expm1mx((alpha-1) eps) + B * expm1mx(-alpha eps) >= 0,
        r(alpha)  = log1p(inner - 1) / (alpha - 1)            when (alpha-1) eps < 1,
        r(alpha)  = eps + [log A + log1p((B/A) e^{-(2alpha-1) eps})]/(alpha-1)  otherwise,

    and r(inf) = eps.  ``orders`` validated by the caller; result not rounded.
    """
    a = np.asarray(orders, dtype=float)
    if epsilon == 0.0:  # (identical output laws; a caller with a positive true epsilon rounds up)
        return np.zeros(a.shape)
    fin = np.isfinite(a)
    af = np.where(fin, a, 2.0)
    am1 = af - 1.0
    with np.errstate(over="ignore"):
        t = am1 * epsilon
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        wa = af / (2.0 * af - 1.0)
        wb = am1 / (2.0 * af - 1.0)
        small = wa * expm1mx(np.minimum(t, 1.0)) + wb * expm1mx(-af * epsilon)
        r_small = np.log1p(small) / am1
        r_big = epsilon + (np.log(wa) + np.log1p((am1 / af) * np.exp(-(2.0 * af - 1.0) * epsilon))) / am1
        # where inner - 1 is below ~1e-280 its pieces under/underflow before the division by
        # alpha - 1: use the upper bound (inner - 1)/(alpha - 1) >= log1p(inner - 1)/(alpha - 1)
        # with eps^2 factored out (relative looseness < 1e-280)
        scaled = wa * am1 * expm1mx_over_x2(t) + af * (af / (2.0 * af - 1.0)) * expm1mx_over_x2(-af * epsilon)
        r_tiny = epsilon * (epsilon * scaled)
        r_small = np.where(small < 1e-280, r_tiny, r_small)
    r = np.where(t < 1.0, r_small, r_big)
    r = np.minimum(r, epsilon)
    return np.where(fin, r, epsilon)


@dataclass(frozen=True)
class Laplace(Mechanism):
    """Laplace mechanism: output ``value + Lap(scale)`` (per coordinate).

    ``sensitivity`` is the L1 sensitivity under ``neighbouring``; ``epsilon = sensitivity/scale``.

    Curves
    ------
    rdp(alpha)     Mironov 2017 Prop. 6, stable form (:func:`laplace_rdp`)     [exact]
    zcdp()         eps + e^{-eps} - 1 = sup_alpha r(alpha)/alpha (alpha -> 1)   [exact]
    pure_epsilon() eps                                                           [exact]

    Sampling
    --------
    sample()          float-safe: the exact ``value + Lap(scale)`` rounded to the grid
                      2^(floor(log2 scale) - 20), sampled exactly; post-processing of this
                      mechanism, so the curves above hold for it as stated (no correction)
    sample_textbook() ``value + rng.laplace(0, scale)`` in doubles: leaks through its low-order
                      bits (Mironov 2012), kept for demonstrations

    ``scale = 0`` (no noise) is a non-private release (:meth:`non_private`): every curve is
    ``inf``, its pair the non-private one (:mod:`dpaudit.mechanisms.nonprivate`).
    """

    scale: float
    sensitivity: float = 1.0
    neighbouring: str = "add_remove"

    def __post_init__(self):
        object.__setattr__(self, "scale", check_nonnegative("scale", self.scale))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        check_neighbouring("neighbouring", self.neighbouring)

    @property
    def epsilon(self) -> float:
        """sensitivity / scale (inf for scale = 0)."""
        return self.sensitivity / self.scale if self.scale > 0 else math.inf

    def non_private(self) -> bool:
        """No noise (scale = 0): the output is the query value."""
        return self.scale == 0.0

    def rdp(self, orders) -> np.ndarray:
        if self.non_private():
            return nonprivate_rdp(orders)
        orders = check_orders("orders", orders)
        return round_up(laplace_rdp(self.epsilon, orders))

    def zcdp(self) -> float:
        """rho = eps + e^{-eps} - 1 (the KL divergence), computed as expm1mx(-eps)."""
        if self.non_private():
            return math.inf
        return round_up(float(expm1mx(-self.epsilon)))

    def has_zcdp_guarantee(self) -> bool:
        return not self.non_private()  # pure DP for every scale > 0

    def pure_epsilon(self) -> float:
        return round_up(self.epsilon) if self.epsilon != math.inf else math.inf

    def privacy_loss(self) -> PrivacyLoss:
        """P = Lap(0, 1), Q = Lap(eps0, 1) with eps0 = sensitivity/scale, symmetric; the
        mechanism's own pair (exact). eps0 = inf: the non-private pair."""
        if self.non_private():
            return nonprivate_loss()
        eps0 = self.sensitivity / self.scale
        if not math.isfinite(eps0):
            return PrivacyLoss.symmetric_pair(NonPrivatePair(), [LaplacePair(1e300)], "nonprivate")
        pair = LaplacePair(eps0)
        return PrivacyLoss.symmetric_pair(pair, [pair], "laplace", exact=True)

    def likelihood_ratio_test(self):
        """On (0, sensitivity): log p(y | D)/p(y | 0) = (|y| - |y - D|)/scale (``None`` for
        scale = 0)."""
        if self.non_private():
            return None
        sens, scale = float(self.sensitivity), self.scale
        return 0.0, sens, lambda y: (np.abs(y) - np.abs(y - sens)) / scale

    def sample(self, value, rng: np.random.Generator, size=None):
        """``value + Lap(scale)`` draws, shape ``size + value.shape``, float-safe.

        The exact real ``value + Lap(scale)`` rounded to the grid g = 2^(floor(log2 scale) - 20)
        (between 2^-21 and 2^-20 times ``scale``), sampled exactly
        (:func:`dpaudit.mechanisms.float_safe.grid_laplace`): post-processing of this mechanism, so
        ``rdp``, ``zcdp``, ``privacy_loss`` and ``pure_epsilon`` bound what it releases, for every
        pair of input doubles, with no correction (the accounted epsilon is exactly ``epsilon``).
        The low-order bits of the outputs carry no information about ``value`` beyond that
        (Mironov 2012's attack does not apply). :meth:`sample_textbook` is the leaky float sampler.
        """
        return grid_laplace(value, self.scale, rng, size)

    def sample_textbook(self, value, rng: np.random.Generator, size=None):
        """The textbook floating-point sampler ``value + rng.laplace(0, scale)``, kept to demonstrate
        the leak: its low-order bits depend on ``value`` (Mironov, "On significance of the least
        significant bits for differential privacy", CCS 2012), so it is NOT ``epsilon``-DP; dpaudit's
        default audit certifies epsilon >= 7 against epsilon = 1 on it. Use :meth:`sample`."""
        value = np.asarray(value, dtype=float)
        shape = value.shape if size is None else tuple(np.atleast_1d(size)) + value.shape
        return value + rng.laplace(0.0, self.scale, size=shape)

    def describe(self) -> str:
        return (f"Laplace(scale={self.scale:g}, sensitivity={self.sensitivity:g}, "
                f"epsilon={self.epsilon:g}, {self.neighbouring})")
