"""Monte Carlo accounting with a confidence statement: "epsilon <= x with confidence 1 - beta".

Reference: Wang, Mahloujifar, Wu, Jia, Mittal, "A randomized approach to tight privacy accounting",
NeurIPS 2023: estimate the hockey-stick divergence of a dominating pair (P, Q) from samples of the
privacy loss and state the result with a confidence level. Every answer here is PROBABILISTIC: its
type (:class:`MonteCarloEpsilon`, :class:`MonteCarloDelta`) carries ``probabilistic = True`` and the
confidence, and it is not a deterministic upper bound -- with probability at most 1 - confidence over
the sampling it is below the true value. It is never registered as an accountant.

Estimator. For a pair (P, Q) with privacy loss L = log dP/dQ,

    delta_{P||Q}(eps) = E_P[(1 - e^{eps - L})_+]            (Balle, Barthe, Gaboardi 2018, Thm. 1)

a mean of variables in [0, 1]. From N i.i.d. samples with empirical mean m, the upper confidence bound
U(eps) = sup{mu >= m : N kl(m || mu) <= log(1/beta)} (kl the Bernoulli relative entropy) satisfies
P(U(eps) < delta(eps)) <= beta for each fixed eps: the Chernoff-Hoeffding bound for bounded variables
(Hoeffding 1963, Thm. 1), which needs about log(1/beta)/delta samples for a relative accuracy of order
one at delta. Both directions are estimated from their own samples (L under P for P||Q; the reversed
loss under Q for Q||P), each at level beta, and:

* ``monte_carlo_delta(eps)`` returns max(U_P(eps), U_Q(eps)): the true delta(eps) = max of the two
  directions exceeds it only if the direction attaining the max does, probability <= beta;
* ``monte_carlo_epsilon(delta)`` returns x = inf{eps >= 0 : U_P(eps) <= delta and U_Q(eps) <= delta}.
  U is non-increasing in eps for every sample, so if x < x0 (the true epsilon(delta)) then for every
  eps in (x, x0) both U's are <= delta while the true delta(eps) > delta in some direction D(eps);
  taking eps_m increasing to x0, the events {U_P(eps_m) <= delta and U_Q(eps_m) <= delta} increase and
  each has probability <= beta (it implies U_D(eps_m) < delta_D(eps_m)), so P(x < x0) <= beta.

Pairs (:class:`LossSampler`):

* :class:`GaussianLosses` -- N(0, 1) vs N(mu, 1), composed ``count`` times (exact check);
* :class:`PoissonGaussianLosses` -- the Poisson-subsampled Gaussian composed ``count`` times
  (DP-SGD; and the banded MF run under cyclic Poisson sampling through
  :func:`~dpaudit.accounting.matrix_mechanism.banded_cyclic_poisson`, whose PLD value is exact: the
  Monte Carlo answer can be checked against it);
* :class:`BandedMinSepLosses` -- b-min-separation sampling of a banded Toeplitz strategy with at most b
  bands (an example participates at an eligible step with probability p and is then ineligible for the
  next b - 1 steps), the pair of jax_privacy's ``experimental/monte_carlo`` (P: the example's
  participations drawn from that process and added through C; Q: noise only) for which no PLD
  accounting is known. Participations b apart occupy disjoint rows of C x, so
  log dP/dQ(y) = log R_0 with the backward recursion R_t = (1 - p) R_{t+1} + p e^{f_t(y)} R_{t+b}
  (R_t = 1 beyond n), f_t(y) = (<c, y_{t:t+b}> - ||c_t||^2/2)/sigma^2 (c truncated at the end); with a
  warm start the process begins in its stationary law (eligible with probability 1/(1 + (b - 1) p),
  else eligible again after r = 1..b-1 steps, each with probability p/(1 + (b - 1) p)). The validity of
  this pair for a training run is that of its source (jax_privacy, arXiv:2602.09338); the Monte Carlo
  statement is about the pair.
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass

import numpy as np
from scipy import signal, special

from dpaudit.core.numeric import round_up
from dpaudit.core.roots import smallest_true
from dpaudit.core.seeds import as_seed_sequence
from dpaudit.core.validation import (
    check_confidence,
    check_count,
    check_delta,
    check_epsilon,
    check_positive,
    check_probability,
    check_real_array,
)

__all__ = ["LossSampler", "GaussianLosses", "PoissonGaussianLosses", "BandedMinSepLosses", "MonteCarloEpsilon",
           "MonteCarloDelta", "monte_carlo_epsilon", "monte_carlo_delta", "kl_upper_bound", "loss_samples"]

#: samples per chunk are limited so that one chunk holds at most this many floats
CHUNK_FLOATS = 4_000_000
SIDES = ("P", "Q")


def _kl(m: float, mu: np.ndarray) -> np.ndarray:
    """Bernoulli relative entropy kl(m || mu)."""
    return special.rel_entr(m, mu) + special.rel_entr(1.0 - m, 1.0 - mu)


def kl_upper_bound(mean: float, samples: int, beta: float) -> float:
    """sup{mu in [mean, 1] : samples * kl(mean || mu) <= log(1/beta)} by bisection (120 halvings),
    returned from above: the upper confidence bound of a [0, 1] mean at level beta (Hoeffding 1963)."""
    mean = min(max(float(mean), 0.0), 1.0)
    target = math.log(1.0 / beta) / samples
    if mean >= 1.0:
        return 1.0
    if float(_kl(mean, np.array(1.0 - 1e-300))) <= target:
        return 1.0
    hi = smallest_true(lambda p: float(_kl(mean, np.array(p))) > target, mean, 1.0, midpoint="arithmetic",
                       max_iter=120)
    return min(1.0, round_up(hi))


class LossSampler(abc.ABC):
    """A dominating pair described by samples of its privacy loss: ``sample(rng, size, side)`` returns
    log dP/dQ(Y) for Y ~ P (``side="P"``) or log dQ/dP(Y) for Y ~ Q (``side="Q"``)."""

    @property
    def width(self) -> int:
        """Floats of work per sample (sizes the chunks)."""
        return 1

    @abc.abstractmethod
    def sample(self, rng: np.random.Generator, size: int, side: str) -> np.ndarray:
        """``size`` samples of the privacy loss on ``side`` ("P" or "Q"), as in the class docstring."""

    def describe(self) -> str:
        return type(self).__name__


@dataclass(frozen=True)
class GaussianLosses(LossSampler):
    """N(0, 1) vs N(mu, 1) composed ``count`` times: L ~ N(count mu^2/2, count mu^2) on both sides."""

    mu: float
    count: int = 1

    def __post_init__(self):
        object.__setattr__(self, "mu", check_positive("mu", self.mu))
        object.__setattr__(self, "count", check_count("count", self.count, minimum=1))

    def sample(self, rng, size, side):
        m2 = self.count * self.mu ** 2
        return rng.normal(m2 / 2.0, math.sqrt(m2), size)

    def describe(self):
        return f"{self.count} x Gaussian(mu={self.mu:g})"


@dataclass(frozen=True)
class PoissonGaussianLosses(LossSampler):
    """The Poisson-subsampled Gaussian (rate q, mu = sensitivity/sigma) composed ``count`` times, add/remove:
    P = (1 - q) N(0, 1) + q N(mu, 1) vs Q = N(0, 1) per step (both directions sampled)."""

    q: float
    mu: float
    count: int = 1

    def __post_init__(self):
        object.__setattr__(self, "q", check_probability("q", self.q))
        object.__setattr__(self, "mu", check_positive("mu", self.mu))
        object.__setattr__(self, "count", check_count("count", self.count, minimum=1))

    @property
    def width(self) -> int:
        return self.count

    def sample(self, rng, size, side):
        q, mu = self.q, self.mu
        out = np.zeros(size)
        lq = math.log(q) if q > 0 else -math.inf
        l1q = math.log1p(-q) if q < 1 else -math.inf
        for _ in range(self.count):
            y = rng.standard_normal(size)
            if side == "P":
                y = y + mu * (rng.random(size) < q)
            step = np.logaddexp(l1q, lq + mu * y - mu * mu / 2.0)
            out += step if side == "P" else -step
        return out

    def describe(self):
        return f"{self.count} x PoissonSampled(Gaussian(mu={self.mu:g}), q={self.q:g})"


@dataclass(frozen=True, eq=False)
class BandedMinSepLosses(LossSampler):
    """b-min-separation sampling of the banded Toeplitz strategy with first-column coefficients ``coefs``
    (at most ``min_sep`` of them, >= 0), noise ``sigma`` per step (in units of the clip bound), rate
    ``sample_rate`` at eligible steps, ``steps`` steps (module docstring)."""

    coefs: tuple
    sigma: float
    min_sep: int
    sample_rate: float
    steps: int
    warm_start: bool = True

    def __post_init__(self):
        c = check_real_array("coefs", self.coefs).ravel()
        object.__setattr__(self, "min_sep", check_count("min_sep", self.min_sep, minimum=1))
        object.__setattr__(self, "steps", check_count("steps", self.steps, minimum=1))
        if c.size == 0 or c.size > self.min_sep or np.any(c < 0):
            raise ValueError(f"coefs must be 1 to min_sep = {self.min_sep} non-negative coefficients, got {c.size}")
        object.__setattr__(self, "coefs", tuple(float(v) for v in c[: self.steps]))
        object.__setattr__(self, "sigma", check_positive("sigma", self.sigma))
        object.__setattr__(self, "sample_rate", check_probability("sample_rate", self.sample_rate))

    @property
    def width(self) -> int:
        return 3 * self.steps

    def _participations(self, rng, size) -> np.ndarray:
        n, b, p = self.steps, self.min_sep, self.sample_rate
        x = np.zeros((n, size))
        if self.warm_start:
            w = np.full(b, p)
            w[0] = 1.0
            w /= w.sum()
            nxt = rng.choice(b, size=size, p=w)  # the first eligible step
        else:
            nxt = np.zeros(size, dtype=int)
        for t in range(n):
            take = (nxt <= t) & (rng.random(size) < p)
            x[t, take] = 1.0
            nxt = np.where(take, t + b, nxt)
        return x

    def log_ratio(self, y: np.ndarray) -> np.ndarray:
        """log dP/dQ(y) for outputs y of shape (steps, size)."""
        n, b, p = self.steps, self.min_sep, self.sample_rate
        c = np.asarray(self.coefs)
        dot = signal.lfilter(c, [1.0], y[::-1], axis=0)[::-1]  # dot[t] = sum_k c_k y[t + k]
        norms2 = np.cumsum(c * c)[np.minimum(c.size, n - np.arange(n)) - 1]
        f = (dot - norms2[:, None] / 2.0) / self.sigma ** 2
        lp = math.log(p) if p > 0 else -math.inf
        l1p = math.log1p(-p) if p < 1 else -math.inf
        R = np.zeros((n + b, y.shape[1]))
        with np.errstate(invalid="ignore"):
            for t in range(n - 1, -1, -1):
                R[t] = np.logaddexp(l1p + R[t + 1], lp + f[t] + R[t + b])
        if not self.warm_start:
            return R[0]
        # stationary start: eligible now w.p. 1/(1 + (b - 1) p), else after r steps w.p. p/(1 + (b - 1) p)
        terms = R[:b].copy()
        terms[1:] += lp
        return special.logsumexp(terms, axis=0) - math.log1p((b - 1) * p)

    def sample(self, rng, size, side):
        n = self.steps
        z = rng.normal(0.0, self.sigma, (n, size))
        if side == "P":
            z = z + signal.lfilter(np.asarray(self.coefs), [1.0], self._participations(rng, size), axis=0)
            return self.log_ratio(z)
        return -self.log_ratio(z)

    def describe(self):
        return (f"b-min-sep sampling (b = {self.min_sep}, p = {self.sample_rate:g}, {self.steps} steps) of a "
                f"{len(self.coefs)}-band Toeplitz strategy, sigma = {self.sigma:g}")


def loss_samples(sampler: LossSampler, samples: int, seed=None) -> tuple[np.ndarray, np.ndarray]:
    """``samples`` privacy-loss samples of each side (P, Q), drawn in chunks from children of ``seed``
    (the same seed gives the same samples)."""
    if not isinstance(sampler, LossSampler):
        raise ValueError(f"sampler must be a LossSampler, got {type(sampler).__name__}")
    samples = check_count("samples", samples, minimum=1)
    chunk = max(1, CHUNK_FLOATS // max(1, int(sampler.width)))
    root = as_seed_sequence(seed)
    out = []
    for side, child in zip(SIDES, root.spawn(2)):
        sizes = [chunk] * (samples // chunk) + ([samples % chunk] if samples % chunk else [])
        parts = [sampler.sample(np.random.default_rng(s), size, side) for size, s in zip(sizes, child.spawn(len(sizes)))]
        arr = np.concatenate(parts)
        if np.any(np.isnan(arr)):
            raise ValueError(f"the sampler returned NaN privacy losses ({sampler.describe()})")
        out.append(arr)
    return out[0], out[1]


class _Curve:
    """The empirical delta(eps) = mean((1 - e^{eps - L})_+) of fixed losses: sorted once, so that an
    evaluation touches only the losses above eps."""

    def __init__(self, losses: np.ndarray):
        self.L = np.sort(np.asarray(losses, dtype=float))
        self.n = self.L.size

    def __call__(self, eps: float) -> float:
        tail = self.L[int(np.searchsorted(self.L, eps, side="right")):]
        return float(np.sum(-np.expm1(eps - tail))) / self.n


def _mean_delta(losses: np.ndarray, eps: float) -> float:
    with np.errstate(over="ignore"):
        return float(np.mean(-np.expm1(np.minimum(eps - losses, 0.0))))


@dataclass(frozen=True)
class _MonteCarloAnswer(abc.ABC):
    """What both answers share: the confidence, the samples per direction, the point estimate (no
    guarantee), the method; ``probabilistic`` is always True."""

    confidence: float
    samples: int
    estimate: float
    method: str

    @property
    def probabilistic(self) -> bool:
        """Always True: the answer holds with probability ``confidence`` over the sampling."""
        return True

    @abc.abstractmethod
    def statement(self) -> str:
        """The answer in words, with its confidence and that it is probabilistic."""

    def to_dict(self) -> dict:
        return {**self.__dict__, "probabilistic": True, "statement": self.statement()}


@dataclass(frozen=True)
class MonteCarloDelta(_MonteCarloAnswer):
    """delta(epsilon) <= ``delta`` with probability >= ``confidence`` over the sampling (PROBABILISTIC);
    ``estimate`` is the empirical value (no guarantee)."""

    delta: float = math.nan
    epsilon: float = math.nan

    def statement(self) -> str:
        return (f"delta({self.epsilon:g}) <= {self.delta:.4g} with confidence {self.confidence:g} "
                f"(probabilistic: Monte Carlo, {self.samples} samples per direction)")


@dataclass(frozen=True)
class MonteCarloEpsilon(_MonteCarloAnswer):
    """epsilon(delta) <= ``epsilon`` with probability >= ``confidence`` over the sampling (PROBABILISTIC,
    never a deterministic upper bound); ``estimate`` is the epsilon of the empirical curves."""

    epsilon: float = math.nan
    delta: float = math.nan

    def statement(self) -> str:
        return (f"epsilon <= {self.epsilon:.4g} with confidence {self.confidence:g} at delta = {self.delta:g} "
                f"(probabilistic: Monte Carlo, {self.samples} samples per direction)")


def _method(sampler) -> str:
    what = sampler.describe() if isinstance(sampler, LossSampler) else "given losses"
    return f"Monte Carlo (Wang et al. 2023), KL-Chernoff upper bound per direction; {what}"


def _draws(sampler, samples, seed, losses):
    if losses is not None:
        lp, lq = (np.asarray(v, dtype=float).ravel() for v in losses)
        if lp.size != lq.size or lp.size == 0:
            raise ValueError("losses must be two non-empty arrays of the same length (P side, Q side)")
        return lp, lq
    return loss_samples(sampler, samples, seed)


def monte_carlo_delta(sampler: LossSampler, epsilon: float, *, samples: int = 100_000, confidence: float = 0.95,
                      seed=None, losses=None) -> MonteCarloDelta:
    """Upper confidence bound on delta(``epsilon``) of the pair (module docstring). ``losses``: reuse
    samples from :func:`loss_samples` (then ``sampler``/``samples``/``seed`` are not used; each query's
    confidence holds on its own, not jointly with other queries on the same samples)."""
    epsilon = check_epsilon("epsilon", epsilon)
    beta = 1.0 - check_confidence("confidence", confidence)
    lp, lq = _draws(sampler, samples, seed, losses)
    mp, mq = _mean_delta(lp, epsilon), _mean_delta(lq, epsilon)
    up = max(kl_upper_bound(mp, lp.size, beta), kl_upper_bound(mq, lq.size, beta))
    return MonteCarloDelta(confidence=1.0 - beta, samples=int(lp.size), estimate=max(mp, mq),
                           method=_method(sampler), delta=up, epsilon=epsilon)


def monte_carlo_epsilon(sampler: LossSampler, delta: float, *, samples: int = 100_000, confidence: float = 0.95,
                        seed=None, losses=None) -> MonteCarloEpsilon:
    """x with epsilon(``delta``) <= x with probability >= ``confidence`` (module docstring); ``inf`` when
    even the largest epsilon reachable does not bring the bound below ``delta`` (too few samples)."""
    delta = check_delta("delta", delta)
    beta = 1.0 - check_confidence("confidence", confidence)
    lp, lq = _draws(sampler, samples, seed, losses)
    N = lp.size
    cp, cq = _Curve(lp), _Curve(lq)

    def ok(eps: float, bound: bool = True) -> bool:
        mp, mq = cp(eps), cq(eps)
        if not bound:
            return max(mp, mq) <= delta
        return max(kl_upper_bound(mp, N, beta), kl_upper_bound(mq, N, beta)) <= delta

    def solve(bound: bool) -> float:
        if ok(0.0, bound):
            return 0.0
        hi = max(1.0, float(max(np.max(lp), np.max(lq))) + 1.0)
        if not ok(hi, bound):  # beyond every sample's loss the empirical delta is 0: only the bound remains
            return math.inf
        return round_up(smallest_true(lambda e: ok(e, bound), 0.0, hi, midpoint="arithmetic", max_iter=100))

    return MonteCarloEpsilon(confidence=1.0 - beta, samples=int(N), estimate=solve(False), method=_method(sampler),
                             epsilon=solve(True), delta=delta)
