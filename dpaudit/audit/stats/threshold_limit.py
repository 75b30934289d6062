"""The limit of a threshold audit at n evaluation draws: what the exact likelihood-ratio test, with its threshold
known in advance, certifies for a mechanism with a known trade-off curve.

For every threshold of the likelihood-ratio test the error rates (FPR, FNR) are those of the mechanism's
trade-off curve (Dong, Roth, Su 2019): the Gaussian mechanism with mu = sensitivity / sigma has
FNR = Phi(Phi^{-1}(1 - FPR) - mu); the Laplace mechanism with epsilon = sensitivity / b has the rates of the
threshold test on Lap(0, 1) against Lap(epsilon, 1); randomized response with epsilon has the single
non-trivial deterministic test FPR = FNR = 1 / (1 + e^epsilon). At n draws per input the counts are taken at
their expectations (n * rate, rounded to the nearest integer: a plug-in approximation of the expected bound),
each rate is replaced by its Clopper-Pearson upper bound at beta/2 (one test fixed in advance: the cheapest
valid allocation) and epsilon follows from Kairouz, Oh, Viswanath 2015 with the delta term; the best threshold
is kept. No threshold audit with n evaluation draws and the same confidence can expect to certify more,
except by the plug-in's rounding and by the concavity of the bound in the counts (a few per cent at most in
the benchmark's settings); it is used as the "limit" column of ``benchmarks/audit_tightness.py``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr, ndtri

from dpaudit.audit.stats.binomial import cp_upper
from dpaudit.audit.stats.error_rates import check_audit_delta, check_beta, epsilon_lower_from_rates
from dpaudit.core.validation import check_count, check_nonnegative

__all__ = ["threshold_audit_limit", "MECHANISMS"]

MECHANISMS = ("gaussian", "laplace", "randomized-response")
#: thresholds scanned along the trade-off curve
_GRID = 4000


def _gaussian_rates(mu: float, n: int):
    # FPR from far below 1/n (counts of 0) up to 1/2, log-spaced: the certified optimum sits in the tail
    fpr = np.geomspace(0.01 / n, 0.5, _GRID)
    fnr = ndtr(ndtri(1.0 - fpr) - mu)
    return fpr, fnr


def _laplace_rates(eps: float):
    # test "s > t" on Lap(0, 1) (D) against Lap(eps, 1) (D'): FPR = P[L > t], FNR = P[L + eps <= t]
    t = np.linspace(-5.0, eps + 60.0, _GRID)

    def sf(x):
        return np.where(x >= 0, 0.5 * np.exp(-np.abs(x)), 1.0 - 0.5 * np.exp(-np.abs(x)))

    return sf(t), 1.0 - sf(t - eps)


def threshold_audit_limit(mechanism: str, n: int, *, delta: float = 0.0, confidence: float = 0.95,
                          mu: float | None = None, epsilon: float | None = None) -> dict:
    """Best certified epsilon (plug-in expectation) of the exact likelihood-ratio threshold test at ``n``
    evaluation draws per input (module docstring).

    ``mechanism``: ``"gaussian"`` (give ``mu``), ``"laplace"`` or ``"randomized-response"`` (give ``epsilon``).
    Returns ``{"epsilon", "fpr", "fnr", "k_fp", "k_fn"}`` of the best threshold.
    """
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}")
    n = check_count("n", n, minimum=1)
    delta = check_audit_delta("delta", delta)
    beta = check_beta("1 - confidence", 1.0 - confidence)
    if mechanism == "gaussian":
        if mu is None:
            raise ValueError("mu is required for mechanism='gaussian'")
        mu = check_nonnegative("mu", mu)
        fpr, fnr = _gaussian_rates(mu, n)
    else:
        if epsilon is None:
            raise ValueError(f"epsilon is required for mechanism={mechanism!r}")
        epsilon = check_nonnegative("epsilon", epsilon)
        if mechanism == "laplace":
            fpr, fnr = _laplace_rates(epsilon)
        else:
            r = math.exp(-np.logaddexp(0.0, epsilon))  # 1 / (1 + e^eps)
            fpr = fnr = np.array([r])
    k_fp = np.minimum(np.rint(fpr * n), n)
    k_fn = np.minimum(np.rint(fnr * n), n)
    eps = np.asarray(epsilon_lower_from_rates(cp_upper(k_fp, n, beta / 2.0), cp_upper(k_fn, n, beta / 2.0), delta))
    i = int(np.argmax(eps))
    return {"epsilon": float(np.atleast_1d(eps)[i]), "fpr": float(np.atleast_1d(fpr)[i]),
            "fnr": float(np.atleast_1d(fnr)[i]), "k_fp": int(np.atleast_1d(k_fp)[i]),
            "k_fn": int(np.atleast_1d(k_fn)[i]), "n": n, "mechanism": mechanism}
