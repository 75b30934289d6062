"""Audits of a sampler ``sampler(x, rng, size)``: probe its outputs, open the executor, run the protocol.

Shared by ``audit_mechanism`` and ``check_floating_point``: the two-sample threshold audit
(:func:`dpaudit.audit.protocol.two_sample.audit_sampler`) or the one-run audit of a mechanism
(:func:`audit_sampler_one_run`: ``trials`` canaries, canary j one mechanism run on x' if its fair coin says
"included", on x otherwise; Steinke, Nasr, Jagielski 2023), on the executor of an :class:`~dpaudit.Execution`.
"""

from __future__ import annotations

import warnings

import numpy as np

from dpaudit.audit.attacks.preflight import check_sampler_signature, preflight_outputs
from dpaudit.audit.attacks.registry import leak_kind
from dpaudit.audit.attacks.selection import Contest, FixedStatistic, describe_input
from dpaudit.audit.protocol.one_run import bound_record, ceiling_record, one_run_method, one_run_protocol
from dpaudit.audit.protocol.result import AuditResult
from dpaudit.audit.protocol.two_sample import (
    AttackChunk,
    SamplerAudit,
    attack_details,
    audit_sampler,
    runner,
    select_attack,
    selection_sizes,
    split_trials,
)
from dpaudit.audit.stats.power import one_run_advice
from dpaudit.core.defaults import PureDPClaimWarning, no_pure_dp
from dpaudit.core.execution import Execution
from dpaudit.core.progress import reporting as progress_reporting
from dpaudit.core.runner import (
    DEFAULT_CHUNK_SIZE,
    Job,
    audit_memory,
    check_memory,
    check_picklable,
    concat_chunks,
    open_executor,
    output_bytes,
)

__all__ = ["run_sampler_audit", "audit_sampler_one_run", "warn_pure_dp_claim", "sampler_memory"]


def warn_pure_dp_claim(sampler) -> None:
    """delta = 0 (the default) audits a pure-DP claim: say so when the mechanism has none (a Gaussian)."""
    desc = no_pure_dp(sampler)
    if desc is not None:
        warnings.warn(f"delta = 0 audits a pure-DP claim, but {desc} has no pure-DP guarantee (its epsilon at "
                      "delta = 0 is infinite), so a long enough audit will report a violation; pass the delta of its "
                      "claim, e.g. delta=1e-5", PureDPClaimWarning, stacklevel=3)


def run_sampler_audit(req: SamplerAudit, method: str, root, execution: Execution):
    """Probe the outputs, open the executor (checking what it is sent) and run the protocol of ``method``
    (``"threshold"`` / ``"gdp"``: :func:`~dpaudit.audit.protocol.two_sample.audit_sampler`; ``"one-run"``:
    :func:`audit_sampler_one_run`). Returns ``(result, probe_runs)``."""
    attack = req.attack  # a FixedStatistic or a Contest
    statistic = attack.statistic if isinstance(attack, FixedStatistic) else None
    families = list(attack.families) if isinstance(attack, Contest) else None
    _, x, x_prime = req.candidates[0]
    check_sampler_signature(req.sampler, x)  # (the probe below wraps the sampler: its signature is checked here)
    probe = _Probe(req.sampler)
    # outputs the statistic cannot read fail here, with how to map them, not deep inside a chunk
    probe_runs = preflight_outputs(probe, x, x_prime, root=root, encode=req.encode,
                                   statistic=statistic, families=families)
    n_sel = split_trials(req.trials, req.selection_fraction)[0]
    check_memory(sampler_memory(req, method, probe.bytes_per_run, execution), trials=req.trials)
    planned = (req.trials + n_sel if method == "one-run"  # one run of `trials` canaries, and the calibration run
               else 2 * req.trials + 2 * n_sel * (len(req.candidates) - 1))  # selection runs of further candidates
    with progress_reporting(execution.progress, total=planned), \
            open_executor(execution.executor, execution.workers) as ex:
        check_picklable(ex, req.sampler, "sampler")  # fail before any chunk runs, not between phases
        if statistic is not None:
            check_picklable(ex, statistic, "statistic")
        if req.encode is not None:
            check_picklable(ex, req.encode, "encode")
        run = runner(ex, execution.chunk(DEFAULT_CHUNK_SIZE), execution.retries)
        if method == "one-run":
            return audit_sampler_one_run(req, root, run), probe_runs
        return audit_sampler(req, root, run), probe_runs


class _Probe:
    """The sampler, recording the bytes per run of the outputs of its (preflight) calls."""

    def __init__(self, sampler):
        self.sampler, self.bytes_per_run = sampler, 8.0

    def __call__(self, inp, rng, size):
        out = self.sampler(inp, rng, size)
        self.bytes_per_run = max(self.bytes_per_run, output_bytes(out, size))
        return out


def sampler_memory(req: SamplerAudit, method: str, bytes_per_run: float, execution: Execution) -> int:
    """Peak bytes of the audit ``req`` (:func:`dpaudit.core.runner.audit_memory`) when each run's output takes
    ``bytes_per_run``: what is kept -- the selection scores of a fixed statistic (8 bytes a run), the selection
    outputs of a contest (two candidate pairs at most at once), every canary's output of a one-run audit -- and
    one chunk per worker; the evaluation runs are only counted, and so are the selection runs above
    :data:`~dpaudit.audit.protocol.two_sample.SELECTION_CAP` (:func:`~dpaudit.audit.protocol.two_sample.selection_sizes`)."""
    n_sel = split_trials(req.trials, req.selection_fraction)[0]
    if method == "one-run":
        kept, per_kept = req.trials + n_sel, bytes_per_run + 8
    elif isinstance(req.attack, FixedStatistic):
        kept, per_kept = 2 * selection_sizes(n_sel)[0], 8.0
    else:
        kept, per_kept = 2 * selection_sizes(n_sel)[0] * min(len(req.candidates), 2), bytes_per_run + 8
    return audit_memory(kept_runs=kept, bytes_per_kept=per_kept, chunk_size=min(execution.chunk(DEFAULT_CHUNK_SIZE), req.trials),
                        bytes_per_run=bytes_per_run, slots=execution.workers or 1)


# ------------------------------------------------------------------------------------ one run
class _OneRunMechanism:
    """``run(coins, seed)`` of :func:`dpaudit.audit.protocol.one_run.one_run_protocol` for a mechanism: canary j
    is one mechanism run on x' if ``coins[0, j]`` (included) and on x otherwise, scored by the statistic."""

    def __init__(self, req: SamplerAudit, a, b, statistic, spec, tiebreak, run):
        self.req, self.a, self.b, self.statistic = req, a, b, statistic
        self.spec, self.tiebreak, self.run = spec, tiebreak, run

    def __call__(self, coins, seed):
        coins = np.atleast_2d(coins)
        scores = np.empty(coins.shape)
        for row, c in enumerate(coins):
            s_in, s_out = seed.spawn(2)
            k1 = int(c.sum())
            jobs, masks = [], []
            if k1:
                jobs.append(Job(AttackChunk(self.req.sampler, self.b, self.statistic, self.req.encode, self.spec,
                                            self.tiebreak), k1, s_in, "canaries included (x')"))
                masks.append(c)
            if c.size - k1:
                jobs.append(Job(AttackChunk(self.req.sampler, self.a, self.statistic, self.req.encode, self.spec,
                                            self.tiebreak), c.size - k1, s_out, "canaries excluded (x)"))
                masks.append(~c)
            for mask, r in zip(masks, self.run(jobs)):
                scores[row, mask] = concat_chunks(r, int(mask.sum()))
        return scores


def _one_run_attack(req: SamplerAudit, s_fit_draws, run, m_cal: int, m: int):
    """The statistic of a one-run audit (the user's, or the contest's winner on separate two-sample draws of half
    the calibration size per input) and its details."""
    if isinstance(req.attack, FixedStatistic):
        if len(req.candidates) != 1:
            raise ValueError("several candidate pairs need statistic='auto' (or family names)")
        stat = req.attack.statistic
        name, a, b = req.candidates[0]
        details = {"attack": {"family": getattr(stat, "family", "") or "user statistic",
                              "description": getattr(stat, "description", "user statistic"),
                              "selected_on": "fixed by the user", "leak": leak_kind("", stat)},
                   "inputs": {"x": describe_input(a), "x_prime": describe_input(b), "index": 0, "name": name}}
        return 0, stat, None, None, details
    contest: Contest = req.attack  # type: ignore[assignment]
    n_fit = max(m_cal // 2, 4)
    s_sel, s_tb, s_fit = s_fit_draws.spawn(3)
    seeds = [tuple(c.spawn(2)) for c in s_sel.spawn(len(req.candidates))]
    sel = select_attack(req, contest, run, n_sel=n_fit, seeds=seeds, tb_seed=s_tb, fit_seed=s_fit,
                        threshold_from_selection=False)
    best = sel["best"]
    details = attack_details(sel, req.candidates, n_fit, sel["runs"] + m_cal + m)
    return sel["index"], best.statistic, sel["spec"], best.tiebreak, details


def audit_sampler_one_run(req: SamplerAudit, root, run) -> AuditResult:
    """One-run audit of a mechanism (Steinke, Nasr, Jagielski 2023): ``trials`` canaries in the main
    run, ``selection_fraction`` of them as the calibration run; the statistic (and pair) is fitted on
    separate two-sample draws of half the calibration size per input."""
    s_fit_draws, s_protocol = root.spawn(2)
    m_cal, m = split_trials(req.trials, req.selection_fraction)
    best_i, stat, spec, tb, details = _one_run_attack(req, s_fit_draws, run, m_cal, m)
    _, a, b = req.candidates[best_i]
    res = one_run_protocol(_OneRunMechanism(req, a, b, stat, spec, tb, run), m=m, m_calibration=m_cal,
                           seed=s_protocol, delta=req.delta, confidence=req.confidence)
    eps_lower = float(res["epsilon_lower"][0])
    cal = res["calibration"]
    one: dict = {"epsilon_lower": eps_lower, "m": m, "r": int(res["r"][0]), "v": int(res["v"][0]),
                 "k_in": int(res["k_in"][0]), "k_out": int(res["k_out"][0]), "included": int(res["included"][0])}
    details.update({"one_run": one, "calibration_canaries": int(m_cal),
                    "guess_fraction": [float(cal["fraction_in"][0]), float(cal["fraction_out"][0])],
                    "calibration_epsilon": float(cal["calibration_epsilon"][0]),
                    "one_run_bound": bound_record(res),
                    "ceiling": ceiling_record(res, epsilon_lower=eps_lower, epsilon_claimed=float(req.epsilon)),
                    "statistic": getattr(stat, "description", "user statistic")})
    if not eps_lower > 0.0:  # certified nothing: advisory numbers (never change the bound)
        details["advice"] = one_run_advice(m=one["m"], r=one["r"], v=one["v"], epsilon=req.epsilon, delta=req.delta,
                                           confidence=req.confidence)
    return AuditResult(
        epsilon_lower=eps_lower, epsilon_claimed=float(req.epsilon), delta=float(req.delta),
        confidence=float(req.confidence), violation=bool(eps_lower > req.epsilon),
        method=one_run_method(res), trials=int(req.trials), details=details,
    )
