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
binary ones, so ``"auto"`` does not pick it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dpaudit.audit.stats.binomial import cp_upper
from dpaudit.audit.stats.error_rates import check_audit_delta, check_beta
from dpaudit.audit.stats.thresholds import (
    ORIENTATIONS,
    as_scores,
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
           "frontier_test"]

#: quantile thresholds of a Bonferroni grid made from the selection scores
DEFAULT_GRID_SIZE = 50
#: tie-broken statistics with at most this many category boundaries get the Bonferroni rule under "auto"
MAX_BOUNDARY_GRID = 64


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
class Combined(ThresholdRule):
    """Several rules at beta / k each; the largest of their bounds (a union bound)."""

    rules: tuple = field(default_factory=lambda: (HeldOut(), Bonferroni()))
    name = "combined"


#: ``selection=`` strings and the rules they name
RULE_NAMES = ("heldout", "bonferroni", "combined", "frontier")
#: how a rule is described in ``AuditResult.method``
RULE_DESCRIPTIONS = {"heldout": "held-out threshold selection", "bonferroni": "Bonferroni over a fixed grid",
                     "combined": "held-out and Bonferroni at beta/2 each",
                     "frontier": "two-sided, Bonferroni over the selection ROC frontier"}


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
    if spec == "combined":
        return Combined((HeldOut(), Bonferroni(grid=None if grid is None else tuple(np.atleast_1d(grid).tolist()))))
    raise ValueError(f"selection must be one of {RULE_NAMES + ('auto',)} or a ThresholdRule, got {spec!r}")


def quantile_grid(sel0, sel1, size: int = DEFAULT_GRID_SIZE) -> np.ndarray:
    """Quantile grid from the selection sample (fixed before the evaluation sample is seen): levels spread
    geometrically towards both tails (the tails matter for large epsilon)."""
    pooled = np.concatenate([as_scores(sel0, "sel0"), as_scores(sel1, "sel1")])
    levels = np.unique(np.concatenate([np.geomspace(1e-4, 0.5, size // 2), 1 - np.geomspace(1e-4, 0.5, size // 2)]))
    return np.unique(np.quantile(pooled, levels, method="inverted_cdf"))


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


def plan_tests(rule: ThresholdRule, sel0, sel1, *, delta: float, beta: float, kind: str = "dp") -> TestPlan:
    """The dispatcher's first half: fix the tests of ``rule`` from the selection scores (never the evaluation)."""
    delta = check_audit_delta("delta", delta)
    beta = check_beta("beta", beta)
    if isinstance(rule, HeldOut):
        c = select_test(sel0, sel1, delta=delta, beta=beta, kind=kind, max_candidates=rule.max_candidates)
        return TestPlan("heldout", np.array([c["threshold"]]), (ORIENTATIONS.index(c["orientation"]),), beta / 2.0, beta,
                        {"selection": "held-out", "predicted": c["predicted"]})
    if isinstance(rule, Bonferroni):
        g = np.asarray(rule.grid, dtype=float) if rule.grid is not None else quantile_grid(sel0, sel1, rule.size)
        return TestPlan("bonferroni", g, (0, 1), beta / (2.0 * (2 * g.size)), beta,
                        {"grid_size": int(g.size), "selection": "bonferroni"})
    if isinstance(rule, Frontier):
        fr = roc_frontier(as_scores(sel0, "sel0"), as_scores(sel1, "sel1"), rule.max_points)
        g = fr["thresholds"]
        return TestPlan("frontier", g, (ORIENTATIONS.index(fr["orientation"]),), beta / (2.0 * g.size), beta,
                        {"grid_size": int(g.size), "selection": "frontier"})
    if isinstance(rule, Combined):
        k = len(rule.rules)
        parts = tuple(plan_tests(r, sel0, sel1, delta=delta, beta=beta / k, kind=kind) for r in rule.rules)
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
    fpr_u = cp_upper(k_fp[rows], n0, plan.level)
    fnr_u = cp_upper(k_fn[rows], n1, plan.level)
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
