"""``dpaudit audit mechanism MODULE:SAMPLER``: audit a user's own sampler from the command line.

    dpaudit audit mechanism package.module:sampler --x 0 --x-prime 1 --epsilon 1 [--delta D]
                  [--trials N] [--seed S] [--confidence C] [--statistic auto|auto-real|NAME[,NAME...]]
                  [--json] [--report FILE] [--workers N]

The sampler is found by its import path (``package.module:attr`` or ``package.module:attr.attr``,
e.g. ``mymod:mech.sample``), with the current directory first on ``sys.path``, and audited by
:func:`dpaudit.audit_mechanism` against the claim ``(--epsilon, --delta)``: it must be callable as
``sampler(x, rng, size)`` and return ``size`` outputs. ``--x`` and ``--x-prime`` are JSON values
(numbers, lists, strings in double quotes, ``null``, ...), passed to the sampler unchanged. An
import failure, a missing attribute, a sampler that is not callable or an input that is not JSON
exits 2 with one line (never a traceback), before any trial.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys

from dpaudit.core.execution import Execution

__all__ = ["add_mechanism_arguments", "resolve_sampler", "parse_json_input", "run_mechanism"]

HELP = """
Audit your own sampler against its claim (epsilon, delta), for CI scripts.

SAMPLER is an import path, package.module:attribute (attributes may be chained, e.g.
mymod:mech.sample), resolved with the current directory first on sys.path: run the command from
the directory that holds your module (or its package). The sampler is called as
sampler(x, rng, size) and must return `size` outputs of the mechanism on input x (see
dpaudit.audit_mechanism). --x and --x-prime are JSON values: 0, 1.5, [0, 1], "abc" (with the
double quotes, so '"abc"' in a shell), null.

To audit one of dpaudit's own mechanisms, write a two-line module, e.g. lap.py:
    from dpaudit import Laplace
    sample = Laplace(1.0).sample
then: dpaudit audit mechanism lap:sample --x 0 --x-prime 1 --epsilon 1

Exit status 1 when the certified lower bound exceeds the claim (a violation), 0 otherwise, 2
when the request cannot be carried out (an import failure, a missing or non-callable attribute,
a bad value), before any trial.

examples:
  dpaudit audit mechanism mymod:sampler --x 0 --x-prime 1 --epsilon 1
  dpaudit audit mechanism mypkg.mechs:noisy_count.sample --x 10 --x-prime 11 --epsilon 0.5 --delta 1e-6 --json
"""


def add_mechanism_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``dpaudit audit mechanism`` (besides the shared --trials, --seed, --confidence,
    --json, --report)."""
    p.add_argument("sampler", metavar="SAMPLER",
                   help="import path module:attribute of a callable sampler(x, rng, size); the current directory "
                        "is put first on sys.path")
    p.add_argument("--x", required=True, metavar="JSON", help="the first neighbouring input, a JSON value")
    p.add_argument("--x-prime", required=True, dest="x_prime", metavar="JSON",
                   help="the second neighbouring input, a JSON value")
    p.add_argument("--epsilon", required=True, type=float, metavar="E",
                   help="the claimed epsilon (>= 0; inf: no claim)")
    p.add_argument("--delta", type=float, default=0.0, metavar="D",
                   help="the claimed delta in [0, 1) (default 0: pure DP, as in dpaudit.audit_mechanism)")
    p.add_argument("--statistic", default="auto", metavar="NAME",
                   help="attack: auto (every applicable family, default), auto-real (all but the floating-point "
                        "bit-level ones) or attack family names, comma-separated")
    p.add_argument("--workers", type=_workers, default=None, metavar="N",
                   help="run the trials on N processes (the sampler must be importable there; same result as 1)")


def _workers(text: str) -> int:
    from dpaudit.cli._args import workers

    return workers(text)


def resolve_sampler(path: str):
    """The callable named by ``package.module:attr[.attr...]``, imported with the current directory
    first on ``sys.path``; a :class:`~dpaudit.cli._checks.UsageError` (one line) otherwise."""
    from dpaudit.cli._checks import UsageError

    text = str(path).strip()
    module_name, sep, attrs = text.partition(":")
    if not sep or not module_name or not attrs:
        raise UsageError(f"SAMPLER must be an import path module:attribute (e.g. mymod:sampler), got {text!r}")
    parts = attrs.split(".")
    if not all(part.isidentifier() for part in parts) or not all(
            part.isidentifier() for part in module_name.split(".")):
        raise UsageError(f"SAMPLER must be an import path module:attribute with Python names only (no calls or "
                         f"expressions; write a module that builds the sampler), got {text!r}")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        obj = importlib.import_module(module_name)
    except BaseException as exc:  # noqa: BLE001 - any failure while importing the user's module is one line
        if isinstance(exc, KeyboardInterrupt):
            raise
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise UsageError(f"SAMPLER {text}: cannot import module {module_name!r} (from {cwd}): "
                         f"{type(exc).__name__}{': ' + detail if detail else ''}") from None
    for i, part in enumerate(parts):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            owner = module_name if i == 0 else f"{module_name}:{'.'.join(parts[:i])}"
            raise UsageError(f"SAMPLER {text}: {owner} has no attribute {part!r}") from None
    if not callable(obj):
        raise UsageError(f"SAMPLER {text} is not callable (got a {type(obj).__name__}); it must be called as "
                         "sampler(x, rng, size)")
    return obj


def parse_json_input(text: str, flag: str):
    """The JSON value of ``text`` (a number, list, string in double quotes, ...); a one-line
    :class:`~dpaudit.cli._checks.UsageError` naming ``flag`` otherwise."""
    from dpaudit.cli._checks import UsageError

    try:
        return json.loads(text)
    except ValueError:
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise UsageError(f"{flag} must be a JSON value (a number such as 0 or 1.5, a list such as [0, 1], a string "
                         f"in double quotes such as '\"abc\"', null), got {shown!r}") from None


def _statistic(text: str):
    parts = [t.strip() for t in str(text).split(",")]
    return parts[0] if len(parts) == 1 else parts


def preflight(args):
    """Everything checked before the first trial: the claim, the inputs, the sampler, the paths."""
    from dpaudit.cli._checks import UsageError, check_report_path
    from dpaudit.core.validation import check_confidence, check_nonnegative

    check_nonnegative("--epsilon", args.epsilon, allow_inf=True)
    if not 0.0 <= args.delta < 1.0:
        raise UsageError(f"--delta must be in [0, 1), got {args.delta}")
    check_confidence("--confidence", args.confidence)
    x = parse_json_input(args.x, "--x")
    x_prime = parse_json_input(args.x_prime, "--x-prime")
    sampler = resolve_sampler(args.sampler)
    statistic = _statistic(args.statistic)
    if getattr(args, "report", None):
        check_report_path(args.report, "--report")
    return sampler, x, x_prime, statistic


def run_mechanism(args, seed: int, seed_source: str) -> int:
    """Audit the sampler; print the result (text or one JSON object); exit 1 on a violation."""
    import contextlib

    from dpaudit.audit import audit_mechanism
    from dpaudit.cli import EXIT_OK, EXIT_VIOLATION
    from dpaudit.cli._args import seed_line
    from dpaudit.core.progress import disabled
    from dpaudit.report import cli_support

    saved_path = list(sys.path)  # the working directory is put first while the audit runs (worker processes too)
    try:
        sampler, x, x_prime, statistic = preflight(args)
        quiet = disabled() if args.json else contextlib.nullcontext()
        with quiet:
            result = audit_mechanism(sampler, x, x_prime, epsilon=args.epsilon, delta=args.delta, trials=args.trials,
                                     confidence=args.confidence, statistic=statistic, seed=seed,
                                     execution=Execution(workers=args.workers))
    except ValueError as exc:
        message = str(exc)
        if message.startswith("statistic"):
            from dpaudit.cli._checks import UsageError

            raise UsageError("--" + message) from None
        raise
    finally:
        sys.path[:] = saved_path
    cli_support.maybe_write_report(args, audit=result, title=f"dpaudit report: {args.sampler}")
    if args.json:
        from dpaudit.cli._output import emit_json

        out = result.to_dict()
        out["details"].pop("roc", None)
        emit_json("audit", {"mechanism": args.sampler, "x": x, "x_prime": x_prime, "seed": seed,
                            "seed_source": seed_source, "findings": result.findings, **out})
    else:
        print(f"mechanism         : {args.sampler}")
        print(f"inputs            : x = {json.dumps(x)}, x' = {json.dumps(x_prime)}")
        print(result.summary())
        print(seed_line(seed, seed_source))
    return EXIT_VIOLATION if result.violation else EXIT_OK

