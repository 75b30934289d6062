"""``--report FILE`` for any CLI command: ``add_report_argument`` and ``maybe_write_report``.

A command adds the option with ``add_report_argument(parser)`` and, after computing its result,
calls ``maybe_write_report(args, audit=..., renyi=..., accountants=...)``; nothing happens when
``--report`` was not given. The path written is printed on stderr (stdout stays clean for
``--json``).
"""

from __future__ import annotations

import sys

__all__ = ["add_report_argument", "maybe_write_report"]


def add_report_argument(parser) -> None:
    """Add ``--report FILE`` (``.html`` self-contained or ``.md`` + PNGs) to an argparse parser."""
    parser.add_argument("--report", metavar="FILE", default=None,
                        help="also write a report with plots to FILE (.html: self-contained; .md: with PNG files "
                             "beside it); needs matplotlib (pip install 'dpaudit[plot]')")


def maybe_write_report(args, *, audit=None, renyi=None, accountants=None, title=None):
    """Write the report if ``args.report`` is set; return its path (or None)."""
    path = getattr(args, "report", None)
    if not path:
        return None
    from dpaudit.report.writer import write_report

    out = write_report(path, audit=audit, renyi=renyi, accountants=accountants, title=title)
    print(f"report written to {out}", file=sys.stderr)
    return out
