"""Single-epoch tree aggregation: the Gaussian noise of DP-FTRL's prefix sums.

References
----------
Kairouz, McMahan, Song, Thakkar, Thakurta, Xu, "Practical and private (deep) learning without
sampling or shuffling", ICML 2021 (arXiv:2103.00039), Sec. 3 and Appendix D (restarts; every
record used at most once across all trees); the tree aggregation protocol of Dwork, Naor,
Pitassi, Rothblum 2010 and Chan, Shi, Song 2011. The peers' accountant of the same event:
dp_accounting ``SingleEpochTreeAggregationDpEvent`` (``_compute_rdp_single_epoch_tree_aggregation``,
the same as TF-Privacy's ``compute_rdp_tree_restart``).

The protocol. The steps t = 1..T of one tree contribute vectors x_t (L2 norm of one record's
contribution at most ``sensitivity``). Every *completed* dyadic node [j 2^k + 1, (j + 1) 2^k]
((j + 1) 2^k <= T) holds the sum of its steps plus fresh N(0, sigma^2 I) noise; the prefix sum
at t is the sum of the nodes of the binary decomposition of t (bit k of t set: the node of
level k with j = (t >> k) - 1), so the released prefix sums are post-processing of the nodes.

Sensitivity. A record used at step s lies in the completed nodes [j 2^k + 1, (j + 1) 2^k] with
j = floor((s - 1)/2^k) and (j + 1) 2^k <= T; for s = 1 these are k = 0..floor(log2 T), and no step
lies in more, so one record changes at most

    depth(T) = floor(log2 T) + 1 = ceil(log2(T + 1)) = T.bit_length()

nodes, each by at most ``sensitivity``: the node release is a Gaussian mechanism with L2
sensitivity sqrt(depth) * sensitivity (``ceil(log2 T) + 1`` over-counts when T is not a power of
two: it counts the nodes of the full tree that are never completed). With restarts (a list of
step counts, each record in at most one tree) the trees are independent and a record lies in
one of them: depth = max_i depth(T_i) (Kairouz et al. 2021, App. D). Hence, exactly as for the
Gaussian mechanism (Mironov 2017, Prop. 7; Bun & Steinke 2016, Prop. 1.6; Balle & Wang 2018,
Thm. 8 for the PLD):

    RDP(alpha) = alpha depth sensitivity^2/(2 sigma^2),  rho = depth sensitivity^2/(2 sigma^2),

which is dp_accounting's formula (tests/mechanisms/test_tree_aggregation.py compares the numbers). The
*prefix sums alone* can leak less: for a scalar stream their exact Gaussian parameter is
mu^2 = delta^T (A A^T)^{-1} delta / sigma^2 for the prefix-sum noise map A and the shift delta of
the prefix sums (:meth:`TreeAggregation.prefix_sum_mu`), at most depth (sensitivity/sigma)^2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.core.numeric import round_up
from dpaudit.core.validation import (
    check_neighbouring,
    check_nonnegative,
    check_orders,
    check_positive,
    check_real_array,
)
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.float_safe import grid_node_sums
from dpaudit.mechanisms.loss_pairs import PrivacyLoss, gaussian_loss, nonprivate_loss
from dpaudit.mechanisms.nonprivate import nonprivate_rdp

__all__ = ["TreeAggregation", "tree_depth", "prefix_noise_matrix", "MAX_STEPS", "MAX_LLR_STEPS"]

#: largest number of steps of one tree
MAX_STEPS = 2 ** 40
#: largest number of steps of the tree whose prefix-sum likelihood-ratio test is built (T x 2T matrix)
MAX_LLR_STEPS = 4096


def tree_depth(steps: int) -> int:
    """Number of completed nodes of a tree over ``steps`` steps that contain its first step (the
    most any step lies in): floor(log2 steps) + 1, 0 for an empty tree (module docstring)."""
    return int(steps).bit_length()


def prefix_noise_matrix(steps: int) -> np.ndarray:
    """A (steps x nodes) 0/1 matrix: row t - 1 selects the nodes summed into the prefix sum at t
    (nodes ordered by level, then position)."""
    cols, offset, rows = [], 0, []
    t = np.arange(1, steps + 1)
    for k in range(tree_depth(steps)):
        n_k = steps >> k
        use = ((t >> k) & 1) == 1
        rows.append(np.flatnonzero(use))
        cols.append(offset + (t[use] >> k) - 1)
        offset += n_k
    a = np.zeros((steps, offset))
    for r, c in zip(rows, cols):
        a[r, c] = 1.0
    return a


def _check_steps(step_counts) -> tuple[int, ...]:
    values = [step_counts] if np.ndim(step_counts) == 0 else list(np.asarray(step_counts, dtype=object).ravel())
    if not values:
        raise ValueError("step_counts must be a non-empty list of step counts (or one count)")
    out = []
    for v in values:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer, float, np.floating)):
            raise ValueError(f"step_counts must hold non-negative integers, got {v!r}")
        f = float(v)
        if not math.isfinite(f) or f != math.floor(f) or f < 0 or f > MAX_STEPS:
            raise ValueError(f"step_counts must hold integers in [0, 2^40], got {v!r}")
        out.append(int(f))
    return tuple(out)


@dataclass(frozen=True)
class TreeAggregation(Mechanism):
    """The noisy prefix sums of single-epoch tree aggregation (DP-FTRL, Kairouz et al. 2021).

    ``sigma``: noise standard deviation per tree node (and coordinate); ``step_counts``: the
    number of steps of each tree (one count, or a list for restarts; each record is used at most
    once across all trees); ``sensitivity``: L2 norm bound of one record's contribution to a
    step under ``neighbouring``. ``noise_multiplier`` = sigma/sensitivity (dp_accounting's
    parameter). Records used in several trees: compose the mechanism (``count``).

    Curves
    ------
    rdp(alpha)      alpha depth sensitivity^2/(2 sigma^2), depth = max T_i.bit_length()  [exact, nodes]
    zcdp()          depth sensitivity^2/(2 sigma^2)                                      [exact, nodes]
    pure_epsilon()  inf
    privacy_loss()  the Gaussian pair with mu = sqrt(depth) sensitivity/sigma            [exact, nodes]

    ``sigma = 0`` (no noise) releases the exact prefix sums: a non-private release
    (:meth:`non_private`), every curve ``inf``.
    """

    sigma: float
    step_counts: tuple = (1,)
    sensitivity: float = 1.0
    neighbouring: str = "add_remove"

    def __post_init__(self):
        object.__setattr__(self, "sigma", check_nonnegative("sigma", self.sigma))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "step_counts", _check_steps(self.step_counts))
        check_neighbouring("neighbouring", self.neighbouring)

    def non_private(self) -> bool:
        """No noise (sigma = 0) on a tree with at least one step."""
        return self.sigma == 0.0 and self.depth > 0

    @property
    def depth(self) -> int:
        """The most tree nodes one record lies in: max_i floor(log2 T_i) + 1."""
        return max(tree_depth(t) for t in self.step_counts)

    @property
    def noise_multiplier(self) -> float:
        return self.sigma / self.sensitivity

    @property
    def effective_sensitivity(self) -> float:
        """sqrt(depth) * sensitivity, rounded up (the L2 sensitivity of the node release)."""
        return round_up(math.sqrt(self.depth) * self.sensitivity, ulps=2)

    def rdp(self, orders) -> np.ndarray:
        if self.non_private():
            return nonprivate_rdp(orders)
        orders = check_orders("orders", orders)
        if self.depth == 0:
            return np.zeros(orders.shape)
        mu = np.float64(round_up(self.sensitivity / self.sigma, ulps=1))
        fin = np.isfinite(orders)
        with np.errstate(over="ignore", under="ignore"):
            out = round_up(((np.where(fin, orders, 2.0) * mu) * mu) * (self.depth / 2.0), ulps=4)
        return np.where(fin, out, math.inf)

    def zcdp(self) -> float:
        if self.depth == 0:
            return 0.0
        if self.non_private():
            return math.inf
        with np.errstate(over="ignore"):
            r = np.float64(self.sensitivity / self.sigma)
            return round_up(float(r * r) * (self.depth / 2.0), ulps=4)

    def has_zcdp_guarantee(self) -> bool:
        return not self.non_private()

    def privacy_loss(self) -> PrivacyLoss:
        """The Gaussian pair of the node release, sensitivity sqrt(depth) * sensitivity (sigma =
        0: the non-private pair)."""
        if self.depth == 0:
            return PrivacyLoss.nothing()
        if self.non_private():
            return nonprivate_loss()
        return gaussian_loss(self.effective_sensitivity, self.sigma)

    def prefix_sum_mu(self) -> float:
        """The exact Gaussian parameter of the released prefix sums of a scalar stream on the worst
        neighbours (the record at the first step of the deepest tree): sqrt(delta^T (A A^T)^{-1}
        delta)/sigma, delta = sensitivity on every prefix (not rounded; at most sqrt(depth)
        sensitivity/sigma)."""
        steps = max(self.step_counts)
        if steps == 0:
            return 0.0
        if self.sigma == 0.0:
            return math.inf
        if steps > MAX_LLR_STEPS:
            raise ValueError(f"step_counts must be at most {MAX_LLR_STEPS} for the prefix-sum test, got {steps}")
        a = prefix_noise_matrix(steps)
        w = np.linalg.solve(a @ a.T, np.ones(steps))
        return math.sqrt(max(float(np.sum(w)), 0.0)) * self.sensitivity / self.sigma

    def prefix_sum_test(self):
        """``(x, x_prime, llr)`` for scalar streams (``value`` of shape (sum T_i,)): zero
        contributions against ``sensitivity`` at the first step of the deepest tree; ``llr(y)``
        maps sampled prefix sums (last axis) to their log-likelihood ratio (up to a constant)
        w . y, w = (A A^T)^{-1} delta/sigma^2. ``None`` beyond :data:`MAX_LLR_STEPS` steps.

        (Not offered as :meth:`likelihood_ratio_test`: the testing helpers read one scalar
        output per release, and one release here is a vector of prefix sums.)"""
        steps = max(self.step_counts)
        if steps == 0 or steps > MAX_LLR_STEPS or self.sigma == 0.0:
            return None
        first = int(sum(self.step_counts[:self.step_counts.index(steps)]))
        a = prefix_noise_matrix(steps)
        w = np.linalg.solve(a @ a.T, np.full(steps, self.sensitivity)) / self.sigma ** 2
        total = sum(self.step_counts)
        x = np.zeros(total)
        xp = x.copy()
        xp[first] = self.sensitivity
        return x, xp, lambda y: np.asarray(y, dtype=float)[..., first:first + steps] @ w

    def sample(self, value, rng: np.random.Generator, size=None):
        """The noisy prefix sums of each tree for the per-step contributions ``value`` (shape
        (sum T_i,) + dims; the trees' steps one after the other), shape ``size + value.shape``:
        within each tree, the sum of the noisy nodes of the binary decomposition of t (each node:
        the exact sum of its steps plus a fresh N(0, sigma^2) per coordinate).

        Float-safe: each node's exact real value is rounded to the grid of sigma, sampled exactly
        (:func:`dpaudit.mechanisms.float_safe.grid_node_sums`), and the prefix sums are computed from
        the released nodes: post-processing of the node release the curves describe."""
        v = check_real_array("value", value)
        total = sum(self.step_counts)
        if v.ndim == 0 or v.shape[0] != total:
            raise ValueError(f"value must have sum(step_counts) = {total} steps along its first axis, got shape {v.shape}")
        lead = () if size is None else tuple(np.atleast_1d(size))
        out = np.empty(lead + v.shape)
        start = 0
        for steps in self.step_counts:
            if steps == 0:
                continue
            groups: list[tuple[int, int]] = []
            first: list[int] = []
            for k in range(tree_depth(steps)):
                first.append(len(groups))
                groups += [(i << k, (i + 1) << k) for i in range(steps >> k)]
            nodes = grid_node_sums(v[start:start + steps], groups, self.sigma, rng, lead)
            t = np.arange(1, steps + 1)
            block = np.zeros(lead + (steps,) + v.shape[1:])
            for k in range(tree_depth(steps)):
                use = np.flatnonzero(((t >> k) & 1) == 1)
                idx = first[k] + (t[use] >> k) - 1
                block[(slice(None),) * len(lead) + (use,)] += nodes[(slice(None),) * len(lead) + (idx,)]
            out[(slice(None),) * len(lead) + (slice(start, start + steps),)] = block
            start += steps
        return out

    def describe(self) -> str:
        return (f"TreeAggregation(sigma={self.sigma:g}, step_counts={list(self.step_counts)}, "
                f"sensitivity={self.sensitivity:g}, depth={self.depth}, {self.neighbouring})")
