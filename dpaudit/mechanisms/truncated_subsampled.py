"""The truncated Poisson-subsampled Gaussian: DP-SGD steps whose Poisson batches are cut to a
maximum size.

References
----------
The mechanism: Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha, Zhang, "Scalable DP-SGD: shuffling
vs. Poisson subsampling", NeurIPS 2024 (arXiv:2411.04205): each of the n records enters the batch
independently with probability q; a batch larger than b is replaced by a uniformly random subset
of size b; the clipped gradients (L2 norm <= C) are summed and N(0, sigma^2 I) is added. Its
accounting in "Tighter privacy analysis for truncated Poisson sampling" (arXiv:2508.15089, 2025)
is implemented by dp_accounting (``TruncatedSubsampledGaussianDpEvent``,
``from_truncated_subsampled_gaussian_mechanism``): with probability 1 - tau the step is the
Poisson-subsampled Gaussian, otherwise a replace-one subsampled Gaussian of sensitivity 2 at the
conditional inclusion probability. The theorem text of arXiv:2508.15089 was not available here,
so this module does NOT rest on it: it derives a certified bound of the same shape from first
principles (below), and the tests compare it with dp_accounting's numbers.

Derivation (add/remove neighbours D = others, D' = others + x*; |D'| = n). Let M ~ Bin(n - 1, q)
be the number of sampled other records; reveal M (revealing more can only help an adversary, so
the pair with M revealed dominates; its privacy curve is the M-mixture of the conditional
curves: delta(e) = sum_m P(M = m) delta_m(e), and for RDP e^{(alpha-1) D} = sum_m P(M = m)
e^{(alpha-1) D_m}).

* M <= b - 1 (probability 1 - tau, tau = P(M >= b)): no truncation in D or D'; the step is the
  Poisson-subsampled Gaussian with sensitivity C and rate q (Mironov, Talwar, Zhang 2019; the
  dominating pairs of Zhu, Dong, Wang 2022, Thm. 10).
* M = m >= b: in D the batch is a uniform b-subset of the m others. In D', with probability q
  x* is sampled and the batch is a uniform b-subset of m + 1 items, which contains x* with
  probability b/(m + 1). Couple: draw a uniform (b - 1)-subset S and one more other y; D's batch
  is S + y; D''s batch is S + x* with probability q_m = q b/(m + 1) and S + y otherwise. With S
  and y revealed, the pair is (A, (1 - q_m) A + q_m B) with A = N(s + g_y, sigma^2), B = N(s +
  g_x*, sigma^2), |g_x* - g_y| <= 2C: the Poisson-subsampled Gaussian with sensitivity 2C and
  rate q_m (ADD; REMOVE reversed). Its curve increases with the shift and with the rate (H_q(x)
  = int (A - x Q_q)_+ is convex in q with its least value (1 - x)_+ at q = 0), so grouping m into
  ranges [m_j, m_{j+1}) and charging each range the rate q_{m_j} is again an upper bound.

Both directions and every step's other records are adversarial; the bound is per step, so the
steps compose (adaptively) in every accountant.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from dpaudit.core.numeric import round_up
from dpaudit.core.validation import (
    check_neighbouring,
    check_nonnegative,
    check_orders,
    check_positive,
    check_probability,
)
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.gaussian import Gaussian
from dpaudit.mechanisms.loss_pairs import (
    LossPair,
    PrivacyLoss,
    SubsampledPair,
    as_float_array,
    gaussian_pairs,
    nonprivate_loss,
)
from dpaudit.mechanisms.nonprivate import NonPrivate
from dpaudit.mechanisms.subsampled import PoissonSampled

__all__ = ["TruncatedPoissonGaussian", "RevealedMixturePair", "truncation_branches", "MAX_GROUPS"]

#: most groups of the truncated branch (consecutive M values sharing the largest rate of the group)
MAX_GROUPS = 48
#: relative error allowance of a branch weight (scipy's binomial sf/cdf, checked against mpmath)
_W_REL = 1e-12
#: tail mass of M beyond which the last group is extended to n - 1
_TAIL = 1e-30


class RevealedMixturePair(LossPair):
    """The pair sum_k w_k (P_k, Q_k) with the component k revealed (disjoint supports): its curve
    is sum_k w_k delta_k(e) (the weights each charged a relative error of 1e-12)."""

    def __init__(self, pairs, weights):
        self.pairs = list(pairs)
        self.w = np.asarray(weights, dtype=float)
        self.inf_mass = float(np.sum(self.w * np.array([p.inf_mass for p in self.pairs])))
        self.minf_mass = float(np.sum(self.w * np.array([p.minf_mass for p in self.pairs])))
        self.continuous = any(p.continuous for p in self.pairs)
        self.has_finite = any(p.has_finite for p in self.pairs)
        sup = [p.support for p in self.pairs if p.has_finite]
        self.support = (min(s[0] for s in sup), max(s[1] for s in sup)) if sup else (0.0, 0.0)
        self.scale = min(p.scale for p in self.pairs)

    def delta(self, e):
        e = as_float_array(e)
        val = np.zeros(e.shape)
        err = np.zeros(e.shape)
        for w, p in zip(self.w, self.pairs):
            v, r = p.delta(e)
            val = val + w * v
            err = err + w * r + _W_REL * w * v
        return np.minimum(val, 1.0), err

    def q_sf(self, e):
        e = as_float_array(e)
        return np.minimum(sum(w * p.q_sf(e) for w, p in zip(self.w, self.pairs)), 1.0)

    def log_q_sf(self, e):
        e = as_float_array(e)
        parts = np.array([math.log(w) + p.log_q_sf(e) for w, p in zip(self.w, self.pairs)])
        return np.minimum(special.logsumexp(parts, axis=0), 0.0)

    def log_p_sf(self, e):
        e = as_float_array(e)
        parts = np.array([math.log(w) + p.log_p_sf(e) for w, p in zip(self.w, self.pairs)])
        return np.minimum(special.logsumexp(parts, axis=0), 0.0)

    def reversed(self):
        return RevealedMixturePair([p.reversed() for p in self.pairs], self.w)

    def atoms(self):
        parts = [p.atoms() for p in self.pairs]
        losses = np.concatenate([a[0] for a in parts])
        qm = np.concatenate([w * a[1] for w, a in zip(self.w, parts)])
        pm = np.concatenate([w * a[2] for w, a in zip(self.w, parts)])
        return losses, qm, pm

    def ranges(self, tail):
        rs = [p.ranges(tail) for p in self.pairs if p.has_finite]
        if not rs:
            return (0.0, 0.0), (0.0, 0.0)
        return ((min(r[0][0] for r in rs), max(r[0][1] for r in rs)),
                (min(r[1][0] for r in rs), max(r[1][1] for r in rs)))

    def log_chi2(self):
        vals = [math.log(w) + p.log_chi2() for w, p in zip(self.w, self.pairs)]
        return float(special.logsumexp(vals))


def truncation_branches(n: int, q: float, b: int) -> list[tuple[float, float, float]]:
    """[(weight, rate, sensitivity factor)]: (1 - tau, q, 1) and the truncated groups (P(M in
    [m_j, m_{j+1})), q b/(m_j + 1), 2), M ~ Bin(n - 1, q) (module docstring); zero weights dropped."""
    tau = float(stats.binom.sf(b - 1, n - 1, q)) if n - 1 >= b else 0.0
    out = []
    if 1.0 - tau > 0:
        out.append((1.0 - tau, q, 1.0))
    if tau <= 0.0:
        return out
    # group edges from b up: geometric steps, at most MAX_GROUPS groups over the bulk of M
    top = int(stats.binom.isf(_TAIL, n - 1, q)) + 1 if tau > _TAIL else b + 1
    top = min(max(top, b + 1), n)
    edges = np.unique(np.round(np.geomspace(b, top, MAX_GROUPS + 1)).astype(np.int64))
    edges = edges[edges >= b]
    if edges[0] != b:
        edges = np.insert(edges, 0, b)
    edges[-1] = n  # the last group runs to n - 1
    for lo, hi in zip(edges[:-1], edges[1:]):
        w = float(stats.binom.sf(lo - 1, n - 1, q) - stats.binom.sf(hi - 1, n - 1, q))
        if w > 0:
            out.append((w, q * b / (lo + 1), 2.0))
    return out


def _check_int(name: str, x, minimum: int) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer, float)) or not float(x).is_integer():
        raise ValueError(f"{name} must be an integer >= {minimum}, got {x!r}")
    if int(x) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {x!r}")
    return int(x)


@dataclass(frozen=True)
class TruncatedPoissonGaussian(Mechanism):
    """One DP-SGD step with Poisson sampling at rate ``q`` from ``dataset_size`` records, the batch
    truncated to ``max_batch_size`` (a uniform subset), clipped sum (norm ``sensitivity``) plus
    N(0, sigma^2 I). dp_accounting's ``TruncatedSubsampledGaussianDpEvent(dataset_size, q,
    max_batch_size, sigma/sensitivity)``. Add/remove neighbours.

    Curves (the M-revealed bound of the module docstring)
    ------
    rdp(alpha)      log(sum_k w_k e^{(alpha-1) D_k(alpha)})/(alpha - 1), D_k the Poisson-subsampled
                    Gaussian's exact curve at rate q_k and sensitivity C or 2C          [upper bound]
    zcdp()          the largest branch rho (1/(2 s^2) or 2/s^2, s = sigma/C)              [upper bound]
    privacy_loss()  the revealed mixture of the branches' subsampled-Gaussian pairs      [upper bound]

    ``sigma = 0`` (no noise): the record changes the output only when it is sampled (probability
    q), so the step is (0, q)-DP, the curves of a non-private release Poisson-sampled at rate q
    (:mod:`dpaudit.mechanisms.nonprivate`; exact when no truncation can happen, ``max_batch_size
    >= dataset_size``, an upper bound otherwise); RDP and zCDP ``inf``.
    """

    sigma: float
    q: float
    dataset_size: int
    max_batch_size: int
    sensitivity: float = 1.0
    neighbouring: str = "add_remove"

    def __post_init__(self):
        object.__setattr__(self, "sigma", check_nonnegative("sigma", self.sigma))
        object.__setattr__(self, "q", check_probability("q", self.q))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "dataset_size", _check_int("dataset_size", self.dataset_size, 1))
        object.__setattr__(self, "max_batch_size", _check_int("max_batch_size", self.max_batch_size, 1))
        if self.neighbouring != "add_remove":
            check_neighbouring("neighbouring", self.neighbouring)
            raise ValueError("neighbouring must be 'add_remove' (the analysis adds or removes one record)")

    def _untruncated(self) -> bool:
        return self.max_batch_size >= self.dataset_size

    def non_private(self) -> bool:
        """sigma = 0, q = 1 and no truncation: the exact clipped sum is released."""
        return self.sigma == 0.0 and self.q == 1.0 and self._untruncated()

    def subsampling(self):
        """The Gaussian step (sigma, sensitivity) run on a Poisson subsample of rate q (the
        truncation aside), as accountants without an amplification theorem compose it."""
        if self.q == 0.0:
            return None
        base = NonPrivate() if self.sigma == 0.0 else Gaussian(self.sigma, self.sensitivity)
        return (base, self.q)

    def approx_dp(self):
        """sigma = 0: (0, q) (the record matters only when sampled)."""
        if self.sigma == 0.0 and self.q > 0.0:
            return (0.0, self.q)
        return None

    def branches(self) -> list[tuple[float, float, float]]:
        """(weight, rate, sensitivity factor) of each branch (:func:`truncation_branches`)."""
        if self.q == 0.0:
            return []
        return truncation_branches(self.dataset_size, self.q, self.max_batch_size)

    def _branch_mechs(self):
        return [(w, PoissonSampled(Gaussian(self.sigma, f * self.sensitivity), r)) for w, r, f in self.branches()]

    def rdp(self, orders) -> np.ndarray:
        orders = check_orders("orders", orders)
        if self.sigma == 0.0 and self.q > 0.0:
            return np.full(orders.shape, math.inf)
        parts = self._branch_mechs()
        if not parts:
            return np.zeros(orders.shape)
        curves = np.array([m.rdp(orders) for _, m in parts])
        logw = np.log(np.array([w for w, _ in parts]) * (1.0 + _W_REL))[:, None]
        fin = np.isfinite(orders)
        lam = np.where(fin, orders - 1.0, 1.0)
        with np.errstate(over="ignore", invalid="ignore"):
            mixed = special.logsumexp(logw + lam * curves, axis=0) / lam
        out = np.where(fin, np.maximum(mixed, 0.0), np.max(curves, axis=0))
        return np.minimum(round_up(out), np.max(curves, axis=0))  # a mixture is at most its worst part

    def zcdp(self) -> float:
        if self.sigma == 0.0 and self.q > 0.0:
            return math.inf
        parts = self._branch_mechs()
        return max((m.zcdp() for _, m in parts), default=0.0)

    def has_zcdp_guarantee(self) -> bool:
        return not (self.sigma == 0.0 and self.q > 0.0)

    def privacy_loss(self) -> PrivacyLoss:
        parts = self.branches()
        if not parts:
            return PrivacyLoss.nothing()
        if self.sigma == 0.0:
            loss = nonprivate_loss()
            if self.q >= 1.0 and self._untruncated():
                return loss
            sub = loss.subsampled(self.q, self.q)
            # attained (lower end) only without truncation; with it, an upper bound only
            return sub if self._untruncated() else PrivacyLoss(sub.upper, (), sub.label)
        adds, rems, ws = [], [], []
        for w, r, f in parts:
            base, _ = gaussian_pairs(f * self.sensitivity / self.sigma)
            if r >= 1.0:
                add = rem = base
            else:
                add, rem = SubsampledPair(base, r, "add"), SubsampledPair(base, r, "remove")
            adds.append(add)
            rems.append(rem)
            ws.append(w)
        if len(ws) == 1:
            return PrivacyLoss((adds[0], rems[0]), (), "truncated-poisson-gaussian")
        return PrivacyLoss((RevealedMixturePair(adds, ws), RevealedMixturePair(rems, ws)), (),
                           "truncated-poisson-gaussian")

    def describe(self) -> str:
        return (f"TruncatedPoissonGaussian(sigma={self.sigma:g}, q={self.q:g}, n={self.dataset_size}, "
                f"max_batch_size={self.max_batch_size}, sensitivity={self.sensitivity:g})")
