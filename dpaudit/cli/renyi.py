"""``dpaudit renyi``: analytic vs empirical Renyi divergence of noisy GD on the linear instance.

    dpaudit renyi [--steps K] [--alpha A] [--trials N] [--step-size ETA] [--sigma S] [--n N]
                  [--method M] [--seed S] [--plot FILE] [--json] [--workers N | --scheduler ADDRESS]

Runs noisy GD (hidden state) on the squared-loss neighbouring datasets of Chourasia et al.
(seed-theorems.md A.5) and prints, for each number of steps and order alpha, the estimated
D_alpha of the last iterates with its confidence interval beside the exact value, the Theorem 1
upper bound, the Theorem 2 lower bound and the composition bound. ``--steps`` and ``--alpha``
take one value or a comma-separated list; a single K expands to a range of steps up to K.
``--workers N`` / ``--scheduler ADDRESS`` run the simulations on N processes / a Dask cluster,
with the same rows as in one process.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math

from dpaudit.cli._args import SEED_MAX, add_executor_arguments, check_executor_arguments, count, executor_from_args


def _ints(text: str) -> list[int]:
    """Comma-separated step counts, each an integer in [1, 2^53] (``1e3`` accepted)."""
    parse = count(1)
    try:
        vals = [parse(t.strip()) for t in text.split(",") if t.strip()]
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if not vals:
        raise argparse.ArgumentTypeError(f"steps must be integers >= 1, got {text!r}")
    return vals


def _floats(text: str) -> list[float]:
    try:
        vals = [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid list of numbers: {text!r}") from None
    if not vals or any(not (v > 1 and math.isfinite(v)) for v in vals):
        raise argparse.ArgumentTypeError(f"alpha must be finite orders > 1, got {text!r}")
    return vals






def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("renyi", help="analytic vs empirical Renyi divergence on the linear Gaussian instance",
                              description=__doc__.split("\n\n", 2)[2].strip())
    p.add_argument("--steps", type=_ints, default=[100], help="K, or a list K1,K2,... (default 100)")
    p.add_argument("--alpha", type=_floats, default=[2.0, 5.0, 10.0], help="orders (default 2,5,10)")
    p.add_argument("--trials", type=count(2), default=20_000, help="runs per dataset and step count (default 20000)")
    p.add_argument("--step-size", type=float, default=0.1, dest="step_size", help="eta in (0, 1) (default 0.1)")
    p.add_argument("--sigma", type=float, default=1.0, help="temperature sigma (default 1)")
    p.add_argument("--n", type=count(1), default=1, help="records (default 1)")
    p.add_argument("--method", choices=("gaussian", "nonparametric", "gaussian-unequal", "all"), default="gaussian",
                   help="estimator (default gaussian)")
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--seed", type=count(0, SEED_MAX), default=0, help="random seed >= 0 (default 0)")
    p.add_argument("--plot", metavar="FILE", help="save epsilon(alpha) against steps to FILE (needs matplotlib)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_executor_arguments(p)
    __import__("dpaudit.report.cli_support").report.cli_support.add_report_argument(p)  # --report FILE (issue 7)
    p.set_defaults(run=run)
    return p


def _step_range(steps: list[int]) -> list[int]:
    if len(steps) > 1:
        return sorted(set(steps))
    K = steps[0]
    grid = [k for k in (1, 2, 3, 5, 10, 20, 30, 50, 100, 200, 300, 500, 1000, 2000, 5000) if k < K]
    return grid + [K]


def plot_table(rows, path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("--plot needs matplotlib (pip install 'dpaudit[plot]')") from None
    alphas = sorted({r["alpha"] for r in rows})
    fig, axes = plt.subplots(1, len(alphas), figsize=(4.2 * len(alphas), 3.8), squeeze=False)
    for ax, a in zip(axes[0], alphas):
        rs = [r for r in rows if r["alpha"] == a]
        ks = sorted({r["steps"] for r in rs})
        first = {k: next(r for r in rs if r["steps"] == k) for k in ks}
        for key, style in (("exact", "k-"), ("theorem1", "b--"), ("theorem2", "g--"), ("composition", "m:")):
            ax.plot(ks, [first[k][key] for k in ks], style, label=key)
        for m in sorted({r["method"] for r in rs}):
            sub = [r for r in rs if r["method"] == m]
            x = [r["steps"] for r in sub]
            y = [r["estimate"] for r in sub]
            lo = [max(r["estimate"] - r["lower"], 0.0) for r in sub]
            hi = [(r["upper"] - r["estimate"]) if math.isfinite(r["upper"]) else 0.0 for r in sub]
            ax.errorbar(x, y, yerr=[lo, hi], fmt="o", ms=3, capsize=2, label=f"estimate ({m})")
        ax.set_xscale("log")
        ax.set_xlabel("steps K")
        ax.set_ylabel(f"D_alpha, alpha={a:g}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def preflight(args) -> list[int]:
    """Before any simulation: argument values (through the analytic bounds' own validation), the
    output paths and the scheduler. Returns the step counts to run."""
    from dpaudit.bounds.langevin import composition_rdp, langevin_lower_rdp, langevin_rdp, linear_gaussian_rdp
    from dpaudit.cli._checks import UsageError, check_plot_path, check_report_path
    from dpaudit.core.validation import check_confidence, check_positive

    check_confidence(args.confidence, "--confidence")
    check_positive("--sigma", args.sigma)
    eta = check_positive("--step-size", args.step_size)
    if not eta < 1.0:
        raise UsageError(f"--step-size must be in (0, 1) (Theorem 1 needs step_size < 1/smoothness = 1), got {eta}")
    steps = _step_range(args.steps)
    kw = dict(sensitivity=1.0, step_size=args.step_size, sigma=args.sigma, n=args.n)
    for a in args.alpha:  # the analytic columns of every row, computed once here: cheap, and they validate
        for k in (steps[0], steps[-1]):
            linear_gaussian_rdp(a, steps=k, **kw)
            langevin_rdp(a, strong_convexity=1.0, steps=k, **kw)
            langevin_lower_rdp(a, steps=k, **kw)
            composition_rdp(a, steps=k, **kw)
    if args.plot:
        check_plot_path(args.plot, "--plot")
    if getattr(args, "report", None):
        check_report_path(args.report, "--report")
    check_executor_arguments(args)
    return steps


def run(args) -> int:
    from dpaudit.audit.linear_instance import linear_instance_table

    steps = preflight(args)
    methods = ("gaussian", "nonparametric") if args.method == "all" else (args.method,)
    from dpaudit.core.progress import disabled

    quiet = disabled() if args.json else contextlib.nullcontext()  # --json: no progress line on stderr
    with quiet, executor_from_args(args) as ex:  # --workers / --scheduler: the rows do not depend on them
        rows = linear_instance_table(steps, args.alpha, step_size=args.step_size, sigma=args.sigma, n=args.n,
                                     trials=args.trials, confidence=args.confidence, seed=args.seed,
                                     methods=methods, executor=ex)
    if args.plot:
        plot_table(rows, args.plot)
    __import__("dpaudit.report.cli_support").report.cli_support.maybe_write_report(
        args, renyi=[{**r, "trials": args.trials, "confidence": args.confidence} for r in rows])  # issue 7
    if args.json:
        from dpaudit.audit.result import to_jsonable

        print(json.dumps(to_jsonable({"instance": "squared loss, theta_0 = 0 (Chourasia et al. Thm 2)",
                                      "step_size": args.step_size, "sigma": args.sigma, "n": args.n,
                                      "trials": args.trials, "confidence": args.confidence, "rows": rows})))
        return 0
    print(f"noisy GD on the squared-loss instance: eta={args.step_size:g}, sigma={args.sigma:g}, n={args.n}, "
          f"{args.trials} runs per dataset, {args.confidence:.0%} intervals")
    hdr = f"{'K':>6} {'alpha':>6} {'method':>13} {'estimate':>9} {'interval':>21} {'exact':>9} {'Thm1':>9} {'Thm2':>9} {'compos.':>9}"
    print(hdr)
    for r in rows:
        iv = f"[{r['lower']:.4f}, {r['upper']:.4f}]"
        print(f"{r['steps']:>6} {r['alpha']:>6g} {r['method']:>13} {r['estimate']:>9.4f} {iv:>21} {r['exact']:>9.4f} "
              f"{r['theorem1']:>9.4f} {r['theorem2']:>9.4f} {r['composition']:>9.4f}")
    if args.plot:
        print(f"plot: {args.plot}")
    return 0
