"""Repeat-and-select: run a mechanism a random number K of times and release only the best run.

References
----------
Papernot, Steinke, "Hyperparameter tuning with Renyi differential privacy", ICLR 2022
(arXiv:2110.03620; numbering of v2 as cited by dp_accounting's ``_compute_rdp_repeat_and_select``):

* Definition 1, the truncated negative binomial D_{eta, gamma} (eta >= 0, gamma in (0, 1]):
  P(K = k) proportional to C(k + eta - 1, k) (1 - gamma)^k for k = 1, 2, ...; eta = 1 is the
  geometric law, eta = 0 (the limit) the logarithmic law; its mean is

      E[K] = eta (1 - gamma)/(gamma (1 - gamma^eta))     (eta = 0: (1 - gamma)/(gamma log(1/gamma))).

* Theorem 2: if the base mechanism Q is (lambda, eps)-RDP and (lambda_hat, eps_hat)-RDP,
  lambda in (1, inf), lambda_hat in [1, inf), then running Q K ~ D_{eta, gamma} times and
  returning the best output is (lambda, eps')-RDP with

      eps' = eps + (1 + eta)(1 - 1/lambda_hat) eps_hat + (1 + eta) log(1/gamma)/lambda_hat
             + log(E[K])/(lambda - 1).                                                     (2)

* Theorem 6 (K ~ Poisson(mu)): if Q is (lambda, eps)-RDP and (eps_hat, delta_hat)-DP with
  e^{eps_hat} <= 1 + 1/(lambda - 1), the result is (lambda, eps + mu delta_hat +
  log(mu)/(lambda - 1))-RDP.

The selection ("best") may be any rule that ranks single outputs (a fixed score of the output,
ties broken by a fixed rule); the sampler here returns the largest output. dp_accounting
represents the same event as ``RepeatAndSelectDpEvent(event, mean, shape)`` (shape inf:
Poisson; 1 geometric; 0 logarithmic); this module takes the same parameters.

Evaluation. (2) holds for every lambda_hat, so its middle terms are minimised over a grid of
lambda_hat of the base curve, with inf (the pure-DP limit) and 1: as lambda_hat -> 1+ the middle
terms tend to (1 + eta) log(1/gamma) whenever the base curve is finite at some order (D_lambda_hat
is non-decreasing, so (1 - 1/lambda_hat) D_lambda_hat -> 0), and a bound valid for every
lambda_hat > 1 holds at their infimum (autodp's implementation also minimises over [1, ...];
dp_accounting's starts at its smallest order, so ours is at most theirs). A mean of 1 means K = 1
(the base curve itself, which (2) then returns: gamma = 1); gamma is found from the mean by bisection such
that the computed mean at gamma is at least the given one (relative margin 1e-12): gamma is
never above the true value, so log(1/gamma) is never below it. In Theorem 6 delta_hat is the
smaller of the conversion of the base RDP curve (Canonne, Kamath, Steinke 2020, Prop. 12, and
the KL bound delta <= sqrt(1 - e^{-KL}) as dp_accounting) and, when the base states dominating
pairs, their hockey-stick divergence at eps_hat. Finally RDP is non-decreasing in the order
(Mironov 2017, Prop. 9), so the bound at lambda is the least bound at any lambda' >= lambda on
the grid. At lambda = inf the bounds are the limits (D_inf = lim D_lambda): for a pure eps-DP
base, (2) gives at most (2 + eta) eps (Liu & Talwar 2019 for the geometric law: 3 eps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.core.numeric import round_up
from dpaudit.core.roots import largest_false
from dpaudit.core.validation import check_neighbouring, check_orders
from dpaudit.mechanisms.base import Mechanism

__all__ = ["RepeatAndSelect", "repeat_and_select_rdp", "tnb_mean", "tnb_gamma", "rdp_to_delta"]

#: lambda_hat grid of (2) and the monotone envelope (besides 1, inf and the requested orders)
_GRID = np.concatenate([1.0 + np.geomspace(1e-3, 1e5, 241)])
#: largest mean accepted (log(E[K]) and the sampler's draws stay well inside the float range)
MAX_MEAN = 1e12
#: rows of base draws taken at once by the sampler (bounded memory)
_CHUNK = 2 ** 22


def _pos(x: float) -> float:
    return x if x > 0 else 0.0


def tnb_mean(gamma: float, shape: float) -> float:
    """E[K] of the truncated negative binomial D_{shape, gamma} (Papernot & Steinke 2022, Def. 1)."""
    if gamma >= 1.0:
        return 1.0
    lg = -math.log(gamma)  # log(1/gamma) > 0
    if shape == 0.0:
        return -math.expm1(-lg) / (gamma * lg)
    if math.isinf(shape):
        raise ValueError("shape must be finite for the truncated negative binomial (inf is the Poisson law)")
    # eta (1 - gamma)/(gamma (1 - gamma^eta)) = ((1 - gamma)/gamma) / ((1 - e^{-eta lg})/eta)
    return (-math.expm1(-lg) / gamma) / (-math.expm1(-shape * lg) / shape)


def tnb_gamma(mean: float, shape: float) -> float:
    """The gamma of D_{shape, gamma} with E[K] = ``mean``, never above the exact value (the
    computed mean at the returned gamma is >= mean (1 + 1e-12))."""
    if mean == 1.0:
        return 1.0
    target = mean * (1.0 + 1e-12)
    # mean(0+) = inf >= target, mean(1) = 1 < target: the largest gamma whose mean reaches the
    # target (core/roots, arithmetic midpoints, at most 200 halvings)
    lo = largest_false(lambda g: not (g > 0 and tnb_mean(g, shape) >= target), 0.0, 1.0,
                       midpoint="arithmetic", max_iter=200)
    if lo <= 0.0:  # pragma: no cover - mean is capped at MAX_MEAN, far from gamma underflow
        raise ValueError(f"mean {mean!r} is too large for the truncated negative binomial")
    return lo


def rdp_to_delta(orders, rdp, epsilon) -> np.ndarray:
    """Upper bounds on delta(epsilon) (``epsilon`` scalar or array) from an RDP curve: the least
    over the orders of exp((a - 1)(r - eps + log(1 - 1/a)) - log a) (Canonne, Kamath, Steinke
    2020, Prop. 12) and sqrt(1 - e^{-r}) (the KL bound, KL <= D_a), capped at 1; rounded up."""
    a = np.asarray(orders, dtype=float)
    r = np.asarray(rdp, dtype=float)
    e = np.atleast_1d(np.asarray(epsilon, dtype=float))
    keep = np.isfinite(r)
    a, r = a[keep], r[keep]
    if np.any(r <= 0.0):
        return np.zeros(np.shape(epsilon))
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        kl = np.where(r < 700, 0.5 * np.log1p(-np.exp(-np.minimum(r, 700))), 0.0)
        best = np.min(np.append(kl, 0.0)) * np.ones(e.shape)
        fin = np.isfinite(a) & (a > 1.0)
        if np.any(fin):
            af, rf = a[fin], r[fin]
            cks = (af - 1.0)[None, :] * (rf[None, :] - e[:, None] + np.log1p(-1.0 / af)[None, :]) - np.log(af)[None, :]
            best = np.minimum(best, np.min(cks, axis=1))
    out = np.minimum(round_up(np.exp(best), ulps=16), 1.0)
    return out.reshape(np.shape(epsilon))


def repeat_and_select_rdp(base_orders, base_rdp, orders, mean: float, shape: float, delta_hat=None) -> np.ndarray:
    """The RDP curve at ``orders`` of repeat-and-select over a base mechanism whose RDP curve is
    ``base_rdp`` at ``base_orders`` (module docstring: (2), or Theorem 6 for ``shape`` = inf),
    with the monotone envelope over ``base_orders``; the requested orders must be among
    ``base_orders``. ``delta_hat(eps_hat)`` (Poisson only, optional): an upper bound on the
    base's delta at eps_hat, used when smaller than the RDP conversion. Rounded up."""
    bo = np.asarray(base_orders, dtype=float)
    br = np.asarray(base_rdp, dtype=float)
    out_at = np.full(bo.shape, math.inf)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        log_mean_term = np.where(np.isfinite(bo), math.log(mean) / (bo - 1.0), 0.0)
    if math.isinf(shape):
        with np.errstate(divide="ignore"):
            eps_hat = np.where(np.isfinite(bo), np.log1p(1.0 / (bo - 1.0)), 0.0)
        d = rdp_to_delta(bo, br, eps_hat)
        if delta_hat is not None:
            d = np.minimum(d, np.asarray(delta_hat(eps_hat), dtype=float))
        out_at = br + round_up(mean * d) + log_mean_term
    else:
        gamma = tnb_gamma(mean, shape)
        log_inv_gamma = -math.log(gamma)
        terms = [log_inv_gamma]  # lambda_hat = 1: (1 - 1/1) eps_hat = 0 (a finite KL, implied by any finite D_a)
        for lh, eh in zip(bo, br):
            if not math.isfinite(eh):
                continue
            terms.append((1.0 - 1.0 / lh) * eh + (log_inv_gamma / lh if math.isfinite(lh) else 0.0))
        if len(terms) == 1:  # no finite base RDP at all: no guarantee
            return np.full(np.asarray(orders).shape, math.inf)
        c = (1.0 + shape) * min(terms)
        out_at = br + round_up(c, ulps=16) + log_mean_term
    out_at = round_up(np.where(np.isnan(out_at), math.inf, out_at), ulps=16)
    # monotone envelope: D_lambda <= D_lambda' for lambda <= lambda'
    order = np.argsort(bo)
    env = np.minimum.accumulate(out_at[order][::-1])[::-1]
    env_at = np.empty_like(env)
    env_at[order] = env
    result = []
    for a in np.asarray(orders, dtype=float).ravel():
        hit = np.flatnonzero(bo == a)
        if hit.size == 0:
            raise ValueError(f"orders must be among base_orders, {a!r} is not")
        result.append(env_at[hit[0]])
    return np.asarray(result).reshape(np.asarray(orders).shape)


def _check_mean_shape(mean, shape) -> tuple[float, float]:
    try:
        m, s = float(mean), float(shape)
    except (TypeError, ValueError):
        raise ValueError(f"mean and shape must be real numbers, got {mean!r}, {shape!r}") from None
    if isinstance(mean, bool) or not (1.0 <= m <= MAX_MEAN):
        raise ValueError(f"mean must be in [1, {MAX_MEAN:g}] (the expected number of runs), got {mean!r}")
    if isinstance(shape, bool) or math.isnan(s) or s < 0.0:
        raise ValueError(f"shape must be >= 0 (0 logarithmic, 1 geometric, inf Poisson), got {shape!r}")
    return m, s


@dataclass(frozen=True)
class RepeatAndSelect(Mechanism):
    """Run ``base`` K times, K random with mean ``mean`` (``shape``: 0 logarithmic, 1
    geometric, in (0, inf) truncated negative binomial, inf Poisson), and release the best
    output only (Papernot & Steinke 2022). The neighbouring relation is the base's.

    Curves
    ------
    rdp(alpha)      Theorem 2 / Theorem 6 over the base's RDP curve, monotone envelope   [upper bound]
    pure_epsilon()  the curve's limit at alpha = inf (finite for a pure-DP base;
                    at most (2 + shape) eps)                                             [upper bound]
    zcdp()          eps tanh(eps/2) of that pure epsilon, else inf (the log(E[K])/(alpha - 1)
                    term rules out zCDP without pure DP)
    privacy_loss()  the pure-DP statement when finite (randomized response), else none: the
                    PLD accountant refuses it
    """

    base: Mechanism
    mean: float = 1.0
    shape: float = 1.0

    def __post_init__(self):
        if not isinstance(self.base, Mechanism):
            raise ValueError(f"base must be a dpaudit Mechanism, got {type(self.base).__name__}")
        m, s = _check_mean_shape(self.mean, self.shape)
        object.__setattr__(self, "mean", m)
        object.__setattr__(self, "shape", s)
        check_neighbouring("neighbouring", self.neighbouring)

    @property
    def neighbouring(self) -> str:  # type: ignore[override]
        return getattr(self.base, "neighbouring", "add_remove")

    def _delta_hat(self):
        loss = self.base.privacy_loss()
        if loss is None or loss.upper is None:
            return None
        upper = loss.upper

        def dh(e):
            vals = [pair.delta(np.asarray(e, dtype=float)) for pair in upper]
            return np.minimum(np.max([v + err for v, err in vals], axis=0), 1.0)
        return dh

    def rdp(self, orders) -> np.ndarray:
        orders = check_orders("orders", orders)
        grid = np.unique(np.concatenate([_GRID, orders.ravel(), [math.inf]]))
        base = np.asarray(self.base.rdp(grid), dtype=float)
        dh = self._delta_hat() if math.isinf(self.shape) else None
        return repeat_and_select_rdp(grid, base, orders, self.mean, self.shape, delta_hat=dh)

    def pure_epsilon(self) -> float:
        if not math.isfinite(self.base.pure_epsilon()):
            return math.inf
        return float(self.rdp([math.inf])[0])

    def zcdp(self) -> float:
        eps = self.pure_epsilon()
        if not math.isfinite(eps) or eps > 1e154:
            return math.inf
        return round_up(eps * math.tanh(eps / 2.0))  # eps-DP => eps tanh(eps/2)-zCDP (tight for eps-DP)

    def draw_counts(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` draws of the number of runs K (int64)."""
        if math.isinf(self.shape):
            return rng.poisson(self.mean, size).astype(np.int64)
        gamma = tnb_gamma(self.mean, self.shape)
        if gamma >= 1.0:
            return np.ones(size, dtype=np.int64)
        if self.shape == 0.0:
            return rng.logseries(1.0 - gamma, size).astype(np.int64)
        if self.shape == 1.0:
            return rng.geometric(gamma, size).astype(np.int64)
        out = np.empty(size, dtype=np.int64)
        filled = 0
        for _ in range(100_000):
            if filled >= size:
                return out
            k = rng.negative_binomial(self.shape, gamma, max(2 * (size - filled), 64))
            k = k[k >= 1]  # truncation: K conditioned on K >= 1 (Def. 1)
            take = min(k.size, size - filled)
            out[filled:filled + take] = k[:take]
            filled += take
        raise RuntimeError("truncated negative binomial sampler exceeded its iteration bound")  # pragma: no cover

    def sample(self, value, rng: np.random.Generator, size=None):
        """The largest of K base outputs on ``value`` (scalar outputs; -inf when K = 0, which the
        Poisson law allows), shape ``size`` (an int or None)."""
        n = 1 if size is None else int(np.prod(np.atleast_1d(size)))
        ks = self.draw_counts(rng, n)
        out = np.full(n, -math.inf)
        order = np.argsort(ks, kind="stable")
        sk = np.maximum(ks[order], 1)
        start = 0
        while start < n:  # rows sorted by K, taken while rows * max K <= _CHUNK (bounded memory)
            cost = (np.arange(start + 1, n + 1) - start) * sk[start:]
            end = start + max(1, int(np.searchsorted(cost, _CHUNK, side="right")))
            rows = order[start:end]
            kk = int(ks[rows].max())
            if kk > 0:
                draws = np.asarray(self.base.sample(value, rng, (rows.size, kk)), dtype=float).reshape(rows.size, kk)
                draws[np.arange(kk)[None, :] >= ks[rows][:, None]] = -math.inf
                out[rows] = draws.max(axis=1)
            start = end
        return out[0] if size is None else out.reshape(np.atleast_1d(size))

    def describe(self) -> str:
        law = {0.0: "logarithmic", 1.0: "geometric", math.inf: "Poisson"}.get(self.shape, f"TNB(eta={self.shape:g})")
        return f"RepeatAndSelect({self.base.describe()}, mean={self.mean:g}, {law})"
