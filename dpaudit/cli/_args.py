"""Argument types and options shared by the subcommands."""

from __future__ import annotations

import argparse
import math

__all__ = ["int_like", "workers", "add_executor_arguments", "executor_from_args"]


def int_like(text: str) -> int:
    """Integer argument that also accepts integral floats such as ``1e9``."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid integer value: {text!r}") from None
    if not math.isfinite(value) or not value.is_integer():
        raise argparse.ArgumentTypeError(f"invalid integer value: {text!r}")
    return int(value)


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


def executor_from_args(args):
    """Executor context for ``--workers`` / ``--scheduler``; the results do not depend on it."""
    from dpaudit.audit.runner import dask_executor, open_executor

    if args.scheduler is not None:
        if args.workers is not None:
            raise ValueError("give either --workers or --scheduler, not both")
        return dask_executor(args.scheduler)
    return open_executor(workers=args.workers)
