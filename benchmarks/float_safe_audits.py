"""dpaudit's own continuous samplers under dpaudit's default audit (issue 26, item 3).

``Laplace(b).sample`` and ``Gaussian(sigma).sample`` are float-safe (``dpaudit.mechanisms.float_safe``):
the exact mechanism's output rounded onto a power-of-two grid, sampled exactly, so they satisfy the
mechanisms' own curves. This script measures what the default audit (``statistic="auto"``, the
bit-level ``float-bits`` family included) says about them, against the textbook float samplers
(``sample_textbook``) on the same seeds:

* ``rate``: the false-alarm rate (verdict "violation") over ``--seeds`` seeds at ``--trials`` runs per
  input, with its two-sided 95% Clopper-Pearson interval, per mechanism;
* ``inputs``: the same at several input pairs (off the grid, large, negative, vector-valued);
* ``big``: a few seeds at ``--big-trials`` (10^6) runs per input;
* ``power``: the certified lower bound of ``statistic="auto-real"`` (real-valued attacks only) at
  ``--power-trials`` runs, float-safe against textbook sampler on the same seeds (the rounding onto the
  grid must not cost the real-valued attacks their power).

Run from the repository root: ``nice -n 10 python benchmarks/float_safe_audits.py [--what rate,inputs,big,power]``.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from scipy import stats

import dpaudit
from dpaudit.conversions import gaussian_epsilon


def _cases():
    lap = dpaudit.Laplace(1.0)
    out = [("Laplace(1)", lap, 1.0, 0.0)]
    for sigma in (1.0, 4.0):
        g = dpaudit.Gaussian(sigma)
        out.append((f"Gaussian({sigma:g})", g, gaussian_epsilon(sigma, 1e-5), 1e-5))
    return out


def _cp(k: int, n: int) -> tuple[float, float]:
    lo = 0.0 if k == 0 else float(stats.beta.ppf(0.025, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(0.975, k + 1, n - k))
    return lo, hi


def _audit(sampler, x, xp, eps, delta, trials, seed, statistic="auto"):
    return dpaudit.audit_mechanism(sampler, x, xp, epsilon=eps, delta=delta, trials=trials, seed=seed,
                                   statistic=statistic)


def rate_rows(seeds: int, trials: int, pairs, textbook_seeds: int):
    """(mechanism, sampler, inputs, violations, seeds, CP interval, max certified, seconds) rows."""
    for name, mech, eps, delta in _cases():
        for x, xp in pairs:
            for label, sampler, n in (("sample (float-safe)", mech.sample, seeds),
                                      ("sample_textbook", mech.sample_textbook, textbook_seeds)):
                if n == 0:
                    continue
                t0 = time.perf_counter()
                lows = [_audit(sampler, x, xp, eps, delta, trials, s) for s in range(n)]
                k = sum(r.violation for r in lows)
                yield (name, label, f"{_fmt(x)} vs {_fmt(xp)}", eps, delta, k, n, _cp(k, n),
                       max(r.epsilon_lower for r in lows), time.perf_counter() - t0)


def power_rows(seeds: int, trials: int):
    for name, mech, eps, delta in _cases():
        safe = [_audit(mech.sample, 0.0, 1.0, eps, delta, trials, s, "auto-real").epsilon_lower for s in range(seeds)]
        text = [_audit(mech.sample_textbook, 0.0, 1.0, eps, delta, trials, s, "auto-real").epsilon_lower
                for s in range(seeds)]
        yield name, eps, delta, safe, text


def _fmt(x) -> str:
    a = np.asarray(x)
    return np.array2string(a, separator=", ") if a.ndim else f"{float(a):.10g}"


PAIRS_RATE = [(0.0, 1.0)]
PAIRS_INPUTS = [(0.1, 1.1), (1e6, 1e6 + 1.0), (-3.7, -2.7), (np.zeros(3), np.array([1.0, 0.0, 0.0]))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--what", default="rate,inputs,big,power", help="comma-separated: rate, inputs, big, power")
    ap.add_argument("--seeds", type=int, default=200, help="seeds of the false-alarm rate (seeds 0..N-1)")
    ap.add_argument("--trials", type=int, default=20_000)
    ap.add_argument("--textbook-seeds", type=int, default=20, help="seeds of the textbook samplers' rows")
    ap.add_argument("--input-seeds", type=int, default=20, help="seeds per input pair of the 'inputs' rows")
    ap.add_argument("--big-seeds", type=int, default=3)
    ap.add_argument("--big-trials", type=int, default=1_000_000)
    ap.add_argument("--power-seeds", type=int, default=10)
    ap.add_argument("--power-trials", type=int, default=100_000)
    a = ap.parse_args(argv)
    what = set(a.what.split(","))
    head = ("| mechanism | sampler | inputs | claim (eps, delta) | violations | seeds | rate 95% CP | "
            "largest certified | seconds |\n|---|---|---|---|---|---|---|---|---|")
    todo = []
    if "rate" in what:
        todo.append((a.seeds, a.trials, PAIRS_RATE, a.textbook_seeds))
    if "inputs" in what:
        todo.append((a.input_seeds, a.trials, PAIRS_INPUTS, 0))
    if "big" in what:
        todo.append((a.big_seeds, a.big_trials, PAIRS_RATE, 0))
    for seeds, trials, pairs, tb in todo:
        print(f"\n{trials:,} runs per input, default statistic 'auto'\n\n{head}", flush=True)
        for name, label, inp, eps, delta, k, n, (lo, hi), best, sec in rate_rows(seeds, trials, pairs, tb):
            print(f"| {name} | {label} | {inp} | ({eps:.4g}, {delta:g}) | {k} | {n} | [{lo:.3f}, {hi:.3f}] | "
                  f"{best:.3f} | {sec:.0f} |", flush=True)
    if "power" in what:
        print(f"\n{a.power_trials:,} runs per input, statistic 'auto-real', seeds 0..{a.power_seeds - 1}\n\n"
              "| mechanism | claim (eps, delta) | float-safe: mean (min, max) certified | textbook: mean (min, max) "
              "certified |\n|---|---|---|---|", flush=True)
        for name, eps, delta, safe, text in power_rows(a.power_seeds, a.power_trials):
            print(f"| {name} | ({eps:.4g}, {delta:g}) | {np.mean(safe):.4f} ({min(safe):.4f}, {max(safe):.4f}) | "
                  f"{np.mean(text):.4f} ({min(text):.4f}, {max(text):.4f}) |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
