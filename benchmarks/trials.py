"""Speed: 10^4 trials of DP-SGD (logistic, n = 1000, d = 10, q = 0.1, 100 steps) as one batched run.

Run from the repository root: ``python benchmarks/trials.py [trials]``. Trials are processed in
chunks bounding the (chunk, n) arrays (``dpaudit.optimizers.dp_gd.trial_chunks``); there is no
Python loop over individual trials.
"""

from __future__ import annotations

import sys
import time

from dpaudit.optimizers import make_optimizer
from dpaudit.optimizers.data import make_dense
from dpaudit.optimizers.dp_gd import trial_chunks


def main() -> int:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    n, d, q, steps = 1000, 10, 0.1, 100
    X, y = make_dense(n, d, seed=0)
    opt = make_optimizer("dp-sgd", loss="logistic", steps=steps, sample_rate=q, noise_multiplier=1.0,
                         clip=1.0, step_size=0.5)
    opt.run(X, y, trials=10, seed=0)                         # warm-up
    t0 = time.perf_counter()
    run = opt.run(X, y, trials=trials, seed=1)
    dt = time.perf_counter() - t0
    print("| trials | n | d | q | steps | chunks | seconds | trials/s | epsilon(1e-5) |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| {trials} | {n} | {d} | {q} | {steps} | {len(trial_chunks(trials, n))} | {dt:.2f} | "
          f"{trials / dt:.0f} | {run.claim.epsilon(1e-5):.4f} |")
    print(f"params shape {run.params.shape}; mean of trial means {run.params.mean():.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
