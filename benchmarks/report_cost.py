"""What a report costs against its audit, and what the second finding costs (issue 26, item 8 and "Done when").

    python benchmarks/report_cost.py [--rows a,b,c,d] [--trials 20000] [--cli-trials N] [--cold 3] [--warm 5]
                                     [--findings-trials 20000] [--findings-repeats 3] [--no-findings]

Rows (each an audit, then its report):

* ``a``: ``audit_mechanism(Laplace(1.0).sample, 0, 1, epsilon=1, trials=N)``, dpaudit's float-safe sampler,
  then ``write_report(path, audit=result, mechanism=Laplace(1.0))``;
* ``b``: the same with ``Laplace(1.0).sample_textbook`` (a floating-point violation: two findings);
* ``c``: ``dpaudit audit dp-sgd --report FILE`` (the CLI, in process: ``audit_optimizer``, then
  ``maybe_write_report``, which adds the accountants compared on dp-sgd's per-step mechanism);
* ``d``: ``dpaudit demo --report FILE`` (the CLI: both samplers of ``a`` and ``b`` at the CLI's trials, one
  report with two sections, :func:`dpaudit.cli.demo.write_demo_report`).

``--trials`` sets rows a and b; ``--cli-trials`` passes ``--trials`` to rows c and d (default: the CLI's own).
*Cold*: the first call in a fresh Python process (``import dpaudit`` and the CLI's start are counted in neither
phase; what each phase imports on the way -- scipy's attacks for the audit, matplotlib for the report -- in the
phase that needs it); one fresh process per ``--cold`` repeat. *Warm*: the later calls in the same processes
(``--warm`` per process). Times are CPU seconds of the process (``time.process_time``, all its threads), the best
of the repeats per phase: on a shared machine wall time measures the neighbours, and the best CPU time what the
code costs. ratio = report / audit.

Second finding: the textbook and the float-safe sampler audited at ``--findings-trials`` with
``statistic="auto"`` (every family; two findings when a bit-level family is in the contest), ``"auto-real"``
(the real-valued families only: one finding, the mathematical mechanism's) and ``"float-bits"`` (the bit-level
family alone: one finding), best CPU time of ``--findings-repeats`` on the same seed; the share column is each
time over the two-finding (``auto``) time.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROWS = {
    "a": "float-safe Laplace, audit_mechanism + write_report",
    "b": "textbook Laplace, audit_mechanism + write_report",
    "c": "dpaudit audit dp-sgd --report",
    "d": "dpaudit demo --report",
}


class _Timer:
    """CPU and wall seconds of each call of the wrapped functions, by phase."""

    def __init__(self):
        self.calls: list[tuple[str, float, float]] = []

    def wrap(self, phase: str, fn):
        def timed(*args, **kwargs):
            c0, w0 = time.process_time(), time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.calls.append((phase, time.process_time() - c0, time.perf_counter() - w0))
        return timed


def _audit_mechanism(*args, **kwargs):
    import dpaudit  # (inside the timed call: what the audit imports is its cost)

    return dpaudit.audit_mechanism(*args, **kwargs)


def _write_report(*args, **kwargs):
    from dpaudit.report.writer import write_report  # (inside the timed call: what the report imports is its cost)

    return write_report(*args, **kwargs)


def _mechanism_row(sampler_name: str, trials: int, seed: int, out: Path, timer: _Timer) -> None:
    from dpaudit.mechanisms.laplace import Laplace

    mech = Laplace(1.0)
    res = timer.wrap("audit", _audit_mechanism)(getattr(mech, sampler_name), 0.0, 1.0, epsilon=1.0, trials=trials,
                                                seed=seed)
    timer.wrap("report", _write_report)(out / "report.html", audit=res, mechanism=mech)


@contextlib.contextmanager
def _patched(module, name: str, replacement):
    old = getattr(module, name)
    setattr(module, name, replacement)
    try:
        yield
    finally:
        setattr(module, name, old)


def _cli_row(row: str, cli_trials: int | None, seed: int, out: Path, timer: _Timer) -> None:
    from dpaudit.cli import main

    argv = ["--seed", str(seed), "--report", str(out / "report.html")]
    if cli_trials is not None:
        argv += ["--trials", str(cli_trials)]
    if row == "c":
        import dpaudit.audit.optimizer as opt_mod
        from dpaudit.report import cli_support

        patches = [(opt_mod, "audit_optimizer", "audit"), (cli_support, "maybe_write_report", "report")]
        argv = ["audit", "dp-sgd"] + argv
    else:
        import dpaudit.cli.demo as demo

        patches = [(demo, "audit_both", "audit"), (demo, "write_demo_report", "report")]
        argv = ["demo"] + argv
    with contextlib.ExitStack() as stack:
        for module, name, phase in patches:
            stack.enter_context(_patched(module, name, timer.wrap(phase, getattr(module, name))))
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = main(argv)
    if code not in (0, 1):
        raise RuntimeError(f"dpaudit {' '.join(argv)} exited with {code}")


def run_calls(row: str, calls: int, trials: int, cli_trials: int | None, seed: int = 1) -> list[dict]:
    """``calls`` audits-and-reports of ``row`` in this process: ``[{"audit": cpu, "report": cpu, ...wall}]``."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(calls):
            timer = _Timer()
            if row in ("a", "b"):
                _mechanism_row("sample" if row == "a" else "sample_textbook", trials, seed, Path(tmp), timer)
            else:
                _cli_row(row, cli_trials, seed, Path(tmp), timer)
            sums: dict[str, float] = {}
            for phase, cpu, wall in timer.calls:
                sums[phase] = sums.get(phase, 0.0) + cpu
                sums[phase + "_wall"] = sums.get(phase + "_wall", 0.0) + wall
            out.append(sums)
    return out


def _child(row: str, calls: int, trials: int, cli_trials: int | None) -> list[dict]:
    """The calls of one fresh process (the first is cold)."""
    cmd = [sys.executable, __file__, "--child", row, "--calls", str(calls), "--trials", str(trials)]
    if cli_trials is not None:
        cmd += ["--cli-trials", str(cli_trials)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]),
                                                        os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
    return json.loads(done.stdout.strip().splitlines()[-1])


def cost_table(rows, trials: int, cli_trials: int | None, cold: int, warm: int) -> list[dict]:
    """Per row: the best cold and warm CPU seconds of the audit and of the report, and their ratios."""
    table = []
    for row in rows:
        runs = [_child(row, 1 + warm, trials, cli_trials) for _ in range(max(cold, 1))]
        first = [r[0] for r in runs]
        later = [c for r in runs for c in r[1:]]
        entry = {"row": row, "what": ROWS[row]}
        for name, calls in (("cold", first), ("warm", later)):
            if calls:
                a, r = min(c["audit"] for c in calls), min(c["report"] for c in calls)
                aw, rw = min(c["audit_wall"] for c in calls), min(c["report_wall"] for c in calls)
                entry[name] = {"audit": a, "report": r, "ratio": r / a, "wall_ratio": rw / aw}
        table.append(entry)
    return table


def findings_cost(trials: int, repeats: int, seed: int = 1) -> list[dict]:
    """Best CPU seconds of the default two-finding audit against one-finding audits (module docstring)."""
    import dpaudit

    mech = dpaudit.Laplace(1.0)
    dpaudit.audit_mechanism(mech.sample, 0.0, 1.0, epsilon=1.0, trials=200, seed=seed)  # imports, caches
    out = []
    for sampler in ("sample_textbook", "sample"):
        times = {}
        for statistic in ("auto", "auto-real", "float-bits"):
            best, res = float("inf"), None
            for _ in range(max(repeats, 1)):
                c0 = time.process_time()
                res = dpaudit.audit_mechanism(getattr(mech, sampler), 0.0, 1.0, epsilon=1.0, trials=trials, seed=seed,
                                              statistic=statistic)
                best = min(best, time.process_time() - c0)
            times[statistic] = (best, max(len(res.findings), 1), res.epsilon_lower)  # type: ignore[union-attr]
        for statistic, (t, n, eps) in times.items():
            out.append({"sampler": sampler, "statistic": statistic, "cpu": t, "findings": n, "epsilon_lower": eps,
                        "share": t / times["auto"][0]})
    return out


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def print_cost_table(table) -> None:
    print("| row | what | cold audit s | cold report s | cold ratio | warm audit s | warm report s | warm ratio "
          "| wall ratios (cold, warm) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for e in table:
        cells, walls = [], []
        for name in ("cold", "warm"):
            m = e.get(name)
            cells += ([f"{m['audit']:.2f}", f"{m['report']:.2f}", f"{m['ratio']:.2f}"] if m else ["-", "-", "-"])
            walls.append(f"{m['wall_ratio']:.2f}" if m and "wall_ratio" in m else "-")
        cells.append(", ".join(walls))
        print(f"| {e['row']} | {e['what']} | " + " | ".join(cells) + " |", flush=True)


def print_findings(rows) -> None:
    print("| sampler | statistic | findings | certified epsilon | CPU s | share of auto |")
    print("|---|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['sampler']} | {r['statistic']} | {r['findings']} | {r['epsilon_lower']:.3f} | {r['cpu']:.2f} | "
              f"{r['share']:.2f} |", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n\n".join(__doc__.split("\n\n")[2:]))
    parser.add_argument("--rows", default="a,b,c,d", help="comma-separated rows among a,b,c,d (default all)")
    parser.add_argument("--trials", type=int, default=20_000, help="trials per input of rows a and b (default 20000)")
    parser.add_argument("--cli-trials", type=int, default=None, help="--trials of rows c and d (default: the CLI's)")
    parser.add_argument("--cold", type=int, default=3, help="fresh processes per row (default 3)")
    parser.add_argument("--warm", type=int, default=5, help="warm calls per process (default 5)")
    parser.add_argument("--findings-trials", type=int, default=20_000, help="trials of the findings rows (20000)")
    parser.add_argument("--findings-repeats", type=int, default=3, help="timings per findings row (default 3)")
    parser.add_argument("--no-findings", action="store_true", help="skip the second-finding table")
    parser.add_argument("--child", choices=sorted(ROWS), help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(run_calls(args.child, args.calls, args.trials, args.cli_trials)))
        return 0
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    unknown = [r for r in rows if r not in ROWS]
    if unknown:
        parser.error(f"unknown rows {unknown}; choose among {','.join(ROWS)}")
    print(f"cores: {os.cpu_count()}, load average before: {_load()}")
    print(f"report against audit, CPU seconds, best of {args.cold} fresh processes (cold) and of "
          f"{args.cold * args.warm} later calls (warm); rows a, b at {args.trials:,} trials; the last column: the "
          "same ratios in wall seconds")
    print_cost_table(cost_table(rows, args.trials, args.cli_trials, args.cold, args.warm))
    if not args.no_findings:
        print(f"\nthe second finding: audit_mechanism on Laplace(1.0) at {args.findings_trials:,} trials, "
              f"CPU seconds, best of {args.findings_repeats}")
        print_findings(findings_cost(args.findings_trials, args.findings_repeats))
    print(f"load average after: {_load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
