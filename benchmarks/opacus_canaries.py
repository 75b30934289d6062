"""What it takes to catch 2x too little noise in DP-SGD with one-run Dirac canaries (issue 18, docs/opacus.md).

The Opacus setting of docs/opacus.md: sigma 0.75 instead of the claimed 1.5, sample rate 0.05, 300 steps, clip
norm 1; Opacus' PRV accountant claims 2.90 at delta 1e-5 for sigma 1.5 (true epsilon of sigma 0.75: 10.82).
A Dirac canary owns one coordinate; its final value (in units of clip norm x step size / batch normaliser,
which cancel in a threshold) is exactly

    included * Binomial(300, 0.05) + N(0, 0.75^2 * 300),

so the one-run audit of a real loop can be run on that exact distribution at any number of canaries m
(``--exact``, the default), and on the real Opacus loop at small m (``--real``, needs torch and opacus);
then many-runs mode (one canary, ``--trainings`` per side) on the same distribution.
Prints, per m, the certified bounds of ``audits`` independent one-run audits (``dpaudit.audit_one_run``,
95%, with its calibration run), their median, how many exceed the claim, and the ceiling.

Run from the repository root: ``python benchmarks/opacus_canaries.py [--m 1000 3000 ...] [--audits 20] [--real]``.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from dpaudit import audit_one_run, audit_scores

CLAIM = (2.900327814591574, 1e-5)  # Opacus 1.6 PRV accountant at sigma 1.5, q 0.05, 300 steps
SIGMA, Q, STEPS = 0.75, 0.05, 300


def exact_run(mask, rng):
    """The final coordinate of each Dirac canary after STEPS noisy steps (units of the clip norm)."""
    m = len(mask)
    return mask * rng.binomial(STEPS, Q, m) + rng.normal(0.0, SIGMA * np.sqrt(STEPS), m)


def real_run(m):
    import torch  # noqa: F401 - the optional extra; ImportError names what is missing

    from dpaudit.interop.opacus import OpacusCanaries

    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 10)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    import torch.nn as nn

    return OpacusCanaries(lambda: nn.Linear(10, 2), X, y, canaries=m, noise_multiplier=SIGMA, max_grad_norm=1.0,
                          batch_size=(500 + m) // 20, steps=STEPS, lr=0.5)


def table(ms, audits, real=False, seed=0):
    print(f"| canaries m | source | audits | median bound | range | caught (> {CLAIM[0]:.2f}) | ceiling | s per audit |")
    print("|---|---|---|---|---|---|---|---|")
    out = []
    for m in ms:
        run = real_run(m) if real else exact_run
        t0 = time.perf_counter()
        b, ceiling = [], None
        for a in range(audits):
            r = audit_one_run(run, canaries=m, claim=CLAIM, seed=np.random.SeedSequence([seed, m, a]))
            b.append(r.epsilon_lower)
            ceiling = r.ceiling
        b = np.array(b)
        sec = (time.perf_counter() - t0) / audits
        caught = int(np.sum(b > CLAIM[0]))
        print(f"| {m:,} | {'real Opacus loop' if real else 'exact distribution'} | {audits} | {np.median(b):.2f} | "
              f"{b.min():.2f}-{b.max():.2f} | {caught} of {audits} | {ceiling:.2f} | {sec:.2f} |", flush=True)
        out.append((m, b, ceiling))
    return out


def many_runs(trainings, seed=0):
    """Many-runs mode on the same exact distribution: one canary, ``n`` trainings with and ``n`` without it,
    the final coordinate as the score, ``audit_scores`` with its default held-out split (first half of each
    side chooses the threshold, second half certifies)."""
    print(f"\n| trainings per side | certified bound (many runs, one canary) | caught (> {CLAIM[0]:.2f}) |")
    print("|---|---|---|")
    for n in trainings:
        rng = np.random.default_rng([seed, n])
        s0 = exact_run(np.zeros(n), rng)
        s1 = exact_run(np.ones(n), rng)
        r = audit_scores(s0, s1, epsilon=CLAIM[0], delta=CLAIM[1])
        print(f"| {n:,} | {r.epsilon_lower:.2f} | {'yes' if r.violation else 'no'} |", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--m", type=int, nargs="+", default=[1_000, 3_000, 10_000, 30_000, 100_000])
    ap.add_argument("--audits", type=int, default=20)
    ap.add_argument("--real", action="store_true", help="the real Opacus loop (torch, opacus) instead")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--trainings", type=int, nargs="*", default=[10_000, 100_000],
                    help="many-runs rows (trainings per side); none to skip")
    a = ap.parse_args(argv)
    table(a.m, a.audits, real=a.real, seed=a.seed)
    if a.trainings:
        many_runs(a.trainings, seed=a.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
