"""Coverage of the Gaussian Renyi-divergence intervals of ``renyi_divergence`` (issue 11).

The intervals depend on the data only through sufficient statistics, which are simulated
directly (so that n = 10^6 per side costs nothing):

* ``pooled`` (``method="gaussian"``): ||m||^2 = sigma^2 c chi2'(d, lambda) and the pooled sum of
  squares sigma^2 chi2(nu), nu = d (2n - 2), c = 2/n; truth D = alpha c lambda / 2 (alpha = 2;
  the interval scales exactly with alpha, so the order does not matter). Grid d x n x lambda.
* ``known`` (``sigma=`` given): ||m||^2 = sigma^2 c chi2'(d, lambda); grid d x lambda (the law of
  the statistic does not depend on n).
* ``unequal`` (``method="gaussian-unequal"``): ||m||^2 = tau^2 chi2'(d, ||Delta||^2 / tau^2) with
  tau^2 = s_P^2/n + s_Q^2/n, SS_P = s_P^2 chi2(d(n-1)), SS_Q = s_Q^2 chi2(d(n-1)); scenarios
  P = Q, mean and variance differences, large orders, near the finiteness boundary
  s_alpha^2 = alpha s_Q^2 + (1 - alpha) s_P^2 -> 0; grid n x d x scenario.

For every cell: coverage P[lower <= D <= upper], the one-sided miss rates P[lower > D] and
P[upper < D], and the Monte-Carlo standard error. Expected: pooled / known exactly 0.95 for
lambda > 0 (each side beta/2) and 1 - beta/2 = 0.975 at lambda = 0 (the upper end cannot miss);
unequal >= 0.95 (conservative). A cell is flagged ``!`` when it is more than 3 standard errors
from its expectation (below it, for the conservative method).

* ``null``: ``"gaussian-unequal"`` with P = Q, how often the interval contains 0 (exactly
  sqrt(conf) (1 - (1 - sqrt(conf))/2) = 0.9623 at conf = 0.95), 1000 runs per (n, d).

Run: ``python benchmarks/renyi_coverage.py [--part pooled|known|unequal|null|all] [--runs R] [--seed S]``
(default: all parts: 40,000 pooled runs in 80 cells, 20,000 known-sigma runs, 14,400 unequal
runs in 96 cells, 12,000 null runs; about 25 minutes on one core).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from dpaudit.audit.stats.renyi import equal_interval, unequal_interval
from dpaudit.core.gaussian_divergence import renyi_gaussians_moments

CONF = 0.95


def _stat_m2(rng, d, lam):
    return rng.noncentral_chisquare(d, lam) if lam > 0 else rng.chisquare(d)


def _row(label, runs, miss_lo, miss_hi, expect, conservative, seconds):
    cov = 1.0 - (miss_lo + miss_hi) / runs
    se = math.sqrt(expect * (1 - expect) / runs)
    bad = (cov < expect - 3 * se) if conservative else abs(cov - expect) > 3 * se
    return (f"{label}  {runs:>6} {cov:>8.4f} {miss_lo / runs:>8.4f} {miss_hi / runs:>8.4f} {se:>7.4f} "
            f"{expect:>6.3f} {'!' if bad else ' '} {seconds:>6.1f}s"), cov, bad


HEADER = "runs coverage  lo-miss  hi-miss  MC-se  expect   time"


def pooled(runs_total: int, seed: int, known: bool = False):
    ds, lams = (1, 3, 10, 50), (0.0, 1.0, 30.0, 3000.0, 1e6)
    ns = (None,) if known else (5, 20, 1000, 10**6)
    cells = [(d, n, lam) for d in ds for n in ns for lam in lams]
    R = max(1, runs_total // len(cells))
    rng = np.random.default_rng(seed)
    name = "known sigma (noncentral chi-square)" if known else "pooled variance (noncentral F)"
    print(f"== method='gaussian', {name}: {len(cells)} cells x {R} runs, confidence {CONF}")
    print(f"{'d':>3} {'n':>8} {'lambda':>8}  " + HEADER)
    totals = {"pos": [0, 0, 0], "zero": [0, 0, 0]}
    flagged = 0
    for d, n, lam in cells:
        nn = 1000 if n is None else n
        c = 2.0 / nn
        nu = d * (2 * nn - 2)
        truth = 2.0 * c * lam / 2.0
        lo_miss = hi_miss = 0
        t = time.perf_counter()
        for _ in range(R):
            m2 = c * _stat_m2(rng, d, lam)
            if known:
                lo, _, hi, _ = equal_interval(m2, 0.0, nn, nn, d, 2.0, CONF, sigma=1.0)
            else:
                lo, _, hi, _ = equal_interval(m2, rng.chisquare(nu), nn, nn, d, 2.0, CONF)
            lo_miss += lo > truth
            hi_miss += hi < truth
        expect = 1 - (1 - CONF) / 2 if lam == 0 else CONF
        line, cov, bad = _row(f"{d:>3} {n if n else '-':>8} {lam:>8g}", R, lo_miss, hi_miss, expect, False,
                              time.perf_counter() - t)
        flagged += bad
        print(line, flush=True)
        tot = totals["zero" if lam == 0 else "pos"]
        tot[0] += R
        tot[1] += lo_miss
        tot[2] += hi_miss
    for key, expect in (("pos", CONF), ("zero", 1 - (1 - CONF) / 2)):
        r, a, b = totals[key]
        cov = 1 - (a + b) / r
        se = math.sqrt(expect * (1 - expect) / r)
        print(f"overall lambda {'> 0' if key == 'pos' else '= 0'}: {r} runs, coverage {cov:.4f} (expect {expect}, "
              f"MC-se {se:.4f}), lower-miss {a / r:.4f}, upper-miss {b / r:.4f}")
    print(f"cells flagged (> 3 MC-se from the expectation): {flagged} of {len(cells)}")
    return flagged


def _unequal_scenarios():
    """(label, alpha, lambda_true = ||Delta||^2 / tau^2, r = s_P^2 / s_Q^2)."""
    return [
        ("P = Q", 2.0, 0.0, 1.0),
        ("mean only", 2.0, 20.0, 1.0),
        ("var ratio 1.5", 2.0, 0.0, 1.5),
        ("mean + ratio 0.6", 2.0, 20.0, 0.6),
        ("alpha 20, r 1.02", 20.0, 5.0, 1.02),
        ("alpha 100, r 1.005", 100.0, 5.0, 1.005),
        ("near boundary a=2 r=1.9", 2.0, 5.0, 1.9),
        ("near boundary a=20 r=1.05", 20.0, 5.0, 1.05),
    ]


def unequal(runs_per_cell: int, seed: int):
    rng = np.random.default_rng(seed)
    cells = [(n, d, sc) for n in (5, 20, 100, 1000) for d in (1, 3, 50) for sc in _unequal_scenarios()]
    print(f"== method='gaussian-unequal': {len(cells)} cells x {runs_per_cell} runs, confidence {CONF} "
          "(conservative: expect >= 0.95)")
    print(f"{'n':>5} {'d':>3} {'scenario':<26} {'D_alpha':>9} {'s_a^2':>6}  " + HEADER + "  zero-in  lower=max")
    flagged, total, covered = 0, 0, 0
    worst = (2.0, None)
    for n, d, (label, alpha, lam, r) in cells:
        vq, vp = 1.0, r
        tau2 = vp / n + vq / n
        delta2 = lam * tau2
        truth = renyi_gaussians_moments(alpha, delta2, vp, vq, d)
        s_a2 = alpha * vq + (1 - alpha) * vp
        kp = kq = d * (n - 1)
        lo_miss = hi_miss = zero_in = maxed = 0
        t = time.perf_counter()
        for _ in range(runs_per_cell):
            m2 = tau2 * _stat_m2(rng, d, lam)
            lo, _, hi, _ = unequal_interval(m2, vp * rng.chisquare(kp), vq * rng.chisquare(kq), n, n, d, alpha, CONF)
            lo_miss += lo > truth
            hi_miss += hi < truth
            zero_in += lo == 0.0
            maxed += lo == np.finfo(float).max
        line, cov, bad = _row(f"{n:>5} {d:>3} {label:<26} {truth:>9.3g} {s_a2:>6.3f}", runs_per_cell, lo_miss, hi_miss,
                              CONF, True, time.perf_counter() - t)
        flagged += bad
        total += runs_per_cell
        covered += runs_per_cell - lo_miss - hi_miss
        worst = min(worst, (cov, (n, d, label)))
        print(f"{line}  {zero_in / runs_per_cell:>7.3f}  {maxed:>9}", flush=True)
    print(f"overall: {total} runs, coverage {covered / total:.4f}; lowest cell {worst[0]:.4f} at {worst[1]}; "
          f"cells flagged (> 3 MC-se below 0.95): {flagged} of {len(cells)}")
    return flagged


def unequal_null(runs_per_cell: int, seed: int):
    """P = Q (D = 0): how often the unequal-variance interval contains 0 (its lower end is 0).

    Exact value: the region contains (theta, r) = (0, 1) iff the F pivot accepts r = 1
    (probability sqrt(conf)) and the noncentral-F test accepts lambda = 0, which only its lower
    limit can refuse (probability 1 - (1 - sqrt(conf))/2); the pivots are independent.
    """
    rng = np.random.default_rng(seed)
    g = 1 - math.sqrt(CONF)
    exact = (1 - g) * (1 - g / 2)
    print(f"== method='gaussian-unequal', P = Q: P[0 in interval], {runs_per_cell} runs per cell "
          f"(exact {exact:.4f}; nominal {CONF})")
    print(f"{'n':>5} {'d':>3}  {'runs':>6} {'0 in interval':>14} {'MC-se':>7}")
    tot = hit = 0
    for n in (5, 20, 100, 1000):
        for d in (1, 3, 50):
            k = d * (n - 1)
            h = 0
            for _ in range(runs_per_cell):
                m2 = (2.0 / n) * rng.chisquare(d)
                lo, _, _, _ = unequal_interval(m2, rng.chisquare(k), rng.chisquare(k), n, n, d, 2.0, CONF)
                h += lo == 0.0
            tot += runs_per_cell
            hit += h
            print(f"{n:>5} {d:>3}  {runs_per_cell:>6} {h / runs_per_cell:>14.4f} "
                  f"{math.sqrt(exact * (1 - exact) / runs_per_cell):>7.4f}", flush=True)
    print(f"overall: {tot} runs, 0 in interval {hit / tot:.4f} (exact {exact:.4f}, MC-se "
          f"{math.sqrt(exact * (1 - exact) / tot):.4f})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=("pooled", "known", "unequal", "null", "all"), default="all")
    ap.add_argument("--runs", type=int, default=None,
                    help="pooled: total runs (default 40000); known: total (20000); unequal: per cell (150); "
                         "null: per cell (1000)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    t = time.perf_counter()
    if a.part in ("pooled", "all"):
        pooled(a.runs or 40_000, a.seed)
    if a.part in ("known", "all"):
        pooled(a.runs or 20_000, a.seed + 1, known=True)
    if a.part in ("unequal", "all"):
        unequal(a.runs or 150, a.seed + 2)
    if a.part in ("null", "all"):
        unequal_null(a.runs or 1000, a.seed + 3)
    print(f"total time {time.perf_counter() - t:.0f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
