"""The numbers behind a report: accountant curves, the Renyi table, the claimed DP region.

* :func:`compare_accountants`: epsilon(delta) after T compositions of one mechanism, for each
  accountant (RDP, zCDP, PLD, tCDP) and the exact curve where it is known in closed form.
* :func:`renyi_table`: noisy GD on the squared-loss instance of Chourasia, Ye, Shokri 2021
  (the instance of their Theorem 2; its exact Gaussian law is derived in docs/theorems/langevin.md) run for many trials on neighbouring datasets; the
  Renyi divergence of the last iterates estimated with :func:`dpaudit.audit.renyi_divergence`
  (with its interval) beside the exact value, the Theorem 1 upper bound, the Theorem 2 lower
  bound and the composition bound.
* :func:`dp_region_tpr`: the largest true-positive rate any test can reach at a given false-
  positive rate under (epsilon, delta)-DP (Kairouz, Oh, Viswanath 2015):
  FNR >= max(0, 1 - delta - e^eps FPR, e^-eps (1 - delta - FPR)).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from dpaudit.accounting.base import ACCOUNTANTS, NO_AMPLIFICATION, accountant_class
from dpaudit.accounting.exact import exact_epsilon
from dpaudit.core.validation import (
    UnsupportedMechanismError,
    check_confidence,
    check_count,
    check_delta,
    check_nonnegative,
    check_positive,
    check_probability,
)

__all__ = ["compare_accountants", "accountant_curve", "renyi_table", "dp_region_tpr", "default_steps",
           "optimizer_mechanism", "ignores_sampling", "NO_AMPLIFICATION"]

def ignores_sampling(notion: str, mechanism) -> bool:
    """True when ``mechanism`` is subsampled (0 < q < 1) and the accountant ``notion`` (a registry
    name) charges it as the unsampled mechanism: the accountant class's own
    :meth:`~dpaudit.accounting.base.Accountant.ignores_subsampling` (zCDP has no
    amplification-by-subsampling theorem; tCDP has one only for sampling without replacement under
    its conditions, Bun et al. 2018). Large numbers there are not alarming."""
    return accountant_class(notion).ignores_subsampling(mechanism)



def default_steps(max_steps: int, points: int = 9) -> list[int]:
    """About ``points`` integers from 1 to ``max_steps``, log-spaced (always includes both ends)."""
    max_steps = check_count("max_steps", max_steps, minimum=1)
    grid = np.unique(np.round(np.geomspace(1, max_steps, points)).astype(int))
    return [int(t) for t in grid]


def accountant_curve(notion: str, mechanism, steps, delta: float) -> list[float]:
    """epsilon(delta) of the accountant ``notion`` (a registry name) after each number of compositions in ``steps``
    (quiet: no NoAmplificationWarning). Memoised for a hashable (frozen) mechanism: a curve depends on nothing else,
    and a PLD curve costs a report a second or more (dp-sgd's per-step mechanism at 9 step counts), so a second
    report on the same mechanism in a process reuses it."""
    try:
        return list(_accountant_curve_cached(notion, mechanism, tuple(steps), delta))
    except TypeError:  # an unhashable mechanism
        return list(_accountant_curve(notion, mechanism, tuple(steps), delta))


def _accountant_curve(notion: str, mechanism, steps: tuple, delta: float) -> tuple:
    cls = accountant_class(notion)
    return tuple(float(cls.quiet().compose(mechanism, t).epsilon(delta)) for t in steps)


_accountant_curve_cached = functools.lru_cache(maxsize=64)(_accountant_curve)


def compare_accountants(mechanism, steps, *, delta: float = 1e-5, accountants=("rdp", "zcdp", "pld"),
                        exact: bool = True) -> dict:
    """epsilon(delta) after each number of compositions in ``steps``, for every accountant.

    Returns a dict with ``mechanism`` (description), ``delta``, ``steps`` and ``curves``
    (label -> list of epsilons, ``inf`` where the accountant gives no guarantee), plus ``notes``
    (label -> why a curve is missing, or what it ignores), ``ignores_sampling`` (labels of the
    curves whose notion gives subsampling no amplification, :func:`ignores_sampling`) and
    ``exact_label``. An accountant that refuses the mechanism (no guarantee in its notion) is left
    out with a note, never silently replaced.
    """
    delta = check_delta("delta", delta)
    steps = [check_count("steps", t, minimum=1) for t in np.atleast_1d(steps).tolist()]
    if not steps:
        raise ValueError("steps must not be empty")
    curves, notes, ignoring = {}, {}, []
    for key in accountants:
        if key not in ACCOUNTANTS:
            raise ValueError(f"accountants must be among {sorted(ACCOUNTANTS)}, got {key!r}")
        cls = accountant_class(key)
        label = cls.label
        try:
            # quiet: a curve that ignores subsampling is labelled here (no NoAmplificationWarning)
            curves[label] = accountant_curve(key, mechanism, steps, delta)
            if cls.ignores_subsampling(mechanism):
                ignoring.append(label)
                notes[label] = NO_AMPLIFICATION
        except UnsupportedMechanismError as exc:
            notes[label] = f"not applicable: {exc}"
    exact_label = None
    if exact:
        values = [exact_epsilon(mechanism, delta, t) for t in steps]
        if all(v is not None for v in values):
            exact_label = "exact"
            curves[exact_label] = [float(v) for v in values if v is not None]  # (all are)
        elif "exact" not in notes:
            notes["exact"] = "no closed form for this mechanism (PLD is the tightest curve shown)"
    describe = getattr(mechanism, "describe", None)
    return {"mechanism": describe() if callable(describe) else repr(mechanism), "delta": delta, "steps": steps,
            "curves": curves, "notes": notes, "ignores_sampling": ignoring, "exact_label": exact_label}


def dp_region_tpr(fpr, epsilon: float, delta: float):
    """Largest TPR = 1 - FNR reachable at ``fpr`` by any test against an (epsilon, delta)-DP mechanism.

    From FNR >= max(0, 1 - delta - e^eps FPR, e^-eps (1 - delta - FPR)) (Kairouz et al. 2015):
    TPR <= min(1, delta + e^eps FPR, 1 - e^-eps (1 - delta - FPR)). Any epsilon in [0, inf] and
    delta in [0, 1]: e^eps FPR is formed as exp(eps + log FPR) (inf above the float range, where the
    minimum is 1 anyway), never as e^eps alone (an OverflowError at eps > 709.78), and the last term
    as (1 - e^-eps) + e^-eps (delta + FPR) (no cancellation).
    """
    epsilon = check_nonnegative("epsilon", epsilon, allow_inf=True)
    delta = check_probability("delta", delta)
    fpr = np.clip(np.asarray(fpr, dtype=float), 0.0, 1.0)
    if math.isinf(epsilon):
        return np.ones_like(fpr)
    with np.errstate(over="ignore", divide="ignore"):
        a = delta + np.exp(epsilon + np.log(fpr))
    # 1 - e^-eps (1 - delta - FPR) = (1 - e^-eps) + e^-eps (delta + FPR): a sum of non-negative
    # terms (no cancellation for small eps and FPR); at least 1 when delta + FPR >= 1
    b = np.where(delta + fpr >= 1.0, 1.0, -math.expm1(-epsilon) + math.exp(-epsilon) * (delta + fpr))
    return np.minimum(1.0, np.minimum(a, b))


def renyi_table(*, steps=(1, 2, 5, 10, 20, 50, 100), alphas=(2.0, 5.0, 10.0), trials: int = 20_000,
                step_size: float = 0.1, sigma: float = 1.0, n: int = 1, sensitivity: float = 1.0,
                confidence: float = 0.95, seed=None) -> list[dict]:
    """Analytic against empirical Renyi divergence of noisy GD's last iterate (hidden state).

    Instance (Chourasia, Ye, Shokri 2021, Theorem 2; docs/theorems/langevin.md): loss
    l(theta; x) = ||theta - x||^2 / 2, theta_0 = 0, neighbouring datasets whose means differ by
    ``sensitivity / n``. Runs :func:`dpaudit.audit.linear_instance.linear_instance_table` (noisy GD
    simulated ``trials`` times per dataset and step count; D_alpha estimated by
    ``renyi_divergence(method="gaussian")``, whose interval assumes Gaussian last iterates, exact
    here). Each row holds ``steps``, ``alpha``, ``estimate``, ``lower``, ``upper``, ``exact``
    (the instance's closed form, docs/theorems/langevin.md), ``theorem1`` (upper bound, lambda = 1), ``theorem2`` (lower bound),
    ``composition``, ``method``, plus ``trials`` and ``confidence``.
    """

    trials = check_count("trials", trials, minimum=2)
    step_size = check_positive("step_size", step_size)
    if not step_size < 1.0:
        raise ValueError(f"step_size must be in (0, 1) (Theorem 1 needs step_size < 1/smoothness = 1), got {step_size}")
    confidence = check_confidence("confidence", confidence)
    steps = sorted({check_count("steps", t, minimum=1) for t in np.atleast_1d(steps).tolist()})
    from dpaudit.audit.linear_instance import linear_instance_table  # (heavy: not at CLI start)

    rows = linear_instance_table(steps, alphas, step_size=step_size, sigma=check_positive("sigma", sigma),
                                 n=check_count("n", n, minimum=1), sensitivity=check_positive("sensitivity", sensitivity),
                                 trials=trials, confidence=confidence, seed=seed, methods=("gaussian",))
    return [{**r, "trials": trials, "confidence": confidence} for r in rows]


def optimizer_mechanism(opt):
    """``(mechanism, steps)``: the per-step mechanism the optimizer's claim composes ``steps``
    times, as the optimizer declares it (:meth:`~dpaudit.optimizers.base.Optimizer.step_mechanism`);
    ``(None, steps)`` when its claim is not such a composition."""
    return opt.step_mechanism()
