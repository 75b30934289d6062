"""Tests of ``dpaudit proofs`` (dpaudit.cli.proofs)."""

import json
import math
import textwrap

import pytest

from dpaudit.cli import main
from dpaudit.cli.proofs import find_checks_dir, list_checks, parse_worst_margin
from tests.support import REPO

COMMON = textwrap.dedent('''
    def report(title, header, rows, margins, *, tol=0.0, note=""):
        worst = min(margins) if margins else float("inf")
        ok = all(m >= -tol for m in margins)
        print(f"compared {len(margins)} cases; worst margin {worst:.3e} (tolerance {tol:g}); {'OK' if ok else 'VIOLATION'}")
        return 0 if ok else 1
''')

SCRIPT = textwrap.dedent('''
    import os, sys
    sys.path.insert(0, os.path.dirname(__file__))
    from _common import report

    def main() -> int:
        return report("t", ["x"], [[1]], {margins})

    if __name__ == "__main__":
        sys.exit(main())
''')


@pytest.fixture
def checks(tmp_path):
    d = tmp_path / "proofs_checks"
    d.mkdir()
    (d / "_common.py").write_text(COMMON)
    (d / "conftest.py").write_text("raise SystemExit('conftest must not be run')\n")
    (d / "alpha_ok.py").write_text(SCRIPT.format(margins="[0.5, 0.25]"))
    (d / "beta_ok.py").write_text("print('worst margin 7.0e-4 in a first table')\n" + SCRIPT.format(margins="[1e-3]"))
    return d


def test_all_pass_table(checks, capsys):
    assert main(["proofs", "--path", str(checks)]) == 0
    out = capsys.readouterr().out
    assert "alpha_ok" in out and "beta_ok" in out and "conftest" not in out and "_common" not in out
    assert "2.500e-01" in out           # worst margin of alpha_ok
    assert "7.000e-04" in out           # min over several 'worst margin' lines
    assert "2 checks, 2 ok, 0 failed" in out


def test_failure_exit_1_and_json(checks, capsys):
    (checks / "gamma_bad.py").write_text(SCRIPT.format(margins="[0.1, -0.2]"))
    (checks / "delta_crash.py").write_text("raise RuntimeError('boom')\n")
    assert main(["proofs", "--path", str(checks), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    by = {c["check"]: c for c in data["checks"]}
    assert data["ok"] is False and data["failed"] == 2 and data["passed"] == 2
    assert by["gamma_bad"]["status"] == "FAIL" and by["gamma_bad"]["worst_margin"] == pytest.approx(-0.2)
    assert by["delta_crash"]["status"] == "FAIL" and by["delta_crash"]["worst_margin"] is None
    assert by["alpha_ok"]["status"] == "ok" and by["alpha_ok"]["seconds"] >= 0


def test_pattern_selects(checks, capsys):
    assert main(["proofs", "--path", str(checks), "-k", "beta", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["check"] for c in data["checks"]] == ["beta_ok"]
    assert [p.stem for p in list_checks(checks, "a*_ok")] == ["alpha_ok"]


def test_timeout(checks, capsys):
    (checks / "slow.py").write_text("import time\ntime.sleep(30)\n")
    assert main(["proofs", "--path", str(checks), "-k", "slow", "--timeout", "0.5", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["checks"][0]["status"] == "TIMEOUT"


def test_bad_arguments(tmp_path, checks, capsys):
    assert main(["proofs", "--path", str(tmp_path / "nope")]) == 2
    assert main(["proofs", "--path", str(checks), "-k", "zzz"]) == 2
    assert main(["proofs", "--path", str(checks), "--timeout", "-1"]) == 2
    assert "error" in capsys.readouterr().err


def test_find_checks_dir_default(monkeypatch, tmp_path, checks):
    monkeypatch.chdir(checks.parent)
    assert find_checks_dir() == checks.resolve()
    monkeypatch.chdir(tmp_path / "proofs_checks")  # no ./proofs_checks here: falls back to the package's
    repo = REPO / "proofs_checks"
    assert find_checks_dir() == repo.resolve()


def test_parse_worst_margin():
    assert parse_worst_margin("compared 3 cases; worst margin -1.5e-03 (tolerance 0); VIOLATION") == -1.5e-3
    assert parse_worst_margin("worst margin inf\nworst margin 2.0") == 2.0
    assert parse_worst_margin("nothing here") is None
    assert math.isnan(parse_worst_margin("worst margin nan"))


def test_runs_a_real_check(capsys):
    repo = REPO / "proofs_checks"
    assert main(["proofs", "--path", str(repo), "-k", "pure_dp_to_zcdp", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["checks"][0]["status"] == "ok" and data["checks"][0]["worst_margin"] >= 0


def test_help_lists_options(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["proofs", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--json" in out and "--path" in out and "-k" in out
