"""``dpaudit demo``: the main job of a first session -- two Laplace samplers audited, one report.

    dpaudit demo [--report FILE] [--trials N] [--seed S] [--confidence C] [--json]

Audits, with :func:`dpaudit.audit_mechanism`'s defaults and the claim epsilon = 1 on the
neighbouring inputs 0 and 1, two samplers of the same mechanism ``dpaudit.Laplace(1.0)``:

* ``Laplace(1.0).sample``, dpaudit's float-safe sampler (exact Laplace noise rounded to a grid: a
  post-processing of the mechanism, so epsilon = 1 holds for what it releases);
* ``Laplace(1.0).sample_textbook``, the textbook ``x + rng.laplace(0, 1)`` in doubles, whose low-order
  bits depend on x (Mironov, "On significance of the least significant bits for differential
  privacy", CCS 2012).

Each verdict is printed in the words of :meth:`dpaudit.AuditResult.explain` (the first: consistent;
the second: a floating-point violation beside the mathematical mechanism's bound) and, with
``--report FILE``, both audits go into one report (:func:`dpaudit.report.write_report` with a list).
Exit status 0 when both audits ran (the textbook sampler's violation is the demonstration, not a
failure); 1 only when the float-safe sampler is flagged (a certified violation of dpaudit's own
claim); 2 when the request cannot be carried out (checked before any trial).
"""

from __future__ import annotations

import argparse

__all__ = ["add_parser", "run", "DEMO_SAMPLERS", "DEMO_TITLE", "audit_both", "write_demo_report"]

#: (heading, attribute of ``dpaudit.Laplace(1.0)``, what it is) of the two audited samplers
DEMO_SAMPLERS = (
    ("dpaudit.Laplace(1.0).sample", "sample", "float-safe: exact Laplace noise rounded to a grid"),
    ("dpaudit.Laplace(1.0).sample_textbook", "sample_textbook", "x + rng.laplace(0, 1) in doubles"),
)

#: the title of the demo's report
DEMO_TITLE = "dpaudit demo: a float-safe and a textbook Laplace sampler"

DESCRIPTION = """
The main job in one command: audit dpaudit's own Laplace mechanism (scale 1, claimed epsilon 1,
neighbouring inputs 0 and 1) through two samplers, with the audit's defaults, and print what each
audit found in plain words:

  dpaudit.Laplace(1.0).sample           float-safe (exact noise on a grid): consistent
  dpaudit.Laplace(1.0).sample_textbook  x + rng.laplace(0, 1) in doubles: a violation through the
                                        floating-point representation (Mironov 2012), printed beside
                                        the bound certified for the mathematical mechanism

--report FILE writes both audits into one report (.html self-contained, or .md with PNG files;
needs matplotlib: pip install 'dpaudit[plot]'). Without --seed a fresh seed is drawn (as seed=None
does in Python) and printed, so the run can be repeated with --seed.

Exit status 0 when both audits ran (the textbook sampler's violation is the demonstration); 1 only
if dpaudit's float-safe sampler were flagged.

examples:
  dpaudit demo --seed 1 --report audit-report.html
  dpaudit demo --json
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    from dpaudit.cli._args import add_seed_argument, add_subcommand, count
    from dpaudit.core.defaults import DEFAULT_CONFIDENCE, DEFAULT_TRIALS
    from dpaudit.report.cli_support import add_report_argument

    p = add_subcommand(subparsers, "demo", help="audit dpaudit's float-safe and a textbook Laplace sampler; "
                                                "one report", description=DESCRIPTION)
    p.add_argument("--trials", type=count(2), default=DEFAULT_TRIALS, metavar="N",
                   help=f"runs per neighbouring input, for each sampler (default {DEFAULT_TRIALS}, the library's)")
    add_seed_argument(p)
    p.add_argument("--confidence", type=float, default=DEFAULT_CONFIDENCE, metavar="C",
                   help=f"confidence of each certified bound, in (0, 1) (default {DEFAULT_CONFIDENCE})")
    add_report_argument(p)
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.set_defaults(run=run)
    return p


def preflight(args) -> None:
    """Before any trial: the confidence and the report path."""
    from dpaudit.cli._checks import check_report_path
    from dpaudit.core.validation import check_confidence

    check_confidence("--confidence", args.confidence)
    if args.report:
        check_report_path(args.report, "--report")


def audit_both(trials: int, seed: int, confidence: float) -> list:
    """``[(heading, what, AuditResult)]`` for the two samplers of ``Laplace(1.0)``, each at ``seed``."""
    from dpaudit import Laplace, audit_mechanism

    mech = Laplace(1.0)
    return [(heading, what, audit_mechanism(getattr(mech, attr), 0.0, 1.0, epsilon=mech.epsilon, trials=trials,
                                            confidence=confidence, seed=seed))
            for heading, attr, what in DEMO_SAMPLERS]


def write_demo_report(path, audits):
    """Write ``audits`` (from :func:`audit_both`) into one report at ``path``; return the path written.

    Each audit is a section under its sampler's heading; ``Laplace(1.0)`` is the audited mechanism, so the gap line
    shows its exact epsilon beside the certified bound and the claim."""
    from dpaudit import Laplace
    from dpaudit.report.writer import write_report

    return write_report(path, audit=[(heading, result) for heading, _, result in audits], mechanism=Laplace(1.0),
                        title=DEMO_TITLE)


def print_text(audits, report, seed_text: str) -> None:
    """Each audit's verdict in :meth:`~dpaudit.AuditResult.explain`'s words, its findings, the report and the seed."""
    first = audits[0][2]
    print(f"Laplace mechanism, scale 1, claimed epsilon 1, inputs 0 and 1; {first.trials:,} trials per input, "
          f"{first.confidence:.0%} confidence")
    for i, (heading, what, result) in enumerate(audits, 1):
        ex = result.explain()
        print(f"\n{i}. {heading}  ({what})")
        print(f"   {ex['line']}")
        for finding in ex["findings"]:
            print(f"   - {finding}")
    print()
    if report is not None:
        print(f"report            : {report}")
    print(seed_text)


def run(args) -> int:
    from dpaudit.cli import EXIT_OK, EXIT_VIOLATION
    from dpaudit.cli._args import resolve_seed, seed_line
    from dpaudit.core.progress import disabled

    preflight(args)
    seed, source = resolve_seed(args)
    if args.json:
        with disabled():
            audits = audit_both(args.trials, seed, args.confidence)
    else:
        audits = audit_both(args.trials, seed, args.confidence)
    report = None
    if args.report:
        report = write_demo_report(args.report, audits)
    if args.json:
        from dpaudit.cli._output import emit_json

        rows = []
        for heading, what, result in audits:
            out = result.to_dict()
            out["details"].pop("roc", None)
            rows.append({"sampler": heading, "about": what, "findings": result.findings, **out})
        emit_json("demo", {"seed": seed, "seed_source": source, "report": None if report is None else str(report),
                           "audits": rows})
    else:
        print_text(audits, report, seed_line(seed, source))
    return EXIT_VIOLATION if audits[0][2].violation else EXIT_OK
