"""``dpaudit report``: audit an optimizer, compare accountants, tabulate Renyi divergence; write a report.

    dpaudit report [OPTIMIZER] [--trials N] [--seed S] [--confidence C] [--delta D]
                   [--out FILE] [--max-steps T] [--renyi-trials N] [--renyi-steps K,K,...]
                   [--no-audit] [--no-accountants] [--no-renyi] [--json]

OPTIMIZER (default ``dp-sgd``) is audited with ``dpaudit.audit.audit_optimizer`` (``--trials``
runs per neighbouring dataset). Its per-step mechanism (Gaussian with the optimizer's noise
multiplier, Poisson-subsampled at its sampling rate when it has one) is composed 1..``--max-steps``
times (default: the optimizer's ``steps``) under the RDP, zCDP and PLD accountants, beside the
exact curve where one exists. The Renyi section runs noisy GD on the squared-loss instance of
Chourasia, Ye, Shokri (2021). ``--out`` ends in ``.html`` (one self-contained file, the default
``dpaudit-report.html``) or ``.md`` (plus PNG files); its directory must exist. The audit section
states the verdict (violation / consistent / inconclusive) and labels the GDP number as an
estimate, assuming mu-GDP; the accountant section says where a notion (zCDP) gives subsampling no
amplification. Exit status 1 only if the audit certified a violation; 2 when the request cannot
be carried out (checked before any work) and, with its own message, on an internal error.
Without ``--seed`` a fresh seed is drawn (as ``seed=None`` does in Python) and printed (JSON:
``seed``), so the run can be repeated.
"""

from __future__ import annotations

import argparse
import sys
import time

from dpaudit.cli._args import add_seed_argument, count, resolve_seed, seed_line
from dpaudit.report.data import optimizer_mechanism

__all__ = ["add_parser", "run"]


DESCRIPTION = """
Write one report (HTML, self-contained, or Markdown with PNG files) that answers: does the
claim hold, how sure are we, what was tested, what next.

Sections: the audit of OPTIMIZER (default dp-sgd) with its verdict banner, the gap between the
certified lower bound, the tightest upper bound dpaudit computes (exact or PLD) and the claim,
what was audited, what to do next, and where the bound comes from (a log-log zoom on the
certified point); the accountants compared on the optimizer's per-step mechanism up to
--max-steps compositions (default: its number of steps), with notions that ignore sampling
labelled; and the linear-instance check of the Renyi-divergence theorems (noisy GD on the
squared-loss instance of Chourasia, Ye, Shokri 2021, independent of OPTIMIZER).

--out ends in .html (default dpaudit-report.html) or .md; its directory must exist.

examples:
  dpaudit report dp-sgd --trials 20000 --seed 1 --out report.html
  dpaudit report dp-gd --no-renyi --out report.md
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    from dpaudit.cli._args import LIST_SYNTAX, ListAction, add_subcommand, comma_list
    from dpaudit.core.defaults import DEFAULT_CONFIDENCE, DEFAULT_DELTA, DEFAULT_TRIALS

    p = add_subcommand(subparsers, "report", help="write an HTML/Markdown report: audit, accountants, Renyi check",
                       description=DESCRIPTION)
    p.add_argument("optimizer", nargs="?", default="dp-sgd", metavar="OPTIMIZER",
                   help="optimizer to audit (default dp-sgd; the same names as dpaudit audit)")
    p.add_argument("--trials", type=count(2), default=DEFAULT_TRIALS, metavar="N",
                   help=f"audit runs per neighbouring dataset (default {DEFAULT_TRIALS})")
    add_seed_argument(p)
    p.add_argument("--confidence", type=float, default=DEFAULT_CONFIDENCE, metavar="C",
                   help=f"audit confidence in (0, 1) (default {DEFAULT_CONFIDENCE})")
    p.add_argument("--delta", type=float, default=DEFAULT_DELTA, metavar="D",
                   help=f"delta of every epsilon shown (default {DEFAULT_DELTA:g})")
    p.add_argument("--out", default="dpaudit-report.html", metavar="FILE",
                   help="report file, .html (self-contained) or .md (default dpaudit-report.html)")
    p.add_argument("--max-steps", type=count(1), default=None, dest="max_steps", metavar="T",
                   help="largest number of compositions in the accountant comparison (default: the optimizer's steps)")
    p.add_argument("--renyi-trials", type=count(2), default=20_000, dest="renyi_trials", metavar="N",
                   help="noisy-GD runs per dataset for the Renyi check (default 20000)")
    p.add_argument("--renyi-steps", type=comma_list(count(1), "step count"), action=ListAction,
                   default=[1, 2, 5, 10, 20, 50, 100], dest="renyi_steps", metavar="K",
                   help=f"noisy-GD step counts of the Renyi check (default 1,2,5,10,20,50,100; {LIST_SYNTAX})")
    p.add_argument("--no-audit", action="store_true", dest="no_audit", help="skip the audit section")
    p.add_argument("--no-accountants", action="store_true", dest="no_accountants",
                   help="skip the accountant comparison")
    p.add_argument("--no-renyi", action="store_true", dest="no_renyi", help="skip the Renyi check")
    p.add_argument("--json", action="store_true", help="print one JSON object (path and key numbers) on stdout")
    p.set_defaults(run=run)
    return p


def preflight(args):
    """Before any work: argument values, the optimizer (built by the library), the output path."""
    from dpaudit.cli._checks import UsageError, check_report_path
    from dpaudit.core.validation import check_confidence, check_delta

    check_confidence("--confidence", args.confidence)
    check_delta("--delta", args.delta)
    if args.no_audit and args.no_accountants and args.no_renyi:
        raise UsageError("nothing to report: every section was skipped")
    opt = None
    if not (args.no_audit and args.no_accountants):
        from dpaudit.optimizers import make_optimizer

        opt = make_optimizer(args.optimizer)
    check_report_path(args.out, "--out")
    return opt


def run(args) -> int:
    from dpaudit.core.progress import disabled

    args._optimizer = preflight(args)
    args._seed = resolve_seed(args)
    if not args.no_audit:
        from dpaudit.cli._estimate import announce

        announce("report", args._optimizer, args.trials)
    if args.json:
        with disabled():
            return _run(args)
    return _run(args)


def _log(args, text):
    if not args.json:
        print(text, file=sys.stderr)


def _run(args) -> int:
    from dpaudit.report.data import compare_accountants, default_steps, renyi_table
    from dpaudit.report.writer import write_report

    timings, audit, accountants, renyi = {}, None, None, None
    opt = getattr(args, "_optimizer", None)
    if not args.no_audit:
        from dpaudit.audit import audit_optimizer

        _log(args, f"auditing {args.optimizer} with {args.trials:,} trials per dataset ...")
        t0 = time.perf_counter()
        audit = audit_optimizer(args.optimizer, trials=args.trials, confidence=args.confidence, seed=args._seed[0])
        timings["audit_s"] = time.perf_counter() - t0
        if not args.json:
            print(audit.summary())
    if not args.no_accountants:
        mech, steps = optimizer_mechanism(opt)
        if mech is None:
            _log(args, f"{args.optimizer} has no Gaussian noise multiplier: accountant comparison skipped")
        else:
            t0 = time.perf_counter()
            grid = default_steps(args.max_steps or steps)
            accountants = compare_accountants(mech, grid, delta=args.delta)
            timings["accountants_s"] = time.perf_counter() - t0
    if not args.no_renyi:
        _log(args, f"Renyi table: noisy GD, {args.renyi_trials:,} runs per dataset ...")
        t0 = time.perf_counter()
        renyi = renyi_table(steps=args.renyi_steps, trials=args.renyi_trials, seed=args._seed[0])
        timings["renyi_s"] = time.perf_counter() - t0
    if audit is None and accountants is None and renyi is None:
        from dpaudit.cli._checks import UsageError

        raise UsageError(f"nothing to report: {args.optimizer} has no Gaussian noise multiplier for the accountant "
                         "comparison and the other sections were skipped")
    path = write_report(args.out, audit=audit, renyi=renyi, accountants=accountants,
                        title=f"dpaudit report: {args.optimizer}")
    if args.json:
        from dpaudit.cli._output import emit_json

        emit_json("report", {
            "path": str(path), "optimizer": args.optimizer, "seed": args._seed[0], "seed_source": args._seed[1],
            "audit": None if audit is None else {**{k: v for k, v in audit.to_dict().items() if k != "details"},
                                                 "advice": audit.details.get("advice")},
            "accountants": accountants, "renyi": renyi, "timings": timings})
    else:
        print(seed_line(*args._seed))
        print(f"report written to {path}")
    from dpaudit.cli import EXIT_OK, EXIT_VIOLATION

    return EXIT_VIOLATION if (audit is not None and audit.violation) else EXIT_OK
