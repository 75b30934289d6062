"""Sparse mean estimation against d (Ghazi, Guzman, Kamath, Kumar, Manurangsi 2024, Table 1).

Paper's claim (Table 1, mean estimation, approximate DP): the projection mechanism and Gaussian l1-recovery both
reach error L (s ln(d/s) ln(1/delta))^(1/4) / sqrt(epsilon n) (projection: ln d), i.e. only a (log d)^(1/4)
growth in d, against sqrt(d ln(1/delta)) / (epsilon n) for the plain Gaussian mechanism.

Part A (projection mechanism, n = 2000, s = 5, epsilon = 0.5, delta = 1e-6, 200 trials per d): two designs,
``inside`` (``make_sparse_gradient``: the mean is well inside the l1 ball) and ``boundary`` (every record equals
the same s-sparse vector with equal entries L/sqrt(s): the mean has ||mean||_1 = L sqrt(s), ON the l1 ball's
boundary -- the worst case of the projection's analysis). Prints the mean L2 error +- standard error (over
trials), the rate above, error / rate, and the growth of error and rate from the smallest to the largest d.
Verdict: the rate is an O() upper bound; its constant comes from the key lemma ||zhat - mean||^2 <= 2 L sqrt(s)
||xi||_inf (variational inequality of the projection), which with E||xi||_inf <= sigma sqrt(2 ln(2d)) and Jensen gives the explicit bound
E error <= sqrt(2 L sqrt(s) sigma sqrt(2 ln(2d))) (the Table 1 rate with its constant). The claim holds on a
design when the mean error (minus 3 standard errors) stays below that bound at every d. The growth of the error
from the smallest to the largest d is printed against the rate's growth for information (the bound is
asymptotic: below it the error can grow faster while approaching it).

Part B (Gaussian l1-recovery in its regime, d >> m): n = 300, s = 5, epsilon = 0.5, delta = 1e-6, so that the
sketch size m = n eps sqrt(s ln(d/s)/ln(1/delta)) is 200-300 while d runs from 1e3 to 1e5 (at n = 2000, m is
1042-1385 and every d <= 1000 fell back to least squares: that is not the mechanism's regime). Every trial
solves one basis-pursuit LP, exactly, by column generation over HiGHS (``basis_pursuit``: restricted LPs of about
2m columns, priced over all d columns by the dual; ~1 CPU-s at d = 1e3 and ~5 at d = 1e5, against 0.5 and 121 for
the full LP): 20 trials per d for d = 1e3 / 1e4, 10 for 3e4 / 1e5. The projection mechanism and the dense Gaussian
mechanism at the same (n, epsilon, delta) are printed beside it.

Run from the repository root: ``python benchmarks/sparse_mean.py [part]`` (part A, B or both; default both).
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from dpaudit.optimizers import make_optimizer
from dpaudit.optimizers.data import make_sparse_gradient

S, EPS, DELTA, L = 5, 0.5, 1e-6, 1.0


def rate(d, n, log_d_over_s=True):
    lg = math.log(d / S) if log_d_over_s else math.log(d)
    return L * (S * lg * math.log(1 / DELTA)) ** 0.25 / math.sqrt(EPS * n)


def boundary(n, d):
    z = np.zeros((n, d))
    z[:, :S] = L / math.sqrt(S)
    return z


def _ms(v):
    v = np.asarray(v)
    se = v.std(ddof=1) / math.sqrt(v.size) if v.size > 1 else float("nan")
    return v.mean(), se


def part_a():
    n, trials = 2000, 200
    dims = [100, 1000, 10_000]          # n x d records are held densely: d = 1e5 would need 1.6 GB
    print(f"\n## A. projection mechanism: n = {n}, s = {S}, epsilon = {EPS}, delta = {DELTA}, {trials} trials per d; "
          "mean L2 error +- standard error over trials")
    print("| design | d | projection error | rate (s ln d ln(1/delta))^(1/4)/sqrt(eps n) | error / rate | "
          "lemma bound sqrt(2 L sqrt(s) sigma sqrt(2 ln 2d)) | error / lemma bound | dense Gaussian error |")
    print("|---|---|---|---|---|---|---|---|")
    verdict = []
    for design in ("inside", "boundary"):
        rows = []
        for d in dims:
            Z = make_sparse_gradient(n, d, S, seed=d) if design == "inside" else boundary(n, d)
            run = make_optimizer("projection", sparsity=S, epsilon=EPS, delta=DELTA).run(Z, None, trials=trials, seed=1)
            err = np.linalg.norm(run.params - run.extra["mean"], axis=1)
            dense = np.linalg.norm(np.random.default_rng(2).normal(0.0, run.extra["noise_scale"], size=(trials, d)),
                                   axis=1)
            m, se = _ms(err)
            r = rate(d, n, log_d_over_s=False)
            lemma = math.sqrt(2 * L * math.sqrt(S) * run.extra["noise_scale"] * math.sqrt(2 * math.log(2 * d)))
            rows.append((d, m, se, r, m - 3 * se <= lemma))
            print(f"| {design} | {d} | {m:.4f} +- {se:.4f} | {r:.4f} | {m / r:.3f} | {lemma:.4f} | {m / lemma:.3f} | "
                  f"{dense.mean():.3f} |")
        g_err = rows[-1][1] / rows[0][1]
        g_se = g_err * math.hypot(rows[-1][2] / rows[-1][1], rows[0][2] / rows[0][1])
        g_rate = rows[-1][3] / rows[0][3]
        ok = all(row[4] for row in rows)
        verdict.append((design, g_err, g_se, g_rate, ok))
    for design, g_err, g_se, g_rate, ok in verdict:
        print(f"  {design}: error below the lemma bound at every d: {'HOLDS' if ok else 'DOES NOT HOLD'}; "
              f"d x{dims[-1] // dims[0]}: error x{g_err:.3f} +- {g_se:.3f} against rate x{g_rate:.3f}")


def part_b():
    n = 300
    plan = [(1_000, 20), (10_000, 20), (30_000, 10), (100_000, 10)]
    print(f"\n## B. Gaussian l1-recovery at d >> m: n = {n}, s = {S}, epsilon = {EPS}, delta = {DELTA}; "
          "mean L2 error +- standard error over trials (inside design, make_sparse_gradient)")
    print("| d | m | trials | l1-recovery error | CPU s per LP | projection error (50 trials) | dense Gaussian "
          "error (sigma of projection) | rate (s ln(d/s) ln(1/delta))^(1/4)/sqrt(eps n) | l1 error / rate |")
    print("|---|---|---|---|---|---|---|---|---|")
    for d, trials in plan:
        Z = make_sparse_gradient(n, d, S, seed=d)
        t = time.process_time()
        l1 = make_optimizer("l1-recovery", sparsity=S, epsilon=EPS, delta=DELTA).run(Z, None, trials=trials, seed=3)
        per_lp = (time.process_time() - t) / trials
        e1 = np.linalg.norm(l1.params - l1.extra["mean"], axis=1)
        proj = make_optimizer("projection", sparsity=S, epsilon=EPS, delta=DELTA).run(Z, None, trials=50, seed=1)
        ep = np.linalg.norm(proj.params - proj.extra["mean"], axis=1)
        dense = np.linalg.norm(np.random.default_rng(2).normal(0.0, proj.extra["noise_scale"], size=(50, d)), axis=1)
        m1, s1 = _ms(e1)
        mp, sp = _ms(ep)
        r = rate(d, n)
        se1 = f"{s1:.3f}" if trials > 1 else "n/a (1 trial)"
        print(f"| {d} | {l1.extra['m']} | {trials} | {m1:.3f} +- {se1} | {per_lp:.1f} | {mp:.3f} +- {sp:.3f} | "
              f"{dense.mean():.2f} | {r:.3f} | {m1 / r:.2f} |", flush=True)


def main() -> int:
    part = sys.argv[1] if len(sys.argv) > 1 else "AB"
    t0 = time.process_time()
    if "A" in part:
        part_a()
    if "B" in part:
        part_b()
    print(f"total CPU {time.process_time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
