"""Peak client memory of a streamed audit (issue 30, item 1): a fixed-statistic Gaussian audit at growing trials.

    python benchmarks/memory.py [--trials 1e6 1e7 1e8] [--selection-fraction 0.3] [--workers 1]

Each audit, ``audit_mechanism(Gaussian(1).sample, 0, 1, epsilon=inf, delta=1e-5, trials=N, statistic="value",
seed=0)``, runs in a fresh Python process, which reports its peak resident memory (``ru_maxrss``), its wall time
and the certified bound; the table shows them per trial count. The evaluation runs return only counts, so what
grows with ``trials`` is the selection share (``selection_fraction`` of the runs, whose scores fix the thresholds:
8 bytes a run and its working copies); ``--selection-fraction 0.003`` shows the evaluation part alone. The
score-keeping path this replaced needed about 62 bytes per trial per input (issue 30: 1,349 MB at 2 x 10^7).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time


def child(trials: int, fraction: float, workers: int) -> dict:
    """One audit in this process: its peak RSS (MB), seconds and bound."""
    import resource

    from dpaudit.audit import audit_mechanism
    from dpaudit.core.execution import Execution
    from dpaudit.mechanisms import Gaussian

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    res = audit_mechanism(Gaussian(1.0).sample, 0.0, 1.0, epsilon=math.inf, delta=1e-5, trials=trials,
                          statistic="value", seed=0, selection_fraction=fraction,
                          execution=Execution(workers=workers if workers > 1 else None))
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"trials": trials, "selection_fraction": fraction, "workers": workers, "seconds": seconds,
            "peak_rss_mb": peak, "rss_before_mb": base, "epsilon_lower": res.epsilon_lower}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=float, nargs="+", default=[1e6, 1e7, 1e8], help="trials per input")
    parser.add_argument("--selection-fraction", type=float, default=0.3)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(int(args.trials[0]), args.selection_fraction, args.workers)))
        return 0
    print(f"{'trials/input':>14} {'sel. frac.':>10} {'workers':>7} {'peak RSS':>10} {'seconds':>9} {'eps_lower':>10}")
    for n in args.trials:
        cmd = [sys.executable, __file__, "--child", "--trials", str(int(n)), "--selection-fraction",
               str(args.selection_fraction), "--workers", str(args.workers)]
        row = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
        print(f"{row['trials']:>14,} {row['selection_fraction']:>10g} {row['workers']:>7} "
              f"{row['peak_rss_mb']:>7.0f} MB {row['seconds']:>9.1f} {row['epsilon_lower']:>10.4f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
