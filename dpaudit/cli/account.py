"""``dpaudit account``: privacy accounting of a (subsampled, composed) mechanism.

    dpaudit account MECHANISM [--sigma S | --noise-multiplier Z] [--scale B] [--epsilon E] [--sensitivity D]
                    [--sample-rate Q] [--steps T] (--delta D | --target-epsilon E)
                    [--accountant rdp|zcdp|tcdp|pld|all] [--json]

MECHANISM is ``gaussian`` (needs --sigma or --noise-multiplier), ``laplace`` (--scale), ``pure`` or
``exponential`` (--epsilon), or ``mf`` (a matrix-factorization / DP-FTRL run: --strategy, --steps, --epochs or
--min-sep, --noise-multiplier; see :func:`_run_mf`). ``--sample-rate`` < 1 wraps it in Poisson subsampling (for
``mf``: cyclic Poisson sampling of a banded strategy, arXiv:2306.08153, Thm. 4; ``--q`` is its deprecated spelling:
accepted, with a one-line notice on stderr). With ``--delta`` the command prints each
requested accountant's epsilon and what produced it (RDP order, zCDP rho, tCDP (rho, omega), PLD
interval). zCDP and tCDP give Poisson subsampling no amplification here (their value is that
of the unsampled mechanism): with ``--sample-rate`` < 1 their rows say so (``ignores_sampling`` in JSON)
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

MECHANISMS = ("gaussian", "laplace", "pure", "exponential", "mf")
#: strategies of ``dpaudit account mf``
MF_STRATEGIES = ("banded", "blt", "identity", "prefix")
#: what "all" means: the approximate-DP accountants of the registry, then the closed form ("pure",
#: basic composition of pure DP, is asked for by name)
ALL_ACCOUNTANTS = ("rdp", "zcdp", "tcdp", "pld", "exact")
ACCOUNTANTS = (*ALL_ACCOUNTANTS, *(n for n in ACCOUNTANT_NAMES if n not in ALL_ACCOUNTANTS), "all")


_UsageError = UsageError  # bad command-line arguments (exit status 2)



DESCRIPTION = """
epsilon of a mechanism -- Poisson-subsampled with rate --sample-rate and composed --steps times -- under
each accountant, or, with --target-epsilon, the smallest Gaussian noise that meets a target.

MECHANISM: gaussian (needs --sigma or --noise-multiplier), laplace (--scale), pure or
exponential (--epsilon), or mf: a matrix-factorization (DP-FTRL) run of --steps steps with
correlated noise, --strategy banded (--bands), blt (--buffers), identity (DP-SGD noise) or prefix,
optimised for the run's participation -- --epochs E passes in a fixed order (E divides the steps)
or --min-sep B [--max-participations K] -- with noise --noise-multiplier times the clip bound
(--sensitivity). Its epsilon is that of one Gaussian release at the strategy's multi-participation
sensitivity; --sample-rate Q < 1 is cyclic Poisson sampling (banded only, --epochs, bands <= steps/epochs)
and gives the amplified accounting of Choquette-Choo et al. 2023. The output also states the
sensitivity (exact or an upper bound) and the prefix-sum error of the strategy beside DP-SGD's.

With --delta, each accountant's row gives epsilon and what produced it: the RDP order, the zCDP
rho, the tCDP (rho, omega), the PLD interval that brackets the true value, and the closed form
(exact) where one exists. zCDP and tCDP give Poisson subsampling no amplification: with
--sample-rate below 1 their rows say so (JSON: "ignores_sampling": true) instead of showing a large number
without comment.

DP-SGD in training terms: --epochs E --batch-size B --dataset-size N set --sample-rate B/N and
steps = ceil(E N / B) (the convention of TensorFlow Privacy's compute_dp_sgd_privacy; Opacus
counts ceil(N/B) steps per epoch at q = 1/ceil(N/B)). --noise-multiplier is sigma divided by
the sensitivity and --sample-rate the Poisson sampling rate (Opacus' names; --q is the deprecated
spelling of --sample-rate).

With --target-epsilon (Gaussian) the command calibrates the smallest sigma meeting (target
epsilon, delta) under each accountant; delta is --delta, default 1e-5, always stated.

examples:
  dpaudit account gaussian --noise-multiplier 1.1 --sample-rate 0.01 --steps 1000 --delta 1e-5
  dpaudit account gaussian --noise-multiplier 1.1 --epochs 10 --batch-size 256 --dataset-size 60000 --delta 1e-5
  dpaudit account gaussian --sigma 1 --delta 1e-5 --accountant rdp,pld,exact --json
  dpaudit account mf --strategy banded --bands 32 --steps 2000 --epochs 4 --noise-multiplier 4 --delta 1e-6
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
    p.add_argument("--sample-rate", type=float, default=None, dest="sample_rate", metavar="Q",
                   help="Poisson sampling rate in [0, 1] (default 1: no sampling)")
    p.add_argument("--q", type=float, default=None, dest="q_deprecated", metavar="Q",
                   help=argparse.SUPPRESS)  # the deprecated spelling of --sample-rate
    p.add_argument("--steps", type=count(1), default=None, metavar="T",
                   help="number of compositions (default 1, at most 2^53)")
    p.add_argument("--epochs", type=float, default=None, metavar="E",
                   help="training epochs: with --batch-size and --dataset-size, sets --sample-rate and --steps")
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
    g = p.add_argument_group("mf (matrix factorization / DP-FTRL)")
    g.add_argument("--strategy", choices=MF_STRATEGIES, default=None,
                   help="mf: the strategy C (optimised for the participation; default banded)")
    g.add_argument("--bands", type=count(1), default=None, metavar="B", help="mf banded: number of bands (default 8)")
    g.add_argument("--buffers", type=count(1), default=None, metavar="M", help="mf blt: number of buffers (default 3)")
    g.add_argument("--min-sep", type=count(1), default=None, dest="min_sep", metavar="B",
                   help="mf: participations at least B steps apart (instead of --epochs)")
    g.add_argument("--max-participations", type=count(1), default=None, dest="max_participations", metavar="K",
                   help="mf with --min-sep: at most K participations (default: as many as fit)")
    g.add_argument("--error", choices=("mean", "max"), default="mean",
                   help="mf: the prefix-sum error the strategy minimises (default mean)")
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
    return _subsample(mech, args.sample_rate)


def _subsample(mech, q):
    from dpaudit.mechanisms import PoissonSampled

    q = check_probability("--sample-rate", q)
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
    """``--sigma`` from ``--noise-multiplier``; ``--sample-rate`` and ``--steps`` from the epochs options
    (``--q``: the deprecated spelling of ``--sample-rate``, with a notice on stderr)."""
    from dpaudit.cli._args import deprecated_flag
    from dpaudit.core.validation import check_positive

    if getattr(args, "q_deprecated", None) is not None:
        if args.sample_rate is not None:
            raise _UsageError("give --sample-rate only (--q is its deprecated spelling), not both")
        deprecated_flag("account", "--q", "--sample-rate")
        args.sample_rate = args.q_deprecated

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
            raise _UsageError(f"{', '.join(given)} needs {' and '.join(missing)} too (together they set --sample-rate "
                              "and --steps)")
        if args.sample_rate is not None or args.steps is not None:
            raise _UsageError("give either --epochs/--batch-size/--dataset-size or --sample-rate/--steps, not both")
        from dpaudit.accounting.convenience import sampling_from_epochs

        try:
            args.sample_rate, args.steps = sampling_from_epochs(args.epochs, args.batch_size, args.dataset_size)
        except ValueError as exc:
            raise _UsageError(str(exc).replace("batch_size", "--batch-size").replace("dataset_size", "--dataset-size")
                              .replace("epochs", "--epochs", 1)) from None
    args.sample_rate = 1.0 if args.sample_rate is None else args.sample_rate
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
    from dpaudit.cli import DEBUG_ENV, EXIT_INTERNAL, EXIT_OK, debug_requested

    failed = {name: row for name, row in results.items() if "error" in row}
    if not failed:
        return EXIT_OK
    if debug_requested():
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


_MF_ONLY = {"--strategy": "strategy", "--bands": "bands", "--buffers": "buffers", "--min-sep": "min_sep",
            "--max-participations": "max_participations"}


def _run(args) -> int:
    from dpaudit.core.validation import check_count, check_delta, check_epsilon, check_positive

    if args.mechanism == "mf":
        return _run_mf(args)
    stray = [flag for flag, attr in _MF_ONLY.items() if getattr(args, attr) is not None]
    if stray or args.error != "mean":
        raise _UsageError(f"{(stray or ['--error'])[0]} applies to MECHANISM mf")
    if args.delta is None and args.target_epsilon is None:
        raise _UsageError("one of --delta or --target-epsilon is required")
    _resolve_sampling(args)
    delta_default = args.delta is None
    delta = DEFAULT_CALIBRATION_DELTA if delta_default else check_delta("--delta", args.delta)
    steps = check_count("--steps", args.steps, minimum=1)
    check_positive("--sensitivity", args.sensitivity)
    names = _accountant_names(args.accountant)
    params = {"sigma": args.sigma, "noise_multiplier": args.noise_multiplier, "scale": args.scale,
              "epsilon": args.epsilon, "sensitivity": args.sensitivity, "sample_rate": args.sample_rate, "steps": steps}
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
        note = _CLOSED_FORMS.get(args.mechanism, "closed form") if args.sample_rate == 1.0 else "closed form (one sampled step)"
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
    q = check_probability("--sample-rate", args.sample_rate)
    if q == 0.0:
        raise _UsageError("--sample-rate must be > 0 to calibrate sigma (a rate of 0 releases nothing)")
    results: dict = {}
    for name in names:
        try:
            sigma = calibrate_sigma(target, delta, sample_rate=q, steps=steps, accountant=name,
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
    title = (f"smallest Gaussian sigma for (epsilon, delta) = ({target:g}, {delta:g}){note}, sample rate {q:g}, "
             f"{steps} step(s), sensitivity {args.sensitivity:g}")
    print(_table(title, ("accountant", "sigma", "note"), rows))
    return 0


# -- mf: matrix factorization (DP-FTRL) --------------------------------------------------------
def _mf_participation(args, steps: int):
    from dpaudit.mechanisms.mf_participation import Participation

    if args.min_sep is not None:
        if args.epochs is not None:
            raise _UsageError("give either --epochs or --min-sep for mf, not both")
        if args.min_sep > steps:
            raise _UsageError(f"--min-sep must be at most --steps = {steps}, got {args.min_sep}")
        return Participation.min_sep(args.min_sep, args.max_participations)
    if args.max_participations is not None:
        raise _UsageError("--max-participations applies with --min-sep")
    if args.epochs is None:
        return Participation.single()
    epochs = float(args.epochs)
    if not (math.isfinite(epochs) and epochs >= 1 and epochs == int(epochs)):
        raise _UsageError(f"--epochs must be a positive integer for mf, got {args.epochs:g}")
    if steps % int(epochs):
        raise _UsageError(f"--epochs must divide --steps (fixed-order epochs of steps/epochs batches), got "
                          f"--epochs {int(epochs)}, --steps {steps}")
    return Participation.fixed_epoch(int(epochs))


def _mf_strategy(args, steps: int, part):
    from dpaudit.mechanisms.mf_optimize import optimize_banded_toeplitz, optimize_blt
    from dpaudit.mechanisms.mf_strategies import IdentityStrategy, PrefixSumStrategy

    kind = args.strategy or "banded"
    if args.bands is not None and kind != "banded":
        raise _UsageError("--bands applies to --strategy banded")
    if args.buffers is not None and kind != "blt":
        raise _UsageError("--buffers applies to --strategy blt")
    if kind == "identity":
        return IdentityStrategy(steps)
    if kind == "prefix":
        return PrefixSumStrategy(steps)
    if kind == "banded":
        bands = 8 if args.bands is None else args.bands
        if bands > steps:
            raise _UsageError(f"--bands must be at most --steps = {steps}, got {bands}")
        return optimize_banded_toeplitz(steps, bands, part, error=args.error).strategy
    if steps < 2:
        raise _UsageError("--strategy blt needs --steps >= 2")
    return optimize_blt(steps, 3 if args.buffers is None else args.buffers, part, error=args.error).strategy


def _mf_arguments(args):
    """The checked arguments of ``dpaudit account mf``: ``(delta, steps, clip sensitivity, sigma, sample rate,
    participation)``; every bad one a one-line usage error before any work."""
    from dpaudit.core.validation import check_delta, check_positive

    for flag, value in (("--scale", args.scale), ("--epsilon", args.epsilon), ("--batch-size", args.batch_size),
                        ("--dataset-size", args.dataset_size), ("--target-epsilon", args.target_epsilon)):
        if value is not None:
            raise _UsageError(f"{flag} does not apply to MECHANISM mf")
    if args.delta is None:
        raise _UsageError("mf needs --delta")
    if args.steps is None:
        raise _UsageError("mf needs --steps (the number of steps of the run)")
    delta = check_delta("--delta", args.delta)
    steps = args.steps
    if steps > 100_000:
        raise _UsageError(f"--steps must be at most 100000 for mf (strategy optimisation and sensitivity), got {steps}")
    sens_clip = check_positive("--sensitivity", args.sensitivity)
    if (args.sigma is None) == (args.noise_multiplier is None):
        raise _UsageError("mf needs exactly one of --sigma or --noise-multiplier")
    sigma = (check_positive("--sigma", args.sigma) if args.sigma is not None
             else check_positive("--noise-multiplier", args.noise_multiplier) * sens_clip)
    if getattr(args, "q_deprecated", None) is not None:
        if args.sample_rate is not None:
            raise _UsageError("give --sample-rate only (--q is its deprecated spelling), not both")
        from dpaudit.cli._args import deprecated_flag

        deprecated_flag("account", "--q", "--sample-rate")
        args.sample_rate = args.q_deprecated
    q = 1.0 if args.sample_rate is None else check_probability("--sample-rate", args.sample_rate)
    if q == 0.0:
        raise _UsageError("--sample-rate must be > 0 for mf (a rate of 0 releases nothing)")
    part = _mf_participation(args, steps)
    if q < 1.0:
        if part.kind != "fixed_epoch":
            raise _UsageError("--sample-rate < 1 (cyclic Poisson sampling) needs --epochs: the groups are the steps/epochs "
                              "batches")
        if (args.strategy or "banded") not in ("banded", "identity"):
            raise _UsageError("--sample-rate < 1 needs --strategy banded or identity (the amplification theorem is for "
                              "banded C)")
        if (args.bands or 8) > steps // part.epochs and (args.strategy or "banded") == "banded":
            raise _UsageError(f"--sample-rate < 1 needs --bands <= steps/epochs = {steps // part.epochs} (participations "
                              "closer than the bands overlap)")
    return delta, steps, sens_clip, sigma, q, part


def _mf_results(names, mf, mech, count: int, sigma: float, delta: float, q: float) -> dict:
    """Each requested accountant's row for the MF run (``exact``: the closed form where sens(C) is exact)."""
    results: dict = {}
    for name in names:
        if name == "exact":
            if q < 1.0 or not mf.strategy_sensitivity.exact:
                results[name] = {"skipped": NO_CLOSED_FORM if q < 1.0 else
                                 "sensitivity is an upper bound here: no closed form"}
            else:
                from dpaudit.conversions import gaussian_epsilon

                results[name] = {"epsilon": gaussian_epsilon(sigma, delta, mf.effective_sensitivity),
                                 "note": "closed form (Balle-Wang) at the exact sens(C)"}
            continue
        results[name] = _account_one(name, mech, count, delta)
    return results


def _mf_error(strategy, part, steps: int, sigma: float, sens_clip: float) -> dict:
    """The strategy's prefix-sum error beside DP-SGD's (the identity) at the same noise and at the same epsilon."""
    from dpaudit.mechanisms.mf_optimize import strategy_error

    err = strategy_error(strategy, part)
    ident = strategy_error(_identity(steps), part)
    scale = sigma / sens_clip
    error = {"rmse": math.sqrt(err.mean / (err.sensitivity ** 2)) * scale,
             "max": math.sqrt(err.max / (err.sensitivity ** 2)) * scale,
             "rmse_same_noise_identity": math.sqrt(ident.mean / (ident.sensitivity ** 2)) * scale,
             "rmse_ratio_to_identity_same_epsilon": math.sqrt(err.mean / ident.mean)}
    return error


def _run_mf(args) -> int:
    """``dpaudit account mf``: one release of the MF mechanism (or the amplified banded run)."""
    delta, steps, sens_clip, sigma, q, part = _mf_arguments(args)
    names = _accountant_names(args.accountant)
    strategy = _mf_strategy(args, steps, part)
    from dpaudit.mechanisms.matrix_factorization import MatrixFactorization

    mf = MatrixFactorization(strategy, sigma, part, sens_clip)
    sens = mf.strategy_sensitivity
    mech: object  # the step composed: the amplified strategy or mf itself
    if q < 1.0:
        from dpaudit.accounting.matrix_mechanism import banded_cyclic_poisson

        amp = banded_cyclic_poisson(strategy, sigma, q, groups=steps // part.epochs, sensitivity=sens_clip)
        mech, count = amp.mechanism, amp.count
    else:
        mech, count = mf, 1
    results = _mf_results(names, mf, mech, count, sigma, delta, q)
    error = _mf_error(strategy, part, steps, sigma, sens_clip)
    info = {"strategy": strategy.describe(), "participation": part.describe(), "steps": steps, "sigma": sigma,
            "sensitivity_per_step": sens_clip, "noise_multiplier": sigma / sens_clip,
            "strategy_sensitivity": sens.value, "sensitivity_exact": sens.exact, "sensitivity_method": sens.method,
            "mu": mf.mu, "sample_rate": q, "compositions": count, "mechanism_description": _describe(mech),
            "prefix_sum_error": error}
    if args.json:
        emit_json("account", {"mechanism": "mf", "delta": delta, **info, "results": _public(results)})
        return _finish(results)
    rows = [(name, _fmt(r["epsilon"]) if "epsilon" in r else "-", _detail(r)) for name, r in results.items()]
    kind = "exact" if sens.exact else "upper bound"
    lines = [f"{strategy.describe()}, {part.describe()}, noise multiplier {sigma / sens_clip:g}",
             f"sens(C) = {sens.value:.6g} ({kind}: {sens.method})",
             f"{count} x {_describe(mech)}" if q < 1.0 else f"one Gaussian release, mu = {mf.mu:.6g}",
             f"prefix-sum RMSE {error['rmse']:.4g} (max {error['max']:.4g}); at the same epsilon its RMSE is "
             f"{error['rmse_ratio_to_identity_same_epsilon']:.3g} x DP-SGD's (identity)"]
    print("\n".join(lines))
    print(_table(f"delta = {delta:g}", ("accountant", "epsilon", "from"), rows))
    return _finish(results)


def _identity(steps: int):
    from dpaudit.mechanisms.mf_strategies import IdentityStrategy

    return IdentityStrategy(steps)
