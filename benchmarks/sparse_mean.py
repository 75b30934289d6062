"""Sparse mean estimation: error against d at fixed s (Ghazi et al. 2024, Table 1).

Projection mechanism (Gaussian noise, then projection onto the l1 ball of radius L sqrt(s)) versus
the dense Gaussian mechanism (the same noise, no projection), and Gaussian l1-recovery for the
smaller d. Prints mean L2 errors and their ratios to the predicted shapes: (log d)^(1/4) for the
projection (its squared error is <= 2 L sqrt(s) ||xi||_inf ~ sqrt(log d)) and sqrt(d) for the dense one.

Run from the repository root: ``python benchmarks/sparse_mean.py``.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from dpaudit.optimizers import make_optimizer
from dpaudit.optimizers.data import make_sparse_gradient


def main() -> int:
    n, s, eps, delta, trials = 2000, 5, 0.5, 1e-6, 200
    dims = [100, 300, 1000, 3000, 10000, 30000]
    print(f"n = {n}, s = {s}, epsilon = {eps}, delta = {delta}, {trials} trials (l1-recovery: 5 trials, d <= 1000; m >= d falls back to least squares)")
    print("| d | projection err | dense Gaussian err | l1-recovery err | proj/(log d)^(1/4) | dense/sqrt(d) |")
    print("|---|---|---|---|---|---|")
    rows = []
    for d in dims:
        Z = make_sparse_gradient(n, d, s, seed=d)
        proj = make_optimizer("projection", sparsity=s, epsilon=eps, delta=delta)
        run = proj.run(Z, None, trials=trials, seed=1)
        err_p = np.linalg.norm(run.params - run.extra["mean"], axis=1).mean()
        rng = np.random.default_rng(2)
        dense = rng.normal(0.0, run.extra["noise_scale"], size=(trials, d))
        err_d = np.linalg.norm(dense, axis=1).mean()
        if d <= 1000:
            l1 = make_optimizer("l1-recovery", sparsity=s, epsilon=eps, delta=delta).run(Z, None, trials=5, seed=3)
            err_l = f"{np.linalg.norm(l1.params - l1.extra['mean'], axis=1).mean():.4f} (m={l1.extra['m']})"
        else:
            err_l = "-"
        rows.append((d, err_p, err_d))
        print(f"| {d} | {err_p:.4f} | {err_d:.4f} | {err_l} | {err_p / math.log(d) ** 0.25:.4f} | "
              f"{err_d / math.sqrt(d):.5f} |")
    growth_p = rows[-1][1] / rows[0][1]
    growth_d = rows[-1][2] / rows[0][2]
    print(f"d x{dims[-1] // dims[0]}: projection error x{growth_p:.2f} "
          f"((log d)^(1/4) predicts x{(math.log(dims[-1]) / math.log(dims[0])) ** 0.25:.2f}); "
          f"dense error x{growth_d:.2f} (sqrt(d) predicts x{math.sqrt(dims[-1] / dims[0]):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
