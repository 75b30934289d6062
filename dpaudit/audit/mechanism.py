"""``audit_mechanism``: an epsilon lower bound for any black-box mechanism.

Method (auditing.md sec. 2-4):

1. Draw ``trials`` outputs on each neighbouring input, split into a *selection* part
   (``selection_fraction``) and an *evaluation* part, from independent random streams.
2. Score outputs with ``statistic`` (default: the output itself for scalars, the projection on
   the selection-sample mean difference for vectors; :func:`dpaudit.audit.attacks.default_statistic`).
3. ``method="threshold"`` (default, a certified lower bound): choose a threshold and
   orientation on the selection scores, then bound FPR and FNR on the evaluation scores with
   one-sided Clopper-Pearson bounds at (1 - confidence)/2 each and report
   epsilon_LB = max{0, log((1-delta-FNR+)/FPR+), log((1-delta-FPR+)/FNR+)} (Kairouz et al. 2015).
   With ``selection="bonferroni"`` the threshold grid is fixed before the evaluation samples
   (``grid=`` or quantiles of the selection sample) and every test is charged (1-confidence)/G.
4. The GDP estimate (Dong-Roth-Su 2019; Nasr et al. 2023) is always computed as well and
   reported in ``details["gdp"]`` (and ``AuditResult.gdp_estimate``) labelled "estimate,
   assuming mu-GDP". It is never ``epsilon_lower`` and never sets ``violation``: with
   ``method="gdp"`` the result still carries the certified threshold bound (the method string
   says the estimate was requested). On a correct Laplace or randomized-response mechanism the
   estimate exceeds the true epsilon (its assumption fails), so it cannot decide a verdict.
5. ``method="one-run"``: Steinke-Nasr-Jagielski 2023 with ``trials`` canaries whose inclusion
   is a fair coin each (each canary's output is one mechanism run on x' if included, on x
   otherwise); the number of guesses is chosen on an independent calibration run.

Soundness: the threshold bound holds with probability >= confidence whatever the mechanism,
because the selection and evaluation samples are independent; ``violation`` is
``epsilon_lower > epsilon`` (the claim). ``details["advice"]`` holds advisory numbers for audits
that certify nothing (trials that would likely give a positive bound, the ceiling of a threshold
audit with these trials; :mod:`dpaudit.audit.verdict`); they never change ``epsilon_lower``.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.audit.attacks import default_statistic, flatten_outputs
from dpaudit.audit.bounds import check_audit_delta
from dpaudit.audit.gdp import GDP_ASSUMPTION, gdp_epsilon_of
from dpaudit.audit.one_run import one_run_audit
from dpaudit.audit.result import AuditResult
from dpaudit.audit.runner import (DEFAULT_CHUNK_SIZE, DEFAULT_RETRIES, Job, as_seed_sequence, check_picklable,
                                  concat_chunks, open_executor, pin_seed, run_jobs, seed_record)
from dpaudit.audit.thresholds import bonferroni_test, heldout_test, oriented_counts, ORIENTATIONS, as_scores
from dpaudit.audit.verdict import GDP_LABEL, one_run_advice, threshold_advice
from dpaudit.core.numeric import round_down
from dpaudit.core.validation import check_confidence, check_count, check_nonnegative, check_real

__all__ = ["audit_mechanism", "audit_scores", "roc_points", "METHODS", "GDP_METHOD"]

METHODS = ("threshold", "gdp", "one-run")
SELECTIONS = ("heldout", "bonferroni")
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
    from dpaudit.core.defaults import PureDPClaimWarning, no_pure_dp

    desc = no_pure_dp(sampler)
    if desc is not None:
        import warnings

        warnings.warn(f"delta = 0 audits a pure-DP claim, but {desc} has no pure-DP guarantee (its epsilon at "
                      "delta = 0 is infinite), so a long enough audit will report a violation; pass the delta of its "
                      "claim, e.g. delta=1e-5", PureDPClaimWarning, stacklevel=3)


def audit_scores(sel0, sel1, eval0, eval1, *, epsilon: float, delta: float, confidence: float,
                 method: str = "threshold", selection: str = "heldout", grid=None, trials: int | None = None,
                 details: dict | None = None) -> AuditResult:
    """Turn selection/evaluation scores into an :class:`AuditResult` (shared by every auditor).

    ``sel0, sel1`` may be empty only when ``selection="bonferroni"`` and a ``grid`` is given.
    """
    epsilon = check_nonnegative("epsilon", epsilon, allow_inf=True)
    delta = check_audit_delta(delta)
    confidence = check_confidence(confidence)
    if method not in ("threshold", "gdp"):
        raise ValueError(f"method must be 'threshold' or 'gdp' here, got {method!r}")
    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {SELECTIONS}, got {selection!r}")
    if method == "gdp" and delta == 0.0:
        raise ValueError("delta must be in (0, 1) for method='gdp' (a mu-GDP mechanism is never pure DP)")
    beta = 1.0 - confidence
    eval0 = as_scores(eval0, "eval0")
    eval1 = as_scores(eval1, "eval1")
    sel0 = np.asarray(sel0, dtype=float).ravel()
    sel1 = np.asarray(sel1, dtype=float).ravel()

    def run(kind):
        if selection == "heldout":
            return heldout_test(sel0, sel1, eval0, eval1, delta=delta, beta=beta, kind=kind)
        g = grid if grid is not None else _fixed_grid(as_scores(sel0, "sel0"), as_scores(sel1, "sel1"),
                                                      _DEFAULT_GRID_SIZE)
        return bonferroni_test(eval0, eval1, g, delta=delta, beta=beta, kind=kind)

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
    method_str = (f"threshold test, Clopper-Pearson + delta term, "
                  f"{'held-out threshold selection' if selection == 'heldout' else 'Bonferroni over a fixed grid'}")
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
        "advice": threshold_advice(sel0, sel1, eval0, eval1, epsilon=epsilon, delta=delta, beta=beta,
                                   trials=max(n_trials, int(eval0.size)), selection=selection,
                                   grid_size=thr.get("grid_size")),
    })
    return AuditResult(
        epsilon_lower=float(eps_lower), epsilon_claimed=float(epsilon), delta=float(delta),
        confidence=float(confidence), violation=bool(eps_lower > epsilon), method=method_str,
        trials=n_trials, details=out,
    )


class _DrawChunk:
    """Chunk function: ``size`` outputs of ``sampler`` on ``inp`` (a picklable object, for pools)."""

    def __init__(self, sampler, inp):
        self.sampler, self.inp = sampler, inp

    def __call__(self, size, seed_seq):
        rng = np.random.default_rng(seed_seq)
        return flatten_outputs(self.sampler(self.inp, rng, size), size)


class _ScoreChunk(_DrawChunk):
    """Chunk function: the scores ``statistic(outputs)`` of ``size`` outputs (only scores travel back)."""

    def __init__(self, sampler, inp, statistic):
        super().__init__(sampler, inp)
        self.statistic = statistic

    def __call__(self, size, seed_seq):
        return as_scores(self.statistic(super().__call__(size, seed_seq)), "statistic(outputs)")


def _run_pair(fn0, fn1, n, seed0, seed1, names, chunk_size, executor, retries):
    """The chunks of two jobs of ``n`` trials, run concurrently; merged exactly (concatenation)."""
    r0, r1 = run_jobs([Job(fn0, n, seed0, names[0]), Job(fn1, n, seed1, names[1])], chunk_size=chunk_size,
                      executor=executor, retries=retries)
    return concat_chunks(r0, n), concat_chunks(r1, n)


def _split(trials: int, fraction: float) -> tuple[int, int]:
    n_sel = int(round(fraction * trials))
    n_sel = min(max(n_sel, 1), trials - 1)
    return n_sel, trials - n_sel


def audit_mechanism(sampler, x, x_prime, *, epsilon: float, delta: float = 0.0, trials: int = 10_000,
                    confidence: float = 0.95, statistic=None, seed=None, method: str = "threshold",
                    selection: str = "heldout", selection_fraction: float = 0.3, grid=None,
                    chunk_size: int = DEFAULT_CHUNK_SIZE, executor=None, workers=None,
                    retries: int = DEFAULT_RETRIES) -> AuditResult:
    """Audit a black-box mechanism against its claim (epsilon, delta).

    Parameters
    ----------
    sampler : callable(x, rng, size) -> array
        ``size`` independent outputs of the mechanism on input ``x`` (first axis = runs).
    x, x_prime : neighbouring inputs (passed to ``sampler`` unchanged).
    epsilon, delta : the claim (``delta = 0`` for pure DP; ``epsilon = inf`` for no claim).
    trials : int
        Runs per neighbouring input (selection + evaluation; canaries for ``"one-run"``).
    confidence : float
        1 - beta: P[violation] <= beta for a mechanism that satisfies the claim.
    statistic : callable(outputs) -> scores, optional
        Fixed score function; default built from the selection sample.
    seed : None, int or SeedSequence
    method : {"threshold", "gdp", "one-run"}
        See the module docstring. ``epsilon_lower`` is always certified; "gdp" gives the same
        certified threshold bound and asks for the GDP estimate (``result.gdp_estimate``, an
        estimate assuming mu-GDP, computed for "threshold" too).
    selection : {"heldout", "bonferroni"}
        Threshold-selection rule for "threshold" and "gdp".
    selection_fraction : float in (0, 1)
        Share of the trials used for selection (and, for vectors, for the default statistic).
    grid : array, optional
        Fixed thresholds for ``selection="bonferroni"``; then all trials are evaluation trials.
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
        Resubmissions of a failed chunk (see :func:`dpaudit.audit.runner.run_jobs`).
    """
    if not callable(sampler):
        raise ValueError("sampler must be callable as sampler(x, rng, size)")
    epsilon = check_nonnegative("epsilon", epsilon, allow_inf=True)
    delta = check_audit_delta(delta)
    trials = check_count(trials, "trials", minimum=2)
    confidence = check_confidence(confidence)
    selection_fraction = check_real("selection_fraction", selection_fraction)
    if not 0.0 < selection_fraction < 1.0:
        raise ValueError(f"selection_fraction must be in (0, 1), got {selection_fraction}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if statistic is not None and not callable(statistic):
        raise ValueError("statistic must be callable as statistic(outputs) -> scores")
    if delta == 0.0:
        _warn_pure_dp_claim(sampler)
    seed = pin_seed(seed)  # None: fresh entropy, recorded in details["seed"] so the run can be reproduced
    root = as_seed_sequence(seed)
    s_sel0, s_sel1, s_ev0, s_ev1 = root.spawn(4)
    with open_executor(executor, workers) as ex:
        check_picklable(ex, sampler, "sampler")  # fail before any chunk runs, not between phases
        if statistic is not None:
            check_picklable(ex, statistic, "statistic")
        if method == "one-run":
            result = _audit_one_run(sampler, x, x_prime, epsilon=epsilon, delta=delta, trials=trials,
                                    confidence=confidence, statistic=statistic, root=(s_sel0, s_ev0),
                                    selection_fraction=selection_fraction, chunk_size=chunk_size, executor=ex,
                                    retries=retries)
        else:
            result = _audit_two_sample(sampler, x, x_prime, epsilon=epsilon, delta=delta, trials=trials,
                                       confidence=confidence, statistic=statistic,
                                       seeds=(s_sel0, s_sel1, s_ev0, s_ev1), method=method, selection=selection,
                                       selection_fraction=selection_fraction, grid=grid, chunk_size=chunk_size,
                                       executor=ex, retries=retries)
    return result.with_details(seed=seed_record(seed))


def _audit_two_sample(sampler, x, x_prime, *, epsilon, delta, trials, confidence, statistic, seeds, method,
                      selection, selection_fraction, grid, chunk_size, executor, retries) -> AuditResult:
    s_sel0, s_sel1, s_ev0, s_ev1 = seeds

    use_grid = selection == "bonferroni" and grid is not None
    if use_grid and statistic is None:
        raise ValueError("a fixed grid needs a fixed statistic (statistic=...)")
    n_sel, n_eval = (0, trials) if use_grid else _split(trials, selection_fraction)
    stat_desc = getattr(statistic, "description", "user statistic") if statistic is not None else None
    sel0 = sel1 = np.empty(0)
    if n_sel:
        out0, out1 = _run_pair(_DrawChunk(sampler, x), _DrawChunk(sampler, x_prime), n_sel, s_sel0, s_sel1,
                               ("selection outputs on x", "selection outputs on x'"), chunk_size, executor, retries)
        if statistic is None:
            statistic = default_statistic(out0, out1)
            stat_desc = statistic.description
        sel0 = as_scores(statistic(out0), "statistic(outputs)")
        sel1 = as_scores(statistic(out1), "statistic(outputs)")
    ev0, ev1 = _run_pair(_ScoreChunk(sampler, x, statistic), _ScoreChunk(sampler, x_prime, statistic), n_eval,
                         s_ev0, s_ev1, ("evaluation scores on x", "evaluation scores on x'"), chunk_size, executor,
                         retries)
    return audit_scores(sel0, sel1, ev0, ev1, epsilon=epsilon, delta=delta, confidence=confidence,
                        method=method, selection=selection, grid=grid, trials=trials,
                        details={"statistic": stat_desc})


def _one_run_scores(sampler, x, x_prime, statistic, m, seed_seq, chunk_size, executor, retries):
    """Fair coins and scores of m canaries (one mechanism run per canary)."""
    coin_seed, out_seed = seed_seq.spawn(2)
    coins = np.random.default_rng(coin_seed).random(m) < 0.5
    k1 = int(coins.sum())
    s_in, s_out = out_seed.spawn(2)
    scores = np.empty(m)
    jobs, masks = [], []
    if k1:
        jobs.append(Job(_ScoreChunk(sampler, x_prime, statistic), k1, s_in, "canaries included (x')"))
        masks.append(coins)
    if m - k1:
        jobs.append(Job(_ScoreChunk(sampler, x, statistic), m - k1, s_out, "canaries excluded (x)"))
        masks.append(~coins)
    for mask, res in zip(masks, run_jobs(jobs, chunk_size=chunk_size, executor=executor, retries=retries)):
        scores[mask] = concat_chunks(res, int(mask.sum()))
    return coins, scores


def _audit_one_run(sampler, x, x_prime, *, epsilon, delta, trials, confidence, statistic, root,
                   selection_fraction, chunk_size, executor, retries) -> AuditResult:
    cal_seed, main_seed = root
    m_cal, m = _split(trials, selection_fraction)
    if statistic is None:
        # calibration outputs fix the statistic and the number of guesses; independent of the main run
        g = np.random.default_rng(cal_seed.spawn(1)[0])
        o0 = flatten_outputs(sampler(x, g, max(m_cal // 2, 1)), max(m_cal // 2, 1))
        o1 = flatten_outputs(sampler(x_prime, g, max(m_cal // 2, 1)), max(m_cal // 2, 1))
        statistic = default_statistic(o0, o1)
    coins_c, scores_c = _one_run_scores(sampler, x, x_prime, statistic, m_cal, cal_seed, chunk_size, executor,
                                        retries)
    fractions = np.array([0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5])
    best, best_f = -1.0, fractions[0]
    for f in fractions:  # a handful of candidate guess counts, scored on the calibration run
        k = max(1, int(f * m_cal / 2))
        if 2 * k > m_cal:
            continue
        e = one_run_audit(scores_c, coins_c, k_in=k, k_out=k, delta=delta, confidence=confidence)["epsilon_lower"]
        if e > best:
            best, best_f = e, f
    if best <= 0.0:
        # nothing certified on calibration: ties would pick the smallest k (often k = 1, which can
        # never certify); use a default fraction instead (still fixed before the main run's coins)
        best_f = 0.1
    coins, scores = _one_run_scores(sampler, x, x_prime, statistic, m, main_seed, chunk_size, executor, retries)
    k = max(1, min(int(best_f * m / 2), m // 2))
    res = one_run_audit(scores, coins, k_in=k, k_out=k, delta=delta, confidence=confidence)
    eps_lower = res["epsilon_lower"]
    details = {"one_run": res, "calibration_canaries": int(m_cal), "guess_fraction": float(best_f),
               "statistic": getattr(statistic, "description", "user statistic")}
    if not eps_lower > 0.0:  # certified nothing: advisory numbers (never change the bound)
        details["advice"] = one_run_advice(m=res["m"], r=res["r"], v=res["v"], epsilon=epsilon, delta=delta,
                                           confidence=confidence)
    return AuditResult(
        epsilon_lower=float(eps_lower), epsilon_claimed=float(epsilon), delta=float(delta),
        confidence=float(confidence), violation=bool(eps_lower > epsilon),
        method="one-run (Steinke-Nasr-Jagielski 2023)", trials=int(trials), details=details,
    )
