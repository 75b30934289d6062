"""The discrete Laplace (two-sided geometric) mechanism f(x) + DLap(scale) on the integers.

References
----------
Ghosh, Roughgarden, Sundararajan, "Universally utility-maximizing privacy mechanisms", STOC 2009
(the two-sided geometric mechanism); Canonne, Kamath, Steinke, "The discrete Gaussian for
differential privacy", NeurIPS 2020 (arXiv:2004.00010), the discrete Laplace DLap(t): P(Z = z) =
tanh(1/(2t)) e^{-|z|/t}, the law of G1 - G2 for i.i.d. geometric G1, G2 with success probability
1 - e^{-1/t}, and its exact sampler for a rational scale (used by :meth:`DiscreteLaplace.sample`;
the definition/proposition numbers could not be checked against a numbered copy, so they are
cited by name).

Privacy loss. Write eps = 1/t, r = e^{-eps}, c = tanh(eps/2) = (1 - r)/(1 + r), and let
P = DLap(t), Q = Delta + DLap(t) for the integer sensitivity Delta. The loss
L(z) = log P(z)/Q(z) = eps (|z - Delta| - |z|) takes the Delta + 1 values eps m_k,
m_k = Delta - 2k, k = 0..Delta, with P-masses

    k = 0      (z <= 0):        1/(1 + r)
    0 < k < Delta (z = k):      c r^k
    k = Delta  (z >= Delta):    r^Delta/(1 + r).

The map z -> Delta - z swaps P and Q and negates L, so the pair is symmetric (the curves of
(P, Q) and (Q, P) coincide). For Delta = 1 it is randomized response with eps: the dominating
pair of every eps-DP mechanism (Kairouz, Oh, Viswanath 2015, Thm. 2.1).

Renyi divergence (Mironov 2017, Def. 3), lambda = alpha - 1:

    D_alpha = (1/lambda) log E_P[e^{lambda L}]
            = Delta eps + (1/lambda) log[(1 + s^Delta + (1 - r) sum_{k=1}^{Delta-1} s^k) / (1 + r)],
    s = e^{-(2 alpha - 1) eps};  Delta = 1:  D_alpha = eps + log((1 + s)/(1 + r))/lambda,

evaluated without cancellation (see :func:`discrete_laplace_rdp`). Pure DP: D_inf = Delta/t.
zCDP: rho = (Delta/t)^2/2 from pure DP (Bun & Steinke 2016, Prop. 1.4; not claimed tight).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import special

from dpaudit.core.numeric import round_up
from dpaudit.core.validation import (
    check_integer_sensitivity,
    check_integer_values,
    check_neighbouring,
    check_nonnegative,
    check_orders,
)
from dpaudit.mechanisms._subsampled_rdp import expm1mx_over_x2
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.discrete_gaussian import sample_discrete_laplace
from dpaudit.mechanisms.loss_pairs import (
    DiscretePair,
    LaplacePair,
    NonPrivatePair,
    PrivacyLoss,
    RandomizedResponsePair,
    nonprivate_loss,
)
from dpaudit.mechanisms.nonprivate import nonprivate_rdp

__all__ = ["DiscreteLaplace", "discrete_laplace_rdp", "discrete_laplace_loss_atoms", "MAX_SENSITIVITY",
           "MAX_SAMPLING_SCALE", "EXACT_PAIR_ATOMS"]

#: largest integer sensitivity accepted (the privacy loss has sensitivity + 1 atoms)
MAX_SENSITIVITY = 10_000
#: largest scale the exact int64 sampler accepts (its intermediate geometric draw U + sV, with s
#: the numerator of the scale, stays below 2^62 except with probability below e^{-500})
MAX_SAMPLING_SCALE = 2.0 ** 50
#: largest |value| the sampler accepts (value + noise stays inside int64)
_MAX_VALUE = 2 ** 61
#: relative margin of the RDP upper bound over the evaluated value (measured error < 1e-14,
#: tests/mechanisms/test_discrete_laplace.py against mpmath)
_RDP_ULPS = 64
#: largest number of loss atoms (sensitivity + 1) described exactly to the PLD accountant
EXACT_PAIR_ATOMS = 65
#: largest sensitivity/scale whose privacy loss is described by its finite pair
_EPS_PAIR_MAX = 1e150


def discrete_laplace_loss_atoms(eps: float, sensitivity: int) -> tuple[np.ndarray, np.ndarray]:
    """``(m, log_p)``: the loss atoms ``eps * m`` (m = Delta, Delta - 2, ..., -Delta) of
    DLap(1/eps) against its shift by ``sensitivity`` and their log P-masses (module docstring)."""
    d = sensitivity
    k = np.arange(d + 1, dtype=float)
    m = d - 2.0 * k
    log1p_r = math.log1p(math.exp(-eps))
    log_c = math.log(-math.expm1(-eps)) - log1p_r
    log_p = log_c - k * eps
    log_p[0] = -log1p_r
    log_p[-1] = -d * eps - log1p_r
    return m, log_p


def discrete_laplace_rdp(eps: float, sensitivity: int, orders) -> np.ndarray:
    """D_alpha(P || Q) of DLap(1/eps) against its shift by ``sensitivity`` (not rounded).

    With lambda = alpha - 1 and E_P[L] the KL divergence,

    * lambda Delta eps <= 1: E_P[e^{lambda L}] - 1 = lambda eps^2 B with
      B = KL/eps^2 + sum_k p_k lambda m_k^2 expm1mx_over_x2(lambda eps m_k), every term >= 0, and
      KL/eps^2 = sum_{j<Delta} [(1 - r^{j+1}) + r (1 - r^j)]/(eps (1 + r)) (from
      E|Z - j - 1| - E|Z - j| = 2 P(Z <= j) - 1), again a sum of non-negative terms; then
      D = eps (eps B) log1p(X)/X with X = lambda eps^2 B (factor 1 when X underflows);
    * otherwise D = logsumexp_k(log p_k + lambda eps m_k)/lambda, where the leading term
      Delta eps dominates (D >= (1 - log 2) Delta eps), so no cancellation;
    * alpha = inf: Delta eps.
    """
    a = np.asarray(orders, dtype=float)
    d = sensitivity
    top = d * eps
    out = np.full(a.shape, top)
    if eps == 0.0:
        return np.zeros(a.shape)
    m, log_p = discrete_laplace_loss_atoms(eps, d)
    p = np.exp(log_p)
    j = np.arange(d, dtype=float)
    r = math.exp(-eps)
    kl_terms = (-np.expm1(-(j + 1.0) * eps) / eps) + r * (-np.expm1(-j * eps) / eps)
    kl_over_eps2 = float(np.sum(kl_terms)) / (1.0 + r)
    for i, alpha in enumerate(a):
        if not math.isfinite(alpha):
            continue
        lam = float(alpha) - 1.0
        if lam * top <= 1.0:  # (Python floats: an overflowing product is inf, no warning)
            with np.errstate(under="ignore"):
                b = kl_over_eps2 + float(np.sum(p * (lam * m * m) * expm1mx_over_x2(lam * eps * m)))
                half = eps * (eps * b)
                x = lam * half
            ratio = math.log1p(x) / x if x > 1e-280 else 1.0
            out[i] = half * ratio
        elif not math.isfinite(lam * top):
            continue  # the correction log(...)/lambda to Delta eps is below one ulp of it
        else:
            with np.errstate(over="ignore", under="ignore"):
                z = log_p + (lam * eps) * m
                zmax = float(np.max(z))
                lse = zmax + math.log(float(np.sum(np.exp(z - zmax))))
            out[i] = lse / lam
    return np.minimum(out, top)


def _ratio(num: float, den: float) -> float:
    if den == 0.0:
        return math.inf
    try:
        return num / den
    except OverflowError:  # pragma: no cover - Python floats give inf on most platforms
        return math.inf


@dataclass(frozen=True)
class DiscreteLaplace(Mechanism):
    """Discrete Laplace mechanism: output ``value + DLap(scale)`` on the integers (per coordinate).

    ``scale`` t > 0 (P(z) proportional to e^{-|z|/t}), ``sensitivity`` the integer L1 sensitivity
    under ``neighbouring`` (1 <= sensitivity <= :data:`MAX_SENSITIVITY`); ``epsilon =
    sensitivity/scale``. The sampler is the exact rational-scale sampler of Canonne, Kamath,
    Steinke 2020 in integer arithmetic (the float scale taken as the exact fraction it is), so
    neither the outputs nor the sampling probabilities involve a floating-point approximation.

    Curves
    ------
    rdp(alpha)        closed form of the module docstring, stable evaluation      [exact]
    zcdp()            eps^2/2 (Bun & Steinke 2016, Prop. 1.4)                      [upper bound]
    pure_epsilon()    sensitivity/scale                                             [exact]
    privacy_loss()    the finite pair with sensitivity + 1 atoms                    [exact]
                      (sensitivity >= 65: the pure-DP pair; lower end a merged pair)

    ``scale = 0`` (no noise) is a non-private release (:meth:`non_private`): every curve is
    ``inf``, ``sample`` returns the value itself.
    """

    scale: float
    sensitivity: int = 1
    neighbouring: str = "add_remove"

    def __post_init__(self):
        object.__setattr__(self, "scale", check_nonnegative("scale", self.scale))
        object.__setattr__(self, "sensitivity", check_integer_sensitivity("sensitivity", self.sensitivity, maximum=MAX_SENSITIVITY))
        check_neighbouring("neighbouring", self.neighbouring)

    def non_private(self) -> bool:
        """No noise (scale = 0): the output is the query value."""
        return self.scale == 0.0

    @property
    def epsilon(self) -> float:
        """sensitivity / scale (inf when it overflows)."""
        return _ratio(float(self.sensitivity), self.scale)

    @property
    def _unit_eps(self) -> float:
        return _ratio(1.0, self.scale)

    def rdp(self, orders) -> np.ndarray:
        if self.non_private():
            return nonprivate_rdp(orders)
        orders = check_orders("orders", orders)
        if not math.isfinite(self.epsilon):
            return np.full(orders.shape, math.inf)
        up = round_up(discrete_laplace_rdp(self._unit_eps, self.sensitivity, orders), _RDP_ULPS)
        return np.minimum(up, self.pure_epsilon())  # D_alpha <= D_inf = Delta eps

    def zcdp(self) -> float:
        """rho = eps^2/2 (pure DP implies zCDP, Bun & Steinke 2016, Prop. 1.4); inf on overflow."""
        eps = self.epsilon
        if not math.isfinite(eps) or eps > 1e154:
            return math.inf
        return round_up(eps * eps / 2.0)

    def has_zcdp_guarantee(self) -> bool:
        return not self.non_private()  # pure DP for every scale > 0

    def pure_epsilon(self) -> float:
        return round_up(self.epsilon) if math.isfinite(self.epsilon) else math.inf

    def privacy_loss(self) -> PrivacyLoss:
        """The exact finite pair (module docstring), symmetric, attained by the mechanism itself
        (scale = 0: the non-private pair)."""
        if self.non_private():
            return nonprivate_loss()
        eps = self._unit_eps
        if not self.epsilon <= _EPS_PAIR_MAX:
            # losses beyond 1e150 (their squares overflow the pair's moments): upper end the
            # non-private pair; lower end Laplace(Delta eps), whose curve 1 - e^{(e - Delta eps)/2}
            # lies below the atom 1 - e^{e - Delta eps} of mass 1/(1 + r) = 1 (r = e^{-eps} = 0)
            low = LaplacePair(min(self.epsilon, 1e300))
            return PrivacyLoss.symmetric_pair(NonPrivatePair(), [low], "nonprivate")
        m, log_p = discrete_laplace_loss_atoms(eps, self.sensitivity)
        if m.size <= EXACT_PAIR_ATOMS:
            pair = DiscretePair(eps * m, None, log_p=log_p)
            return PrivacyLoss.symmetric_pair(pair, [pair], "discrete-laplace", exact=True)
        # many atoms (the PLD's cost grows with them): upper end the pure-DP pair (randomized
        # response with Delta eps dominates every (Delta eps)-DP pair, Kairouz et al. 2015,
        # Thm. 2.1); lower end the exact pair with its interior outcomes merged into groups
        # (merging outputs is post-processing, so the merged pair is attained)
        groups = np.array_split(np.arange(1, m.size - 1), EXACT_PAIR_ATOMS - 2)
        log_q = log_p - eps * m
        lp = [log_p[0]] + [float(special.logsumexp(log_p[g])) for g in groups] + [log_p[-1]]
        lq = [log_q[0]] + [float(special.logsumexp(log_q[g])) for g in groups] + [log_q[-1]]
        merged = DiscretePair(np.subtract(lp, lq), None, log_p=lp)
        return PrivacyLoss.symmetric_pair(RandomizedResponsePair(self.epsilon), [merged], "discrete-laplace-merged")

    def likelihood_ratio_test(self):
        """On (0, sensitivity): log p(y | D)/p(y | 0) = (|y| - |y - D|)/scale (``None`` for
        scale = 0)."""
        if self.non_private():
            return None
        sens, scale = self.sensitivity, self.scale
        return 0, sens, lambda y: (np.abs(np.asarray(y, dtype=float)) - np.abs(np.asarray(y, dtype=float) - sens)) / scale

    def sample(self, value, rng: np.random.Generator, size=None):
        """``value + DLap(scale)`` draws as int64, shape ``size + value.shape``.

        ``value`` must be integer-valued with ``|value| <= 2^61``; ``scale`` at most
        :data:`MAX_SAMPLING_SCALE`. The noise comes from the exact rational-scale sampler of
        Canonne, Kamath, Steinke 2020 (:func:`dpaudit.mechanisms.discrete_gaussian.
        sample_discrete_laplace`), in integer arithmetic only. The float ``scale`` is used as the
        exact binary fraction m/2^k it represents (no rounding to a nearby rational), so the
        curves of this mechanism, computed for that same number, are exactly those of the sampler.
        """
        if self.scale > MAX_SAMPLING_SCALE:
            raise ValueError(f"scale must be at most {MAX_SAMPLING_SCALE:g} to sample in int64, got {self.scale!r}")
        v = check_integer_values("value", value, max_abs=_MAX_VALUE)
        shape = v.shape if size is None else tuple(np.atleast_1d(size)) + v.shape
        if self.non_private():
            return np.broadcast_to(v, shape).copy()
        n = int(np.prod(shape)) if shape else 1
        noise = sample_discrete_laplace(Fraction(self.scale), n, rng).reshape(shape)
        return v + noise

    def describe(self) -> str:
        return (f"DiscreteLaplace(scale={self.scale:g}, sensitivity={self.sensitivity}, "
                f"epsilon={self.epsilon:g}, {self.neighbouring})")
