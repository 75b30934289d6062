"""``audit_optimizer``: distinguishing attacks on every optimizer of ``dpaudit.optimizers``.

For each optimizer a worst-case-ish neighbouring pair and canary are built from what the optimizer
declares (:class:`~dpaudit.optimizers.base.Optimizer`: ``audit_scenario``, ``canary_semantics``,
``canary_norm()``, ``max_canaries``, ``audit_dim``); nothing here knows an optimizer by name:

* ``"gradient-canary"`` (optimizers hosting a canary, ``max_canaries >= 1``): the white-box Dirac gradient canary of
  Nasr et al. 2023 (arXiv:2302.07956), a constant per-example gradient of norm equal to the
  clip bound / gradient-sensitivity bound on coordinate 0. The data set's coordinate 0 is zero
  for every record, so no data gradient interacts with the canary. The pair follows the
  optimizer's canary semantics and neighbouring relation:
  ``"record"`` (an extra record with that gradient): add/remove -> (no canary, +g),
  replace-one -> (-g, +g); ``"offset"`` (noisy-gd: grad L_D' = grad L_D + g/n, ||g|| <= S_g)
  -> (no canary, +g); ``"replace"`` (bias-reduced-sgd: record 0's gradient replaced) -> (-g, +g).
* ``"mean-estimation"`` (``projection``, ``l1-recovery``): rows are zero except row 0, which is
  -L e_0 on D and +L e_0 on D' (replace-one, the largest allowed change);
* ``"input-canary"`` (the others, e.g. ``output-perturbation``): record 0 is (R e_0, label 0) on D and (R e_0, label 1) on D'.

The score is the final parameter's coordinate 0 (projection on the canary direction, fixed in
advance), and the epsilon lower bound comes from :func:`dpaudit.audit.protocol.two_sample.audit_scored_runs`
(held-out threshold, Clopper-Pearson, delta term; GDP estimate in the details): the selection runs' scores fix
every threshold, the evaluation runs return only their counts there (the same bound as on kept scores, in memory
that does not grow with ``trials``). The claim is
the optimizer's own ``run.claim`` at ``delta`` (default: the optimizer's ``delta``
hyper-parameter if it has one, else 1e-5).

``method="one-run"`` (Steinke, Nasr, Jagielski, NeurIPS 2023, arXiv:2305.08846, Theorem 3.1 with
the delta term of their Theorem 5.2; Steinke, Nasr, Jagielski 2023), for optimizers that host many canaries
(``max_canaries > 1``: dp-gd, dp-sgd) under add/remove neighbours:

* the model has ``dim + m`` coordinates: the ``dim`` data features of the usual data set followed
  by m zero columns; canary j is the Dirac gradient ``C e_{dim+j}`` (norm the clip bound). Distinct
  coordinates, rather than random directions, make the canaries exactly orthogonal to each other
  and to every data gradient (the data rows are zero there), so a canary's score carries only its
  own signal and the noise, and ``l2`` acts on each coordinate separately;
* the auditor draws the m fair inclusion coins from its own random stream, independent of the
  training noise; ONE training run hosts the included canaries (``canary_gradients`` /
  ``canary_mask`` of the optimizer);
* score of canary j: ``-theta_T[dim+j]`` (gradient descent moves against an included canary, a
  direction fixed in advance); guess "in" for the k_in highest scores and "out" for the k_out lowest;
* k_in and k_out are fixed (``guesses=k`` or ``(k_in, k_out)``) or chosen SEPARATELY on an
  independent calibration run (its own coins and noise) as the best pair of a fixed grid of
  fractions of m/2, 0 included on either side (10% of m/2 each if none certifies anything there) --
  never on the audit run's coins. The protocol is written once, in
  :func:`dpaudit.audit.stats.one_run.one_run_protocol`, and shared with ``audit_mechanism``;
* the v correct guesses out of r = k_in + k_out give epsilon_lower through
  :func:`dpaudit.audit.stats.one_run.one_run_epsilon_lower` at the audit's delta.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from dpaudit.audit.attacks.statistics import dirac_canary, projection_statistic
from dpaudit.audit.protocol.chunks import OptimizerRun, OptimizerScores  # light where chunks run
from dpaudit.audit.protocol.claims import DEFAULT_AUDIT_DELTA, claim_epsilon, claim_record
from dpaudit.audit.protocol.one_run import bound_record, ceiling_record, one_run_method, one_run_protocol
from dpaudit.audit.protocol.result import AuditResult
from dpaudit.audit.protocol.two_sample import audit_scored_runs, split_trials
from dpaudit.audit.stats.error_rates import check_audit_delta
from dpaudit.audit.stats.one_run import DEFAULT_GUESS_FRACTION, GUESS_FRACTIONS, correct_counts
from dpaudit.audit.stats.power import one_run_advice
from dpaudit.audit.stats.rules import threshold_rule
from dpaudit.core.deprecation import warn_deprecated_spelling
from dpaudit.core.execution import Execution, resolve_execution
from dpaudit.core.progress import reporting as progress_reporting
from dpaudit.core.runner import audit_memory, check_memory, open_executor, output_bytes, run_jobs
from dpaudit.core.seeds import as_seed_sequence, pin_seed, seed_record
from dpaudit.core.threads import blas_limited
from dpaudit.core.validation import check_confidence, check_count, check_delta, check_real
from dpaudit.optimizers import make_optimizer
from dpaudit.optimizers.base import Optimizer

__all__ = ["audit_optimizer", "optimizer_scenario", "one_run_optimizer_audits", "audit_delta", "optimizer_claim"]
DEFAULT_OPTIMIZER_CHUNK = 2_000
#: canaries of a one-run optimizer audit (``method="one-run"``, option ``canaries``)
DEFAULT_ONE_RUN_CANARIES = 1_000
#: candidate guess counts of the calibration run (shared with audit_mechanism; dpaudit.audit.stats.one_run)
ONE_RUN_GUESS_FRACTIONS = GUESS_FRACTIONS
#: guess fraction (of m/2 per side) when no candidate certifies anything on the calibration run
ONE_RUN_DEFAULT_FRACTION = DEFAULT_GUESS_FRACTION


def audit_delta(opt, delta=None) -> float:
    """The delta an audit of ``opt`` uses.

    ``None``: the optimizer's ``delta`` hyper-parameter when it has one, else
    ``DEFAULT_AUDIT_DELTA``. A given value must be in [0, 1); ``0`` asks for a *pure-DP* audit,
    which :func:`claim_epsilon` allows only when the claim has a pure-DP epsilon (never silently
    replaced by another delta).
    """
    if delta is None:
        own = opt.hp.get("delta") if hasattr(opt, "hp") else None
        return check_delta("delta", DEFAULT_AUDIT_DELTA if own in (None, 0, 0.0) else own)
    return check_audit_delta("delta", delta)


def optimizer_claim(opt, *, n: int = 20, dim: int | None = None, seed=0):
    """The claim an audit of ``opt`` checks (from a one-trial run of its audit scenario; claims do
    not depend on the random draws). Cheap: lets callers validate a request before any trial."""
    return optimizer_scenario(opt, n=n, dim=dim)["run0"](
        1, as_seed_sequence(seed)).claim


def _declared(opt, attribute: str):
    """What ``opt`` declares about its audit scenario (:class:`~dpaudit.optimizers.base.Optimizer`);
    an object that does not subclass ``Optimizer`` gets the base class's declaration."""
    if hasattr(opt, attribute):
        return getattr(opt, attribute)
    default = getattr(Optimizer, attribute)
    return default.__get__(opt, Optimizer) if isinstance(default, property) else default


def _canary_norm(opt) -> float:
    method = getattr(opt, "canary_norm", None)
    return float(method()) if callable(method) else Optimizer.canary_norm(opt)


def _base_data(n: int, dim: int, seed: int = 0):
    """Fixed records: unit-norm rows with coordinate 0 equal to zero, labels in {0, 1}."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, dim))
    X[:, 0] = 0.0
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    X = np.where(norms > 0, X / np.where(norms > 0, norms, 1.0), 0.0)
    y = (rng.random(n) < 0.5).astype(float)
    return X, y


def optimizer_scenario(opt, *, n: int = 20, dim: int | None = None) -> dict:
    """The neighbouring pair, canary and statistic used to audit ``opt`` (the scenario it
    declares: ``audit_scenario``, ``canary_semantics``, ``canary_norm()``; ``dim`` defaults to its
    ``audit_dim``).

    Returns a dict with ``run0(size, seed)``, ``run1(size, seed)`` (parameters of shape
    (size, dim) on D and D'), ``statistic`` and a ``description``.
    """
    n = check_count("n", n, minimum=2)
    dim = check_count("dim", _declared(opt, "audit_dim") if dim is None else dim, minimum=1)
    scenario = _declared(opt, "audit_scenario")
    e0 = np.zeros(dim)
    e0[0] = 1.0
    stat = projection_statistic(e0)
    stat.description = "final parameter along the canary coordinate e_0"
    if scenario == "mean-estimation":
        L = float(opt.hp.get("lipschitz", 1.0))
        Z0 = np.zeros((n, dim))
        Z0[0, 0] = -L
        Z1 = Z0.copy()
        Z1[0, 0] = L
        return {"run0": OptimizerRun(opt, Z0, None), "run1": OptimizerRun(opt, Z1, None),
                "statistic": stat, "description": f"mean estimation, row 0 = -{L:g} e_0 vs +{L:g} e_0 (replace-one)",
                "n": n}
    X, y = _base_data(n, dim)
    if scenario == "input-canary":
        R = float(opt.hp.get("feature_bound", 1.0))
        X0, y0 = X.copy(), y.copy()
        X0[0] = R * e0
        y0[0] = 0.0
        X1, y1 = X0.copy(), y0.copy()
        y1[0] = 1.0
        if opt.neighbouring == "add_remove":
            X0, y0 = X0[1:], y0[1:]
            desc = "input canary (R e_0, 1) absent vs present (add/remove)"
        else:
            desc = "input canary: record 0 = (R e_0, label 0) vs (R e_0, label 1) (replace-one)"
        return {"run0": OptimizerRun(opt, X0, y0), "run1": OptimizerRun(opt, X1, y1),
                "statistic": stat, "description": desc, "n": n}
    g = dirac_canary(dim, _canary_norm(opt))
    semantics = _declared(opt, "canary_semantics")
    if semantics == "offset" or (semantics == "record" and opt.neighbouring == "add_remove"):
        g0 = None
        desc = f"white-box Dirac gradient canary of norm {g[0]:g}: absent vs present"
    else:
        g0 = -g
        desc = f"white-box Dirac gradient canary of norm {g[0]:g}: -g vs +g"
    desc += f" ({opt.neighbouring}, canary semantics '{semantics}')"
    return {"run0": OptimizerRun(opt, X, y, g0), "run1": OptimizerRun(opt, X, y, g),
            "statistic": stat, "description": desc, "n": n}


def _one_run_scenario(opt, m: int, n: int, dim: int):
    """Data padded with m zero columns and the m Dirac canaries ``C e_{dim+j}`` (see the module docstring)."""
    if _declared(opt, "max_canaries") <= 1:
        raise ValueError(f"method='one-run' needs an optimizer that hosts many canaries in one run "
                         f"(dp-gd, dp-sgd); {opt.name!r} accepts at most a single canary_gradient")
    if opt.neighbouring != "add_remove":
        raise ValueError(f"method='one-run' audits add/remove of each canary; the claim of {opt.name!r} is "
                         f"{opt.neighbouring!r} (use neighbouring='add_remove')")
    X, y = _base_data(n, dim)
    Xp = np.concatenate([X, np.zeros((n, m))], axis=1)
    G = np.zeros((m, dim + m))
    G[np.arange(m), dim + np.arange(m)] = _canary_norm(opt)
    return Xp, y, G


def _one_run_scores(opt, X, y, G, coins, seed):
    """One training run per row of ``coins``: scores ``-theta_T`` along each canary coordinate, and the claim."""
    m = G.shape[0]
    run = opt.run(X, y, trials=coins.shape[0], seed=seed, canary_gradients=G, canary_mask=coins)
    return -run.params[:, X.shape[1] - m:], run.claim


def _correct_counts(scores, coins, ks):
    """v[a, i]: correct guesses of audit a with ks[i] "in" (top) and ks[i] "out" (bottom) guesses."""
    out_ok, in_ok = correct_counts(scores, coins)
    ks = np.asarray(ks, dtype=int)
    return out_ok[:, ks] + in_ok[:, ks]


class _OneRunTraining:
    """``run(coins, seed)`` of :func:`dpaudit.audit.stats.one_run.one_run_protocol`: one training run per
    row of ``coins``; scores ``-theta_T`` along the canary coordinates. Keeps the last run's claim."""

    def __init__(self, opt, X, y, G):
        self.opt, self.X, self.y, self.G, self.claim = opt, X, y, G, None

    def __call__(self, coins, seed):
        scores, self.claim = _one_run_scores(self.opt, self.X, self.y, self.G, coins, seed)
        return scores


def one_run_optimizer_audits(opt, *, canaries: int = DEFAULT_ONE_RUN_CANARIES, audits: int = 1, seed=None,
                             delta: float = 1e-5, confidence: float = 0.95, guesses=None, n: int = 20,
                             dim: int = 5) -> dict:
    """``audits`` independent one-run audits of ``opt`` (module docstring), batched as trials.

    Each audit a draws its own coins, trains once, and gets its own epsilon_lower from that run
    alone, with k_in and k_out chosen separately on its own calibration run (a run of the same size
    with independent coins, :func:`dpaudit.audit.stats.one_run.one_run_protocol`) unless ``guesses``
    fixes them (k, or a pair (k_in, k_out)). Returns arrays of length ``audits``:
    ``epsilon_lower``, ``r``, ``v`` (correct), ``k_in``, ``k_out``, ``k`` (= k_in, kept for
    callers of the symmetric version), ``included`` (canaries in the audit run), plus ``m``,
    ``claim`` and the scalar settings.
    """
    m = check_count("canaries", canaries, minimum=2)
    audits = check_count("audits", audits, minimum=1)
    confidence = check_confidence("confidence", confidence)
    delta = check_delta("delta", delta)
    n = check_count("n", n, minimum=2)
    dim = check_count("dim", dim, minimum=1)
    X, y, G = _one_run_scenario(opt, m, n, dim)
    if guesses is not None and not isinstance(guesses, (tuple, list)):
        k_fixed = check_count("guesses", guesses, minimum=1)
        if 2 * k_fixed > m:
            raise ValueError(f"guesses must be <= canaries // 2 = {m // 2} (k 'in' and k 'out'), got {k_fixed}")
    train = _OneRunTraining(opt, X, y, G)
    res = one_run_protocol(train, m=m, m_calibration=m, seed=seed, delta=delta, confidence=confidence,
                           audits=audits, guesses=guesses)
    res.update({"k": res["k_in"], "claim": train.claim, "n": n, "dim": dim})
    return res


def _audit_one_run(opt, *, delta, confidence, seed, canaries, guesses, n, dim) -> AuditResult:
    res = one_run_optimizer_audits(opt, canaries=canaries, audits=1, seed=seed, delta=delta, confidence=confidence,
                                   guesses=guesses, n=n, dim=dim)
    claim = res["claim"]
    eps_claimed = float(claim.epsilon(delta))
    eps_lower = float(res["epsilon_lower"][0])
    m, r, v = res["m"], int(res["r"][0]), int(res["v"][0])
    advice = {}
    if not eps_lower > 0.0:  # certified nothing: advisory numbers (never change the bound)
        advice["advice"] = one_run_advice(m=m, r=r, v=v, epsilon=eps_claimed, delta=delta, confidence=confidence)
    return AuditResult(
        epsilon_lower=eps_lower, epsilon_claimed=eps_claimed, delta=float(delta), confidence=float(confidence),
        violation=bool(eps_lower > eps_claimed), method=one_run_method(res), trials=1,
        details={"optimizer": opt.name, "hyperparameters": getattr(opt, "hp", {}),
                 "m": m, "r": r, "correct": v, "k_in": int(res["k_in"][0]), "k_out": int(res["k_out"][0]),
                 "canaries_included": int(res["included"][0]),
                 "guesses_chosen_by": "calibration run" if res["calibrated"] else "fixed (guesses option)",
                 "one_run_bound": bound_record(res),
                 "ceiling": ceiling_record(res, epsilon_lower=eps_lower, epsilon_claimed=eps_claimed, guesses=guesses),
                 "canary": f"{m} white-box Dirac gradient canaries of norm {_canary_norm(opt):g} on coordinates "
                           f"{res['dim']}..{res['dim'] + m - 1} (data columns zero there), fair coins",
                 "statistic": "-theta_T along each canary coordinate; 'in' for the top k, 'out' for the bottom k",
                 "claim": claim.to_dict(delta), "n": res["n"], "dim": res["dim"] + m, **advice},
    )


def _build(name_or_optimizer, hyperparameters: dict):
    """The optimizer to audit: built from a name and ``hyperparameters``, or given."""
    if isinstance(name_or_optimizer, str):
        return make_optimizer(name_or_optimizer, **hyperparameters)
    if hyperparameters:
        raise ValueError(f"unknown audit options {sorted(hyperparameters)} (hyper-parameters only with a name)")
    if not hasattr(name_or_optimizer, "run") or not hasattr(name_or_optimizer, "name"):
        raise ValueError("name_or_optimizer must be an optimizer name or an optimizer object")
    return name_or_optimizer


def _threshold_option(threshold, options: dict):
    """``threshold=`` with the deprecated ``selection=`` folded in (a DeprecationWarning names the new spelling)."""
    if "selection" in options:
        selection = options.pop("selection")
        if threshold != "heldout":
            raise ValueError("give threshold= or the deprecated selection=, not both")
        warn_deprecated_spelling("selection=", f"threshold={selection!r} (or a rule object such as "
                                 "dpaudit.audit.Bonferroni())", "audit_optimizer()")
        threshold = selection
    return threshold_rule(threshold)


@blas_limited
def audit_optimizer(name_or_optimizer, *, trials: int = 10_000, confidence: float = 0.95, seed=None,
                    delta: float | None = None, method: str = "threshold", threshold="heldout",
                    selection_fraction: float = 0.3, n: int = 20, dim: int | None = None, canaries: int | None = None,
                    guesses=None, execution: Execution | None = None, **hyperparameters):
    """Audit an optimizer (a name from ``dpaudit.optimizers.names`` or a built optimizer).

    ``trials`` runs per neighbouring dataset. Audit settings: ``delta`` (the AUDIT's delta, at which the claim is
    evaluated; default the optimizer's ``delta`` hyper-parameter if it has one, else 1e-5; ``delta=0`` is a pure-DP
    audit, refused with a ``ValueError`` before any trial when the claim has no pure-DP epsilon), ``method``
    ("threshold", "gdp" or "one-run"), ``threshold`` (the rule: "heldout" by default, or a rule of
    :mod:`dpaudit.audit.stats.rules`), ``selection_fraction`` (default 0.3), ``n`` (records, default 20), ``dim``
    (default the optimizer's ``audit_dim``), ``execution`` (:class:`dpaudit.Execution`: workers, executor,
    chunk_size -- default 2000, part of the random-stream layout --, retries, progress). The other keywords are
    hyper-parameters passed to ``make_optimizer`` when a name is given. The result depends only on ``seed``,
    ``trials`` and the chunk size, never on where the chunks ran. The evaluation runs are only counted, so memory
    holds the selection scores and a chunk per worker; an audit that would not fit in the available memory is
    refused with a ``ValueError`` naming ``trials`` before any trial (:func:`optimizer_memory`).

    ``method="one-run"`` (dp-gd and dp-sgd, add/remove; module docstring) instead trains ONCE with ``canaries``
    (default 1000) Dirac canaries on their own coordinates, included by fair coins, plus one independent
    calibration run that picks the number of guesses unless ``guesses=k`` fixes it (k "in" and k "out");
    ``trials`` is then not used (the result's ``trials`` is 1) and ``n``/``dim`` keep their meaning for the data part
    of the model. The claim is that of a one-trial run on D (claims do not depend on the random draws).
    ``method="gdp"`` returns the certified threshold bound in ``epsilon_lower`` like ``"threshold"``; the GDP number
    is ``result.gdp_estimate``, an estimate assuming mu-GDP that never sets ``violation``. To change an optimizer's
    own ``delta`` hyper-parameter (e.g. the budget of ``dp-agd`` or the calibration of ``l1-recovery``), pass a
    built optimizer, ``audit_optimizer(make_optimizer(name, delta=...), n=..., dim=...)``, whose ``delta`` is then
    also the audit's default. ``execution.progress`` (optional) is called as ``progress(done, total)`` after every
    finished chunk of trials (with ``method="one-run"`` one call ``(1, 1)`` when the audit is done). The keywords
    ``workers``, ``executor``, ``chunk_size``, ``retries``, ``progress`` and ``selection`` still work, with a
    ``DeprecationWarning`` naming the new spelling.
    """
    execution = resolve_execution(execution, hyperparameters, where="audit_optimizer")
    threshold = _threshold_option(threshold, hyperparameters)
    trials = check_count("trials", trials, minimum=2)
    confidence = check_confidence("confidence", confidence)
    if method not in ("threshold", "gdp", "one-run"):
        raise ValueError(f"method must be one of ('threshold', 'gdp', 'one-run'), got {method!r}")
    seed = pin_seed(seed)  # None: fresh entropy, recorded in details["seed"] so the run can be reproduced
    opt = _build(name_or_optimizer, hyperparameters)
    delta = audit_delta(opt, delta)
    if delta == 0.0:  # pure DP: refused (before any trial) unless the claim has a pure-DP epsilon
        claim_epsilon(optimizer_claim(opt, n=n, dim=dim), 0.0, repr(opt.name))
    frac = check_real("selection_fraction", selection_fraction)
    if not 0.0 < frac < 1.0:
        raise ValueError(f"selection_fraction must be in (0, 1), got {frac}")
    if method == "one-run":
        changed = [k for k, v in (("threshold", threshold.name != "heldout"), ("selection_fraction", frac != 0.3),
                                  ("execution", execution.workers is not None or execution.executor is not None
                                   or execution.chunk_size is not None)) if v]
        if changed:
            raise ValueError(f"options {changed} do not apply to method='one-run' (one training run per audit)")
        with progress_reporting(execution.progress, total=1) as listener:
            result = _audit_one_run(opt, delta=delta, confidence=confidence, seed=seed,
                                    canaries=DEFAULT_ONE_RUN_CANARIES if canaries is None else canaries,
                                    guesses=guesses, n=n, dim=5 if dim is None else dim)
            if listener is not None:  # no chunks: one unit, the audit (its calibration and training runs), when done
                listener.add(1)
        return result.with_details(seed=seed_record(seed))
    if canaries is not None or guesses is not None:
        raise ValueError("options 'canaries' and 'guesses' apply only to method='one-run'")
    with progress_reporting(execution.progress, total=2 * trials):
        return _audit_threshold(opt, trials=trials, confidence=confidence, seed=seed, delta=delta, method=method,
                                threshold=threshold, frac=frac, n=n, dim=dim, execution=execution)


def optimizer_memory(opt, trials: int, *, selection_fraction: float = 0.3, chunk_size: int | None = None,
                     workers: int | None = None, n: int = 20, dim: int | None = None, run=None) -> int:
    """Peak bytes of a many-runs audit of ``opt`` (:func:`dpaudit.core.runner.audit_memory`): the selection scores
    (8 bytes per run) are kept, the evaluation runs only counted; one chunk per worker holds, per run, the final
    parameters of a probe ``run`` (a one-trial run of the scenario; made here when not given) and its per-record
    gradients (``n`` x dim floats). The CLI estimates with it too."""
    if run is None:
        run = optimizer_scenario(opt, n=n, dim=dim)["run0"](1, as_seed_sequence(0))
    per_run = output_bytes(run.params, 1) * (1 + n)
    n_sel = split_trials(trials, selection_fraction)[0]
    return audit_memory(kept_runs=2 * n_sel, bytes_per_kept=8, chunk_size=min(chunk_size or DEFAULT_OPTIMIZER_CHUNK, trials),
                        bytes_per_run=per_run, slots=workers or 1)


def _audit_threshold(opt, *, trials, confidence, seed, delta, method, threshold, frac, n, dim, execution):
    """The many-runs threshold audit of ``opt``'s declared scenario (module docstring)."""
    sc = optimizer_scenario(opt, n=n, dim=dim)
    stat = sc["statistic"]
    n_sel, n_eval = split_trials(trials, frac)
    root = as_seed_sequence(seed)
    s_sel0, s_sel1, s_ev0, s_ev1 = root.spawn(4)
    s_claim = root.spawn(1)[0]  # child 4: the four streams above are unchanged by it
    # the claim comes from a one-trial run here (claims may hold closures, which do not pickle)
    probe = sc["run0"](1, s_claim)
    claim = probe.claim
    eps_claimed = claim_epsilon(claim, delta, repr(opt.name))  # before any trial runs
    check_memory(optimizer_memory(opt, trials, selection_fraction=frac, chunk_size=execution.chunk_size,
                                  workers=execution.workers, n=sc["n"], run=probe), trials=trials)
    f0, f1 = OptimizerScores(sc["run0"], stat), OptimizerScores(sc["run1"], stat)
    details = {"optimizer": opt.name, "hyperparameters": getattr(opt, "hp", {}), "canary": sc["description"],
               "statistic": stat.description, "claim": claim_record(claim, delta, eps_claimed), "n": sc["n"],
               "seed": seed_record(seed)}
    # selection runs first (their scores fix every threshold), then evaluation runs that return only their counts
    # there: the shared pool stays warm between the two phases, and the client holds O(selection + thresholds)
    with open_executor(execution.executor, execution.workers) as ex:
        run = partial(run_jobs, chunk_size=execution.chunk(DEFAULT_OPTIMIZER_CHUNK), executor=ex,
                      retries=execution.retries)
        result, = audit_scored_runs(f0, f1, (s_sel0, s_sel1, s_ev0, s_ev1), run=run, n_sel=n_sel, n_eval=n_eval,
                                    checks=[(eps_claimed, delta, confidence)], rule=threshold, trials=trials,
                                    method=method, details=details)
    return result
