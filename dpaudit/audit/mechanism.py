"""``audit_mechanism``: an epsilon lower bound for any black-box mechanism.

The auditor checks the request, probes the sampler's outputs, opens the executor and hands the audit to the
protocol: the two-sample threshold audit of :mod:`dpaudit.audit.protocol.two_sample` (``method="threshold"``
or ``"gdp"``) or the one-run audit of :mod:`dpaudit.audit.protocol.one_run` (``method="one-run"``).

* ``method="threshold"`` (default, a certified lower bound): choose the attack, the neighbouring pair and the
  threshold on selection runs, certify on independent evaluation runs (Kairouz, Oh, Viswanath 2015; Jagielski,
  Ullman, Oprea 2020; Nasr et al. 2023). The attack is ``statistic``: ``"auto"`` (every attack family of
  :mod:`dpaudit.audit.attacks.registry`, fitted on half of the selection runs and compared on the other half),
  ``"auto-real"`` (all but the bit-level families: the mathematical mechanism, not its floating-point
  implementation), family names, a :class:`~dpaudit.audit.attacks.selection.Contest`, or a fixed callable. The
  threshold rule is ``threshold`` (:mod:`dpaudit.audit.stats.rules`; ``"auto"`` picks it from the type of the
  chosen statistic before any evaluation draw).
* The GDP estimate (Dong-Roth-Su 2019; Nasr et al. 2023) is always computed as well and reported in
  ``details["gdp"]`` (and ``AuditResult.gdp_estimate``) labelled "estimate, assuming mu-GDP". It is never
  ``epsilon_lower`` and never sets ``violation``: ``method="gdp"`` still certifies with the threshold test (the
  method string says the estimate was requested).
* ``method="one-run"``: Steinke-Nasr-Jagielski 2023 with ``trials`` canaries whose inclusion is a fair coin each
  (each canary's output is one mechanism run on x' if included, on x otherwise); the numbers of "in" and "out"
  guesses are chosen separately on an independent calibration run.

Soundness: the threshold bound holds with probability >= confidence whatever the mechanism, because the
selection and evaluation samples are independent; ``violation`` is ``epsilon_lower > epsilon`` (the claim).
``details["advice"]`` holds advisory numbers for audits that certify nothing (:mod:`dpaudit.audit.stats.power`);
they never change ``epsilon_lower``.
"""

from __future__ import annotations

import logging

from dpaudit.audit.attacks.selection import attack_choice
from dpaudit.audit.protocol.relation import relation_record, warn_relation
from dpaudit.audit.protocol.result import AuditResult
from dpaudit.audit.protocol.sampler import run_sampler_audit, warn_pure_dp_claim
from dpaudit.audit.protocol.two_sample import METHODS, SamplerAudit, candidate_pairs, split_trials
from dpaudit.audit.stats.attack_stats import DEFAULT_FPR_LEVELS
from dpaudit.audit.stats.error_rates import check_audit_delta
from dpaudit.audit.stats.rules import RULE_NAMES, threshold_rule
from dpaudit.core.deprecation import warn_deprecated_spelling
from dpaudit.core.execution import Execution, resolve_execution
from dpaudit.core.seeds import as_seed_sequence, pin_seed, seed_record
from dpaudit.core.threads import blas_limited
from dpaudit.core.validation import check_confidence, check_count, check_nonnegative, check_real

__all__ = ["audit_mechanism", "METHODS", "DEPRECATED_KEYWORDS"]

logger = logging.getLogger(__name__)

#: keywords that moved: the execution options to ``execution=Execution(...)``, the threshold rule to
#: ``threshold=``, the learned families' options to ``statistic=Contest(...)``
DEPRECATED_KEYWORDS = ("workers", "executor", "chunk_size", "retries", "progress", "selection", "grid", "features",
                       "randomize_ties")


def _moved_keywords(legacy: dict, statistic, threshold):
    """``(statistic, threshold)`` with the deprecated ``features`` / ``randomize_ties`` / ``selection`` / ``grid``
    keywords folded in (each with a DeprecationWarning naming the new spelling)."""
    features, randomize = legacy.pop("features", None), legacy.pop("randomize_ties", False)
    selection, grid = legacy.pop("selection", None), legacy.pop("grid", None)
    if legacy:
        raise TypeError(f"audit_mechanism() got unexpected keyword arguments {sorted(legacy)}")
    if features is not None or randomize:
        warn_deprecated_spelling("features= / randomize_ties=", "statistic=dpaudit.audit.attack_choice(statistic, "
                                 "features=..., randomize_ties=...) (a Contest)", "audit_mechanism()")
        if features is not None and not callable(features):
            raise ValueError("features must be callable as features(batch) -> array of shape (n, d)")
    choice = attack_choice(statistic, features=features, randomize_ties=bool(randomize))
    if selection is not None or grid is not None:
        if not (isinstance(threshold, str) and threshold == "auto"):
            raise ValueError("give threshold= or the deprecated selection= / grid=, not both")
        name = "auto" if selection is None else selection
        if name not in RULE_NAMES + ("auto",):
            raise ValueError(f"selection must be one of {RULE_NAMES + ('auto',)}, got {name!r}")
        warn_deprecated_spelling("selection= / grid=", f"threshold={name!r} or a rule object (dpaudit.audit.HeldOut(), "
                                 "Bonferroni(grid=...), Frontier(), Combined())", "audit_mechanism()")
        if grid is not None and name == "auto":
            raise ValueError("a fixed grid needs a fixed statistic (statistic=callable) and threshold=Bonferroni(grid)")
        threshold = "auto" if name == "auto" else threshold_rule(name, grid)
    elif not (isinstance(threshold, str) and threshold == "auto"):
        threshold = threshold_rule(threshold)
    return choice, threshold


@blas_limited
def audit_mechanism(sampler, x, x_prime, *, epsilon: float, delta: float = 0.0, trials: int = 10_000,
                    confidence: float = 0.95, statistic="auto", seed=None, method: str = "threshold",
                    threshold="auto", selection_fraction: float = 0.3, pairs=None, encode=None, neighbouring=None,
                    claim_neighbouring=None, fpr_levels=DEFAULT_FPR_LEVELS, execution: Execution | None = None,
                    **deprecated) -> AuditResult:
    """Audit a black-box mechanism against its claim (epsilon, delta).

    Parameters
    ----------
    sampler : callable(x, rng, size) -> outputs
        ``size`` independent outputs of the mechanism on input ``x``: a numeric array (first axis
        = runs; NaN and inf allowed) or a sequence of ``size`` arbitrary outputs (tuples,
        variable-length lists, ``None``, strings, ...; :mod:`dpaudit.audit.attacks.outputs`).
    x, x_prime : neighbouring inputs (passed to ``sampler`` unchanged); may both be None when
        ``pairs`` is given.
    epsilon, delta : the claim (``delta = 0`` for pure DP; ``epsilon = inf`` for no claim).
    trials : int
        Runs per neighbouring input (selection + evaluation; canaries for ``"one-run"``). With
        several candidate pairs, each candidate gets its own selection runs and only the chosen
        pair gets the evaluation runs (``details["runs"]`` counts them all).
        The evaluation runs are only counted where they are drawn, so memory holds the selection runs and one
        chunk per worker; an audit that would not fit in the available memory is refused with a ``ValueError``
        naming ``trials`` before any trial (estimated from a probe call's outputs:
        :func:`dpaudit.audit.protocol.sampler.sampler_memory`).
    confidence : float
        1 - beta: P[violation] <= beta for a mechanism that satisfies the claim.
    statistic : "auto" (default), "auto-real", a family name or list of names, a Contest, or callable(outputs) -> scores
        ``"auto"`` fits every applicable attack family (value, projection, empirical-lr, naive-bayes, logistic,
        mlp, float-bits) on half of the selection sample and keeps the one with the best predicted bound on the
        other half; the result records which won (``details["attack"]``). A callable is a fixed score function
        (it gets the batch as a float array of shape (size, k), or an object array of output keys).
        ``Contest(families, features=..., randomize_ties=...)`` sets the learned families' options.
    seed : None, int or SeedSequence
        ``None`` draws fresh entropy and records it in ``details["seed"]`` (the run can be repeated with it).
    method : {"threshold", "gdp", "one-run"}
        See the module docstring. ``epsilon_lower`` is always certified.
    threshold : "auto" or a threshold rule (:mod:`dpaudit.audit.stats.rules`: HeldOut(), Bonferroni(grid=...),
        Frontier(), Combined(), or their names)
        ``"auto"``: a winner that fits nothing gets a held-out threshold chosen on ALL the selection runs of its
        pair; a fitted winner, Bonferroni over the category boundaries for statistics with few values (held-out
        for 2 values or many). ``Bonferroni(grid=...)`` with a callable statistic makes every trial an
        evaluation trial.
    selection_fraction : float in (0, 1)
        Share of the trials used for selection (fitting the attack, choosing pair and threshold).
    pairs : list of (x, x') or (name, x, x') tuples, optional
        Further candidate neighbouring pairs (e.g. :func:`dpaudit.audit.attacks.selection.statdp_pairs`);
        the pair is chosen on its selection runs, so the bound stays valid (``details["inputs"]`` says which).
    encode : callable(output) -> number, tuple or string, optional
        Applied to each raw output before the attacks see it (outputs that cannot be compared).
        Before any trial, two outputs on each input of the first pair (a random stream no trial
        uses; ``details["preflight_runs"]``) check that the statistic can read the outputs: if
        not, a ``ValueError`` shows them and says how to map them (:mod:`dpaudit.audit.attacks.preflight`).
    neighbouring : {"add_remove", "replace_one"} or None
        The neighbouring relation of the audited pair (x, x_prime), recorded in
        ``details["neighbouring"]`` and ``details["relation"]`` (JSON, report). None: not stated.
    claim_neighbouring : {"add_remove", "replace_one"} or None
        The relation the claim (epsilon, delta) holds for. When it differs from ``neighbouring``
        the result carries ``details["relation"]["warning"]`` and a
        :class:`dpaudit.audit.protocol.relation.NeighbouringRelationWarning` is emitted (a replace-one pair
        can show up to 2 epsilon against an add/remove claim without any bug).
    fpr_levels : sequence of floats in (0, 1)
        FPR levels of the "TPR at a fixed FPR" attack statistics (``result.attack_statistics``;
        descriptive, never the verdict). Default (1e-3, 1e-2).
    execution : :class:`dpaudit.Execution`, optional
        Where the trials run (``workers``, ``executor``, ``chunk_size`` -- default 10,000, part of the random-stream
        layout --, ``retries``, ``progress``); never changes the result (:mod:`dpaudit.core.execution`).
    **deprecated
        ``workers``, ``executor``, ``chunk_size``, ``retries``, ``progress`` (now ``execution=``), ``selection``,
        ``grid`` (now ``threshold=``), ``features``, ``randomize_ties`` (now ``statistic=Contest(...)``): still
        accepted, with a ``DeprecationWarning``.

    Example
    -------
    >>> from dpaudit import Laplace, audit_mechanism
    >>> res = audit_mechanism(Laplace(1.0).sample, 0.0, 1.0, epsilon=0.5, trials=20_000, seed=0)  # a false claim
    >>> print(f"{res.verdict}: epsilon >= {res.epsilon_lower:.3f} > claimed {res.epsilon_claimed:g}")
    violation: epsilon >= 0.930 > claimed 0.5
    """
    relation = relation_record(neighbouring, claim_neighbouring)
    execution = resolve_execution(execution, deprecated, where="audit_mechanism")
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
    if method == "gdp" and delta == 0.0:
        raise ValueError("delta must be in (0, 1) for method='gdp' (a mu-GDP mechanism is never pure DP)")
    if method == "one-run" and min(split_trials(trials, selection_fraction)) < 2:
        raise ValueError(f"method='one-run' needs at least 2 calibration and 2 audit canaries: trials = {trials} "
                         f"with selection_fraction = {selection_fraction} gives {split_trials(trials, selection_fraction)}")
    if encode is not None and not callable(encode):
        raise ValueError("encode must be callable as encode(output) -> number, tuple or string")
    choice, threshold = _moved_keywords(deprecated, statistic, threshold)
    req = SamplerAudit(sampler, candidate_pairs(x, x_prime, pairs), epsilon, delta, confidence, trials, choice,
                       threshold, method if method != "one-run" else "threshold", selection_fraction, encode,
                       tuple(fpr_levels))
    if delta == 0.0:
        warn_pure_dp_claim(sampler)
    seed = pin_seed(seed)  # None: fresh entropy, recorded in details["seed"] so the run can be reproduced
    result, probe_runs = run_sampler_audit(req, method, as_seed_sequence(seed), execution)
    warn_relation(relation)
    logger.info("audit_mechanism: epsilon >= %.6g certified (claim %.6g at delta %.3g), verdict %s",
                result.epsilon_lower, result.epsilon_claimed, result.delta, result.verdict)
    return result.with_details(seed=seed_record(seed), neighbouring=relation["pair"], relation=relation,
                               preflight_runs=probe_runs)
