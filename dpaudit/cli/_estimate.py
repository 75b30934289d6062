"""Time and memory of an optimizer audit, estimated before it starts.

A short pilot runs the audit's own simulation (the optimizer on the neighbouring dataset D, a
few dozen runs, doubled until it has taken at least :data:`PILOT_SECONDS`); the audit needs
``2 * trials`` such runs (D and D'), plus about :data:`POST_SECONDS_PER_TRIAL` of sorting and
counting per trial. Memory: :func:`dpaudit.audit.optimizer.optimizer_memory` (the selection scores, one chunk per
worker; the evaluation runs are only counted), the same estimate with which ``audit_optimizer`` refuses an audit.

:func:`announce` prints the estimate on stderr when it exceeds :data:`ANNOUNCE_SECONDS` or
:data:`ANNOUNCE_BYTES`, and refuses (a ``UsageError``, exit 2, before any trial) an audit that
would need more memory than the machine has available (:func:`dpaudit.core.runner.check_memory`, the check every
auditor makes).
"""

from __future__ import annotations

import math
import os
import sys
import time

from dpaudit.core.runner import check_memory, format_bytes

__all__ = ["estimate_audit", "announce", "format_duration", "format_bytes", "PILOT_FROM", "POST_SECONDS_PER_TRIAL",
           "ANNOUNCE_SECONDS", "ANNOUNCE_BYTES"]

#: trials per input from which the pilot runs (below, audits are short whatever the optimizer)
PILOT_FROM = 10_000
#: the pilot doubles its runs until it has taken this long (or reached PILOT_MAX_RUNS)
PILOT_SECONDS = 0.2
PILOT_MAX_RUNS = 4096
#: sorting and counting after the runs, per trial (measured: 0.47 s for 10^6 trials per input)
POST_SECONDS_PER_TRIAL = 0.5e-6
#: an estimate above either of these is printed before the audit starts
ANNOUNCE_SECONDS = 60.0
ANNOUNCE_BYTES = 2**30


def format_duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "forever"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    if seconds < 3 * 365 * 86400:
        return f"{seconds / 86400:.0f} days"
    return f"{seconds / (365.25 * 86400):.2g} years"


def estimate_audit(opt, trials: int, *, workers: int | None = None, n: int = 20, dim: int | None = None) -> dict:
    """Estimated wall-clock seconds and peak bytes of ``audit_optimizer(opt, trials=trials)``."""
    import numpy as np

    from dpaudit.audit.optimizer import OptimizerScores, optimizer_memory, optimizer_scenario

    sc = optimizer_scenario(opt, n=n, dim=dim)
    run = OptimizerScores(sc["run0"], sc["statistic"])
    runs, elapsed = 16, 0.0
    seed = np.random.SeedSequence(12345)
    while True:
        t0 = time.perf_counter()
        run(runs, seed)
        elapsed = time.perf_counter() - t0
        if elapsed >= PILOT_SECONDS or runs >= PILOT_MAX_RUNS:
            break
        runs *= 2
    per_run = elapsed / runs
    parallel = max(1, min(int(workers or 1), os.cpu_count() or 1))
    seconds = 2.0 * trials * per_run / parallel + POST_SECONDS_PER_TRIAL * trials
    return {"seconds": seconds, "bytes": optimizer_memory(opt, trials, workers=workers, n=n, dim=dim), "pilot_runs": runs,
            "seconds_per_run": per_run, "workers": parallel}


def announce(command: str, opt, trials: int, *, workers: int | None = None) -> dict | None:
    """Estimate a large audit before it starts: print it on stderr when it is long or big, refuse it
    (``UsageError``) when it needs more memory than the machine has. Returns the estimate (None below
    :data:`PILOT_FROM` trials)."""
    from dpaudit.audit.optimizer import optimizer_memory
    from dpaudit.cli._checks import UsageError

    try:
        check_memory(optimizer_memory(opt, trials, workers=workers), trials=trials, argument="--trials")
    except ValueError as err:
        raise UsageError(str(err)) from None
    if trials < PILOT_FROM:
        return None
    est = estimate_audit(opt, trials, workers=workers)
    if est["seconds"] >= ANNOUNCE_SECONDS or est["bytes"] >= ANNOUNCE_BYTES:
        where = f"{est['workers']} processes" if est["workers"] > 1 else "1 process"
        print(f"dpaudit {command}: {trials:,} trials per input: estimated {format_duration(est['seconds'])} on "
              f"{where} and {format_bytes(est['bytes'])} of memory (from a {est['pilot_runs']}-run pilot); "
              "Ctrl-C stops it", file=sys.stderr, flush=True)
    return est
