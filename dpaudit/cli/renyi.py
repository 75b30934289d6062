"""``dpaudit renyi``: analytic vs empirical Renyi divergence of noisy GD on the linear instance.

    dpaudit renyi [--steps K] [--alpha A] [--trials N] [--step-size ETA] [--sigma S] [--n N]
                  [--method M] [--seed S] [--plot FILE] [--json] [--workers N | --scheduler ADDRESS]

Runs noisy GD (hidden state) on the squared-loss neighbouring datasets of Chourasia et al.
(2021, the instance of their Theorem 2) and prints, for each number of steps and order alpha, the estimated
D_alpha of the last iterates with its confidence interval beside the exact value, the Theorem 1
upper bound, the Theorem 2 lower bound and the composition bound. ``--steps``, ``--alpha`` and
``--method`` take one value or a comma-separated list (or are repeated); a single K expands to a
range of steps up to K; ``--method all`` runs every estimator of ``renyi_divergence``.
``--workers N`` / ``--scheduler ADDRESS`` run the simulations on N processes / a Dask cluster,
with the same rows as in one process. Without ``--seed`` a fresh seed is drawn (as ``seed=None``
does in Python) and printed (JSON: ``seed``), so the run can be repeated.
"""

from __future__ import annotations

import argparse
import contextlib
import math

from dpaudit.cli._args import (
    add_executor_arguments,
    add_seed_argument,
    check_executor_arguments,
    count,
    executor_from_args,
    resolve_seed,
    seed_line,
)
from dpaudit.core.execution import Execution
from dpaudit.report import cli_support


def _order(text: str) -> float:
    v = float(text)
    if not (v > 1 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"alpha must be finite orders > 1, got {text!r}")
    return v


DESCRIPTION = """
A check of the Renyi-divergence theorems of Chourasia, Ye, Shokri (2021) on their linear
instance -- not an audit of an optimizer. Noisy gradient descent (hidden state: only the last
iterate is released) runs on the squared-loss neighbouring datasets; for each number of steps K
and order alpha the command prints the estimated Renyi divergence of the last iterates with its
confidence interval, beside the exact value, the Theorem 1 upper bound, the Theorem 2 lower
bound and the composition bound (every iterate released).

--steps and --alpha take one value or a list; a single K expands to a range of steps up to K.
--method all runs every estimator. --workers N / --scheduler ADDRESS run the simulations on N
processes / a Dask cluster, with the same rows as in one process.

examples:
  dpaudit renyi --steps 100 --trials 20000
  dpaudit renyi --steps 1,10,100 --alpha 2,5 --method all --json
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    from dpaudit.cli._args import LIST_SYNTAX, ListAction, add_subcommand, comma_list

    p = add_subcommand(subparsers, "renyi", help="Renyi-divergence theorems checked on their linear instance (noisy GD)",
                       description=DESCRIPTION)
    p.add_argument("--steps", type=comma_list(count(1), "step count"), action=ListAction, default=[100], metavar="K",
                   help=f"K, or a list K1,K2,... (default 100; {LIST_SYNTAX})")
    p.add_argument("--alpha", type=comma_list(_order, "order"), action=ListAction, default=[2.0, 5.0, 10.0],
                   metavar="A", help=f"Renyi orders > 1 (default 2,5,10; {LIST_SYNTAX})")
    p.add_argument("--trials", type=count(2), default=20_000, metavar="N",
                   help="runs per dataset and step count (default 20000; a divergence estimate, not an audit)")
    p.add_argument("--step-size", type=float, default=0.1, dest="step_size", metavar="ETA",
                   help="step size eta in (0, 1) (default 0.1)")
    p.add_argument("--sigma", type=float, default=1.0, metavar="S", help="noise temperature sigma (default 1)")
    p.add_argument("--n", type=count(1), default=1, metavar="N", help="records (default 1)")
    p.add_argument("--method", type=comma_list(str, "estimator"), action=ListAction, default=["gaussian"],
                   metavar="M", help=f"estimators: gaussian (default), gaussian-unequal, nonparametric, or all "
                                     f"(every one); {LIST_SYNTAX}")
    p.add_argument("--confidence", type=float, default=0.95, metavar="C",
                   help="confidence of the intervals, in (0, 1) (default 0.95)")
    add_seed_argument(p)
    p.add_argument("--plot", metavar="FILE", help="save the divergence against steps to FILE (needs matplotlib)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    add_executor_arguments(p)
    cli_support.add_report_argument(p)  # --report FILE
    p.set_defaults(run=run)
    return p


def _methods(requested) -> tuple[str, ...]:
    """The estimators asked for, ``all`` expanded to every estimator of ``renyi_divergence``."""
    from dpaudit.audit.stats.renyi import RENYI_METHODS
    from dpaudit.cli._checks import UsageError

    out = []
    for m in requested:
        for name in (RENYI_METHODS if m == "all" else (m,)):
            if name not in RENYI_METHODS:
                raise UsageError(f"--method {m}: unknown estimator; choose from {', '.join(RENYI_METHODS)} or all")
            if name not in out:
                out.append(name)
    return tuple(out)


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

    check_confidence("--confidence", args.confidence)
    args.methods = _methods(args.method)
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
    seed, source = resolve_seed(args)
    methods = args.methods
    from dpaudit.core.progress import disabled

    quiet = disabled() if args.json else contextlib.nullcontext()  # --json: no progress line on stderr
    with quiet, executor_from_args(args) as ex:  # --workers / --scheduler: the rows do not depend on them
        rows = linear_instance_table(steps, args.alpha, step_size=args.step_size, sigma=args.sigma, n=args.n,
                                     trials=args.trials, confidence=args.confidence, seed=seed,
                                     methods=methods, execution=Execution(executor=ex))
    if args.plot:
        plot_table(rows, args.plot)
    cli_support.maybe_write_report(
        args, renyi=[{**r, "trials": args.trials, "confidence": args.confidence} for r in rows])  # issue 7
    if args.json:
        from dpaudit.cli._output import emit_json

        emit_json("renyi", {"instance": "squared loss, theta_0 = 0 (Chourasia et al. Thm 2)",
                            "step_size": args.step_size, "sigma": args.sigma, "n": args.n, "trials": args.trials,
                            "confidence": args.confidence, "methods": list(methods), "seed": seed,
                            "seed_source": source, "rows": rows})
        return 0
    print(f"noisy GD on the squared-loss instance: eta={args.step_size:g}, sigma={args.sigma:g}, n={args.n}, "
          f"{args.trials} runs per dataset, {args.confidence:.0%} intervals")
    hdr = f"{'K':>6} {'alpha':>6} {'method':>13} {'estimate':>9} {'interval':>21} {'exact':>9} {'Thm1':>9} {'Thm2':>9} {'compos.':>9}"
    print(hdr)
    for r in rows:
        iv = f"[{r['lower']:.4f}, {r['upper']:.4f}]"
        print(f"{r['steps']:>6} {r['alpha']:>6g} {r['method']:>13} {r['estimate']:>9.4f} {iv:>21} {r['exact']:>9.4f} "
              f"{r['theorem1']:>9.4f} {r['theorem2']:>9.4f} {r['composition']:>9.4f}")
    print(seed_line(seed, source))
    if args.plot:
        print(f"plot: {args.plot}")
    return 0
