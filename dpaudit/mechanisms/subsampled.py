"""Subsampled mechanisms: Poisson subsampling (add/remove) and sampling without replacement
(replace-one).

Every curve is an upper bound and is additionally capped by the base mechanism's curve: by
joint quasi-convexity of the Renyi divergence (van Erven & Harremoes 2014, Thm. 13),
D_a(qP + (1-q)Q || Q) <= D_a(P || Q) and D_a(Q || qP + (1-q)Q) <= D_a(Q || P), and for sampling
without replacement the two output distributions are mixtures over a coupling of subsamples
that are equal or replace-one neighbours.  The same argument (applied order by order) shows the
subsampled mechanism is rho-zCDP whenever the base is, so ``zcdp()`` returns the base rho.

References: see :mod:`dpaudit.mechanisms._subsampled_rdp` ([MTZ], [ZW], [WBK], [KOV]) and
Balle, Barthe, Gaboardi, "Privacy amplification by subsampling", NeurIPS 2018, Thm. 8
(Poisson subsampling of (eps, delta)-DP gives (log(1 + q(e^eps - 1)), q delta)) and Thm. 9 (the
same for sampling m of n without replacement, q = m/n, under replace-one neighbours).

A non-private base (:meth:`~dpaudit.mechanisms.base.Mechanism.non_private`, e.g. zero noise)
states ``approx_dp() = (0, 1)``; both samplers turn it into exactly (0, q)-DP (derivation in
:mod:`dpaudit.mechanisms.nonprivate`), which the RDP accountant carries as a delta and the PLD
accountant composes through the exact pairs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.core.numeric import round_up
from dpaudit.core.validation import check_orders, check_probability
from dpaudit.mechanisms import _subsampled_rdp as K
from dpaudit.mechanisms._tcdp_amplification import subsampled_tcdp
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.float_safe import exact_bernoulli
from dpaudit.mechanisms.gaussian import Gaussian
from dpaudit.mechanisms.loss_pairs import ApproxDPPair, PrivacyLoss

__all__ = ["PoissonSampled", "SampledWithoutReplacement"]


def _check_base(mechanism, relation: str, cls: str):
    if not isinstance(mechanism, Mechanism):
        raise ValueError(f"mechanism must be a dpaudit Mechanism, got {type(mechanism).__name__}")
    if getattr(mechanism, "neighbouring", "add_remove") != relation:
        raise ValueError(
            f"mechanism must be stated for {relation!r} neighbours to be used in {cls}, "
            f"got {mechanism.neighbouring!r}")


def _amplified_pure(q: float, eps: float) -> float:
    """log(1 + q(e^eps - 1)) (Balle et al. 2018, Thm. 8)."""
    if math.isinf(eps):
        return math.inf
    if q == 0.0 or eps == 0.0:
        return 0.0
    if eps > 700:
        return float(np.logaddexp(math.log1p(-q), math.log(q) + eps)) if q < 1 else eps
    return math.log1p(q * math.expm1(eps))


#: noise multipliers for which the subsampled-Gaussian kernels are evaluated; outside, sigma^2 or
#: (j^2 - j)/(2 sigma^2) leave the float range and the base curve alpha/(2 sigma^2) is used (an
#: upper bound by quasi-convexity; below 1e-100 it is >= 5e199 alpha and the subsampled value
#: differs from it by O(log(1/q)) only, above 1e150 it is <= 5e-301 alpha)
_KERNEL_SIGMA = (1e-100, 1e150)


def _amplified_pure_up(q: float, eps: float) -> float:
    """:func:`_amplified_pure` rounded up; exactly 0 only when q = 0 or eps = 0 (no cost), a
    positive float when the value underflows."""
    if q == 0.0 or eps == 0.0:
        return 0.0
    return round_up(_amplified_pure(q, eps))


def _mask_like(mask, out):
    return mask.reshape(mask.shape + (1,) * (np.ndim(out) - mask.ndim))


@dataclass(frozen=True)
class _Subsampled(Mechanism):
    """What the two samplers share: the base ``mechanism``, the rate ``q``, and the RDP curve's
    frame (q = 0 -> 0, q = 1 -> base, Gaussian base -> the sampler's kernel within the float
    range of its noise multiplier, else its general bound; always rounded up and capped by the
    base curve). Subclasses give ``neighbouring`` and the two kernels."""

    mechanism: Mechanism
    q: float

    def __post_init__(self):
        _check_base(self.mechanism, self.neighbouring, type(self).__name__)
        object.__setattr__(self, "q", check_probability("q", self.q))

    def rdp(self, orders) -> np.ndarray:
        orders = check_orders("orders", orders)
        q, base = self.q, self.mechanism
        if q == 0.0:
            return np.zeros(orders.shape)
        base_curve = np.asarray(base.rdp(orders), dtype=float)
        if q == 1.0:
            return base_curve
        if isinstance(base, Gaussian):
            s = base.sigma / base.sensitivity
            if not _KERNEL_SIGMA[0] <= s <= _KERNEL_SIGMA[1]:
                return base_curve  # (valid by quasi-convexity; the kernel's sigma^2 over/underflows)
            out = self._gaussian_rdp(q, s, orders)
        else:
            out = self._general_rdp(q, base, orders)
        return np.minimum(round_up(out), base_curve)

    def _gaussian_rdp(self, q: float, s: float, orders: np.ndarray) -> np.ndarray:
        raise TypeError(f"{type(self).__name__} has no Gaussian kernel")  # pragma: no cover - subclasses give one

    def _general_rdp(self, q: float, base, orders: np.ndarray) -> np.ndarray:
        raise TypeError(f"{type(self).__name__} has no general kernel")  # pragma: no cover - subclasses give one

    def zcdp(self) -> float:
        return 0.0 if self.q == 0.0 else self.mechanism.zcdp()

    def has_zcdp_guarantee(self) -> bool:
        return self.q == 0.0 or self.mechanism.has_zcdp_guarantee()

    def non_private(self) -> bool:
        return self.q == 1.0 and self.mechanism.non_private()

    def subsampling(self) -> tuple[Mechanism, float]:
        return (self.mechanism, self.q)

    def approx_dp(self):
        """(log(1 + q(e^eps - 1)), q delta) from the base's (eps, delta) statement (Balle et al.
        2018, Thm. 8 for Poisson, Thm. 9 without replacement); ``None`` without one."""
        pair = self.mechanism.approx_dp()
        if pair is None:
            return None
        eps, delta = pair
        d = 0.0 if (self.q == 0.0 or delta == 0.0) else min(round_up(self.q * delta), 1.0)
        return (_amplified_pure_up(self.q, eps), d)


@dataclass(frozen=True)
class PoissonSampled(_Subsampled):
    """``mechanism`` run on a Poisson subsample (each record kept independently w.p. ``q``).

    Neighbouring relation: add/remove (the base must be stated for add/remove neighbours).

    rdp(alpha):
      * Gaussian base: the exact [MTZ] value (integer orders: binomial sum; fractional: signed
        two-sided series) with noise multiplier sigma/sensitivity;
      * pure-DP base (finite ``pure_epsilon``): the exact divergence of the [KOV] dominating
        pair (subsampled randomized response, both directions), capped by [ZW] Thm. 6;
      * any other base: [ZW] Thm. 6 at ceil(alpha) (RDP is non-decreasing in alpha);
      always capped by the base curve; q = 0 -> 0, q = 1 -> base.
    zcdp(): base rho (quasi-convexity). tcdp(): base (rho, omega).
    pure_epsilon(): log(1 + q(e^eps - 1)). approx_dp(): (log(1 + q(e^eps - 1)), q delta).
    A non-private base gives exactly (0, q)-DP (rdp inf; approx_dp (0, q); the exact pairs).
    """

    neighbouring = "add_remove"

    def _gaussian_rdp(self, q: float, s: float, orders: np.ndarray) -> np.ndarray:
        return K.poisson_gaussian_rdp(q, s, orders)

    def _general_rdp(self, q: float, base, orders: np.ndarray) -> np.ndarray:
        out = np.full(orders.shape, math.inf)
        eps = base.pure_epsilon()
        if math.isfinite(eps):
            out = np.minimum(out, K.poisson_pure_dp_rdp(q, eps, orders))
        return np.minimum(out, K.poisson_general_rdp(q, base.rdp, orders))

    def tcdp(self) -> tuple[float, float]:
        if self.q == 0.0:
            return (0.0, math.inf)
        return self.mechanism.tcdp()

    def pure_epsilon(self) -> float:
        return _amplified_pure_up(self.q, self.mechanism.pure_epsilon())

    def privacy_loss(self) -> PrivacyLoss | None:
        """The base step's pairs subsampled in both directions (Zhu, Dong, Wang 2022, Thm. 10);
        nested samplers multiply their rates (rounded outwards). ``None`` when the base has no
        pair, or an asymmetric one (the subsampled pairs are built from one base pair)."""
        q_up, q_lo = float(self.q), float(self.q)
        base = self.mechanism
        while isinstance(base, PoissonSampled):  # Poisson(Poisson(M, q1), q2) = Poisson(M, q1 q2)
            prod = q_up * float(base.q)
            q_up = min(float(np.nextafter(prod, 2.0)), 1.0) if prod > 0 else 0.0
            q_lo = max(float(np.nextafter(prod, -1.0)), 0.0) if prod > 0 else 0.0
            base = base.mechanism
        if q_up == 0.0:
            return PrivacyLoss.nothing()
        loss = base.privacy_loss()
        if loss is None or (not loss.releases_nothing and not loss.symmetric):
            return None
        return loss.subsampled(q_up, q_lo)

    def sample(self, value, rng: np.random.Generator, size=None):
        """Draws of the subsampled output.

        ``value`` is the query value on the dataset *containing* the record; the record's
        contribution is ``value`` against ``0 * value`` without it.  With probability ``q``
        (the record is sampled) the output is ``mechanism.sample(value)``, otherwise
        ``mechanism.sample(0 * value)``; the choice is made per draw, with probability exactly ``q``
        (:func:`dpaudit.mechanisms.float_safe.exact_bernoulli`). Float-safe when the base sampler is
        (every continuous mechanism of dpaudit's is).
        """
        value = np.asarray(value)
        with_rec = self.mechanism.sample(value, rng, size)
        without = self.mechanism.sample(np.zeros_like(value), rng, size)
        mask = exact_bernoulli(self.q, () if size is None else tuple(np.atleast_1d(size)), rng)
        return np.where(_mask_like(mask, with_rec), with_rec, without)

    def describe(self) -> str:
        return f"PoissonSampled({self.mechanism.describe()}, q={self.q:g})"


@dataclass(frozen=True)
class SampledWithoutReplacement(_Subsampled):
    """``mechanism`` run on a uniformly random subset of m = q n records (q = m/n).

    Neighbouring relation: replace-one (n is public); the base must be stated for replace-one
    neighbours (e.g. ``Gaussian(sigma, sensitivity=2C, neighbouring="replace_one")`` for a sum
    of vectors clipped to C).

    rdp(alpha): Gaussian base -> [WBK] Thm. 27 (as dp-accounting 0.6.0 evaluates it, with the
    forward differences computed accurately); other bases -> [WBK] Thm. 9; fractional orders
    by [WBK] Cor. 10; capped by the base curve.  zcdp(): base rho.  tcdp(): the tCDP
    amplification theorem (``dpaudit.mechanisms._tcdp_amplification.subsampled_tcdp``) when its
    conditions hold, else the base pair.  pure_epsilon(): base epsilon (no amplification is
    claimed under replace-one here).  approx_dp(): (log(1 + q(e^eps - 1)), q delta) of the
    base's statement (Balle et al. 2018, Thm. 9); a non-private base gives exactly (0, q)-DP.
    """

    neighbouring = "replace_one"

    def _gaussian_rdp(self, q: float, s: float, orders: np.ndarray) -> np.ndarray:
        return K.wor_gaussian_rdp(q, s, orders)

    def _general_rdp(self, q: float, base, orders: np.ndarray) -> np.ndarray:
        eps_inf = min(base.pure_epsilon(), float(np.asarray(base.rdp([math.inf]))[0]))
        return K.wor_general_rdp(q, base.rdp, eps_inf, orders)

    def tcdp(self) -> tuple[float, float]:
        base = self.mechanism.tcdp()
        if self.q == 0.0:
            return (0.0, math.inf)
        rho, omega = base
        if not (math.isfinite(rho) and rho > 0):
            return base
        res = subsampled_tcdp(rho, omega, self.q)
        return base if res is None else (float(res[0]), float(res[1]))

    def pure_epsilon(self) -> float:
        return 0.0 if self.q == 0.0 else self.mechanism.pure_epsilon()

    def privacy_loss(self) -> PrivacyLoss | None:
        """A non-private base: the (0, q)-DP pair, exact (module docstring of
        :mod:`dpaudit.mechanisms.nonprivate`); otherwise the pair of the pure-DP or (epsilon,
        delta) statement (:meth:`Mechanism.privacy_loss`)."""
        if self.q == 0.0:
            return PrivacyLoss.nothing()
        if self.mechanism.non_private() and self.q < 1.0:
            pair = ApproxDPPair(0.0, float(self.q))
            return PrivacyLoss.symmetric_pair(pair, [pair], "wor-nonprivate", exact=True)
        return super().privacy_loss()

    def sample(self, value, rng: np.random.Generator, size=None):
        """Same convention as :meth:`PoissonSampled.sample` with sampling probability q = m/n
        for the differing record."""
        value = np.asarray(value)
        with_rec = self.mechanism.sample(value, rng, size)
        without = self.mechanism.sample(np.zeros_like(value), rng, size)
        mask = exact_bernoulli(self.q, () if size is None else tuple(np.atleast_1d(size)), rng)
        return np.where(_mask_like(mask, with_rec), with_rec, without)

    def describe(self) -> str:
        return f"SampledWithoutReplacement({self.mechanism.describe()}, q={self.q:g})"
