"""Audits of DP-FTRL runs: three classic mistakes of correlated-noise training are flagged, the correct
runs are not (issue 28). Prints, per variant, how many of ``--seeds`` audits flag it.

The variants (each a subclass of :class:`dpaudit.optimizers.dp_ftrl.DPFTRL` that changes only its claim,
or only its noise stream):

* ``single``: a 4-epoch run claimed with the single-participation sensitivity (the largest column norm);
* ``bands``: a 32-band strategy (optimised for participations 32 steps apart) run with 16 epochs of 4
  batches -- participations 4 steps apart -- and claimed with the banded formula sqrt(k) ||c||;
* ``blt``: an 8-epoch run of a 3-buffer BLT whose claim was computed on the BLT without its slowest
  buffer (truncated buffers: smaller Toeplitz coefficients, smaller sensitivity);
* ``stream`` (not a mistake for privacy): the noise stream drops the slowest buffer while the claim keeps
  the full BLT: the effective strategy has a smaller sensitivity, the run is more private than claimed.

Audit design: the model has two coordinates, the records' coordinate 0 is zero and l2 = 0, so coordinate
0 of the iterates carries only the canary and the noise; the canary is one extra record of batch 0 with
the Dirac gradient clip * e_0 (steps 0, b, 2b, ...: the worst fixed-epoch pattern for non-negative
Toeplitz strategies); DP-FTRL releases every iterate, so the auditor scores the trace theta_t[0] with the
run's likelihood-ratio statistic (``DPFTRL.canary_statistic``); ``dpaudit.audit_mechanism`` chooses the
threshold on a selection split and certifies on an independent evaluation split at 95%, at the audit's
delta 1e-2 (noise multipliers chosen so that each mistaken claim has mu about 0.5 while the true mu is
about twice that).

Run from the repository root: ``python benchmarks/dp_ftrl_audits.py [--seeds S] [--trials N]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from dpaudit import Gaussian, audit_mechanism
from dpaudit.mechanisms.matrix_factorization import MatrixFactorization
from dpaudit.mechanisms.mf_optimize import optimize_banded_toeplitz
from dpaudit.mechanisms.mf_participation import Participation, mf_sensitivity
from dpaudit.mechanisms.mf_strategies import BLTStrategy
from dpaudit.optimizers.dp_ftrl import DPFTRL

AUDIT_DELTA = 1e-2
STEPS = 64
#: a BLT optimised for single participation (optimize_blt(64, 3), rounded): decays spread over (0, 1)
SINGLE_BLT = BLTStrategy((0.9576, 0.6640, 0.1447), (0.2464, 0.2050, 0.0538), STEPS)


def _without_slowest(s: BLTStrategy) -> BLTStrategy:
    keep = np.argsort(s.buf_decay)[:-1]
    return BLTStrategy(tuple(np.asarray(s.buf_decay)[keep]), tuple(np.asarray(s.output_scale)[keep]), s.steps)


class SingleParticipationClaim(DPFTRL):
    """Mistake 1: a multi-epoch run claimed with the single-participation sensitivity (max column norm)."""

    def step_mechanism(self):
        mech, count = super().step_mechanism()
        return MatrixFactorization(mech.strategy, mech.sigma, Participation.single(), mech.sensitivity), count


class OrthogonalBandsClaim(DPFTRL):
    """Mistake 2: a b-banded strategy run with participations fewer than b steps apart, claimed with the
    banded formula sens = sqrt(k) ||c|| (orthogonal participations, true only for separation >= bands)."""

    def step_mechanism(self):
        mech, count = super().step_mechanism()
        sens = math.sqrt(self.hp["epochs"]) * float(np.linalg.norm(self.strategy.toeplitz())) * self.clip
        return Gaussian(mech.sigma, sens), count


class TruncatedBLTClaim(DPFTRL):
    """Mistake 3: the noise stream runs every buffer of the BLT, the claim's BLT lost its slowest buffer."""

    def step_mechanism(self):
        mech, count = super().step_mechanism()
        return MatrixFactorization(_without_slowest(self.strategy), mech.sigma, self.participation,
                                   mech.sensitivity), count


class TruncatedStream(DPFTRL):
    """Not a privacy mistake: the stream drops the BLT's slowest buffer, the claim keeps the full BLT."""

    def _validate(self):
        super()._validate()
        self.stream_strategy = _without_slowest(self.strategy)

    def _run_chunk(self, X, y, trials, rng, g_c, coord):
        full, self.strategy = self.strategy, self.stream_strategy
        try:
            return super()._run_chunk(X, y, trials, rng, g_c, coord)
        finally:
            self.strategy = full


def variant(label: str):
    """The run of ``label`` (``single``, ``bands``, ``blt``, ``stream``) and, for the mistakes, its correct twin."""
    if label == "single":
        return SingleParticipationClaim(steps=STEPS, epochs=4, strategy="blt", buffers=3, noise_multiplier=2.9)
    if label == "bands":
        wide = optimize_banded_toeplitz(STEPS, 32, Participation.min_sep(32)).strategy
        return OrthogonalBandsClaim(steps=STEPS, epochs=16, strategy=wide, noise_multiplier=8.0)
    if label == "blt":
        return TruncatedBLTClaim(steps=STEPS, epochs=8, strategy=SINGLE_BLT, noise_multiplier=6.0)
    if label == "stream":
        return TruncatedStream(steps=STEPS, epochs=8, strategy=SINGLE_BLT, noise_multiplier=6.0)
    raise ValueError(f"label must be single, bands, blt or stream, got {label!r}")


LABELS = {"single": "single-participation claim of a 4-epoch BLT run",
          "bands": "32-band strategy run with participations 4 steps apart",
          "blt": "BLT claimed without its slowest buffer (8 epochs)",
          "stream": "noise stream without the slowest buffer, full-BLT claim"}


def audit_data(n: int = 16, dim: int = 2):
    """n unit-norm records whose coordinate 0 is zero, with 0/1 labels."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, dim))
    X[:, 0] = 0.0
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, (rng.random(n) < 0.5).astype(float)


def llr_audit(opt, *, trials: int = 10_000, seed=0, n: int = 16, statistic_of=None, delta: float = AUDIT_DELTA):
    """The audit of the module docstring: canary absent (0) against present (1), the run's LLR statistic;
    ``statistic_of``: the optimizer whose noise model the auditor assumes (default ``opt``)."""
    X, y = audit_data(n)
    g = np.array([opt.clip, 0.0])
    stat = (statistic_of or opt).canary_statistic(n)

    def sampler(x, rng, size):
        run = opt.run(X, y, trials=size, seed=int(rng.integers(2 ** 62)), canary_gradient=g if x else None,
                      trace_coordinate=0)
        return run.extra["trace"]

    return audit_mechanism(sampler, 0, 1, epsilon=opt.claim(n).epsilon(delta), delta=delta, trials=trials,
                           statistic=stat, seed=seed)


def rows(labels, seeds: int, trials: int):
    for label in labels:
        opt = variant(label)
        runs = [(LABELS[label], opt)]
        if label != "stream":
            runs.append(("  correct claim of the same run", DPFTRL(**opt.hp)))
        for name, o in runs:
            t0 = time.perf_counter()
            ref = DPFTRL(**o.hp) if label == "stream" else None
            res = [llr_audit(o, trials=trials, seed=s, statistic_of=ref) for s in range(seeds)]
            true_mu = mf_sensitivity(getattr(o, "stream_strategy", o.strategy), o.participation).value / \
                o.hp["noise_multiplier"]
            yield (name, o.step_mechanism()[0].mu, true_mu, res[0].epsilon_claimed,
                   float(np.median([r.epsilon_lower for r in res])), sum(r.violation for r in res), seeds,
                   time.perf_counter() - t0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20, help="audits per variant (default 20)")
    ap.add_argument("--trials", type=int, default=10_000, help="trials per neighbouring input (default 10000)")
    ap.add_argument("--variants", default="single,bands,blt,stream", help="comma list of single, bands, blt, stream")
    a = ap.parse_args(argv)
    print(f"audit delta {AUDIT_DELTA:g}, {a.trials:,} trials per input, confidence 0.95")
    print("| run | claimed mu | true mu | claimed epsilon | median epsilon_lower | flagged | seconds |")
    print("|---|---|---|---|---|---|---|")
    for name, cmu, tmu, ceps, lo, flagged, seeds, sec in rows(a.variants.split(","), a.seeds, a.trials):
        print(f"| {name} | {cmu:.3f} | {tmu:.3f} | {ceps:.3f} | {lo:.3f} | {flagged} of {seeds} | {sec:.1f} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
