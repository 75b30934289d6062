"""The Gaussian mechanism f(x) + N(0, sigma^2 I).

References
----------
Mironov, "Renyi differential privacy", CSF 2017, Prop. 7: RDP alpha * D^2 / (2 sigma^2).
Bun & Steinke, "Concentrated differential privacy", TCC 2016, Prop. 1.6: rho = D^2/(2 sigma^2).
Balle & Wang, "Improving the Gaussian mechanism", ICML 2018, Thm. 8: the exact delta(epsilon).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.core.numeric import next_up, round_up
from dpaudit.core.validation import check_neighbouring, check_nonnegative, check_orders, check_positive
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.float_safe import grid_gaussian
from dpaudit.mechanisms.loss_pairs import PrivacyLoss, gaussian_loss, nonprivate_loss
from dpaudit.mechanisms.nonprivate import nonprivate_rdp

__all__ = ["Gaussian"]


@dataclass(frozen=True)
class Gaussian(Mechanism):
    """Gaussian mechanism with noise standard deviation ``sigma`` and L2 ``sensitivity``.

    The sensitivity is the L2 sensitivity under ``neighbouring`` (a sum of vectors clipped to
    norm C has sensitivity C under add/remove and 2C under replace-one).

    Curves
    ------
    rdp(alpha)  = alpha * sensitivity^2 / (2 sigma^2)            [exact]
    zcdp()      = sensitivity^2 / (2 sigma^2)                     [exact]

    Sampling
    --------
    sample()          float-safe: the exact ``value + N(0, sigma^2)`` rounded to the grid
                      2^(floor(log2 sigma) - 20), sampled exactly; post-processing of this
                      mechanism, so the curves above (and ``privacy_loss``) hold for it as stated
    sample_textbook() ``value + rng.normal(0, sigma)`` in doubles: leaks through its low-order
                      bits (Mironov 2012), kept for demonstrations

    ``sigma = 0`` (no noise) is a non-private release (:meth:`non_private`): every curve is
    ``inf``, its pair the non-private one (:mod:`dpaudit.mechanisms.nonprivate`).
    """

    sigma: float
    sensitivity: float = 1.0
    neighbouring: str = "add_remove"

    def __post_init__(self):
        object.__setattr__(self, "sigma", check_nonnegative("sigma", self.sigma))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        check_neighbouring("neighbouring", self.neighbouring)

    @property
    def noise_multiplier(self) -> float:
        """sigma / sensitivity."""
        return self.sigma / self.sensitivity

    @property
    def mu(self) -> float:
        """The GDP parameter sensitivity / sigma (Dong, Roth, Su 2019); inf for sigma = 0."""
        return self.sensitivity / self.sigma if self.sigma > 0 else math.inf

    def non_private(self) -> bool:
        """No noise (sigma = 0): the output is the query value."""
        return self.sigma == 0.0

    def rdp(self, orders) -> np.ndarray:
        if self.non_private():
            return nonprivate_rdp(orders)
        orders = check_orders("orders", orders)
        # alpha mu^2 / 2 evaluated as (alpha mu) mu / 2: mu^2 alone can be subnormal (mu < 1.5e-154)
        # and lose its relative precision before being multiplied by a large order
        mu = np.float64(next_up(self.sensitivity / self.sigma))  # >= the exact ratio (never 0)
        fin = np.isfinite(orders)
        with np.errstate(over="ignore", under="ignore"):
            out = round_up((np.where(fin, orders, 2.0) * mu) * mu / 2.0, ulps=4)
        return np.where(fin, out, math.inf)  # D_inf of two distinct Gaussians is infinite

    def has_zcdp_guarantee(self) -> bool:
        return not self.non_private()  # rho = D^2/(2 sigma^2) is finite for every sigma > 0 (inf only by overflow)

    def zcdp(self) -> float:
        if self.non_private():
            return math.inf
        with np.errstate(over="ignore"):
            return round_up(np.float64(self.sensitivity / self.sigma) ** 2 / 2.0, ulps=2)

    def privacy_loss(self) -> PrivacyLoss:
        """P = N(0, 1), Q = N(mu, 1) with mu = sensitivity/sigma, symmetric (Balle & Wang 2018,
        Thm. 8); composed exactly by the PLD accountant. sigma = 0: the non-private pair."""
        if self.non_private():
            return nonprivate_loss()
        return gaussian_loss(self.sensitivity, self.sigma)

    def likelihood_ratio_test(self):
        """On (0, sensitivity): log p(y | D)/p(y | 0) = D y / sigma^2 - D^2/(2 sigma^2); the
        constant is dropped. ``None`` for sigma = 0 (no finite ratio)."""
        if self.non_private():
            return None
        sens, var = float(self.sensitivity), self.sigma ** 2
        return 0.0, sens, lambda y: y * (sens / var)

    def sample(self, value, rng: np.random.Generator, size=None):
        """``value + N(0, sigma^2)`` draws, shape ``size + value.shape``, float-safe.

        The exact real ``value + N(0, sigma^2)`` rounded to the grid g = 2^(floor(log2 sigma) - 20)
        (between 2^-21 and 2^-20 times ``sigma``), sampled exactly
        (:func:`dpaudit.mechanisms.float_safe.grid_gaussian`): post-processing of this mechanism, so
        ``rdp``, ``zcdp`` and ``privacy_loss`` (its exact (epsilon, delta) curve) bound what it
        releases, for every pair of input doubles, with no correction. :meth:`sample_textbook` is the
        leaky float sampler.
        """
        return grid_gaussian(value, self.sigma, rng, size)

    def sample_textbook(self, value, rng: np.random.Generator, size=None):
        """The textbook floating-point sampler ``value + rng.normal(0, sigma)``, kept to demonstrate
        the leak: its low-order bits depend on ``value`` (Mironov 2012), so it does NOT satisfy the
        Gaussian mechanism's guarantee; dpaudit's default audit flags it. Use :meth:`sample`."""
        value = np.asarray(value, dtype=float)
        shape = value.shape if size is None else tuple(np.atleast_1d(size)) + value.shape
        return value + rng.normal(0.0, self.sigma, size=shape)

    def describe(self) -> str:
        return f"Gaussian(sigma={self.sigma:g}, sensitivity={self.sensitivity:g})"

