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


def maybe_write_report(args, *, audit=None, renyi=None, accountants=None, optimizer=None, title=None):
    """Write the report if ``args.report`` is set; return its path (or None).

    With ``optimizer`` (a name or an optimizer object) and no ``accountants``, the report also
    compares the accountants on the optimizer's per-step mechanism over its number of steps
    (at the audit's delta, default 1e-5), when the optimizer adds Gaussian noise.
    """
    path = getattr(args, "report", None)
    if not path:
        return None
    # (imported here: the CLI imports this module to build its parser, and must start fast)
    from dpaudit.optimizers import make_optimizer
    from dpaudit.report.data import compare_accountants, default_steps, optimizer_mechanism
    from dpaudit.report.writer import write_report

    if optimizer is not None and accountants is None:
        opt = optimizer
        if isinstance(optimizer, str):
            opt = make_optimizer(optimizer)
        mech, steps = optimizer_mechanism(opt)
        delta = float(getattr(audit, "delta", 0.0) or 0.0) if audit is not None else 0.0
        if mech is not None:
            accountants = compare_accountants(mech, default_steps(steps), delta=delta if 0 < delta < 1 else 1e-5)
        title = title or f"dpaudit report: {getattr(opt, 'name', optimizer)}"

    out = write_report(path, audit=audit, renyi=renyi, accountants=accountants, title=title)
    print(f"report written to {out}", file=sys.stderr)
    return out
