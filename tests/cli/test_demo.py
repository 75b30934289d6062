"""``dpaudit demo`` (issue 26, item 11): the README's main job audits ``dpaudit.Laplace(1.0).sample`` and the
textbook float Laplace with the audit's defaults, prints "consistent" for the first and a floating-point
violation with the mathematical mechanism's bound for the second, and writes one report with both; the
README's quick-start output is its real output.
"""

from __future__ import annotations

import json
import re

import pytest

from dpaudit.cli import EXIT_OK, EXIT_USAGE, SUBCOMMANDS
from tests.support import REPO
from tests.support.cli import one_line, run

ROOT = REPO


def _quick_start():
    """(argv of the README's first command after ``dpaudit``, the ```output block shown after it)."""
    readme = (ROOT / "README.md").read_text()
    m = re.search(r"```bash\n(?P<cmd>[^\n]*dpaudit demo[^\n]*)\n```\n(?:(?!```).)*?```output\n(?P<out>.*?)```",
                  readme, re.S)
    assert m is not None, "the README's quick start shows the demo command and then its output"
    return m.group("cmd").split("dpaudit ", 1)[1].split(), m.group("out")


def test_demo_is_a_subcommand():
    assert "demo" in SUBCOMMANDS


def test_readme_quick_start_prints_what_the_readme_shows(capsys, tmp_path, monkeypatch):
    argv, shown = _quick_start()
    assert argv[0] == "demo" and "--report" in argv
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, argv)
    assert code == EXIT_OK, err
    assert out.rstrip() == shown.rstrip(), f"README quick start output differs; printed:\n{out}"
    report = tmp_path / argv[argv.index("--report") + 1]
    html = report.read_text()
    assert "dpaudit.Laplace(1.0).sample" in html and "dpaudit.Laplace(1.0).sample_textbook" in html


def test_demo_verdicts_consistent_then_floating_point_violation_with_the_mathematical_bound(capsys):
    code, out, err = run(capsys, ["demo", "--seed", "3", "--json"])
    assert code == EXIT_OK, err
    body = json.loads(out)
    assert body["command"] == "demo" and body["seed"] == 3 and body["seed_source"] == "--seed"
    safe, textbook = body["audits"]
    assert safe["sampler"] == "dpaudit.Laplace(1.0).sample" and safe["verdict"] == "consistent"
    assert safe["trials"] == textbook["trials"] == 10_000  # the library's default
    assert textbook["sampler"] == "dpaudit.Laplace(1.0).sample_textbook" and textbook["verdict"] == "violation"
    assert textbook["cause"] == "floating-point"
    assert 0 < textbook["mathematical_lower"] <= 1.0 < textbook["epsilon_lower"]
    assert {f["name"] for f in textbook["findings"]} == {"implementation", "mathematical"}


def test_demo_text_states_both_findings_and_a_fresh_seed(capsys):
    code, out, _ = run(capsys, ["demo", "--trials", "4000"])
    assert code == EXIT_OK
    first, second = out.split("\n2. ")
    assert "consistent:" in first and "VIOLATION" not in first
    assert "VIOLATION through floating-point representation" in second
    assert "The mathematical mechanism is consistent" in second
    seed = re.search(r"seed +: (\d+) \(drawn fresh; repeat the run with --seed \1\)", out)
    assert seed is not None, out


@pytest.mark.parametrize("argv, words", [
    (["demo", "--confidence", "1.5"], "--confidence"),
    (["demo", "--report", "no-such-dir/r.html"], "does not exist"),
    (["demo", "--report", "r.txt"], "unsupported report type"),
    (["demo", "--trials", "1"], "--trials"),
    (["demo", "--seed", "-1"], "--seed"),
])
def test_bad_arguments_exit_2_with_one_line_before_any_trial(capsys, tmp_path, monkeypatch, argv, words):
    import dpaudit

    def no_audit(*args, **kwargs):  # pragma: no cover - reached only if the checks came too late
        raise AssertionError("an audit ran before the arguments were checked")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(dpaudit, "audit_mechanism", no_audit)
    code, _, err = run(capsys, argv)
    assert code == EXIT_USAGE
    assert words in one_line(err)
