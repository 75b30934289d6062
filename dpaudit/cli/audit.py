"""``dpaudit audit``: audit an optimizer of ``dpaudit.optimizers`` against its own claim.

    dpaudit audit OPTIMIZER [--trials N] [--seed S] [--confidence C] [--delta D] [--method M]
                  [--plot FILE] [--json] [--workers N | --scheduler ADDRESS]

Prints the claim, the certified epsilon lower bound, the method, the number of trials and the
verdict (plus the GDP estimate, labelled with its assumption). Exit status 1 when the lower
bound exceeds the claim (a violation), 0 otherwise, 2 on bad arguments. ``--plot FILE`` draws the
empirical ROC of the attack with the region allowed by (epsilon, delta)-DP (needs matplotlib).
``--workers N`` runs the trials on N processes and ``--scheduler ADDRESS`` on a Dask cluster;
the result is the same as in one process.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys

from dpaudit.cli._args import add_executor_arguments, executor_from_args, int_like








def add_parser(subparsers) -> argparse.ArgumentParser:
    from dpaudit.optimizers import names

    p = subparsers.add_parser("audit", help="empirical epsilon lower bound of an optimizer vs its claim",
                              description=__doc__.split("\n\n", 2)[2].strip())
    p.add_argument("optimizer", choices=names, metavar="OPTIMIZER", help="one of: " + ", ".join(names))
    p.add_argument("--trials", type=int_like, default=10_000, help="runs per neighbouring dataset (default 10000)")
    p.add_argument("--seed", type=int_like, default=0, help="random seed (default 0)")
    p.add_argument("--confidence", type=float, default=0.95, help="confidence of the lower bound (default 0.95)")
    p.add_argument("--delta", type=float, default=None,
                   help="delta of the audited statement (default: the optimizer's delta, else 1e-5)")
    p.add_argument("--method", choices=("threshold", "gdp", "one-run"), default="threshold",
                   help="threshold: certified bound (default); gdp: estimate assuming mu-GDP; one-run: "
                        "certified bound from ONE training run with --canaries canaries (dp-gd, dp-sgd)")
    p.add_argument("--canaries", type=int_like, default=None, metavar="M",
                   help="number of canaries for --method one-run (default 1000)")
    p.add_argument("--plot", metavar="FILE", help="save the ROC with the DP region to FILE")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_executor_arguments(p)
    __import__("dpaudit.report.cli_support").report.cli_support.add_report_argument(p)  # --report FILE (issue 7)
    p.set_defaults(run=run)
    return p


def plot_roc(result, path: str) -> None:
    """ROC of the evaluation scores with the (epsilon_claimed, delta)-DP region and the bound's curve."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("--plot needs matplotlib (pip install 'dpaudit[plot]')") from None
    import numpy as np

    roc = result.details["roc"]
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot(roc["fpr"], roc["tpr"], ".-", ms=3, label="attack ROC (evaluation runs)")
    a = np.linspace(0.0, 1.0, 501)
    for eps, style, label in ((result.epsilon_claimed, "k-", "claimed"), (result.epsilon_lower, "r--", "lower bound")):
        if math.isfinite(eps):
            # largest TPR allowed by (eps, delta)-DP at FPR a: min(e^eps a + delta, 1 - e^-eps (1 - delta - a))
            tpr = np.minimum(np.minimum(math.exp(eps) * a + result.delta, 1.0 - math.exp(-eps) * (1.0 - result.delta - a)), 1.0)
            ax.plot(a, np.clip(tpr, 0, 1), style, label=f"{label} eps={eps:.3g} region boundary")
    if math.isfinite(result.epsilon_claimed):
        tpr = np.minimum(np.minimum(math.exp(result.epsilon_claimed) * a + result.delta,
                                    1.0 - math.exp(-result.epsilon_claimed) * (1.0 - result.delta - a)), 1.0)
        ax.fill_between(a, a, np.clip(tpr, 0, 1), color="0.85", label="allowed by the claim")
    ax.plot([0, 1], [0, 1], ":", color="0.5")
    ax.set_xlabel("false-positive rate")
    ax.set_ylabel("true-positive rate")
    ax.set_title(f"{result.details.get('optimizer', 'audit')}: verdict "
                 f"{'VIOLATION' if result.violation else 'consistent'}")
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def run(args) -> int:
    from dpaudit.audit.optimizer import audit_optimizer

    opts = {"method": args.method}
    if args.delta is not None:
        opts["delta"] = args.delta
    if args.method == "one-run":
        if args.plot:
            raise ValueError("--plot draws the ROC of a threshold test; it is not available with --method one-run")
        if args.workers is not None or args.scheduler is not None:
            raise ValueError("--method one-run trains once: --workers / --scheduler do not apply")
        opts["canaries"] = 1000 if args.canaries is None else args.canaries
        return _print_result(args, audit_optimizer_one_run(args, opts))
    if args.canaries is not None:
        raise ValueError("--canaries goes with --method one-run")
    from dpaudit.core.progress import disabled

    # progress on stderr stays quiet in --json mode (issue 7), without changing the process-wide default
    quiet = disabled() if args.json else contextlib.nullcontext()
    with quiet, executor_from_args(args) as ex:  # --workers / --scheduler: the result does not depend on them
        result = audit_optimizer(args.optimizer, trials=args.trials, confidence=args.confidence, seed=args.seed,
                                 executor=ex, **opts)
    if args.plot:
        plot_roc(result, args.plot)
    return _print_result(args, result)


def audit_optimizer_one_run(args, opts):
    """One-run audit (Steinke, Nasr, Jagielski 2023): one training run with many canaries."""
    from dpaudit.audit.optimizer import audit_optimizer

    return audit_optimizer(args.optimizer, confidence=args.confidence, seed=args.seed, **opts)


def _print_result(args, result) -> int:
    __import__("dpaudit.report.cli_support").report.cli_support.maybe_write_report(
        args, audit=result, optimizer=args.optimizer)  # --report FILE (issue 7)
    if args.json:
        out = result.to_dict()
        out["details"].pop("roc", None) if not args.plot else None
        print(json.dumps(out))
    else:
        print(f"optimizer         : {args.optimizer}")
        print(f"claim             : {result.details['claim']['description']}")
        print(f"canary            : {result.details['canary']}")
        print(result.summary())
        if args.plot:
            print(f"ROC plot          : {args.plot}")
    return 1 if result.violation else 0


if __name__ == "__main__":  # pragma: no cover
    from dpaudit.cli import main

    sys.exit(main(["audit", *sys.argv[1:]]))
