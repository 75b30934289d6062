"""``dpaudit account``: privacy accounting of a (subsampled, composed) mechanism.

    dpaudit account MECHANISM [--sigma S] [--scale B] [--epsilon E] [--sensitivity D] [--q Q]
                    [--steps T] (--delta D | --target-epsilon E) [--accountant rdp|zcdp|tcdp|pld|all]
                    [--json]

MECHANISM is ``gaussian`` (needs --sigma), ``laplace`` (--scale), ``pure`` or ``exponential``
(--epsilon). ``--q`` < 1 wraps it in Poisson subsampling. With ``--delta`` the command prints each
requested accountant's epsilon and what produced it (RDP order, zCDP rho, tCDP (rho, omega), PLD
interval). zCDP and tCDP give Poisson subsampling no amplification here (their value is that
of the unsampled mechanism): with ``--q`` < 1 their rows say so (``ignores_sampling`` in JSON)
instead of showing an alarming number silently. With ``--target-epsilon`` (Gaussian only) it calibrates the smallest sigma meeting
(target epsilon, delta) under each accountant instead; delta is ``--delta`` when given, otherwise
``DEFAULT_CALIBRATION_DELTA`` = 1e-5, and the output always states which delta was used.
"""

from __future__ import annotations

import argparse
import math
import sys

from dpaudit.accounting.base import ACCOUNTANTS as ACCOUNTANT_NAMES
from dpaudit.accounting.base import NO_AMPLIFICATION, accountant_class, make_accountant
from dpaudit.cli._args import count
from dpaudit.cli._checks import UsageError
from dpaudit.cli._output import emit_json
from dpaudit.core.validation import UnsupportedMechanismError, check_probability

MECHANISMS = ("gaussian", "laplace", "pure", "exponential")
#: what "all" means: the approximate-DP accountants of the registry, then the closed form ("pure",
#: basic composition of pure DP, is asked for by name)
ALL_ACCOUNTANTS = ("rdp", "zcdp", "tcdp", "pld", "exact")
ACCOUNTANTS = (*ALL_ACCOUNTANTS, *(n for n in ACCOUNTANT_NAMES if n not in ALL_ACCOUNTANTS), "all")


_UsageError = UsageError  # bad command-line arguments (exit status 2)



DESCRIPTION = """
epsilon of a mechanism -- Poisson-subsampled with rate --q and composed --steps times -- under
each accountant, or, with --target-epsilon, the smallest Gaussian noise that meets a target.

MECHANISM: gaussian (needs --sigma or --noise-multiplier), laplace (--scale), pure or
exponential (--epsilon).

With --delta, each accountant's row gives epsilon and what produced it: the RDP order, the zCDP
rho, the tCDP (rho, omega), the PLD interval that brackets the true value, and the closed form
(exact) where one exists. zCDP and tCDP give Poisson subsampling no amplification: with --q
below 1 their rows say so (JSON: "ignores_sampling": true) instead of showing a large number
without comment.

DP-SGD in training terms: --epochs E --batch-size B --dataset-size N set q = B/N and
steps = ceil(E N / B) (the convention of TensorFlow Privacy's compute_dp_sgd_privacy; Opacus
counts ceil(N/B) steps per epoch at q = 1/ceil(N/B)). --noise-multiplier is sigma divided by
the sensitivity (Opacus and dp_accounting spell it so).

With --target-epsilon (Gaussian) the command calibrates the smallest sigma meeting (target
epsilon, delta) under each accountant; delta is --delta, default 1e-5, always stated.

examples:
  dpaudit account gaussian --noise-multiplier 1.1 --q 0.01 --steps 1000 --delta 1e-5
  dpaudit account gaussian --noise-multiplier 1.1 --epochs 10 --batch-size 256 --dataset-size 60000 --delta 1e-5
  dpaudit account gaussian --sigma 1 --delta 1e-5 --accountant rdp,pld,exact --json
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    from dpaudit.cli._args import LIST_SYNTAX, ListAction, add_subcommand, comma_list

    p = add_subcommand(subparsers, "account",
                       help="epsilon of a mechanism under the RDP, zCDP, tCDP and PLD accountants, or calibrate sigma",
                       description=DESCRIPTION)
    p.add_argument("mechanism", choices=MECHANISMS, metavar="MECHANISM",
                   help="one of: " + ", ".join(MECHANISMS))
    p.add_argument("--sigma", type=float, metavar="S", help="Gaussian noise standard deviation")
    p.add_argument("--noise-multiplier", type=float, dest="noise_multiplier", metavar="Z",
                   help="Gaussian noise standard deviation divided by the sensitivity (instead of --sigma)")
    p.add_argument("--scale", type=float, metavar="B", help="Laplace scale b")
    p.add_argument("--epsilon", type=float, metavar="E", help="epsilon of a pure-DP or exponential mechanism")
    p.add_argument("--sensitivity", type=float, default=1.0, metavar="D", help="sensitivity (default 1)")
    p.add_argument("--q", type=float, default=None, metavar="Q",
                   help="Poisson sampling rate in [0, 1] (default 1: no sampling)")
    p.add_argument("--steps", type=count(1), default=None, metavar="T",
                   help="number of compositions (default 1, at most 2^53)")
    p.add_argument("--epochs", type=float, default=None, metavar="E",
                   help="training epochs: with --batch-size and --dataset-size, sets --q and --steps")
    p.add_argument("--batch-size", type=count(1), default=None, dest="batch_size", metavar="B",
                   help="expected batch size (with --epochs and --dataset-size)")
    p.add_argument("--dataset-size", type=count(1), default=None, dest="dataset_size", metavar="N",
                   help="number of training records (with --epochs and --batch-size)")
    p.add_argument("--delta", type=float, metavar="D", help="report epsilon at this delta")
    p.add_argument("--target-epsilon", type=float, dest="target_epsilon", metavar="E",
                   help="calibrate sigma (gaussian) to meet this epsilon at --delta (default delta 1e-5)")
    p.add_argument("--accountant", type=comma_list(str, "accountant", ACCOUNTANTS), action=ListAction,
                   default=["all"], metavar="NAMES",
                   help=f"accountants to use: rdp, zcdp, tcdp, pld, exact (closed form, where one exists) or all "
                        f"(default); {LIST_SYNTAX}")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.set_defaults(run=run)
    return p


# -- helpers ------------------------------------------------------------------------------
def _fmt(x) -> str:
    if isinstance(x, float):
        return "inf" if math.isinf(x) else f"{x:.6g}"
    return str(x)


def _build_mechanism(args):
    """The per-step mechanism described by the arguments (ValueError on missing/bad values)."""
    # (mechanisms are imported when a command runs, not when the parser is built: fast --help)
    from dpaudit.mechanisms import ExponentialMechanism, Gaussian, Laplace, PureDP

    name = args.mechanism
    if name == "gaussian":
        if args.sigma is None:
            raise _UsageError("gaussian needs --sigma or --noise-multiplier")
        mech = Gaussian(args.sigma, args.sensitivity)
    elif name == "laplace":
        if args.scale is None:
            raise _UsageError("laplace needs --scale")
        mech = Laplace(args.scale, args.sensitivity)
    else:
        if args.epsilon is None:
            raise _UsageError(f"{name} needs --epsilon")
        mech = (PureDP if name == "pure" else ExponentialMechanism)(args.epsilon)
    return _subsample(mech, args.q)


def _subsample(mech, q):
    from dpaudit.mechanisms import PoissonSampled

    q = check_probability("q", q)
    if q == 1.0:
        return mech
    return PoissonSampled(mech, q)


def _accountant_names(choice) -> list[str]:
    """The accountants asked for, in order, without repeats (``all`` expands to every one)."""
    names = []
    for c in ([choice] if isinstance(choice, str) else list(choice)):
        for n in (ALL_ACCOUNTANTS if c == "all" else (c,)):
            if n not in names:
                names.append(n)
    return names


def _resolve_sampling(args):
    """``--sigma`` from ``--noise-multiplier``; ``--q`` and ``--steps`` from the epochs options."""
    from dpaudit.core.validation import check_positive

    if args.noise_multiplier is not None:
        if args.sigma is not None:
            raise _UsageError("give either --sigma or --noise-multiplier, not both")
        if args.mechanism != "gaussian":
            raise _UsageError("--noise-multiplier applies to MECHANISM gaussian")
        args.sigma = check_positive("--noise-multiplier", args.noise_multiplier) * \
            check_positive("--sensitivity", args.sensitivity)
    trio = {"--epochs": args.epochs, "--batch-size": args.batch_size, "--dataset-size": args.dataset_size}
    given = [k for k, v in trio.items() if v is not None]
    if given:
        if len(given) < 3:
            missing = [k for k in trio if k not in given]
            raise _UsageError(f"{', '.join(given)} needs {' and '.join(missing)} too (together they set --q and --steps)")
        if args.q is not None or args.steps is not None:
            raise _UsageError("give either --epochs/--batch-size/--dataset-size or --q/--steps, not both")
        from dpaudit.accounting.convenience import sampling_from_epochs

        try:
            args.q, args.steps = sampling_from_epochs(args.epochs, args.batch_size, args.dataset_size)
        except ValueError as exc:
            raise _UsageError(str(exc).replace("batch_size", "--batch-size").replace("dataset_size", "--dataset-size")
                              .replace("epochs", "--epochs", 1)) from None
    args.q = 1.0 if args.q is None else args.q
    args.steps = 1 if args.steps is None else args.steps


def _account_one(name: str, mech, steps: int, delta: float) -> dict:
    """A result row: ``_account_row`` plus ``ignores_sampling``; an unexpected failure of one
    accountant becomes an ``error`` row (the command then exits 2 after printing the others)."""
    from dpaudit.cli import is_usage_error

    try:
        row = _account_row(name, mech, steps, delta)
    except Exception as exc:  # noqa: BLE001 - reported as an internal error after the table
        if is_usage_error(exc):
            raise
        return {"error": f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}",
                "_exception": exc}
    if "skipped" not in row:
        row["ignores_sampling"] = accountant_class(name).ignores_subsampling(mech)
        if row["ignores_sampling"]:
            row["note"] = NO_AMPLIFICATION
    return row


def _account_row(name: str, mech, steps: int, delta: float) -> dict:
    """Epsilon of ``steps`` compositions of ``mech`` under accountant ``name``."""
    try:
        row = make_accountant(name, quiet=True).compose(mech, steps).epsilon_details(delta)
    except UnsupportedMechanismError as exc:
        return {"skipped": f"not supported: {exc}"}
    if row.pop("at_grid_end", False):
        row["note"] = "optimal order at the end of the grid"
    row.pop("method", None)
    return row


def _detail(row: dict) -> str:
    if "skipped" in row:
        return row["skipped"]
    if "error" in row:
        return f"FAILED: {row['error']} (internal error)"
    if "order" in row:
        out = f"order {_fmt(row['order'])}"
    elif "omega" in row:
        out = f"rho {_fmt(row['rho'])}, omega {_fmt(row['omega'])}"
    elif "rho" in row:
        out = f"rho {_fmt(row['rho'])}"
    elif "lower" in row:
        out = f"interval [{_fmt(row['lower'])}, {_fmt(row['upper'])}]"
    elif "sigma" in row:
        out = f"epsilon at sigma: {_fmt(row['achieved_epsilon'])}"
    else:
        out = ""
    if "note" in row:
        out = f"{out} ({row['note']})" if out else row["note"]
    return out


def _table(title: str, header: tuple[str, str, str], rows: list[tuple[str, str, str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = [title, "  ".join(h.ljust(w) for h, w in zip(header, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


# -- entry point ----------------------------------------------------------------------------
def run(args) -> int:
    """Errors propagate to :func:`dpaudit.cli.main` (one line, exit 2)."""
    return _run(args)


def _finish(results: dict) -> int:
    """Exit status after the table: 2 (and one line on stderr) when some accountant failed."""
    from dpaudit.cli import DEBUG_ENV, EXIT_INTERNAL, EXIT_OK, _debug

    failed = {name: row for name, row in results.items() if "error" in row}
    if not failed:
        return EXIT_OK
    if _debug():
        import traceback

        for row in failed.values():
            exc = row["_exception"]
            traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    names = ", ".join(failed)
    first = next(iter(failed.values()))["error"]
    print(f"dpaudit account: internal error: {names} failed ({first}; a bug in dpaudit or a numerical range it does "
          f"not handle; rerun with {DEBUG_ENV}=1 for the traceback and report it)", file=sys.stderr)
    return EXIT_INTERNAL


def _public(results: dict) -> dict:
    return {name: {k: v for k, v in row.items() if not k.startswith("_")} for name, row in results.items()}


#: delta used by ``--target-epsilon`` when ``--delta`` is not given
DEFAULT_CALIBRATION_DELTA = 1e-5


def _run(args) -> int:
    from dpaudit.core.validation import check_count, check_delta, check_epsilon, check_positive

    if args.delta is None and args.target_epsilon is None:
        raise _UsageError("one of --delta or --target-epsilon is required")
    _resolve_sampling(args)
    delta_default = args.delta is None
    delta = DEFAULT_CALIBRATION_DELTA if delta_default else check_delta("--delta", args.delta)
    steps = check_count("--steps", args.steps, minimum=1)
    check_positive("--sensitivity", args.sensitivity)
    names = _accountant_names(args.accountant)
    params = {"sigma": args.sigma, "scale": args.scale, "epsilon": args.epsilon,
              "sensitivity": args.sensitivity, "q": args.q, "steps": steps}
    params = {k: v for k, v in params.items() if v is not None}
    if args.epochs is not None:
        params.update(epochs=args.epochs, batch_size=args.batch_size, dataset_size=args.dataset_size)

    if args.target_epsilon is not None:
        target = check_epsilon("--target-epsilon", args.target_epsilon)
        if args.mechanism != "gaussian":
            raise _UsageError("--target-epsilon calibrates sigma and needs MECHANISM gaussian")
        params.pop("sigma", None)
        params["delta_source"] = "default" if delta_default else "--delta"
        return _calibrate(args, names, target, delta, steps, params)

    mech = _build_mechanism(args)
    results = {name: (_exact_row(args, mech, steps, delta) if name == "exact" else _account_one(name, mech, steps, delta))
               for name in names}
    if args.json:
        emit_json("account", {"mechanism": args.mechanism, "parameters": params, "delta": delta,
                              "mechanism_description": _describe(mech), "results": _public(results)})
        return _finish(results)
    rows = [(name, _fmt(r["epsilon"]) if "epsilon" in r else "-", _detail(r)) for name, r in results.items()]
    print(_table(f"{_describe(mech)}, {steps} step(s), delta = {delta:g}", ("accountant", "epsilon", "from"), rows))
    return _finish(results)


#: the row of "exact" when no closed form is known
NO_CLOSED_FORM = "no closed form for this mechanism (the PLD interval brackets the exact value)"

#: what the closed form is, per MECHANISM (unsampled)
_CLOSED_FORMS = {"gaussian": "closed form (Balle-Wang)", "laplace": "closed form (Laplace privacy profile)",
                 "pure": "closed form (optimal composition, Kairouz-Oh-Viswanath)"}


def _exact_row(args, mech, steps: int, delta: float) -> dict:
    """The exact accountant's row (:class:`dpaudit.accounting.exact.ExactAccountant`): T Gaussians
    are one Gaussian with mu^2 = T (sensitivity/sigma)^2 (Balle & Wang 2018, Thm. 8); one Laplace
    release has epsilon(delta) = max(0, eps0 + 2 log(1 - delta)); T pure-DP releases compose as T
    randomized responses; otherwise no closed form (skipped)."""
    from dpaudit.accounting.exact import exact_epsilon
    from dpaudit.cli import is_usage_error

    try:
        value = exact_epsilon(mech, delta, steps)
        if value is None:
            return {"skipped": NO_CLOSED_FORM}
        note = _CLOSED_FORMS.get(args.mechanism, "closed form") if args.q == 1.0 else "closed form (one sampled step)"
        return {"epsilon": value, "note": note}
    except Exception as exc:  # noqa: BLE001 - reported as an internal error after the table
        if is_usage_error(exc):
            raise
        return {"error": f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}",
                "_exception": exc}


def _describe(mech) -> str:
    return mech.describe() if hasattr(mech, "describe") else repr(mech)


def _calibrate(args, names, target, delta, steps, params) -> int:
    from dpaudit.accounting.calibration import CALIBRATION_ACCOUNTANTS, calibrate_sigma
    q = check_probability("--q", args.q)
    if q == 0.0:
        raise _UsageError("--q must be > 0 to calibrate sigma (q = 0 releases nothing)")
    results = {}
    for name in names:
        try:
            sigma = calibrate_sigma(target, delta, q=q, steps=steps, accountant=name,
                                    sensitivity=args.sensitivity)
        except UnsupportedMechanismError as exc:
            results[name] = {"skipped": f"not supported: {exc}"}
            continue
        except ValueError as exc:
            if name not in CALIBRATION_ACCOUNTANTS:  # (e.g. "pure": no Gaussian is pure DP)
                results[name] = {"skipped": f"not supported: {exc}"}
                continue
            raise
        results[name] = {"sigma": sigma, "noise_multiplier": sigma / args.sensitivity}
        cls = accountant_class(name)
        if not cls.amplifies_subsampling and q < 1.0:
            from dpaudit.mechanisms import Gaussian

            results[name]["ignores_sampling"] = cls.ignores_subsampling(_subsample(Gaussian(1.0), q))
            if results[name]["ignores_sampling"]:
                results[name]["note"] = NO_AMPLIFICATION
    if args.json:
        emit_json("account", {"mechanism": "gaussian", "calibrate": "sigma", "target_epsilon": target,
                              "delta": delta, "parameters": params, "results": results})
        return 0
    rows = [(name, _fmt(r["sigma"]) if "sigma" in r else "-", r.get("skipped", r.get("note", "")))
            for name, r in results.items()]
    note = " (default delta; pass --delta to choose)" if params.get("delta_source") == "default" else ""
    title = (f"smallest Gaussian sigma for (epsilon, delta) = ({target:g}, {delta:g}){note}, q = {q:g}, "
             f"{steps} step(s), sensitivity {args.sensitivity:g}")
    print(_table(title, ("accountant", "sigma", "note"), rows))
    return 0
