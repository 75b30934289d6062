"""Renyi audit of noisy GD with hidden state on the linear-gradient Gaussian instance.

Chourasia, Ye, Shokri, NeurIPS 2021 (arXiv:2102.05855), Theorem 2 and its instance
(Chourasia, Ye, Shokri 2021; docs/theorems/langevin.md): loss l(theta; x) = ||theta - x||^2 / 2 (lambda = beta = 1), theta_0 = 0,
replace-one neighbours D = (x_1, ..., x_n), D' = D with x_1 replaced by x_1 + S_g e_1, so that
grad L_D(theta) = theta - mean(D) and ||mean(D) - mean(D')|| = S_g / n. Noisy GD

    theta_{k+1} = theta_k - eta (theta_k - mean(D)) + sqrt(2 eta sigma^2) Z_k

is simulated (batched over trials, in seed-deterministic chunks) on both datasets; the last
iterates are Gaussian with equal covariances, and the estimated D_alpha(theta_K || theta'_K) is
tabulated beside the exact value, the Theorem 1 upper bound (lambda = 1), the Theorem 2 lower
bound and the composition bound (all from :mod:`dpaudit.bounds.langevin`).
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.audit.stats.renyi import renyi_divergence
from dpaudit.bounds.langevin import composition_rdp, langevin_lower_rdp, langevin_rdp, linear_gaussian_rdp
from dpaudit.core.execution import Execution, resolve_execution
from dpaudit.core.runner import DEFAULT_CHUNK_SIZE, Job, concat_chunks, open_executor, run_jobs
from dpaudit.core.seeds import as_seed_sequence
from dpaudit.core.validation import check_confidence, check_count, check_positive, check_real

__all__ = ["linear_instance_datasets", "simulate_noisy_gd", "linear_instance_table"]


def linear_instance_datasets(n: int, dim: int = 1, sensitivity: float = 1.0):
    """The neighbouring datasets (records as rows): D all zeros, D' with x_1 = S_g e_1."""
    n = check_count("n", n, minimum=1)
    dim = check_count("dim", dim, minimum=1)
    sensitivity = check_positive("sensitivity", sensitivity)
    D = np.zeros((n, dim))
    Dp = D.copy()
    Dp[0, 0] = sensitivity
    return D, Dp


class _NoisyGDChunk:
    """Chunk function: last iterates of ``size`` independent noisy-GD runs (picklable, for pools)."""

    def __init__(self, X, steps, eta, noise):
        self.X, self.steps, self.eta, self.noise = X, steps, eta, noise

    def __call__(self, size, seed_seq):
        rng = np.random.default_rng(seed_seq)
        X, eta = self.X, self.eta
        theta = np.zeros((size, X.shape[1]))
        for _ in range(self.steps):  # loop over steps; all trials advance together
            grad = theta - X.mean(axis=0)
            theta = theta - eta * grad + self.noise * rng.standard_normal(theta.shape)
        return theta


def _noisy_gd_chunk(data, steps, step_size, sigma, trials) -> _NoisyGDChunk:
    """Validated chunk function of :func:`simulate_noisy_gd`."""
    X = np.asarray(data, dtype=float)
    if X.ndim != 2 or not np.all(np.isfinite(X)):
        raise ValueError("data must be a finite 2-D array (records as rows)")
    steps = check_count("steps", steps, minimum=1)
    eta = check_positive("step_size", step_size)
    if eta >= 1.0:
        raise ValueError(f"step_size must be in (0, 1) for this instance, got {eta}")
    sigma = check_positive("sigma", sigma)
    trials = check_count("trials", trials, minimum=1)
    return _NoisyGDChunk(X, steps, eta, math.sqrt(2.0 * eta * sigma * sigma))


def simulate_noisy_gd(data, *, steps: int, step_size: float, sigma: float, trials: int, seed=None,
                      execution: Execution | None = None, **deprecated) -> np.ndarray:
    """Last iterates theta_K of noisy GD on the squared loss, shape (trials, dim).

    Gradient of L_D is computed from the records: (1/n) sum_i (theta - x_i) = theta - mean(D).
    Trials run in chunks on ``execution`` (:class:`dpaudit.Execution`; the keywords ``chunk_size``, ``executor``,
    ``workers``, ``retries`` still work, with a ``DeprecationWarning``); the result depends only on ``seed``,
    ``trials`` and the chunk size (default 10,000).
    """
    execution = _execution(execution, deprecated, "simulate_noisy_gd")
    fn = _noisy_gd_chunk(data, steps, step_size, sigma, trials)
    trials = check_count("trials", trials, minimum=1)
    with open_executor(execution.executor, execution.workers) as ex:
        res = run_jobs([Job(fn, trials, seed, "noisy GD runs")], chunk_size=execution.chunk(DEFAULT_CHUNK_SIZE),
                       executor=ex, retries=execution.retries, label="renyi")[0]
    return concat_chunks(res, trials)


def _execution(execution, deprecated: dict, where: str) -> Execution:
    execution = resolve_execution(execution, deprecated, where=where)
    if deprecated:
        raise TypeError(f"{where}() got unexpected keyword arguments {sorted(deprecated)}")
    return execution


def linear_instance_table(steps=(1, 3, 10, 30, 100), alphas=(2.0, 5.0, 10.0), *, step_size: float = 0.1,
                          sigma: float = 1.0, n: int = 1, sensitivity: float = 1.0, dim: int = 1,
                          trials: int = 100_000, confidence: float = 0.95, seed=None,
                          methods=("gaussian",), execution: Execution | None = None, **deprecated) -> list[dict]:
    """Rows {steps, alpha, method, estimate, lower, upper, exact, theorem1, theorem2, composition}.

    ``trials`` runs per neighbouring dataset and number of steps; estimates use
    :func:`dpaudit.audit.stats.renyi.renyi_divergence` with each of ``methods``. The simulations of
    every step count and both datasets run as one batch of chunks on ``execution`` (:class:`dpaudit.Execution`;
    the keywords ``chunk_size``, ``executor``, ``workers``, ``retries`` still work, with a
    ``DeprecationWarning``); the rows depend only on ``seed``, ``trials`` and the chunk size.
    """
    execution = _execution(execution, deprecated, "linear_instance_table")

    check_real("step_size", step_size)
    confidence = check_confidence("confidence", confidence)
    steps = [check_count("steps", k, minimum=1) for k in np.atleast_1d(steps)]
    alphas = [check_real("alpha", a) for a in np.atleast_1d(alphas)]
    if any(a <= 1 for a in alphas):
        raise ValueError("alphas must all be > 1")
    D, Dp = linear_instance_datasets(n, dim, sensitivity)
    root = as_seed_sequence(seed)
    trials = check_count("trials", trials, minimum=1)
    rows = []
    kw = dict(sensitivity=sensitivity, step_size=step_size, sigma=sigma, n=n)
    seeds = [ss.spawn(3) for ss in root.spawn(len(steps))]
    jobs = []
    for K, (s0, s1, _) in zip(steps, seeds):
        jobs.append(Job(_noisy_gd_chunk(D, K, step_size, sigma, trials), trials, s0, f"noisy GD on D, K={K}"))
        jobs.append(Job(_noisy_gd_chunk(Dp, K, step_size, sigma, trials), trials, s1, f"noisy GD on D', K={K}"))
    with open_executor(execution.executor, execution.workers) as ex:
        res = run_jobs(jobs, chunk_size=execution.chunk(DEFAULT_CHUNK_SIZE), executor=ex, retries=execution.retries,
                       label="renyi")
    for k, (K, (_, _, s2)) in enumerate(zip(steps, seeds)):
        theta = concat_chunks(res[2 * k], trials)
        theta_p = concat_chunks(res[2 * k + 1], trials)
        for a in alphas:
            exact = float(linear_gaussian_rdp(a, steps=K, **kw))
            th1 = float(langevin_rdp(a, strong_convexity=1.0, steps=K, **kw))
            th2 = float(langevin_lower_rdp(a, steps=K, **kw))
            comp = float(composition_rdp(a, steps=K, **kw))
            for m in methods:
                est = renyi_divergence(theta_p, theta, a, method=m, confidence=confidence, seed=s2)
                rows.append({"steps": K, "alpha": a, "method": m, "estimate": est.value, "lower": est.lower,
                             "upper": est.upper, "exact": exact, "theorem1": th1, "theorem2": th2,
                             "composition": comp, "assumption": est.assumption})
    return rows
