"""Descriptive statistics of the attack: TPR at a fixed low FPR, AUROC and the best attack accuracy, each with a
confidence interval (the statistics jax_privacy's ``CanaryScoreAuditor`` reports, here with intervals that hold
without a bootstrap). They describe how good the attack is; they NEVER set epsilon_lower, the verdict or an exit
code.

Scores of runs on D are the negatives (``scores0``), on D' the positives (``scores1``); ``orientation=">"`` flags
a run as D' when its score exceeds the threshold (``"<="``: at or below it). Everything that is chosen -- the
orientation, the threshold of each FPR level, the threshold of the best accuracy -- is chosen on the SELECTION
scores; the EVALUATION scores, independent of them, give the numbers and their intervals:

* **TPR at FPR = a**: threshold = the selection-sample threshold whose empirical FPR is at most a (the
  ceil((1 - a) n0)-th smallest selection score of D for ">"). On the evaluation sample the TPR and the FPR
  actually reached are binomial proportions of a fixed test: exact two-sided Clopper-Pearson intervals (Clopper
  and Pearson 1934), each at the full confidence (they are reported separately, not as a joint statement).
* **AUROC** = P[s1 > s0] + P[s1 = s0] / 2, estimated by the Mann-Whitney U statistic on the evaluation scores.
  Interval: distribution-free, from McDiarmid's bounded-differences inequality (McDiarmid 1989): replacing one
  of the n0 (n1) scores moves U by at most 1/n0 (1/n1), so
  P[|U - AUROC| >= t] <= 2 exp(-2 t^2 / (1/n0 + 1/n1)); no bootstrap, no normal approximation.
* **Best accuracy** (balanced: 1 - (FPR + FNR) / 2, equal priors) of the threshold test that maximises it on
  the selection sample; on the evaluation sample Clopper-Pearson intervals for FPR and FNR at (1 - confidence)/2
  each (union bound) give a valid interval for the accuracy of that fixed test.

If there are no selection scores (a fixed Bonferroni grid), the thresholds cannot be fixed in advance: TPR at
FPR and the accuracy are then left out (``None``) and only the AUROC is given.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.audit.stats.binomial import cp_lower, cp_upper
from dpaudit.audit.stats.thresholds import ORIENTATIONS, as_scores, oriented_counts, oriented_from_counts
from dpaudit.core.numeric import round_down, round_up
from dpaudit.core.validation import check_confidence

__all__ = ["attack_statistics", "statistics_thresholds", "statistics_from_counts", "auroc", "auroc_interval",
           "DEFAULT_FPR_LEVELS", "ROLE"]

#: FPR levels of the "TPR at a fixed low FPR" statistics
DEFAULT_FPR_LEVELS = (1e-3, 1e-2)
ROLE = "descriptive statistics of the attack: never set epsilon_lower, the verdict or an exit code"


def auroc(scores0, scores1) -> float:
    """P[s1 > s0] + P[s1 = s0] / 2 by the Mann-Whitney U statistic (exact, ties counted half)."""
    s0 = np.sort(as_scores(scores0, "scores0"))
    # sorted keys: numpy's search starts from the previous key's place (several times faster on 10^5+ scores); the
    # sums below add integers, exact in any order below 2^53, so the value is that of the unsorted keys
    s1 = np.sort(as_scores(scores1, "scores1"))
    less = np.searchsorted(s0, s1, side="left").astype(float)
    leq = np.searchsorted(s0, s1, side="right").astype(float)
    return float((less.sum() + 0.5 * (leq - less).sum()) / (s0.size * s1.size))


def auroc_interval(value: float, n0: int, n1: int, confidence: float) -> tuple[float, float]:
    """Two-sided McDiarmid interval for the AUROC from its U statistic on n0 and n1 independent scores."""
    beta = 1.0 - check_confidence("confidence", confidence)
    t = math.sqrt(math.log(2.0 / beta) * (1.0 / n0 + 1.0 / n1) / 2.0)
    return max(0.0, round_down(value - t)), min(1.0, round_up(value + t))


def _two_sided(k: int, n: int, confidence: float) -> list:
    b = (1.0 - confidence) / 2.0
    return [float(cp_lower(k, n, b)), float(cp_upper(k, n, b))]


def _threshold_at_fpr(sel0, orientation: str, level: float, *, is_sorted: bool = False) -> float:
    """A threshold whose empirical FPR on the selection scores of D is at most ``level`` (the largest such)."""
    s = sel0 if is_sorted else np.sort(sel0)
    n = s.size
    allowed = int(math.floor(level * n + 1e-9))  # false positives allowed on the selection sample
    if orientation == ">":  # flag s > t: t = the (n - allowed)-th smallest score (allowed scores above it)
        return float(s[n - allowed - 1]) if allowed < n else -math.inf
    # flag s <= t: at most `allowed` scores at or below t; just below the (allowed + 1)-th smallest score
    return float(np.nextafter(s[allowed], -np.inf)) if allowed < n else math.inf


def statistics_thresholds(sel0, sel1, *, orientation: str | None = None, fpr_levels=DEFAULT_FPR_LEVELS,
                          pooled=None) -> dict:
    """The thresholds the descriptive statistics read, fixed on the selection scores before any evaluation score
    is seen: ``{"orientation", "fpr_levels", "fpr": [t per level], "accuracy": t}`` (no thresholds without
    selection scores). ``pooled``: the same scores sorted once (:class:`dpaudit.audit.stats.counting.PooledScores`),
    read instead of sorting them again (the same thresholds)."""
    levels = [float(a) for a in np.atleast_1d(np.asarray(fpr_levels, dtype=float))]
    if any(not 0.0 < a < 1.0 for a in levels):
        raise ValueError(f"fpr_levels must lie in (0, 1), got {fpr_levels!r}")
    s0 = np.asarray(sel0, dtype=float).ravel()
    s1 = np.asarray(sel1, dtype=float).ravel()
    have_sel = s0.size > 0 and s1.size > 0
    if orientation is None:
        area = (pooled.auroc() if pooled is not None else auroc(s0, s1)) if have_sel else 1.0
        orientation = ">" if area >= 0.5 else "<="
    if orientation not in ORIENTATIONS:
        raise ValueError(f"orientation must be one of {ORIENTATIONS}, got {orientation!r}")
    out: dict = {"orientation": orientation, "fpr_levels": levels, "fpr": [], "accuracy": None}
    if not have_sel:
        return out
    o = ORIENTATIONS.index(orientation)
    if pooled is not None:
        out["fpr"] = [_threshold_at_fpr(pooled.sorted0, orientation, level, is_sorted=True) for level in levels]
        cand = pooled.values
        k_fp, k_fn = oriented_from_counts(pooled.le0, pooled.le1, pooled.n0, pooled.n1)
    else:
        out["fpr"] = [_threshold_at_fpr(s0, orientation, level) for level in levels]
        # best balanced accuracy: threshold chosen on the selection scores
        cand = np.unique(np.concatenate([s0, s1]))
        k_fp, k_fn = oriented_counts(s0, s1, cand)
    acc_sel = 1.0 - 0.5 * (k_fp[o] / s0.size + k_fn[o] / s1.size)
    out["accuracy"] = float(cand[int(np.argmax(acc_sel))])
    return out


def attack_statistics(sel0, sel1, eval0, eval1, *, orientation: str | None = None, fpr_levels=DEFAULT_FPR_LEVELS,
                      confidence: float = 0.95) -> dict:
    """TPR at each FPR level, AUROC and best accuracy with intervals (module docstring).

    ``orientation``: fixed by the caller, or (``None``) the one with the larger AUROC on the selection scores
    (``">"`` when there are none).
    """
    confidence = check_confidence("confidence", confidence)
    plan = statistics_thresholds(sel0, sel1, orientation=orientation, fpr_levels=fpr_levels)
    e0 = as_scores(eval0, "eval0")
    e1 = as_scores(eval1, "eval1")
    ts = np.asarray(plan["fpr"] + ([plan["accuracy"]] if plan["accuracy"] is not None else []), dtype=float)
    le0, le1 = np.searchsorted(np.sort(e0), ts, side="right"), np.searchsorted(np.sort(e1), ts, side="right")
    a = auroc(e0, e1)
    return statistics_from_counts(plan, ts, le0, le1, int(e0.size), int(e1.size), confidence=confidence,
                                  auroc_value=a, auroc_method="Mann-Whitney U on the evaluation scores")


def statistics_from_counts(plan: dict, t, le0, le1, n0: int, n1: int, *, confidence: float, auroc_value: float,
                           auroc_method: str) -> dict:
    """The descriptive statistics from the evaluation counts ``le0[i] = #{s0 <= t_i}`` at thresholds ``t`` that
    include the ones of ``plan`` (:func:`statistics_thresholds`); ``auroc_value`` of ``s1`` over ``s0`` (``">"``)."""
    confidence = check_confidence("confidence", confidence)
    t = np.asarray(t, dtype=float)
    orientation = plan["orientation"]
    o = ORIENTATIONS.index(orientation)
    a = auroc_value if orientation == ">" else 1.0 - auroc_value
    lo, hi = auroc_interval(a, n0, n1, confidence)
    out = {"role": ROLE, "orientation": orientation, "confidence": confidence, "n_evaluation": [n0, n1],
           "auroc": {"value": a, "interval": [lo, hi],
                     "method": f"{auroc_method}; McDiarmid bounded-differences interval (distribution-free, exact "
                               "level)"},
           "tpr_at_fpr": [], "accuracy": None}
    if plan["accuracy"] is None:
        out["note"] = "no selection scores: thresholds cannot be fixed in advance, so only the AUROC is given"
        return out
    k_fp, k_fn = oriented_from_counts(le0, le1, n0, n1)

    def at(x):  # the counts of the test at threshold x (one of t)
        i = int(np.flatnonzero(t == x)[0])
        return int(k_fp[o, i]), int(k_fn[o, i])

    for level, x in zip(plan["fpr_levels"], plan["fpr"]):
        fp, fn = at(x)
        tp = n1 - fn
        out["tpr_at_fpr"].append({
            "fpr_level": level, "threshold": x, "tpr": tp / n1, "tpr_interval": _two_sided(tp, n1, confidence),
            "fpr": fp / n0, "fpr_interval": _two_sided(fp, n0, confidence),
            "method": "threshold fixed on the selection scores (empirical FPR <= level); exact two-sided "
                      "Clopper-Pearson on the evaluation scores"})
    fp, fn = at(plan["accuracy"])
    b = (1.0 - confidence) / 2.0  # FPR and FNR at beta/2 each (union bound), each interval two-sided
    fpr_i = _two_sided(fp, n0, 1.0 - b)
    fnr_i = _two_sided(fn, n1, 1.0 - b)
    out["accuracy"] = {"value": 1.0 - 0.5 * (fp / n0 + fn / n1), "threshold": plan["accuracy"],
                       "interval": [max(0.0, round_down(1.0 - 0.5 * (fpr_i[1] + fnr_i[1]))),
                                    min(1.0, round_up(1.0 - 0.5 * (fpr_i[0] + fnr_i[0])))],
                       "method": "balanced accuracy of the threshold best on the selection scores; Clopper-Pearson "
                                 "for FPR and FNR at (1 - confidence)/2 each on the evaluation scores"}
    return out
