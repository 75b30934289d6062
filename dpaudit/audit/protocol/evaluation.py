"""What the evaluation runs of a threshold audit count, and the certified result from those counts.

Once the attack and the selection scores are fixed, a threshold audit needs of its evaluation runs only the
counts ``#{score <= t}`` at a finite set of thresholds fixed in advance (Kairouz, Oh, Viswanath 2015, Thm. 2.1
with Clopper-Pearson rates): the tests of its threshold rule (:mod:`dpaudit.audit.stats.rules`), those of the GDP
estimate, the thresholds of the descriptive statistics (TPR at a fixed FPR, best accuracy), a descriptive grid
(the ROC curve and the AUROC, binned at it), and the advisory grid. :func:`plan_evaluation` fixes them all from
the selection scores; :class:`ScoreCounts` is the chunk function that turns a chunk of mechanism runs into those
counts where the runs are drawn (a process, a Dask worker), so only integer counts travel and the client holds
O(thresholds) whatever the number of runs; :func:`certify` turns the summed counts into the result. Counts add up
exactly, in any order: the result depends on the seed and the trial count only, never on the chunking, the
number of workers or the executor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpaudit.audit.attacks.outputs import as_output_batch, conform
from dpaudit.audit.attacks.selection import tiebreak_seed
from dpaudit.audit.protocol.chunks import ScoredRunCounts  # defined there: light to import where chunks run
from dpaudit.audit.stats.attack_stats import statistics_from_counts, statistics_thresholds
from dpaudit.audit.stats.counting import PooledScores, inverted_cdf_index
from dpaudit.audit.stats.power import advice_grid, threshold_advice_from_counts
from dpaudit.audit.stats.rules import HeldOut, TestPlan, ThresholdRule, certify_plan, plan_tests
from dpaudit.audit.stats.thresholds import (
    ORIENTATIONS,
    as_scores,
    auroc_from_counts,
    candidate_thresholds,
    counts_at,
    oriented_from_counts,
    select_from_counts,
)
from dpaudit.core.runner import Counts

__all__ = ["EvaluationPlan", "plan_evaluation", "ScoreCounts", "ScoredRunCounts", "certify", "describe_grid",
           "DESCRIBE_POINTS", "ROC_POINTS", "selection_grid", "SelectionCounts", "TAIL_POINTS", "inverted_cdf_index"]

#: thresholds of the descriptive grid (ROC curve, AUROC) fixed on the selection scores
DESCRIBE_POINTS = 2048
#: points of the ROC curve recorded in ``details["roc"]``
ROC_POINTS = 201


def describe_grid(sel0, sel1, points: int = DESCRIBE_POINTS, *, pooled_scores: PooledScores | None = None) -> np.ndarray:
    """Every distinct selection score when there are at most ``points``, else ``points`` quantiles of them (evenly
    spread, and geometrically towards both tails): fixed before the evaluation, it bins the evaluation scores for the
    ROC curve and the AUROC (exact when the statistic takes only values seen in selection). ``pooled_scores``: the
    same scores sorted once (the same grid)."""
    if pooled_scores is not None:
        pooled, values = pooled_scores.pooled, pooled_scores.values
    else:
        pooled = np.concatenate([np.asarray(sel0, dtype=float).ravel(), np.asarray(sel1, dtype=float).ravel()])
        pooled = np.sort(pooled)
        values = np.unique(pooled)
    if pooled.size == 0:
        return np.empty(0)
    if values.size <= points:
        return values
    tail = np.geomspace(0.5 / pooled.size, 0.5, points // 4)
    levels = np.unique(np.clip(np.concatenate([tail, 1.0 - tail, np.linspace(0.0, 1.0, points // 2)]), 0.0, 1.0))
    return np.unique(pooled[inverted_cdf_index(pooled.size, levels)])


#: thresholds added beyond each end of the kept selection scores by :func:`selection_grid`
TAIL_POINTS = 256


def selection_grid(kept0, kept1, max_candidates: int = 2000) -> np.ndarray:
    """The fine grid on which streamed selection runs are counted: the held-out rule's candidate thresholds on the
    kept selection scores (:func:`dpaudit.audit.stats.thresholds.candidate_thresholds`), extended into both tails
    by ``TAIL_POINTS`` evenly spaced points over half the kept scores' range beyond their extremes (a larger sample
    reaches further out: at 10^9 runs the best threshold of a Gaussian pair lies beyond the largest of 3 x 10^5).
    Fixed on the kept scores alone, before the streamed or evaluation runs are drawn."""
    t = candidate_thresholds(kept0, kept1, max_candidates)
    finite = t[np.isfinite(t)]
    if finite.size >= 2 and finite[-1] > finite[0]:
        lo, hi = float(finite[0]), float(finite[-1])
        half = 0.5 * (hi - lo)
        if np.isfinite(half):
            step = np.linspace(0.0, half, TAIL_POINTS + 1)[1:]
            t = np.concatenate([t, hi + step, lo - step])
    return np.unique(t)


@dataclass(frozen=True)
class SelectionCounts:
    """Selection runs beyond the kept ones, streamed as counts ``le0[i] = #{s0 <= grid_i}`` (``n`` runs per input)
    at a grid fixed on the kept scores (:func:`selection_grid`); the held-out rule chooses its test on the kept and
    the streamed runs together."""

    grid: np.ndarray
    le0: np.ndarray
    le1: np.ndarray
    n: int


def _heldout_from_counts(rule: HeldOut, s0, s1, streamed: SelectionCounts, *, delta: float, beta: float,
                         kind: str, pooled: PooledScores | None = None) -> TestPlan:
    """The held-out rule's test (:func:`dpaudit.audit.stats.rules.plan_tests`) chosen on the kept scores ``s0``,
    ``s1`` and the streamed counts together, among the thresholds of the streamed grid."""
    g = streamed.grid
    k0, k1 = (pooled.counts(0, g), pooled.counts(1, g)) if pooled is not None else (counts_at(s0, g), counts_at(s1, g))
    c = select_from_counts(g, k0 + streamed.le0, k1 + streamed.le1,
                           s0.size + streamed.n, s1.size + streamed.n, delta=delta, beta=beta, kind=kind)
    return TestPlan("heldout", np.array([c["threshold"]]), (ORIENTATIONS.index(c["orientation"]),), beta / 2.0, beta,
                    {"selection": "held-out", "predicted": c["predicted"]})


@dataclass(frozen=True)
class EvaluationPlan:
    """Everything the evaluation of one attack counts, fixed on its selection scores (module docstring)."""

    rule: ThresholdRule
    dp: TestPlan
    gdp: TestPlan
    statistics: dict          # statistics_thresholds(...): orientation, FPR-level and accuracy thresholds
    describe: np.ndarray      # the descriptive grid (ROC curve, AUROC)
    advice: np.ndarray        # the advisory grid
    thresholds: np.ndarray    # the sorted union of all of them: what the evaluation counts
    selection_le: tuple       # counts of the selection scores at the advisory grid: (le0, le1, n0, n1)

    @property
    def size(self) -> int:
        return int(self.thresholds.size)


def plan_evaluation(rule: ThresholdRule, sel0, sel1, *, delta: float, beta: float, fpr_levels,
                    streamed: SelectionCounts | None = None) -> EvaluationPlan:
    """Fix, on the selection scores alone, every threshold the evaluation counts (module docstring). With
    ``streamed`` (a held-out rule only), the held-out tests are chosen on the kept and the streamed selection runs
    together; everything else on the kept scores."""
    s0 = np.asarray(sel0, dtype=float).ravel()
    s1 = np.asarray(sel1, dtype=float).ravel()
    have = bool(s0.size and s1.size)  # no selection scores: a grid fixed in advance (Bonferroni) stands in
    pooled = PooledScores.of(s0, s1)  # sorted once, read by every rule and statistic below
    if streamed is not None:
        if not isinstance(rule, HeldOut):
            raise ValueError(f"streamed selection counts serve the held-out rule only, got {rule!r}")
        dp, gdp = (_heldout_from_counts(rule, s0, s1, streamed, delta=delta, beta=beta, kind=k,
                                                pooled=pooled) for k in ("dp", "gdp"))
    else:
        dp = plan_tests(rule, s0, s1, delta=delta, beta=beta, kind="dp", pooled=pooled)
        gdp = plan_tests(rule, s0, s1, delta=delta, beta=beta, kind="gdp", pooled=pooled)
    st = statistics_thresholds(s0, s1, fpr_levels=fpr_levels, pooled=pooled)
    describe = describe_grid(s0, s1, pooled_scores=pooled) if have else np.asarray(dp.thresholds, dtype=float)
    adv = advice_grid(s0, s1, pooled=pooled) if have else np.asarray(dp.thresholds, dtype=float)
    extra = np.asarray(st["fpr"] + ([st["accuracy"]] if st["accuracy"] is not None else []), dtype=float)
    every = np.unique(np.concatenate([dp.thresholds, gdp.thresholds, extra, describe, adv]).astype(float))
    if pooled is not None:
        sel_le = (pooled.counts(0, adv), pooled.counts(1, adv), int(s0.size), int(s1.size))
    else:
        sel_le = (counts_at(s0, adv) if have else np.zeros(adv.size, np.int64),
                  counts_at(s1, adv) if have else np.zeros(adv.size, np.int64), int(s0.size), int(s1.size))
    return EvaluationPlan(rule, dp, gdp, st, describe, adv, every, sel_le)


def _at(plan: EvaluationPlan, t, le):
    """The counts ``le`` (at ``plan.thresholds``) read at thresholds ``t`` (each one of them)."""
    idx = np.searchsorted(plan.thresholds, np.asarray(t, dtype=float))
    return np.asarray(le, dtype=np.int64)[idx]


def _roc(plan: EvaluationPlan, le0, le1, n0: int, n1: int, orientation: str) -> dict:
    """The evaluation ROC curve at the descriptive grid (thinned to ``ROC_POINTS``), for plotting."""
    t = plan.describe
    if t.size > ROC_POINTS:
        t = t[np.unique(np.round(np.linspace(0, t.size - 1, ROC_POINTS)).astype(int))]
    k_fp, k_fn = oriented_from_counts(_at(plan, t, le0), _at(plan, t, le1), n0, n1)
    o = ORIENTATIONS.index(orientation)
    fpr = np.concatenate([[0.0, 1.0], k_fp[o] / n0])
    tpr = np.concatenate([[0.0, 1.0], 1.0 - k_fn[o] / n1])
    idx = np.lexsort((tpr, fpr))
    return {"fpr": fpr[idx].tolist(), "tpr": tpr[idx].tolist(), "orientation": orientation}


def certify(plan: EvaluationPlan, le0, le1, n0: int, n1: int, *, epsilon: float, delta: float, confidence: float,
            trials: int, fpr_levels=None) -> dict:
    """The threshold test, the GDP test, the ROC curve, the descriptive statistics and the advice from the evaluation
    counts ``le0[i] = #{s0 <= t_i}``, ``le1[i]`` at ``plan.thresholds`` (``n0``, ``n1`` evaluation runs)."""
    beta = 1.0 - confidence
    thr = certify_plan(plan.dp, _at(plan, plan.dp.thresholds, le0), _at(plan, plan.dp.thresholds, le1), n0, n1,
                       delta=delta, kind="dp")
    g = certify_plan(plan.gdp, _at(plan, plan.gdp.thresholds, le0), _at(plan, plan.gdp.thresholds, le1), n0, n1,
                     delta=delta, kind="gdp")
    d = plan.describe
    stats = statistics_from_counts(plan.statistics, plan.thresholds, le0, le1, n0, n1, confidence=confidence,
                                   auroc_value=auroc_from_counts(_at(plan, d, le0), _at(plan, d, le1), n0, n1),
                                   auroc_method=f"Mann-Whitney U on the evaluation scores binned at {d.size} "
                                                "thresholds fixed on the selection scores (exact for a statistic "
                                                "with no other values)")
    out = {"threshold_test": thr, "gdp_test": g, "roc": _roc(plan, le0, le1, n0, n1, thr["orientation"]),
           "attack_statistics": stats}
    s0, s1, m0, m1 = plan.selection_le
    a = plan.advice
    out["advice"] = threshold_advice_from_counts(a, s0 + _at(plan, a, le0), s1 + _at(plan, a, le1), m0 + n0,
                                                 m1 + n1, n_eval=n0, epsilon=epsilon, delta=delta, beta=beta,
                                                 trials=max(int(trials), n0), selection=plan.rule.name,
                                                 grid_size=thr.get("grid_size"))
    return out


def _sorted_counts(scores, thresholds) -> np.ndarray:
    """:func:`~dpaudit.audit.stats.thresholds.counts_at` of scores already checked (``as_scores``): sort, then one
    search per threshold (numpy's vectorised sort: 9-11 ns a score at 5 x 10^4-5 x 10^5 scores and 3,000 thresholds,
    faster than a table of cells, measured in issue 30)."""
    return np.searchsorted(np.sort(scores), thresholds, side="right").astype(np.int64)


class ScoreCounts:
    """Chunk function (picklable, for pools and clusters): ``size`` runs of ``sampler`` on ``inp``, scored by each
    ``(statistic, tiebreak, thresholds)`` of ``tests`` and reduced to the counts ``#{score <= t}`` at that test's
    sorted thresholds (concatenated over the tests) -- a :class:`~dpaudit.core.runner.Counts` of ``size`` trials.
    The tie-break coins come from the chunk's tie-break stream, as when scores are kept."""

    def __init__(self, sampler, inp, tests, encode=None, spec=None):
        self.sampler, self.inp, self.tests, self.encode, self.spec = sampler, inp, tests, encode, spec

    def __call__(self, size, seed_seq) -> Counts:
        rng = np.random.default_rng(seed_seq)
        batch = as_output_batch(self.sampler(self.inp, rng, size), size, self.encode)
        if self.spec is not None:
            batch = conform(batch, self.spec)
        coins = None  # the auditor's tie-break coins of this chunk, drawn once when a test needs them
        out = []
        for statistic, tiebreak, thresholds in self.tests:
            s = as_scores(statistic(batch), "statistic(outputs)")
            if s.size != size:
                raise ValueError(f"statistic(outputs) returned {s.size} scores for {size} outputs")
            if tiebreak is not None:
                if tiebreak.randomize and coins is None:
                    coins = np.random.default_rng(tiebreak_seed(seed_seq)).random(size)
                s = tiebreak(s, coins if tiebreak.randomize else 0.0)
            out.append(_sorted_counts(s, thresholds))
        return Counts(int(size), np.concatenate(out))
