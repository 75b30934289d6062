"""The primitives of threshold tests: error counts, candidate thresholds, choosing a test on selection scores,
bounding one test on evaluation scores, and the ROC frontier (Bichsel et al. 2021; Kairouz, Oh, Viswanath 2015).

Maximising an epsilon lower bound over thresholds *on the data that certify it* is invalid
(winner's curse: on identical distributions some threshold shows a spurious ratio). The valid rules built on
these primitives -- held-out, Bonferroni over a fixed grid, the selection ROC frontier -- are in
:mod:`dpaudit.audit.stats.rules`.

A test with orientation ``">"`` guesses D' iff ``s > t`` (FPR = P_D[s > t], FNR = P_D'[s <= t]);
orientation ``"<="`` guesses D' iff ``s <= t``. Thresholds proposed from data are always
observed score values, so every result is invariant under strictly increasing transforms of
the score (a metamorphic property tested in ``tests/audit/test_mechanism.py``, test_metamorphic_delta_and_monotone_statistic).

``kind="dp"`` bounds epsilon with the delta term (:mod:`dpaudit.audit.stats.error_rates`);
``kind="gdp"`` bounds mu under the mu-GDP assumption (:mod:`dpaudit.audit.stats.gdp`).
"""

from __future__ import annotations

import numpy as np

from dpaudit.audit.stats.binomial import cp_upper, cp_upper_bracket
from dpaudit.audit.stats.error_rates import check_audit_delta, check_beta, epsilon_lower_from_rates
from dpaudit.audit.stats.gdp import mu_lower_from_rates
from dpaudit.audit.stats.scores import as_scores, counts_at  # numpy only: what a chunk needs where it runs
from dpaudit.core.validation import check_count

__all__ = ["as_scores", "oriented_counts", "candidate_thresholds", "select_test", "evaluate_test", "ORIENTATIONS",
           "roc_frontier", "FRONTIER_MAX_POINTS", "criterion", "check_kind", "counts_at", "oriented_from_counts",
           "auroc_from_counts", "select_from_counts", "frontier_from_counts", "candidates_of", "winning_criterion"]

#: at most this many frontier thresholds are kept (the Bonferroni price is log of their number)
FRONTIER_MAX_POINTS = 128

ORIENTATIONS = (">", "<=")
_KINDS = ("dp", "gdp")


def oriented_counts(scores0, scores1, thresholds):
    """Error counts of every (orientation, threshold) test.

    Returns ``(k_fp, k_fn)``, each of shape ``(2, T)``: row 0 is orientation ``">"``
    (k_fp = #{s0 > t}, k_fn = #{s1 <= t}), row 1 orientation ``"<="`` (k_fp = #{s0 <= t},
    k_fn = #{s1 > t}).
    """
    s0 = np.sort(as_scores(scores0, "scores0"))
    s1 = np.sort(as_scores(scores1, "scores1"))
    t = np.atleast_1d(np.asarray(thresholds, dtype=float))
    le0 = np.searchsorted(s0, t, side="right")
    le1 = np.searchsorted(s1, t, side="right")
    k_fp = np.stack([s0.size - le0, le0])
    k_fn = np.stack([le1, s1.size - le1])
    return k_fp, k_fn


def oriented_from_counts(le0, le1, n0: int, n1: int):
    """``(k_fp, k_fn)`` of shape (2, T) from the counts ``le0[i] = #{s0 <= t_i}``, ``le1[i] = #{s1 <= t_i}``
    (:func:`oriented_counts` without the scores)."""
    le0 = np.asarray(le0, dtype=np.int64)
    le1 = np.asarray(le1, dtype=np.int64)
    return np.stack([n0 - le0, le0]), np.stack([le1, n1 - le1])


def auroc_from_counts(le0, le1, n0: int, n1: int) -> float:
    """P[s1 > s0] + P[s1 = s0] / 2 from counts at sorted thresholds, scores in the same bin (t_{k-1}, t_k] counted
    as ties: the Mann-Whitney statistic exactly when every distinct score value is a threshold, else that of the
    scores binned at the thresholds."""
    c0 = np.diff(np.concatenate([[0], np.asarray(le0, dtype=float), [n0]]))
    c1 = np.diff(np.concatenate([[0], np.asarray(le1, dtype=float), [n1]]))
    below0 = np.concatenate([[0.0], np.cumsum(c0)[:-1]])
    return float(np.sum(c1 * (below0 + 0.5 * c0)) / (float(n0) * float(n1)))


def candidate_thresholds(scores0, scores1, max_candidates: int = 2000) -> np.ndarray:
    """Observed pooled score values used as candidate thresholds (selection data only).

    All distinct values when there are at most ``max_candidates``; otherwise order statistics
    at geometrically spaced ranks from both ends plus evenly spaced ranks (the tails matter
    for large epsilon).
    """
    max_candidates = check_count("max_candidates", max_candidates, minimum=4)
    return candidates_of(np.unique(np.concatenate([as_scores(scores0, "scores0"), as_scores(scores1, "scores1")])),
                         max_candidates)


def candidates_of(pooled, max_candidates: int) -> np.ndarray:
    """:func:`candidate_thresholds` from the distinct pooled scores, sorted (``PooledScores.values``)."""
    n = pooled.size
    if n <= max_candidates:
        return pooled
    m = max_candidates // 3
    geo = np.unique(np.round(np.geomspace(1, n / 2, m)).astype(np.int64)) - 1
    ranks = np.unique(np.concatenate([geo, n - 1 - geo, np.linspace(0, n - 1, m).round().astype(np.int64)]))
    return pooled[ranks]


def criterion(kind: str, fpr_u, fnr_u, delta: float):
    """The bound of a test from upper bounds on its rates: epsilon (``kind="dp"``, with the delta term) or mu
    (``kind="gdp"``, under the mu-GDP assumption)."""
    check_kind(kind)
    if kind == "dp":
        return epsilon_lower_from_rates(fpr_u, fnr_u, delta)
    return mu_lower_from_rates(fpr_u, fnr_u)


#: relative slack of the rule-out in :func:`winning_criterion` (covers an ulp of non-monotone rounding in log/ndtri)
_RULE_OUT_SLACK = 1e-9


def winning_criterion(kind: str, k_fp, n0: int, k_fn, n1: int, level, delta: float) -> np.ndarray:
    """``criterion(kind, cp_upper(k_fp, n0, level), cp_upper(k_fn, n1, level), delta)`` wherever that value could be
    the largest, ``-inf`` where it certainly is not: the same maximum and the same first place of it
    (``numpy.argmax``), with exact Clopper-Pearson bounds (``betaincinv``) only where needed. Each test's criterion
    is bracketed by its values at the brackets of its two rates (:func:`dpaudit.audit.stats.binomial.cp_upper_bracket`;
    the criterion decreases in each rate); a test whose upper value is below the largest lower value (less a
    relative 1e-9) cannot reach the maximum."""
    k_fp = np.asarray(k_fp)
    k_fn = np.asarray(k_fn)
    lv = np.asarray(level, dtype=float)
    if k_fp.size < 64 or np.any(lv > 0.5) or lv.ndim:
        return np.asarray(criterion(kind, cp_upper(k_fp, n0, level), cp_upper(k_fn, n1, level), delta), dtype=float)
    lo0, hi0 = cp_upper_bracket(k_fp, n0, level)
    lo1, hi1 = cp_upper_bracket(k_fn, n1, level)
    top = np.asarray(criterion(kind, lo0, lo1, delta), dtype=float)
    bottom = np.asarray(criterion(kind, hi0, hi1, delta), dtype=float)
    best = float(np.max(bottom))
    maybe = top >= best - _RULE_OUT_SLACK * (1.0 + abs(best)) if np.isfinite(best) else np.ones(top.shape, bool)
    out = np.full(top.shape, -np.inf)
    out[maybe] = criterion(kind, cp_upper(k_fp[maybe], n0, level), cp_upper(k_fn[maybe], n1, level), delta)
    return out


def check_kind(kind: str) -> str:
    """``kind`` of a threshold test: ``"dp"`` (epsilon) or ``"gdp"`` (mu)."""
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
    return kind


def select_test(sel0, sel1, *, delta: float, beta: float, kind: str = "dp", max_candidates: int = 2000,
                pooled=None) -> dict:
    """Choose (threshold, orientation) on selection scores (a heuristic; validity comes later).

    Each candidate is scored by its Clopper-Pearson bound on the selection sample itself at the
    stricter level ``beta/10`` (``beta/20`` per rate). The stricter level penalises thresholds in
    the far tails, where few selection samples make the rates noisy, so the chosen test is one
    whose bound is likely to hold up on the evaluation sample (over six seeds at 1e5 samples per
    side this raised the Laplace ratio from 0.89 to 0.98 on average, see
    ``benchmarks/audit_tightness.py``).

    ``pooled``: the same scores sorted once (:class:`dpaudit.audit.stats.counting.PooledScores`), read instead of
    sorting them again (the same test).
    """
    if pooled is not None:
        t = candidates_of(pooled.values, check_count("max_candidates", max_candidates, minimum=4))
        return select_from_counts(t, pooled.counts(0, t), pooled.counts(1, t), pooled.n0, pooled.n1, delta=delta,
                                  beta=beta, kind=kind)
    sel0 = as_scores(sel0, "sel0")
    sel1 = as_scores(sel1, "sel1")
    t = candidate_thresholds(sel0, sel1, max_candidates)
    return select_from_counts(t, counts_at(sel0, t), counts_at(sel1, t), sel0.size, sel1.size, delta=delta,
                              beta=beta, kind=kind)


def select_from_counts(t, le0, le1, n0: int, n1: int, *, delta: float, beta: float, kind: str = "dp") -> dict:
    """:func:`select_test` on selection counts at candidate thresholds ``t`` (``le0[i] = #{s0 <= t_i}``): each
    (threshold, orientation) scored by its Clopper-Pearson bound on the selection counts at ``beta/20`` per rate."""
    kind = check_kind(kind)
    delta = check_audit_delta("delta", delta)
    beta = check_beta("beta", beta)
    k_fp, k_fn = oriented_from_counts(le0, le1, n0, n1)
    level = beta / 20.0
    crit = winning_criterion(kind, k_fp, n0, k_fn, n1, level, delta)
    o, i = np.unravel_index(int(np.argmax(crit)), crit.shape)
    return {"threshold": float(np.asarray(t, dtype=float)[i]), "orientation": ORIENTATIONS[o],
            "predicted": float(crit[o, i])}


def evaluate_test(scores0, scores1, threshold: float, orientation: str, *, delta: float, beta: float,
                  kind: str = "dp") -> dict:
    """Bound from ONE test fixed in advance, on fresh scores, at level ``beta`` (beta/2 per rate)."""
    kind = check_kind(kind)
    delta = check_audit_delta("delta", delta)
    beta = check_beta("beta", beta)
    if orientation not in ORIENTATIONS:
        raise ValueError(f"orientation must be one of {ORIENTATIONS}, got {orientation!r}")
    s0 = as_scores(scores0, "scores0")
    s1 = as_scores(scores1, "scores1")
    k_fp, k_fn = oriented_counts(s0, s1, [threshold])
    o = ORIENTATIONS.index(orientation)
    kfp, kfn = int(k_fp[o, 0]), int(k_fn[o, 0])
    fpr_u = cp_upper(kfp, s0.size, beta / 2.0)
    fnr_u = cp_upper(kfn, s1.size, beta / 2.0)
    value = criterion(kind, fpr_u, fnr_u, delta)
    return {"value": float(value), "threshold": float(threshold), "orientation": orientation,
            "k_fp": kfp, "k_fn": kfn, "n0": int(s0.size), "n1": int(s1.size),
            "fpr_upper": float(fpr_u), "fnr_upper": float(fnr_u), "beta": beta}


# ------------------------------------------------------------------ the ROC-frontier rule
def _upper_hull(x, y):
    """Indices of the upper concave hull of points sorted by x (ties in x: larger y last)."""
    keep: list[int] = []
    for i in range(x.size):  # monotone chain: at most 2 pushes/pops per point
        while len(keep) >= 2:
            a, b = keep[-2], keep[-1]
            if (x[b] - x[a]) * (y[i] - y[a]) - (y[b] - y[a]) * (x[i] - x[a]) >= 0:
                keep.pop()  # b lies on or below the chord a-i
            else:
                break
        keep.append(i)
    return np.asarray(keep, dtype=int)


def roc_frontier(sel0, sel1, max_points: int = FRONTIER_MAX_POINTS) -> dict:
    """The thresholds of the ROC frontier (upper concave hull of the empirical ROC curve) of the SELECTION scores.

    Orientation: ``">"`` when the selection AUROC is at least 1/2, else ``"<="``. Each hull vertex
    (FPR, TPR) is a threshold, bounded with both inequalities of Kairouz et al. (the test, and the test with the
    roles of D and D' swapped: the "two-sided" variant of jax_privacy's auditing module); the tests of the other
    orientation lie below the diagonal when the AUROC is at least 1/2 and are not charged for. More than
    ``max_points`` vertices are thinned to ``max_points`` spread evenly in log FPR (the tails matter for large
    epsilon). Everything here depends only on the selection scores.
    """
    s0 = as_scores(sel0, "sel0")
    s1 = as_scores(sel1, "sel1")
    t = np.unique(np.concatenate([s0, s1]))
    return frontier_from_counts(t, counts_at(s0, t), counts_at(s1, t), s0.size, s1.size, max_points)


def frontier_from_counts(t, le0, le1, n0: int, n1: int, max_points: int = FRONTIER_MAX_POINTS) -> dict:
    """:func:`roc_frontier` from counts at sorted candidate thresholds ``t`` (the orientation from the AUROC of
    the counts, exact when every distinct selection score is a candidate)."""
    max_points = check_count("max_points", max_points, minimum=2)
    t = np.asarray(t, dtype=float)
    k_fp, k_fn = oriented_from_counts(le0, le1, n0, n1)
    o = 0 if auroc_from_counts(le0, le1, n0, n1) >= 0.5 else 1  # selection AUROC of ">" (Mann-Whitney)
    fpr = k_fp[o] / n0
    tpr = 1.0 - k_fn[o] / n1
    order = np.lexsort((tpr, fpr))
    hull = order[_upper_hull(fpr[order], tpr[order])]
    hull = hull[(fpr[hull] < 1.0) & (tpr[hull] > 0.0)]  # the trivial corners certify nothing
    if hull.size == 0:
        hull = np.array([int(np.argmax(tpr - fpr))])
    if hull.size > max_points:
        lf = np.log(np.maximum(fpr[hull], 0.5 / n0))
        targets = np.linspace(lf.min(), lf.max(), max_points)
        pick = np.unique(np.clip(np.searchsorted(lf, targets), 0, hull.size - 1))
        hull = hull[pick]
    return {"thresholds": t[hull], "orientation": ORIENTATIONS[o], "fpr": fpr[hull], "tpr": tpr[hull]}
