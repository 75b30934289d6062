"""One seed story for the CLI and Python (issue 26, item 11).

Python's ``seed=None`` draws fresh entropy and records it (``details["seed"]``); the CLI does the same
when ``--seed`` is not given, and prints the seed it used (JSON: ``seed``), so any run can be
repeated with ``--seed``; the same seed gives the same result from the CLI and from Python.
"""

from __future__ import annotations

import json

import pytest

from dpaudit.audit import audit_optimizer
from dpaudit.cli import EXIT_OK
from tests.support.cli import run

AUDIT = ["audit", "dp-gd", "--steps", "20", "--trials", "300", "--json"]


def test_without_seed_a_fresh_seed_is_drawn_recorded_and_repeatable(capsys):
    code, out, _ = run(capsys, AUDIT)
    first = json.loads(out)
    code2, out2, _ = run(capsys, AUDIT)
    second = json.loads(out2)
    assert code == code2 == EXIT_OK
    assert first["seed_source"] == second["seed_source"] == "fresh"
    assert first["seed"] != second["seed"] and first["seed"] == first["details"]["seed"]
    assert first["seed"] >= 2**64  # 128 bits of entropy, as numpy's SeedSequence() draws for seed=None
    code, out, _ = run(capsys, [*AUDIT, "--seed", str(first["seed"])])
    again = json.loads(out)
    assert again["seed_source"] == "--seed" and again["epsilon_lower"] == first["epsilon_lower"]
    assert again["details"]["threshold_test"] == first["details"]["threshold_test"]
    # Python, with the seed the CLI printed, gives the same audit
    from dpaudit.optimizers import make_optimizer

    py = audit_optimizer(make_optimizer("dp-gd", steps=20), trials=300, seed=first["seed"])
    assert py.epsilon_lower == first["epsilon_lower"] and py.details["seed"] == first["seed"]


def test_text_output_prints_the_seed_and_how_to_repeat(capsys):
    code, out, _ = run(capsys, [a for a in AUDIT if a != "--json"])
    assert code == EXIT_OK
    line = next(ln for ln in out.splitlines() if ln.startswith("seed"))
    seed = int(line.split(":")[1].split()[0])
    assert f"(drawn fresh; repeat the run with --seed {seed})" in line


@pytest.mark.parametrize("argv", [["audit", "dp-gd"], ["report"], ["renyi"], ["audit", "mechanism", "m:f", "--x", "0",
                                                                             "--x-prime", "1", "--epsilon", "1"]])
def test_every_seed_option_defaults_to_fresh_entropy_and_says_so(capsys, argv):
    from dpaudit.cli import build_parser

    assert build_parser().parse_args(argv).seed is None
    with pytest.raises(SystemExit):
        build_parser().parse_args([*(argv[:2] if argv[0] == "audit" else argv[:1]), "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "default: fresh entropy, like seed=None in Python" in text


def test_renyi_prints_its_seed(capsys):
    code, out, _ = run(capsys, ["renyi", "--steps", "1", "--alpha", "2", "--trials", "200", "--json"])
    doc = json.loads(out)
    assert code == EXIT_OK and doc["seed_source"] == "fresh" and isinstance(doc["seed"], int)
    code, out, _ = run(capsys, ["renyi", "--steps", "1", "--alpha", "2", "--trials", "200", "--json", "--seed",
                                str(doc["seed"])])
    assert json.loads(out)["rows"] == doc["rows"]
