"""``dpaudit proofs`` shows margins a reader cannot mistake for failures (issue 26, item 11).

A check's margin is bound - exact at its worst case; a negative margin within the check's stated
tolerance is floating-point rounding and the check passes (e.g. gaussian_zcdp: -1.332e-15 against a
tolerance of 1e-12). The table reads each margin in words and states the sign convention.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from dpaudit.cli import main
from tests.support import REPO

CHECK = textwrap.dedent('''
    import sys
    print("== {title}")
    print("compared 3 cases; worst margin {margin} (tolerance {tol}); {verdict}")
    sys.exit({code})
''')


@pytest.fixture
def checks(tmp_path):
    d = tmp_path / "proofs_checks"
    d.mkdir()
    cases = {"exact_ok": ("2.500e-01", "0", "OK", 0), "rounding_ok": ("-1.332e-15", "1e-12", "OK", 0),
             "negative_zero": ("-0.000e+00", "0", "OK", 0), "broken": ("-3.000e-03", "1e-12", "VIOLATION", 1)}
    for name, (margin, tol, verdict, code) in cases.items():
        (d / f"{name}.py").write_text(CHECK.format(title=name, margin=margin, tol=tol, verdict=verdict, code=code))
    return d


def _rows(out: str) -> dict:
    return {line.split()[0]: line for line in out.splitlines() if line.split() and line.split()[0] in
            ("exact_ok", "rounding_ok", "negative_zero", "broken")}


def test_a_negative_margin_within_the_tolerance_reads_as_holding(checks, capsys):
    assert main(["proofs", "--path", str(checks), "-k", "*_ok"]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    assert "holds up to rounding" in rows["rounding_ok"] and "within the tolerance 1e-12" in rows["rounding_ok"]
    assert "FAIL" not in rows["rounding_ok"] and "FAIL" not in out.split("\n", 2)[-1].replace("0 failed", "")
    assert "holds: 2.500e-01 >= 0" in rows["exact_ok"]
    # the sign convention is stated above the table
    from dpaudit.cli.proofs import MARGIN_LEGEND

    assert out.startswith(MARGIN_LEGEND) and "bound - exact" in out and "Below -tolerance" in out


def test_negative_zero_and_a_real_failure(checks, capsys):
    assert main(["proofs", "--path", str(checks)]) == 1
    rows = _rows(capsys.readouterr().out)
    assert "holds: 0.000e+00 >= 0" in rows["negative_zero"] and "-0.000" not in rows["negative_zero"]
    assert rows["broken"].split()[1] == "FAIL" and "FAILS: -3.000e-03 < -tolerance 1e-12" in rows["broken"]


def test_json_carries_the_tolerance_and_the_reading(checks, capsys):
    assert main(["proofs", "--path", str(checks), "--json"]) == 1
    by = {c["check"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert by["rounding_ok"]["holds"] == "up to rounding" and by["rounding_ok"]["tolerance"] == 1e-12
    assert by["rounding_ok"]["worst_margin"] == pytest.approx(-1.332e-15)
    assert by["exact_ok"]["holds"] == "exactly" and by["broken"]["holds"] == "no"
    assert by["negative_zero"]["worst_margin"] == 0.0 and by["negative_zero"]["holds"] == "exactly"


def test_margin_reading_over_several_tables():
    from dpaudit.cli.proofs import margin_reading, parse_margins

    out = "worst margin 1e-3 (tolerance 0)\nworst margin -1e-14 (tolerance 1e-12)\nworst margin 2 (tolerance 0)"
    assert parse_margins(out) == [(1e-3, 0.0), (-1e-14, 1e-12), (2.0, 0.0)]
    assert margin_reading(parse_margins(out)) == ("up to rounding", 1e-12)
    assert margin_reading([(-1e-14, 0.0), (1.0, 1.0)]) == ("no", 0.0)  # the tolerance of ITS table counts
    assert margin_reading([]) == (None, None)
    assert margin_reading(parse_margins("worst margin 0.5")) == ("exactly", 0.0)


@pytest.mark.slow
def test_the_real_check_with_a_rounding_margin(capsys):

    repo = REPO / "proofs_checks"
    assert main(["proofs", "--path", str(repo), "-k", "gaussian_zcdp", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["checks"][0]
    assert row["status"] == "ok" and row["holds"] in ("exactly", "up to rounding")
    assert row["worst_margin"] >= -row["tolerance"]
