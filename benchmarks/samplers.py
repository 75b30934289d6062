"""Speed of the exact integer samplers and the float-safe continuous samplers beside the peers, in one run (issues 17, 26).

dpaudit's discrete Laplace (rational scale, Canonne-Kamath-Steinke 2020 in integer arithmetic) and discrete
Gaussian samplers, against: numpy's difference of two float geometrics (fast, NOT exact: the float parameter
rounds the distribution) and OpenDP's exact integer samplers (``make_laplace`` / ``make_gaussian`` on a
vector of integers, one call for all draws) when OpenDP is installed. dpaudit's float-safe continuous samplers
(``Laplace.sample``, ``Gaussian.sample``: the exact output rounded onto a 2^-20 grid, sampled exactly;
``dpaudit.mechanisms.float_safe``) against numpy's float ``laplace`` and ``normal`` (what the textbook
samplers ``sample_textbook`` call; they leak through their low-order bits). Prints draws per second (best of
``--repeats``, wall clock) for ``--draws`` draws per call (``--draws 1000000`` for the numbers of
docs/floating-point.md).

Run from the repository root: ``python benchmarks/samplers.py [--draws N] [--repeats R]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from dpaudit import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace


def _best(fn, repeats):
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def rows(draws: int, repeats: int):
    rng = np.random.default_rng(0)
    cases = []
    for t in (1.0, 7 / 3, 20.0):
        m = DiscreteLaplace(t)
        cases.append((f"dpaudit DiscreteLaplace(scale {t:.4g}), exact", lambda m=m: m.sample(0, rng, draws)))
        p = 1.0 - math.exp(-1.0 / t)
        cases.append((f"numpy geometric difference (scale {t:.4g}), float, not exact",
                      lambda p=p: rng.geometric(p, draws) - rng.geometric(p, draws)))
    for s in (1.0, 5.0):
        g = DiscreteGaussian(s)
        cases.append((f"dpaudit DiscreteGaussian(sigma {s:g}), exact", lambda g=g: g.sample(0, rng, draws)))
    lap, gau = Laplace(1.0), Gaussian(1.0)
    cases += [("dpaudit Laplace(1).sample, float-safe (exact, grid 2^-20), value 0",
               lambda: lap.sample(0.0, rng, draws)),
              ("dpaudit Laplace(1).sample, float-safe, value 0.1 (off the grid)", lambda: lap.sample(0.1, rng, draws)),
              ("numpy laplace(0, 1), float, leaks", lambda: rng.laplace(0.0, 1.0, draws)),
              ("dpaudit Gaussian(1).sample, float-safe (exact, grid 2^-20), value 0",
               lambda: gau.sample(0.0, rng, draws)),
              ("dpaudit Gaussian(1).sample, float-safe, value 0.1 (off the grid)", lambda: gau.sample(0.1, rng, draws)),
              ("numpy normal(0, 1), float, leaks", lambda: rng.normal(0.0, 1.0, draws))]
    try:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        dom = dp.vector_domain(dp.atom_domain(T=int))
        for t in (1.0, 20.0):
            meas = dp.m.make_laplace(dom, dp.l1_distance(T=int), scale=t)
            cases.append((f"OpenDP make_laplace on ints (scale {t:g}), exact", lambda meas=meas: meas([0] * draws)))
        meas = dp.m.make_gaussian(dom, dp.l2_distance(T=int), scale=5.0)
        cases.append(("OpenDP make_gaussian on ints (sigma 5), exact", lambda meas=meas: meas([0] * draws)))
    except Exception as exc:  # noqa: BLE001 - an optional peer: any failure only drops its rows
        cases.append((f"OpenDP: not run ({type(exc).__name__}: {exc})", None))
    for name, fn in cases:
        if fn is None:
            yield name, None, None
            continue
        sec, out = _best(fn, repeats)
        assert len(out) == draws
        yield name, draws / sec, sec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    print(f"| sampler | draws per second | seconds per {a.draws:,} draws |")
    print("|---|---|---|")
    for name, rate, sec in rows(a.draws, a.repeats):
        print(f"| {name} | - | - |" if rate is None else f"| {name} | {rate:,.0f} | {sec:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
