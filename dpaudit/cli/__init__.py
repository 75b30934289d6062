"""Command line: ``dpaudit SUBCOMMAND ...``.

Each subcommand lives in its own module ``dpaudit.cli.<name>`` exposing
``add_parser(subparsers)`` (registers its arguments) and ``run(args) -> int``.
Exit status: 0 success; 1 an audit found a violation; 2 bad arguments (one-line message).
"""

from __future__ import annotations

import argparse
import importlib
import sys

SUBCOMMANDS = ("account", "audit", "renyi", "proofs", "report")


class _Parser(argparse.ArgumentParser):
    """argparse that exits with status 2 and a one-line message on bad arguments."""

    def error(self, message):  # noqa: D401 - argparse API
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dpaudit", description="Privacy accounting and empirical auditing.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in SUBCOMMANDS:
        try:
            mod = importlib.import_module(f"dpaudit.cli.{name}")
        except ModuleNotFoundError as exc:  # a subcommand not built yet is simply absent
            if exc.name == f"dpaudit.cli.{name}":
                continue
            raise
        mod.add_parser(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        return int(args.run(args) or 0)
    except ValueError as exc:  # bad argument values detected by the library
        print(f"dpaudit {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
