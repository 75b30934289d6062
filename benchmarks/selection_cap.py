"""The capped selection (issue 30 item 2) against the rule before it, on the same evaluation draws.

    python benchmarks/selection_cap.py --trials 10000000 --reps 20

For each replicate: ``0.3 x trials`` selection and ``0.7 x trials`` evaluation scores per input of the Gaussian
(N(0,1) vs N(1,1), delta 1e-5) and Laplace (Lap(0,1) vs Lap(1,1), delta 0) mechanisms. The rule before the cap
chooses the held-out test on every selection score (:func:`dpaudit.audit.stats.thresholds.select_test`); the capped
rule keeps the first :data:`SELECTION_CAP` and counts the rest on :func:`dpaudit.audit.protocol.evaluation.selection_grid`
(as the audit does when the selection is larger than the cap). Both tests are certified on the same evaluation scores
(:func:`dpaudit.audit.stats.thresholds.evaluate_test`, 95 %), so the difference is the threshold choice alone.
Prints the mean and spread of both bounds, the mean paired difference and the selection's seconds and kept bytes.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from dpaudit.audit.protocol.evaluation import selection_grid
from dpaudit.audit.protocol.two_sample import SELECTION_CAP
from dpaudit.audit.stats.thresholds import counts_at, evaluate_test, select_from_counts, select_test

DRAW = {"gaussian": lambda rng, x, n: x + rng.standard_normal(n), "laplace": lambda rng, x, n: x + rng.laplace(0, 1, n)}
DELTA = {"gaussian": 1e-5, "laplace": 0.0}


def replicate(mech: str, trials: int, seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    n_sel = round(0.3 * trials)
    sel = [DRAW[mech](rng, x, n_sel) for x in (0.0, 1.0)]
    ev = [DRAW[mech](rng, x, trials - n_sel) for x in (0.0, 1.0)]
    d, beta = DELTA[mech], 0.05
    t0 = time.perf_counter()
    old = select_test(sel[0], sel[1], delta=d, beta=beta)
    t1 = time.perf_counter()
    kept = [s[:SELECTION_CAP] for s in sel]
    g = selection_grid(kept[0], kept[1])
    le = [counts_at(k, g) + (counts_at(s[SELECTION_CAP:], g) if s.size > SELECTION_CAP else 0) for k, s in zip(kept, sel)]
    new = select_from_counts(g, le[0], le[1], n_sel, n_sel, delta=d, beta=beta)
    t2 = time.perf_counter()
    b_old = evaluate_test(ev[0], ev[1], old["threshold"], old["orientation"], delta=d, beta=beta)["value"]
    b_new = evaluate_test(ev[0], ev[1], new["threshold"], new["orientation"], delta=d, beta=beta)["value"]
    return b_old, b_new, t1 - t0, t2 - t1


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trials", type=float, nargs="+", default=[1e7])
    p.add_argument("--reps", type=int, default=10)
    args = p.parse_args(argv)
    print("| mechanism | trials/input | reps | before the cap: mean (sd) | capped: mean (sd) | mean capped - before "
          "(se) | select s before / capped | kept MB before / capped |")
    print("|---|---|---|---|---|---|---|---|")
    for mech in ("gaussian", "laplace"):
        for n in (int(t) for t in args.trials):
            r = np.array([replicate(mech, n, s) for s in range(args.reps)])
            diff = r[:, 1] - r[:, 0]
            n_sel = round(0.3 * n)
            print(f"| {mech} | {n:.0e} | {args.reps} | {r[:, 0].mean():.4f} ({r[:, 0].std(ddof=1):.4f}) | "
                  f"{r[:, 1].mean():.4f} ({r[:, 1].std(ddof=1):.4f}) | {diff.mean():+.4f} "
                  f"({diff.std(ddof=1) / np.sqrt(args.reps):.4f}) | {r[:, 2].mean():.2f} / {r[:, 3].mean():.2f} | "
                  f"{2 * 8 * n_sel / 1e6:.0f} / {2 * 8 * min(n_sel, SELECTION_CAP) / 1e6:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
