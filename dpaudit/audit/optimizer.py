"""``audit_optimizer``: distinguishing attacks on every optimizer of ``dpaudit.optimizers``.

For each optimizer a worst-case-ish neighbouring pair and canary are built (auditing.md sec. 9):

* gradient-based optimizers (``supports_canary``): the white-box Dirac gradient canary of
  Nasr et al. 2023 (arXiv:2302.07956), a constant per-example gradient of norm equal to the
  clip bound / gradient-sensitivity bound on coordinate 0. The data set's coordinate 0 is zero
  for every record, so no data gradient interacts with the canary. The pair follows the
  optimizer's canary semantics and neighbouring relation:
  ``"record"`` (an extra record with that gradient): add/remove -> (no canary, +g),
  replace-one -> (-g, +g); ``"offset"`` (noisy-gd: grad L_D' = grad L_D + g/n, ||g|| <= S_g)
  -> (no canary, +g); ``"replace"`` (bias-reduced-sgd: record 0's gradient replaced) -> (-g, +g).
* mean estimation (``projection``, ``l1-recovery``): rows are zero except row 0, which is
  -L e_0 on D and +L e_0 on D' (replace-one, the largest allowed change);
* ``output-perturbation``: record 0 is (R e_0, label 0) on D and (R e_0, label 1) on D'.

The score is the final parameter's coordinate 0 (projection on the canary direction, fixed in
advance), and the epsilon lower bound comes from :func:`dpaudit.audit.mechanism.audit_scores`
(held-out threshold, Clopper-Pearson, delta term; GDP estimate in the details). The claim is
the optimizer's own ``run.claim`` at ``delta`` (default: the optimizer's ``delta``
hyper-parameter if it has one, else 1e-5).
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.audit.attacks import dirac_canary, projection_statistic
from dpaudit.audit.mechanism import _split, audit_scores
from dpaudit.audit.runner import DEFAULT_RETRIES, Job, as_seed_sequence, concat_chunks, open_executor, run_jobs
from dpaudit.core.validation import check_confidence, check_count, check_delta, check_real

__all__ = ["audit_optimizer", "optimizer_scenario", "CANARY_SEMANTICS"]

#: how ``canary_gradient`` enters each optimizer (see the module docstring)
CANARY_SEMANTICS = {"noisy-gd": "offset", "bias-reduced-sgd": "replace"}
_MEAN_ESTIMATION = ("projection", "l1-recovery")
_AUDIT_KEYS = ("delta", "method", "selection", "selection_fraction", "n", "dim", "chunk_size", "executor",
               "workers", "retries")
DEFAULT_OPTIMIZER_CHUNK = 2_000


def _base_data(n: int, dim: int, seed: int = 0):
    """Fixed records: unit-norm rows with coordinate 0 equal to zero, labels in {0, 1}."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, dim))
    X[:, 0] = 0.0
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    X = np.where(norms > 0, X / np.where(norms > 0, norms, 1.0), 0.0)
    y = (rng.random(n) < 0.5).astype(float)
    return X, y


def _canary_norm(opt) -> float:
    hp = opt.hp
    if opt.name == "noisy-gd" or ("clip" in hp and not math.isfinite(float(hp["clip"]))):
        s = getattr(opt, "sensitivity", None)
        if s is not None and math.isfinite(float(s)):
            return float(s)
    if "clip" in hp and math.isfinite(float(hp["clip"])):
        return float(hp["clip"])
    if "feature_bound" in hp:
        loss = getattr(opt, "loss", None)
        bound = getattr(loss, "derivative_bound", 1.0)
        return float(hp["feature_bound"]) * float(bound if math.isfinite(bound) else 1.0)
    s = getattr(opt, "sensitivity", None)
    if s is not None and math.isfinite(float(s)):
        return float(s)
    return 1.0


class _OptimizerRun:
    """``opt.run(X, y, trials=size, seed=seed, canary_gradient=canary)`` as a picklable object."""

    def __init__(self, opt, X, y, canary=None):
        self.opt, self.X, self.y, self.canary = opt, X, y, canary

    def __call__(self, size, seed):
        if self.canary is None:  # optimizers without canary support do not take the keyword
            return self.opt.run(self.X, self.y, trials=size, seed=seed)
        return self.opt.run(self.X, self.y, trials=size, seed=seed, canary_gradient=self.canary)


class _OptimizerScores:
    """Chunk function: run the optimizer ``size`` times, return only the scores of the parameters."""

    def __init__(self, run, statistic):
        self.run, self.statistic = run, statistic

    def __call__(self, size, seed):
        return np.asarray(self.statistic(self.run(size, seed).params), dtype=float)


def optimizer_scenario(opt, *, n: int = 20, dim: int = 5) -> dict:
    """The neighbouring pair, canary and statistic used to audit ``opt``.

    Returns a dict with ``run0(size, seed)``, ``run1(size, seed)`` (parameters of shape
    (size, dim) on D and D'), ``statistic`` and a ``description``.
    """
    n = check_count(n, "n", minimum=2)
    dim = check_count(dim, "dim", minimum=1)
    name = opt.name
    e0 = np.zeros(dim)
    e0[0] = 1.0
    stat = projection_statistic(e0)
    stat.description = "final parameter along the canary coordinate e_0"
    if name in _MEAN_ESTIMATION:
        L = float(opt.hp.get("lipschitz", 1.0))
        Z0 = np.zeros((n, dim))
        Z0[0, 0] = -L
        Z1 = Z0.copy()
        Z1[0, 0] = L
        return {"run0": _OptimizerRun(opt, Z0, None), "run1": _OptimizerRun(opt, Z1, None),
                "statistic": stat, "description": f"mean estimation, row 0 = -{L:g} e_0 vs +{L:g} e_0 (replace-one)",
                "n": n}
    X, y = _base_data(n, dim)
    if not getattr(opt, "supports_canary", False):
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
        return {"run0": _OptimizerRun(opt, X0, y0), "run1": _OptimizerRun(opt, X1, y1),
                "statistic": stat, "description": desc, "n": n}
    g = dirac_canary(dim, _canary_norm(opt))
    semantics = CANARY_SEMANTICS.get(name, "record")
    if semantics == "offset" or (semantics == "record" and opt.neighbouring == "add_remove"):
        g0 = None
        desc = f"white-box Dirac gradient canary of norm {g[0]:g}: absent vs present"
    else:
        g0 = -g
        desc = f"white-box Dirac gradient canary of norm {g[0]:g}: -g vs +g"
    desc += f" ({opt.neighbouring}, canary semantics '{semantics}')"
    return {"run0": _OptimizerRun(opt, X, y, g0), "run1": _OptimizerRun(opt, X, y, g),
            "statistic": stat, "description": desc, "n": n}


def audit_optimizer(name_or_optimizer, *, trials: int = 10_000, confidence: float = 0.95, seed=None,
                    **options):
    """Audit an optimizer (a name from ``dpaudit.optimizers.names`` or a built optimizer).

    ``options`` are audit settings -- ``delta``, ``method`` ("threshold" or "gdp"),
    ``selection``, ``selection_fraction`` (default 0.3), ``n`` (records, default 20), ``dim``
    (default 5), ``chunk_size`` (default 2000; part of the random-stream layout), ``executor``
    (any ``concurrent.futures.Executor``, e.g. a Dask client's ``get_executor()``), ``workers``
    (N >= 2: a process pool of N workers), ``retries`` -- and, when a name is given,
    hyper-parameters passed to ``make_optimizer``. ``trials`` runs per neighbouring dataset. The
    result depends only on ``seed``, ``trials`` and ``chunk_size``, never on where the chunks ran.
    The claim is that of a one-trial run on D (claims do not depend on the random draws).
    ``delta`` is always the AUDIT's delta (the claim is evaluated there); to change an
    optimizer's own ``delta`` hyper-parameter (e.g. the budget of ``dp-agd`` or the calibration
    of ``l1-recovery``), pass a built optimizer, ``audit_optimizer(make_optimizer(name,
    delta=...), n=..., dim=...)``, whose ``delta`` is then also the audit's default.
    """
    from dpaudit.optimizers import make_optimizer

    trials = check_count(trials, "trials", minimum=2)
    confidence = check_confidence(confidence)
    audit_opts = {k: options.pop(k) for k in _AUDIT_KEYS if k in options}
    if isinstance(name_or_optimizer, str):
        opt = make_optimizer(name_or_optimizer, **options)
    else:
        opt = name_or_optimizer
        if options:
            raise ValueError(f"unknown audit options {sorted(options)} (hyper-parameters only with a name)")
        if not hasattr(opt, "run") or not hasattr(opt, "name"):
            raise ValueError("name_or_optimizer must be an optimizer name or an optimizer object")
    delta = audit_opts.get("delta", opt.hp.get("delta", 1e-5) if hasattr(opt, "hp") else 1e-5)
    delta = check_delta(delta if delta not in (None, 0, 0.0) else 1e-5)
    frac = check_real("selection_fraction", audit_opts.get("selection_fraction", 0.3))
    if not 0.0 < frac < 1.0:
        raise ValueError(f"selection_fraction must be in (0, 1), got {frac}")
    chunk = audit_opts.get("chunk_size", DEFAULT_OPTIMIZER_CHUNK)
    executor = audit_opts.get("executor")
    workers = audit_opts.get("workers")
    retries = audit_opts.get("retries", DEFAULT_RETRIES)
    default_dim = 5
    if opt.name == "l1-recovery":  # compressed sensing needs sparsity < dim
        default_dim = max(20, 4 * int(opt.hp.get("sparsity", 5)))
    sc = optimizer_scenario(opt, n=audit_opts.get("n", 20), dim=audit_opts.get("dim", default_dim))
    stat = sc["statistic"]
    n_sel, n_eval = _split(trials, frac)
    root = as_seed_sequence(seed)
    s_sel0, s_sel1, s_ev0, s_ev1 = root.spawn(4)
    s_claim = root.spawn(1)[0]  # child 4: the four streams above are unchanged by it
    # the claim comes from a one-trial run here (claims may hold closures, which do not pickle)
    claim = sc["run0"](1, s_claim).claim
    f0, f1 = _OptimizerScores(sc["run0"], stat), _OptimizerScores(sc["run1"], stat)
    jobs = [Job(f0, n_sel, s_sel0, "selection runs on D"), Job(f1, n_sel, s_sel1, "selection runs on D'"),
            Job(f0, n_eval, s_ev0, "evaluation runs on D"), Job(f1, n_eval, s_ev1, "evaluation runs on D'")]
    with open_executor(executor, workers) as ex:  # all four jobs at once: one pool, no idle phase
        res = run_jobs(jobs, chunk_size=chunk, executor=ex, retries=retries)
    sel0, sel1, ev0, ev1 = (concat_chunks(r, job.trials) for r, job in zip(res, jobs))
    eps_claimed = float(claim.epsilon(delta))
    return audit_scores(
        sel0, sel1, ev0, ev1, epsilon=eps_claimed, delta=delta, confidence=confidence,
        method=audit_opts.get("method", "threshold"), selection=audit_opts.get("selection", "heldout"),
        trials=trials,
        details={"optimizer": opt.name, "hyperparameters": getattr(opt, "hp", {}), "canary": sc["description"],
                 "statistic": stat.description, "claim": claim.to_dict(delta), "n": sc["n"]},
    )
