"""Matrix-factorization mechanisms: strategy error, optimisation time and accounting time beside
jax_privacy's, in one run (issue 28).

Sections (``--sections``, default all):

* ``strategies``: for each ``--steps`` n and participation (single; ``--epochs`` fixed-order epochs),
  dpaudit's optimised banded Toeplitz (``--bands``) and BLT (``--buffers``) strategies against
  jax_privacy 2.0's ``toeplitz.optimize_banded_toeplitz`` and ``buffered_toeplitz.optimize`` (same n,
  bands / buffers and schema; jax's BLT is optimised for min-separation n/epochs with at most epochs
  participations, whose worst pattern for such strategies is the fixed-epoch one): the loss
  sens(C)^2 x mean prefix-sum error of each (evaluated by dpaudit on both), the ratio, and the seconds
  each optimiser took; then every strategy at the same (epsilon, delta) beside DP-SGD's identity and the
  binary tree (RMSE of the prefix sums per unit clip);
* ``sensitivity``: seconds of the multi-participation sensitivity (dense min-separation bound, fixed
  epoch, Toeplitz min-separation) in dpaudit and jax_privacy, and the largest relative difference;
* ``accounting``: the banded run under cyclic Poisson sampling (PLD, exact reduction) with dpaudit's
  Monte Carlo statement of the same pair; b-min-separation sampling (no PLD known) by dpaudit's and
  jax_privacy's Monte Carlo estimates of delta; and MMCC on a small banded strategy with Poisson sampling.

jax_privacy is optional: without it its columns read "n/a". Run from the repository root:
``python benchmarks/matrix_mechanisms.py [--steps 256,2000] [--sections strategies,accounting]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from dpaudit.accounting.matrix_mechanism import banded_cyclic_poisson, compare_strategies
from dpaudit.accounting.mmcc_bound import mmcc
from dpaudit.accounting.monte_carlo import (
    BandedMinSepLosses,
    PoissonGaussianLosses,
    loss_samples,
    monte_carlo_delta,
    monte_carlo_epsilon,
)
from dpaudit.mechanisms.matrix_factorization import MatrixFactorization
from dpaudit.mechanisms.mf_optimize import optimize_banded_toeplitz, optimize_blt, strategy_error
from dpaudit.mechanisms.mf_participation import Participation, mf_sensitivity
from dpaudit.mechanisms.mf_strategies import BandedToeplitz, BLTStrategy

SECTIONS = ("strategies", "sensitivity", "accounting")
#: epsilons of the Monte Carlo delta comparison
EPS_MC = (0.5, 1.0, 2.0)


def _jax():
    """(jax, jax_privacy.matrix_factorization, monte_carlo modules, batch_selection) or None."""
    try:
        import jax

        jax.config.update("jax_enable_x64", True)
        from jax_privacy import batch_selection
        from jax_privacy.experimental.monte_carlo import delta_calculation, sample_generation
        from jax_privacy.matrix_factorization import buffered_toeplitz, sensitivity, toeplitz
    except Exception as exc:  # noqa: BLE001 - an optional peer: any failure only drops its columns
        print(f"(jax_privacy not available: {type(exc).__name__}: {exc})")
        return None
    return {"toeplitz": toeplitz, "blt": buffered_toeplitz, "sensitivity": sensitivity,
            "batch_selection": batch_selection, "mc_delta": delta_calculation, "mc_samples": sample_generation}


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def strategies(steps_list, epochs, bands, buffers, epsilon, delta, J):
    print("\n## Optimised strategies: loss sens^2 x mean prefix-sum error (lower is better)\n")
    print("| n | participation | strategy | dpaudit loss | jax_privacy loss | ratio | dpaudit s | jax_privacy s |")
    print("|---|---|---|---|---|---|---|---|")
    tables = []
    for n in steps_list:
        for part in (Participation.single(), Participation.fixed_epoch(epochs)):
            if part.kind == "fixed_epoch" and n % epochs:
                continue
            k, sep = part.count(n), part.separation_in(n)
            nb = min(bands, sep)
            band, t_band = _timed(lambda: optimize_banded_toeplitz(n, nb, part))
            blt, t_blt = _timed(lambda: optimize_blt(n, buffers, part))
            ours = {"banded": (band.strategy, t_band), "blt": (blt.strategy, t_blt)}
            theirs = {"banded": (None, math.nan), "blt": (None, math.nan)}
            if J is not None:
                coef, t = _timed(lambda: np.asarray(J["toeplitz"].optimize_banded_toeplitz(n, nb)))
                theirs["banded"] = (BandedToeplitz(tuple(coef), n), t)
                b, t = _timed(lambda: J["blt"].optimize(n=n, min_sep=sep if k > 1 else 1, max_participations=k,
                                                         error="mean", min_buffers=buffers, max_buffers=buffers))
                theirs["blt"] = (BLTStrategy(tuple(np.asarray(b.buf_decay)), tuple(np.asarray(b.output_scale)), n), t)
            for kind in ("banded", "blt"):
                s_o, t_o = ours[kind]
                s_j, t_j = theirs[kind]
                l_o = strategy_error(s_o, part).mean
                l_j = strategy_error(s_j, part).mean if s_j is not None else math.nan
                label = f"{kind} ({nb} bands)" if kind == "banded" else f"blt ({buffers} buffers)"
                print(f"| {n:,} | {part.describe()} | {label} | {l_o:.6g} | {l_j:.6g} | {l_o / l_j:.6f} | {t_o:.2f} | "
                      f"{t_j:.2f} |", flush=True)
            tables.append((n, part, {"banded (dpaudit)": band.strategy, "blt (dpaudit)": blt.strategy}))
    print(f"\n## At the same privacy: (epsilon, delta) = ({epsilon:g}, {delta:g}), no amplification\n")
    print("| n | participation | strategy | sens(C) | noise multiplier | RMSE | max error | RMSE / DP-SGD |")
    print("|---|---|---|---|---|---|---|---|")
    for n, part, strats in tables:
        try:
            rows = compare_strategies(strats, part, epsilon, delta, include_tree=n <= 4096)
        except ValueError as exc:
            print(f"| {n:,} | {part.describe()} | not compared: {exc} | | | | | |")
            continue
        for r in rows:
            print(f"| {n:,} | {part.describe()} | {r.name} | {r.sensitivity:.4g} | {r.sigma:.4g} | {r.rmse:.4g} | "
                  f"{r.max_error:.4g} | {r.ratio_to_identity:.3f} |", flush=True)


def sensitivity(n, J):
    print(f"\n## Multi-participation sensitivity, n = {n}: seconds and agreement\n")
    print("| case | dpaudit value | dpaudit s | jax_privacy value | jax_privacy s | relative difference |")
    print("|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    C = np.tril(rng.uniform(0, 1, (n, n)))
    coefs = np.cumprod(np.r_[1.0, (2 * np.arange(1, n) - 1) / (2 * np.arange(1, n))])
    cases = [
        ("dense, min separation n/8 (Alg. 4 bound)", lambda: mf_sensitivity(C, Participation.min_sep(n // 8)).value,
         lambda: J["sensitivity"].get_min_sep_sensitivity_upper_bound(C, n // 8)),
        ("dense, 8 fixed epochs", lambda: mf_sensitivity(C, Participation.fixed_epoch(8)).value,
         lambda: J["sensitivity"].fixed_epoch_sensitivity(C, 8)),
        ("Toeplitz (1-x)^-1/2, min separation 7", lambda: mf_sensitivity(
            BandedToeplitz(tuple(coefs), n, False), Participation.min_sep(7)).value,
         lambda: math.sqrt(J["toeplitz"].minsep_sensitivity_squared(coefs, 7, n=n))),
    ]
    for name, ours, theirs in cases:
        v_o, t_o = _timed(ours)
        if J is None:
            print(f"| {name} | {v_o:.12g} | {t_o:.3f} | n/a | n/a | n/a |")
            continue
        v_j, t_j = _timed(lambda: float(theirs()))
        print(f"| {name} | {v_o:.12g} | {t_o:.3f} | {v_j:.12g} | {t_j:.3f} | {abs(v_o - v_j) / v_j:.2e} |", flush=True)


def accounting(n, bands, sigma, q, samples, J, mc_sigma=4.0):
    print("\n## Amplified accounting\n")
    print("| setting | method | value | seconds |")
    print("|---|---|---|---|")
    band = optimize_banded_toeplitz(n, bands, Participation.min_sep(bands)).strategy
    amp = banded_cyclic_poisson(band, sigma, q)
    d, d_mc = 1e-5, 1e-3  # Monte Carlo needs about log(1/beta)/delta samples: it is shown at 1e-3
    from dpaudit import PLDAccountant

    setting = f"{bands}-banded, n = {n}, cyclic Poisson q = {q:g}, sigma = {sigma:g}"
    un = MatrixFactorization(band, sigma, Participation.min_sep(bands))
    for dd in (d, d_mc):
        eps, t = _timed(lambda: amp.epsilon(dd))
        print(f"| {setting} | PLD of {amp.count} x subsampled Gaussian (Thm. 4; exact: {amp.exact}) | "
              f"epsilon({dd:g}) = {eps:.4f} | {t:.2f} |")
        print(f"| {setting} | unamplified Gaussian, sens(C) = {un.strategy_sensitivity.value:.4g} | "
              f"epsilon({dd:g}) = {PLDAccountant().compose(un).epsilon(dd):.4f} | - |")
    pair = PoissonGaussianLosses(q, 1.0 / sigma, amp.count)
    mc, t = _timed(lambda: monte_carlo_epsilon(pair, d_mc, samples=samples, confidence=0.95, seed=0))
    print(f"| {setting} | dpaudit Monte Carlo, {samples:,} samples per side | {mc.statement()}; estimate "
          f"{mc.estimate:.4f} | {t:.2f} |", flush=True)
    # b-min-separation sampling: Monte Carlo only (dpaudit and jax_privacy on the same pair)
    c = np.asarray(band.coefs)
    p = q
    ms = BandedMinSepLosses(tuple(c), mc_sigma, bands, p, n)
    (lp, lq), t = _timed(lambda: loss_samples(ms, samples, seed=1))
    setting = f"{bands}-banded, n = {n}, b-min-sep sampling p = {p:g}, sigma = {mc_sigma:g}"
    for e in EPS_MC:
        r = monte_carlo_delta(None, e, losses=(lp, lq), confidence=0.95)
        print(f"| {setting} | dpaudit Monte Carlo (both directions) | delta({e:g}) estimate {r.estimate:.4g}; "
              f"<= {r.delta:.4g} with confidence 0.95 | {t if e == EPS_MC[0] else 0:.2f} |", flush=True)
    if J is not None:
        strat = J["batch_selection"].BMinSepSampling(sampling_prob=p, iterations=n, min_sep=bands)
        (jp, _), t = _timed(lambda: J["mc_samples"].get_privacy_loss_sample(strat, mc_sigma, c, seed=2,
                                                                              num_samples=samples))
        (jq, _), t2 = _timed(lambda: J["mc_samples"].get_privacy_loss_sample(strat, mc_sigma, c, seed=3,
                                                                               positive_sample=False,
                                                                               num_samples=samples))
        for e in EPS_MC:
            dj = max(J["mc_delta"].delta_from_epsilon_and_samples(e, jp), J["mc_delta"].delta_from_epsilon_and_samples(e, jq))
            print(f"| {setting} | jax_privacy Monte Carlo (both directions) | delta({e:g}) estimate {dj:.4g} | "
                  f"{t + t2 if e == EPS_MC[0] else 0:.2f} |", flush=True)
    small_n = min(n, 64)
    small = optimize_banded_toeplitz(small_n, 4, Participation.min_sep(4)).strategy
    b, t = _timed(lambda: mmcc(small, 4.0, 0.05))
    from dpaudit import PLDAccountant
    e_mm, t2 = _timed(lambda: b.epsilon(d))
    un = PLDAccountant().compose(MatrixFactorization(small, 4.0, Participation.min_sep(1))).epsilon(d)
    setting = f"4-banded, n = {small_n}, Poisson q = 0.05 every step, sigma = 4"
    print(f"| {setting} | MMCC (certified, slack 1e-8) | epsilon({d:g}) = {e_mm:.4f} | {t + t2:.2f} |")
    print(f"| {setting} | unamplified (every step) | epsilon({d:g}) = {un:.4f} | - |", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", default="256,2000", help="comma list of n for the strategy section")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--bands", type=int, default=32)
    ap.add_argument("--buffers", type=int, default=4)
    ap.add_argument("--epsilon", type=float, default=8.0)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--sensitivity-steps", type=int, default=512, dest="sens_n")
    ap.add_argument("--accounting-steps", type=int, default=512, dest="acc_n")
    ap.add_argument("--samples", type=int, default=200_000, help="Monte Carlo samples per direction")
    ap.add_argument("--mc-sigma", type=float, default=4.0, dest="mc_sigma",
                    help="noise multiplier of the b-min-separation Monte Carlo comparison (default 4)")
    ap.add_argument("--sections", default=",".join(SECTIONS))
    ap.add_argument("--no-jax", action="store_true", help="skip the jax_privacy columns")
    a = ap.parse_args(argv)
    sections = a.sections.split(",")
    bad = [s for s in sections if s not in SECTIONS]
    if bad:
        ap.error(f"--sections must be a comma list of {SECTIONS}, got {bad}")
    J = None if a.no_jax else _jax()
    if "strategies" in sections:
        strategies([int(s) for s in a.steps.split(",")], a.epochs, a.bands, a.buffers, a.epsilon, a.delta, J)
    if "sensitivity" in sections:
        sensitivity(a.sens_n, J)
    if "accounting" in sections:
        accounting(a.acc_n, min(a.bands, a.acc_n), 1.0, 0.1, a.samples, J, a.mc_sigma)
    return 0


if __name__ == "__main__":
    sys.exit(main())
