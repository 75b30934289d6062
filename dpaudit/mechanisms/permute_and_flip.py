"""The permute-and-flip mechanism for private selection.

References
----------
McKenna, Sheldon, "Permute-and-Flip: a new mechanism for differentially private selection",
NeurIPS 2020 (arXiv:2010.12603), Algorithm 1 and its privacy theorem: for scores q_r(D) of
sensitivity Delta (|q_r(D) - q_r(D')| <= Delta for every candidate r and neighbours D, D'), visit
the candidates in a uniformly random order and stop at candidate r with probability

    p_r = exp(eps (q_r - q*)/(2 Delta)),    q* = max_s q_s;

the mechanism is eps-DP (the candidate with q_r = q* has p_r = 1, so one pass always stops).
Ding, Kifer, Steinke, Wang, Xiao, Zhang, "The permute-and-flip mechanism is identical to
report-noisy-max with exponential noise", 2021 (arXiv:2105.07260): the output law equals that of
argmax_r (q_r + E_r), E_r i.i.d. exponential with scale 2 Delta/eps (used in the tests as an
independent check of the pmf below).

Output law. Give each candidate an independent arrival time U_s ~ U(0, 1) (a uniformly random
order); r is output iff r stops and every s arriving before r does not. Hence

    P(r) = p_r int_0^1 prod_{s != r} (1 - p_s u) du,                                     (1)

a polynomial of degree n - 1 in u under the integral, integrated exactly by Gauss-Legendre with
ceil(n/2) nodes; every term of the quadrature is a product of numbers in [0, 1] (no
cancellation), evaluated in log space (prefix/suffix sums of log1p(-p_s u_j)).

Privacy curves. As an eps-DP mechanism its RDP curve, zCDP rho and PLD are bounded by those of
randomized response with eps, the dominating pair of every eps-DP mechanism (Kairouz, Oh,
Viswanath 2015, Thm. 2.1; Mironov 2017, Prop. 5). For a *concrete* pair of score vectors
(:meth:`PermuteAndFlip.on`) the two output laws are computed from (1) and their privacy loss
is described exactly (a finite pair with n atoms).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import special

from dpaudit.core.numeric import round_up
from dpaudit.core.validation import check_neighbouring, check_orders, check_positive, check_real_array
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.loss_pairs import DiscretePair, PrivacyLoss, RandomizedResponsePair, nonprivate_loss
from dpaudit.mechanisms.nonprivate import nonprivate_rdp
from dpaudit.mechanisms.pure import randomized_response_rdp

__all__ = ["PermuteAndFlip", "permute_and_flip_log_pmf", "MAX_EXACT_CANDIDATES"]

#: largest number of candidates whose output law (1) is computed exactly (n x n/2 work)
MAX_EXACT_CANDIDATES = 4096
#: relative margin on the concrete pair's Renyi divergence (measured error < 1e-13 against
#: mpmath, tests/mechanisms/test_permute_and_flip.py); an absolute margin (n + 2) 4e-16/(alpha - 1) more
_RDP_REL = 1e-12


def _probabilities_log(scores: np.ndarray, epsilon: float, sensitivity: float) -> np.ndarray:
    """log p_r = eps (q_r - q*)/(2 Delta) <= 0 (computed so that it never overflows)."""
    gap = scores - np.max(scores, axis=-1, keepdims=True)  # <= 0, exact for the maximiser
    with np.errstate(over="ignore", invalid="ignore"):
        out = (epsilon / (2.0 * sensitivity)) * gap
    return np.where(gap == 0.0, 0.0, out)


def permute_and_flip_log_pmf(scores, epsilon: float, sensitivity: float = 1.0) -> np.ndarray:
    """log P(output = r) of permute-and-flip on the score vector ``scores`` (module
    docstring, eq. (1)); at most :data:`MAX_EXACT_CANDIDATES` candidates."""
    q = check_real_array("scores", scores)
    if q.ndim != 1 or q.size == 0:
        raise ValueError("scores must be a non-empty one-dimensional vector of candidate scores")
    if q.size > MAX_EXACT_CANDIDATES:
        raise ValueError(f"scores must have at most {MAX_EXACT_CANDIDATES} candidates for the exact law, got {q.size}")
    epsilon = check_positive("epsilon", epsilon)
    sensitivity = check_positive("sensitivity", sensitivity)
    log_p = _probabilities_log(q, epsilon, sensitivity)
    n = q.size
    if n == 1:
        return np.zeros(1)
    m = (n + 1) // 2  # Gauss-Legendre with m nodes integrates degree 2m - 1 >= n - 1 exactly
    x, w = np.polynomial.legendre.leggauss(m)
    u, log_w = (x + 1.0) / 2.0, np.log(w / 2.0)
    with np.errstate(under="ignore"):
        terms = np.log1p(-np.exp(log_p)[:, None] * u[None, :])  # (n, m), each <= 0
    zero = np.zeros((1, m))
    prefix = np.concatenate([zero, np.cumsum(terms, axis=0)])[:-1]  # sum over s < r
    suffix = np.concatenate([np.cumsum(terms[::-1], axis=0)[::-1], zero])[1:]  # sum over s > r
    return log_p + special.logsumexp(log_w[None, :] + prefix + suffix, axis=1)


def _renyi(log_p: np.ndarray, log_q: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """D_alpha(P || Q) of two finite laws (not rounded); alpha = inf: max log P/Q."""
    out = np.empty(orders.shape)
    loss = log_p - log_q
    for i, a in enumerate(orders):
        if not math.isfinite(a):
            out[i] = float(np.max(loss))
            continue
        lam = float(a) - 1.0
        out[i] = float(special.logsumexp(log_p + lam * loss)) / lam
    return out


def _as_scores(name: str, scores) -> tuple[float, ...]:
    q = check_real_array(name, scores)
    if q.ndim != 1 or q.size == 0:
        raise ValueError(f"{name} must be a non-empty one-dimensional vector of candidate scores")
    return tuple(float(v) for v in q)


@dataclass(frozen=True)
class PermuteAndFlip(Mechanism):
    """Permute-and-flip (McKenna & Sheldon 2020): an ``epsilon``-DP selection of the index of a
    high score, for scores of sensitivity ``sensitivity`` (L-infinity over the candidates).

    ``scores`` / ``scores_prime`` (set through :meth:`on`): a concrete pair of neighbouring score
    vectors; the curves are then those of that pair (exact), otherwise those of the whole class
    (every pair of score vectors within ``sensitivity``).

    Curves (class)                                                   (concrete pair)
    ------
    rdp(alpha)      randomized response with eps  [sup over eps-DP]  max of both directions [exact]
    zcdp()          eps tanh(eps/2)               [sup over eps-DP]  as the class
    pure_epsilon()  eps                           [tight]            max |log P/Q|          [exact]
    privacy_loss()  randomized response (upper); the two-candidate  the pair of eq. (1)    [exact]
                    pair (0, 0) vs (D, -D) (lower, attained)

    ``epsilon = inf`` is the exact argmax (no noise): a non-private release (:meth:`non_private`),
    every curve ``inf`` (class only: a concrete pair needs a finite epsilon).
    """

    epsilon: float
    sensitivity: float = 1.0
    neighbouring: str = "add_remove"
    scores: tuple | None = None
    scores_prime: tuple | None = None

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon, allow_inf=True))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        check_neighbouring("neighbouring", self.neighbouring)
        if (self.scores is None) != (self.scores_prime is None):
            raise ValueError("scores and scores_prime must be given together (a concrete neighbouring pair)")
        if self.scores is not None and math.isinf(self.epsilon):
            raise ValueError("epsilon must be finite for a concrete pair of score vectors (inf: the argmax)")
        if self.scores is not None:
            q, qp = _as_scores("scores", self.scores), _as_scores("scores_prime", self.scores_prime)
            if len(q) != len(qp):
                raise ValueError(f"scores_prime must have as many candidates as scores ({len(q)}), got {len(qp)}")
            if len(q) > MAX_EXACT_CANDIDATES:
                raise ValueError(f"scores must have at most {MAX_EXACT_CANDIDATES} candidates, got {len(q)}")
            if float(np.max(np.abs(np.subtract(q, qp)))) > self.sensitivity:
                raise ValueError("scores_prime must differ from scores by at most sensitivity in every candidate "
                                 f"(sensitivity {self.sensitivity!r})")
            object.__setattr__(self, "scores", q)
            object.__setattr__(self, "scores_prime", qp)

    def on(self, scores, scores_prime) -> PermuteAndFlip:
        """The same mechanism on a concrete pair of neighbouring score vectors (exact curves)."""
        return replace(self, scores=scores, scores_prime=scores_prime)

    @property
    def concrete(self) -> bool:
        return self.scores is not None

    def output_log_pmfs(self) -> tuple[np.ndarray, np.ndarray]:
        """(log P, log Q): the output laws on ``scores`` and ``scores_prime`` (eq. (1))."""
        if not self.concrete:
            raise ValueError("scores must be set (use .on(scores, scores_prime)) to compute the output laws")
        return (permute_and_flip_log_pmf(self.scores, self.epsilon, self.sensitivity),
                permute_and_flip_log_pmf(self.scores_prime, self.epsilon, self.sensitivity))

    def non_private(self) -> bool:
        """epsilon = inf: the argmax itself (no noise)."""
        return math.isinf(self.epsilon)

    def rdp(self, orders) -> np.ndarray:
        if self.non_private():
            return nonprivate_rdp(orders)
        orders = check_orders("orders", orders)
        rr = round_up(randomized_response_rdp(self.epsilon, orders))
        if not self.concrete:
            return rr
        log_p, log_q = self.output_log_pmfs()
        d = np.maximum(_renyi(log_p, log_q, orders), _renyi(log_q, log_p, orders))
        lam = np.where(np.isfinite(orders), orders - 1.0, 1.0)
        with np.errstate(over="ignore"):
            margin = _RDP_REL * np.abs(d) + (log_p.size + 2) * 4e-16 / lam
        return np.minimum(round_up(np.maximum(d, 0.0) + margin), rr)

    def zcdp(self) -> float:
        """eps tanh(eps/2): the tight rho of eps-DP (sup_alpha of the randomized-response curve
        over alpha; Bun & Steinke 2016, Prop. 3.3 gives eps^2/2)."""
        if self.non_private():
            return math.inf
        return round_up(self.epsilon * math.tanh(self.epsilon / 2.0))

    def has_zcdp_guarantee(self) -> bool:
        return not self.non_private()  # pure DP

    def pure_epsilon(self) -> float:
        if not self.concrete:
            return self.epsilon  # the parameter itself
        log_p, log_q = self.output_log_pmfs()
        return min(round_up(float(np.max(np.abs(log_p - log_q)))), self.epsilon)

    def _pair(self) -> DiscretePair:
        log_p, log_q = self.output_log_pmfs()
        return DiscretePair(log_p - log_q, None, log_p=log_p)

    def privacy_loss(self) -> PrivacyLoss:
        """Class: randomized response with eps (upper; Kairouz et al. 2015, Thm. 2.1) and the
        two-candidate pair (lower, attained). Concrete pair: (P, Q) and (Q, P), exact. epsilon =
        inf: the non-private pair."""
        if self.non_private():
            return nonprivate_loss()
        if self.concrete:
            pair = self._pair()
            rev = pair.reversed()
            return PrivacyLoss((pair, rev), ((pair, rev),), "permute-and-flip-pair", exact=True)
        d = self.sensitivity
        lower = replace(self, scores=(0.0, 0.0), scores_prime=(d, -d))._pair()
        rr = RandomizedResponsePair(self.epsilon)
        return PrivacyLoss((rr, rr), ((lower, lower.reversed()),), "permute-and-flip")

    def likelihood_ratio_test(self):
        """On the concrete pair (or the two-candidate pair (0, 0) vs (D, -D)): the log-likelihood
        ratio log Q(r)/P(r) of the selected index r (``None`` for epsilon = inf)."""
        if self.non_private():
            return None
        m = self if self.concrete else replace(self, scores=(0.0, 0.0), scores_prime=(self.sensitivity, -self.sensitivity))
        log_p, log_q = m.output_log_pmfs()
        table = log_q - log_p
        return np.array(m.scores), np.array(m.scores_prime), lambda y: table[np.asarray(y, dtype=np.int64)]

    def sample(self, value, rng: np.random.Generator, size=None):
        """Index selected by permute-and-flip on the score vector ``value`` (last axis =
        candidates), vectorised: arrival times U_s ~ U(0, 1) give the random order and
        independent coins with P(heads) = p_s the flips; the output is the earliest candidate
        whose coin shows heads (the maximiser always does). Shape ``size + value.shape[:-1]``."""
        u = check_real_array("value", value)
        if u.ndim == 0 or u.shape[-1] == 0:
            raise ValueError("value must be a score vector (at least one candidate)")
        shape = u.shape if size is None else tuple(np.atleast_1d(size)) + u.shape
        if self.non_private():  # the argmax, ties broken uniformly at random (a random order)
            top = np.broadcast_to(u == np.max(u, axis=-1, keepdims=True), shape)
            return np.argmin(np.where(top, rng.random(shape), 2.0), axis=-1)
        log_p = np.broadcast_to(_probabilities_log(u, self.epsilon, self.sensitivity), shape)
        arrival = rng.random(shape)
        with np.errstate(under="ignore"):
            heads = (rng.random(shape) < np.exp(log_p)) | (log_p == 0.0)
        return np.argmin(np.where(heads, arrival, 2.0), axis=-1)

    def describe(self) -> str:
        pair = ""
        if self.scores is not None and self.scores_prime is not None:
            pair = f", scores={list(self.scores)}, scores_prime={list(self.scores_prime)}"
        return (f"PermuteAndFlip(epsilon={self.epsilon:g}, sensitivity={self.sensitivity:g}{pair}, "
                f"{self.neighbouring})")
