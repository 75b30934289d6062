"""How close is close (issue 30 item 6): the certified bound against the truth and the threshold-test ceiling, with
seconds and peak memory per audit, in-process and on Dask, and the audit's overhead over the bare sampler.

    python benchmarks/scaling_table.py                          # 10^5, 10^6, 10^7 trials per input, in-process
    python benchmarks/scaling_table.py --dask 2                 # the same on a Dask LocalCluster of 2 workers too
    python benchmarks/scaling_table.py --max-trials 1000000000  # up to 10^9 (long)
    python benchmarks/scaling_table.py --overhead               # audit seconds / numpy seconds at 10^7 and 10^8
                                                                # (numpy timed in the audit's own process, wall
                                                                # clock and CPU time: on a loaded machine the CPU
                                                                # seconds move less with the load)

Mechanisms: Gaussian (sigma 1, sensitivity 1, delta 1e-5; true epsilon 4.377, Balle & Wang 2018 Thm. 8) and Laplace
(b = 1, pure DP: true epsilon 1), both drawn with numpy. The audit: a fixed statistic (the output itself) with the
default held-out threshold rule (``statistic="auto"``, the default contest, in the overhead rows). "ceiling": what the
exact likelihood-ratio test with its threshold known in advance can expect to certify at the audit's number of
evaluation runs (:func:`dpaudit.audit.stats.threshold_limit.threshold_audit_limit`). Each audit runs in its own
process, so "peak MB" is that audit's peak resident memory (the client's, on Dask). Chunks of
``min(10^6, max(10^4, trials / 200))`` runs (part of the random-stream layout: the same in-process and on Dask, so
both give the same bound). On a shared machine the seconds say as much about the load (printed) as about dpaudit.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

DELTA = {"gaussian": 1e-5, "laplace": 0.0}
TRUTH = {"gaussian": 4.377, "laplace": 1.0}


def gaussian(x, rng, size):
    return x + rng.standard_normal(size)


def laplace(x, rng, size):
    return x + rng.laplace(0.0, 1.0, size)


SAMPLERS = {"gaussian": gaussian, "laplace": laplace}


def identity(batch):
    return np.asarray(batch, dtype=float).reshape(len(batch), -1)[:, 0]


def chunk_size(trials: int) -> int:
    return int(min(10 ** 6, max(10 ** 4, trials // 200)))


def bare_seconds(mech: str, trials: int, cpu: bool = False):
    """Seconds for numpy to draw the audit's 2 x trials samples (in chunks of the audit's size); with ``cpu``, the
    pair (wall-clock seconds, CPU seconds of this process)."""
    rng, c = np.random.default_rng(0), chunk_size(trials)
    t, u = time.perf_counter(), time.process_time()
    for x in (0.0, 1.0):
        for start in range(0, trials, c):
            SAMPLERS[mech](x, rng, min(c, trials - start))
    wall, used = time.perf_counter() - t, time.process_time() - u
    return (wall, used) if cpu else wall


def one(mech: str, trials: int, statistic: str, dask: int, seed: int, overhead: bool = False) -> dict:
    """One audit in this process (or on a LocalCluster of ``dask`` workers): its numbers as a dict; with
    ``overhead``, also the seconds of the bare draws in this process, timed just before and just after the audit
    (the faster of the two: the ratio errs against the audit)."""
    from dpaudit import Execution
    from dpaudit.audit import audit_mechanism

    stat = identity if statistic == "fixed" else statistic
    kw = dict(epsilon=10.0, delta=DELTA[mech], trials=trials, seed=seed, statistic=stat)

    cpu = []

    def run(executor=None):
        t, u = time.perf_counter(), time.process_time()
        r = audit_mechanism(SAMPLERS[mech], 0.0, 1.0, execution=Execution(chunk_size=chunk_size(trials),
                                                                          executor=executor), **kw)
        cpu.append(time.process_time() - u)
        return r, time.perf_counter() - t

    bare = None
    if overhead:
        # the modules an audit imports on its first call (scipy's optimizers, the attack families) are loaded by a
        # small audit first: a once-per-process cost, not the audit's; then numpy's draws, in this process as the audit
        audit_mechanism(SAMPLERS[mech], 0.0, 1.0, **{**kw, "trials": 4_000, "seed": seed + 1})
        bare = bare_seconds(mech, trials, cpu=True)
    if dask:
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=dask, threads_per_worker=1, dashboard_address=":0", silence_logs=50) as cl, \
                Client(cl) as client:
            res, sec = run(client.get_executor())
    else:
        res, sec = run()
    out = {"eps": res.epsilon_lower, "n_eval": res.details["n_evaluation"][0], "seconds": sec,
           "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
           "family": res.details["attack"]["family"]}
    if bare is not None:
        again = bare_seconds(mech, trials, cpu=True)
        out.update(bare=min(bare[0], again[0]), bare_cpu=min(bare[1], again[1]), cpu=cpu[0])
    return out


def in_child(mech, trials, statistic, dask, seed, overhead: bool = False) -> dict:
    out = subprocess.run([sys.executable, __file__, "--one", mech, str(trials), statistic, str(dask), str(seed)]
                         + (["--with-bare"] if overhead else []), capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def ceiling(mech: str, n_eval: int) -> float:
    from dpaudit.audit.stats.threshold_limit import threshold_audit_limit

    if mech == "gaussian":
        return threshold_audit_limit("gaussian", n_eval, delta=DELTA[mech], mu=1.0)["epsilon"]
    return threshold_audit_limit("laplace", n_eval, delta=0.0, epsilon=1.0)["epsilon"]


def table(trial_list, dask: int, seed: int) -> None:
    print("| mechanism | trials/input | where | certified eps | / truth | ceiling | / ceiling | seconds | peak MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for mech in ("gaussian", "laplace"):
        for n in trial_list:
            for where in ([0, dask] if dask else [0]):
                r = in_child(mech, n, "fixed", where, seed)
                c = ceiling(mech, r["n_eval"])
                print(f"| {mech} | {n:.0e} | {'Dask ' + str(where) + ' workers' if where else 'in-process'} | "
                      f"{r['eps']:.4f} | {r['eps'] / TRUTH[mech]:.3f} | {c:.4f} | {r['eps'] / c:.3f} | "
                      f"{r['seconds']:.1f} | {r['peak_mb']:.0f} |", flush=True)


def overhead(trial_list, seed: int) -> None:
    print("| statistic | trials/input | audit s | numpy s | audit / numpy | audit CPU s | numpy CPU s | CPU ratio | "
          "certified eps | winner |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for statistic in ("fixed", "auto"):
        for n in trial_list:
            r = in_child("gaussian", n, statistic, 0, seed, overhead=True)
            b = r["bare"]
            print(f"| {statistic} | {n:.0e} | {r['seconds']:.2f} | {b:.3f} | {r['seconds'] / b:.1f} | {r['cpu']:.2f} | "
                  f"{r['bare_cpu']:.3f} | {r['cpu'] / r['bare_cpu']:.1f} | {r['eps']:.4f} | {r['family']} |", flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trials", type=float, nargs="+", default=[1e5, 1e6, 1e7], help="trials per input")
    p.add_argument("--max-trials", type=float, default=None, help="extend the table by powers of 10 up to this")
    p.add_argument("--dask", type=int, default=0, help="also run on a Dask LocalCluster of this many workers")
    p.add_argument("--overhead", action="store_true", help="only the overhead rows (--overhead-trials)")
    p.add_argument("--overhead-trials", type=float, nargs="+", default=[1e7, 1e8])
    p.add_argument("--seed", type=int, default=30)
    p.add_argument("--one", nargs=5, help=argparse.SUPPRESS)
    p.add_argument("--with-bare", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        mech, n, statistic, dask, seed = args.one
        print(json.dumps(one(mech, int(n), statistic, int(dask), int(seed), overhead=args.with_bare)))
        return 0
    print(f"# load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    if args.overhead:
        overhead([int(n) for n in args.overhead_trials], args.seed)
    else:
        trials = [int(n) for n in args.trials]
        if args.max_trials:
            while trials[-1] * 10 <= args.max_trials:
                trials.append(trials[-1] * 10)
        table(trials, args.dask, args.seed)
    print(f"# load average at end: {os.getloadavg()[0]:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
