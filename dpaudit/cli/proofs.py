"""``dpaudit proofs``: run every numerical proof check and print one summary table.

    dpaudit proofs [--json] [--path DIR] [-k PATTERN] [--timeout SECONDS] [--verbose]

Each ``proofs_checks/<name>.py`` (files starting with ``_`` and ``conftest.py`` are helpers)
runs in its own subprocess (``python <file>``, working directory = the parent of the checks
directory, so ``python proofs_checks/<name>.py`` semantics hold). The summary has one row per
check: name, status (``ok`` / ``FAIL`` / ``TIMEOUT``), the worst margin parsed from the
check's ``worst margin M (tolerance T)`` lines (the minimum when a check prints several tables)
read in words, and the run time in seconds.

A margin is ``bound - exact`` at the check's worst case (``proofs_checks/_common.report``): >= 0
the bound holds; a negative margin no larger in size than the table's stated tolerance is
floating-point rounding of two nearly equal numbers (the check passes), printed as "holds up to
rounding" and never as a failure; below ``-tolerance`` the check fails. JSON rows carry
``worst_margin``, ``tolerance`` (of the table with the worst margin) and ``holds`` ("exactly",
"up to rounding", "no" or null when no margin was printed). Exit status 1 if any check failed or timed out, 0 otherwise; a missing
checks directory or a pattern that selects nothing is a bad argument (exit 2).

The checks directory is ``--path`` if given, else ``./proofs_checks``, else
``<package dir>/../proofs_checks`` (a source checkout), else ``<package dir>/_proofs_checks``
(an installed package: the wheel ships the checks there, see ``setup.py``).
"""

from __future__ import annotations

import argparse
import fnmatch
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["add_parser", "run", "find_checks_dir", "list_checks", "run_check", "parse_worst_margin",
           "parse_margins", "margin_reading", "MARGIN_LEGEND"]

_NUMBER = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan)"
_MARGIN_RE = re.compile(rf"worst margin\s+({_NUMBER})(?:\s*\(tolerance\s+({_NUMBER})\))?", re.IGNORECASE)

#: printed above the summary table: what a margin is and how to read its sign
MARGIN_LEGEND = ("worst margin = bound - exact value at the check's worst case. >= 0: the bound holds. Negative but\n"
                 "within the check's stated tolerance: floating-point rounding, the check passes. Below -tolerance: "
                 "it fails.")


DESCRIPTION = """
Run every numerical proof check -- one script per lemma or theorem, each comparing a bound with
an independent exact computation (mpmath, quadrature) -- in its own process, and print one
summary table: check, status, worst margin, seconds. Exit status 1 if any check fails.

The worst margin is bound - exact value at the check's worst case, read in words: "holds" when it
is >= 0; "holds up to rounding" when it is negative but within the check's stated tolerance
(floating-point rounding of two nearly equal numbers, e.g. -1.3e-15 against a tolerance of 1e-12:
the check passes); "FAILS" below -tolerance.

The checks ship with the package: from a source checkout they are proofs_checks/ at the top of
the repository, from an installed package they are inside it; --path DIR runs another copy.

examples:
  dpaudit proofs
  dpaudit proofs -k gaussian --verbose
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    from dpaudit.cli._args import add_subcommand

    p = add_subcommand(subparsers, "proofs",
                       help="run the numerical proof checks and print a summary table", description=DESCRIPTION)
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--path", metavar="DIR", help="directory of the checks (default: ./proofs_checks, else the "
                                                 "copy in the source checkout or the installed package)")
    p.add_argument("-k", dest="pattern", metavar="PATTERN",
                   help="run only checks whose name contains PATTERN (or matches it as a glob)")
    p.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS",
                   help="per-check time limit in seconds (default 600)")
    p.add_argument("--verbose", action="store_true", help="also print each check's own output")
    p.set_defaults(run=run)
    return p


def find_checks_dir(path: str | None = None) -> Path:
    """The checks directory: ``path``, else ``./proofs_checks``, else ``<package>/../proofs_checks``."""
    if path is not None:
        d = Path(path)
        if not d.is_dir():
            raise ValueError(f"--path must be an existing directory, got {path!r}")
        return d.resolve()
    package = Path(__file__).resolve().parents[1]
    for d in (Path.cwd() / "proofs_checks", package.parent / "proofs_checks", package / "_proofs_checks"):
        if d.is_dir() and list_checks(d):
            return d.resolve()
    raise ValueError("no proof checks found (looked in ./proofs_checks, next to the package and inside it); "
                     "use --path DIR, e.g. a checkout's proofs_checks directory")


def _matches(name: str, pattern: str | None) -> bool:
    if not pattern:
        return True
    if any(ch in pattern for ch in "*?["):
        return fnmatch.fnmatch(name, pattern)
    return pattern in name


def list_checks(directory: Path, pattern: str | None = None) -> list[Path]:
    """Check scripts in ``directory`` (sorted; helpers ``_*.py`` and ``conftest.py`` excluded)."""
    return sorted(p for p in Path(directory).glob("*.py")
                  if not p.name.startswith("_") and p.name != "conftest.py" and _matches(p.stem, pattern))


def parse_margins(output: str) -> list[tuple[float, float]]:
    """``(margin, tolerance)`` of every ``worst margin M (tolerance T)`` line of a check's output
    (tolerance 0 when the line states none); -0.0 is read as 0."""
    out = []
    for m in _MARGIN_RE.finditer(output):
        margin = float(m.group(1)) + 0.0  # (-0.0 + 0.0 is 0.0)
        tol = float(m.group(2)) if m.group(2) is not None else 0.0
        out.append((margin, tol))
    return out


def parse_worst_margin(output: str) -> float | None:
    """The smallest value on the ``worst margin X`` lines of a check's output (None if absent)."""
    vals = [m for m, _ in parse_margins(output)]
    if not vals:
        return None
    if any(math.isnan(v) for v in vals):
        return math.nan
    return min(vals)


def margin_reading(margins: list[tuple[float, float]]) -> tuple[str | None, float | None]:
    """``(holds, tolerance)``: whether every table's margin holds "exactly" (>= 0), "up to rounding"
    (some negative, each within its table's tolerance) or "no"; and the tolerance of the table with
    the worst margin. ``(None, None)`` without margins."""
    if not margins:
        return None, None
    worst, tol = min(margins, key=lambda mt: (math.inf if math.isnan(mt[0]) else mt[0]))
    if any(math.isnan(m) for m, _ in margins):
        return "no", tol
    if all(m >= 0 for m, _ in margins):
        return "exactly", tol
    if all(m >= -t for m, t in margins):
        return "up to rounding", tol
    return "no", tol


def run_check(script: Path, *, timeout: float = 600.0) -> dict:
    """Run one check in a subprocess; return its summary row as a dict."""
    env = dict(os.environ)
    env.setdefault("PYTHONHASHSEED", "0")
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, str(script)], cwd=str(script.parent.parent), env=env,
                              capture_output=True, text=True, timeout=timeout)
        status = "ok" if proc.returncode == 0 else "FAIL"
        out, err, code = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        status = "TIMEOUT"
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        code = None
    seconds = time.perf_counter() - t0
    margins = parse_margins(out)
    margin = parse_worst_margin(out)
    holds, tol = margin_reading(margins)
    return {"check": script.stem, "status": status, "worst_margin": margin, "tolerance": tol, "holds": holds,
            "seconds": round(seconds, 3), "returncode": code, "stdout": out, "stderr": err}


def _fmt_margin(r: dict) -> str:
    """The worst margin in words: a reader can tell "holds" from "fails" without knowing the sign rule."""
    m, tol, holds = r["worst_margin"], r.get("tolerance"), r.get("holds")
    if m is None:
        return "-"
    tol_text = f"{tol:g}" if tol is not None else "0"
    if holds == "exactly":
        return f"holds: {m:.3e} >= 0"
    if holds == "up to rounding":
        return f"holds up to rounding: {m:.3e} is within the tolerance {tol_text}"
    return f"FAILS: {m:.3e} < -tolerance {tol_text}"


def _print_table(results: list[dict]) -> None:
    header = ["check", "status", "worst margin (bound - exact)", "seconds"]
    body = [[r["check"], r["status"], _fmt_margin(r), f"{r['seconds']:.1f}"] for r in results]
    widths = [max(len(h), *(len(row[i]) for row in body)) for i, h in enumerate(header)]
    print(MARGIN_LEGEND)
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    for row in body:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
    failed = [r for r in results if r["status"] != "ok"]
    print(f"{len(results)} checks, {len(results) - len(failed)} ok, {len(failed)} failed"
          + (": " + ", ".join(r["check"] for r in failed) if failed else ""))


def run(args) -> int:
    timeout = float(args.timeout)
    if not timeout > 0 or math.isnan(timeout):
        raise ValueError(f"--timeout must be > 0, got {args.timeout}")
    directory = find_checks_dir(args.path)
    checks = list_checks(directory, args.pattern)
    if not checks:
        raise ValueError(f"no proof checks in {directory}" + (f" match -k {args.pattern!r}" if args.pattern else ""))
    results = []
    for script in checks:
        res = run_check(script, timeout=timeout)
        results.append(res)
        if args.verbose and not args.json:
            print(res["stdout"], end="")
            if res["stderr"]:
                print(res["stderr"], end="", file=sys.stderr)
        elif res["status"] != "ok" and not args.json:
            # show the failing check's output so the violation is visible
            print(f"--- {res['check']} ({res['status']}) ---")
            print(res["stdout"][-4000:], end="")
            if res["stderr"]:
                print(res["stderr"][-4000:], end="", file=sys.stderr)
    ok = all(r["status"] == "ok" for r in results)
    if args.json:
        from dpaudit.cli._output import emit_json

        emit_json("proofs", {
            "directory": str(directory),
            "ok": ok,
            "passed": sum(r["status"] == "ok" for r in results),
            "failed": sum(r["status"] != "ok" for r in results),
            "checks": [{"check": r["check"], "status": r["status"], "worst_margin": r["worst_margin"],
                        "tolerance": r["tolerance"], "holds": r["holds"], "seconds": r["seconds"],
                        "returncode": r["returncode"]} for r in results],
        })
    else:
        _print_table(results)
    return 0 if ok else 1
