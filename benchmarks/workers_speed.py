"""workers=2 against one worker on a DP-SGD audit (issue 30, item 5), in one run.

    python benchmarks/workers_speed.py [--trials 10000 100000] [--repeats 1] [--pool warm cold]

``workers=N`` is this process plus a shared pool of N - 1 processes (:class:`dpaudit.core.runner.Workers`). For each
trial count: ``audit_optimizer("dp-sgd", trials=N, seed=0)`` on one worker (in this process) and on ``workers=2``,
the speed-up, and a check that both give the same result (``to_dict()``). ``--pool warm``: the shared pool is
started once beforehand (a warm-up call, timed apart), as every call after the first finds it warm; ``--pool cold``:
the pool is shut down before each ``workers=2`` call, which then starts it itself (or, when the call is short, runs
in this process and starts it in the background). The load average is printed before and after: on a shared
machine a speed-up needs two free cores. ``--imports`` also prints what a pool process imports to run a chunk of the
audit (modules and seconds, in a fresh interpreter).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from dpaudit.audit import audit_optimizer
from dpaudit.core.execution import Execution
from dpaudit.core.runner import shutdown_shared_pools

#: what a pool process does for its first chunk of the audit: receive (unpickle) the chunk function and run it
_CHILD = """
import sys, time
t0 = time.perf_counter(); n0 = len(sys.modules)
import pickle, numpy as np
fn = pickle.loads(sys.stdin.buffer.read())
t1 = time.perf_counter()
fn(10, np.random.SeedSequence(0))
t2 = time.perf_counter()
print(len(sys.modules) - n0, round(t1 - t0, 3), round(t2 - t1, 3), "scipy.stats" in sys.modules)
"""


def chunk_imports() -> str:
    """Modules and seconds a fresh interpreter needs to receive and run the evaluation chunk function of the audit."""
    import cloudpickle
    import numpy as np

    from dpaudit.audit.optimizer import OptimizerScores, optimizer_scenario
    from dpaudit.audit.protocol.evaluation import ScoredRunCounts
    from dpaudit.optimizers import make_optimizer

    sc = optimizer_scenario(make_optimizer("dp-sgd"))
    fn = ScoredRunCounts(OptimizerScores(sc["run0"], sc["statistic"]), [np.linspace(-1.0, 1.0, 11)])
    out = subprocess.run([sys.executable, "-c", _CHILD], input=cloudpickle.dumps(fn), capture_output=True, check=True)
    n, unpickle, first, stats = out.stdout.decode().split()
    return f"{n} modules, {unpickle} s to receive the chunk function, {first} s for a 10-trial chunk, " \
           f"scipy.stats imported: {stats}"


def _timed(trials: int, workers: int, cold: bool = False):
    if cold:
        shutdown_shared_pools()
    t0 = time.perf_counter()
    res = audit_optimizer("dp-sgd", trials=trials, seed=0,
                          execution=Execution(workers=workers if workers > 1 else None))
    return res, time.perf_counter() - t0


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=1, help="timings per setting (the best is shown)")
    parser.add_argument("--pool", nargs="+", choices=("warm", "cold"), default=["warm", "cold"])
    parser.add_argument("--imports", action="store_true", help="also measure a pool process's imports")
    args = parser.parse_args(argv)
    print(f"cores: {os.cpu_count()}, load average before: {_load()}")
    if args.imports:
        print("a pool process's first chunk:", chunk_imports())
    _timed(200, 1)  # this process's imports, for both settings
    print(f"{'pool':>5} {'trials':>8} {'1 worker s':>11} {'2 workers s':>12} {'speed-up':>9} {'same result':>12} "
          f"{'load':>14}")
    for mode in args.pool:
        cold = mode == "cold"
        if not cold:
            _, start = _timed(200, 2, cold=True)
            _timed(20_000, 2)  # a call long enough to use the pool: it is started and its processes warm
            print(f"workers=2 warm-up (pool start + two audits): {start:.2f} s + ...")
        for n in args.trials:
            best = {}
            for w in (1, 2):
                runs = [_timed(n, w, cold=cold and w == 2) for _ in range(max(args.repeats, 1))]
                best[w] = (runs[0][0], min(t for _, t in runs))
            same = json.dumps(best[1][0].to_dict(), sort_keys=True) == json.dumps(best[2][0].to_dict(), sort_keys=True)
            print(f"{mode:>5} {n:>8,} {best[1][1]:>11.2f} {best[2][1]:>12.2f} {best[1][1] / best[2][1]:>8.2f}x "
                  f"{str(same):>12} {_load():>14}", flush=True)
    print(f"load average after: {_load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
