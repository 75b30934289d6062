"""Advisory numbers for audits without power: how far an audit is from certifying something.

Advisory numbers (``details["advice"]``, functions below) say how far an audit is from having
power. They are point estimates computed from the audit's own samples, are labelled
:data:`ADVICE_LABEL`, and never change ``epsilon_lower`` or the verdict:

* **trials for a positive bound**: the advisory test is the (threshold, orientation) whose
  advantage 1 - FPR - FNR has the largest z-score on a fixed grid of quantile thresholds of all
  the audit's scores. A suggestion is made only when that z-score is significant at level beta
  after a Bonferroni correction over the grid's tests (so an audit of a mechanism whose two
  output laws are identical is promised nothing, except with probability about beta). Its
  error rates, made one standard error worse (the best of many noisy tests looks better than
  it is), are the planning rates. For N trials per input the audit's own steps are replayed at
  those rates: selection on frac*N samples at level beta/20 per rate and evaluation on
  (1-frac)*N at beta/2 per rate (the levels of :func:`dpaudit.audit.stats.thresholds.heldout_test`),
  with one-sided Clopper-Pearson (1934) upper bounds on counts moved ``POWER_Z`` = 1.2816
  binomial standard deviations against the test (each rate at least that bad with probability
  about 0.9), and the Kairouz, Oh, Viswanath (2015, Thm. 2.1) bound with its delta term. The
  suggestion is the smallest N on a geometric grid from which every larger grid point gives a
  bound above the target (0, or a fraction of the claim); ``None`` when none up to
  ``MAX_ADVICE_TRIALS`` does.
* **trials at least** (``trials_at_least``, always given): a lower estimate of the same
  quantity: each grid test's rates moved ``z_needed`` standard errors *in its favour* (all at
  once with probability about 1 - beta), expected counts, the smallest N over the
  ``_OPTIMISTIC_TESTS`` most favourable tests. When no suggestion can be made it still says how
  far away a positive bound is, even if the attack were as good as the runs allow.
* **ceiling**: the largest bound a threshold audit with the given trials could certify against
  a mechanism that exactly meets the claim, in the most favourable setting (every trial
  evaluates one test fixed in advance, beta/2 per rate): the best test on the claim's own trade-off curve
  FNR = max(0, 1 - delta - e^eps FPR, e^-eps (1 - delta - FPR)) (Kairouz et al. 2015), with
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

import numpy as np

from dpaudit.audit.stats.binomial import cp_upper, cp_upper_bracket
from dpaudit.audit.stats.error_rates import epsilon_lower_from_rates
from dpaudit.audit.stats.one_run import one_run_epsilon_lower
from dpaudit.audit.stats.thresholds import ORIENTATIONS, counts_at, oriented_from_counts

__all__ = ["ADVICE_LABEL", "trials_needed", "threshold_ceiling", "threshold_advice", "one_run_advice",
           "threshold_advice_from_counts", "advice_grid",
           "POWER_Z", "MAX_ADVICE_TRIALS", "DEFAULT_TARGET_FRACTION"]

#: label carried by every advisory number
ADVICE_LABEL = "advisory (point estimates from this audit's samples; never a bound, never changes the verdict)"
#: one-sided normal quantile of 0.9: counts are moved this many standard deviations against the test
POWER_Z = 1.2815515655446004
#: largest number of trials per input the advice searches
MAX_ADVICE_TRIALS = 10**9
#: the fraction of the claim a suggestion aims at besides "positive"
DEFAULT_TARGET_FRACTION = 0.5
_GRID = np.unique(np.round(np.geomspace(4, MAX_ADVICE_TRIALS, 361)).astype(np.int64))
#: quantile thresholds of the advisory test's grid (as the audit's own Bonferroni grid)
_ADVICE_GRID_SIZE = 50
#: tests (largest optimistic advantage) searched for the lower estimate ``trials_at_least``
_OPTIMISTIC_TESTS = 5

# -- trials needed ------------------------------------------------------------------------------
def _shifted_counts(p, n, margin=POWER_Z):
    """Counts at rate ``p`` in ``n`` trials, moved ``margin`` standard deviations up (in [0, n])."""
    n = np.asarray(n, dtype=float)
    k = np.ceil(p * n + margin * np.sqrt(n * p * (1.0 - p)))
    return np.clip(k, 0.0, n).astype(np.int64)


def _bound_at(fpr, fnr, n, level, delta, margin=POWER_Z):
    """Certified bound of a threshold test with error rates (fpr, fnr) after n trials per side."""
    n = np.asarray(n, dtype=np.int64)
    return np.asarray(epsilon_lower_from_rates(cp_upper(_shifted_counts(fpr, n, margin), n, level),
                                               cp_upper(_shifted_counts(fnr, n, margin), n, level), delta))


def _exceeds(fpr, fnr, n, level, delta, margin, target) -> np.ndarray:
    """``_bound_at(fpr, fnr, n, ...) > target`` for each n, with exact Clopper-Pearson bounds only where brackets of
    them (:func:`dpaudit.audit.stats.binomial.cp_upper_bracket`; the bound decreases in each rate) leave the
    answer open (beyond a relative 1e-9 of the target): the same answers."""
    level = float(level)
    if level > 0.5:
        return _bound_at(fpr, fnr, n, level, delta, margin) > target
    k0, k1 = _shifted_counts(fpr, n, margin), _shifted_counts(fnr, n, margin)
    (lo0, hi0), (lo1, hi1) = cp_upper_bracket(k0, n, level), cp_upper_bracket(k1, n, level)
    top = np.asarray(epsilon_lower_from_rates(lo0, lo1, delta))
    bottom = np.asarray(epsilon_lower_from_rates(hi0, hi1, delta))
    slack = 1e-9 * (1.0 + abs(target))
    out = bottom > target + slack
    open_ = ~out & (top > target - slack)
    if open_.any():
        out[open_] = _bound_at(fpr, fnr, n[open_], level, delta, margin) > target
    return out


def trials_needed(fpr: float, fnr: float, *, delta: float, stages, target: float = 0.0, margin: float = POWER_Z):
    """Smallest N (trials per input, on a geometric grid) at which every stage certifies > ``target``.

    ``stages`` is a list of ``(share, level)``: that share of the N trials is bounded with
    Clopper-Pearson at ``level`` per rate, on counts ``margin`` binomial standard deviations above
    the expected ones (``POWER_Z``: about 90% power per rate; 0: the expected counts). Returns
    ``None`` when no N up to ``MAX_ADVICE_TRIALS`` works (the test's error rates leave no margin,
    e.g. FPR + FNR >= 1 - delta).
    """
    fpr, fnr = float(fpr), float(fnr)
    if not (0.0 <= fpr <= 1.0 and 0.0 <= fnr <= 1.0):
        raise ValueError(f"fpr and fnr must be in [0, 1], got {fpr}, {fnr}")
    ok = np.ones(_GRID.shape, dtype=bool)
    for share, level in stages:
        n = np.maximum(np.floor(share * _GRID), 1).astype(np.int64)
        ok &= _exceeds(fpr, fnr, n, level, delta, margin, target)
    if not ok[-1]:
        return None
    bad = np.flatnonzero(~ok)
    return int(_GRID[bad[-1] + 1] if bad.size else _GRID[0])


def _claim_curve_counts(epsilon, delta, n, a):
    """Expected error counts (rounded down) of the best tests against a mechanism exactly at the claim."""
    with np.errstate(over="ignore"):
        e = math.exp(min(epsilon, 700.0))
    fnr = np.maximum(0.0, np.maximum(1.0 - delta - e * a, math.exp(-min(epsilon, 700.0)) * (1.0 - delta - a)))
    n = np.asarray(n, dtype=float)
    return np.floor(a * n).astype(np.int64), np.minimum(np.floor(fnr * n), n).astype(np.int64)


def _fpr_grid(epsilon, delta):
    kinks = [(1.0 - delta) / (1.0 + math.exp(min(epsilon, 700.0))), (1.0 - delta) * math.exp(-min(epsilon, 700.0))]
    return np.unique(np.concatenate([[0.0], np.geomspace(1e-15, 1.0, 150), kinks]))


@lru_cache(maxsize=256)
def threshold_ceiling(epsilon: float, delta: float, n: int, level: float) -> float:
    """Largest bound a threshold test on ``n`` trials per side (CP at ``level`` per rate) could certify
    against a mechanism that exactly meets (epsilon, delta)-DP (expected counts, rounded down)."""
    if not math.isfinite(epsilon):
        return math.inf
    a = _fpr_grid(epsilon, delta)
    k_fp, k_fn = _claim_curve_counts(epsilon, delta, n, a)
    n_arr = np.full(a.shape, int(n), dtype=np.int64)
    return float(np.max(epsilon_lower_from_rates(cp_upper(k_fp, n_arr, level), cp_upper(k_fn, n_arr, level), delta)))


@lru_cache(maxsize=256)
def _trials_for_ceiling(epsilon: float, delta: float, level: float, target: float):
    """Smallest N (grid, bisection: the ceiling grows with N) whose ceiling exceeds ``target``."""
    if not math.isfinite(epsilon) or epsilon <= 0.0:
        return None
    if threshold_ceiling(epsilon, delta, int(_GRID[-1]), level) <= target:
        return None
    lo, hi = 0, _GRID.size - 1  # ceiling(_GRID[hi]) > target
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if threshold_ceiling(epsilon, delta, int(_GRID[mid]), level) > target:
            hi = mid
        else:
            lo = mid
    return int(_GRID[hi]) if threshold_ceiling(epsilon, delta, int(_GRID[lo]), level) <= target else int(_GRID[lo])


# -- advice for threshold audits -----------------------------------------------------------------
def _quantile_grid(s0, s1, size: int = _ADVICE_GRID_SIZE) -> np.ndarray:
    """Thresholds at fixed quantile levels of the pooled scores (geometric towards both tails)."""
    pooled = np.concatenate([s0, s1])
    half = np.geomspace(1e-4, 0.5, size // 2)
    levels = np.unique(np.concatenate([half, 1.0 - half]))
    return np.unique(np.quantile(pooled, levels, method="inverted_cdf"))


def advice_grid(s0, s1, size: int = _ADVICE_GRID_SIZE, *, pooled=None) -> np.ndarray:
    """The advisory test's thresholds: fixed quantile levels of the pooled scores (geometric towards both tails).
    ``pooled``: the same scores sorted once (:class:`dpaudit.audit.stats.counting.PooledScores`; the same grid)."""
    if pooled is not None:
        half = np.geomspace(1e-4, 0.5, size // 2)
        return np.unique(pooled.quantiles(np.unique(np.concatenate([half, 1.0 - half]))))
    return _quantile_grid(np.asarray(s0, dtype=float).ravel(), np.asarray(s1, dtype=float).ravel(), size)


def _advisory_test(t, le0, le1, n0: int, n1: int, beta):
    """The test with the most significant advantage 1 - FPR - FNR among the thresholds ``t`` (counts ``le0[i] =
    #{s0 <= t_i}`` of all of the audit's scores)."""
    k_fp, k_fn = oriented_from_counts(le0, le1, n0, n1)
    p0 = (k_fp + 0.5) / (n0 + 1.0)  # Jeffreys-style point estimates: never exactly 0 or 1
    p1 = (k_fn + 0.5) / (n1 + 1.0)
    se0 = np.sqrt(p0 * (1.0 - p0) / n0)
    se1 = np.sqrt(p1 * (1.0 - p1) / n1)
    z = (1.0 - p0 - p1) / np.sqrt(se0**2 + se1**2)
    o, i = np.unravel_index(int(np.argmax(z)), z.shape)
    tests = int(z.size)
    gate = NormalDist().inv_cdf(1.0 - beta / tests)  # one-sided, Bonferroni over the grid's tests
    # optimistic rates: each test's rates `gate` standard errors better (all hold at once w.p. ~1 - beta)
    floor0, floor1 = 0.5 / (n0 + 1.0), 0.5 / (n1 + 1.0)
    opt0 = np.maximum(p0 - gate * se0, floor0)
    opt1 = np.maximum(p1 - gate * se1, floor1)
    best = np.argsort((1.0 - opt0 - opt1).ravel())[::-1][:_OPTIMISTIC_TESTS]
    return {"threshold": float(t[i]), "orientation": ORIENTATIONS[o], "fpr": float(p0[o, i]), "fnr": float(p1[o, i]),
            "k_fp": int(k_fp[o, i]), "k_fn": int(k_fn[o, i]), "n0": int(n0), "n1": int(n1),
            "z": float(z[o, i]), "z_needed": float(gate), "tests": tests,
            # rates one standard error worse: allows for the noise and for choosing the best of many tests
            "fpr_planning": float(min(1.0, p0[o, i] + se0[o, i])), "fnr_planning": float(min(1.0, p1[o, i] + se1[o, i])),
            "_optimistic": [(float(opt0.ravel()[j]), float(opt1.ravel()[j])) for j in best]}


def _round_down_2(n):
    """Round a positive integer down to two significant digits (a lower estimate stays one)."""
    n = int(n)
    if n < 100:
        return n
    scale = 10 ** (len(str(n)) - 2)
    return int(n // scale * scale)


def _round_up_2(n):
    """Round a positive integer up to two significant digits (suggestions are not precise)."""
    if n is None:
        return None
    n = int(n)
    if n < 100:
        return n
    scale = 10 ** (len(str(n)) - 2)
    return int(math.ceil(n / scale) * scale)


def threshold_advice(sel0, sel1, eval0, eval1, *, epsilon: float, delta: float, beta: float, trials: int,
                     selection: str = "heldout", grid_size: int | None = None,
                     target_fraction: float = DEFAULT_TARGET_FRACTION) -> dict:
    """Advisory numbers for a threshold audit (module docstring). Never changes the audit's bound.

    The advisory test is the one, on a grid of ``_ADVICE_GRID_SIZE`` quantile thresholds of all
    the audit's scores (selection and evaluation) and both orientations, whose advantage
    1 - FPR - FNR has the largest z-score. Suggestions are made only when that z-score exceeds
    the one-sided normal quantile at level beta / (number of tests) -- on identical output
    distributions this happens with probability about beta or less, so an audit without signal
    is not promised one -- and they use rates one standard error worse than observed (the best
    of many noisy tests looks better than it is). For N trials per input the audit's own stages
    are then replayed (selection share at beta/20 per rate and evaluation share at beta/2 for
    ``selection="heldout"``; the evaluation share at beta/(2G) per rate for a Bonferroni grid of
    G tests).
    """
    ev0 = np.asarray(eval0, dtype=float).ravel()
    ev1 = np.asarray(eval1, dtype=float).ravel()
    s0 = np.concatenate([np.asarray(sel0, dtype=float).ravel(), ev0])
    s1 = np.concatenate([np.asarray(sel1, dtype=float).ravel(), ev1])
    t = advice_grid(s0, s1)
    return threshold_advice_from_counts(t, counts_at(s0, t), counts_at(s1, t), int(s0.size), int(s1.size),
                                        n_eval=int(ev0.size), epsilon=epsilon, delta=delta, beta=beta, trials=trials,
                                        selection=selection, grid_size=grid_size, target_fraction=target_fraction)


def threshold_advice_from_counts(t, le0, le1, n0: int, n1: int, *, n_eval: int, epsilon: float, delta: float,
                                 beta: float, trials: int, selection: str = "heldout", grid_size: int | None = None,
                                 target_fraction: float = DEFAULT_TARGET_FRACTION) -> dict:
    """:func:`threshold_advice` from the counts of all the audit's scores (``n0``, ``n1`` of them, ``n_eval`` per
    side evaluating) at the advisory thresholds ``t`` (:func:`advice_grid`, fixed before the counts)."""
    trials = max(int(trials), int(n_eval))
    eval_share = n_eval / float(trials)
    if selection == "heldout":  # the levels of heldout_test: selection beta/20, evaluation beta/2 per rate
        stages = [(1.0 - eval_share, beta / 20.0), (eval_share, beta / 2.0)]
    else:  # Bonferroni over G = 2 * grid_size tests: beta/(2G) per rate
        stages = [(eval_share, beta / (4.0 * int(grid_size or 1)))]
    out = {"label": ADVICE_LABEL, "trials": trials, "target_fraction": float(target_fraction),
           "trials_for_positive": None, "trials_for_target": None}
    test = _advisory_test(np.asarray(t, dtype=float), le0, le1, n0, n1, beta)
    test["limit"] = float(epsilon_lower_from_rates(test["fpr_planning"], test["fnr_planning"], delta))
    test["chosen_by"] = ("largest z-score of 1 - FPR - FNR over a quantile grid of all the audit's scores; "
                         "planning rates one standard error worse than observed")
    test["significant"] = bool(test["z"] >= test["z_needed"])
    optimistic = test.pop("_optimistic")
    out["test"] = test
    # at least this many trials, even if the attack were as good as these runs allow (expected counts)
    lows = [trials_needed(a, b, delta=delta, stages=stages, margin=0.0) for a, b in optimistic]
    lows = [n for n in lows if n is not None]
    out["trials_at_least"] = _round_down_2(min(lows)) if lows else None
    if test["significant"]:
        fpr, fnr = test["fpr_planning"], test["fnr_planning"]
        out["trials_for_positive"] = _round_up_2(trials_needed(fpr, fnr, delta=delta, stages=stages))
        target = target_fraction * epsilon
        if math.isfinite(target) and test["limit"] > target:
            out["trials_for_target"] = _round_up_2(trials_needed(fpr, fnr, delta=delta, stages=stages, target=target))
    if math.isfinite(epsilon) and epsilon > 0.0:
        # the most favourable threshold audit: every trial evaluates one test fixed in advance
        out["ceiling"] = threshold_ceiling(float(epsilon), float(delta), trials, beta / 2.0)
        out["trials_for_ceiling_target"] = _round_up_2(_trials_for_ceiling(float(epsilon), float(delta), beta / 2.0,
                                                                            float(target_fraction * epsilon)))
    return out


def one_run_advice(*, m: int, r: int, v: int, epsilon: float, delta: float, confidence: float,
                   target_fraction: float = DEFAULT_TARGET_FRACTION) -> dict:
    """Advisory numbers for a one-run audit (Steinke, Nasr, Jagielski 2023).

    ``ceiling``: the bound if all r guesses were right (m, r fixed). ``canaries_for_positive`` /
    ``canaries_for_target``: the smallest canary count m' (geometric grid up to 10^6) at which the
    same guess fraction r/m and the observed precision v/r (moved ``POWER_Z`` standard deviations
    down) give a positive bound / one above ``target_fraction * epsilon``.
    """

    out = {"label": ADVICE_LABEL, "canaries": int(m), "guesses": int(r), "correct": int(v),
           "target_fraction": float(target_fraction)}
    out["ceiling"] = one_run_epsilon_lower(m=m, r=r, v=r, delta=delta, confidence=confidence) if r else 0.0
    if r == 0:
        out["canaries_for_positive"] = out["canaries_for_target"] = None
        return out
    precision = (v + 0.5) / (r + 1.0)
    grid = np.unique(np.round(np.geomspace(max(m, 10), 10**6, 13)).astype(np.int64))

    def first(target):
        for mm in grid:
            rr = max(1, min(int(mm), int(round(r * mm / m))))
            vv = int(math.floor(rr * precision - POWER_Z * math.sqrt(rr * precision * (1.0 - precision))))
            vv = min(max(vv, 0), rr)
            if one_run_epsilon_lower(m=int(mm), r=rr, v=vv, delta=delta, confidence=confidence) > target:
                return int(mm)
        return None

    out["canaries_for_positive"] = _round_up_2(first(0.0))
    target = target_fraction * epsilon
    out["canaries_for_target"] = _round_up_2(first(target)) if math.isfinite(target) and target > 0 else None
    return out
