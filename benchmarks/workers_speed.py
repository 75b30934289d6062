"""workers=2 against one worker on a DP-SGD audit (issue 30, item 5), in one run.

    python benchmarks/workers_speed.py [--trials 10000 100000] [--repeats 1]

For each trial count: ``audit_optimizer("dp-sgd", trials=N, seed=0)`` on one worker (in this process) and on
``workers=2`` (dpaudit's shared pool: the first call starts it, and its start is timed apart on a warm-up call, as
every later call finds it warm), the speed-up, and a check that both give the same result (``to_dict()``). The
load average is printed before and after: on a shared machine a speed-up needs two free cores.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from dpaudit.audit import audit_optimizer
from dpaudit.core.execution import Execution


def _timed(trials: int, workers: int):
    t0 = time.perf_counter()
    res = audit_optimizer("dp-sgd", trials=trials, seed=0,
                          execution=Execution(workers=workers if workers > 1 else None))
    return res, time.perf_counter() - t0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=1, help="timings per setting (the best is shown)")
    args = parser.parse_args(argv)
    print(f"cores: {os.cpu_count()}, load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    _, start = _timed(200, 2)
    print(f"workers=2 warm-up (pool start + a 200-trial audit): {start:.2f} s")
    print(f"{'trials':>8} {'1 worker s':>11} {'2 workers s':>12} {'speed-up':>9} {'same result':>12}")
    for n in args.trials:
        best = {}
        for w in (1, 2):
            runs = [_timed(n, w) for _ in range(max(args.repeats, 1))]
            best[w] = (runs[0][0], min(t for _, t in runs))
        same = json.dumps(best[1][0].to_dict(), sort_keys=True) == json.dumps(best[2][0].to_dict(), sort_keys=True)
        print(f"{n:>8,} {best[1][1]:>11.2f} {best[2][1]:>12.2f} {best[1][1] / best[2][1]:>8.2f}x {str(same):>12}",
              flush=True)
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
