"""Argument types and options shared by the subcommands."""

from __future__ import annotations

import argparse
import math

__all__ = ["int_like", "count", "workers", "add_executor_arguments", "executor_from_args", "check_executor_arguments",
           "MAX_COUNT", "SEED_MAX"]

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
    from dpaudit.audit.runner import dask_executor, open_executor

    if args.scheduler is not None:
        if args.workers is not None:
            raise ValueError("give either --workers or --scheduler, not both")
        return dask_executor(args.scheduler)
    return open_executor(workers=args.workers)
