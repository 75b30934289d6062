"""``dpaudit audit``: audit an optimizer of ``dpaudit.optimizers`` against its own claim.

    dpaudit audit OPTIMIZER [--trials N] [--seed S] [--confidence C] [--delta D] [--method M]
                  [--plot FILE] [--report FILE] [--json] [--workers N | --scheduler ADDRESS]

Prints the claim, the certified epsilon lower bound, the method, the number of trials, the GDP
number (an estimate, assuming mu-GDP: never a bound) and the verdict: violation, consistent, or
inconclusive (the audit certified nothing; then advisory numbers say how many trials might give
it power). ``--method gdp`` still certifies with the threshold test and asks for the estimate.
Exit status 1 only when the certified lower bound exceeds the claim (a violation), 0 otherwise
(consistent or inconclusive), 2 when the request cannot be carried out (checked before any
trial: argument values, ``--delta 0`` without a pure-DP claim, output paths, the scheduler,
memory for ``--trials``) and, with its own message, on an internal error. ``--plot FILE`` draws the empirical ROC of the attack with the region
allowed by (epsilon, delta)-DP (needs matplotlib). ``--workers N`` runs the trials on N processes
and ``--scheduler ADDRESS`` on a Dask cluster; the result is the same as in one process.
"""

from __future__ import annotations

import argparse
import contextlib
import sys

from dpaudit.cli._args import SEED_MAX, add_executor_arguments, check_executor_arguments, count, executor_from_args
from dpaudit.core.execution import Execution
from dpaudit.report import cli_support

DESCRIPTION = """
Audit an optimizer against its own privacy claim: run it many times on two neighbouring
datasets (with a white-box gradient canary where the optimizer takes one), let a threshold
attack tell the runs apart, and turn its error rates into a lower bound on epsilon that holds
at --confidence.

Prints what was audited (the optimizer, its claim, the canary), the certified lower bound, the
method, the trials, the GDP number (an estimate that assumes Gaussian behaviour; never a bound)
and the verdict:
  violation     the certified lower bound exceeds the claim (exit status 1)
  consistent    the audit certified some privacy loss, not more than claimed
  inconclusive  the audit certified nothing (lower bound 0), so it could not test the claim;
                advisory lines say how many trials might give it power

Everything that can fail is checked before the first trial: argument values, --delta 0 without
a pure-DP claim, output paths, the scheduler. A large --trials is estimated first (time and
memory, printed on stderr) and refused when it needs more memory than the machine has.

examples:
  dpaudit audit dp-sgd --trials 20000 --seed 1 --report audit-report.html
  dpaudit audit dp-gd --method one-run --canaries 1000
  dpaudit audit dp-sgd --json --workers 2
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    from dpaudit.cli._args import add_subcommand
    from dpaudit.core.defaults import DEFAULT_CONFIDENCE, DEFAULT_TRIALS
    from dpaudit.optimizers import names

    p = add_subcommand(subparsers, "audit", help="certified epsilon lower bound of an optimizer against its claim",
                       description=DESCRIPTION)
    p.add_argument("optimizer", choices=names, metavar="OPTIMIZER", help="one of: " + ", ".join(names))
    p.add_argument("--trials", type=count(2), default=DEFAULT_TRIALS, metavar="N",
                   help=f"runs per neighbouring dataset (default {DEFAULT_TRIALS})")
    p.add_argument("--seed", type=count(0, SEED_MAX), default=0, metavar="S", help="random seed >= 0 (default 0)")
    p.add_argument("--confidence", type=float, default=DEFAULT_CONFIDENCE, metavar="C",
                   help=f"confidence of the lower bound, in (0, 1) (default {DEFAULT_CONFIDENCE})")
    p.add_argument("--delta", type=float, default=None, metavar="D",
                   help="delta of the audited statement (default: the optimizer's delta, else 1e-5); 0 audits pure "
                        "DP and is refused when the claim has no pure-DP epsilon")
    p.add_argument("--method", choices=("threshold", "gdp", "one-run"), default="threshold",
                   help="threshold: certified bound (default); gdp: the same certified bound plus the GDP "
                        "estimate; one-run: certified bound from ONE training run with --canaries canaries "
                        "(dp-gd, dp-sgd)")
    p.add_argument("--canaries", type=count(2), default=None, metavar="M",
                   help="number of canaries for --method one-run (default 1000)")
    p.add_argument("--plot", metavar="FILE", help="save the attack's ROC with the region the claim allows to FILE")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    add_executor_arguments(p)
    cli_support.add_report_argument(p)  # --report FILE
    p.set_defaults(run=run)
    return p


def plot_roc(result, path: str) -> None:
    """The report's evidence figure (log-log zoom on the certified point against the region the claim
    allows, plus the linear view when it shows anything), saved in the format of ``path``'s suffix."""
    from pathlib import Path

    from dpaudit.report.plots import roc_figure

    fmt = Path(path).suffix.lower().lstrip(".") or "png"
    Path(path).write_bytes(roc_figure(result.to_dict(), fmt=fmt))


def preflight(args):
    """Everything that can fail, checked before the first trial: returns the built optimizer."""
    from dpaudit.audit.optimizer import audit_delta, claim_epsilon, optimizer_claim
    from dpaudit.cli._checks import UsageError, check_plot_path, check_report_path
    from dpaudit.core.validation import check_confidence
    from dpaudit.optimizers import make_optimizer

    check_confidence("--confidence", args.confidence)
    if args.method == "one-run":
        if args.plot:
            raise UsageError("--plot draws the ROC of a threshold test; it is not available with --method one-run")
        if args.workers is not None or args.scheduler is not None:
            raise UsageError("--method one-run trains once: --workers / --scheduler do not apply")
    elif args.canaries is not None:
        raise UsageError("--canaries goes with --method one-run")
    opt = make_optimizer(args.optimizer)
    try:
        delta = audit_delta(opt, args.delta)
    except ValueError as exc:
        raise UsageError(str(exc).replace("delta must", "--delta must", 1)) from None
    if args.method == "gdp" and delta == 0.0:
        raise UsageError("--method gdp needs --delta in (0, 1): a mu-GDP mechanism is never pure DP")
    if delta == 0.0:
        try:
            claim_epsilon(optimizer_claim(opt), 0.0, args.optimizer)
        except ValueError as exc:
            raise UsageError(str(exc).replace("give delta in", "give --delta in")) from None
    if args.plot:
        check_plot_path(args.plot, "--plot")
    if getattr(args, "report", None):
        check_report_path(args.report, "--report")
    check_executor_arguments(args)
    return opt


def run(args) -> int:
    from dpaudit.audit.optimizer import audit_optimizer
    from dpaudit.cli._estimate import announce

    opt = preflight(args)
    if args.method != "one-run":
        announce("audit", opt, args.trials, workers=args.workers)
    opts = {"method": args.method}
    if args.delta is not None:
        opts["delta"] = args.delta
    if args.method == "one-run":
        opts["canaries"] = 1000 if args.canaries is None else args.canaries
        return _print_result(args, audit_optimizer_one_run(args, opts))
    from dpaudit.core.progress import disabled

    # progress on stderr stays quiet in --json mode (issue 7), without changing the process-wide default
    quiet = disabled() if args.json else contextlib.nullcontext()
    with quiet, executor_from_args(args) as ex:  # --workers / --scheduler: the result does not depend on them
        result = audit_optimizer(args.optimizer, trials=args.trials, confidence=args.confidence, seed=args.seed,
                                 execution=Execution(executor=ex), **opts)
    if args.plot:
        plot_roc(result, args.plot)
    return _print_result(args, result)


def audit_optimizer_one_run(args, opts):
    """One-run audit (Steinke, Nasr, Jagielski 2023): one training run with many canaries."""
    from dpaudit.audit.optimizer import audit_optimizer

    return audit_optimizer(args.optimizer, confidence=args.confidence, seed=args.seed, **opts)


def _print_result(args, result) -> int:
    cli_support.maybe_write_report(
        args, audit=result, optimizer=args.optimizer)  # --report FILE (issue 7)
    if args.json:
        from dpaudit.cli._output import emit_json

        out = result.to_dict()
        if not args.plot:
            out["details"].pop("roc", None)
        emit_json("audit", {"optimizer": args.optimizer, **out})
    else:
        print(f"optimizer         : {args.optimizer}")
        print(f"claim             : {result.details['claim']['description']}")
        print(f"canary            : {result.details['canary']}")
        print(result.summary())
        if args.plot:
            print(f"ROC plot          : {args.plot}")
    from dpaudit.cli import EXIT_OK, EXIT_VIOLATION

    return EXIT_VIOLATION if result.violation else EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    from dpaudit.cli import main

    sys.exit(main(["audit", *sys.argv[1:]]))
