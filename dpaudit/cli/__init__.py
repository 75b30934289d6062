"""Command line: ``dpaudit SUBCOMMAND ...``.

Each subcommand lives in its own module ``dpaudit.cli.<name>`` exposing
``add_parser(subparsers)`` (registers its arguments) and ``run(args) -> int``. Every subcommand
checks its arguments, output paths and connections *before* its work starts
(:mod:`dpaudit.cli._checks`).

Exit status (``EXIT_*`` below):

* 0 -- success (for an audit: no violation, whether the verdict is consistent or inconclusive);
* 1 -- a certified violation (an audit's lower bound exceeds the claim; a failed proof check);
  never an error and never an estimate;
* 2 -- the request cannot be carried out: bad argument values, an output path whose directory
  is missing or not writable, an unsupported file type, an unreachable scheduler, a missing
  optional dependency. One line on stderr: ``dpaudit COMMAND: error: ...``;
* 2 also for an internal error: an exception dpaudit did not expect (a bug, or a numerical range
  it does not handle). Any failure exits 2 with one line; this one reads
  ``dpaudit COMMAND: internal error: ...`` and hints to rerun with ``DPAUDIT_DEBUG=1``, which
  also prints the traceback (never 1, which only a certified violation gives);
* 130 -- interrupted (Ctrl-C).

A ``ValueError`` raised by dpaudit's own argument checks is a bad argument; one raised inside a
third-party library (numpy, scipy, ...) means dpaudit passed it something it should not have, an
internal error. Both exit 2; the message says which.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from pathlib import Path

from dpaudit.core.threads import one_blas_thread

SUBCOMMANDS = ("demo", "account", "audit", "renyi", "proofs", "report")

EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 2  # same status as a usage error (any failure exits 2); the message differs
EXIT_INTERRUPTED = 130
#: environment variable that makes internal errors print their traceback
DEBUG_ENV = "DPAUDIT_DEBUG"

_PACKAGE_DIR = Path(__file__).resolve().parents[1]


class OneLineParser(argparse.ArgumentParser):
    """argparse that exits with status 2 and a one-line message on bad arguments."""

    def error(self, message):  # noqa: D401 - argparse API
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


DESCRIPTION = """
Privacy accounting (upper bounds on epsilon) and empirical auditing (certified lower bounds) of
differentially private algorithms. Run "dpaudit COMMAND --help" for each command; every command
takes --json (one JSON object on stdout).

examples:
  dpaudit demo --seed 1 --report audit-report.html
  dpaudit account gaussian --noise-multiplier 1.1 --sample-rate 0.01 --steps 1000 --delta 1e-5
  dpaudit audit dp-sgd --trials 20000 --seed 1 --report audit-report.html
  dpaudit report dp-sgd --out report.html
"""


def build_parser() -> argparse.ArgumentParser:
    from dpaudit import __version__
    from dpaudit.cli._args import EXIT_HELP, HelpFormatter

    parser = OneLineParser(prog="dpaudit", description=DESCRIPTION.strip(), epilog=EXIT_HELP,
                     formatter_class=HelpFormatter)
    parser.add_argument("--version", action="version", version=f"dpaudit {__version__}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    for name in SUBCOMMANDS:
        importlib.import_module(f"dpaudit.cli.{name}").add_parser(sub)
    return parser


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _raised_by_dpaudit(exc: BaseException) -> bool:
    """True when the innermost frame of the exception's traceback is in the dpaudit package."""
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return True
    try:
        return Path(last.tb_frame.f_code.co_filename).resolve().is_relative_to(_PACKAGE_DIR)
    except (OSError, ValueError):  # pragma: no cover - exotic file names
        return False


def debug_requested() -> bool:
    return os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no")


def is_usage_error(exc: BaseException) -> bool:
    """True for a request that cannot be carried out (bad argument, path, connection, missing extra);
    False for an internal error (an exception dpaudit did not expect)."""
    from dpaudit.cli._checks import UsageError

    if isinstance(exc, UsageError):
        return True
    if isinstance(exc, ValueError):
        return _raised_by_dpaudit(exc)
    return isinstance(exc, (OSError, ImportError))  # paths, connections, optional dependencies


def classify(exc: BaseException) -> int:
    """Exit status for an exception escaping a subcommand (see the module docstring)."""
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    return EXIT_USAGE if is_usage_error(exc) else EXIT_INTERNAL


def report_error(command: str, exc: BaseException) -> int:
    """Print the one-line message of ``exc`` for ``dpaudit COMMAND`` and return its exit status."""
    code = classify(exc)
    prefix = f"dpaudit {command}" if command else "dpaudit"
    if code == EXIT_INTERRUPTED:
        print(f"{prefix}: interrupted", file=sys.stderr)
    elif is_usage_error(exc):
        print(f"{prefix}: error: {_first_line(exc)}", file=sys.stderr)
    else:
        if debug_requested():
            traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
        print(f"{prefix}: internal error: {type(exc).__name__}: {_first_line(exc)} (a bug in dpaudit or a numerical "
              f"range it does not handle; rerun with {DEBUG_ENV}=1 for the traceback and report it)", file=sys.stderr)
    return code


def main(argv=None) -> int:
    """Run ``dpaudit`` with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        with one_blas_thread():  # (inside: a bad DPAUDIT_BLAS_THREADS is one line and exit 2)
            return int(args.run(args) or 0)
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - every error becomes one line + a status
        return report_error(args.command, exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
