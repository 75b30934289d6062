"""Pure epsilon-DP mechanisms: any epsilon-DP mechanism, and the exponential mechanism.

References
----------
Mironov, "Renyi differential privacy", CSF 2017, Prop. 5: RDP of randomized response.
T. Steinke, "Pure DP to zCDP" (differentialprivacy.org, 2024): the RDP curve of randomized
response with p = e^eps/(1+e^eps) is the pointwise supremum of D_alpha over all eps-DP pairs,
    r(alpha) = 1/(alpha-1) log( p e^{(alpha-1)eps} + (1-p) e^{-(alpha-1)eps} )
             = eps - 1/(alpha-1) log( (1+e^-eps)/(1+e^{-(2alpha-1)eps}) ).
Bun & Steinke 2016, Prop. 3.3: eps-DP => eps^2/2-zCDP; the tight rho is sup_alpha r(alpha)/alpha
= r(1) = eps tanh(eps/2) (attained as alpha -> 1; proofs_checks/pure_dp_rdp.py).
Cesar & Rogers, "Bounding, concentrating, and truncating: unifying privacy loss composition for
data analytics", ALT 2021 (arXiv:2004.07223), Lemma 3.2/Thm 3.3 and Durfee & Rogers 2019: the
exponential mechanism is eta-bounded-range (eta = eps), hence eta^2/8-zCDP, and
D_alpha <= xi + alpha eta^2/8 with xi = KL_max - eta^2/8,
KL_max = eta/(e^eta - 1) - 1 - log(eta/(e^eta - 1)) (the largest KL of an eta-BR pair).
McSherry & Talwar 2007: the exponential mechanism P[y] ∝ exp(eps u(y)/(2 Delta)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.core.numeric import round_up
from dpaudit.core.validation import check_neighbouring, check_nonnegative, check_orders
from dpaudit.mechanisms._subsampled_rdp import expm1mx, expm1mx_over_x2
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.loss_pairs import (
    BoundedRangePair,
    PrivacyLoss,
    RandomizedResponsePair,
    bounded_range_candidates,
    nonprivate_loss,
)
from dpaudit.mechanisms.nonprivate import nonprivate_rdp

__all__ = ["PureDP", "ExponentialMechanism", "randomized_response_rdp", "bounded_range_rdp",
           "bounded_range_kl_max"]


def randomized_response_rdp(epsilon: float, orders) -> np.ndarray:
    """Tight RDP curve of eps-DP (randomized response), evaluated without cancellation.

    With t = (alpha-1) eps and p = e^eps/(1+e^eps), the inner sum minus one is a sum of
    non-negative terms,  tanh(eps/2) t + p expm1mx(t) + (1-p) expm1mx(-t),  so
    r = log1p(.)/(alpha-1) when t < 1; otherwise
    r = eps - [log1p(e^-eps) - log1p(e^{-(2alpha-1)eps})]/(alpha-1).  r(inf) = eps.
    """
    a = np.asarray(orders, dtype=float)
    fin = np.isfinite(a)
    af = np.where(fin, a, 2.0)
    am1 = af - 1.0
    with np.errstate(over="ignore"):
        t = am1 * epsilon
    p = 1.0 / (1.0 + math.exp(-epsilon)) if epsilon < 700 else 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        ts = np.minimum(t, 1.0)
        inner = math.tanh(epsilon / 2.0) * ts + p * expm1mx(ts) + (1.0 - p) * expm1mx(-ts)
        r_small = np.log1p(inner) / am1
        # where inner is below ~1e-280 its pieces under/underflow before the division by alpha - 1:
        # the upper bound inner/(alpha - 1) = eps (tanh(eps/2) + (alpha-1) eps G) with the factors
        # kept apart (G = p g(t) + (1-p) g(-t), g(x) = expm1mx(x)/x^2; looseness < 1e-280)
        g = p * expm1mx_over_x2(ts) + (1.0 - p) * expm1mx_over_x2(-ts)
        r_tiny = epsilon * (math.tanh(epsilon / 2.0) + am1 * epsilon * g)
        r_small = np.where(inner < 1e-280, r_tiny, r_small)
        r_big = epsilon - (math.log1p(math.exp(-epsilon)) - np.log1p(np.exp(-(2.0 * af - 1.0) * epsilon))) / am1
    r = np.where(t < 1.0, r_small, r_big)
    r = np.minimum(r, epsilon)
    return np.where(fin, r, epsilon)


def bounded_range_kl_max(eta: float) -> float:
    """KL_max(eta) = eta/(e^eta - 1) - 1 - log(eta/(e^eta - 1)) (Cesar & Rogers 2021).

    Written as expm1mx(-y) with y = -log(eta/(e^eta-1)) = log(expm1(eta)/eta) >= 0, so it
    stays accurate for small eta (KL_max ~ eta^2/8).
    """
    if eta == 0.0:
        return 0.0
    if eta > 700:
        y = eta + math.log1p(-math.exp(-eta)) - math.log(eta)
    else:
        y = math.log(math.expm1(eta) / eta)
    return float(expm1mx(-y))


def bounded_range_rdp(eta: float, orders) -> np.ndarray:
    """min(xi + alpha eta^2/8, eta) with xi = KL_max - eta^2/8 (<= 0); r(inf) = eta.

    Evaluated as ``KL_max + (alpha - 1) eta^2/8`` (a sum of non-negative terms): for large eta
    the form ``xi + alpha eta^2/8`` is ``-inf + inf`` (NaN) once eta^2/8 overflows."""
    a = np.asarray(orders, dtype=float)
    kl = bounded_range_kl_max(eta)
    with np.errstate(invalid="ignore", over="ignore"):
        slope = eta * eta / 8.0
        r = np.minimum(kl + (a - 1.0) * slope, eta)
    return np.where(np.isfinite(a), r, eta)


@dataclass(frozen=True)
class PureDP(Mechanism):
    """Any ``epsilon``-DP mechanism (e.g. report-noisy-max with Laplace noise).

    Curves
    ------
    rdp(alpha)     tight randomized-response curve (:func:`randomized_response_rdp`)   [exact sup]
    zcdp()         eps * tanh(eps/2) = sup_alpha r(alpha)/alpha  (< eps^2/2)             [exact sup]
    pure_epsilon() eps

    ``sample`` is randomized response on a bit: the input bit ``value`` in {0, 1} is reported
    truthfully with probability e^eps/(1+e^eps).

    ``epsilon = inf`` is randomized response without noise (the bit always reported
    truthfully): a non-private release (:meth:`non_private`), every curve ``inf``.
    """

    epsilon: float
    neighbouring: str = "add_remove"

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_nonnegative("epsilon", self.epsilon, allow_inf=True))
        check_neighbouring("neighbouring", self.neighbouring)

    def non_private(self) -> bool:
        """epsilon = inf: the truthful bit (no noise)."""
        return math.isinf(self.epsilon)

    def rdp(self, orders) -> np.ndarray:
        if self.non_private():
            return nonprivate_rdp(orders)
        orders = check_orders("orders", orders)
        if self.epsilon == 0.0:  # 0-DP: both output laws equal, every divergence is exactly 0
            return np.zeros(orders.shape)
        return round_up(randomized_response_rdp(self.epsilon, orders))

    def zcdp(self) -> float:
        if self.epsilon == 0.0:
            return 0.0
        if self.non_private():
            return math.inf
        return round_up(self.epsilon * math.tanh(self.epsilon / 2.0))

    def pure_epsilon(self) -> float:
        return self.epsilon  # the parameter itself: exact, nothing to round

    def has_zcdp_guarantee(self) -> bool:
        return not self.non_private()  # pure DP (rho may overflow to inf for epsilon > ~1e154)

    def privacy_loss(self) -> PrivacyLoss:
        """Randomized response, the dominating pair of every eps-DP mechanism and attained by
        randomized response itself (Kairouz, Oh, Viswanath 2015, Thm. 2.1); eps = inf: the
        non-private pair."""
        eps = float(self.epsilon)
        if eps == 0.0:
            return PrivacyLoss.nothing()
        if self.non_private():
            return nonprivate_loss()
        pair = RandomizedResponsePair(eps)
        return PrivacyLoss.symmetric_pair(pair, [pair], "pure")

    def sample(self, value, rng: np.random.Generator, size=None):
        """Randomized response: each bit of ``value`` kept with probability e^eps/(1+e^eps)."""
        value = np.asarray(value)
        if not np.all((value == 0) | (value == 1)):
            raise ValueError("value must be a bit (0 or 1) for randomized response")
        shape = value.shape if size is None else tuple(np.atleast_1d(size)) + value.shape
        p = 1.0 / (1.0 + math.exp(-self.epsilon)) if self.epsilon < 700 else 1.0
        keep = rng.random(shape) < p
        v = np.broadcast_to(value.astype(np.int64), shape)
        return np.where(keep, v, 1 - v)

    def describe(self) -> str:
        return f"PureDP(epsilon={self.epsilon:g}, {self.neighbouring})"


@dataclass(frozen=True)
class ExponentialMechanism(Mechanism):
    """Exponential mechanism with utility sensitivity 1: P[y] ∝ exp(eps u(y) / 2).

    It is eta-bounded-range with eta = eps (Durfee & Rogers 2019).

    Curves
    ------
    rdp(alpha)     min(xi + alpha eps^2/8, eps), xi = KL_max - eps^2/8   (Cesar & Rogers 2021),
                   and at most the eps-DP randomized-response curve (it is eps-DP)
    zcdp()         eps^2/8
    pure_epsilon() eps

    ``epsilon = inf`` is the exact argmax (no noise): a non-private release
    (:meth:`non_private`), every curve ``inf``.

    Composition is that of bounded-range mechanisms, tighter than that of eps-DP ones: e.g.
    ``ExponentialMechanism(1)`` then ``ExponentialMechanism(2)`` has epsilon(1e-12) in
    [2.999753, 2.999764] (the best attained pair of generalised randomized responses and the exact
    composition of the least dominating BR pairs, computed in mpmath by
    proofs_checks/exponential_br_composition.py; the PLD accountant answers [2.99934, 2.99979]),
    not the 3.0 of two eps-DP mechanisms (randomized response), which is what dp_accounting's own
    test of ``ExponentialMechanismDpEvent`` expects.
    """

    epsilon: float
    neighbouring: str = "add_remove"

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_nonnegative("epsilon", self.epsilon, allow_inf=True))
        check_neighbouring("neighbouring", self.neighbouring)

    def non_private(self) -> bool:
        """epsilon = inf: the argmax itself (no noise)."""
        return math.isinf(self.epsilon)

    def rdp(self, orders) -> np.ndarray:
        if self.non_private():
            return nonprivate_rdp(orders)
        orders = check_orders("orders", orders)
        if self.epsilon == 0.0:  # 0-bounded range: the output law does not depend on the data
            return np.zeros(orders.shape)
        br = bounded_range_rdp(self.epsilon, orders)
        return round_up(np.minimum(br, randomized_response_rdp(self.epsilon, orders)))

    def zcdp(self) -> float:
        if self.epsilon == 0.0:
            return 0.0
        if self.non_private():
            return math.inf
        return round_up(self.epsilon * self.epsilon / 8.0)  # (epsilon**2 raises OverflowError)

    def pure_epsilon(self) -> float:
        return self.epsilon  # the parameter itself: exact, nothing to round

    def has_zcdp_guarantee(self) -> bool:
        return not self.non_private()  # pure DP (rho may overflow to inf for epsilon > ~1e154)

    def privacy_loss(self) -> PrivacyLoss:
        """The least pair dominating every eta-bounded-range pair (upper), and generalised
        randomized-response pairs attained by two-candidate exponential mechanisms (lower;
        Dong, Durfee, Rogers 2020, Def. 4.1); eps = inf: the non-private pair."""
        eta = float(self.epsilon)
        if eta == 0.0:
            return PrivacyLoss.nothing()
        if self.non_private():
            return nonprivate_loss()
        return PrivacyLoss.symmetric_pair(BoundedRangePair(eta), bounded_range_candidates(eta), "bounded-range")

    def sample(self, value, rng: np.random.Generator, size=None):
        """Index drawn with P[i] ∝ exp(eps * value[..., i] / 2) (Gumbel-max trick, batched).

        ``value`` is the score vector (last axis = candidates); the output has shape
        ``size + value.shape[:-1]``.
        """
        u = np.asarray(value, dtype=float)
        if u.ndim == 0:
            raise ValueError("value must be a score vector (at least one candidate)")
        shape = u.shape if size is None else tuple(np.atleast_1d(size)) + u.shape
        if self.non_private():  # the argmax, ties broken uniformly at random
            top = np.broadcast_to(u == np.max(u, axis=-1, keepdims=True), shape)
            return np.argmax(np.where(top, rng.gumbel(size=shape), -np.inf), axis=-1)
        logits = np.broadcast_to(self.epsilon * u / 2.0, shape)
        return np.argmax(logits + rng.gumbel(size=shape), axis=-1)

    def describe(self) -> str:
        return f"ExponentialMechanism(epsilon={self.epsilon:g}, {self.neighbouring})"
