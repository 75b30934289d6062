"""Accuracy of dpaudit.core.noncentral against mpmath over the legal domain (issue 11).

Random points: d in {1, 2, 3, 5, 10, 25, 50}, nu log-uniform in [1, 1e8], lambda = 0 or
log-uniform in [1e-3, LAMBDA_MAX], and the statistic z in [-40, 40] rough standard deviations
from the centre (below 0: a geometric fraction of the mean), so both far tails are included.
Reference: the multiple-precision Poisson series of tests/support/noncentral.py (its cost
grows like sqrt(lambda)); plus a few huge-lambda points (1e9 .. 1e12) against quadrature of the
Bessel density. Reported per family, method regime (series / quadrature) and tail: the number
of points, the worst relative error where the reference is >= 1e-20 and the worst absolute error
below, and the evaluation time.

Run: ``python benchmarks/noncentral_accuracy.py [--points N] [--lambda-max L] [--seed S]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests.support
from dpaudit.core import noncentral as N  # noqa: E402
from tests.support import noncentral as R  # noqa: E402


def _point(rng, lam_max):
    d = int(rng.choice([1, 2, 3, 5, 10, 25, 50]))
    nu = float(np.round(10 ** rng.uniform(0, 8)))
    lam = 0.0 if rng.random() < 0.1 else float(10 ** rng.uniform(-3, math.log10(lam_max)))
    z = float(rng.uniform(-40, 40))
    return d, nu, lam, z


def _x_ncx2(d, lam, z):
    m, sd = lam + d, math.sqrt(2 * d + 4 * lam)
    x = m + z * sd
    return x if x > 0 else m * 10.0 ** (z / 4)


def _x_ncf(d, nu, lam, z):
    m = (lam + d) / d * (nu / (nu - 2) if nu > 2 else 1.0)
    sd = math.sqrt(2 * d + 4 * lam) / d + m * math.sqrt(2.0 / nu)
    x = m + z * sd
    return x if x > 0 else m * 10.0 ** (z / 4)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=int, default=400)
    ap.add_argument("--lambda-max", type=float, default=1e7, dest="lam_max")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    rng = np.random.default_rng(a.seed)
    stats = {}

    def record(key, ours, ref, dt):
        ref = float(ref)
        s = stats.setdefault(key, {"n": 0, "rel": 0.0, "abs": 0.0, "t": 0.0, "nan": 0})
        s["n"] += 1
        s["t"] += dt
        if not math.isfinite(ours):
            s["nan"] += 1
        elif ref >= 1e-20:
            s["rel"] = max(s["rel"], abs(ours - ref) / ref)
        else:
            s["abs"] = max(s["abs"], abs(ours - ref))

    t0 = time.perf_counter()
    for _ in range(a.points):
        d, nu, lam, z = _point(rng, a.lam_max)
        regime = "series" if lam <= N.SERIES_MAX_NC else "quadrature"
        x = _x_ncf(d, nu, lam, z)
        cdf, sf = R.series_ncf(x, d, nu, lam)
        for name, fn, ref in (("cdf", N.ncf_cdf, cdf), ("sf", N.ncf_sf, sf)):
            t = time.perf_counter()
            v = fn(x, d, nu, lam)
            record(("ncf", regime, name), v, ref, time.perf_counter() - t)
        x = _x_ncx2(d, lam, z)
        cdf, sf = R.series_ncx2(x, d, lam)
        for name, fn, ref in (("cdf", N.ncx2_cdf, cdf), ("sf", N.ncx2_sf, sf)):
            t = time.perf_counter()
            v = fn(x, d, lam)
            record(("ncx2", regime, name), v, ref, time.perf_counter() - t)
    huge = [("ncx2", 1, None, 1e9, 0.0), ("ncx2", 3, None, 1e10, -3.0), ("ncx2", 7, None, 1e12, 2.0),
            ("ncx2", 49, None, 1e12, -1.0), ("ncx2", 2, None, 1e12, 4.0),
            ("ncf", 1, 5.0, 1e10, 0.5), ("ncf", 3, 1e6, 1e12, -2.0), ("ncf", 1, 1e8, 1e12, 3.0),
            ("ncf", 3, 60.0, 1e9, -4.0), ("ncf", 25, 1e8, 1e11, 1.5)]
    for fam, d, nu, lam, z in huge:
        if fam == "ncx2":
            x = _x_ncx2(d, lam, z)
            cdf, sf = R.bessel_ncx2(x, d, lam)
            pairs = (("cdf", lambda: N.ncx2_cdf(x, d, lam), cdf), ("sf", lambda: N.ncx2_sf(x, d, lam), sf))
        else:
            x = _x_ncf(d, nu, lam, z)
            cdf, sf = R.bessel_ncf(x, d, nu, lam)
            pairs = (("cdf", lambda: N.ncf_cdf(x, d, nu, lam), cdf), ("sf", lambda: N.ncf_sf(x, d, nu, lam), sf))
        for name, fn, ref in pairs:
            t = time.perf_counter()
            v = fn()
            record((fam, "quadrature, lambda >= 1e9 (Bessel ref.)", name), v, ref, time.perf_counter() - t)
    print(f"noncentral chi-square / F vs mpmath: {a.points} random points (lambda <= {a.lam_max:g}) "
          f"+ {len(huge)} huge-lambda points, seed {a.seed}")
    print(f"{'family':<6} {'regime':<42} {'tail':<4} {'points':>6} {'max rel err':>12} {'max abs err':>12} "
          f"{'NaN':>4} {'mean time':>10}")
    for key in sorted(stats):
        s = stats[key]
        print(f"{key[0]:<6} {key[1]:<42} {key[2]:<4} {s['n']:>6} {s['rel']:>12.2e} {s['abs']:>12.2e} {s['nan']:>4} "
              f"{s['t'] / s['n'] * 1e3:>8.2f}ms")
    print("(relative error where the reference value is >= 1e-20, absolute error below; claim 1e-9 / 1e-25)")
    print(f"total time {time.perf_counter() - t0:.0f}s")
    ok = all(s["rel"] <= 1e-9 and s["abs"] <= 1e-25 and s["nan"] == 0 for s in stats.values())
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
