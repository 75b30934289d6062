"""One large audit of the Gaussian mechanism (sigma 1, delta 1e-5) with a fixed statistic, in-process or on a Dask
``LocalCluster``: wall time, client peak resident memory (``ru_maxrss``), the load average, the certified bound.

The statistic is the output itself and the threshold rule a Bonferroni grid fixed in advance (every trial is an
evaluation trial, each chunk returns only counts), so the client holds O(grid + workers) whatever ``--trials``.

    python benchmarks/dask_scale.py --trials 1000000000 --dask 2          # the issue-30 run (long)
    python benchmarks/dask_scale.py --trials 10000000 --dask 2
    python benchmarks/dask_scale.py --trials 10000000                     # in this process
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time

import numpy as np

SIGMA, DELTA = 1.0, 1e-5
#: thresholds fixed before any trial: the optimal threshold of the Gaussian pair (0, 1) at 10^5-10^10 trials
GRID = tuple(np.round(np.arange(2.0, 6.01, 0.25), 2).tolist())
CHUNK = 1_000_000


def sample(x, rng, size):
    return x + SIGMA * rng.standard_normal(size)


def identity(batch):
    return np.asarray(batch, dtype=float).reshape(len(batch), -1)[:, 0]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def audit(trials: int, seed: int, executor=None, progress=None, chunk_size: int = CHUNK):
    from dpaudit import Execution
    from dpaudit.audit import audit_mechanism
    from dpaudit.audit.stats.rules import Bonferroni

    return audit_mechanism(sample, 0.0, 1.0, epsilon=10.0, delta=DELTA, trials=trials, seed=seed,
                           statistic=identity, threshold=Bonferroni(grid=GRID),
                           execution=Execution(executor=executor, chunk_size=chunk_size, progress=progress))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trials", type=int, default=10_000_000, help="trials per input")
    p.add_argument("--seed", type=int, default=30)
    p.add_argument("--dask", type=int, default=0, help="workers of a Dask LocalCluster (0: in this process)")
    p.add_argument("--chunk-size", type=int, default=CHUNK)
    p.add_argument("--every", type=float, default=60.0, help="seconds between progress lines")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    last = [t0]

    def progress(done, total):
        now = time.perf_counter()
        if now - last[0] >= args.every or done == total:
            last[0] = now
            print(f"[{now - t0:8.0f} s] {done:,}/{total:,} trials ({100 * done / total:.1f} %), client RSS peak "
                  f"{peak_rss_mb():.0f} MB, load {os.getloadavg()[0]:.2f}", flush=True)

    if args.dask:
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=args.dask, threads_per_worker=1, dashboard_address=":0",
                          silence_logs=50) as cluster, Client(cluster) as client:
            t0 = time.perf_counter()
            res = audit(args.trials, args.seed, client.get_executor(), progress, args.chunk_size)
    else:
        t0 = time.perf_counter()
        res = audit(args.trials, args.seed, None, progress, args.chunk_size)
    wall = time.perf_counter() - t0
    out = {"trials": args.trials, "executor": f"dask LocalCluster {args.dask} workers" if args.dask else "in-process",
           "epsilon_lower": res.epsilon_lower, "seconds": round(wall, 1), "client_peak_rss_mb": round(peak_rss_mb()),
           "load_1min_end": os.getloadavg()[0], "chunk_size": args.chunk_size}
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
