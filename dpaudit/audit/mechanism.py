"""``audit_mechanism``: an epsilon lower bound for any black-box mechanism.

Method (Kairouz, Oh, Viswanath 2015; Jagielski, Ullman, Oprea 2020; Nasr et al. 2023):

1. Draw ``trials`` outputs on each neighbouring input, split into a *selection* part
   (``selection_fraction``) and an *evaluation* part, from independent random streams.
2. Score outputs with ``statistic``. Default ``"auto"``: every applicable attack family of
   :mod:`dpaudit.audit.attack_families` (the output value, a mean-difference projection, the exact
   empirical likelihood ratio over output categories, logistic regression, a small neural network
   with scikit-learn, bit-level features of floats) is fitted on the first half of the selection
   sample and compared on the second half; the winner (and, with ``pairs=``, the neighbouring
   pair) is recorded in ``details["attack"]`` and ``details["inputs"]``
   (:mod:`dpaudit.audit.selection`). Outputs of any form are accepted
   (:mod:`dpaudit.audit.outputs`).
3. ``method="threshold"`` (default, a certified lower bound): choose a threshold and
   orientation on the selection scores, then bound FPR and FNR on the evaluation scores with
   one-sided Clopper-Pearson bounds at (1 - confidence)/2 each and report
   epsilon_LB = max{0, log((1-delta-FNR+)/FPR+), log((1-delta-FPR+)/FNR+)} (Kairouz et al. 2015).
   With ``selection="bonferroni"`` the threshold grid is fixed before the evaluation samples
   (``grid=``, the category boundaries of a statistic with few values, or quantiles of the
   selection sample) and every test is charged (1-confidence)/G; ``"combined"`` runs both rules
   at (1-confidence)/2 and keeps the larger bound; ``"auto"`` (default) picks the rule from the
   type of the chosen statistic before any evaluation draw (a winner that fits nothing chooses
   its threshold on all the selection runs, recorded in ``details["attack"]["threshold_on"]``).
4. The GDP estimate (Dong-Roth-Su 2019; Nasr et al. 2023) is always computed as well and
   reported in ``details["gdp"]`` (and ``AuditResult.gdp_estimate``) labelled "estimate,
   assuming mu-GDP". It is never ``epsilon_lower`` and never sets ``violation``: with
   ``method="gdp"`` the result still carries the certified threshold bound (the method string
   says the estimate was requested). On a correct Laplace or randomized-response mechanism the
   estimate exceeds the true epsilon (its assumption fails), so it cannot decide a verdict.
5. ``method="one-run"``: Steinke-Nasr-Jagielski 2023 with ``trials`` canaries whose inclusion
   is a fair coin each (each canary's output is one mechanism run on x' if included, on x
   otherwise); the numbers of "in" and "out" guesses are chosen separately on an independent
   calibration run (:func:`dpaudit.audit.one_run.one_run_protocol`, shared with
   ``audit_optimizer``).

Soundness: the threshold bound holds with probability >= confidence whatever the mechanism,
because the selection and evaluation samples are independent; ``violation`` is
``epsilon_lower > epsilon`` (the claim). ``details["advice"]`` holds advisory numbers for audits
that certify nothing (trials that would likely give a positive bound, the ceiling of a threshold
audit with these trials; :mod:`dpaudit.audit.verdict`); they never change ``epsilon_lower``.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from dpaudit.audit.attack_stats import DEFAULT_FPR_LEVELS, attack_statistics
from dpaudit.audit.error_rates import check_audit_delta
from dpaudit.audit.gdp import GDP_ASSUMPTION, gdp_epsilon_of
from dpaudit.audit.one_run import bound_record, ceiling_record, one_run_method, one_run_protocol
from dpaudit.audit.outputs import as_output_batch, batch_spec, conform
from dpaudit.audit.preflight import preflight_outputs
from dpaudit.audit.relation import relation_record, warn_relation
from dpaudit.audit.result import AuditResult
from dpaudit.audit.selection import (
    MAX_BOUNDARY_GRID,
    RULES,
    boundary_grid,
    choose_attack,
    describe_input,
    leak_kind,
    resolve_families,
    score_batch,
    split_train_validation,
    tiebreak_seed,
)
from dpaudit.audit.thresholds import (
    ORIENTATIONS,
    as_scores,
    bonferroni_test,
    frontier_test,
    heldout_test,
    oriented_counts,
    roc_frontier,
)
from dpaudit.audit.verdict import GDP_LABEL, one_run_advice, threshold_advice
from dpaudit.core.defaults import PureDPClaimWarning, no_pure_dp
from dpaudit.core.numeric import round_down
from dpaudit.core.progress import reporting as progress_reporting
from dpaudit.core.runner import (
    DEFAULT_CHUNK_SIZE,
    DEFAULT_RETRIES,
    Job,
    check_picklable,
    concat_chunks,
    open_executor,
    run_jobs,
)
from dpaudit.core.seeds import as_seed_sequence, pin_seed, seed_record
from dpaudit.core.validation import check_confidence, check_count, check_nonnegative, check_real

__all__ = ["audit_mechanism", "audit_scores", "roc_points", "METHODS", "GDP_METHOD"]

logger = logging.getLogger(__name__)

METHODS = ("threshold", "gdp", "one-run")
SELECTIONS = ("heldout", "bonferroni", "combined", "frontier")
#: name of the GDP estimator (``details["gdp"]["method"]``); its number is an estimate, never epsilon_lower
GDP_METHOD = "gdp (estimate assuming mu-GDP)"
_DEFAULT_GRID_SIZE = 50


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


def _fixed_grid(sel0, sel1, size: int) -> np.ndarray:
    """Quantile grid from the selection sample (fixed before the evaluation sample is seen)."""
    pooled = np.concatenate([sel0, sel1])
    levels = np.unique(np.concatenate([np.geomspace(1e-4, 0.5, size // 2), 1 - np.geomspace(1e-4, 0.5, size // 2)]))
    return np.unique(np.quantile(pooled, levels, method="inverted_cdf"))


def _warn_pure_dp_claim(sampler) -> None:
    """delta = 0 (the default) audits a pure-DP claim: say so when the mechanism has none (a Gaussian)."""

    desc = no_pure_dp(sampler)
    if desc is not None:
        import warnings

        warnings.warn(f"delta = 0 audits a pure-DP claim, but {desc} has no pure-DP guarantee (its epsilon at "
                      "delta = 0 is infinite), so a long enough audit will report a violation; pass the delta of its "
                      "claim, e.g. delta=1e-5", PureDPClaimWarning, stacklevel=3)


def audit_scores(sel0, sel1, eval0=None, eval1=None, *, epsilon: float, delta: float = 0.0,
                 confidence: float = 0.95, method: str = "threshold", selection: str = "heldout", grid=None,
                 trials: int | None = None, details: dict | None = None,
                 fpr_levels=DEFAULT_FPR_LEVELS) -> AuditResult:
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
    selection : {"heldout", "bonferroni", "combined", "frontier"}
        How the threshold is chosen (default ``"heldout"``: on the selection scores, then tested once
        on the evaluation scores). ``"bonferroni"`` tests a fixed ``grid`` of thresholds (``sel0, sel1``
        may then be empty when ``grid`` is given).
    grid : array-like, optional
        Thresholds for ``selection="bonferroni"``.
    trials : int, optional
        Number of runs to record (default: evaluation plus selection scores of ``D0``).
    details : dict, optional
        Extra entries copied into ``AuditResult.details``.
    fpr_levels : tuple of float
        FPR levels of the descriptive TPR statistics in ``details["attack_statistics"]``.

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
    epsilon = check_nonnegative("epsilon", epsilon, allow_inf=True)
    delta = check_audit_delta("delta", delta)
    confidence = check_confidence("confidence", confidence)
    if method not in ("threshold", "gdp"):
        raise ValueError(f"method must be 'threshold' or 'gdp' here, got {method!r}")
    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {SELECTIONS}, got {selection!r}")
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

    def run(kind, rule=selection, b=beta):
        if rule == "combined":  # held-out and Bonferroni at beta/2 each; the larger bound (union bound)
            h, f = run(kind, "heldout", b / 2.0), run(kind, "bonferroni", b / 2.0)
            out = dict(h if h["value"] >= f["value"] else f)
            out.update({"selection": "combined (held-out and Bonferroni at beta/2 each, the larger)", "beta": b,
                        "heldout_value": h["value"], "bonferroni_value": f["value"]})
            return out
        if rule == "heldout":
            return heldout_test(sel0, sel1, eval0, eval1, delta=delta, beta=b, kind=kind)
        if rule == "frontier":
            fr = roc_frontier(as_scores(sel0, "sel0"), as_scores(sel1, "sel1"))
            return frontier_test(eval0, eval1, fr["thresholds"], fr["orientation"], delta=delta, beta=b, kind=kind)
        g = grid if grid is not None else _fixed_grid(as_scores(sel0, "sel0"), as_scores(sel1, "sel1"),
                                                      _DEFAULT_GRID_SIZE)
        return bonferroni_test(eval0, eval1, g, delta=delta, beta=b, kind=kind)

    thr = run("dp")
    g = run("gdp")
    mu = g["value"]
    gdp = {"mu_lower": mu, "assumption": GDP_ASSUMPTION, "label": GDP_LABEL, "method": GDP_METHOD,
           "role": "estimate: never sets violation, the verdict or an exit code", "test": g,
           "epsilon": gdp_epsilon_of(mu, delta) if delta > 0.0 else None}
    if delta == 0.0:
        gdp["note"] = "no epsilon at delta = 0: a mu-GDP mechanism with mu > 0 is never pure DP"
    # epsilon_lower is always the certified threshold bound; method="gdp" only asks for the estimate
    eps_lower = thr["value"]
    rule_str = {"heldout": "held-out threshold selection", "bonferroni": "Bonferroni over a fixed grid",
                "combined": "held-out and Bonferroni at beta/2 each",
                "frontier": "two-sided, Bonferroni over the selection ROC frontier"}[selection]
    method_str = f"threshold test, Clopper-Pearson + delta term, {rule_str}"
    if method == "gdp":
        method_str += f" (method='gdp': the GDP number is gdp_estimate, an {GDP_LABEL})"
    eps_lower = max(0.0, round_down(eps_lower)) if math.isfinite(eps_lower) else eps_lower
    n_trials = int(trials if trials is not None else eval0.size + sel0.size)
    out = dict(details or {})
    out.update({
        "threshold_test": thr,
        "gdp": gdp,
        "requested_method": method,
        "selection": selection,
        "n_selection": [int(sel0.size), int(sel1.size)],
        "n_evaluation": [int(eval0.size), int(eval1.size)],
        "roc": roc_points(eval0, eval1, thr["orientation"]),
        "attack_statistics": attack_statistics(sel0, sel1, eval0, eval1, fpr_levels=fpr_levels, confidence=confidence),
        "advice": threshold_advice(sel0, sel1, eval0, eval1, epsilon=epsilon, delta=delta, beta=beta,
                                   trials=max(n_trials, int(eval0.size)), selection=selection,
                                   grid_size=thr.get("grid_size")),
    })
    return AuditResult(
        epsilon_lower=float(eps_lower), epsilon_claimed=float(epsilon), delta=float(delta),
        confidence=float(confidence), violation=bool(eps_lower > epsilon), method=method_str,
        trials=n_trials, details=out,
    )


def _halves(scores: np.ndarray):
    half = scores.size // 2
    return scores[:half], scores[half:]


class _AttackChunk:
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


def _run_pair(fn0, fn1, n, seed0, seed1, names, chunk_size, executor, retries):
    """The chunks of two jobs of ``n`` trials, run concurrently; merged exactly (concatenation)."""
    r0, r1 = run_jobs([Job(fn0, n, seed0, names[0]), Job(fn1, n, seed1, names[1])], chunk_size=chunk_size,
                      executor=executor, retries=retries)
    return concat_chunks(r0, n), concat_chunks(r1, n)


def _split(trials: int, fraction: float) -> tuple[int, int]:
    n_sel = int(round(fraction * trials))
    n_sel = min(max(n_sel, 1), trials - 1)
    return n_sel, trials - n_sel


def _candidate_pairs(x, x_prime, pairs):
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


def audit_mechanism(sampler, x, x_prime, *, epsilon: float, delta: float = 0.0, trials: int = 10_000,
                    confidence: float = 0.95, statistic="auto", seed=None, method: str = "threshold",
                    selection: str = "auto", selection_fraction: float = 0.3, grid=None, pairs=None, encode=None,
                    features=None, randomize_ties: bool = False, chunk_size: int = DEFAULT_CHUNK_SIZE, executor=None,
                    workers=None, retries: int = DEFAULT_RETRIES, fpr_levels=DEFAULT_FPR_LEVELS,
                    neighbouring=None, claim_neighbouring=None, progress=None) -> AuditResult:
    """Audit a black-box mechanism against its claim (epsilon, delta).

    Parameters
    ----------
    sampler : callable(x, rng, size) -> outputs
        ``size`` independent outputs of the mechanism on input ``x``: a numeric array (first axis
        = runs; NaN and inf allowed) or a sequence of ``size`` arbitrary outputs (tuples,
        variable-length lists, ``None``, strings, ...; :mod:`dpaudit.audit.outputs`).
    x, x_prime : neighbouring inputs (passed to ``sampler`` unchanged); may both be None when
        ``pairs`` is given.
    epsilon, delta : the claim (``delta = 0`` for pure DP; ``epsilon = inf`` for no claim).
    trials : int
        Runs per neighbouring input (selection + evaluation; canaries for ``"one-run"``). With
        several candidate pairs, each candidate gets its own selection runs and only the chosen
        pair gets the evaluation runs (``details["runs"]`` counts them all).
    confidence : float
        1 - beta: P[violation] <= beta for a mechanism that satisfies the claim.
    statistic : "auto" (default), a family name or list of names, or callable(outputs) -> scores
        ``"auto"`` fits every applicable attack family of :mod:`dpaudit.audit.attack_families`
        (value, projection, empirical-lr, logistic, mlp, float-bits) on half of the selection
        sample and keeps the one with the best predicted bound on the other half; the result
        records which won (``details["attack"]``). A callable is a fixed score function (it gets
        the batch as a float array of shape (size, k), or an object array of output keys).
        ``None`` means ``"auto"``.
    seed : None, int or SeedSequence
    method : {"threshold", "gdp", "one-run"}
        See the module docstring. ``epsilon_lower`` is always certified; "gdp" gives the same
        certified threshold bound and asks for the GDP estimate (``result.gdp_estimate``, an
        estimate assuming mu-GDP, computed for "threshold" too).
    selection : {"auto", "heldout", "bonferroni", "combined", "frontier"}
        Threshold rule for "threshold" and "gdp" (:mod:`dpaudit.audit.selection`). ``"auto"``:
        a winner that fits nothing (the output value) gets a held-out threshold chosen on ALL the
        selection runs of its pair; a fitted winner, Bonferroni over the category boundaries for
        statistics with few values (held-out on the validation half for 2 values or many).
    selection_fraction : float in (0, 1)
        Share of the trials used for selection (fitting the attack, choosing pair and threshold).
    fpr_levels : sequence of floats in (0, 1)
        FPR levels of the "TPR at a fixed FPR" attack statistics (``result.attack_statistics``;
        :mod:`dpaudit.audit.attack_stats`; descriptive, never the verdict). Default (1e-3, 1e-2).
    grid : array, optional
        Fixed thresholds for ``selection="bonferroni"`` with a callable statistic; then all
        trials are evaluation trials.
    pairs : list of (x, x') or (name, x, x') tuples, optional
        Further candidate neighbouring pairs (e.g. :func:`dpaudit.audit.selection.statdp_pairs`);
        the pair is chosen on its selection runs, so the bound stays valid
        (``details["inputs"]`` says which).
    encode : callable(output) -> number, tuple or string, optional
        Applied to each raw output before the attacks see it (outputs that cannot be compared).
        Before any trial, two outputs on each input of the first pair (a random stream no trial
        uses; ``details["preflight_runs"]``) check that the statistic can read the outputs: if
        not, a ``ValueError`` shows them and says how to map them (:mod:`dpaudit.audit.preflight`).
    features : callable(batch) -> (n, d) array, optional
        Features for the learned attacks (logistic, mlp) instead of the defaults.
    randomize_ties : bool
        DP-Sniper's randomised tie-breaking at the threshold for statistics with few values (the
        auditor's own coins, seeded from ``seed``); off by default (measured worse, see
        :mod:`dpaudit.audit.selection`).
    chunk_size : int
        Trials per chunk (part of the random-stream layout: the result depends on ``seed``,
        ``trials`` and ``chunk_size`` only).
    executor : concurrent.futures.Executor, optional
        Where the chunks run: e.g. a ``ProcessPoolExecutor`` or a Dask client's
        ``client.get_executor()``. Default: in this process.
    workers : int, optional
        ``N >= 2`` runs the chunks on a process pool of N workers (not with ``executor``). A
        process pool needs ``sampler`` and ``statistic`` to be picklable: module-level functions
        (or bound methods such as ``Gaussian(1.0).sample``), not lambdas or closures.
    retries : int
        Resubmissions of a failed chunk (see :func:`dpaudit.core.runner.run_jobs`).
    neighbouring : {"add_remove", "replace_one"} or None
        The neighbouring relation of the audited pair (x, x_prime), recorded in
        ``details["neighbouring"]`` and ``details["relation"]`` (JSON, report). None: not stated.
    claim_neighbouring : {"add_remove", "replace_one"} or None
        The relation the claim (epsilon, delta) holds for. When it differs from ``neighbouring``
        the result carries ``details["relation"]["warning"]`` and a
        :class:`dpaudit.audit.relation.NeighbouringRelationWarning` is emitted (a replace-one pair
        can show up to 2 epsilon against an add/remove claim without any bug).
    progress : callable(done, total), optional
        Called after every finished chunk with the trials done so far and the total of the
        audit (:mod:`dpaudit.core.progress`); messages also go to the ``logging`` logger
        ``"dpaudit"``.
    """
    relation = relation_record(neighbouring, claim_neighbouring)
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be callable as progress(done, total), got {progress!r}")
    if not callable(sampler):
        raise ValueError("sampler must be callable as sampler(x, rng, size)")
    epsilon = check_nonnegative("epsilon", epsilon, allow_inf=True)
    delta = check_audit_delta("delta", delta)
    trials = check_count("trials", trials, minimum=2)
    confidence = check_confidence("confidence", confidence)
    selection_fraction = check_real("selection_fraction", selection_fraction)
    if not 0.0 < selection_fraction < 1.0:
        raise ValueError(f"selection_fraction must be in (0, 1), got {selection_fraction}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if selection not in RULES:
        raise ValueError(f"selection must be one of {RULES}, got {selection!r}")
    if encode is not None and not callable(encode):
        raise ValueError("encode must be callable as encode(output) -> number, tuple or string")
    if features is not None and not callable(features):
        raise ValueError("features must be callable as features(batch) -> array of shape (n, d)")
    if statistic is None:
        statistic = "auto"
    families = None if callable(statistic) else resolve_families(statistic)
    candidates = _candidate_pairs(x, x_prime, pairs)
    if delta == 0.0:
        _warn_pure_dp_claim(sampler)
    seed = pin_seed(seed)  # None: fresh entropy, recorded in details["seed"] so the run can be reproduced
    root = as_seed_sequence(seed)
    # outputs the statistic cannot read fail here, with how to map them, not deep inside a chunk
    probe_runs = preflight_outputs(sampler, candidates[0][1], candidates[0][2], root=root, encode=encode,
                                   statistic=statistic if families is None else None, families=families)
    n_sel = _split(trials, selection_fraction)[0]
    planned = (trials + n_sel if method == "one-run"  # one run of `trials` canaries, and the calibration run
               else 2 * trials + 2 * n_sel * (len(candidates) - 1))  # selection runs of further candidates
    with progress_reporting(progress, total=planned), open_executor(executor, workers) as ex:
        check_picklable(ex, sampler, "sampler")  # fail before any chunk runs, not between phases
        if families is None:
            check_picklable(ex, statistic, "statistic")
        if encode is not None:
            check_picklable(ex, encode, "encode")
        common = dict(epsilon=epsilon, delta=delta, trials=trials, confidence=confidence, statistic=statistic,
                      families=families, root=root, selection_fraction=selection_fraction, candidates=candidates,
                      encode=encode, features=features, randomize_ties=bool(randomize_ties), chunk_size=chunk_size,
                      executor=ex, retries=retries)
        if method == "one-run":
            result = _audit_one_run(sampler, **common)
        else:
            result = _audit_two_sample(sampler, method=method, selection=selection, grid=grid, fpr_levels=fpr_levels,
                                       **common)
    warn_relation(relation)
    logger.info("audit_mechanism: epsilon >= %.6g certified (claim %.6g at delta %.3g), verdict %s",
                result.epsilon_lower, result.epsilon_claimed, result.delta, result.verdict)
    return result.with_details(seed=seed_record(seed), neighbouring=relation["pair"], relation=relation,
                               preflight_runs=probe_runs)


#: ``details["attack"]["threshold_on"]`` of a winner that fits nothing, chosen among families that do
_FIT_FREE_WINNER = "all selection runs (the winner fits nothing)"


def _select_attack(sampler, *, candidates, n_sel, seeds, tb_seed, fit_seed, families, delta, beta, encode, features,
                   chunk_size, executor, retries, n_eval=None, randomize_ties=False, threshold_from_selection=True):
    """Draw selection outputs for every candidate pair, fit and compare the families; the winner.

    ``threshold_from_selection=False`` (one-run audits, whose guesses come from a calibration run): the
    winner's selection scores are not used for a threshold, so they are not extended."""
    best = best_i = spec = None
    record, skipped, runs = [], [], 0
    for i, (name, a, b) in enumerate(candidates):
        s0, s1 = seeds[i]
        out0, out1 = _run_pair(_AttackChunk(sampler, a, encode=encode), _AttackChunk(sampler, b, encode=encode), n_sel,
                               s0, s1, (f"selection outputs on x ({name})", f"selection outputs on x' ({name})"),
                               chunk_size, executor, retries)
        runs += 2 * n_sel
        if spec is None:
            spec = batch_spec(out0)
        out0, out1 = conform(out0, spec), conform(out1, spec)
        if len(candidates) == 1 and not any(f.needs_fit for f in families):
            tr0, va0, tr1, va1 = out0, out0, out1, out1  # nothing to fit or compare: all of it picks the threshold
        else:
            tr0, va0 = split_train_validation(out0)
            tr1, va1 = split_train_validation(out1)
        g = np.random.default_rng(tb_seed.spawn(len(candidates))[i])
        u0, u1 = g.random(len(va0)), g.random(len(va1))
        ch = choose_attack(tr0, tr1, va0, va1, families=families, delta=delta, beta=beta, seed=fit_seed.spawn(
            len(candidates))[i], u0=u0, u1=u1, features=features, label=name, n_eval=n_eval,
            randomize_ties=randomize_ties)
        if ch is None:
            skipped.extend({"family": f.name, "reason": "not applicable", "pair": name} for f in families)
            continue
        record.extend(ch.candidates)
        skipped.extend(ch.skipped)
        if best is None or ch.predicted > best.predicted:
            best, best_i = ch, i
            best_train = (tr0, tr1, g) if tr0 is not va0 else None
    if best is None:
        reasons = "; ".join(f"{s['family']}: {s['reason']}" for s in skipped)
        raise ValueError(f"no attack family applies to these outputs ({reasons})")
    fit_free = {f.name for f in families if not f.needs_fit}
    if not threshold_from_selection:
        best.threshold_on = "not used (one-run: the guesses are chosen on the calibration run)"
    elif best_train is None:  # one candidate, nothing to fit: every selection run already picks the threshold
        best.threshold_on = "all selection runs (nothing to fit or compare)"
    elif best.family in fit_free:
        # the winner learned nothing from the training half: its threshold is chosen on ALL the selection runs of
        # its pair (measured better than the validation half or a Bonferroni grid: docs/attacks-benchmark.md);
        # still only selection draws, so the evaluation certifies as before
        tr0, tr1, g = best_train
        s0, s1 = score_batch(best.statistic, tr0), score_batch(best.statistic, tr1)
        if best.tiebreak is not None:
            s0, s1 = best.tiebreak(s0, g.random(len(tr0))), best.tiebreak(s1, g.random(len(tr1)))
        best.val0, best.val1 = np.concatenate([s0, best.val0]), np.concatenate([s1, best.val1])
        best.threshold_on = _FIT_FREE_WINNER
    return best, best_i, spec, record, skipped, runs


def _attack_details(best, best_i, candidates, record, skipped, n_sel, runs, spec_batch_desc):
    name, a, b = candidates[best_i]
    return {
        "attack": {"family": best.family, "description": best.description,
                   "selected_on": f"fitted on the first half and compared on the second half of {n_sel} selection "
                                  "runs per input (independent of the evaluation runs)",
                   "threshold_on": best.threshold_on,
                   "predicted": best.predicted,
                   "tie_break": None if best.tiebreak is None else
                   ("randomised (auditor's coins)" if best.tiebreak.randomize else "category codes (deterministic)"),
                   "leak": leak_kind(best.family, best.statistic), "candidates": record, "skipped": skipped},
        "inputs": {"x": describe_input(a), "x_prime": describe_input(b), "index": int(best_i), "name": name,
                   "candidates": [c[0] for c in candidates]},
        "outputs": spec_batch_desc,
        "runs": int(runs),
    }


def _audit_two_sample(sampler, *, epsilon, delta, trials, confidence, statistic, families, root, method, selection,
                      selection_fraction, grid, candidates, encode, features, randomize_ties, chunk_size, executor,
                      retries, fpr_levels=DEFAULT_FPR_LEVELS) -> AuditResult:
    s_sel0, s_sel1, s_ev0, s_ev1 = root.spawn(4)
    s_tb, s_fit, s_pairs = root.spawn(3)  # children 4, 5, 6: the four streams above are unchanged
    beta = 1.0 - confidence
    if families is None:  # a fixed, user-given statistic: the original protocol
        if len(candidates) != 1:
            raise ValueError("several candidate pairs need statistic='auto' (or family names): the pair is chosen "
                             "together with the attack on the selection runs")
        _, a, b = candidates[0]
        use_grid = selection == "bonferroni" and grid is not None
        n_sel, n_eval = (0, trials) if use_grid else _split(trials, selection_fraction)
        rule = "heldout" if selection == "auto" else selection
        sel0 = sel1 = np.empty(0)
        if n_sel:
            sel0, sel1 = _run_pair(_AttackChunk(sampler, a, statistic, encode), _AttackChunk(sampler, b, statistic, encode),
                                   n_sel, s_sel0, s_sel1, ("selection scores on x", "selection scores on x'"),
                                   chunk_size, executor, retries)
        ev0, ev1 = _run_pair(_AttackChunk(sampler, a, statistic, encode), _AttackChunk(sampler, b, statistic, encode),
                             n_eval, s_ev0, s_ev1, ("evaluation scores on x", "evaluation scores on x'"), chunk_size,
                             executor, retries)
        desc = getattr(statistic, "description", "user statistic")
        return audit_scores(sel0, sel1, ev0, ev1, epsilon=epsilon, delta=delta, confidence=confidence,
                            method=method, selection=rule, grid=grid, trials=trials, fpr_levels=fpr_levels,
                            details={"statistic": desc,
                                     "attack": {"family": getattr(statistic, "family", "") or "user statistic",
                                                "description": desc, "selected_on": "fixed by the user",
                                                "leak": leak_kind(getattr(statistic, "family", ""), statistic)},
                                     "inputs": {"x": describe_input(a), "x_prime": describe_input(b), "index": 0,
                                                "name": candidates[0][0]}})
    if grid is not None:
        raise ValueError("a fixed grid needs a fixed statistic (statistic=callable)")
    n_sel, n_eval = _split(trials, selection_fraction)
    if n_sel < 4:
        raise ValueError(f"trials * selection_fraction must give at least 4 selection runs to fit an attack, got {n_sel}")
    pair_seeds = [(s_sel0, s_sel1)] + [tuple(c.spawn(2)) for c in s_pairs.spawn(max(len(candidates) - 1, 1))]
    best, best_i, spec, record, skipped, runs = _select_attack(
        sampler, candidates=candidates, n_sel=n_sel, seeds=pair_seeds, tb_seed=s_tb, fit_seed=s_fit,
        families=families, delta=delta, beta=beta, encode=encode, features=features, chunk_size=chunk_size,
        executor=executor, retries=retries, n_eval=n_eval, randomize_ties=randomize_ties)
    _, a, b = candidates[best_i]
    tb = best.tiebreak
    ev0, ev1 = _run_pair(_AttackChunk(sampler, a, best.statistic, encode, spec, tb),
                         _AttackChunk(sampler, b, best.statistic, encode, spec, tb), n_eval, s_ev0, s_ev1,
                         ("evaluation scores on x", "evaluation scores on x'"), chunk_size, executor, retries)
    runs += 2 * n_eval
    rule, rule_grid, why = selection, None, "requested"
    boundaries = boundary_grid(tb) if tb is not None else None
    if selection == "auto":  # measured in docs/attacks-benchmark.md ("threshold rules")
        if best.threshold_on == _FIT_FREE_WINNER:
            rule, why = "heldout", "the winner fits nothing: held-out threshold on all selection runs"
        elif tb is not None and tb.size <= 2:
            rule, why = "heldout", f"statistic with {tb.size} values: held-out (the choice of test is easy)"
        elif boundaries is not None and boundaries.size <= MAX_BOUNDARY_GRID:
            rule, why = "bonferroni", f"statistic with {tb.size} values: Bonferroni over its category boundaries"
        else:
            rule, why = "heldout", "statistic with many values: held-out threshold"
    if rule in ("bonferroni", "combined") and boundaries is not None and boundaries.size <= MAX_BOUNDARY_GRID:
        rule_grid = boundaries
    details = _attack_details(best, best_i, candidates, record, skipped, n_sel, runs, describe_outputs_of(spec))
    details["statistic"] = best.description
    details["selection_rule"] = {"requested": selection, "used": rule, "why": why,
                                 "grid": "category boundaries" if rule_grid is not None else
                                 ("quantiles of the selection scores" if rule != "heldout" else None)}
    res = audit_scores(best.val0, best.val1, ev0, ev1, epsilon=epsilon, delta=delta, confidence=confidence,
                       method=method, selection=rule, grid=rule_grid, trials=trials, details=details,
                       fpr_levels=fpr_levels)
    # every selection run counts (fitting half + threshold half), as the trial accounting promises
    res.details["n_threshold_selection"] = res.details["n_selection"]
    res.details["n_selection"] = [int(n_sel), int(n_sel)]
    return res


def describe_outputs_of(spec) -> str:
    kind, k = spec
    return f"numeric, {k} value{'s' if k != 1 else ''} per run" if kind == "numeric" else \
        "objects (canonical keys: variable-length, mixed or non-numeric outputs)"


class _OneRunMechanism:
    """``run(coins, seed)`` of :func:`dpaudit.audit.one_run.one_run_protocol` for a mechanism: canary j
    is one mechanism run on x' if ``coins[0, j]`` (included) and on x otherwise, scored by the statistic."""

    def __init__(self, sampler, a, b, statistic, encode, spec, tiebreak, chunk_size, executor, retries):
        self.sampler, self.a, self.b, self.statistic = sampler, a, b, statistic
        self.encode, self.spec, self.tiebreak = encode, spec, tiebreak
        self.chunk_size, self.executor, self.retries = chunk_size, executor, retries

    def __call__(self, coins, seed):
        coins = np.atleast_2d(coins)
        scores = np.empty(coins.shape)
        for row, c in enumerate(coins):
            s_in, s_out = seed.spawn(2)
            k1 = int(c.sum())
            jobs, masks = [], []
            if k1:
                jobs.append(Job(_AttackChunk(self.sampler, self.b, self.statistic, self.encode, self.spec, self.tiebreak),
                                k1, s_in, "canaries included (x')"))
                masks.append(c)
            if c.size - k1:
                jobs.append(Job(_AttackChunk(self.sampler, self.a, self.statistic, self.encode, self.spec, self.tiebreak),
                                c.size - k1, s_out, "canaries excluded (x)"))
                masks.append(~c)
            res = run_jobs(jobs, chunk_size=self.chunk_size, executor=self.executor, retries=self.retries)
            for mask, r in zip(masks, res):
                scores[row, mask] = concat_chunks(r, int(mask.sum()))
        return scores


def _audit_one_run(sampler, *, epsilon, delta, trials, confidence, statistic, families, root, selection_fraction,
                   candidates, encode, features, randomize_ties, chunk_size, executor, retries) -> AuditResult:
    """One-run audit of a mechanism (Steinke, Nasr, Jagielski 2023): ``trials`` canaries in the main
    run, ``selection_fraction`` of them as the calibration run; the statistic (and pair) is fitted on
    separate two-sample draws of half the calibration size per input."""
    s_fit_draws, s_protocol = root.spawn(2)
    m_cal, m = _split(trials, selection_fraction)
    beta = 1.0 - confidence
    spec, tb, details = None, None, {}
    if families is None:
        if len(candidates) != 1:
            raise ValueError("several candidate pairs need statistic='auto' (or family names)")
        best_i, stat = 0, statistic
        details["attack"] = {"family": getattr(statistic, "family", "") or "user statistic",
                             "description": getattr(statistic, "description", "user statistic"),
                             "selected_on": "fixed by the user", "leak": leak_kind("", statistic)}
        name, a, b = candidates[0]
        details["inputs"] = {"x": describe_input(a), "x_prime": describe_input(b), "index": 0, "name": name}
    else:
        n_fit = max(m_cal // 2, 4)
        s_sel, s_tb, s_fit = s_fit_draws.spawn(3)
        seeds = [tuple(c.spawn(2)) for c in s_sel.spawn(len(candidates))]
        best, best_i, spec, record, skipped, runs = _select_attack(
            sampler, candidates=candidates, n_sel=n_fit, seeds=seeds, tb_seed=s_tb, fit_seed=s_fit, families=families,
            delta=delta, beta=beta, encode=encode, features=features, chunk_size=chunk_size, executor=executor,
            retries=retries, randomize_ties=randomize_ties, threshold_from_selection=False)
        stat, tb = best.statistic, best.tiebreak
        details.update(_attack_details(best, best_i, candidates, record, skipped, n_fit, runs + m_cal + m,
                                       describe_outputs_of(spec)))
    _, a, b = candidates[best_i]
    run = _OneRunMechanism(sampler, a, b, stat, encode, spec, tb, chunk_size, executor, retries)
    res = one_run_protocol(run, m=m, m_calibration=m_cal, seed=s_protocol, delta=delta, confidence=confidence)
    eps_lower = float(res["epsilon_lower"][0])
    cal = res["calibration"]
    one = {"epsilon_lower": eps_lower, "m": m, "r": int(res["r"][0]), "v": int(res["v"][0]),
           "k_in": int(res["k_in"][0]), "k_out": int(res["k_out"][0]), "included": int(res["included"][0])}
    details.update({"one_run": one, "calibration_canaries": int(m_cal),
                    "guess_fraction": [float(cal["fraction_in"][0]), float(cal["fraction_out"][0])],
                    "calibration_epsilon": float(cal["calibration_epsilon"][0]),
                    "one_run_bound": bound_record(res),
                    "ceiling": ceiling_record(res, epsilon_lower=eps_lower, epsilon_claimed=float(epsilon)),
                    "statistic": getattr(stat, "description", "user statistic")})
    if not eps_lower > 0.0:  # certified nothing: advisory numbers (never change the bound)
        details["advice"] = one_run_advice(m=one["m"], r=one["r"], v=one["v"], epsilon=epsilon, delta=delta,
                                           confidence=confidence)
    return AuditResult(
        epsilon_lower=eps_lower, epsilon_claimed=float(epsilon), delta=float(delta),
        confidence=float(confidence), violation=bool(eps_lower > epsilon),
        method=one_run_method(res), trials=int(trials), details=details,
    )
