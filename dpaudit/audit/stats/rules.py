"""Threshold rules: small value objects, and the one dispatcher that turns a rule into a certified bound.

A threshold audit certifies epsilon from the error counts of a test "guess D' iff s > t" (or "s <= t") on
evaluation scores that played no part in choosing the test (Kairouz, Oh, Viswanath 2015, Thm. 2.1, with
Clopper-Pearson rates; Jagielski, Ullman, Oprea 2020). A *rule* says how the test, or a fixed set of tests, is
chosen from the selection scores and how the failure probability beta is shared among them:

* :class:`HeldOut` -- one (threshold, orientation) chosen on the selection scores
  (:func:`~dpaudit.audit.stats.thresholds.select_test`), certified at beta (beta/2 per rate);
* :class:`Bonferroni` -- a grid fixed before the evaluation scores are seen (``grid``, or ``size`` quantiles of
  the selection scores), both orientations, every one of the G tests at beta/G (a union bound);
* :class:`Frontier` -- the thresholds of the selection sample's ROC frontier
  (:func:`~dpaudit.audit.stats.thresholds.roc_frontier`), both inequalities of Kairouz et al. at each, every one
  at beta/G;
* :class:`AllThresholds` -- every threshold of the scores that certify, both orientations, both inequalities of
  Kairouz et al.: a union bound over the order statistics with unequal shares (:func:`order_statistic_levels`),
  valid for thresholds chosen after seeing the evaluation scores, so it needs no selection scores at all;
* :class:`Combined` -- several rules at beta/k each, the largest bound (a union bound).

The rule objects carry parameters only; :func:`plan_tests` (selection scores -> the fixed tests and their
levels, a :class:`TestPlan`) and :func:`certify_plan` (the plan and the evaluation counts -> the bound) are the
dispatcher. Splitting the two is what lets evaluation runs return *counts* at the planned thresholds instead of
scores: the bound depends on the evaluation scores only through ``#{s <= t}`` at each planned ``t``.

``"auto"`` is not a rule of its own: the auditor fixes the rule from the type of the chosen statistic before any
evaluation draw (:func:`auto_rule`). Measured over 100 seeds at 3,000 trials (zero rate / mean bound):
randomized response eps = 0.15, binary score: held-out 2% / 0.064, Bonferroni 16% / 0.036, combined 7% / 0.052;
discrete Laplace eps = 0.2, empirical likelihood ratio: held-out 100% / 0, Bonferroni 77% / 0.0042, combined 86% /
0.0025. The frontier rule was measured beside the others on Gaussian, Laplace and randomized response at
1e4..1e6 trials (docs/audit-statistics.md): never the tightest for continuous scores, tied with held-out on
binary ones, so ``"auto"`` does not pick it. The all-thresholds rule was measured beside held-out and Bonferroni in
24 situations (Gaussian, Laplace, discrete Laplace, randomized response; 1e3..1e5 trials; fitted or fixed statistic;
20 seeds; ``benchmarks/audit_tightness.py --choice``, table in docs/audit-statistics.md): held-out best in 22, within
0.8 % in the other two, all-thresholds never best (its tail levels are about beta / 40 against beta / 2), so
``"auto"`` keeps the rules above.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import digamma, zeta

from dpaudit.audit.stats.binomial import REL_PAD, cp_upper
from dpaudit.audit.stats.error_rates import check_audit_delta, check_beta
from dpaudit.audit.stats.thresholds import (
    ORIENTATIONS,
    as_scores,
    candidate_thresholds,
    check_kind,
    counts_at,
    criterion,
    roc_frontier,
    select_test,
)
from dpaudit.core.validation import check_count

__all__ = ["ThresholdRule", "HeldOut", "Bonferroni", "Frontier", "Combined", "TestPlan", "RULE_NAMES",
           "threshold_rule", "plan_tests", "counts_at", "certify_plan", "threshold_test", "quantile_grid",
           "auto_rule", "MAX_BOUNDARY_GRID", "DEFAULT_GRID_SIZE", "RULE_DESCRIPTIONS", "heldout_test", "bonferroni_test",
           "frontier_test", "AllThresholds", "order_statistic_levels", "all_thresholds_test",
           "ALL_THRESHOLDS_EXPONENT", "ALL_THRESHOLDS_GRID"]

#: quantile thresholds of a Bonferroni grid made from the selection scores
DEFAULT_GRID_SIZE = 50
#: tie-broken statistics with at most this many category boundaries get the Bonferroni rule under "auto"
MAX_BOUNDARY_GRID = 64
#: exponent s of the shares (d + 1)^-s of :func:`order_statistic_levels` (measured best of 0.5..2 on the Gaussian
#: at 1e4..1e6 draws, plug-in rates: 1.0 and 1.2 within 0.2 % of each other, 1.2 ahead at 1e5 and 1e6)
ALL_THRESHOLDS_EXPONENT = 1.2
#: thresholds of an :class:`AllThresholds` plan fixed on selection scores (for counts streamed by the evaluation)
ALL_THRESHOLDS_GRID = 4096


class ThresholdRule:
    """Base of the threshold rules (value objects; :func:`plan_tests` dispatches on their type)."""

    name = ""


@dataclass(frozen=True)
class HeldOut(ThresholdRule):
    """One test chosen on the selection scores (among ``max_candidates`` observed values), certified on the
    evaluation scores at beta."""

    max_candidates: int = 2000
    name = "heldout"


@dataclass(frozen=True)
class Bonferroni(ThresholdRule):
    """Every (threshold, orientation) of a grid fixed before the evaluation, each at beta / G.

    ``grid``: the thresholds (fixed in advance); ``None``: ``size`` quantiles of the selection scores."""

    grid: tuple | None = None
    size: int = DEFAULT_GRID_SIZE
    name = "bonferroni"

    def __post_init__(self):
        if self.grid is not None:
            g = np.atleast_1d(np.asarray(self.grid, dtype=float))
            if g.ndim != 1 or g.size == 0 or np.any(np.isnan(g)):
                raise ValueError("grid must be a non-empty 1-D array of thresholds without NaN")
            object.__setattr__(self, "grid", tuple(g.tolist()))
        check_count("size", self.size, minimum=2)


@dataclass(frozen=True)
class Frontier(ThresholdRule):
    """Both Kairouz et al. inequalities at every threshold of the selection ROC frontier, each at beta / G."""

    max_points: int = 128
    name = "frontier"


@dataclass(frozen=True)
class AllThresholds(ThresholdRule):
    """Every threshold of the certifying scores, both orientations and both Kairouz et al. inequalities at each, the
    rates bounded at the unequal levels of :func:`order_statistic_levels` (beta/4 per family of order statistics).

    Validity (a union bound over order statistics, not over thresholds). Let X_1..X_n be i.i.d. with any law,
    q(t) = P[X > t], K(t) = #{X_i > t}, and let U_k be the Clopper-Pearson upper bound for k successes in n at
    level a_k (U_n = 1), the a_k fixed before the draws. Then P[exists t: q(t) > U_{K(t)}] <= sum_k a_k. Proof:
    for k < n let c = U_k and A = {t: q(t) > c}, a half-line to the left because q is non-increasing. If A =
    (-inf, r], the event "K(t) <= k for some t in A" is K(r) <= k, and K(r) ~ Bin(n, q(r)) with q(r) > c; if A =
    (-inf, r), it is #{X_i >= r} <= k with #{X_i >= r} ~ Bin(n, P[X >= r]), P[X >= r] >= c. Either way its
    probability is at most P[Bin(n, c) <= k] = a_k (the definition of U_k), and the union over k adds the a_k.
    The same holds for #{X_i <= t} (apply it to -X). The four families -- #{s0 > t}, #{s0 <= t}, #{s1 <= t},
    #{s1 > t} -- at beta/4 each bound every FPR and FNR of every threshold and both orientations at once with
    probability >= 1 - beta, so the largest Kairouz et al. bound over ANY set of thresholds -- all evaluation
    scores, their ROC frontier, a grid, chosen before or after the draws -- is valid at level beta. Nothing is
    chosen on selection scores, so with ``pool_selection`` the selection scores certify too (a fixed statistic
    needs no selection sample). This is the valid form of jax_privacy's ``epsilon_clopper_pearson(alpha, delta,
    one_sided=False)`` (Bonferroni over the G points of the evaluation scores' Pareto frontier, a number that
    depends on the draws: not a union bound this module can prove, so it is not offered). ``exponent``: the shares
    (d + 1)^-exponent, d the count's distance to the nearer end (the tails, where the bound is decided, pay least).
    """

    exponent: float = ALL_THRESHOLDS_EXPONENT
    pool_selection: bool = True
    name = "all-thresholds"

    def __post_init__(self):
        if not (isinstance(self.exponent, (int, float)) and 0.0 <= self.exponent <= 4.0):
            raise ValueError(f"exponent must be a number in [0, 4], got {self.exponent!r}")


def _share_norm(n: int, s: float) -> float:
    """sum_{k=0}^{n-1} (min(k, n-1-k) + 1)^-s, rounded up (Hurwitz zeta; a direct sum for small n)."""
    m = n // 2
    if n <= 4096 or s == 0.0:
        d = np.minimum(np.arange(n), n - 1 - np.arange(n)) + 1.0
        z = float(np.sum(d ** -s))
    else:
        h = float(digamma(m + 1.0)) + float(np.euler_gamma) if s == 1.0 else float(zeta(s, 1.0) - zeta(s, m + 1.0))
        z = 2.0 * h  # the harmonic number H_m^(s) (Hurwitz zeta; digamma for s = 1)
        if n % 2:
            z += (m + 1.0) ** -s
    return z * (1.0 + REL_PAD)


def order_statistic_levels(k, n: int, beta: float, exponent: float = ALL_THRESHOLDS_EXPONENT) -> np.ndarray:
    """The level a_k = beta * (d + 1)^-s / Z of a count ``k`` of ``n`` (d = min(k, n-1-k), Z the sum of the shares
    over k = 0..n-1, so that sum_k a_k <= beta): the levels of one family of :class:`AllThresholds`."""
    n = check_count("n", n, minimum=1)
    beta = check_beta("beta", beta)
    k = np.asarray(k, dtype=float)
    d = np.clip(np.minimum(k, n - 1.0 - k), 0.0, None)
    return beta * (d + 1.0) ** -float(exponent) / _share_norm(n, float(exponent))


@dataclass(frozen=True)
class Combined(ThresholdRule):
    """Several rules at beta / k each; the largest of their bounds (a union bound)."""

    rules: tuple = field(default_factory=lambda: (HeldOut(), Bonferroni()))
    name = "combined"


#: ``selection=`` strings and the rules they name
RULE_NAMES = ("heldout", "bonferroni", "combined", "frontier", "all-thresholds")
#: how a rule is described in ``AuditResult.method``
RULE_DESCRIPTIONS = {"heldout": "held-out threshold selection", "bonferroni": "Bonferroni over a fixed grid",
                     "combined": "held-out and Bonferroni at beta/2 each",
                     "frontier": "two-sided, Bonferroni over the selection ROC frontier",
                     "all-thresholds": "two-sided, every threshold, a union bound over the order statistics"}


def threshold_rule(spec, grid=None) -> ThresholdRule:
    """The rule named by ``spec``: a :class:`ThresholdRule`, or one of :data:`RULE_NAMES` (with ``grid`` for
    ``"bonferroni"`` / ``"combined"``: the thresholds fixed in advance)."""
    if isinstance(spec, ThresholdRule):
        return spec
    if spec == "heldout":
        return HeldOut()
    if spec == "bonferroni":
        return Bonferroni(grid=None if grid is None else tuple(np.atleast_1d(grid).tolist()))
    if spec == "frontier":
        return Frontier()
    if spec == "all-thresholds":
        return AllThresholds()
    if spec == "combined":
        return Combined((HeldOut(), Bonferroni(grid=None if grid is None else tuple(np.atleast_1d(grid).tolist()))))
    raise ValueError(f"selection must be one of {RULE_NAMES + ('auto',)} or a ThresholdRule, got {spec!r}")


def quantile_grid(sel0, sel1, size: int = DEFAULT_GRID_SIZE, *, pooled=None) -> np.ndarray:
    """Quantile grid from the selection sample (fixed before the evaluation sample is seen): levels spread
    geometrically towards both tails (the tails matter for large epsilon). ``pooled``: the same scores sorted once
    (:class:`dpaudit.audit.stats.counting.PooledScores`; the same grid)."""
    levels = np.unique(np.concatenate([np.geomspace(1e-4, 0.5, size // 2), 1 - np.geomspace(1e-4, 0.5, size // 2)]))
    if pooled is not None:
        return np.unique(pooled.quantiles(levels))
    scores = np.concatenate([as_scores(sel0, "sel0"), as_scores(sel1, "sel1")])
    return np.unique(np.quantile(scores, levels, method="inverted_cdf"))


@dataclass(frozen=True)
class TestPlan:
    """The tests a rule fixed on the selection scores, before any evaluation score is seen.

    ``thresholds`` (sorted or not), ``orientations`` (indices into ``ORIENTATIONS`` tried at each threshold),
    ``level`` (the failure probability of each rate's Clopper-Pearson bound), ``beta`` (the plan's whole failure
    probability), ``record`` (what the result reports besides the
    numbers: the selection's prediction, the grid size), ``parts`` (a :class:`Combined` rule's sub-plans)."""

    rule: str
    thresholds: np.ndarray
    orientations: tuple
    level: float
    beta: float
    record: dict
    parts: tuple = ()


def plan_tests(rule: ThresholdRule, sel0, sel1, *, delta: float, beta: float, kind: str = "dp",
               pooled=None) -> TestPlan:
    """The dispatcher's first half: fix the tests of ``rule`` from the selection scores (never the evaluation).
    ``pooled``: the same scores sorted once (:class:`dpaudit.audit.stats.counting.PooledScores`), read instead of
    sorting them again (the same tests)."""
    delta = check_audit_delta("delta", delta)
    beta = check_beta("beta", beta)
    if isinstance(rule, HeldOut):
        c = select_test(sel0, sel1, delta=delta, beta=beta, kind=kind, max_candidates=rule.max_candidates,
                        pooled=pooled)
        return TestPlan("heldout", np.array([c["threshold"]]), (ORIENTATIONS.index(c["orientation"]),), beta / 2.0, beta,
                        {"selection": "held-out", "predicted": c["predicted"]})
    if isinstance(rule, Bonferroni):
        g = np.asarray(rule.grid, dtype=float) if rule.grid is not None else quantile_grid(sel0, sel1, rule.size,
                                                                                            pooled=pooled)
        return TestPlan("bonferroni", g, (0, 1), beta / (2.0 * (2 * g.size)), beta,
                        {"grid_size": int(g.size), "selection": "bonferroni"})
    if isinstance(rule, Frontier):
        fr = roc_frontier(as_scores(sel0, "sel0"), as_scores(sel1, "sel1"), rule.max_points)
        g = fr["thresholds"]
        return TestPlan("frontier", g, (ORIENTATIONS.index(fr["orientation"]),), beta / (2.0 * g.size), beta,
                        {"grid_size": int(g.size), "selection": "frontier"})
    if isinstance(rule, AllThresholds):  # counts streamed at a grid: any thresholds are valid (class docstring)
        g = candidate_thresholds(sel0, sel1, ALL_THRESHOLDS_GRID)
        return TestPlan("all-thresholds", g, (0, 1), beta / 4.0, beta,
                        {"grid_size": int(g.size), "selection": "all-thresholds", "exponent": rule.exponent})
    if isinstance(rule, Combined):
        k = len(rule.rules)
        parts = tuple(plan_tests(r, sel0, sel1, delta=delta, beta=beta / k, kind=kind, pooled=pooled)
                      for r in rule.rules)
        return TestPlan("combined", np.concatenate([p.thresholds for p in parts]), (0, 1), beta / k, beta, {}, parts)
    raise ValueError(f"rule must be a ThresholdRule (HeldOut, Bonferroni, Frontier, Combined), got {rule!r}")


def certify_plan(plan: TestPlan, le0, le1, n0: int, n1: int, *, delta: float, kind: str = "dp") -> dict:
    """The dispatcher's second half: the certified bound of ``plan`` from the evaluation counts ``le0[i] =
    #{s0 <= t_i}``, ``le1[i] = #{s1 <= t_i}`` at its thresholds (``n0``, ``n1`` scores per side)."""
    le0 = np.asarray(le0, dtype=np.int64)
    le1 = np.asarray(le1, dtype=np.int64)
    if plan.parts:
        outs, start = [], 0
        for p in plan.parts:
            stop = start + p.thresholds.size
            outs.append(certify_plan(p, le0[start:stop], le1[start:stop], n0, n1, delta=delta, kind=kind))
            start = stop
        best = max(range(len(outs)), key=lambda i: outs[i]["value"])  # first on ties
        out = dict(outs[best])
        names = [p.rule for p in plan.parts]
        out.update({"selection": "combined (" + " and ".join(n.replace("heldout", "held-out").replace(
            "bonferroni", "Bonferroni") for n in names) + f" at beta/{len(names)} each, the larger)",
            "beta": plan.beta})
        for name, part in zip(names, outs):
            out[f"{name}_value"] = part["value"]
        return out
    k_fp = np.stack([n0 - le0, le0])  # orientation ">": FP = #{s0 > t}; "<=": FP = #{s0 <= t}
    k_fn = np.stack([le1, n1 - le1])
    rows = list(plan.orientations)
    lv0: float | np.ndarray = plan.level
    lv1: float | np.ndarray = plan.level
    if plan.rule == "all-thresholds":  # one level per count: AllThresholds
        lv0 = order_statistic_levels(k_fp[rows], n0, plan.level, plan.record["exponent"])
        lv1 = order_statistic_levels(k_fn[rows], n1, plan.level, plan.record["exponent"])
    fpr_u = cp_upper(k_fp[rows], n0, lv0)
    fnr_u = cp_upper(k_fn[rows], n1, lv1)
    crit = np.atleast_2d(np.asarray(criterion(kind, fpr_u, fnr_u, delta)))
    o, i = np.unravel_index(int(np.argmax(crit)), crit.shape)
    out = {"value": float(crit[o, i]), "threshold": float(plan.thresholds[i]), "orientation": ORIENTATIONS[rows[o]],
           "k_fp": int(k_fp[rows[o], i]), "k_fn": int(k_fn[rows[o], i]), "n0": int(n0), "n1": int(n1),
           "fpr_upper": float(np.atleast_2d(fpr_u)[o, i]), "fnr_upper": float(np.atleast_2d(fnr_u)[o, i]),
           "beta": float(plan.beta)}
    out.update(plan.record)
    return out


def threshold_test(rule: ThresholdRule, sel0, sel1, eval0, eval1, *, delta: float, beta: float,
                   kind: str = "dp") -> dict:
    """``rule`` applied to scores: plan on (sel0, sel1), count and certify on (eval0, eval1)."""
    eval0 = as_scores(eval0, "eval0")
    eval1 = as_scores(eval1, "eval1")
    if isinstance(rule, AllThresholds):
        return all_thresholds_test(sel0, sel1, eval0, eval1, delta=delta, beta=beta, kind=kind, rule=rule)
    plan = plan_tests(rule, sel0, sel1, delta=delta, beta=beta, kind=kind)
    return certify_plan(plan, counts_at(eval0, plan.thresholds), counts_at(eval1, plan.thresholds), eval0.size,
                        eval1.size, delta=delta, kind=kind)


def auto_rule(*, fit_free: bool, values: int | None, boundaries=None) -> tuple[ThresholdRule, str]:
    """The rule ``selection="auto"`` uses for a chosen statistic, fixed before any evaluation draw, with the reason:
    a statistic that fits nothing (its threshold is chosen on all the selection runs), or one with at most 2
    values or many values: held-out; a statistic with few values (``values`` categories and ``boundaries`` of at
    most :data:`MAX_BOUNDARY_GRID` thresholds): Bonferroni over its category boundaries."""
    if fit_free:
        return HeldOut(), "the winner fits nothing: held-out threshold on all selection runs"
    if values is not None and values <= 2:
        return HeldOut(), f"statistic with {values} values: held-out (the choice of test is easy)"
    if boundaries is not None and boundaries.size <= MAX_BOUNDARY_GRID:
        return (Bonferroni(grid=tuple(np.asarray(boundaries, dtype=float).tolist())),
                f"statistic with {values} values: Bonferroni over its category boundaries")
    return HeldOut(), "statistic with many values: held-out threshold"


# ------------------------------------------------------------------ the rules on scores, one call each
def heldout_test(sel0, sel1, eval0, eval1, *, delta: float, beta: float, kind: str = "dp",
                 max_candidates: int = 2000) -> dict:
    """Held-out split: choose the test on (sel0, sel1), certify it on (eval0, eval1) at ``beta``. Valid by the
    independence of the two samples."""
    check_kind(kind)
    return threshold_test(HeldOut(max_candidates), sel0, sel1, eval0, eval1, delta=delta, beta=beta, kind=kind)


def bonferroni_test(scores0, scores1, grid, *, delta: float, beta: float, kind: str = "dp") -> dict:
    """Bonferroni over a FIXED grid (a union bound over the grid's thresholds).

    ``grid`` must not depend on ``scores0``/``scores1``. All G = 2*len(grid) (threshold,
    orientation) tests are bounded at level beta/G (beta/(2G) per rate) and the largest bound
    is returned, valid at level beta by the union bound.
    """
    check_kind(kind)
    delta = check_audit_delta("delta", delta)
    beta = check_beta("beta", beta)
    rule = Bonferroni(grid=grid)
    s0, s1 = as_scores(scores0, "scores0"), as_scores(scores1, "scores1")
    plan = plan_tests(rule, s0, s1, delta=delta, beta=beta, kind=kind)  # the grid is fixed: no score is read
    return certify_plan(plan, counts_at(s0, plan.thresholds), counts_at(s1, plan.thresholds), s0.size, s1.size,
                        delta=delta, kind=kind)


def frontier_test(eval0, eval1, thresholds, orientation: str, *, delta: float, beta: float, kind: str = "dp") -> dict:
    """Two-sided Clopper-Pearson with Bonferroni over a frontier FIXED in advance
    (:func:`~dpaudit.audit.stats.thresholds.roc_frontier` of the selection scores): each of the G thresholds is
    bounded at beta/G (beta/(2G) per rate), with both inequalities of Kairouz, Oh, Viswanath 2015 at each; the
    largest bound is valid at level beta by the union bound."""
    check_kind(kind)
    delta = check_audit_delta("delta", delta)
    beta = check_beta("beta", beta)
    if orientation not in ORIENTATIONS:
        raise ValueError(f"orientation must be one of {ORIENTATIONS}, got {orientation!r}")
    g = np.atleast_1d(np.asarray(thresholds, dtype=float))
    if g.ndim != 1 or g.size == 0 or np.any(np.isnan(g)):
        raise ValueError("thresholds must be a non-empty 1-D array without NaN")
    s0, s1 = as_scores(eval0, "eval0"), as_scores(eval1, "eval1")
    plan = TestPlan("frontier", g, (ORIENTATIONS.index(orientation),), beta / (2.0 * g.size), beta,
                    {"grid_size": int(g.size), "selection": "frontier"})
    return certify_plan(plan, counts_at(s0, g), counts_at(s1, g), s0.size, s1.size, delta=delta, kind=kind)


def all_thresholds_test(sel0, sel1, eval0, eval1, *, delta: float, beta: float, kind: str = "dp",
                        rule: AllThresholds | None = None) -> dict:
    """:class:`AllThresholds` on scores: every distinct certifying score is a threshold (the evaluation scores, and
    the selection scores too when ``rule.pool_selection``: nothing is chosen on them), both orientations, the union
    bound over order statistics of the class docstring at level ``beta``."""
    check_kind(kind)
    delta = check_audit_delta("delta", delta)
    beta = check_beta("beta", beta)
    rule = AllThresholds() if rule is None else rule
    s0, s1 = as_scores(eval0, "eval0"), as_scores(eval1, "eval1")
    if rule.pool_selection:
        s0 = np.concatenate([np.asarray(sel0, dtype=float).ravel(), s0])
        s1 = np.concatenate([np.asarray(sel1, dtype=float).ravel(), s1])
    t = np.unique(np.concatenate([s0, s1]))
    le0, le1 = counts_at(s0, t), counts_at(s1, t)
    # any subset of thresholds is valid: every one whose count is within ALL_THRESHOLDS_GRID of an end (the tails,
    # where large bounds are decided), and ALL_THRESHOLDS_GRID evenly spaced ones between (rates within 1/4096)
    near = np.minimum(np.minimum(le0, s0.size - le0), np.minimum(le1, s1.size - le1)) <= ALL_THRESHOLDS_GRID
    near[np.round(np.linspace(0, t.size - 1, min(t.size, ALL_THRESHOLDS_GRID))).astype(int)] = True
    plan = TestPlan("all-thresholds", t[near], (0, 1), beta / 4.0, beta,
                    {"grid_size": int(t.size), "selection": "all-thresholds", "exponent": rule.exponent,
                     "pooled_selection": bool(rule.pool_selection)})
    return certify_plan(plan, le0[near], le1[near], s0.size, s1.size, delta=delta, kind=kind)
