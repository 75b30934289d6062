"""Auditing in one training run (Steinke, Nasr, Jagielski, NeurIPS 2023, arXiv:2305.08846).

Protocol (Steinke, Nasr, Jagielski 2023): m canaries, each included independently with probability 1/2 by
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

from dpaudit.audit.stats.binomial import cp_lower
from dpaudit.audit.stats.error_rates import check_audit_delta, check_beta
from dpaudit.audit.stats.one_run_fdp import check_guess_counts, one_run_fdp_epsilon_lower
from dpaudit.core.numeric import round_down
from dpaudit.core.validation import check_count, check_nonnegative

__all__ = ["one_run_p_value", "one_run_epsilon_lower", "one_run_audit", "correct_counts", "choose_guesses",
           "choose_bound", "one_run_ceiling", "max_guesses", "OneRunBoundTable", "BOUNDS", "GUESS_FRACTIONS",
           "DEFAULT_GUESS_FRACTION"]


def one_run_p_value(epsilon: float, *, m: int, r: int, v: int, delta: float = 0.0) -> float:
    """p-value of observing >= v correct guesses out of r under (epsilon, delta)-DP (SNJ 2023)."""
    epsilon = check_nonnegative("epsilon", epsilon)
    delta = check_audit_delta("delta", delta)
    m, r, v = check_guess_counts(m, r, v)
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
    beta = check_beta("1 - confidence", 1.0 - confidence)
    m, r, v = check_guess_counts(m, r, v)
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

    The counting step alone, with guess counts fixed in advance (a dict). The public route -- fair coins,
    calibration, the bound, the claim, the ceiling, repeats, as an ``AuditResult`` -- is
    :func:`dpaudit.audit.training.audit_one_run` (``dpaudit.audit_one_run``).

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
    k_in = check_count("k_in", k_in)
    k_out = check_count("k_out", k_out)
    if k_in + k_out > m:
        raise ValueError(f"k_in + k_out must be <= number of canaries {m}")
    order = np.argsort(s, kind="stable")
    correct_out = int(np.sum(~z[order[:k_out]]))
    correct_in = int(np.sum(z[order[m - k_in:]])) if k_in > 0 else 0
    r, v = k_in + k_out, correct_in + correct_out
    eps = one_run_epsilon_lower(m=m, r=r, v=v, delta=delta, confidence=confidence)
    return {"epsilon_lower": eps, "m": m, "r": r, "v": v, "k_in": k_in, "k_out": k_out}


# ------------------------------------------------- choosing the guesses on a calibration run
#: candidate guess counts of the calibration run, as fractions of m/2 guesses on EACH side
#: (0 = no guess on that side: a one-sided leak is audited by guesses on its side only)
GUESS_FRACTIONS = (0.0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 1.0)
#: the calibration keeps the fewest guesses whose calibration bound is within this share of the best
#: (1.0: the best, fewest guesses on ties; measured on randomized response of the inclusion bit, eps = 1,
#: m = 1000, 2,000 audits: mean bound 0.697 at 1.0, 0.657 at 0.97, 0.590 at 0.9)
NEAR_BEST = 1.0
#: guess fraction (of m/2 per side) when no candidate certifies anything on the calibration run
DEFAULT_GUESS_FRACTION = 0.1


def correct_counts(scores, coins):
    """Per audit (rows), correct guesses among the j lowest scores guessed "out" and the j highest
    guessed "in", for j = 0..m: arrays ``out_ok``, ``in_ok`` of shape (A, m + 1).

    Guesses use only ``scores`` (stable sort, which does not look at the coins); ``coins`` only count.
    """
    s = np.atleast_2d(np.asarray(scores, dtype=float))
    z = np.atleast_2d(np.asarray(coins, dtype=bool))
    if s.shape != z.shape:
        raise ValueError("scores and coins must have the same shape")
    order = np.argsort(s, axis=1, kind="stable")
    zs = np.take_along_axis(z, order, axis=1)
    zero = np.zeros((zs.shape[0], 1), dtype=np.int64)
    out_ok = np.concatenate([zero, np.cumsum(~zs, axis=1)], axis=1)
    in_ok = np.concatenate([zero, np.cumsum(zs[:, ::-1], axis=1)], axis=1)
    return out_ok, in_ok


def _proxy_epsilon(r, v, beta):
    """sup{eps : P[Bin(r, q(eps)) >= v] <= beta} = logit of the Clopper-Pearson lower bound (vectorised)."""

    r = np.asarray(r)
    v = np.asarray(v)
    out = np.zeros(r.shape)
    ok = (r > 0) & (v > 0)
    if np.any(ok):
        q = cp_lower(v[ok], r[ok], beta)
        with np.errstate(divide="ignore"):
            out[ok] = np.maximum(0.0, np.log(q) - np.log1p(-q))
    return out


def choose_guesses(cal_scores, cal_coins, *, m: int, delta: float = 0.0, confidence: float = 0.95,
                   fractions=GUESS_FRACTIONS) -> dict:
    """Numbers of "in" and "out" guesses for a main run of ``m`` canaries, chosen SEPARATELY on a
    calibration run (rows of ``cal_scores``/``cal_coins`` = independent audits).

    Every pair (k_in, k_out) of the grid ``fraction * m_cal / 2`` (0 allowed on one side, so a
    one-sided leak is not diluted by guesses on the other side) is scored on the calibration run by
    a lower bound of its certified epsilon (the delta = 0 bound at level beta - 2 m_cal delta, which
    the p-value of Steinke-Nasr-Jagielski 2023 can only exceed; it is vectorised); among the pairs
    within ``NEAR_BEST`` of the best, the one with the fewest guesses is kept and its fractions are
    scaled to ``m``. Where nothing certifies, both sides get ``DEFAULT_GUESS_FRACTION``.
    Valid whatever it picks: the calibration run is independent of the main run's coins.
    """
    m = check_count("m", m, minimum=2)
    beta = check_beta("1 - confidence", 1.0 - confidence)
    s = np.atleast_2d(np.asarray(cal_scores, dtype=float))
    m_cal = s.shape[1]
    out_ok, in_ok = correct_counts(s, cal_coins)
    # a side of k guesses errs for sure when fewer than k canaries fell on that side: the number of
    # included canaries is Bin(m, 1/2), so fractions of m/2 are capped 3 standard deviations below 1
    cap_cal = max(0.0, 1.0 - 3.0 / math.sqrt(m_cal))
    ks = np.unique([min(int(min(f, cap_cal) * m_cal / 2), m_cal // 2) for f in fractions])
    if ks.max() < 1:  # fewer than 10 calibration canaries: the cap leaves no guess; one guess per side
        ks = np.array([0, 1])
    fr = {int(k): k / (m_cal / 2) for k in ks}
    beta_proxy = beta - 2.0 * m_cal * float(delta)
    if beta_proxy <= 0.0:
        beta_proxy = beta * 1e-3  # delta term dominates: rank candidates at a stricter level
    ki, ko = np.meshgrid(ks, ks, indexing="ij")
    ki, ko = ki.ravel(), ko.ravel()
    keep = (ki + ko) >= 1
    ki, ko = ki[keep], ko[keep]
    v = in_ok[:, ki] + out_ok[:, ko]  # (A, P)
    eps = _proxy_epsilon(np.broadcast_to(ki + ko, v.shape), v, beta_proxy)
    top = eps.max(axis=1, keepdims=True)
    near = eps >= NEAR_BEST * top
    r_near = np.where(near, ki + ko, np.iinfo(np.int64).max)
    best = np.argmin(r_near, axis=1)  # fewest guesses among the near-best (first on ties)
    best_eps = eps[np.arange(eps.shape[0]), best]
    f_in = np.array([fr[int(k)] for k in ki[best]])
    f_out = np.array([fr[int(k)] for k in ko[best]])
    none = best_eps <= 0.0
    f_in = np.where(none, DEFAULT_GUESS_FRACTION, f_in)
    f_out = np.where(none, DEFAULT_GUESS_FRACTION, f_out)
    cap = max(0.0, 1.0 - 3.0 / math.sqrt(m))
    k_in = np.minimum(np.floor(np.minimum(f_in, cap) * m / 2).astype(int), m // 2)
    k_out = np.minimum(np.floor(np.minimum(f_out, cap) * m / 2).astype(int), m // 2)
    k_in = np.where((f_in > 0) & (k_in == 0), 1, k_in)
    k_out = np.where((f_out > 0) & (k_out == 0), 1, k_out)
    both0 = (k_in + k_out) == 0
    k_in = np.where(both0, 1, k_in)
    rows = np.arange(v.shape[0])
    r_cal, v_cal = (ki + ko)[best], v[rows, best]
    return {"k_in": k_in, "k_out": k_out, "fraction_in": f_in, "fraction_out": f_out,
            "calibration_epsilon": best_eps, "calibrated": ~none, "m_calibration": int(m_cal),
            "r_calibration": r_cal, "v_calibration": v_cal}


#: the one-run tests: Steinke-Nasr-Jagielski 2023 (``"snj"``) and the f-DP test of Mahloujifar-Melis-Chaudhuri
#: 2024 with the (epsilon, delta) trade-off curve (``"fdp"``); ``"auto"`` picks one of them on the calibration run
#: (fixed guesses: both at beta/2, the larger -- a union bound)
BOUNDS = ("auto", "snj", "fdp", "both")


class OneRunBoundTable:
    """The certified one-run bound of test ``kind`` (``"snj"`` or ``"fdp"``) memoised on (r, v): many audits share
    their counts."""

    def __init__(self, m, delta, confidence, kind="snj"):
        self.m, self.delta, self.confidence, self.kind, self.cache = m, delta, confidence, kind, {}

    def __call__(self, r: int, v: int) -> float:
        key = (int(r), int(v))
        if key not in self.cache:
            if self.kind == "fdp":
                self.cache[key] = one_run_fdp_epsilon_lower(m=self.m, r=key[0], v=key[1], delta=self.delta,
                                                            confidence=self.confidence)
            else:
                self.cache[key] = one_run_epsilon_lower(m=self.m, r=key[0], v=key[1], delta=self.delta,
                                                        confidence=self.confidence)
        return self.cache[key]


def choose_bound(m: int, r_cal, v_cal, m_cal: int, *, delta: float, confidence: float) -> np.ndarray:
    """Per calibration row, ``"fdp"`` or ``"snj"``: the test whose bound is larger at the calibration counts
    scaled to the main run (r, v times m / m_cal; the delta term of Steinke-Nasr-Jagielski grows with m, so the
    comparison is made at the main run's m). Uses only the calibration run, so either choice keeps the main
    run's bound valid at the full level; ties go to ``"snj"``."""
    snj = OneRunBoundTable(m, delta, confidence, "snj")
    fdp = OneRunBoundTable(m, delta, confidence, "fdp")
    out = []
    for r, v in zip(np.atleast_1d(r_cal), np.atleast_1d(v_cal)):
        rr = min(m, max(1, int(round(int(r) * m / m_cal))))
        vv = min(rr, int(round(int(v) * m / m_cal)))
        out.append("fdp" if fdp(rr, vv) > snj(rr, vv) else "snj")
    return np.array(out)


def max_guesses(m: int, guesses=None) -> int:
    """The most guesses r = k_in + k_out a one-run audit (:func:`dpaudit.audit.protocol.one_run.one_run_protocol`) of ``m`` canaries can make: the fixed
    ``guesses`` (k, or a pair), else the calibration's largest choice (each side capped at
    ``(1 - 3 / sqrt(m)) m / 2``, see :func:`choose_guesses`; at least one guess)."""
    m = check_count("m", m, minimum=2)
    if guesses is not None:
        if isinstance(guesses, (tuple, list)):
            return min(m, sum(check_count("guesses", g, minimum=0) for g in guesses))
        return min(m, 2 * check_count("guesses", guesses, minimum=1))
    cap = max(0.0, 1.0 - 3.0 / math.sqrt(m))
    return max(1, 2 * min(int(math.floor(cap * m / 2)), m // 2))


def one_run_ceiling(m: int, *, r_max: int | None = None, delta: float = 0.0, confidence: float = 0.95,
                    tests=("snj", "fdp")) -> float:
    """The CEILING of a one-run audit: the largest epsilon it could certify with ``m`` canaries, at most
    ``r_max`` guesses (default ``m``) and every guess right (v = r), at ``confidence``, by the best of ``tests``.

    Both tests (Steinke, Nasr, Jagielski 2023, Theorem 3.1 with the delta term of Theorem 5.2; the f-DP test of
    Mahloujifar, Melis, Chaudhuri 2024) grow with v at fixed r, so v = r is the most an audit can observe; the
    maximum over r is taken on a grid of r (geometric, 40 points, r_max included; the bound grows with r in
    every setting measured, so the largest r decides). A claim at or above the ceiling cannot be shown violated
    by such an audit, and a "consistent" verdict near it says little about the claim."""
    m = check_count("m", m, minimum=2)
    r_max = m if r_max is None else min(m, check_count("r_max", r_max, minimum=1))
    beta = check_beta("1 - confidence", 1.0 - confidence)
    delta = check_audit_delta("delta", delta)
    rs = np.unique(np.concatenate([np.round(np.geomspace(1, r_max, 40)).astype(int), [r_max]]))
    best = 0.0
    for r in rs.tolist():
        for test in tests:
            if test == "fdp":
                e = one_run_fdp_epsilon_lower(m=m, r=r, v=r, delta=delta, confidence=1.0 - beta)
            else:
                e = one_run_epsilon_lower(m=m, r=r, v=r, delta=delta, confidence=1.0 - beta)
            best = max(best, e)
    return best
