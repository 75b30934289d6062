"""The two-sample protocol: choose on selection runs, certify on evaluation runs (the engine every auditor shares).

Method (Kairouz, Oh, Viswanath 2015; Jagielski, Ullman, Oprea 2020; Nasr et al. 2023):

1. Draw ``trials`` outputs on each neighbouring input, split into a *selection* part (``selection_fraction``)
   and an *evaluation* part, from independent random streams (:func:`split_trials`; children 0-3 of the audit's
   seed are the selection and evaluation streams of x and x').
2. Score the outputs: a fixed statistic, or the winner of a contest of attack families fitted on the first half
   of the selection runs and compared on the second half (:func:`select_attack`,
   :func:`dpaudit.audit.attacks.selection.choose_attack`), together with the neighbouring pair when several are
   candidates.
3. Fix the threshold rule's tests on the selection scores and certify on the evaluation scores
   (:mod:`dpaudit.audit.stats.rules`): one-sided Clopper-Pearson bounds on FPR and FNR and
   epsilon_LB = max{0, log((1-delta-FNR+)/FPR+), log((1-delta-FPR+)/FNR+)}.
4. The GDP estimate (Dong, Roth, Su 2019; Nasr et al. 2023) is computed beside it and labelled an estimate; it
   never sets ``epsilon_lower`` or the verdict.

Soundness: the bound holds with probability >= confidence whatever the mechanism, because everything chosen
depends only on selection draws, which are independent of the evaluation draws.

Entry points: :func:`audit_scores` (scores the caller computed) and :func:`audit_sampler` (a
:class:`SamplerAudit`: a sampler, its candidate pairs and the audit's settings, fixed before the first trial).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from dpaudit.audit.attacks.outputs import as_output_batch, batch_spec, conform
from dpaudit.audit.attacks.registry import leak_kind
from dpaudit.audit.attacks.selection import (
    AttackChoice,
    Contest,
    FixedStatistic,
    boundary_grid,
    choose_attack,
    describe_input,
    score_batch,
    split_train_validation,
    tiebreak_seed,
)
from dpaudit.audit.protocol.evaluation import (
    ScoreCounts,
    ScoredRunCounts,
    SelectionCounts,
    certify,
    plan_evaluation,
    selection_grid,
)
from dpaudit.audit.protocol.result import AuditResult
from dpaudit.audit.protocol.verdict import GDP_LABEL
from dpaudit.audit.stats.attack_stats import DEFAULT_FPR_LEVELS, attack_statistics
from dpaudit.audit.stats.error_rates import check_audit_delta
from dpaudit.audit.stats.gdp import GDP_ASSUMPTION, gdp_epsilon_of
from dpaudit.audit.stats.power import threshold_advice
from dpaudit.audit.stats.rules import (
    MAX_BOUNDARY_GRID,
    RULE_DESCRIPTIONS,
    RULE_NAMES,
    Bonferroni,
    Combined,
    HeldOut,
    ThresholdRule,
    auto_rule,
    threshold_rule,
    threshold_test,
)
from dpaudit.audit.stats.thresholds import ORIENTATIONS, as_scores, oriented_counts
from dpaudit.core.deprecation import warn_deprecated_spelling
from dpaudit.core.numeric import round_down
from dpaudit.core.runner import Job, concat_chunks, run_jobs
from dpaudit.core.threads import blas_limited
from dpaudit.core.validation import check_confidence, check_nonnegative

__all__ = ["audit_scores", "audit_scored_runs", "audit_sampler", "SamplerAudit", "AttackChunk", "run_pair", "split_trials",
           "candidate_pairs", "select_attack", "attack_details", "describe_outputs_of", "roc_points", "runner",
           "METHODS", "GDP_METHOD", "FIT_FREE_WINNER", "fixed_statistic_rule", "SELECTION_CAP", "selection_sizes",
           "streamed_selection_seeds"]

METHODS = ("threshold", "gdp", "one-run")
#: name of the GDP estimator (``details["gdp"]["method"]``); its number is an estimate, never epsilon_lower
GDP_METHOD = "gdp (estimate assuming mu-GDP)"
#: ``details["attack"]["threshold_on"]`` of a winner that fits nothing, chosen among families that do
FIT_FREE_WINNER = "all selection runs (the winner fits nothing)"


#: selection runs per input kept whole (scores of a fixed statistic; outputs to fit and compare the attack families):
#: the attack fit and the held-out threshold need ~10^5 runs (the families' fits and the threshold's position in the
#: body of the distributions settle there, benchmarks/scaling_table.py); beyond it only the threshold's position in
#: the far tail gains, and that comes from streamed counts (:func:`selection_sizes`). 0.3 x 10^6: an audit of at
#: most 10^6 trials with the default ``selection_fraction`` keeps every selection run, as before.
SELECTION_CAP = 300_000
#: spawn-key entry of the streamed selection runs' seeds (a stream no other part of the audit draws from)
_STREAMED_SELECTION_KEY = 0x5E1EC7


# ------------------------------------------------------------------------------------ small pieces
def split_trials(trials: int, fraction: float) -> tuple[int, int]:
    """``(n_selection, n_evaluation)`` of ``trials`` runs per input, each at least 1."""
    n_sel = int(round(fraction * trials))
    n_sel = min(max(n_sel, 1), trials - 1)
    return n_sel, trials - n_sel


def selection_sizes(n_sel: int, cap: int | None = None) -> tuple[int, int]:
    """``(kept, streamed)`` of ``n_sel`` selection runs per input: at most ``cap`` (default :data:`SELECTION_CAP`)
    kept whole, the rest streamed as counts on a grid fixed on the kept ones
    (:func:`dpaudit.audit.protocol.evaluation.selection_grid`), so the client's memory does not grow with the
    audit."""
    cap = SELECTION_CAP if cap is None else cap
    return (n_sel, 0) if n_sel <= cap else (cap, n_sel - cap)


def streamed_selection_seeds(root) -> tuple:
    """The seeds of the streamed selection runs on x and x': children of a stream of ``root`` apart from the kept
    selection, the evaluation and every other stream of the audit."""
    base = np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + (_STREAMED_SELECTION_KEY,),
                                  pool_size=root.pool_size)
    return tuple(base.spawn(2))


def stream_selection(run, req, a, b, spec, statistic, tiebreak, kept0, kept1, rule: HeldOut, n: int,
                     root) -> SelectionCounts:
    """``n`` further selection runs per input, scored by ``statistic`` and counted where they are drawn on the grid
    of :func:`selection_grid` fixed on the kept scores ``kept0``, ``kept1``."""
    grid = selection_grid(kept0, kept1, rule.max_candidates)
    (le0, le1), = count_runs(run, req, a, b, spec, [(statistic, tiebreak, grid)], n, streamed_selection_seeds(root),
                             ("streamed selection runs on x", "streamed selection runs on x'"))
    return SelectionCounts(grid, le0, le1, int(n))


def runner(executor, chunk_size: int, retries: int):
    """``run(jobs) -> per job, its chunk results``: :func:`dpaudit.core.runner.run_jobs` on an open executor."""
    return partial(run_jobs, chunk_size=chunk_size, executor=executor, retries=retries)


class AttackChunk:
    """Chunk function (picklable, for pools): ``size`` outputs of ``sampler`` on ``inp`` in the
    audit's representation, or -- with ``statistic`` -- only their scores, tie-broken with the
    auditor's coins of the chunk's tie-break stream when ``tiebreak`` is given."""

    def __init__(self, sampler, inp, statistic=None, encode=None, spec=None, tiebreak=None):
        self.sampler, self.inp, self.statistic, self.encode = sampler, inp, statistic, encode
        self.spec, self.tiebreak = spec, tiebreak

    def __call__(self, size, seed_seq):
        rng = np.random.default_rng(seed_seq)
        batch = as_output_batch(self.sampler(self.inp, rng, size), size, self.encode)
        if self.spec is not None:
            batch = conform(batch, self.spec)
        if self.statistic is None:
            return batch
        s = as_scores(self.statistic(batch), "statistic(outputs)")
        if s.size != size:
            raise ValueError(f"statistic(outputs) returned {s.size} scores for {size} outputs")
        if self.tiebreak is not None:
            u = np.random.default_rng(tiebreak_seed(seed_seq)).random(size) if self.tiebreak.randomize else 0.0
            s = self.tiebreak(s, u)
        return s


def run_pair(run, fn0, fn1, n: int, seed0, seed1, names):
    """The chunks of two jobs of ``n`` trials, run concurrently by ``run`` (:func:`runner`); merged exactly."""
    r0, r1 = run([Job(fn0, n, seed0, names[0]), Job(fn1, n, seed1, names[1])])
    return concat_chunks(r0, n), concat_chunks(r1, n)


def candidate_pairs(x, x_prime, pairs) -> list[tuple]:
    """[(name, x, x')]: (x, x_prime) first unless both are None, then ``pairs`` ((x, x') or (name, x, x'))."""
    out = []
    if not (x is None and x_prime is None):
        out.append(("given pair", x, x_prime))
    for i, p in enumerate(pairs or ()):
        if not isinstance(p, (tuple, list)) or len(p) not in (2, 3):
            raise ValueError(f"pairs must hold (x, x_prime) or (name, x, x_prime) tuples, got {p!r} at {i}")
        out.append((str(p[0]), p[1], p[2]) if len(p) == 3 else (f"pair {i}", p[0], p[1]))
    if not out:
        raise ValueError("give x and x_prime, or candidate neighbouring pairs in pairs=[(x, x_prime), ...]")
    return out


def describe_outputs_of(spec) -> str:
    kind, k = spec
    return f"numeric, {k} value{'s' if k != 1 else ''} per run" if kind == "numeric" else \
        "objects (canonical keys: variable-length, mixed or non-numeric outputs)"


def roc_points(scores0, scores1, orientation: str = ">", n: int = 101) -> dict:
    """Empirical ROC (FPR, TPR) at ``n`` thresholds (pooled quantiles), for plotting."""
    s0 = as_scores(scores0, "scores0")
    s1 = as_scores(scores1, "scores1")
    t = np.quantile(np.concatenate([s0, s1]), np.linspace(0.0, 1.0, n), method="inverted_cdf")
    k_fp, k_fn = oriented_counts(s0, s1, t)
    o = ORIENTATIONS.index(orientation)
    fpr = np.concatenate([[0.0, 1.0], k_fp[o] / s0.size])
    tpr = np.concatenate([[0.0, 1.0], 1.0 - k_fn[o] / s1.size])
    idx = np.lexsort((tpr, fpr))
    return {"fpr": fpr[idx].tolist(), "tpr": tpr[idx].tolist(), "orientation": orientation}


# ------------------------------------------------------------------------------------ scores -> bound
def _halves(scores: np.ndarray):
    half = scores.size // 2
    return scores[:half], scores[half:]


def _rule_description(rule: ThresholdRule) -> str:
    if rule.name in RULE_DESCRIPTIONS and (not isinstance(rule, Combined) or rule == Combined()):
        return RULE_DESCRIPTIONS[rule.name]
    if isinstance(rule, Combined):
        return " and ".join(_rule_description(r) for r in rule.rules) + f" at beta/{len(rule.rules)} each"
    return RULE_DESCRIPTIONS.get(rule.name, rule.name)


def _gdp_record(g: dict, delta: float) -> dict:
    mu = g["value"]
    gdp = {"mu_lower": mu, "assumption": GDP_ASSUMPTION, "label": GDP_LABEL, "method": GDP_METHOD,
           "role": "estimate: never sets violation, the verdict or an exit code", "test": g,
           "epsilon": gdp_epsilon_of(mu, delta) if delta > 0.0 else None}
    if delta == 0.0:
        gdp["note"] = "no epsilon at delta = 0: a mu-GDP mechanism with mu > 0 is never pure DP"
    return gdp


@blas_limited
def audit_scores(sel0, sel1, eval0=None, eval1=None, *, epsilon: float, delta: float = 0.0,
                 confidence: float = 0.95, method: str = "threshold", threshold="heldout", trials: int | None = None,
                 details: dict | None = None, fpr_levels=DEFAULT_FPR_LEVELS, selection=None,
                 grid=None) -> AuditResult:
    """Certify an epsilon lower bound from scores you computed yourself (the entry point for your own attack).

    Use it when you already have one real-valued *score* per run of a mechanism (a membership score, a
    loss, a statistic of the output) from runs on two neighbouring inputs ``D0`` (label 0) and ``D1``
    (label 1), e.g. from a training loop or a library dpaudit cannot call. Larger scores need not mean
    ``D1``: the orientation is chosen on the selection scores.

    Parameters
    ----------
    sel0, sel1 : array-like of float
        Selection scores (runs on ``D0`` / ``D1``): used only to choose the threshold and its side.
    eval0, eval1 : array-like of float, optional
        Evaluation scores, independent of the selection scores; the certified counts come from these
        alone. Omitted (both ``None``): ``sel0`` and ``sel1`` are each split in half in the order given
        (first half selects, second half certifies), which is valid when the runs are independent and
        identically distributed and their order does not depend on the scores.
    epsilon : float
        The claimed epsilon (``math.inf`` when you only want the lower bound).
    delta : float
        The claimed delta in [0, 1) (default 0: a pure-DP claim).
    confidence : float
        Confidence of the lower bound (default 0.95).
    method : {"threshold", "gdp"}
        ``"gdp"`` also reports a GDP *estimate* (``gdp_estimate``, resting on a mu-GDP assumption; it
        never sets ``violation``). Needs ``delta > 0``.
    threshold : a rule of :mod:`dpaudit.audit.stats.rules` or its name
        How the threshold is chosen (default ``"heldout"``: on the selection scores, then tested once
        on the evaluation scores); ``Bonferroni(grid=...)`` tests a fixed grid of thresholds (``sel0, sel1``
        may then be empty), ``"frontier"``, ``"combined"``.
    trials : int, optional
        Number of runs to record (default: evaluation plus selection scores of ``D0``).
    details : dict, optional
        Extra entries copied into ``AuditResult.details``.
    fpr_levels : tuple of float
        FPR levels of the descriptive TPR statistics in ``details["attack_statistics"]``.
    selection, grid : deprecated spellings of ``threshold`` (``selection="bonferroni", grid=g`` is
        ``threshold=Bonferroni(grid=g)``); they still work, with a ``DeprecationWarning``.

    What it certifies
    -----------------
    ``epsilon_lower``: a lower confidence bound on the epsilon of any (epsilon, delta)-DP guarantee the
    mechanism that produced the scores can have on the pair (D0, D1), valid with probability at least
    ``confidence`` whatever the mechanism (exact Clopper-Pearson bounds on the threshold test's false
    positive and false negative rates, turned into epsilon through the hypothesis-testing
    characterisation of DP: Kairouz, Oh, Viswanath 2015; Jagielski, Ullman, Oprea 2020). It rests on the
    scores being independent across runs and the selection scores being independent of the evaluation
    scores. ``violation`` is ``epsilon_lower > epsilon``. ``details["attack_statistics"]`` holds TPR at
    each of ``fpr_levels``, AUROC and best accuracy with their intervals (descriptive, never a verdict).

    Example
    -------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> s0, s1 = rng.laplace(0, 1, 4000), rng.laplace(1, 1, 4000)   # your scores on D0 and D1
    >>> res = audit_scores(s0, s1, epsilon=1.0)     # a 1-DP claim; halves: select, then certify
    >>> 0 < res.epsilon_lower < 1.0 and not res.violation
    True
    """
    if selection is not None or grid is not None:
        threshold = _deprecated_rule(selection, grid, threshold, "audit_scores", default="heldout")
    epsilon = check_nonnegative("epsilon", epsilon, allow_inf=True)
    delta = check_audit_delta("delta", delta)
    confidence = check_confidence("confidence", confidence)
    if method not in ("threshold", "gdp"):
        raise ValueError(f"method must be 'threshold' or 'gdp' here, got {method!r}")
    rule = threshold_rule(threshold)
    if method == "gdp" and delta == 0.0:
        raise ValueError("delta must be in (0, 1) for method='gdp' (a mu-GDP mechanism is never pure DP)")
    beta = 1.0 - confidence
    if (eval0 is None) != (eval1 is None):
        raise ValueError("eval0 and eval1 must be given together (or both omitted to split sel0, sel1 in half)")
    if eval0 is None:
        sel0, eval0 = _halves(as_scores(sel0, "sel0"))
        sel1, eval1 = _halves(as_scores(sel1, "sel1"))
    eval0 = as_scores(eval0, "eval0")
    eval1 = as_scores(eval1, "eval1")
    sel0 = np.asarray(sel0, dtype=float).ravel()
    sel1 = np.asarray(sel1, dtype=float).ravel()
    thr = threshold_test(rule, sel0, sel1, eval0, eval1, delta=delta, beta=beta, kind="dp")
    n_trials = int(trials if trials is not None else eval0.size + sel0.size)
    parts = {"threshold_test": thr,
             "gdp_test": threshold_test(rule, sel0, sel1, eval0, eval1, delta=delta, beta=beta, kind="gdp"),
             "roc": roc_points(eval0, eval1, thr["orientation"]),
             "attack_statistics": attack_statistics(sel0, sel1, eval0, eval1, fpr_levels=fpr_levels,
                                                    confidence=confidence),
             "advice": threshold_advice(sel0, sel1, eval0, eval1, epsilon=epsilon, delta=delta, beta=beta,
                                        trials=max(n_trials, int(eval0.size)), selection=rule.name,
                                        grid_size=thr.get("grid_size"))}
    return assemble(parts, rule=rule, epsilon=epsilon, delta=delta, confidence=confidence, method=method,
                    trials=n_trials, n_selection=(sel0.size, sel1.size), n_evaluation=(eval0.size, eval1.size),
                    details=details)


def assemble(parts: dict, *, rule: ThresholdRule, epsilon: float, delta: float, confidence: float, method: str,
             trials: int, n_selection, n_evaluation, details: dict | None = None) -> AuditResult:
    """The :class:`AuditResult` of a threshold audit from its certified parts (the threshold test, the GDP test,
    the ROC curve, the descriptive statistics and the advice), whether they came from kept scores
    (:func:`audit_scores`) or from counts (:func:`dpaudit.audit.protocol.evaluation.certify`)."""
    thr = parts["threshold_test"]
    method_str = f"threshold test, Clopper-Pearson + delta term, {_rule_description(rule)}"
    if method == "gdp":
        method_str += f" (method='gdp': the GDP number is gdp_estimate, an {GDP_LABEL})"
    eps_lower = thr["value"]
    eps_lower = max(0.0, round_down(eps_lower)) if math.isfinite(eps_lower) else eps_lower
    out = dict(details or {})
    out.update({
        "threshold_test": thr, "gdp": _gdp_record(parts["gdp_test"], delta), "requested_method": method,
        "selection": rule.name, "n_selection": [int(n) for n in n_selection],
        "n_evaluation": [int(n) for n in n_evaluation], "roc": parts["roc"],
        "attack_statistics": parts["attack_statistics"],
    })
    if parts.get("advice") is not None:
        out["advice"] = parts["advice"]
    return AuditResult(
        epsilon_lower=float(eps_lower), epsilon_claimed=float(epsilon), delta=float(delta),
        confidence=float(confidence), violation=bool(eps_lower > epsilon), method=method_str,
        trials=int(trials), details=out,
    )


def _deprecated_rule(selection, grid, threshold, where: str, default):
    """``threshold=`` from the deprecated ``selection=`` / ``grid=`` keywords (with a DeprecationWarning)."""
    if threshold != default:
        raise ValueError(f"give threshold= or the deprecated selection= / grid=, not both (got threshold={threshold!r})")
    name = default if selection is None else selection
    if name == "auto":
        if grid is not None:
            raise ValueError("a fixed grid needs a fixed statistic (statistic=callable) and selection='bonferroni'")
        new = "'auto'"
        rule: str | ThresholdRule = "auto"
    else:
        rule = threshold_rule(name, grid)
        new = f"'{name}'" if grid is None else f"{type(rule).__name__}(grid=...)"
    warn_deprecated_spelling("selection= / grid=", f"threshold={new} (threshold rules: {RULE_NAMES}, "
                             "dpaudit.audit.HeldOut/Bonferroni/Frontier/Combined)", f"{where}()")
    return rule


# ------------------------------------------------------------------------------------ sampler -> bound
@dataclass(frozen=True)
class SamplerAudit:
    """Everything an audit of a sampler fixes before its first trial (built and checked by the auditor).

    ``candidates``: ``[(name, x, x')]``; ``attack``: a :class:`~dpaudit.audit.attacks.selection.AttackChoice`;
    ``threshold``: a :class:`~dpaudit.audit.stats.rules.ThresholdRule` or ``"auto"``; ``method``:
    ``"threshold"`` or ``"gdp"``."""

    sampler: object
    candidates: list
    epsilon: float
    delta: float
    confidence: float
    trials: int
    attack: AttackChoice
    threshold: object = "auto"
    method: str = "threshold"
    selection_fraction: float = 0.3
    encode: object = None
    fpr_levels: tuple = DEFAULT_FPR_LEVELS
    extra: dict = field(default_factory=dict)

    @property
    def beta(self) -> float:
        return 1.0 - self.confidence


def audit_sampler(req: SamplerAudit, root, run) -> AuditResult:
    """The two-sample audit of ``req`` (module docstring) with seeds from ``root`` and chunks run by ``run``
    (:func:`runner`). Children 0-3 of ``root``: selection and evaluation streams of x and x'; 4, 5, 6: the
    auditor's tie-break coins, the families' fitting seeds, the further candidate pairs."""
    if isinstance(req.attack, FixedStatistic):
        return _audit_fixed(req, root, run)
    return _audit_contest(req, root, run)


def _audit_fixed(req: SamplerAudit, root, run) -> AuditResult:
    """A fixed, user-given statistic: the original protocol (no fitting, no pair choice)."""
    if len(req.candidates) != 1:
        raise ValueError("several candidate pairs need statistic='auto' (or family names): the pair is chosen "
                         "together with the attack on the selection runs")
    s_sel0, s_sel1, s_ev0, s_ev1 = root.spawn(4)
    statistic = req.attack.statistic  # type: ignore[attr-defined]  # called for a FixedStatistic only (audit_sampler)
    name, a, b = req.candidates[0]
    rule = fixed_statistic_rule(req.threshold)
    use_grid = isinstance(rule, Bonferroni) and rule.grid is not None
    n_sel, n_eval = (0, req.trials) if use_grid else split_trials(req.trials, req.selection_fraction)
    n_keep, n_stream = selection_sizes(n_sel)
    if n_stream and not isinstance(rule, HeldOut):  # its grid comes from the kept scores: the rest evaluates
        n_sel, n_eval, n_stream = n_keep, req.trials - n_keep, 0
    sel0 = sel1 = np.empty(0)
    if n_sel:
        sel0, sel1 = run_pair(run, AttackChunk(req.sampler, a, statistic, req.encode),
                              AttackChunk(req.sampler, b, statistic, req.encode), n_keep, s_sel0, s_sel1,
                              ("selection scores on x", "selection scores on x'"))
    streamed = stream_selection(run, req, a, b, None, statistic, None, sel0, sel1, rule, n_stream, root) \
        if n_stream and isinstance(rule, HeldOut) else None
    desc = getattr(statistic, "description", "user statistic")
    details = {"statistic": desc,
               "attack": {"family": getattr(statistic, "family", "") or "user statistic", "description": desc,
                          "selected_on": "fixed by the user", "leak": leak_kind(getattr(statistic, "family", ""),
                                                                                 statistic)},
               "inputs": {"x": describe_input(a), "x_prime": describe_input(b), "index": 0, "name": name}}
    if streamed is not None:
        details["selection_runs"] = _streamed_record(n_keep, streamed)
    plan = plan_evaluation(rule, sel0, sel1, delta=req.delta, beta=req.beta, fpr_levels=req.fpr_levels,
                           streamed=streamed)
    (le0, le1), = evaluate_counts(run, req, a, b, None, [(statistic, None, plan)], n_eval, (s_ev0, s_ev1))
    parts = certify(plan, le0, le1, n_eval, n_eval, epsilon=req.epsilon, delta=req.delta, confidence=req.confidence,
                    trials=req.trials)
    return assemble(parts, rule=rule, epsilon=req.epsilon, delta=req.delta, confidence=req.confidence,
                    method=req.method, trials=req.trials, n_selection=(n_sel, n_sel), n_evaluation=(n_eval, n_eval),
                    details=details)


def _streamed_record(n_keep: int, streamed: SelectionCounts) -> dict:
    return {"kept": int(n_keep), "streamed": int(streamed.n), "grid": int(streamed.grid.size),
            "rule": f"held-out threshold chosen on {n_keep:,} kept and {streamed.n:,} streamed selection runs per "
                    f"input, counted at {streamed.grid.size} thresholds fixed on the kept ones"}


def evaluate_counts(run, req: SamplerAudit, a, b, spec, tests, n_eval: int, seeds) -> list[tuple]:
    """The evaluation runs of the pair (a, b), each reduced where it is drawn to the counts of every test
    ``(statistic, tiebreak, EvaluationPlan)`` at its plan's thresholds (:class:`ScoreCounts`; summed exactly, so
    the client holds O(thresholds) whatever ``n_eval``). Returns ``[(le0, le1)]`` per test."""
    return count_runs(run, req, a, b, spec, [(stat, tb, plan.thresholds) for stat, tb, plan in tests], n_eval,
                      seeds, ("evaluation runs on x", "evaluation runs on x'"))


def count_runs(run, req: SamplerAudit, a, b, spec, tests, n: int, seeds, names) -> list[tuple]:
    """``n`` runs on each of a and b, each reduced where it is drawn to the counts of every test ``(statistic,
    tiebreak, sorted thresholds)`` (:class:`ScoreCounts`). Returns ``[(le0, le1)]`` per test."""
    jobs = [Job(ScoreCounts(req.sampler, inp, tests, req.encode, spec), n, seed, name, fold=True)
            for inp, seed, name in ((a, seeds[0], names[0]), (b, seeds[1], names[1]))]
    (c0,), (c1,) = run(jobs)
    out, start = [], 0
    for _, _, thresholds in tests:
        stop = start + len(thresholds)
        out.append((c0.counts[start:stop], c1.counts[start:stop]))
        start = stop
    return out


def audit_scored_runs(score0, score1, seeds, *, run, n_sel: int, n_eval: int, checks, rule: ThresholdRule,
                      trials: int, method: str = "threshold", details: dict | None = None,
                      names=("runs on D", "runs on D'")) -> list[AuditResult]:
    """The threshold audit of runs scored by chunk functions ``score_b(size, seed_seq) -> scores`` (an optimizer's
    runs, a user's trainings), evaluation streamed: the selection scores (``n_sel`` per side, streams
    ``seeds[0:2]``) are kept, :func:`plan_evaluation` fixes every threshold on them, and the evaluation runs
    (``n_eval`` per side, ``seeds[2:4]``) return only their counts there (:class:`ScoredRunCounts`, summed exactly).
    One result per check ``(epsilon, delta, confidence)`` of ``checks`` (the same runs serve all). The threshold
    test, the GDP test and the descriptive statistics at thresholds are those :func:`audit_scores` gives on the same
    scores; the ROC curve, the AUROC and the advice are read at the plan's grids, as in every sampler audit."""
    checks = [(check_nonnegative("epsilon", e, allow_inf=True), check_audit_delta("delta", d),
               check_confidence("confidence", c)) for e, d, c in checks]
    if method == "gdp" and any(d == 0.0 for _, d, _ in checks):
        raise ValueError("delta must be in (0, 1) for method='gdp' (a mu-GDP mechanism is never pure DP)")
    sel0, sel1 = run_pair(run, score0, score1, n_sel, seeds[0], seeds[1],
                          (f"selection {names[0]}", f"selection {names[1]}"))
    sel0, sel1 = as_scores(sel0, "selection scores on D"), as_scores(sel1, "selection scores on D'")
    plans = [plan_evaluation(rule, sel0, sel1, delta=d, beta=1.0 - c, fpr_levels=DEFAULT_FPR_LEVELS)
             for _, d, c in checks]
    grids = [p.thresholds for p in plans]
    jobs = [Job(ScoredRunCounts(fn, grids), n_eval, seed, f"evaluation {name}", fold=True)
            for fn, seed, name in ((score0, seeds[2], names[0]), (score1, seeds[3], names[1]))]
    (c0,), (c1,) = run(jobs)
    out, start = [], 0
    for (eps, d, c), plan in zip(checks, plans):
        le0, le1 = c0.counts[start:start + plan.size], c1.counts[start:start + plan.size]
        start += plan.size
        parts = certify(plan, le0, le1, n_eval, n_eval, epsilon=eps, delta=d, confidence=c, trials=trials)
        out.append(assemble(parts, rule=rule, epsilon=eps, delta=d, confidence=c, method=method, trials=trials,
                            n_selection=(n_sel, n_sel), n_evaluation=(n_eval, n_eval), details=details))
    return out


def fixed_statistic_rule(threshold) -> ThresholdRule:
    """The rule of a fixed statistic: ``"auto"`` means held-out (nothing about the statistic is known)."""
    return threshold_rule("heldout" if isinstance(threshold, str) and threshold == "auto" else threshold)


def _resolve_contest_rule(requested, tb, fit_free: bool):
    """The rule used for a contest winner (fixed before any evaluation draw) and its record."""
    boundaries = boundary_grid(tb) if tb is not None else None
    few = boundaries is not None and boundaries.size <= MAX_BOUNDARY_GRID
    if isinstance(requested, str) and requested == "auto":
        rule, why = auto_rule(fit_free=fit_free, values=None if tb is None else tb.size, boundaries=boundaries)
        on_boundaries = isinstance(rule, Bonferroni)
    else:
        rule, why, on_boundaries = threshold_rule(requested), "requested", False
        if few and boundaries is not None and isinstance(rule, Bonferroni) and rule.grid is None:
            rule, on_boundaries = Bonferroni(grid=tuple(boundaries.tolist())), True
        elif few and boundaries is not None and isinstance(rule, Combined):
            parts = tuple(Bonferroni(grid=tuple(boundaries.tolist())) if isinstance(r, Bonferroni) and r.grid is None
                          else r for r in rule.rules)
            on_boundaries = parts != rule.rules
            rule = Combined(parts)
    record = {"requested": requested if isinstance(requested, str) else requested.name, "used": rule.name,
              "why": why, "grid": "category boundaries" if on_boundaries else
              ("quantiles of the selection scores" if rule.name != "heldout" else None)}
    return rule, record


def _audit_contest(req: SamplerAudit, root, run) -> AuditResult:
    """A contest of attack families (and candidate pairs) on the selection runs; the winner certifies."""
    contest: Contest = req.attack  # type: ignore[assignment]
    s_sel0, s_sel1, s_ev0, s_ev1 = root.spawn(4)
    s_tb, s_fit, s_pairs = root.spawn(3)  # children 4, 5, 6: the four streams above are unchanged
    parts = req.threshold.rules if isinstance(req.threshold, Combined) else (req.threshold,)
    if any(isinstance(r, Bonferroni) and r.grid is not None for r in parts):
        raise ValueError("a fixed grid needs a fixed statistic (statistic=callable)")
    n_sel, n_eval = split_trials(req.trials, req.selection_fraction)
    if n_sel < 4:
        raise ValueError(f"trials * selection_fraction must give at least 4 selection runs to fit an attack, got {n_sel}")
    n_keep, n_stream = selection_sizes(n_sel)
    pair_seeds = [(s_sel0, s_sel1)] + [tuple(c.spawn(2)) for c in s_pairs.spawn(max(len(req.candidates) - 1, 1))]
    sel = select_attack(req, contest, run, n_sel=n_keep, seeds=pair_seeds, tb_seed=s_tb, fit_seed=s_fit, n_eval=n_eval)
    _, a, b = req.candidates[sel["index"]]
    findings = _findings(sel["best"], req)
    rules = [_resolve_contest_rule(req.threshold, f["attack"].tiebreak, f["attack"].threshold_on == FIT_FREE_WINNER)
             for f in findings]
    if n_stream and not any(isinstance(r, HeldOut) for r, _ in rules):  # grids from the kept runs: the rest evaluates
        n_sel, n_eval, n_stream = n_keep, req.trials - n_keep, 0
    tests, streams = [], []
    for f, (rule, _) in zip(findings, rules):
        fa = f["attack"]
        streamed = stream_selection(run, req, a, b, sel["spec"], fa.statistic, fa.tiebreak, fa.val0, fa.val1, rule,
                                    n_stream, root) if n_stream and isinstance(rule, HeldOut) else None
        plan = plan_evaluation(rule, fa.val0, fa.val1, delta=req.delta, beta=f["beta"], fpr_levels=req.fpr_levels,
                               streamed=streamed)
        tests.append((fa.statistic, fa.tiebreak, plan))
        streams.append(streamed)
    counts = evaluate_counts(run, req, a, b, sel["spec"], tests, n_eval, (s_ev0, s_ev1))
    results = []
    for f, (_, _, plan), (rule, record), (le0, le1), streamed in zip(findings, tests, rules, counts, streams):
        details = attack_details({**sel, "best": f["attack"]}, req.candidates, n_keep,
                                 sel["runs"] + 2 * n_eval + (2 * n_stream if any(streams) else 0))
        details["statistic"] = f["attack"].description
        details["selection_rule"] = record
        if streamed is not None:
            details["selection_runs"] = _streamed_record(n_keep, streamed)
        certified = certify(plan, le0, le1, n_eval, n_eval, epsilon=req.epsilon, delta=req.delta,
                            confidence=1.0 - f["beta"], trials=req.trials)
        results.append(assemble(certified, rule=rule, epsilon=req.epsilon, delta=req.delta, confidence=1.0 - f["beta"],
                                method=req.method, trials=req.trials, n_selection=(f["attack"].val0.size,
                                                                                   f["attack"].val1.size),
                                n_evaluation=(n_eval, n_eval), details=details))
    res = results[0] if len(results) == 1 else _two_findings(results, findings, req)
    # every selection run counts (fitting half + threshold half), as the trial accounting promises
    res.details["n_threshold_selection"] = res.details["n_selection"]
    res.details["n_selection"] = [int(n_sel), int(n_sel)]
    return res


def _findings(best, req: SamplerAudit) -> list[dict]:
    """The attacks the evaluation certifies, each with its share of beta: the winner alone, or -- when it reads the
    bits of floats and a real-valued family competed -- the winner (the implementation's finding) and the best
    real-valued attack (the mathematical mechanism's finding) at beta/2 each, so that both hold together at the
    stated confidence (a union bound; the same evaluation runs serve both)."""
    if best.real is None:
        return [{"name": "attack", "attack": best, "beta": req.beta}]
    return [{"name": "implementation", "attack": best, "beta": req.beta / 2.0},
            {"name": "mathematical", "attack": best.real, "beta": req.beta / 2.0}]


def _finding_record(name: str, res: AuditResult) -> dict:
    attack = res.details["attack"]
    thr = res.details["threshold_test"]
    return {"name": name, "epsilon_lower": res.epsilon_lower, "family": attack["family"],
            "description": attack["description"], "leak": attack["leak"], "confidence": res.confidence,
            "violation": res.violation, "threshold_test": {k: thr[k] for k in ("threshold", "orientation", "k_fp",
                                                                                "k_fn", "n0", "n1", "value")},
            "method": res.method}


def _two_findings(results: list[AuditResult], findings: list[dict], req: SamplerAudit) -> AuditResult:
    """One result from the implementation's and the mathematical mechanism's findings, valid together at the
    stated confidence: its ``epsilon_lower`` is the larger (both hold at once), its details those of that finding,
    ``details["findings"]`` records both and ``details["cause"]`` what a violation comes from."""
    impl, math_ = results
    headline = impl if impl.epsilon_lower > math_.epsilon_lower else math_
    eps = headline.epsilon_lower
    cause = None
    if eps > req.epsilon:
        cause = "floating-point" if math_.epsilon_lower <= req.epsilon else "distribution"
    details = dict(headline.details)
    details["findings"] = [_finding_record(f["name"], r) for f, r in zip(findings, results)]
    details["gdp"] = math_.details["gdp"]  # the GDP estimate is about the mathematical mechanism's outputs
    details["cause"] = cause
    method = (f"{headline.method}; two findings at beta/2 each (the implementation: every family, bits of floats "
              f"included; the mathematical mechanism: real-valued families), valid together")
    return AuditResult(epsilon_lower=eps, epsilon_claimed=float(req.epsilon), delta=float(req.delta),
                       confidence=float(req.confidence), violation=bool(eps > req.epsilon), method=method,
                       trials=int(req.trials), details=details)


# ------------------------------------------------------------------------------------ the contest
def _selection_outputs(req: SamplerAudit, run, i: int, n_sel: int, seeds, spec):
    """Selection outputs of candidate pair ``i`` in the audit's representation (its spec fixed by pair 0)."""
    name, a, b = req.candidates[i]
    s0, s1 = seeds[i]
    out0, out1 = run_pair(run, AttackChunk(req.sampler, a, encode=req.encode), AttackChunk(req.sampler, b, encode=req.encode),
                          n_sel, s0, s1, (f"selection outputs on x ({name})", f"selection outputs on x' ({name})"))
    if spec is None:
        spec = batch_spec(out0)
    return conform(out0, spec), conform(out1, spec), spec


def select_attack(req: SamplerAudit, contest: Contest, run, *, n_sel: int, seeds, tb_seed, fit_seed, n_eval=None,
                  threshold_from_selection: bool = True) -> dict:
    """Draw selection outputs for every candidate pair, fit and compare the families; the winner.

    Returns ``{"best": ChosenAttack, "index": pair index, "spec", "record", "skipped", "runs"}``.
    ``threshold_from_selection=False`` (one-run audits, whose guesses come from a calibration run): the
    winner's selection scores are not used for a threshold, so they are not extended."""
    best = best_i = spec = best_train = None
    record: list = []
    skipped: list = []
    runs = 0
    k = len(req.candidates)
    for i, (name, _, _) in enumerate(req.candidates):
        out0, out1, spec = _selection_outputs(req, run, i, n_sel, seeds, spec)
        runs += 2 * n_sel
        if k == 1 and contest.fit_free:
            tr0, va0, tr1, va1 = out0, out0, out1, out1  # nothing to fit or compare: all of it picks the threshold
        else:
            tr0, va0 = split_train_validation(out0)
            tr1, va1 = split_train_validation(out1)
        g = np.random.default_rng(tb_seed.spawn(k)[i])
        u0, u1 = g.random(len(va0)), g.random(len(va1))
        ch = choose_attack(tr0, tr1, va0, va1, families=contest.families, delta=req.delta, beta=req.beta,
                           seed=fit_seed.spawn(k)[i], u0=u0, u1=u1, features=contest.features, label=name,
                           n_eval=n_eval, randomize_ties=contest.randomize_ties)
        if ch is None:
            skipped.extend({"family": f.name, "reason": "not applicable", "pair": name} for f in contest.families)
            continue
        record.extend(ch.candidates)
        skipped.extend(ch.skipped)
        if best is None or ch.predicted > best.predicted:
            best, best_i = ch, i
            best_train = (tr0, tr1, g) if tr0 is not va0 else None
    if best is None:
        reasons = "; ".join(f"{s['family']}: {s['reason']}" for s in skipped)
        raise ValueError(f"no attack family applies to these outputs ({reasons})")
    _set_threshold_runs(best, best_train, contest, threshold_from_selection)
    return {"best": best, "index": best_i, "spec": spec, "record": record, "skipped": skipped, "runs": runs}


def _set_threshold_runs(best, best_train, contest: Contest, threshold_from_selection: bool) -> None:
    """Which selection runs choose the winner's threshold (``best.threshold_on``), extending its scores when the
    winner fits nothing: then ALL the selection runs of its pair choose it (measured better than the validation
    half or a Bonferroni grid: docs/attacks-benchmark.md); still only selection draws, so the evaluation
    certifies as before."""
    fit_free = {f.name for f in contest.families if not f.needs_fit}
    for attack in (best, best.real):
        if attack is None:
            continue
        if not threshold_from_selection:
            attack.threshold_on = "not used (one-run: the guesses are chosen on the calibration run)"
        elif best_train is None:  # one candidate, nothing to fit: every selection run already picks the threshold
            attack.threshold_on = "all selection runs (nothing to fit or compare)"
        elif attack.family in fit_free:
            tr0, tr1, g = best_train
            s0, s1 = score_batch(attack.statistic, tr0), score_batch(attack.statistic, tr1)
            if attack.tiebreak is not None:
                s0, s1 = attack.tiebreak(s0, g.random(len(tr0))), attack.tiebreak(s1, g.random(len(tr1)))
            attack.val0, attack.val1 = np.concatenate([s0, attack.val0]), np.concatenate([s1, attack.val1])
            attack.threshold_on = FIT_FREE_WINNER


def attack_details(sel: dict, candidates, n_sel: int, runs: int) -> dict:
    """``details["attack"]``, ``["inputs"]``, ``["outputs"]`` and ``["runs"]`` of a contest's winner."""
    best = sel["best"]
    name, a, b = candidates[sel["index"]]
    return {
        "attack": {"family": best.family, "description": best.description,
                   "selected_on": f"fitted on the first half and compared on the second half of {n_sel} selection "
                                  "runs per input (independent of the evaluation runs)",
                   "threshold_on": best.threshold_on,
                   "predicted": best.predicted,
                   "tie_break": None if best.tiebreak is None else
                   ("randomised (auditor's coins)" if best.tiebreak.randomize else "category codes (deterministic)"),
                   "leak": leak_kind(best.family, best.statistic), "candidates": sel["record"],
                   "skipped": sel["skipped"]},
        "inputs": {"x": describe_input(a), "x_prime": describe_input(b), "index": int(sel["index"]), "name": name,
                   "candidates": [c[0] for c in candidates]},
        "outputs": describe_outputs_of(sel["spec"]),
        "runs": int(runs),
    }
