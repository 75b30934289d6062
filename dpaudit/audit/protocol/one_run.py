"""The one-run protocol (Steinke, Nasr, Jagielski, NeurIPS 2023, arXiv:2305.08846), written once, and its records.

The statistics (the p-value, the certified bounds, the choice of guesses on a calibration run, the ceiling)
are in :mod:`dpaudit.audit.stats.one_run` and :mod:`dpaudit.audit.stats.one_run_fdp`; this module runs the
calibration and the audit trainings with the auditor's own coins and records what certified the bound.
Shared by ``audit_mechanism(method="one-run")``, ``audit_optimizer(method="one-run")`` and
``audit_training`` / ``audit_one_run``.
"""

from __future__ import annotations

import numpy as np

from dpaudit.audit.stats.one_run import (
    BOUNDS,
    GUESS_FRACTIONS,
    OneRunBoundTable,
    choose_bound,
    choose_guesses,
    correct_counts,
    max_guesses,
    one_run_ceiling,
)
from dpaudit.audit.stats.one_run_fdp import one_run_fdp_gdp_epsilon
from dpaudit.core.seeds import as_seed_sequence
from dpaudit.core.validation import check_count

__all__ = ["one_run_protocol", "one_run_method", "bound_record", "ceiling_record", "ONE_RUN_METHODS"]


def one_run_protocol(run, *, m: int, m_calibration: int, seed, delta: float = 0.0, confidence: float = 0.95,
                     audits: int = 1, guesses=None, fractions=GUESS_FRACTIONS, bound: str = "auto") -> dict:
    """The one-run audit (Steinke, Nasr, Jagielski 2023), shared by mechanisms and optimizers.

    1. calibration run (unless ``guesses`` is given): ``m_calibration`` canaries with the auditor's
       fair coins, scored by ``run(coins, seed_sequence) -> scores`` (same shape as ``coins``,
       ``(audits, m)``; a larger score means "more likely included");
    2. choice of k_in and k_out separately on it (:func:`choose_guesses`);
    3. main run: ``m`` canaries, independent coins and randomness;
    4. bound from the v correct guesses out of r = k_in + k_out: ``bound="snj"`` the test of Steinke, Nasr,
       Jagielski (:func:`one_run_epsilon_lower`), ``"fdp"`` the f-DP test of Mahloujifar, Melis, Chaudhuri 2024
       with the (epsilon, delta) trade-off curve (:func:`dpaudit.audit.stats.one_run_fdp.one_run_fdp_epsilon_lower`),
       ``"both"`` both at beta/2 and the larger (union bound), ``"auto"`` (default) the one of the two that is
       larger on the calibration run (:func:`choose_bound`; with fixed ``guesses`` there is no calibration run
       and ``"auto"`` means ``"both"``). Every choice is certified at ``confidence``.

    ``guesses``: a fixed k (k "in" and k "out") or a pair (k_in, k_out). Seeds: children 0..3 of
    ``seed`` are the main coins, the main run, the calibration coins, the calibration run.
    Returns arrays over audits: ``epsilon_lower``, ``r``, ``v``, ``k_in``, ``k_out``, ``included``,
    plus the calibration record.
    """

    m = check_count("m", m, minimum=2)
    audits = check_count("audits", audits, minimum=1)
    if bound not in BOUNDS:
        raise ValueError(f"bound must be one of {BOUNDS}, got {bound!r}")
    s_coins, s_run, s_cal_coins, s_cal_run = as_seed_sequence(seed).spawn(4)
    cal = None
    if guesses is None:
        m_cal = check_count("m_calibration", m_calibration, minimum=2)
        cal_coins = np.random.default_rng(s_cal_coins).random((audits, m_cal)) < 0.5
        cal_scores = np.asarray(run(cal_coins, s_cal_run), dtype=float).reshape(audits, m_cal)
        cal = choose_guesses(cal_scores, cal_coins, m=m, delta=delta, confidence=confidence, fractions=fractions)
        k_in, k_out = cal["k_in"], cal["k_out"]
    else:
        if isinstance(guesses, (tuple, list)):
            gi, go = (check_count("guesses", g, minimum=0) for g in guesses)
        else:
            gi = go = check_count("guesses", guesses, minimum=1)
        if gi + go > m or gi + go == 0:
            raise ValueError(f"guesses: k_in + k_out must be in [1, {m}] (canaries), got {gi} + {go}")
        k_in, k_out = np.full(audits, gi), np.full(audits, go)
    coins = np.random.default_rng(s_coins).random((audits, m)) < 0.5
    scores = np.asarray(run(coins, s_run), dtype=float).reshape(audits, m)
    if np.any(np.isnan(scores)):
        raise ValueError("scores must not contain NaN")
    out_ok, in_ok = correct_counts(scores, coins)
    rows = np.arange(audits)
    v = in_ok[rows, k_in] + out_ok[rows, k_out]
    r = k_in + k_out
    if bound == "auto" and cal is not None:
        used = choose_bound(m, cal["r_calibration"], cal["v_calibration"], m_cal, delta=delta, confidence=confidence)
        level = confidence
    else:
        kind = "both" if bound == "auto" else bound
        used = np.full(audits, kind, dtype=object)
        level = 1.0 - (1.0 - confidence) / 2.0 if kind == "both" else confidence
    snj = OneRunBoundTable(m, delta, level, "snj")
    fdp = OneRunBoundTable(m, delta, level, "fdp")
    eps_snj = np.array([snj(rr, vv) if u in ("snj", "both") else np.nan for rr, vv, u in zip(r, v, used)])
    eps_fdp = np.array([fdp(rr, vv) if u in ("fdp", "both") else np.nan for rr, vv, u in zip(r, v, used)])
    eps = np.fmax(eps_snj, eps_fdp)
    return {"epsilon_lower": eps, "r": r, "v": v, "k_in": k_in, "k_out": k_out, "included": coins.sum(axis=1),
            "m": m, "calibration": cal, "calibrated": guesses is None, "delta": float(delta),
            "confidence": float(confidence), "bound": used, "epsilon_snj": eps_snj, "epsilon_fdp": eps_fdp,
            "bound_level": float(level)}


#: ``AuditResult.method`` of a one-run audit, by the test that certified its bound
ONE_RUN_METHODS = {"snj": "one-run (Steinke-Nasr-Jagielski 2023)",
                   "fdp": "one-run (f-DP test of Mahloujifar-Melis-Chaudhuri 2024, (epsilon, delta) curve)",
                   "both": "one-run (Steinke-Nasr-Jagielski 2023 and the f-DP test at beta/2 each, the larger)"}


def one_run_method(res: dict, row: int = 0) -> str:
    """The method string of audit ``row`` of a :func:`one_run_protocol` result: names the test that certified."""
    return ONE_RUN_METHODS[str(res["bound"][row])]


def bound_record(res: dict, row: int = 0) -> dict:
    """``details["one_run_bound"]`` of audit ``row`` of a :func:`one_run_protocol` result: which test certified
    ``epsilon_lower``, both tests' numbers where computed, and the Gaussian-family f-DP number of Mahloujifar,
    Melis, Chaudhuri 2024 (what jax_privacy's ``epsilon_one_run_fdp`` reports) -- an *estimate assuming mu-GDP*,
    never a bound."""
    used = str(res["bound"][row])
    names = {"snj": "Steinke-Nasr-Jagielski 2023 p-value", "fdp": "f-DP test with the (epsilon, delta) curve "
             "(Mahloujifar-Melis-Chaudhuri 2024)", "both": "both tests at beta/2 each, the larger (union bound)"}
    out = {"test": used, "description": names[used],
           "chosen_by": "calibration run (the larger predicted bound)" if res["calibrated"] and used != "both" else
           "fixed before the run", "level": res["bound_level"],
           "epsilon_snj": float(res["epsilon_snj"][row]), "epsilon_fdp": float(res["epsilon_fdp"][row])}
    if res["delta"] > 0.0:
        g = one_run_fdp_gdp_epsilon(m=res["m"], r=int(res["r"][row]), v=int(res["v"][row]), delta=res["delta"],
                                    confidence=res["confidence"])
        out["gdp_family"] = {"mu_lower": g["mu_lower"], "epsilon": g["epsilon"],
                             "label": "estimate assuming mu-GDP (not a bound; never sets the verdict)",
                             "certified": f"the mechanism is not mu-GDP for mu <= {g['mu_lower']:.6g}"}
    return out


def ceiling_record(res: dict, *, epsilon_lower: float, epsilon_claimed: float, delta: float | None = None,
                   guesses=None, requested: str = "auto") -> dict:
    """``details["ceiling"]`` of a :func:`one_run_protocol` result (audit 0): :func:`one_run_ceiling` at its m, the
    most guesses it could make, its delta (or ``delta``) and the level and tests its bound used; ``at_ceiling``
    when the bound is within 2% of it, ``claim_at_or_above`` when no such audit can show the claim violated."""
    m = int(res["m"])
    d = float(res["delta"] if delta is None else delta)
    used = str(res["bound"][0])
    tests = ("snj", "fdp") if used == "both" or requested == "auto" else (used,)
    r_max = max_guesses(m, guesses)
    ceiling = one_run_ceiling(m, r_max=r_max, delta=d, confidence=float(res["bound_level"]), tests=tests)
    return {"epsilon": ceiling, "canaries": m, "max_guesses": r_max, "delta": d, "level": float(res["bound_level"]),
            "meaning": f"the largest epsilon this audit could certify with {m} canaries and every one of up to {r_max} "
                       "guesses right (no audit of this size can show more)",
            "at_ceiling": bool(epsilon_lower >= 0.98 * ceiling > 0.0),
            "claim_at_or_above": bool(epsilon_claimed >= ceiling)}
