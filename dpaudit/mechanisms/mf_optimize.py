"""Error of a strategy on the prefix-sum workload, and optimised banded-Toeplitz and BLT strategies.

Error. With noise z ~ N(0, sigma^2 I) the released prefix sums ``A x + B z`` (B = A C^{-1}) have
per-query squared error sigma^2 ||B_t||^2 (row t of B). At a fixed privacy level the noise must be
sigma = sens(C) / mu (the Gaussian mechanism ``C x + z`` at mu-GDP), so the error of a strategy at a
given privacy level is proportional to

    err_mean(C) = sens(C)^2 * (1/n) sum_t ||B_t||^2,    err_max(C) = sens(C)^2 * max_t ||B_t||^2

(Denisov et al. 2022, Eq. (3); Choquette-Choo et al. 2023, arXiv:2211.06530, Sec. 3: the loss
they minimise). Both are invariant under C -> s C.

Toeplitz strategies (first column c): C^{-1} is Toeplitz with first column r = C^{-1} e_0, B is
Toeplitz with first column b = cumsum(r), ||B_t||^2 = sum_{s<=t} b_s^2, so

    (1/n) sum_t ||B_t||^2 = sum_s b_s^2 (n - s)/n,   max_t ||B_t||^2 = sum_s b_s^2.

Gradient (adjoint method): with g = d err / d r (a reverse cumulative sum of 2 b_s w_s) and
lambda = C^{-T} g (C^{-T} = J C^{-1} J for the flip J, since C is Toeplitz),
d err / d c_k = - sum_{t >= k} lambda_t r_{t-k} (differentiating r = C^{-1} e_0). Costs: O(n b) for b
bands (an IIR filter with denominator c), O(n m + n log n) for a BLT with m buffers (C = P/Q rational
of degree m, C^{-1} = Q/P; the correlation by FFT). Sensitivity under k participations b apart
(:mod:`~dpaudit.mechanisms.mf_participation`) is ||v||^2, v = sum_{m<k} c shifted by m b, with gradient
2 sum_m v_{j + m b}: exact for bands <= b, and for c >= 0 non-increasing otherwise -- the BLT and
the monotone banded parameterisations below keep c >= 0 non-increasing by construction:

* banded, bands <= separation: free coefficients; bands > separation: c_j = sum_{l >= j} d_l^2;
* BLT: theta_k = 1/(1 + e^{-a_k}) in (0, 1), omega_k = e^{u_k} / (1 + sum_l e^{u_l}) (so
  c_1 = sum omega < 1 = c_0 and c_t decreases for t >= 1).

L-BFGS-B (scipy.optimize.minimize, at most ``max_iter`` iterations) with the analytic gradient;
jax is not used. Banded strategies start from the truncated coefficients of (1 - x)^{-1/2}
(McKenna 2024, arXiv:2405.15913, Sec. 4); BLTs from decays spread geometrically in 1 - theta.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, signal, special

from dpaudit.core.validation import check_count
from dpaudit.mechanisms.mf_participation import Participation, mf_sensitivity
from dpaudit.mechanisms.mf_strategies import (
    BandedToeplitz,
    BLTStrategy,
    Strategy,
    check_dense,
    geometric_bands,
    toeplitz_solve,
)
from dpaudit.mechanisms.tree_aggregation import prefix_noise_matrix, tree_depth

__all__ = ["per_query_error", "strategy_error", "tree_error", "StrategyError", "OptimizationResult",
           "optimize_banded_toeplitz", "optimize_blt", "tree_node_matrix", "ERRORS"]

ERRORS = ("mean", "max")


@dataclass(frozen=True)
class StrategyError:
    """The error of a strategy on the prefix sums at unit mu: ``mean`` and ``max`` are
    sens^2 * mean_t / max_t ||B_t||^2 (multiply by 1/mu^2 for the squared error at mu-GDP, with unit
    clip bound); ``sensitivity`` is sens(C) under the schema (its ``exact`` flag included)."""

    name: str
    sensitivity: float
    sensitivity_exact: bool
    mean: float
    max: float

    @property
    def rmse(self) -> float:
        """sqrt(mean): the root-mean-squared prefix-sum error at mu = 1."""
        return math.sqrt(self.mean)


@dataclass(frozen=True)
class OptimizationResult:
    """An optimised strategy with its loss (sens^2 * error), iterations and the optimiser's message."""

    strategy: Strategy
    loss: float
    error: str
    iterations: int
    converged: bool
    message: str = ""
    history: tuple = field(default=(), repr=False)


def _check_error(error: str) -> str:
    if error not in ERRORS:
        raise ValueError(f"error must be one of {ERRORS}, got {error!r}")
    return error


def _weights(n: int, error: str) -> np.ndarray:
    return (n - np.arange(n)) / n if error == "mean" else np.ones(n)


def per_query_error(strategy: Strategy) -> np.ndarray:
    """||B_t||^2 for every step t (B = A C^{-1}, unit noise variance)."""
    c = strategy.toeplitz()
    n = strategy.steps
    if c is not None:
        b = np.cumsum(strategy.solve(np.eye(1, n).ravel()))
        return np.cumsum(b * b)
    check_dense(n)
    B = np.cumsum(strategy.solve(np.eye(n)), axis=0)
    return np.sum(B * B, axis=1)


def strategy_error(strategy: Strategy, participation: Participation | None = None, name: str = "") -> StrategyError:
    """:class:`StrategyError` of ``strategy`` under ``participation`` (default single)."""
    sens = mf_sensitivity(strategy, participation)
    e = per_query_error(strategy)
    s2 = sens.value ** 2
    return StrategyError(name or strategy.describe(), sens.value, sens.exact, float(s2 * np.mean(e)),
                         float(s2 * np.max(e)))


def tree_error(steps: int, participation: Participation | None = None) -> StrategyError:
    """The binary tree of :class:`~dpaudit.mechanisms.tree_aggregation.TreeAggregation` as a
    factorisation A = B C with C the (nodes x steps) 0/1 node matrix and B its prefix selector:
    ||B_t||^2 = popcount(t) (nodes summed into prefix t), sens(C) from the node matrix under the
    schema (single participation: sqrt(depth))."""
    n = check_count("steps", steps, minimum=1)
    part = Participation.single() if participation is None else participation
    part.check(n)
    e = np.array([bin(t).count("1") for t in range(1, n + 1)], dtype=float)
    if part.kind == "single":
        s = math.sqrt(tree_depth(n))
        exact = True
    else:
        check_dense(n)
        res = mf_sensitivity(tree_node_matrix(n), part)
        s, exact = res.value, res.exact
    return StrategyError(f"binary tree, {n} steps", s, exact, float(s * s * np.mean(e)), float(s * s * np.max(e)))


def tree_node_matrix(steps: int) -> np.ndarray:
    """The (nodes x steps) 0/1 matrix C of the binary tree: node (level k, position j) sums steps
    j 2^k .. (j + 1) 2^k - 1 (0-based; nodes ordered by level, then position, as the columns of
    :func:`~dpaudit.mechanisms.tree_aggregation.prefix_noise_matrix`, so A = B C with that B)."""
    n = check_count("steps", steps, minimum=1)
    check_dense(n)
    out = np.zeros((prefix_noise_matrix(n).shape[1], n))
    row = 0
    for k in range(tree_depth(n)):
        for j in range(n >> k):
            out[row, j << k:(j + 1) << k] = 1.0
            row += 1
    return out


# ---------------------------------------------------------------------------------------------
# Toeplitz loss and gradient


def _schema(n: int, participation: Participation | None) -> tuple[int, int]:
    part = Participation.single() if participation is None else participation
    part.check(n)
    return part.count(n), part.separation_in(n)


def _sens_and_grad(c: np.ndarray, k: int, sep: int) -> tuple[float, np.ndarray]:
    """||v||^2 and its gradient for v = sum_{m<k} c shifted by m sep (c of length n)."""
    n = c.size
    if k == 1:
        return float(c @ c), 2.0 * c
    pad = (-n) % sep
    w = np.concatenate([c, np.zeros(pad)]).reshape(-1, sep).cumsum(axis=0).ravel()[:n]
    v = w.copy()
    if k * sep < n:
        v[k * sep:] -= w[: n - k * sep]
    # d||v||^2/dc_j = 2 sum_{m<k, j + m sep < n} v_{j + m sep}: suffix sums over each residue mod sep
    fw = np.concatenate([v, np.zeros(pad)]).reshape(-1, sep)
    tail = fw[::-1].cumsum(axis=0)[::-1].ravel()[:n]  # sum_{m >= 0} v_{j + m sep}
    grad = tail.copy()
    if k * sep < n:
        grad[: n - k * sep] -= tail[k * sep:]
    return float(v @ v), 2.0 * grad


def _error_and_grad_r(r: np.ndarray, w: np.ndarray) -> tuple[float, np.ndarray]:
    """err = sum_s b_s^2 w_s with b = cumsum(r), and d err / d r."""
    b = np.cumsum(r)
    gb = 2.0 * b * w
    return float(np.sum(b * b * w)), np.cumsum(gb[::-1])[::-1]


def _banded_loss(c_b: np.ndarray, n: int, w: np.ndarray, k: int, sep: int) -> tuple[float, np.ndarray]:
    """sens^2 * err for the banded Toeplitz with coefficients c_b (length nb), and its gradient."""
    nb = c_b.size
    with np.errstate(over="ignore", invalid="ignore"):
        r = toeplitz_solve(c_b, np.eye(1, n).ravel())
        err, gr = _error_and_grad_r(r, w)
        if not math.isfinite(err):
            return math.inf, np.zeros(nb)
        lam = toeplitz_solve(c_b, gr[::-1])[::-1]
        d_err = -np.array([lam[j:] @ r[: n - j] for j in range(nb)])
    c_full = np.zeros(n)
    c_full[:nb] = c_b
    s2, d_s2 = _sens_and_grad(c_full, k, sep)
    return s2 * err, s2 * d_err + err * d_s2[:nb]


def _minimize(fun, x0, max_iter):
    hist = []

    def wrapped(x):
        val, g = fun(x)
        hist.append(val)
        if not math.isfinite(val):
            return 1e300, np.zeros_like(x)
        return val, g

    res = optimize.minimize(wrapped, x0, jac=True, method="L-BFGS-B",
                            options={"maxiter": int(max_iter), "maxfun": 4 * int(max_iter), "ftol": 1e-13,
                                     "gtol": 1e-10})
    return res, tuple(hist)


def optimize_banded_toeplitz(steps: int, bands: int, participation: Participation | None = None, *,
                             error: str = "mean", max_iter: int = 500, init=None) -> OptimizationResult:
    """The banded Toeplitz strategy with ``bands`` bands minimising sens^2 * err (``error``: "mean"
    or "max") under ``participation`` (module docstring); coefficients normalised to unit norm."""
    n = check_count("steps", steps, minimum=1)
    nb = min(check_count("bands", bands, minimum=1), n)
    _check_error(error)
    k, sep = _schema(n, participation)
    w = _weights(n, error)
    c0 = np.asarray(geometric_bands(nb, n).coefs if init is None else init, dtype=float)[:nb]
    monotone = nb > sep and k > 1
    if monotone:  # c_j = sum_{l >= j} d_l^2 keeps c >= 0 non-increasing (exact sensitivity path)
        c0 = np.maximum.accumulate(np.abs(c0)[::-1])[::-1]
        d0 = np.sqrt(np.maximum(-np.diff(np.concatenate([c0, [0.0]])), 1e-12))

        def fun(d):
            c = np.cumsum((d * d)[::-1])[::-1]
            val, g = _banded_loss(c, n, w, k, sep)
            return val, 2.0 * d * np.cumsum(g)
        res, hist = _minimize(fun, d0, max_iter)
        c = np.cumsum((res.x * res.x)[::-1])[::-1]
    else:
        def fun(c):
            return _banded_loss(c, n, w, k, sep)
        res, hist = _minimize(fun, c0, max_iter)
        c = res.x
    strat = BandedToeplitz(tuple(c), n, True)
    loss = _banded_loss(np.asarray(strat.coefs), n, w, k, sep)[0]
    return OptimizationResult(strat, loss, error, int(res.nit), bool(res.success), str(res.message), hist)


# ---------------------------------------------------------------------------------------------
# BLT


def _blt_from_params(x: np.ndarray, m: int):
    a, u = x[:m], x[m:]
    theta = special.expit(a)
    e = np.exp(u - max(0.0, float(np.max(u))))
    denom = math.exp(-max(0.0, float(np.max(u)))) + float(np.sum(e))
    omega = e / denom
    return theta, omega


def _blt_loss(x: np.ndarray, m: int, n: int, w: np.ndarray, k: int, sep: int) -> tuple[float, np.ndarray]:
    theta, omega = _blt_from_params(x, m)
    strat = BLTStrategy(tuple(theta), tuple(omega), n)
    num, den = strat.rational()
    e0 = np.eye(1, n).ravel()
    with np.errstate(over="ignore", invalid="ignore"):
        r = signal.lfilter(den, num, e0)  # C^{-1} e_0 = Q/P
        err, gr = _error_and_grad_r(r, w)
        if not (math.isfinite(err) and np.all(np.isfinite(gr))):
            return math.inf, np.zeros_like(x)
        lam = signal.lfilter(den, num, gr[::-1])[::-1]
        if not np.all(np.isfinite(lam)):
            return math.inf, np.zeros_like(x)
    # d err / d c_t = - sum_{s >= t} lam_s r_{s - t}: a correlation, by FFT
    corr = signal.fftconvolve(lam, r[::-1])[n - 1:]
    d_err = -corr
    c = strat.toeplitz()
    s2, d_s2 = _sens_and_grad(c, k, sep)
    g_c = s2 * d_err + err * d_s2  # gradient with respect to c_0..c_{n-1}
    t = np.arange(n - 1, dtype=float)
    with np.errstate(under="ignore"):
        P = np.power(theta[None, :], t[:, None])  # theta^{t-1} for c_t, t >= 1
        Pm1 = np.zeros_like(P)
        Pm1[1:] = np.power(theta[None, :], t[:-1, None])  # theta^{t-2}
    gc = g_c[1:]
    d_omega = gc @ P
    d_theta = (gc * t) @ Pm1 * omega
    d_a = d_theta * theta * (1.0 - theta)
    d_u = omega * (d_omega - float(d_omega @ omega))
    return s2 * err, np.concatenate([d_a, d_u])


def optimize_blt(steps: int, buffers: int, participation: Participation | None = None, *, error: str = "mean",
                 max_iter: int = 500, restarts: int = 3) -> OptimizationResult:
    """The BLT with ``buffers`` buffers minimising sens^2 * err under ``participation`` (module
    docstring); the best of ``restarts`` initialisations (decays with 1 - theta spread geometrically
    between 1/n and 1/2, shifted per restart)."""
    n = check_count("steps", steps, minimum=2)
    m = check_count("buffers", buffers, minimum=1)
    _check_error(error)
    restarts = check_count("restarts", restarts, minimum=1)
    k, sep = _schema(n, participation)
    w = _weights(n, error)
    best = None
    for i in range(restarts):
        gaps = np.geomspace(1.0 / n, 0.5, m + 2)[1:-1] * (2.0 ** (i - restarts // 2))
        theta0 = np.clip(1.0 - gaps, 1e-3, 1 - 1e-9)
        a0 = special.logit(theta0)
        u0 = np.full(m, math.log(0.5 / m))
        x0 = np.concatenate([a0, u0])
        res, hist = _minimize(lambda x: _blt_loss(x, m, n, w, k, sep), x0, max_iter)
        val = _blt_loss(res.x, m, n, w, k, sep)[0]
        if best is None or val < best[0]:
            best = (val, res, hist)
    assert best is not None  # restarts >= 1
    val, res, hist = best
    theta, omega = _blt_from_params(res.x, m)
    order = np.argsort(theta)[::-1]
    strat = BLTStrategy(tuple(theta[order]), tuple(omega[order]), n)
    return OptimizationResult(strat, float(val), error, int(res.nit), bool(res.success), str(res.message), hist)
