"""The discrete Gaussian mechanism f(x) + N_Z(0, sigma^2) on the integers.

References
----------
Canonne, Kamath, Steinke, "The discrete Gaussian for differential privacy", NeurIPS 2020
(arXiv:2004.00010): the definition of the discrete Gaussian N_Z(mu, sigma^2) (P(Z = z)
proportional to e^{-(z - mu)^2/(2 sigma^2)} on the integers), its concentrated-DP theorem (a
query of integer sensitivity Delta plus N_Z(0, sigma^2) is (Delta^2/(2 sigma^2))-zCDP, the same
rho as the continuous Gaussian), and its exact samplers: the framed procedures "Algorithm for
Sampling Bernoulli(exp(-gamma))" (von Neumann's method, rational gamma, gamma > 1 as floor(gamma)
draws of Bernoulli(e^{-1}) and one of the fractional part), the discrete Laplace sampler for a
rational scale, and the discrete Gaussian by rejection from the discrete Laplace with scale
t = floor(sigma) + 1. (The arXiv v5 TeX typesets these procedures as figures, not numbered
"Algorithms", and the theorem numbers could not be checked against a numbered copy here, so
they are cited by name; the authors' reference implementation, discretegauss.py, has the same
steps.)

Privacy loss. Write S(c) = sum_{z in Z} e^{-(z + c)^2/(2 sigma^2)} (a theta function), P =
N_Z(0, sigma^2), Q = N_Z(Delta, sigma^2); both have normaliser S(0) (an integer shift). Then

    L(z) = log P(z)/Q(z) = Delta (Delta - 2 z)/(2 sigma^2),

infinitely many atoms, one per integer. The map z -> Delta - z swaps P and Q and negates L, so
the pair is symmetric. E_P[L] = Delta^2/(2 sigma^2) exactly (E_P[Z] = 0).

Renyi divergence (Mironov 2017, Def. 3), lambda = alpha - 1: completing the square,

    E_P[e^{lambda L}] = e^{lambda (lambda + 1) Delta^2/(2 sigma^2)} S(lambda Delta)/S(0),
    D_alpha = alpha Delta^2/(2 sigma^2) + log(S(c)/S(0))/lambda,   c = frac(lambda Delta),

exact (S has period 1 and is even). By Poisson summation S(c) = sqrt(2 pi) sigma
(1 + 2 sum_{k>=1} q^{k^2} cos(2 pi k c)), q = e^{-2 pi^2 sigma^2}, so

    S(c)/S(0) - 1 = -4 sum_k q^{k^2} sin^2(pi k c) / (1 + 2 sum_k q^{k^2}) in (-1, 0],

a sum of terms of one sign (no cancellation). Hence D_alpha <= alpha Delta^2/(2 sigma^2) (the
zCDP line, attained by the continuous Gaussian), with a correction that vanishes like q for
large sigma. D_inf = inf (the loss is unbounded): no pure DP.
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
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.loss_pairs import DiscretePair, NonPrivatePair, PrivacyLoss, nonprivate_loss
from dpaudit.mechanisms.nonprivate import nonprivate_rdp

__all__ = ["DiscreteGaussian", "discrete_gaussian_rdp", "discrete_gaussian_log_normaliser",
           "discrete_gaussian_tail_bound", "MAX_SENSITIVITY", "MAX_SAMPLING_SIGMA", "PLD_TAIL",
           "MAX_PAIR_ATOMS", "sample_discrete_gaussian", "sample_discrete_laplace", "MAX_SCALE_NUMERATOR"]

#: largest integer sensitivity accepted
MAX_SENSITIVITY = 10_000
#: largest sigma the exact sampler accepts (its discrete Laplace scale t*K must stay in int64)
MAX_SAMPLING_SIGMA = 2.0 ** 40
#: smallest sigma the exact sampler accepts (below it the rejection rate is e^{-gamma} with
#: huge gamma only in the tails; kept away from float-underflowing sigma^2)
MIN_SAMPLING_SIGMA = 2.0 ** -20
#: largest |value| the sampler accepts (value + noise stays inside int64)
_MAX_VALUE = 2 ** 61
#: P-mass of the truncated tails charged as a distinguishing event in the PLD upper pair
PLD_TAIL = 1e-25
#: largest number of loss atoms kept individually in the PLD pairs (beyond: grouped)
MAX_PAIR_ATOMS = 2001
#: relative margin of the RDP upper bound over its evaluated value (measured error < 1e-15,
#: tests/mechanisms/test_discrete_gaussian.py against mpmath)
_RDP_REL = 1e-13
#: largest Delta^2/(2 sigma^2) whose privacy loss is described by its pair
_LOSS_MAX = 1e150
#: smallest sigma whose theta ratio is evaluated by the Poisson series (63,000 terms there)
_POISSON_MIN_SIGMA = 1e-4
#: iteration bounds of the sampler's loops (each exceeded with probability < 2^-1000)
_MAX_ROUNDS = 4000


def _theta_terms(sigma: float) -> tuple[np.ndarray, float]:
    """(k, log q) of the Poisson series, k = 1..K with q^{K^2} < e^{-800} (the rest is below
    any float's ulp relative to the leading 1)."""
    log_q = -2.0 * math.pi ** 2 * sigma * sigma
    kmax = max(1, int(math.ceil(math.sqrt(800.0 / -log_q))) + 1) if log_q < 0 else 1
    return np.arange(1, kmax + 1, dtype=float), log_q


def discrete_gaussian_log_normaliser(sigma: float) -> float:
    """log S(0) = log sum_z e^{-z^2/(2 sigma^2)} (direct sum for sigma < 1, Poisson series else)."""
    if sigma < 1.0:
        n = int(math.ceil(40.0 * sigma)) + 2
        z = np.arange(1, n + 1, dtype=float)
        with np.errstate(under="ignore"):
            return math.log1p(2.0 * float(np.sum(np.exp(-(z / sigma) ** 2 / 2.0))))
    k, log_q = _theta_terms(sigma)
    with np.errstate(under="ignore"):
        s = float(np.sum(np.exp(log_q * k * k)))
    return 0.5 * math.log(2.0 * math.pi) + math.log(sigma) + math.log1p(2.0 * s)


def discrete_gaussian_tail_bound(sigma: float, n: int) -> float:
    """An upper bound on P(Z > n) = P(Z < -n) for Z ~ N_Z(0, sigma^2), n >= 0:
    sum_{z > n} e^{-z^2/(2s^2)} <= e^{-(n+1)^2/(2s^2)}/(1 - e^{-(n+1)/s^2}) (z^2 >= (n+1)^2 +
    2 (n+1) j for z = n + 1 + j), divided by S(0) (rounded down by a relative 1e-13)."""
    m = float(n + 1)
    with np.errstate(under="ignore"):
        log_b = -m * m / (2.0 * sigma * sigma) - math.log(-math.expm1(-m / (sigma * sigma)))
    log_b -= discrete_gaussian_log_normaliser(sigma) * (1.0 - 1e-13)
    return round_up(math.exp(log_b)) if log_b > -745.0 else 5e-324


def _log_theta_ratio(sigma: float, c: float) -> float:
    """log(S(c)/S(0)) for c in [0, 1/2] (module docstring), <= 0."""
    if c == 0.0:
        return 0.0
    if sigma >= _POISSON_MIN_SIGMA:
        k, log_q = _theta_terms(sigma)  # at most 6.3/sigma terms
        with np.errstate(under="ignore"):
            w = np.exp(log_q * k * k)
            r1 = -4.0 * float(np.sum(w * np.sin(math.pi * k * c) ** 2)) / (1.0 + 2.0 * float(np.sum(w)))
        if r1 >= -0.5:
            return math.log1p(r1)
    # S(c) <= S(0)/2 (then |log ratio| >= log 2 and the direct difference keeps its relative
    # accuracy), or sigma < 1e-4 (then S(0) = 1 and S(c) = e^{-c^2/(2 sigma^2)} (1 + e^{-(1 - 2c)
    # /(2 sigma^2)}) in floats, both exact to an ulp): direct sums, log-sum-exps of positive terms
    n = int(math.ceil(40.0 * sigma)) + 3
    z = np.arange(-n, n + 1, dtype=float)
    with np.errstate(under="ignore"):
        return float(special.logsumexp(-((z + c) / sigma) ** 2 / 2.0)
                     - special.logsumexp(-(z / sigma) ** 2 / 2.0))


def discrete_gaussian_rdp(sigma: float, sensitivity: int, orders) -> np.ndarray:
    """D_alpha(P || Q) of N_Z(0, sigma^2) against N_Z(sensitivity, sigma^2), rounded up by a
    relative margin and capped at the zCDP line alpha Delta^2/(2 sigma^2) (module docstring)."""
    a = np.asarray(orders, dtype=float)
    out = np.empty(a.shape)
    d = sensitivity
    rho = (d / sigma) ** 2 / 2.0 if d / sigma < 1e154 else math.inf
    for i, alpha in enumerate(a):
        if not math.isfinite(alpha) or not math.isfinite(rho):
            out[i] = math.inf
            continue
        line = alpha * rho
        if not math.isfinite(line):
            out[i] = math.inf
            continue
        lam = Fraction(float(alpha)) - 1
        frac = (lam * d) % 1
        c = float(min(frac, 1 - frac))
        corr = _log_theta_ratio(sigma, c) / float(lam)
        val = line + corr
        val += _RDP_REL * (line + abs(corr))
        out[i] = min(round_up(val), round_up(line))
    return out


def _pair_grid(sigma: float, d: int) -> tuple[np.ndarray, float]:
    """The kept integers z in [-n, d + n] (symmetric under z -> d - z) and the certified bound on
    the P-mass outside them (the left tail z < -n plus the right tail z > d + n)."""
    n = int(math.ceil(sigma * math.sqrt(2.0 * math.log(1.0 / PLD_TAIL)))) + 1
    tail = discrete_gaussian_tail_bound(sigma, n) + discrete_gaussian_tail_bound(sigma, n + d)
    return np.arange(-n, d + n + 1, dtype=float), tail


def _pairs(sigma: float, d: int):
    """(upper, lower, ungrouped) DiscretePairs of the truncated support (see
    DiscreteGaussian.privacy_loss)."""
    z, tail = _pair_grid(sigma, d)
    n = int(-z[0])
    log_s = discrete_gaussian_log_normaliser(sigma)
    # the clamped outputs min(max(z, -n), d + n) of the lower pair: the end atoms carry the tails
    # (summed out to 3n, beyond which the mass is below 1e-200 of theirs)
    zl = np.arange(-3 * n - 1, -n, dtype=float)
    with np.errstate(under="ignore"):
        log_p = -(z / sigma) ** 2 / 2.0 - log_s
        log_q = -((z - d) / sigma) ** 2 / 2.0 - log_s
        lo_p, lo_q = log_p.copy(), log_q.copy()
        lo_p[0] = np.logaddexp(lo_p[0], special.logsumexp(-(zl / sigma) ** 2 / 2.0 - log_s))
        lo_q[0] = np.logaddexp(lo_q[0], special.logsumexp(-((zl - d) / sigma) ** 2 / 2.0 - log_s))
    lo_p[-1], lo_q[-1] = lo_q[0], lo_p[0]  # z -> d - z swaps P and Q
    loss = d * (d - 2.0 * z) / (2.0 * sigma * sigma)
    if z.size <= MAX_PAIR_ATOMS:
        upper = DiscretePair(loss, None, inf_mass=tail, minf_mass=tail, log_p=log_p)
        lower = DiscretePair(lo_p - lo_q, None, log_p=lo_p)
        return upper, lower, True
    groups = np.array_split(np.arange(z.size), MAX_PAIR_ATOMS)
    lp = np.array([float(special.logsumexp(log_p[g])) for g in groups])
    lmax = np.array([float(loss[g[0]]) for g in groups])  # loss decreases in z
    # upper: each group keeps its P-mass at the group's largest loss; Q-masses p e^{-lmax} <= Q_G,
    # the deficit (and the tails' Q-mass) at loss -inf
    with np.errstate(under="ignore"):
        q_kept = float(np.sum(np.exp(lp - lmax)))
    minf = max(1.0 - q_kept, 0.0) + tail
    upper = DiscretePair(lmax, None, inf_mass=tail, minf_mass=minf, log_p=lp)
    glp = np.array([float(special.logsumexp(lo_p[g])) for g in groups])
    glq = np.array([float(special.logsumexp(lo_q[g])) for g in groups])
    lower = DiscretePair(glp - glq, None, log_p=glp)
    return upper, lower, False


def _ratio_sq(d: int, sigma: float) -> float:
    r = d / sigma
    return r * r / 2.0 if r < 1e154 else math.inf


@dataclass(frozen=True)
class DiscreteGaussian(Mechanism):
    """Discrete Gaussian mechanism: output ``value + N_Z(0, sigma^2)`` on the integers.

    ``sigma`` > 0 (the pmf is proportional to e^{-z^2/(2 sigma^2)}; the variance is slightly
    below sigma^2), ``sensitivity`` the integer sensitivity (1 <= sensitivity <=
    :data:`MAX_SENSITIVITY`) under ``neighbouring``. The sampler is exact (the samplers of
    Canonne, Kamath, Steinke 2020, module docstring) in integer and rational arithmetic; outputs
    are int64.

    Curves
    ------
    rdp(alpha)        alpha rho + log(S(c)/S(0))/(alpha - 1), module docstring       [exact]
    zcdp()            rho = sensitivity^2/(2 sigma^2) (CKS 2020, concentrated DP)     [tight as alpha -> 1]
    pure_epsilon()    inf (the loss is unbounded)                                     [exact]
    privacy_loss()    the pair over [-n, Delta + n] with the tails (P-mass <= 1e-25)
                      charged as distinguishing events (upper) / dropped into merged
                      atoms (lower); grouped beyond 2001 atoms                         [bracket]

    ``sigma = 0`` (no noise) is a non-private release (:meth:`non_private`): every curve is
    ``inf``, ``sample`` returns the value itself.
    """

    sigma: float
    sensitivity: int = 1
    neighbouring: str = "add_remove"

    def __post_init__(self):
        object.__setattr__(self, "sigma", check_nonnegative("sigma", self.sigma))
        object.__setattr__(self, "sensitivity", check_integer_sensitivity("sensitivity", self.sensitivity, maximum=MAX_SENSITIVITY))
        check_neighbouring("neighbouring", self.neighbouring)

    def non_private(self) -> bool:
        """No noise (sigma = 0): the output is the query value."""
        return self.sigma == 0.0

    @property
    def rho(self) -> float:
        """sensitivity^2/(2 sigma^2), not rounded (inf on overflow, and for sigma = 0)."""
        return _ratio_sq(self.sensitivity, self.sigma) if self.sigma > 0 else math.inf

    def rdp(self, orders) -> np.ndarray:
        if self.non_private():
            return nonprivate_rdp(orders)
        orders = check_orders("orders", orders)
        return discrete_gaussian_rdp(self.sigma, self.sensitivity, orders)

    def zcdp(self) -> float:
        rho = self.rho
        return round_up(rho) if math.isfinite(rho) else math.inf

    def has_zcdp_guarantee(self) -> bool:
        return not self.non_private()

    def pure_epsilon(self) -> float:
        return math.inf

    def privacy_loss(self) -> PrivacyLoss:
        """Upper pair: the outcomes z in [-n, Delta + n] kept, the tails split into one outcome
        with P-mass P(tails) and Q-mass 0 (loss +inf) and one with Q-mass Q(tails), P-mass 0
        (loss -inf) -- post-processing the split pair (emit a tail draw from P or Q restricted
        to the tails) gives (P, Q) back, so it dominates; its delta exceeds the true one by at
        most P(tails) <= 1e-25. Beyond :data:`MAX_PAIR_ATOMS` atoms consecutive outcomes are
        grouped at their largest loss with the Q-deficit at -inf (again dominating). Lower pair:
        the kept outcomes with the tails merged away (post-processing, attained). sigma = 0:
        the non-private pair."""
        if self.non_private():
            return nonprivate_loss()
        if not self.rho <= _LOSS_MAX:
            return PrivacyLoss.symmetric_pair(NonPrivatePair(), [], "nonprivate")
        upper, lower, exact_atoms = _pairs(self.sigma, self.sensitivity)
        label = "discrete-gaussian" if exact_atoms else "discrete-gaussian-grouped"
        return PrivacyLoss.symmetric_pair(upper, [lower], label)

    def likelihood_ratio_test(self):
        """On (0, sensitivity): log p(y | D)/p(y | 0) = D (2 y - D)/(2 sigma^2) (``None`` for
        sigma = 0)."""
        if self.non_private():
            return None
        d, s = self.sensitivity, self.sigma
        return 0, d, lambda y: d * (2.0 * np.asarray(y, dtype=float) - d) / (2.0 * s * s)

    def sample(self, value, rng: np.random.Generator, size=None):
        """``value + N_Z(0, sigma^2)`` draws as int64, shape ``size + value.shape``.

        Exact (Canonne, Kamath, Steinke 2020, the discrete Gaussian sampler): propose Y ~ DLap(t), t = floor(sigma)
        + 1, accept with probability e^{-(|Y| - sigma^2/t)^2/(2 sigma^2)}; sigma^2 is taken as the
        exact rational value of the float sigma squared, every Bernoulli is decided on integers.
        The noise does not depend on ``value``: draws for ``value`` are those for 0 shifted.
        """
        if self.non_private():
            v = check_integer_values("value", value, max_abs=_MAX_VALUE)
            return np.broadcast_to(v, v.shape if size is None else tuple(np.atleast_1d(size)) + v.shape).copy()
        if not MIN_SAMPLING_SIGMA <= self.sigma <= MAX_SAMPLING_SIGMA:
            raise ValueError(f"sigma must be in [2^-20, 2^40] to sample exactly, got {self.sigma!r}")
        v = check_integer_values("value", value, max_abs=_MAX_VALUE)
        shape = v.shape if size is None else tuple(np.atleast_1d(size)) + v.shape
        n = int(np.prod(shape)) if shape else 1
        noise = sample_discrete_gaussian(self.sigma, n, rng).reshape(shape)
        return v + noise

    def describe(self) -> str:
        return (f"DiscreteGaussian(sigma={self.sigma:g}, sensitivity={self.sensitivity}, "
                f"rho={self.rho:g}, {self.neighbouring})")


# --- exact samplers (Canonne, Kamath, Steinke 2020; module docstring) ----------------------

def _bernoulli_exp_minus_one(rng: np.random.Generator, n: int) -> np.ndarray:
    """n draws of Bernoulli(e^{-1}) (the Bernoulli(exp(-gamma)) procedure with gamma = 1: K = 1, 2, ... while
    Bernoulli(1/K) succeeds; the result is K odd), Bernoulli(1/K) = [uniform{0..K-1} == 0]."""
    k = np.ones(n, dtype=np.int64)
    active = np.ones(n, dtype=bool)
    for _ in range(_MAX_ROUNDS):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            return (k % 2) == 1
        hit = rng.integers(0, k[idx]) == 0
        k[idx[hit]] += 1
        active[idx[~hit]] = False
    raise RuntimeError("Bernoulli(exp(-1)) sampler exceeded its iteration bound")  # pragma: no cover


def _bernoulli_frac(num, den, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(num/den) for arrays of Python ints 0 <= num <= den (object dtype), exactly:
    compare a uniform 64-bit integer R with f = floor(2^64 num/den); R < f succeeds, R > f fails,
    a tie (probability 2^-64) continues with the next 64 bits of num/den."""
    n = len(num)
    out = np.zeros(n, dtype=bool)
    num = np.array(num, dtype=object)
    den = np.array(den, dtype=object)
    idx = np.arange(n)
    for _ in range(64):
        if idx.size == 0:
            return out
        scaled = num[idx] * (1 << 64)
        f = scaled // den[idx]
        r = rng.integers(0, 2 ** 64, size=idx.size, dtype=np.uint64).astype(object)
        out[idx[r < f]] = True
        tie = r == f
        num[idx[tie]] = scaled[tie] - f[tie] * den[idx[tie]]
        idx = idx[tie]
    raise RuntimeError("Bernoulli sampler exceeded its iteration bound")  # pragma: no cover


def _bernoulli_exp_frac(num, den, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(e^{-num/den}) for 0 <= num/den <= 1 (the Bernoulli(exp(-gamma)) procedure): K = 1, 2, ... while
    Bernoulli(gamma/K) succeeds; the result is K odd."""
    n = len(num)
    num = np.array(num, dtype=object)
    den = np.array(den, dtype=object)
    k = np.ones(n, dtype=np.int64)
    active = np.ones(n, dtype=bool)
    for _ in range(_MAX_ROUNDS):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            return (k % 2) == 1
        hit = _bernoulli_frac(num[idx], den[idx] * k[idx].astype(object), rng)
        k[idx[hit]] += 1
        active[idx[~hit]] = False
    raise RuntimeError("Bernoulli(exp(-gamma)) sampler exceeded its iteration bound")  # pragma: no cover


def _bernoulli_exp(num, den, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(e^{-num/den}) for rational gamma = num/den >= 0 (the Bernoulli(exp(-gamma)) procedure; gamma > 1: floor
    gamma draws of Bernoulli(e^{-1}), all must succeed, then Bernoulli(e^{-frac gamma}))."""
    num = np.array(num, dtype=object)
    den = np.array(den, dtype=object)
    g = num // den
    out = np.ones(len(num), dtype=bool)
    need = np.array([int(x) for x in g], dtype=object)
    alive = np.flatnonzero(need > 0)
    rounds = 0
    while alive.size:
        rounds += 1
        if rounds > 10 ** 7:  # pragma: no cover - each round kills a fraction 1 - e^{-1}
            raise RuntimeError("Bernoulli(exp(-gamma)) sampler exceeded its iteration bound")
        ok = _bernoulli_exp_minus_one(rng, alive.size)
        out[alive[~ok]] = False
        need[alive] -= 1
        alive = alive[ok & (need[alive] > 0)]
    idx = np.flatnonzero(out)
    if idx.size:
        out[idx] = _bernoulli_exp_frac(num[idx] - g[idx] * den[idx], den[idx], rng)
    return out


#: largest numerator s of a rational discrete Laplace scale s/d the int64 sampler accepts
MAX_SCALE_NUMERATOR = 2 ** 53


def _discrete_laplace_rational(num: int, den: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """n draws of DLap(num/den) (P(z) proportional to e^{-|z| den/num}) for integers 1 <= num <=
    2^53, den >= 1, as int64 -- the rational-scale discrete Laplace sampler of Canonne, Kamath,
    Steinke 2020 (arXiv:2004.00010; the authors' discretegauss.py, sample_dlaplace):

    * X ~ Geometric(1 - e^{-1/num}) as U + num V: U uniform on {0, .., num - 1} accepted with
      probability e^{-U/num} (the Bernoulli(e^{-gamma}) procedure with gamma = U/num < 1, each
      Bernoulli(U/(num K)) decided on integers), V the number of Bernoulli(e^{-1}) successes
      before the first failure (P(X = k) proportional to e^{-k/num});
    * Y = floor(X/den) ~ Geometric(1 - e^{-den/num}) (a block of den consecutive values of X);
    * a fair sign; (negative, 0) is rejected, so P(z) is proportional to e^{-|z| den/num}.

    Every step is integer arithmetic: no floating-point value touches the output."""
    if not (1 <= num <= MAX_SCALE_NUMERATOR and den >= 1):  # pragma: no cover - checked by callers
        raise ValueError("the scale must be num/den with 1 <= num <= 2^53 and den >= 1")
    out = np.empty(n, dtype=np.int64)
    filled = 0
    for _ in range(_MAX_ROUNDS):
        if filled >= n:
            return out
        m = max(2 * (n - filled), 64)
        u = rng.integers(0, num, size=m, dtype=np.int64)
        # D ~ Bernoulli(e^{-u/num}): K = 1, 2, ... while Bernoulli(u/(num K)) succeeds; K odd
        k = np.ones(m, dtype=np.int64)
        active = np.ones(m, dtype=bool)
        for _r in range(_MAX_ROUNDS):
            idx = np.flatnonzero(active)
            if idx.size == 0:
                break
            if int(k[idx].max()) > (2 ** 62) // num:  # pragma: no cover - probability < 1/512!
                raise RuntimeError("discrete Laplace sampler left the int64 range")
            hit = rng.integers(0, num * k[idx]) < u[idx]
            k[idx[hit]] += 1
            active[idx[~hit]] = False
        else:  # pragma: no cover
            raise RuntimeError("discrete Laplace sampler exceeded its iteration bound")
        keep = (k % 2) == 1
        u = u[keep]
        # V: number of Bernoulli(e^{-1}) successes before the first failure
        v = np.zeros(u.size, dtype=np.int64)
        alive = np.arange(u.size)
        for _r in range(_MAX_ROUNDS):
            if alive.size == 0:
                break
            ok = _bernoulli_exp_minus_one(rng, alive.size)
            v[alive[ok]] += 1
            alive = alive[ok]
        else:  # pragma: no cover
            raise RuntimeError("discrete Laplace sampler exceeded its iteration bound")
        if v.size and int(v.max()) >= (2 ** 62) // num:  # pragma: no cover - probability < e^{-500}
            raise RuntimeError("discrete Laplace sampler left the int64 range")
        x = u + num * v
        y_mag = x // den if den < 2 ** 62 else np.zeros_like(x)
        y = rng.integers(0, 2, size=x.size)
        good = ~((y == 1) & (y_mag == 0))
        z = ((1 - 2 * y) * y_mag)[good]
        take = min(z.size, n - filled)
        out[filled:filled + take] = z[:take]
        filled += take
    raise RuntimeError("discrete Laplace sampler exceeded its iteration bound")  # pragma: no cover


def _discrete_laplace_int(t: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """n draws of DLap(t) for an integer scale t, as int64."""
    return _discrete_laplace_rational(t, 1, n, rng)


def sample_discrete_laplace(scale, n: int, rng: np.random.Generator) -> np.ndarray:
    """n exact draws of DLap(scale) as int64 for a rational ``scale`` > 0 (an int, a
    ``fractions.Fraction``, or a float taken as the exact binary fraction it represents), with
    numerator at most 2^53 in lowest terms (every float scale up to 2^50 qualifies)."""
    try:
        frac = Fraction(scale)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"scale must be a positive rational number, got {scale!r}") from None
    if isinstance(scale, bool) or not frac > 0:
        raise ValueError(f"scale must be a positive rational number, got {scale!r}")
    if frac.numerator > MAX_SCALE_NUMERATOR:
        raise ValueError(f"scale must have a numerator of at most 2^53 in lowest terms, got {scale!r}")
    return _discrete_laplace_rational(frac.numerator, frac.denominator, int(n), rng)


def sample_discrete_gaussian(sigma: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """n exact draws of N_Z(0, sigma^2) as int64 (the discrete Gaussian sampler with sigma^2 the exact rational
    square of the float sigma): Y ~ DLap(t), t = floor(sigma) + 1, accepted with probability
    exp(-(|Y| t D - N)^2/(2 N D t^2)) where sigma^2 = N/D."""
    s2 = Fraction(float(sigma)) ** 2
    big_n, big_d = s2.numerator, s2.denominator
    t = int(math.floor(sigma)) + 1
    out = np.empty(n, dtype=np.int64)
    filled = 0
    den = 2 * big_n * big_d * t * t
    for _ in range(_MAX_ROUNDS):
        if filled >= n:
            return out
        m = max(2 * (n - filled), 64)  # acceptance rate >= about 0.6 (CKS 2020, Sec. 5)
        y = _discrete_laplace_int(t, m, rng)
        a = np.abs(y).astype(object) * (t * big_d) - big_n
        acc = _bernoulli_exp(a * a, np.full(m, den, dtype=object), rng)
        z = y[acc]
        take = min(z.size, n - filled)
        out[filled:filled + take] = z[:take]
        filled += take
    raise RuntimeError("discrete Gaussian sampler exceeded its iteration bound")  # pragma: no cover
