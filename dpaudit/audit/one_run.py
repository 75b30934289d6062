"""Auditing in one training run (Steinke, Nasr, Jagielski, NeurIPS 2023, arXiv:2305.08846).

Protocol (auditing.md sec. 5): m canaries, each included independently with probability 1/2 by
the auditor's own fair coins; after a single run the auditor makes r <= m guesses (here "in"
for the k_in highest scores, "out" for the k_out lowest, abstaining on the rest) and counts the
v correct ones. Under (epsilon, delta)-DP with respect to every canary (Theorem 3.1 there, with
the delta term of their Theorem 5.2), with q = e^epsilon / (1 + e^epsilon),

    p(epsilon) = P[Bin(r, q) >= v] + 2 m delta * max_{i=1..v} (1/i) P[v - i <= Bin(r, q) < v],

capped at 1, is a valid p-value; it increases with epsilon, and
epsilon_LB = sup{epsilon : p(epsilon) <= beta} holds with probability >= 1 - beta.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import binom

from dpaudit.audit.bounds import check_audit_delta, check_beta
from dpaudit.core.numeric import round_down
from dpaudit.core.validation import check_count, check_nonnegative

__all__ = ["one_run_p_value", "one_run_epsilon_lower", "one_run_audit"]


def _check(m, r, v):
    m = check_count(m, "m", minimum=1)
    r = check_count(r, "r", minimum=0)
    v = check_count(v, "v", minimum=0)
    if r > m:
        raise ValueError(f"r must be <= m, got r={r}, m={m}")
    if v > r:
        raise ValueError(f"v must be <= r, got v={v}, r={r}")
    return m, r, v


def one_run_p_value(epsilon: float, *, m: int, r: int, v: int, delta: float = 0.0) -> float:
    """p-value of observing >= v correct guesses out of r under (epsilon, delta)-DP (SNJ 2023)."""
    epsilon = check_nonnegative("epsilon", epsilon)
    delta = check_audit_delta(delta)
    m, r, v = _check(m, r, v)
    if v == 0:
        return 1.0
    q = 1.0 / (1.0 + math.exp(-epsilon))
    p = float(binom.sf(v - 1, r, q))
    if delta > 0.0:
        j = np.arange(-1, v)  # cdf at v-i-1 for i = v..1, then cdf(v-1)
        cdf = binom.cdf(j, r, q)
        i = np.arange(1, v + 1)
        window = cdf[-1] - cdf[v - i]  # P[v-i <= B <= v-1]: cdf(v-1) - cdf(v-i-1); cdf index shift by 1
        p += 2.0 * m * delta * float(np.max(np.maximum(window, 0.0) / i))
    return min(1.0, p)


def one_run_epsilon_lower(*, m: int, r: int, v: int, delta: float = 0.0, confidence: float = 0.95,
                          tol: float = 1e-9) -> float:
    """epsilon_LB = sup{epsilon : p(epsilon) <= beta} by bisection (rounded down; 0 if p(0) > beta)."""
    beta = check_beta(1.0 - confidence, "1 - confidence")
    m, r, v = _check(m, r, v)
    if one_run_p_value(0.0, m=m, r=r, v=v, delta=delta) > beta:
        return 0.0
    lo, hi = 0.0, 1.0
    while one_run_p_value(hi, m=m, r=r, v=v, delta=delta) <= beta:
        lo, hi = hi, 2.0 * hi
        if hi > 1e4:  # p stays below beta: no finite supremum within double range
            return math.inf
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if one_run_p_value(mid, m=m, r=r, v=v, delta=delta) <= beta:
            lo = mid
        else:
            hi = mid
    return max(0.0, round_down(lo))


def one_run_audit(scores, included, *, k_in: int, k_out: int, delta: float = 0.0,
                  confidence: float = 0.95) -> dict:
    """Guess "in" for the ``k_in`` highest scores and "out" for the ``k_out`` lowest; bound epsilon.

    ``included`` are the auditor's fair coins (bool array); the guesses use only ``scores``.
    Ties are broken by a stable sort, which does not look at the coins.
    """
    s = np.asarray(scores, dtype=float).ravel()
    z = np.asarray(included, dtype=bool).ravel()
    if s.shape != z.shape:
        raise ValueError("scores and included must have the same length")
    if np.any(np.isnan(s)):
        raise ValueError("scores must not contain NaN")
    m = s.size
    k_in = check_count(k_in, "k_in")
    k_out = check_count(k_out, "k_out")
    if k_in + k_out > m:
        raise ValueError(f"k_in + k_out must be <= number of canaries {m}")
    order = np.argsort(s, kind="stable")
    correct_out = int(np.sum(~z[order[:k_out]]))
    correct_in = int(np.sum(z[order[m - k_in:]])) if k_in > 0 else 0
    r, v = k_in + k_out, correct_in + correct_out
    eps = one_run_epsilon_lower(m=m, r=r, v=v, delta=delta, confidence=confidence)
    return {"epsilon_lower": eps, "m": m, "r": r, "v": v, "k_in": k_in, "k_out": k_out}
