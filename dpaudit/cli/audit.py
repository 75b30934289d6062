"""``dpaudit audit``: audit an optimizer of ``dpaudit.optimizers`` -- in the user's configuration --
against its own claim, or a user's own sampler.

    dpaudit audit OPTIMIZER [--HYPER-PARAMETER VALUE ...] [--trials N] [--seed S] [--confidence C]
                  [--delta D] [--method M] [--plot FILE] [--report FILE] [--json] [--workers N | --scheduler ADDRESS]
    dpaudit audit mechanism MODULE:SAMPLER --x JSON --x-prime JSON --epsilon E [--delta D] [...]

Every hyper-parameter an optimizer declares (``optimizer_class(name).hyperparameters``) is a flag
(``--noise-multiplier 1.0 --sample-rate 0.01 --steps 200``; ``dpaudit audit NAME --help`` lists
them): the optimizer is built with those values and audited against the claim of *that*
configuration, and the output shows the hyper-parameters used. A bad value exits 2 with one line
naming the flag and the allowed range, before any trial. For the optimizers that declare a
``delta`` (a target budget), ``--delta`` is that hyper-parameter and the audit is at that delta.

Prints the claim, the certified epsilon lower bound, the method, the number of trials, the GDP
number (an estimate, assuming mu-GDP: never a bound), the verdict -- violation, consistent, or
inconclusive (the audit certified nothing; then advisory numbers say how many trials might give
it power) -- and the seed. Without ``--seed`` a fresh seed is drawn, as ``seed=None`` does in
Python, and printed (JSON: ``seed``), so the run can be repeated. ``--method gdp`` still
certifies with the threshold test and asks for the estimate. Exit status 1 only when the
certified lower bound exceeds the claim (a violation), 0 otherwise (consistent or inconclusive),
2 when the request cannot be carried out (checked before any trial: argument values, ``--delta
0`` without a pure-DP claim, output paths, the scheduler, memory for ``--trials``) and, with its
own message, on an internal error. ``--plot FILE`` draws the empirical ROC of the attack with the
region allowed by (epsilon, delta)-DP (needs matplotlib). ``--workers N`` runs the trials on N
processes and ``--scheduler ADDRESS`` on a Dask cluster; the result is the same as in one process.
``dpaudit audit mechanism`` is :mod:`dpaudit.cli._mechanism`.
"""

from __future__ import annotations

import argparse
import contextlib
import sys

from dpaudit.cli import OneLineParser
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

DESCRIPTION = """
Audit an optimizer, in your configuration, against its own privacy claim: run it many times on
two neighbouring datasets (with a white-box gradient canary where the optimizer takes one), let a
threshold attack tell the runs apart, and turn its error rates into a lower bound on epsilon that
holds at --confidence. Or audit your own sampler: dpaudit audit mechanism --help.

Every hyper-parameter of the optimizer is a flag: "dpaudit audit OPTIMIZER --help" lists them with
their ranges and defaults (e.g. dp-sgd: --noise-multiplier, --sample-rate, --steps, --clip). The
claim audited is the one of that configuration.

Prints what was audited (the optimizer, its hyper-parameters, its claim, the canary), the
certified lower bound, the method, the trials, the GDP number (an estimate that assumes Gaussian
behaviour; never a bound), the verdict and the seed:
  violation     the certified lower bound exceeds the claim (exit status 1)
  consistent    the audit certified some privacy loss, not more than claimed
  inconclusive  the audit certified nothing (lower bound 0), so it could not test the claim;
                advisory lines say how many trials might give it power

Without --seed a fresh seed is drawn (as seed=None does in Python) and printed, so the run can be
repeated with --seed. Everything that can fail is checked before the first trial: argument
values, --delta 0 without a pure-DP claim, output paths, the scheduler. A large --trials is
estimated first (time and memory, printed on stderr) and refused when it needs more memory than
the machine has.

examples:
  dpaudit audit dp-sgd --noise-multiplier 1.0 --sample-rate 0.01 --steps 200 --seed 1
  dpaudit audit dp-sgd --trials 20000 --seed 1 --report audit-report.html
  dpaudit audit dp-gd --method one-run --canaries 1000
  dpaudit audit mechanism mymod:sampler --x 0 --x-prime 1 --epsilon 1
"""

#: the audit target that is not an optimizer
MECHANISM = "mechanism"


class _TargetParser(OneLineParser):
    """The parser of one audit target. An optimizer's hyper-parameter flags (and its ``--delta``, whose
    meaning depends on whether the optimizer declares a delta) are added when the parser is first used
    -- to parse or to print its help -- so that building ``dpaudit --help`` imports no optimizer."""

    def __init__(self, *args, target: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self._target = target
        self._declared = target is None

    def _declare(self) -> None:
        if self._declared or self._target is None:  # (no target: declared from the start)
            return
        self._declared = True
        from dpaudit.cli._hyper import add_hyperparameter_arguments
        from dpaudit.optimizers import optimizer_class

        cls = optimizer_class(self._target)
        names = {hp.name for hp in cls.hyperparameters}
        if "delta" in names:
            from dpaudit.cli._hyper import flag_type

            hp = cls.hyperparameter("delta")
            self.add_argument("--delta", type=flag_type(hp), default=None, metavar="D",
                              help=f"delta of the optimizer's target budget, {hp.spec} (default {hp.default:g}); the "
                                   "audit is at this delta. 0 (where allowed) asks for a pure-DP audit")
        else:
            self.add_argument("--delta", type=float, default=None, metavar="D",
                              help="delta of the audited statement (default 1e-5); 0 audits pure DP and is refused "
                                   "when the claim has no pure-DP epsilon")
        add_hyperparameter_arguments(self, cls, skip=("delta",))

    def parse_known_args(self, args=None, namespace=None):
        self._declare()
        return super().parse_known_args(args, namespace)

    def format_help(self):
        self._declare()
        return super().format_help()


def _add_common(p: argparse.ArgumentParser) -> None:
    from dpaudit.core.defaults import DEFAULT_CONFIDENCE, DEFAULT_TRIALS

    p.add_argument("--trials", type=count(2), default=DEFAULT_TRIALS, metavar="N",
                   help=f"runs per neighbouring input (default {DEFAULT_TRIALS})")
    add_seed_argument(p)
    p.add_argument("--confidence", type=float, default=DEFAULT_CONFIDENCE, metavar="C",
                   help=f"confidence of the lower bound, in (0, 1) (default {DEFAULT_CONFIDENCE})")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    cli_support.add_report_argument(p)  # --report FILE


def add_parser(subparsers) -> argparse.ArgumentParser:
    from dpaudit.cli._args import EXIT_HELP, HelpFormatter, add_subcommand
    from dpaudit.cli._mechanism import HELP as MECHANISM_HELP
    from dpaudit.cli._mechanism import add_mechanism_arguments
    from dpaudit.optimizers import names

    p = add_subcommand(subparsers, "audit", help="certified epsilon lower bound of an optimizer (or your sampler) "
                                                 "against its claim", description=DESCRIPTION)
    targets = p.add_subparsers(dest="optimizer", metavar="OPTIMIZER", parser_class=_TargetParser, required=True,
                               help="one of: " + ", ".join(names) + "; or 'mechanism' to audit your own sampler")
    for name in names:
        t = targets.add_parser(name, target=name, description=f"Audit optimizer {name} against its own claim, in "
                               "the configuration the flags give.\n\n" + DESCRIPTION.strip().split("\n\n", 1)[1],
                               epilog=EXIT_HELP, formatter_class=HelpFormatter, prog=f"{p.prog} {name}")
        _add_common(t)
        t.add_argument("--method", choices=("threshold", "gdp", "one-run"), default="threshold",
                       help="threshold: certified bound (default); gdp: the same certified bound plus the GDP "
                            "estimate; one-run: certified bound from ONE training run with --canaries canaries "
                            "(dp-gd, dp-sgd)")
        t.add_argument("--canaries", type=count(2), default=None, metavar="M",
                       help="number of canaries for --method one-run (default 1000)")
        t.add_argument("--plot", metavar="FILE", help="save the attack's ROC with the region the claim allows to FILE")
        add_executor_arguments(t)
        t.set_defaults(run=run)
    m = targets.add_parser(MECHANISM, description=MECHANISM_HELP.strip(), epilog=EXIT_HELP,
                           formatter_class=HelpFormatter, prog=f"{p.prog} {MECHANISM}")
    _add_common(m)
    add_mechanism_arguments(m)
    m.set_defaults(run=run)
    p.set_defaults(run=run)
    return p


def plot_roc(result, path: str) -> None:
    """The report's evidence figure (log-log zoom on the certified point against the region the claim
    allows, plus the linear view when it shows anything), saved in the format of ``path``'s suffix."""
    from pathlib import Path

    from dpaudit.report.plots import roc_figure

    fmt = Path(path).suffix.lower().lstrip(".") or "png"
    Path(path).write_bytes(roc_figure(result.to_dict(), fmt=fmt))


def build_optimizer(args):
    """The optimizer in the configuration of the command line (a ``UsageError`` naming the flags when
    the optimizer refuses a combination) and the hyper-parameters given."""
    from dpaudit.cli._checks import UsageError
    from dpaudit.cli._hyper import flag_message, given_hyperparameters
    from dpaudit.optimizers import make_optimizer, optimizer_class

    cls = optimizer_class(args.optimizer)
    given = given_hyperparameters(args)
    if args.delta is not None and any(hp.name == "delta" for hp in cls.hyperparameters):
        given["delta"] = args.delta
    try:
        return make_optimizer(args.optimizer, **given), given
    except ValueError as exc:
        raise UsageError(flag_message(str(exc), cls)) from None


def preflight(args):
    """Everything that can fail, checked before the first trial: returns the built optimizer (in the
    user's configuration) and the hyper-parameters given."""
    from dpaudit.audit.optimizer import audit_delta, claim_epsilon, optimizer_claim
    from dpaudit.cli._checks import UsageError, check_plot_path, check_report_path
    from dpaudit.core.validation import check_confidence

    check_confidence("--confidence", args.confidence)
    if args.method == "one-run":
        if args.plot:
            raise UsageError("--plot draws the ROC of a threshold test; it is not available with --method one-run")
        if args.workers is not None or args.scheduler is not None:
            raise UsageError("--method one-run trains once: --workers / --scheduler do not apply")
    elif args.canaries is not None:
        raise UsageError("--canaries goes with --method one-run")
    opt, given = build_optimizer(args)
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
    return opt, given


def run(args) -> int:
    seed, source = resolve_seed(args)
    if args.optimizer == MECHANISM:
        from dpaudit.cli._mechanism import run_mechanism

        return run_mechanism(args, seed, source)
    from dpaudit.audit.optimizer import audit_optimizer  # (the module attribute: tests replace it)
    from dpaudit.cli._estimate import announce

    opt, given = preflight(args)
    if args.method != "one-run":
        announce("audit", opt, args.trials, workers=args.workers)
    opts = {"method": args.method}
    if args.delta is not None:
        opts["delta"] = args.delta
    if args.method == "one-run":
        opts["canaries"] = 1000 if args.canaries is None else args.canaries
        result = audit_optimizer(opt, confidence=args.confidence, seed=seed, **opts)
        return _print_result(args, result, opt, given, seed, source)
    from dpaudit.core.progress import disabled

    # progress on stderr stays quiet in --json mode (issue 7), without changing the process-wide default
    quiet = disabled() if args.json else contextlib.nullcontext()
    with quiet, executor_from_args(args) as ex:  # --workers / --scheduler: the result does not depend on them
        result = audit_optimizer(opt, trials=args.trials, confidence=args.confidence, seed=seed,
                                 execution=Execution(executor=ex), **opts)
    if args.plot:
        plot_roc(result, args.plot)
    return _print_result(args, result, opt, given, seed, source)


def _value_text(value) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def hyperparameter_line(opt, given: dict) -> str:
    """``name=value`` of every hyper-parameter, the ones given on the command line first."""
    first = [f"{k}={_value_text(v)}" for k, v in opt.hp.items() if k in given]
    rest = [f"{k}={_value_text(v)}" for k, v in opt.hp.items() if k not in given]
    parts = []
    if first:
        parts.append(", ".join(first) + " (given)")
    if rest:
        parts.append(", ".join(rest) + " (defaults)")
    return "; ".join(parts)


def _print_result(args, result, opt, given, seed, source) -> int:
    cli_support.maybe_write_report(args, audit=result, optimizer=opt)  # --report FILE (issue 7)
    if args.json:
        from dpaudit.cli._output import emit_json

        out = result.to_dict()
        if not args.plot:
            out["details"].pop("roc", None)
        emit_json("audit", {"optimizer": args.optimizer, "hyperparameters": dict(opt.hp),
                            "hyperparameters_given": sorted(given), "seed": seed, "seed_source": source,
                            "findings": result.findings, **out})
    else:
        print(f"optimizer         : {args.optimizer}")
        print(f"hyper-parameters  : {hyperparameter_line(opt, given)}")
        print(f"claim             : {result.details['claim']['description']}")
        print(f"canary            : {result.details['canary']}")
        print(result.summary())
        print(seed_line(seed, source))
        if args.plot:
            print(f"ROC plot          : {args.plot}")
    from dpaudit.cli import EXIT_OK, EXIT_VIOLATION

    return EXIT_VIOLATION if result.violation else EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    from dpaudit.cli import main

    sys.exit(main(["audit", *sys.argv[1:]]))
