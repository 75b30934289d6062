"""Dominating pairs described through their hockey-stick curves.

For a pair (P, Q) of (sub-)probability measures with privacy loss ``L = log(dP/dQ)`` (``+inf``
where only P has mass, ``-inf`` where only Q has) the hockey-stick divergence is

    delta(e) = E_P[(1 - e^{e - L})_+] = P(L > e) - e^e Q(L > e),     e real,          (1)

(Balle, Barthe, Gaboardi 2018, Thm. 1; Sommer, Meiser, Mohammadi 2019, Lemma 5). As a function
of ``x = e^e`` it is ``H(x) = int (dP - x dQ)_+``: convex, non-increasing, ``H(0) = 1``,
``H(x) >= (1 - x)_+``, with right derivative ``-Q(L > log x)``. A pair is described here by

* ``delta(e)``: the curve (1), vectorised, returned with an *absolute error bound* of its
  floating-point evaluation (the discretisation charges it in the safe direction);
* ``reversed()``: the pair (Q, P); its curve gives the left part of (1) without cancellation:
  ``H(x) - (1 - x) = E_Q[(x - e^L)_+] = x * delta_rev(-log x)``;
* ``q_sf(e) = Q(L > e)`` (the slope of H, used to bound chord gaps), the atoms of the loss,
  the masses at ``+inf`` (P) and ``-inf`` (Q), and loss ranges holding all but a tail mass.

Pairs (Sommer, Meiser, Mohammadi 2019; every base pair below is symmetric, ``reversed() is self``):

* Gaussian, mu = sensitivity/sigma: P = N(0, 1), Q = N(mu, 1), L = mu^2/2 - mu x (Balle & Wang
  2018, Thm. 8 gives (1) in closed form).
* Laplace, eps0 = sensitivity/scale: P = Lap(0, 1), Q = Lap(eps0, 1); (1) equals
  ``1 - exp((e - eps0)/2)`` on ``[-eps0, eps0]`` (atoms of L at +-eps0).
* Finite pairs (:class:`DiscretePair`): randomized response (the dominating pair of every
  eps-DP mechanism, Kairouz, Oh, Viswanath 2015, Thm. 2.1), the (eps, delta)-DP pair (ibid.;
  Zhu, Dong, Wang 2022, Prop. 8), the generalised randomized response of Dong, Durfee, Rogers
  2020 (Def. 4.1: the extreme eta-bounded-range pairs, one for each t in [0, eta]), and the
  non-private pair (mutually singular P, Q).
* :class:`BoundedRangePair`: the least dominating pair of *all* eta-bounded-range pairs,
  ``delta(e) = sup_t delta_t(e) = (e^{eta/2} - e^{e/2})^2 / (e^eta - 1)`` on ``[-eta, eta]``
  (see its docstring).
* Poisson subsampling with rate q (:class:`SubsampledPair`; Zhu, Dong, Wang 2022, Thm. 10):
  ADD: (A, (1-q)A + qB), REMOVE: ((1-q)A + qB, A) for a base pair (A, B). Their curves are
  scaled base curves (no mixture cancellation): with ``v = -log(1 + expm1(-e)/q)`` and
  ``w = -log(1 + expm1(e)/q)``,
  ``delta_add(e) = q e^{e - v} delta_AB(v)`` and ``delta_remove(e) = q delta_BA(-w)``.
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from dpaudit.core import special as _special
from dpaudit.core.numeric import log_expm1, softplus
from dpaudit.core.roots import bracket_up, largest_false

__all__ = [
    "LossPair",
    "GaussianPair",
    "LaplacePair",
    "DiscretePair",
    "BoundedRangePair",
    "SubsampledPair",
    "RandomizedResponsePair",
    "ApproxDPPair",
    "GeneralizedRRPair",
    "NonPrivatePair",
    "MU_MAX",
    "as_float_array",
    "BR_LOWER_FRACTIONS",
    "PrivacyLoss",
    "gaussian_pairs",
    "gaussian_loss",
    "bounded_range_candidates",
    "statement_loss",
    "nonprivate_loss",
]

_U = float(np.finfo(float).eps)
#: relative error allowance of a closed-form evaluation (a few ulps per elementary operation)
_REL = 64.0 * _U
#: absolute floor of every error bound (underflowed values)
_ABS = 1e-300
#: largest Gaussian mu represented as a Gaussian pair (mu^2/2 stays far below the float range)
MU_MAX = 1e150

_LOG2 = math.log(2.0)


def as_float_array(e) -> np.ndarray:
    """``e`` as a float array of at least one dimension."""
    return np.atleast_1d(np.asarray(e, dtype=float))


class LossPair(abc.ABC):
    """A pair (P, Q) described through its hockey-stick curve (see the module docstring)."""

    #: P(L = +inf)
    inf_mass: float = 0.0
    #: Q(L = -inf)
    minf_mass: float = 0.0
    #: (inf, sup) of the finite losses
    support: tuple[float, float] = (-math.inf, math.inf)
    #: a rough scale of the per-step loss (its spread), used to choose the grid
    scale: float = 1.0
    #: whether L has finite values with positive mass
    has_finite: bool = True
    #: whether L has a continuous part (False: finitely many atoms)
    continuous: bool = True

    @abc.abstractmethod
    def delta(self, e) -> tuple[np.ndarray, np.ndarray]:
        """(curve (1) at each real ``e``, absolute bound on its evaluation error)."""

    @abc.abstractmethod
    def q_sf(self, e) -> np.ndarray:
        """Q(L > e) (absolute accuracy a few ulps)."""

    @abc.abstractmethod
    def reversed(self) -> LossPair:
        """The pair (Q, P)."""

    def atoms(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(losses, Q-masses, P-masses) of the atoms of the finite part of L (none by default)."""
        return np.zeros(0), np.zeros(0), np.zeros(0)

    def log_q_sf(self, e) -> np.ndarray:
        """log Q(L > e) (exact in the far tails, where Q(L > e) itself underflows)."""
        with np.errstate(divide="ignore"):
            return np.log(self.q_sf(e))

    def log_p_sf(self, e) -> np.ndarray:
        """log P(L > e) = log(delta(e) + e^e Q(L > e))."""
        e = as_float_array(e)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.logaddexp(np.log(self.delta(e)[0]), e + self.log_q_sf(e))

    def p_sf(self, e) -> np.ndarray:
        """P(L > e) = delta(e) + e^e Q(L > e)."""
        e = as_float_array(e)
        with np.errstate(over="ignore", invalid="ignore"):
            out = self.delta(e)[0] + np.exp(e) * self.q_sf(e)
        return np.minimum(np.nan_to_num(out, nan=1.0, posinf=1.0), 1.0)

    @abc.abstractmethod
    def ranges(self, tail: float) -> tuple[tuple[float, float], tuple[float, float]]:
        """((p_lo, p_hi), (q_lo, q_hi)): finite losses such that P(L < p_lo), P(p_hi < L < inf),
        Q(-inf < L < q_lo), Q(L > q_hi) are each at most ``tail`` (for tightness only: every
        discretisation is valid whatever the range)."""

    def loss_range(self, tail: float) -> tuple[float, float]:
        """[lo, hi] with Q(-inf < L < lo) <= tail and P(hi < L < inf) <= tail."""
        (p_lo, p_hi), (q_lo, q_hi) = self.ranges(tail)
        return q_lo, p_hi

    def log_chi2(self) -> float:
        """log of chi^2(Q || P) = E_Q[e^{-L}] - 1 (an upper estimate is enough; grid choice)."""
        return math.inf

    def q_deficit(self) -> float:
        """1 - Q(L > -inf), where the slope of H at 0 is Q(L > -inf) (a lower estimate is safe)."""
        return self.minf_mass * (1.0 - 4.0 * _U)

    def epsilon(self, delta: float) -> float:
        """The smallest e >= 0 with curve (1) at most ``delta`` (``inf`` when the mass at +inf
        exceeds it), by a bracketed bisection (:mod:`dpaudit.core.roots`: doubling from 1, then
        halving to adjacent floats, at most 1100 steps each); returned from below (the largest e
        found where the curve exceeds delta), so it never exceeds the pair's epsilon(delta) by
        more than the evaluation error of (1)."""
        delta = float(delta)
        if not 0.0 <= delta < 1.0:
            raise ValueError(f"delta must be in [0, 1), got {delta}")

        def within(e: float) -> bool:
            return not float(self.delta(e)[0][0]) > delta

        if within(0.0):
            return 0.0
        if self.inf_mass > delta:
            return math.inf
        br = bracket_up(within, 0.0, 1.0, limit=2e300, max_steps=1100)
        if br is None:
            return math.inf
        return largest_false(within, br.lo, br.hi, midpoint="arithmetic", max_iter=1100)


# ------------------------------------------------------------------------------------------------
# Gaussian


def gaussian_delta(mu: float, e) -> tuple[np.ndarray, np.ndarray]:
    """Curve (1) of the Gaussian pair with mean difference ``mu`` (Balle & Wang 2018, Thm. 8):
    ``delta(e) = Phi(z) - e^e Phi(z - mu)``, ``z = mu/2 - e/mu``, with an absolute error bound:
    :func:`dpaudit.core.special.gaussian_delta` (the one home of the Gaussian curve: a closed
    form without destructive cancellation intersected with a certified log-space bracket)."""
    return _special.gaussian_delta(mu, e)


class GaussianPair(LossPair):
    """P = N(0, 1), Q = N(mu, 1): L = mu^2/2 - mu x; L ~ N(mu^2/2, mu^2) under P and
    N(-mu^2/2, mu^2) under Q. Symmetric."""

    def __init__(self, mu: float):
        mu = float(mu)
        if not 0.0 < mu <= MU_MAX:
            raise ValueError(f"mu must be in (0, {MU_MAX:g}], got {mu}")
        self.mu = mu
        self.scale = mu

    def delta(self, e):
        return gaussian_delta(self.mu, e)

    def q_sf(self, e):
        return special.ndtr(-0.5 * self.mu - as_float_array(e) / self.mu)

    def log_q_sf(self, e):
        return special.log_ndtr(-0.5 * self.mu - as_float_array(e) / self.mu)

    def log_p_sf(self, e):
        return special.log_ndtr(0.5 * self.mu - as_float_array(e) / self.mu)

    def reversed(self):
        return self

    def ranges(self, tail):
        zt = float(-special.ndtri(max(tail, 1e-300)))
        c, w = 0.5 * self.mu * self.mu, self.mu * zt
        return (c - w, c + w), (-c - w, -c + w)

    def log_chi2(self):
        return log_expm1(self.mu * self.mu)


# ------------------------------------------------------------------------------------------------
# Laplace


class LaplacePair(LossPair):
    """P = Lap(0, 1), Q = Lap(eps0, 1): L(x) = |x - eps0| - |x| in [-eps0, eps0], with atoms
    P(L = eps0) = 1/2 (x <= 0) and P(L = -eps0) = e^{-eps0}/2 (x >= eps0). For e in
    [-eps0, eps0): L > e iff x < (eps0 - e)/2, so Q(L > e) = e^{-(eps0 + e)/2}/2 and
    delta(e) = 1 - e^{(e - eps0)/2}. Symmetric."""

    def __init__(self, eps0: float):
        eps0 = float(eps0)
        if not 0.0 < eps0 < math.inf:
            raise ValueError(f"eps0 must be finite and > 0, got {eps0}")
        self.eps0 = eps0
        self.support = (-eps0, eps0)
        self.scale = eps0

    def delta(self, e):
        e = as_float_array(e)
        a = self.eps0
        with np.errstate(over="ignore"):
            val = np.where(e < -a, -np.expm1(e), np.where(e < a, -np.expm1(0.5 * (e - a)), 0.0))
        return val, _REL * val + _ABS

    def q_sf(self, e):
        e = as_float_array(e)
        a = self.eps0
        with np.errstate(over="ignore", under="ignore"):
            return np.where(e < -a, 1.0, np.where(e < a, 0.5 * np.exp(-0.5 * (a + e)), 0.0))

    def log_q_sf(self, e):
        e = as_float_array(e)
        a = self.eps0
        return np.where(e < -a, 0.0, np.where(e < a, -0.5 * (a + e) - _LOG2, -np.inf))

    def log_p_sf(self, e):
        e = as_float_array(e)
        a = self.eps0
        with np.errstate(over="ignore"):
            mid = np.log1p(-0.5 * np.exp(-0.5 * (a - np.clip(e, -a, a))))
        return np.where(e < -a, 0.0, np.where(e < a, mid, -np.inf))

    def reversed(self):
        return self

    def atoms(self):
        a = self.eps0
        small = 0.5 * math.exp(-a) if a < 745 else 0.0
        return np.array([-a, a]), np.array([0.5, small]), np.array([small, 0.5])

    def ranges(self, tail):
        return self.support, self.support

    def log_chi2(self):
        # E_Q[e^{-L}] <= e^{eps0}
        return log_expm1(self.eps0)

    def epsilon(self, delta: float) -> float:
        """Closed form: delta(e) = 1 - e^{(e - eps0)/2} on [0, eps0] gives
        epsilon(delta) = max(0, eps0 + 2 log(1 - delta))."""
        return max(0.0, self.eps0 + 2.0 * math.log1p(-float(delta)))


# ------------------------------------------------------------------------------------------------
# finite pairs


class DiscretePair(LossPair):
    """A pair with finitely many outcomes: finite losses ``losses`` with P-masses ``p``, plus
    P(L = +inf) = ``inf_mass`` and Q(L = -inf) = ``minf_mass``. Q-masses are p e^{-l}."""

    continuous = False

    def __init__(self, losses, p, inf_mass: float = 0.0, minf_mass: float = 0.0, log_p=None):
        losses = np.asarray(losses, dtype=float)
        order = np.argsort(losses)
        self.losses = losses[order]
        if log_p is not None:
            self.log_p = np.asarray(log_p, dtype=float)[order]
        else:
            with np.errstate(divide="ignore"):
                self.log_p = np.log(np.asarray(p, dtype=float)[order])
        keep = np.isfinite(self.log_p)
        self.losses, self.log_p = self.losses[keep], self.log_p[keep]
        self.p = np.exp(self.log_p)
        with np.errstate(under="ignore"):
            self.q = np.exp(self.log_p - self.losses)
        self.inf_mass = float(inf_mass)
        self.minf_mass = float(minf_mass)
        if self.losses.size:
            self.support = (float(self.losses[0]), float(self.losses[-1]))
            with np.errstate(over="ignore", invalid="ignore"):  # losses near 1e308: the spread is inf
                mean = float(np.dot(self.p, self.losses)) / max(float(np.sum(self.p)), 1e-300)
                var = float(np.dot(self.p, (self.losses - mean) ** 2)) / max(float(np.sum(self.p)), 1e-300)
            self.scale = math.sqrt(var) if var > 0 else math.inf  # one point: nothing to resolve
        else:
            self.support = (0.0, 0.0)
            self.scale = math.inf
            self.has_finite = False

    def delta(self, e):
        e = as_float_array(e)
        val = np.full(e.shape, self.inf_mass)
        for lp, loss in zip(self.log_p, self.losses):
            with np.errstate(over="ignore", under="ignore"):
                term = np.exp(lp) * -np.expm1(np.minimum(e - loss, 0.0))
            val = val + np.where(e < loss, term, 0.0)
        val = np.minimum(val, 1.0)
        return val, _REL * (self.losses.size + 1) * val + _ABS

    def q_sf(self, e):
        e = as_float_array(e)
        out = np.zeros(e.shape)
        for qm, loss in zip(self.q, self.losses):
            out = out + np.where(e < loss, qm, 0.0)
        return np.minimum(out, 1.0)

    def log_q_sf(self, e):
        e = as_float_array(e)
        out = np.full(e.shape, -np.inf)
        for lp, loss in zip(self.log_p, self.losses):
            out = np.where(e < loss, np.logaddexp(out, lp - loss), out)
        return np.minimum(out, 0.0)

    def log_p_sf(self, e):
        e = as_float_array(e)
        with np.errstate(divide="ignore"):
            out = np.full(e.shape, math.log(self.inf_mass) if self.inf_mass > 0 else -np.inf)
        for lp, loss in zip(self.log_p, self.losses):
            out = np.where(e < loss, np.logaddexp(out, lp), out)
        return np.minimum(out, 0.0)

    def reversed(self):
        with np.errstate(under="ignore"):
            log_q = self.log_p - self.losses
        return DiscretePair(-self.losses, None, inf_mass=self.minf_mass, minf_mass=self.inf_mass, log_p=log_q)

    def atoms(self):
        return self.losses.copy(), self.q.copy(), self.p.copy()

    def ranges(self, tail):
        return self.support, self.support

    def log_chi2(self):
        if self.minf_mass > 0 or self.losses.size == 0:
            return math.inf
        # E_Q[e^{-L}] = sum q e^{-l} = sum p e^{-2l}
        lse = float(special.logsumexp(self.log_p - 2.0 * self.losses))
        return log_expm1(lse) if lse > 0 else -math.inf


def ApproxDPPair(eps: float, delta: float = 0.0) -> DiscretePair:
    """The (eps, delta)-DP dominating pair: P = (delta, (1-delta) e^eps/(1+e^eps),
    (1-delta)/(1+e^eps)) on losses (+inf, eps, -eps), Q mirrored (atom delta at -inf)."""
    eps = float(eps)
    l1m = math.log1p(-delta) if delta > 0 else 0.0
    if eps == 0.0:
        return DiscretePair([0.0], None, inf_mass=delta, minf_mass=delta, log_p=[l1m])
    return DiscretePair([eps, -eps], None, inf_mass=delta, minf_mass=delta,
                        log_p=[l1m - float(softplus(np.asarray(-eps))), l1m - float(softplus(np.asarray(eps)))])


def RandomizedResponsePair(eps: float) -> DiscretePair:
    """The pure eps-DP dominating pair (randomized response with P[truth] = e^eps/(1+e^eps))."""
    return ApproxDPPair(eps, 0.0)


def GeneralizedRRPair(eta: float, t: float) -> DiscretePair:
    """Generalised randomized response of Dong, Durfee, Rogers 2020 (Def. 4.1): losses t and
    t - eta with P-masses p = (e^eta - e^t)/(e^eta - 1) and 1 - p = (e^t - 1)/(e^eta - 1)
    (so that the Q-masses p e^{-t} + (1-p) e^{eta-t} sum to one); 0 <= t <= eta. It is the
    output of a two-candidate exponential mechanism whose score gap moves by the full
    sensitivity (an eta-bounded-range pair with losses at both ends of [t - eta, t])."""
    eta, t = float(eta), float(t)
    if not 0.0 <= t <= eta:
        raise ValueError(f"t must be in [0, eta], got {t}")
    if t == 0.0 or t == eta:
        return DiscretePair([0.0], [1.0])
    # log p = log(1 - e^{t - eta}) - log(1 - e^{-eta}); log(1 - p) = log(expm1(t)) - log(expm1(eta))
    lp = math.log(-math.expm1(t - eta)) - math.log(-math.expm1(-eta))
    l1p = log_expm1(t) - log_expm1(eta)
    return DiscretePair([t, t - eta], None, log_p=[lp, l1p])


def NonPrivatePair() -> DiscretePair:
    """Mutually singular P and Q: the output reveals the record (delta(e) = 1 for every e)."""
    return DiscretePair([], [], inf_mass=1.0, minf_mass=1.0)


# ------------------------------------------------------------------------------------------------
# bounded range


class BoundedRangePair(LossPair):
    """The least dominating pair of the eta-bounded-range pairs.

    An eta-BR pair (losses in [t - eta, t] for some t in [0, eta]) is a post-processing of the
    generalised randomized response GRR_t (Dong, Durfee, Rogers 2020, Lemma 4.? "reduction to
    generalized randomized response", their Sec. 3.1), whose curve is
    ``delta_t(e) = p_t (1 - e^{e - t})`` on [t - eta, t), ``1 - e^e`` below, 0 above. In
    ``u = e^t``, ``delta_t(e) = (e^eta - u)(1 - e^e/u)/(e^eta - 1)`` is maximised at
    ``u = e^{(eta + e)/2}``, which lies in the admissible range exactly for |e| <= eta; so

        delta(e) = sup_t delta_t(e) = (e^{eta/2} - e^{e/2})^2 / (e^eta - 1)
                 = expm1((e - eta)/2)^2 / (-expm1(-eta)),          |e| <= eta,

    (``1 - e^e`` below -eta, 0 above eta). A pointwise supremum of hockey-stick curves is
    convex in e^e, equals 1 at e = -inf and dominates each of them, so it is the curve of a pair
    dominating every eta-BR pair (Zhu, Dong, Wang 2022, Sec. 4: any such curve is the curve of
    a pair). Its loss has a density on [-eta, eta]: Q(L > e) = expm1((eta - e)/2)/expm1(eta),
    P(L <= e) = expm1((eta + e)/2)/expm1(eta). Symmetric.

    It is *not* attained by a single BR mechanism (the supremum is over t), so it serves upper
    bounds only; lower bounds use the :func:`GeneralizedRRPair` family.
    """

    def __init__(self, eta: float):
        eta = float(eta)
        if not 0.0 < eta < math.inf:
            raise ValueError(f"eta must be finite and > 0, got {eta}")
        self.eta = eta
        self.support = (-eta, eta)
        self.scale = eta / math.sqrt(12.0)

    def delta(self, e):
        e = as_float_array(e)
        a = self.eta
        with np.errstate(over="ignore", under="ignore"):
            mid = np.expm1(0.5 * (np.clip(e, -a, a) - a)) ** 2 / -math.expm1(-a)
            val = np.where(e < -a, -np.expm1(e), np.where(e < a, mid, 0.0))
        val = np.clip(val, 0.0, 1.0)
        return val, _REL * val + _ABS

    def q_sf(self, e):
        e = as_float_array(e)
        a = self.eta
        with np.errstate(over="ignore", under="ignore"):
            if a > 700:
                mid = np.exp(0.5 * (-np.clip(e, -a, a) - a)) * -np.expm1(-0.5 * (a - np.clip(e, -a, a)))
            else:
                mid = np.expm1(0.5 * (a - np.clip(e, -a, a))) / math.expm1(a)
        return np.where(e < -a, 1.0, np.where(e < a, mid, 0.0))

    def log_q_sf(self, e):
        # Q(L > e) = expm1((eta - e)/2) / expm1(eta)
        e = as_float_array(e)
        a = self.eta
        x = 0.5 * (a - np.clip(e, -a, a))
        lx = log_expm1(x)  # (-inf at x = 0)
        return np.where(e < -a, 0.0, np.where(e < a, lx - log_expm1(a), -np.inf))

    def log_p_sf(self, e):
        # P(L > e) = e^{(eta + e)/2} Q(L > e)
        e = as_float_array(e)
        a = self.eta
        return np.where(e < -a, 0.0, np.where(e < a, 0.5 * (a + np.clip(e, -a, a)) + self.log_q_sf(e), -np.inf))

    def reversed(self):
        return self

    def ranges(self, tail):
        return self.support, self.support

    def log_chi2(self):
        return log_expm1(self.eta)


# ------------------------------------------------------------------------------------------------
# Poisson subsampling


def _u_of_l(q: float, l) -> np.ndarray:
    """log(1 - q + q e^{-l}) for real or infinite l (the REMOVE loss; ADD is its negative)."""
    l = as_float_array(l)
    with np.errstate(over="ignore", invalid="ignore"):
        small = np.abs(l) < 1.0
        a = np.log1p(q * np.expm1(-np.where(small, l, 0.0)))
        b = np.logaddexp(math.log1p(-q), math.log(q) - l)
    return np.where(small, a, b)


def _log_qpem1(q: float, x: np.ndarray) -> np.ndarray:
    """log(1 + expm1(x)/q) = log(q + expm1(x)) - log(q) for x > log(1-q), overflow-safe for any
    q in (0, 1) (also q near the smallest float)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        big = x > 30.0
        t = np.expm1(np.where(big, 0.0, x))
        small = np.abs(t) < q
        v_small = np.log1p(np.where(small, t, 0.0) / q)
        v_mid = np.log(q + t) - math.log(q)
        v_big = x - math.log(q) + np.log1p((q - 1.0) * np.exp(-np.where(big, x, 0.0)))
    return np.where(big, v_big, np.where(small, v_small, v_mid))


class SubsampledPair(LossPair):
    """Poisson subsampling with rate ``0 < q < 1`` of a base pair (A, B) with loss
    l = log(dA/dB) (Zhu, Dong, Wang 2022, "Optimal accounting of differential privacy via
    characteristic function", AISTATS 2022, Thm. 10):

    * ADD: P = A, Q = (1-q)A + qB, L = -log(1 - q + q e^{-l}), increasing in l;
      L > e iff l > v(e) = -log1p(expm1(-e)/q) (e < -log(1-q)), and
      delta(e) = q e^{e - v} delta_AB(v);
    * REMOVE: P = (1-q)A + qB, Q = A, L = log(1 - q + q e^{-l}), decreasing in l;
      L > e iff l < w(e) = -log1p(expm1(e)/q) (always when e <= log(1-q)), and
      delta(e) = q delta_BA(-w) (for e <= log(1 - q), below every finite loss: 1 - e^e).

    Both identities follow from (1) by substituting the thresholds (1 - (1-q)e^e = q e^{e-v},
    e^e - 1 + q = q e^{-w}). The reversed ADD pair is the REMOVE pair of the same base.
    """

    def __init__(self, base: LossPair, q: float, direction: str):
        if direction not in ("add", "remove"):
            raise ValueError("direction must be 'add' or 'remove'")
        q = float(q)
        if not 0.0 < q < 1.0:
            raise ValueError(f"q must be in (0, 1), got {q}")
        self.base, self.q, self.direction = base, q, direction
        self.continuous = base.continuous
        self._lq = math.log(q)
        self._l1q = math.log1p(-q)
        lo, hi = base.support
        pts = [lo, hi] if base.has_finite else []
        f = lambda l: float(_u_of_l(q, l)[0])  # noqa: E731
        if direction == "add":
            pts = [-f(l) for l in pts] + ([-self._l1q] if base.inf_mass > 0 else [])
            self.inf_mass = 0.0
            self.minf_mass = q * base.minf_mass
        else:
            pts = [f(l) for l in pts] + ([self._l1q] if base.inf_mass > 0 else [])
            self.inf_mass = q * base.minf_mass
            self.minf_mass = 0.0
        self.has_finite = bool(pts)
        self.support = (min(pts), max(pts)) if pts else (0.0, 0.0)
        lc = 2.0 * self._lq + base.log_chi2()
        width = self.support[1] - self.support[0]
        if width == 0.0:  # one point: nothing to resolve
            self.scale = math.inf
        else:
            self.scale = max(min(math.exp(0.5 * min(lc, 1400.0)), width if math.isfinite(width) else math.inf,
                                 base.scale), 1e-300)

    # thresholds -------------------------------------------------------------------------------
    def _v(self, e):
        """(v(e), ok): ADD threshold, defined for e < -log(1-q)."""
        ok = e < -self._l1q
        return -_log_qpem1(self.q, np.where(ok, -e, 0.0)), ok

    def _w(self, e):
        """(w(e), ok): REMOVE threshold, defined for e > log(1-q)."""
        ok = e > self._l1q
        return -_log_qpem1(self.q, np.where(ok, e, 0.0)), ok

    def delta(self, e):
        e = as_float_array(e)
        q, b = self.q, self.base
        if self.direction == "add":
            v, ok = self._v(e)
            dv, ev = b.delta(np.where(ok, v, 0.0))
            with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                f = np.exp(np.minimum(self._lq + e - v, 700.0))
                val = np.where(ok, f * dv, 0.0)
                err = np.where(ok & (dv > 0), f * ev + _REL * (1.0 + np.abs(e) + np.abs(v)) * f * dv, f * ev)
        else:
            w, ok = self._w(e)
            dw, ew = b.reversed().delta(np.where(ok, -w, 0.0))
            # below every finite loss (e <= log(1-q), where A's +inf atom lands): 1 - e^e
            low = -np.expm1(np.minimum(e, 0.0))
            val = np.where(ok, q * dw, low)
            with np.errstate(invalid="ignore", over="ignore"):
                err = np.where(ok, q * ew + np.where(dw > 0, _REL * (1.0 + np.abs(w)) * q * dw, 0.0), _REL * low)
        val = np.clip(np.nan_to_num(val, nan=0.0), 0.0, 1.0)
        return val, np.nan_to_num(err, nan=1.0) + _ABS

    def q_sf(self, e):
        e = as_float_array(e)
        q, b = self.q, self.base
        if self.direction == "add":
            v, ok = self._v(e)
            vv = np.where(ok, v, 0.0)
            out = (1.0 - q) * b.p_sf(vv) + q * b.q_sf(vv)
            return np.where(ok, np.minimum(out, 1.0), 0.0)
        w, ok = self._w(e)
        # Q(L > e) = A(l < w) = (reversed base's Q)(-l > -w)
        a_lt = b.reversed().q_sf(np.where(ok, -w, 0.0))
        return np.where(ok, a_lt, 1.0)

    def log_q_sf(self, e):
        e = as_float_array(e)
        b = self.base
        if self.direction == "add":
            v, ok = self._v(e)
            vv = np.where(ok, v, 0.0)
            out = np.logaddexp(self._l1q + b.log_p_sf(vv), self._lq + b.log_q_sf(vv))
            return np.where(ok, np.minimum(out, 0.0), -np.inf)
        w, ok = self._w(e)
        return np.where(ok, b.reversed().log_q_sf(np.where(ok, -w, 0.0)), 0.0)

    def log_p_sf(self, e):
        e = as_float_array(e)
        b = self.base
        if self.direction == "add":
            v, ok = self._v(e)
            return np.where(ok, b.log_p_sf(np.where(ok, v, 0.0)), -np.inf)
        w, ok = self._w(e)
        rb = b.reversed()
        ww = np.where(ok, -w, 0.0)
        out = np.logaddexp(self._l1q + rb.log_q_sf(ww), self._lq + rb.log_p_sf(ww))
        return np.where(ok, np.minimum(out, 0.0), 0.0)

    def reversed(self):
        return SubsampledPair(self.base, self.q, "remove" if self.direction == "add" else "add")

    def atoms(self):
        bl, bq, bp = self.base.atoms()
        if bl.size == 0 and self.base.inf_mass == 0:
            return np.zeros(0), np.zeros(0), np.zeros(0)
        u = _u_of_l(self.q, bl) if bl.size else np.zeros(0)
        if self.direction == "add":  # P = A, Q = (1-q)A + qB
            losses, qm, pm = -u, (1.0 - self.q) * bp + self.q * bq, bp
            if self.base.inf_mass > 0:
                losses = np.append(losses, -self._l1q)
                qm = np.append(qm, (1.0 - self.q) * self.base.inf_mass)
                pm = np.append(pm, self.base.inf_mass)
        else:  # P = (1-q)A + qB, Q = A
            losses, qm, pm = u, bp, (1.0 - self.q) * bp + self.q * bq
            if self.base.inf_mass > 0:
                losses = np.append(losses, self._l1q)
                qm = np.append(qm, self.base.inf_mass)
                pm = np.append(pm, (1.0 - self.q) * self.base.inf_mass)
        return losses, qm, pm

    def ranges(self, tail):
        b = self.base
        f = lambda l: float(_u_of_l(self.q, l)[0])  # noqa: E731
        sign = -1.0 if self.direction == "add" else 1.0
        atom = [sign * self._l1q] if b.inf_mass > 0 else []  # where A's +inf atom lands
        if b.has_finite:
            (pa_lo, pa_hi), (qb_lo, qb_hi) = b.ranges(tail)
            a_pts = [sign * f(pa_lo), sign * f(pa_hi)]
            all_pts = a_pts + [sign * f(qb_lo), sign * f(qb_hi)]
        else:
            a_pts, all_pts = [], []
        a_pts, all_pts = a_pts + atom, all_pts + atom
        if not a_pts:
            return (0.0, 0.0), (0.0, 0.0)
        a_rng = (min(a_pts), max(a_pts))
        all_rng = (min(all_pts), max(all_pts))
        # ADD: P = A, Q = mixture; REMOVE: P = mixture, Q = A
        return (a_rng, all_rng) if self.direction == "add" else (all_rng, a_rng)

    def log_chi2(self):
        return 2.0 * self._lq + self.base.log_chi2()


# ------------------------------------------------------------------------------------------------
# one step of a mechanism, as the PLD accountant composes it (Mechanism.privacy_loss())

#: fractions t/eta of the generalised-randomized-response pairs tried for the lower end of an
#: exponential (bounded-range) mechanism; each is a valid lower bound (realised by a
#: two-candidate exponential mechanism), the best one is reported. Fractions near 1 serve small
#: delta: the worst pairs then put little mass on the largest losses (proofs_checks/
#: exponential_br_composition.py: eta = 1 then 2 at delta = 1e-12, lower end 2.8498 -> 2.99934,
#: the worst case lying in [2.99975, 2.99976])
BR_LOWER_FRACTIONS = (0.25, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.99, 0.999, 0.9999)


@dataclass(frozen=True)
class PrivacyLoss:
    """The privacy loss of one step of a mechanism, as its dominating pairs.

    ``upper``: (add, remove) dominating pairs of the step (upper bounds); ``None`` for a step
    that releases nothing. ``lower``: candidate (add, remove) pairs each *attained* by some
    mechanism of the class described (lower bounds: the composition of attained pairs is
    attained by a non-adaptive composition, whose curve is below the adaptive worst case);
    empty when no attained pair is known (the step is then left out of the lower end, which
    stays valid: leaving out a step is post-processing). A single candidate is used for every
    step of the composition. ``exact``: ``upper`` is the mechanism's own pair (its privacy
    profile, not only a dominating one), so ``epsilon(delta)`` of one step is exact.

    ``gaussian``: ``(sensitivity, sigma)`` of an unsampled Gaussian step (composed exactly:
    ``sensitivity/sigma`` may exceed the float range). ``gaussian_sub``: ``(sensitivity,
    sigma, q)`` of a Poisson-subsampled Gaussian step, for an analytic lower end (the REMOVE
    curve is q delta_G(log(1 + expm1(e)/q)) >= q delta_G(e - log q), delta_G decreasing).
    """

    upper: tuple[LossPair, LossPair] | None
    lower: tuple[tuple[LossPair, LossPair], ...] = ()
    label: str = ""
    exact: bool = False
    gaussian: tuple[float, float] | None = None
    gaussian_sub: tuple[float, float, float] | None = None

    @classmethod
    def nothing(cls) -> PrivacyLoss:
        """A step that releases nothing (composes as the identity)."""
        return cls(None, (), "identity")

    @classmethod
    def symmetric_pair(cls, upper: LossPair, lower=(), label: str = "", **kw) -> PrivacyLoss:
        """A step whose ADD and REMOVE pairs are the same symmetric pair (and lower candidates)."""
        return cls((upper, upper), tuple((lo, lo) for lo in lower), label, **kw)

    @property
    def releases_nothing(self) -> bool:
        return self.upper is None

    @property
    def symmetric(self) -> bool:
        """ADD and REMOVE directions are the same pairs (one direction suffices)."""
        if self.upper is None:
            return True
        return self.upper[0] is self.upper[1] and all(a is b for a, b in self.lower)

    def epsilon(self, delta: float) -> float:
        """epsilon(delta) of one step from the upper pairs (the larger of the two directions);
        exact when ``self.exact``."""
        if self.upper is None:
            return 0.0
        return max(pair.epsilon(delta) for pair in self.upper)

    def subsampled(self, q_up: float, q_lo: float) -> PrivacyLoss:
        """The step under Poisson subsampling with rate q (``q_up`` >= q >= ``q_lo``, the two
        rounded outwards; Zhu, Dong, Wang 2022, Thm. 10), both directions. Exact when the step
        is and the rate is known exactly (``q_up == q_lo``): the subsampled pairs are then the
        sampled mechanism's own output laws on the worst neighbours."""
        if q_up == 0.0 or self.upper is None:
            return PrivacyLoss.nothing()
        if q_lo >= 1.0 and q_up >= 1.0:
            return self
        upper = _subsample(self.upper[0], q_up)
        lower = tuple(_subsample(lo[0], q_lo) for lo in self.lower) if q_lo > 0 else ()
        gsub = None
        if self.gaussian is not None and q_lo > 0:
            gsub = (float(self.gaussian[0]), float(self.gaussian[1]), q_lo)
        return PrivacyLoss(upper, lower, f"poisson-{self.label}", exact=self.exact and q_up == q_lo,
                           gaussian_sub=gsub)


def _subsample(pair: LossPair, q: float) -> tuple[LossPair, LossPair]:
    if q >= 1.0:
        return (pair, pair)
    return (SubsampledPair(pair, q, "add"), SubsampledPair(pair, q, "remove"))


def gaussian_pairs(mu: float) -> tuple[LossPair, LossPair]:
    """(upper, lower) base pairs of a Gaussian with mean difference mu (mu may be inf): beyond
    MU_MAX the upper end uses the non-private pair (which dominates every pair) and the lower
    end the Gaussian with mu = MU_MAX (dominated by the true one: GDP curves increase in mu)."""
    if mu > MU_MAX:
        return NonPrivatePair(), GaussianPair(MU_MAX)
    g = GaussianPair(mu)
    return g, g


def gaussian_loss(sensitivity: float, sigma: float) -> PrivacyLoss:
    """The step of a Gaussian with L2 sensitivity ``sensitivity`` and noise ``sigma``."""
    up, lo = gaussian_pairs(sensitivity / sigma)
    return PrivacyLoss.symmetric_pair(up, [lo], "gaussian", exact=up is lo,
                                      gaussian=(float(sensitivity), float(sigma)))


def bounded_range_candidates(eta: float) -> list[LossPair]:
    """Lower candidates of an eta-bounded-range mechanism (generalised randomized response)."""
    return [GeneralizedRRPair(eta, f * eta) for f in BR_LOWER_FRACTIONS]


def nonprivate_loss() -> PrivacyLoss:
    """The step of a release with no privacy (:meth:`Mechanism.non_private`): the non-private
    pair in both directions, upper and lower (attained by the release itself), exact."""
    pair = NonPrivatePair()
    return PrivacyLoss.symmetric_pair(pair, [pair], "nonprivate", exact=True)


def statement_loss(pure_epsilon: float, approx_dp) -> PrivacyLoss | None:
    """The step of a mechanism known only by its pure-DP epsilon or one (epsilon, delta)
    statement (upper end only: no attained pair is known); ``None`` without either."""
    eps = float(pure_epsilon)
    if math.isfinite(eps):
        if eps == 0.0:
            return PrivacyLoss.nothing()
        return PrivacyLoss.symmetric_pair(RandomizedResponsePair(eps), (), "pure-statement")
    if approx_dp is not None:
        e, dl = float(approx_dp[0]), float(approx_dp[1])
        if e == 0.0 and dl == 0.0:
            return PrivacyLoss.nothing()
        return PrivacyLoss.symmetric_pair(ApproxDPPair(max(e, 0.0), dl), (), "approx-statement")
    return None
