"""Auditing a training loop you wrote yourself (any framework): :func:`audit_one_run` and :func:`audit_training`.

Two protocols, both returning an :class:`~dpaudit.audit.protocol.result.AuditResult` whose ``epsilon_lower`` is a
certified lower confidence bound:

* **one run** (Steinke, Nasr, Jagielski, NeurIPS 2023, arXiv:2305.08846, Theorem 3.1 with the delta term of
  their Theorem 5.2; the f-DP test of Mahloujifar, Melis, Chaudhuri 2024 where it is tighter). You give
  ``run(inclusion_mask, rng) -> scores``: train ONCE with canary j included exactly where
  ``inclusion_mask[j]`` is True, and return one score per canary (larger = "more likely included"). dpaudit
  draws the fair coins (its own random stream, never seen by the score), runs a *calibration* training on
  separate coins that picks how many "in" / "out" guesses to make, runs the *audit* training, counts the
  correct guesses and certifies epsilon. This is :func:`dpaudit.audit.stats.one_run.one_run_protocol` (the one
  home of the protocol, shared with ``audit_mechanism`` and ``audit_optimizer``); this module adds the user
  interface: claims, the ceiling, repeated audits, workers, progress and seeds.
* **many runs** (the threshold audit of Jagielski, Ullman, Oprea 2020 with exact Clopper-Pearson rates and the
  hypothesis-testing characterisation of DP, Kairouz, Oh, Viswanath 2015). You give
  ``train_fn(include_canary, rng) -> score``; dpaudit trains ``trials`` times with and ``trials`` times
  without the canary, chooses the threshold on a selection share of the runs and certifies on the others
  (:func:`dpaudit.audit.protocol.two_sample.audit_scored_runs`: the selection scores are kept, the evaluation
  trainings return only their counts at the thresholds fixed on them).

The CEILING of a one-run audit (``details["ceiling"]``, ``AuditResult.ceiling``) is the largest epsilon it
could certify with that many canaries if every guess were right (:func:`dpaudit.audit.stats.one_run.one_run_ceiling`):
a claim at or above it cannot be shown violated, and a "consistent" close to it says little.

Claims (``claim=``): a number (epsilon; ``delta`` defaults to 0, a pure-DP claim), a pair ``(epsilon, delta)``,
or a claim object with ``.epsilon(delta)`` (a :class:`~dpaudit.accounting.claim.PrivacyClaim`, e.g. an
optimizer's ``run.claim`` or a zCDP claim; ``delta`` defaults to 1e-5). A claim object may be checked at
several deltas at once (``delta=[1e-5, 1e-6, ...]``): the same runs give a bound at each delta, each at
confidence ``1 - beta / len(delta)`` (Bonferroni), so all the comparisons hold together at ``confidence``.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from functools import partial

import numpy as np

from dpaudit.audit.protocol.claims import resolve_claim
from dpaudit.audit.protocol.one_run import bound_record, ceiling_record, one_run_method, one_run_protocol
from dpaudit.audit.protocol.relation import relation_record, warn_relation
from dpaudit.audit.protocol.result import AuditResult
from dpaudit.audit.protocol.two_sample import audit_scored_runs, split_trials
from dpaudit.audit.stats.one_run import BOUNDS, max_guesses, one_run_epsilon_lower
from dpaudit.audit.stats.one_run_fdp import one_run_fdp_epsilon_lower
from dpaudit.audit.stats.power import one_run_advice
from dpaudit.audit.stats.rules import threshold_rule
from dpaudit.audit.stats.thresholds import as_scores
from dpaudit.core.deprecation import warn_deprecated_spelling
from dpaudit.core.execution import Execution, resolve_execution
from dpaudit.core.progress import reporting as progress_reporting
from dpaudit.core.runner import Job, audit_memory, check_memory, check_picklable, concat_chunks, open_executor, run_jobs
from dpaudit.core.seeds import as_seed_sequence, pin_seed, seed_record
from dpaudit.core.threads import blas_limited
from dpaudit.core.validation import check_confidence, check_count, check_real

__all__ = ["audit_one_run", "audit_training", "MODES", "DEFAULT_CANARIES", "DEFAULT_TRIALS"]

logger = logging.getLogger(__name__)

MODES = ("one_run", "many_runs")
#: canaries of a one-run training audit when not given
DEFAULT_CANARIES = 1_000
#: trainings per side (with / without the canary) of a many-runs audit when not given
DEFAULT_TRIALS = 1_000
#: trainings per chunk: one (a training is expensive; each is its own task on a pool, seeded by its index)
TRAINING_CHUNK = 1


# ------------------------------------------------------------------------------------------------ one run
class _OneTraining:
    """Chunk function of one training run (picklable when ``run`` is): ``run(mask, rng)`` -> scores (1, m)."""

    def __init__(self, run, mask):
        self.run, self.mask = run, np.asarray(mask, dtype=bool)

    def __call__(self, size, seed):
        rng = np.random.default_rng(seed)
        s = np.asarray(self.run(self.mask.copy(), rng), dtype=float).ravel()
        if s.size != self.mask.size:
            raise ValueError(f"run(inclusion_mask, rng) returned {s.size} scores for {self.mask.size} canaries "
                             "(one score per canary)")
        if np.any(np.isnan(s)):
            raise ValueError("run(inclusion_mask, rng) returned NaN scores (map a diverged training to a "
                             "finite score, or fix the training)")
        return s.reshape(1, -1)


class _UserRuns:
    """``run(coins, seed)`` of :func:`one_run_protocol` from a user's ``run(mask, rng)``: one training per row of
    ``coins`` (row i seeded by child i of ``seed``), as tasks of :func:`dpaudit.core.runner.run_jobs`."""

    def __init__(self, run, executor, retries, phase):
        self.run, self.executor, self.retries, self.phase, self.calls = run, executor, retries, phase, 0

    def __call__(self, coins, seed):
        coins = np.atleast_2d(coins)
        name = self.phase[min(self.calls, len(self.phase) - 1)]
        self.calls += 1
        jobs = [Job(_OneTraining(self.run, c), 1, s, f"{name} training {i}")
                for i, (c, s) in enumerate(zip(coins, seed.spawn(coins.shape[0])))]
        res = run_jobs(jobs, chunk_size=TRAINING_CHUNK, executor=self.executor, retries=self.retries,
                       label="training")
        return np.concatenate([concat_chunks(r, 1) for r in res], axis=0)


def _bound_at(test: str, *, m: int, r: int, v: int, delta: float, level: float) -> float:
    """The certified bound of the test the protocol used (chosen on the calibration run) at another delta."""
    if test == "both":
        half = 1.0 - (1.0 - level) / 2.0
        return max(one_run_epsilon_lower(m=m, r=r, v=v, delta=delta, confidence=half),
                   one_run_fdp_epsilon_lower(m=m, r=r, v=v, delta=delta, confidence=half))
    if test == "fdp":
        return one_run_fdp_epsilon_lower(m=m, r=r, v=v, delta=delta, confidence=level)
    return one_run_epsilon_lower(m=m, r=r, v=v, delta=delta, confidence=level)


def _pick(checks: list) -> int:
    """The check reported in the headline: the first violated one, else the first (every check holds at once)."""
    return next((i for i, c in enumerate(checks) if c["epsilon_lower"] > c["epsilon_claimed"]), 0)


@blas_limited
def audit_one_run(run, *, canaries: int = DEFAULT_CANARIES, claim=None, delta=None, confidence: float = 0.95,
                  seed=None, repeats: int = 1, calibration_canaries: int | None = None, guesses=None,
                  bound: str = "auto", execution: Execution | None = None, **deprecated) -> AuditResult:
    """One-run audit of your own training (Steinke, Nasr, Jagielski 2023): train once, certify epsilon.

    Parameters
    ----------
    run : callable(inclusion_mask, rng) -> scores
        Trains ONCE with canary j included exactly where ``inclusion_mask[j]`` (a bool array of length
        ``canaries``) is True, drawing all its randomness from ``rng`` (a ``numpy.random.Generator``; seed
        your framework from it, e.g. ``torch.manual_seed(int(rng.integers(2**63)))``), and returns one score per
        canary, larger meaning "more likely included" (e.g. how far the canary's coordinate moved). The
        score must depend on the mask only through the training.
    canaries : int
        m, the canaries of the audit training (>= 2; default 1000).
    claim, delta : see the module docstring (a number, ``(epsilon, delta)``, a claim object; several deltas).
    confidence : float
        The bound (every bound, with several deltas) holds with probability >= ``confidence``.
    seed : None, int or SeedSequence
        Children 0..3 of the protocol's seed: audit coins, audit training, calibration coins, calibration
        training; repeat i and training i are further children. ``None``: fresh entropy, recorded in
        ``details["seed"]``.
    repeats : int
        ``k > 1`` runs k independent audits (each with its own calibration and audit training); the headline
        bound is audit 0's (fixed in advance), ``details["repeats"]`` lists all k with their min / median / max.
    calibration_canaries : int, optional
        Canaries of the calibration training (default: ``canaries``).
    guesses : int or (k_in, k_out), optional
        Fixed guess counts (no calibration training: half the trainings).
    bound : {"auto", "snj", "fdp", "both"}
        The test (:func:`dpaudit.audit.protocol.one_run.one_run_protocol`); ``"auto"`` picks on the calibration run.
    execution : :class:`dpaudit.Execution`, optional
        Where the trainings run (``workers``, ``executor``, ``retries``; one training per task) and ``progress``
        (called after every finished training); the result does not depend on them. With ``repeats = k`` the k
        trainings of each phase run concurrently. The keywords ``workers``, ``executor``, ``retries`` and
        ``progress`` still work, with a ``DeprecationWarning``.

    Returns
    -------
    AuditResult
        ``trials`` = trainings per audit (2 with calibration); ``details``: ``one_run`` (m, r guesses, v
        correct, k_in, k_out, canaries included), ``ceiling`` (the largest bound possible, see the module
        docstring), ``one_run_bound`` (which test certified), the calibration, ``repeats``, ``deltas``
        (several deltas), ``claim``, ``seed``; ``advice`` when nothing was certified.
    """
    execution = resolve_execution(execution, deprecated, where="audit_one_run")
    if deprecated:
        raise TypeError(f"audit_one_run() got unexpected keyword arguments {sorted(deprecated)}")
    if not callable(run):
        raise ValueError("run must be callable as run(inclusion_mask, rng) -> one score per canary")
    m = check_count("canaries", canaries, minimum=2)
    m_cal = m if calibration_canaries is None else check_count("calibration_canaries", calibration_canaries, minimum=2)
    repeats = check_count("repeats", repeats, minimum=1)
    confidence = check_confidence("confidence", confidence)
    if bound not in BOUNDS:
        raise ValueError(f"bound must be one of {BOUNDS}, got {bound!r}")
    max_guesses(m, guesses)  # validates guesses before any training (one_run_protocol checks k_in + k_out <= m)
    cl = resolve_claim(claim, delta)
    relation = relation_record("add_remove", cl["neighbouring"])
    level = 1.0 - (1.0 - confidence) / len(cl["deltas"])
    seed = pin_seed(seed)
    trainings = repeats * (1 if guesses is not None else 2)
    phases = ("audit",) if guesses is not None else ("calibration", "audit")
    with progress_reporting(execution.progress, total=trainings), \
            open_executor(execution.executor, execution.workers) as ex:
        check_picklable(ex, run, "run")
        res = one_run_protocol(_UserRuns(run, ex, execution.retries, phases), m=m, m_calibration=m_cal,
                               seed=as_seed_sequence(seed), delta=cl["deltas"][0], confidence=level, audits=repeats,
                               guesses=guesses, bound=bound)
    checks, per_delta = _one_run_checks(res, cl, m=m, level=level, repeats=repeats)
    j = _pick(checks)
    eps_lower, eps_claimed, d = checks[j]["epsilon_lower"], checks[j]["epsilon_claimed"], checks[j]["delta"]
    ceil = ceiling_record(res, epsilon_lower=eps_lower, epsilon_claimed=eps_claimed, delta=d, guesses=guesses,
                          requested=bound)
    details = _one_run_details(res, cl, checks, per_delta[:, j], m=m, m_cal=m_cal, ceil=ceil, trainings=trainings,
                               seed=seed, relation=relation, level=level)
    warn_relation(relation)
    logger.info("audit_one_run: epsilon >= %.6g certified with %d canaries (ceiling %.6g; claim %.6g at delta %.3g)",
                eps_lower, m, ceil["epsilon"], eps_claimed, d)
    return AuditResult(epsilon_lower=eps_lower, epsilon_claimed=float(eps_claimed), delta=float(d),
                       confidence=float(confidence), violation=any(c["epsilon_lower"] > c["epsilon_claimed"]
                                                                   for c in checks),
                       method=one_run_method(res), trials=1 if guesses is not None else 2, details=details)


def _one_run_checks(res: dict, cl: dict, *, m: int, level: float, repeats: int):
    """The bound at every delta of the claim, from the same counts, with the test chosen on the calibration run:
    ``(checks, per_delta)`` (per_delta: repeats x deltas)."""
    r, v = res["r"].astype(int), res["v"].astype(int)
    used = [str(u) for u in res["bound"]]
    per_delta = np.array([[float(res["epsilon_lower"][a]) if j == 0 else
                           _bound_at(used[a], m=m, r=int(r[a]), v=int(v[a]), delta=d, level=level)
                           for j, d in enumerate(cl["deltas"])] for a in range(repeats)])
    checks = [{"delta": d, "epsilon_claimed": e, "epsilon_lower": float(per_delta[0, j]), "level": level}
              for j, (d, e) in enumerate(zip(cl["deltas"], cl["epsilons"]))]
    return checks, per_delta


def _one_run_details(res: dict, cl: dict, checks: list, col, *, m, m_cal, ceil, trainings, seed, relation,
                     level) -> dict:
    """``details`` of a one-run training audit (the headline check's column ``col`` over the repeats)."""
    r, v = res["r"].astype(int), res["v"].astype(int)
    j = _pick(checks)
    details = {
        "one_run": {"epsilon_lower": checks[j]["epsilon_lower"], "m": m, "r": int(r[0]), "v": int(v[0]),
                    "k_in": int(res["k_in"][0]), "k_out": int(res["k_out"][0]), "included": int(res["included"][0])},
        "ceiling": ceil,
        "one_run_bound": bound_record(res),
        "guesses_chosen_by": "calibration training (independent coins)" if res["calibrated"] else "fixed (guesses)",
        "canary": "the user's training: run(inclusion_mask, rng), fair coins drawn by dpaudit",
        "statistic": "the user's score per canary; 'in' for the k_in highest, 'out' for the k_out lowest",
        "claim": cl["record"], "trainings": trainings, "seed": seed_record(seed),
        "neighbouring": relation["pair"], "relation": relation,
    }
    if res["calibration"] is not None:
        cal = res["calibration"]
        details.update({"calibration_canaries": m_cal,
                        "guess_fraction": [float(cal["fraction_in"][0]), float(cal["fraction_out"][0])],
                        "calibration_epsilon": float(cal["calibration_epsilon"][0])})
    if len(checks) > 1:
        details["deltas"] = checks
    if col.size > 1:
        details["repeats"] = {
            "count": int(col.size), "epsilon_lower": col.tolist(), "min": float(col.min()),
            "median": float(np.median(col)), "max": float(col.max()),
            "r": r.tolist(), "v": v.tolist(), "test": [str(u) for u in res["bound"]],
            "note": "independent audits, each certified on its own at the confidence; the headline is audit 0 "
                    "(fixed in advance) and the min is certified too; the median and max are descriptive (the "
                    "largest of k bounds is not a bound at the same confidence)"}
    if not checks[j]["epsilon_lower"] > 0.0:
        details["advice"] = one_run_advice(m=m, r=int(r[0]), v=int(v[0]), epsilon=checks[j]["epsilon_claimed"],
                                           delta=checks[j]["delta"], confidence=level)
    return details


# ------------------------------------------------------------------------------------------------ many runs
class _ManyTrainings:
    """Chunk function: ``size`` trainings ``train_fn(include, rng)``, each seeded by its own child of ``seed``."""

    def __init__(self, train_fn, include):
        self.train_fn, self.include = train_fn, bool(include)

    def __call__(self, size, seed):
        out = np.empty(size)
        for i, child in enumerate(seed.spawn(size)):
            s = np.asarray(self.train_fn(self.include, np.random.default_rng(child)), dtype=float)
            if s.size != 1:
                raise ValueError(f"train_fn(include_canary, rng) must return one score, got {s.size} values")
            out[i] = float(s.ravel()[0])
        return as_scores(out, "train_fn(include_canary, rng)")


def _audit_many_runs(train_fn, *, trials, cl, confidence, seed, threshold, selection_fraction,
                     execution: Execution) -> AuditResult:
    n_sel, n_eval = split_trials(trials, selection_fraction)
    # the selection scores are kept (8 bytes a training), the evaluation trainings only counted
    check_memory(audit_memory(kept_runs=2 * n_sel, bytes_per_kept=8, chunk_size=min(execution.chunk(TRAINING_CHUNK), trials),
                              bytes_per_run=8, slots=execution.workers or 1), trials=trials)
    record = seed_record(seed)
    s_sel0, s_sel1, s_ev0, s_ev1 = as_seed_sequence(seed).spawn(4)
    f0, f1 = _ManyTrainings(train_fn, False), _ManyTrainings(train_fn, True)
    deltas, beta = cl["deltas"], 1.0 - confidence
    level = 1.0 - beta / len(deltas)
    with progress_reporting(execution.progress, total=2 * trials), \
            open_executor(execution.executor, execution.workers) as ex:
        check_picklable(ex, train_fn, "train_fn")
        run = partial(run_jobs, chunk_size=execution.chunk(TRAINING_CHUNK), executor=ex, retries=execution.retries,
                      label="training")
        # selection trainings keep their scores; evaluation trainings return only counts at the thresholds fixed
        # on them, for every delta at once (the same trainings serve all)
        results = audit_scored_runs(f0, f1, (s_sel0, s_sel1, s_ev0, s_ev1), run=run, n_sel=n_sel, n_eval=n_eval,
                                    checks=[(e, d, level) for d, e in zip(deltas, cl["epsilons"])], rule=threshold,
                                    trials=trials, names=("trainings without the canary", "trainings with the canary"))
    checks = [{"delta": d, "epsilon_claimed": e, "epsilon_lower": r.epsilon_lower, "level": level}
              for d, e, r in zip(deltas, cl["epsilons"], results)]
    j = _pick(checks)
    extra = {"canary": "the user's training: train_fn(include_canary, rng), with and without the canary",
             "statistic": "the user's score per training", "claim": cl["record"], "trainings": 2 * trials,
             "seed": record}
    if len(deltas) > 1:
        extra["deltas"] = checks
    out = results[j].with_details(**extra)
    return replace(out, confidence=float(confidence), violation=any(r.violation for r in results))


@blas_limited
def audit_training(train_fn, *, canaries: int | None = None, claim=None, delta=None, mode: str = "one_run",
                   trials: int | None = None, confidence: float = 0.95, seed=None, repeats: int = 1, guesses=None,
                   calibration_canaries: int | None = None, bound: str = "auto", threshold="heldout",
                   selection_fraction: float = 0.3, execution: Execution | None = None, **deprecated) -> AuditResult:
    """Audit your own training loop (any framework) against its claim; returns an :class:`AuditResult`.

    ``mode="one_run"`` (default): ``train_fn(inclusion_mask, rng) -> scores`` trains once with the canaries
    of ``inclusion_mask`` (bool array of length ``canaries``, default 1000) and returns one score per canary;
    this is :func:`audit_one_run` (``repeats``, ``guesses``, ``calibration_canaries`` and ``bound`` are its
    options): two trainings per audit.

    ``mode="many_runs"``: ``train_fn(include_canary, rng) -> score`` trains once with (``True``) or without
    (``False``) the canary and returns one score (larger need not mean "included": the side is chosen on the
    selection runs). dpaudit runs ``trials`` (default 1000) trainings of each kind, chooses the threshold on
    ``selection_fraction`` of them (``threshold``, a rule of :mod:`dpaudit.audit.stats.rules`;
    :func:`dpaudit.audit.protocol.two_sample.audit_scored_runs`) and certifies on the others: ``2 * trials`` trainings,
    the evaluation trainings only counted (an audit whose selection scores would not fit in the available memory is
    refused with a ``ValueError`` naming ``trials`` before any training).

    Both: ``claim``/``delta`` as in the module docstring (a number, ``(epsilon, delta)``, a claim object,
    several deltas); ``rng`` is a ``numpy.random.Generator`` from which the training must draw ALL its
    randomness (seed your framework from it) so that the result depends only on ``seed``; ``execution``
    (:class:`dpaudit.Execution`: ``workers`` -- this process and a pool; ``train_fn`` is sent with cloudpickle --,
    ``executor``, ``retries`` and ``progress``, called after every training). The keywords ``workers``,
    ``executor``, ``retries``, ``progress`` and ``selection`` still work, with a ``DeprecationWarning``.
    The verdict is ``"violation"`` when a certified bound exceeds the claim.
    """
    execution = resolve_execution(execution, deprecated, where="audit_training")
    if "selection" in deprecated:
        threshold = deprecated.pop("selection")
        warn_deprecated_spelling("selection=", f"threshold={threshold!r}", "audit_training()")
    if deprecated:
        raise TypeError(f"audit_training() got unexpected keyword arguments {sorted(deprecated)}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if not callable(train_fn):
        raise ValueError("train_fn must be callable: train_fn(inclusion_mask, rng) -> scores (one_run) or "
                         "train_fn(include_canary, rng) -> score (many_runs)")
    if mode == "one_run":
        if trials is not None:
            raise ValueError("trials applies to mode='many_runs' (one_run trains twice: calibration and audit; "
                             "use repeats=k for k independent audits)")
        return audit_one_run(train_fn, canaries=DEFAULT_CANARIES if canaries is None else canaries, claim=claim,
                             delta=delta, confidence=confidence, seed=seed, repeats=repeats,
                             calibration_canaries=calibration_canaries, guesses=guesses, bound=bound,
                             execution=execution)
    if canaries not in (None, 1):
        raise ValueError(f"canaries applies to mode='one_run' (many_runs audits one canary), got {canaries!r}")
    unused = [k for k, val, default in (("repeats", repeats, 1), ("guesses", guesses, None),
                                         ("calibration_canaries", calibration_canaries, None), ("bound", bound, "auto"))
              if val != default]
    if unused:
        raise ValueError(f"options {unused} apply to mode='one_run' only")
    trials = check_count("trials", DEFAULT_TRIALS if trials is None else trials, minimum=2)
    confidence = check_confidence("confidence", confidence)
    selection_fraction = check_real("selection_fraction", selection_fraction)
    if not 0.0 < selection_fraction < 1.0:
        raise ValueError(f"selection_fraction must be in (0, 1), got {selection_fraction}")
    cl = resolve_claim(claim, delta)
    relation = relation_record("add_remove", cl["neighbouring"])
    out = _audit_many_runs(train_fn, trials=trials, cl=cl, confidence=confidence, seed=pin_seed(seed),
                           threshold=threshold_rule(threshold), selection_fraction=selection_fraction,
                           execution=execution)
    warn_relation(relation)
    logger.info("audit_training (many runs): epsilon >= %.6g certified from %d trainings (claim %.6g at delta %.3g)",
                out.epsilon_lower, 2 * trials, out.epsilon_claimed, out.delta)
    return out.with_details(neighbouring=relation["pair"], relation=relation)
