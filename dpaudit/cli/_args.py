"""Argument types and options shared by the subcommands."""

from __future__ import annotations

import argparse
import math

__all__ = ["int_like", "count", "workers", "add_executor_arguments", "executor_from_args", "check_executor_arguments",
           "MAX_COUNT", "SEED_MAX", "ListAction", "comma_list", "EXIT_HELP", "HelpFormatter", "add_subcommand",
           "LIST_SYNTAX", "deprecated_flag", "SEED_HELP", "add_seed_argument", "resolve_seed", "seed_line"]

#: exit statuses, shown at the end of every subcommand's --help
EXIT_HELP = """exit status:
  0    success (for an audit: no violation -- consistent or inconclusive)
  1    a certified violation (an audit's lower bound exceeds the claim; a failed proof check)
  2    the request cannot be carried out (one line on stderr, before any work), or an internal
       error (one line; rerun with DPAUDIT_DEBUG=1 for the traceback)
  130  interrupted (Ctrl-C)"""

#: how every list option is written (shown in the help of list options)
LIST_SYNTAX = "comma-separated, e.g. A,B; the option may also be repeated"


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the paragraphs of a description as written; wraps option help."""


def add_subcommand(subparsers, name: str, *, help: str, description: str):  # noqa: A002 - argparse's name
    """A subcommand parser with plain-text help (no markup) and the exit statuses as epilog."""
    return subparsers.add_parser(name, help=help, description=description.strip(), epilog=EXIT_HELP,
                                 formatter_class=HelpFormatter)


class ListAction(argparse.Action):
    """A list option: ``--opt a,b`` and ``--opt a --opt b`` both give ``[a, b]`` (the default is replaced,
    not extended). Use with ``type=comma_list(...)``."""

    def __call__(self, parser, namespace, values, option_string=None):
        current = getattr(namespace, self.dest, None)
        if current is None or current is self.default:
            current = []
        setattr(namespace, self.dest, list(current) + list(values))


def comma_list(item, what: str = "value", choices=None):
    """argparse type: a comma-separated list, each element parsed by ``item`` (and checked against
    ``choices`` when given)."""

    def parse(text: str) -> list:
        parts = [t.strip() for t in str(text).split(",")]
        if not parts or any(not t for t in parts):
            raise argparse.ArgumentTypeError(f"expected a comma-separated list of {what}s, got {_short(text)!r}")
        out = []
        for t in parts:
            try:
                v = item(t)
            except (ValueError, TypeError, argparse.ArgumentTypeError) as exc:
                msg = str(exc) if isinstance(exc, argparse.ArgumentTypeError) else f"invalid {what} {_short(t)!r}"
                raise argparse.ArgumentTypeError(msg) from None
            if choices is not None and v not in choices:
                raise argparse.ArgumentTypeError(f"invalid {what} {_short(t)!r} (choose from {', '.join(choices)})")
            out.append(v)
        return out

    parse.__name__ = f"list of {what}s"
    return parse

#: largest count (steps, trials, canaries) a command accepts: integers above 2**53 are not exact as floats
MAX_COUNT = 2**53
#: largest seed accepted (numpy SeedSequence entropy of 128 bits)
SEED_MAX = 2**128 - 1


def int_like(text: str) -> int:
    """Integer argument that also accepts integral floats such as ``1e9``."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"invalid integer value: {_short(text)!r}") from None
    if not math.isfinite(value) or not value.is_integer():
        raise argparse.ArgumentTypeError(f"invalid integer value: {_short(text)!r}")
    return int(value)


def count(minimum: int = 1, maximum: int = MAX_COUNT):
    """argparse type: an integer (``1e6`` accepted) in [minimum, maximum]."""

    def parse(text: str) -> int:
        value = int_like(text)
        if not minimum <= value <= maximum:
            top = {MAX_COUNT: "2^53", SEED_MAX: "2^128 - 1"}.get(maximum, str(maximum))
            raise argparse.ArgumentTypeError(f"must be an integer in [{minimum}, {top}], got {_short(text)}")
        return value

    parse.__name__ = "count"  # argparse names the type in its messages
    return parse


def _short(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:10]}...{text[-6:]} ({len(text)} characters)"


def workers(text: str) -> int:
    """Number of worker processes (an integer >= 1)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number of workers: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"workers must be an integer >= 1, got {value}")
    return value


def add_executor_arguments(p: argparse.ArgumentParser) -> None:
    """``--workers N`` and ``--scheduler ADDRESS`` (scale-out, issue 8)."""
    p.add_argument("--workers", type=workers, default=None, metavar="N",
                   help="run the trials on N processes (same result as 1; default: in this process)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run the trials on the Dask cluster at ADDRESS (needs dpaudit[dask]; same result)")


def check_executor_arguments(args) -> None:
    """Before any work: ``--workers`` and ``--scheduler`` are not both given, and the scheduler answers."""
    from dpaudit.cli._checks import UsageError, check_scheduler

    if getattr(args, "scheduler", None) is not None:
        if getattr(args, "workers", None) is not None:
            raise UsageError("give either --workers or --scheduler, not both")
        check_scheduler(args.scheduler)


def executor_from_args(args):
    """Executor context for ``--workers`` / ``--scheduler``; the results do not depend on it."""
    from dpaudit.core.runner import dask_executor, open_executor

    if args.scheduler is not None:
        if args.workers is not None:
            raise ValueError("give either --workers or --scheduler, not both")
        return dask_executor(args.scheduler)
    return open_executor(workers=args.workers)


#: the --seed story, the same as the library's ``seed=None`` (fresh entropy, recorded so the run can be repeated)
SEED_HELP = ("random seed, an integer in [0, 2^128 - 1] (default: fresh entropy, like seed=None in Python; the "
             "seed used is printed, and in --json output, so the run can be repeated with --seed)")


def add_seed_argument(p: argparse.ArgumentParser) -> None:
    """``--seed S``: default None, i.e. a fresh seed drawn and printed (:func:`resolve_seed`)."""
    p.add_argument("--seed", type=count(0, SEED_MAX), default=None, metavar="S", help=SEED_HELP)


def resolve_seed(args) -> tuple[int, str]:
    """``(seed, source)``: ``--seed`` when given (source ``"--seed"``), else a fresh seed drawn from the
    operating system's entropy exactly as the library does for ``seed=None``
    (``numpy.random.SeedSequence().entropy``, 128 bits; source ``"fresh"``). Passing the printed
    seed back as ``--seed`` repeats the run."""
    if getattr(args, "seed", None) is not None:
        return int(args.seed), "--seed"
    import numpy as np

    return int(np.random.SeedSequence().entropy), "fresh"  # type: ignore[arg-type]  # fresh: an int


def seed_line(seed: int, source: str) -> str:
    """The text output's seed line: the seed used and how to repeat the run."""
    how = "drawn fresh" if source == "fresh" else "given"
    return f"seed              : {seed} ({how}; repeat the run with --seed {seed})"


def deprecated_flag(command: str, old: str, new: str) -> None:
    """The one-line notice on stderr for a deprecated flag spelling (the command runs as with ``new``,
    same exit status)."""
    import sys

    from dpaudit.core.deprecation import deprecated_spelling_message

    print(f"dpaudit {command}: {deprecated_spelling_message(old, new)}", file=sys.stderr)
