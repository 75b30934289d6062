"""Issue 13, the command line a reader can act on: --version, plain help, one list syntax, one JSON
convention, --accountant with several values and exact, training-time spellings, estimates before
large audits, checks before any work, and proofs from an installed package."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from dpaudit.cli import SUBCOMMANDS, build_parser
from tests.support import REPO
from tests.support.cli import run

ROOT = REPO


def strict_json(text: str) -> dict:
    def refuse(token):
        raise AssertionError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


def test_version(capsys):
    import dpaudit

    code, out, _ = run(capsys, ["--version"])
    assert code == 0 and out.strip() == f"dpaudit {dpaudit.__version__}"


# ------------------------------------------------------------------------------------- help
MARKUP = [r"``", r":func:", r":mod:", r":class:", r"\bdpaudit\.[a-z_]+\.", r"\b(?!DPAUDIT_)[A-Z]{2,}_[A-Z_]{2,}\b",
          r"\b(auditing|accounting|seed-theorems|architecture)\.md\b", r"\bissue \d+", r"seed-theorems"]


@pytest.mark.parametrize("command", [None, *SUBCOMMANDS])
def test_help_is_plain_text(capsys, command):
    code, out, _ = run(capsys, ([command] if command else []) + ["--help"])
    assert code == 0 and "usage:" in out
    for pattern in MARKUP:
        assert not re.search(pattern, out), (command, pattern, re.search(pattern, out).group(0))
    assert "exit status:" in out and "130" in out
    if command:
        assert "examples:" in out


# ------------------------------------------------------------------------------------- lists
def test_one_list_syntax_everywhere():
    p = build_parser()
    same = [
        (["account", "gaussian", "--accountant", "rdp,pld"], ["account", "gaussian", "--accountant", "rdp",
                                                              "--accountant", "pld"], "accountant"),
        (["renyi", "--steps", "1,3"], ["renyi", "--steps", "1", "--steps", "3"], "steps"),
        (["renyi", "--alpha", "2,5"], ["renyi", "--alpha", "2", "--alpha", "5"], "alpha"),
        (["renyi", "--method", "gaussian,nonparametric"], ["renyi", "--method", "gaussian", "--method",
                                                           "nonparametric"], "method"),
        (["report", "--renyi-steps", "1,3"], ["report", "--renyi-steps", "1", "--renyi-steps", "3"], "renyi_steps"),
    ]
    for a, b, dest in same:
        assert getattr(p.parse_args(a), dest) == getattr(p.parse_args(b), dest), (a, b)
    assert p.parse_args(["account", "gaussian"]).accountant == ["all"]  # a given list replaces the default
    assert p.parse_args(["renyi", "--steps", "7"]).steps == [7]
    assert p.parse_args(["report", "--renyi-steps", "4"]).renyi_steps == [4]


@pytest.mark.parametrize("argv,fragment", [
    (["account", "gaussian", "--accountant", "rdp,foo"], "invalid accountant 'foo'"),
    (["account", "gaussian", "--accountant", "rdp,"], "comma-separated list"),
    (["renyi", "--steps", "1,0"], "[1, 2^53]"),
    (["renyi", "--alpha", "2,0.5"], "alpha"),
])
def test_bad_lists_exit_2_one_line(capsys, argv, fragment):
    code, out, err = run(capsys, argv)
    assert code == 2 and out == "" and fragment in err and len(err.strip().splitlines()) == 1


def test_renyi_method_all_runs_every_estimator(capsys):
    from dpaudit.audit.stats.renyi import RENYI_METHODS

    code, out, _ = run(capsys, ["renyi", "--steps", "2", "--alpha", "2", "--trials", "400", "--method", "all",
                                "--json"])
    d = strict_json(out)
    assert code == 0 and d["methods"] == list(RENYI_METHODS) and "gaussian-unequal" in d["methods"]
    assert {r["method"] for r in d["rows"]} == set(RENYI_METHODS)


# ------------------------------------------------------------------------------------- account
def test_accountant_several_values_and_exact(capsys):
    code, out, _ = run(capsys, ["account", "gaussian", "--sigma", "1", "--steps", "4", "--delta", "1e-5",
                                "--accountant", "pld,exact", "--json"])
    d = strict_json(out)
    assert code == 0 and list(d["results"]) == ["pld", "exact"]
    from dpaudit.conversions import gaussian_epsilon

    exact = d["results"]["exact"]["epsilon"]
    assert exact == gaussian_epsilon(0.5, 1e-5)  # 4 Gaussians of sigma 1 = one of sigma 1/2
    # gaussian_epsilon is the Balle-Wang root rounded UP (tens of ulps outwards) and the PLD upper end is
    # the exact Gaussian curve rounded up by a few ulps: both are upper bounds on the true value, in
    # either order; the PLD interval must bracket the true value (mpmath, 50 digits)
    import mpmath

    with mpmath.workdps(50):
        mu = mpmath.mpf(2)
        true = mpmath.findroot(lambda e: mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)
                               - mpmath.mpf("1e-5"), 10)
    assert d["results"]["pld"]["lower"] <= true <= d["results"]["pld"]["upper"]
    assert d["results"]["pld"]["lower"] <= exact and true <= exact
    code, out, _ = run(capsys, ["account", "gaussian", "--sigma", "1", "--sample-rate", "0.1", "--steps", "2", "--delta", "1e-5",
                                "--accountant", "exact"])
    assert code == 0 and "no closed form" in out
    # one sampled step has a closed form (its own pair): inside the PLD interval
    code, out, _ = run(capsys, ["account", "gaussian", "--sigma", "1", "--sample-rate", "0.1", "--delta", "1e-5",
                                "--accountant", "exact,pld", "--json"])
    res = json.loads(out)["results"]
    assert code == 0 and res["pld"]["lower"] <= res["exact"]["epsilon"] <= res["pld"]["upper"] * (1 + 1e-9)
    code, out, _ = run(capsys, ["account", "laplace", "--scale", "2", "--delta", "1e-5", "--accountant", "exact,all"])
    rows = [line.split()[0] for line in out.splitlines()[3:]]
    assert rows == ["exact", "rdp", "zcdp", "tcdp", "pld"]  # in the order asked, without repeats


def test_noise_multiplier_and_epochs(capsys):
    from dpaudit.accounting.convenience import get_epsilon

    code, out, _ = run(capsys, ["account", "gaussian", "--noise-multiplier", "1.1", "--epochs", "10",
                                "--batch-size", "256", "--dataset-size", "60000", "--delta", "1e-5",
                                "--accountant", "rdp", "--json"])
    d = strict_json(out)
    assert code == 0 and d["parameters"]["steps"] == 2344 and d["parameters"]["sample_rate"] == 256 / 60000
    assert d["results"]["rdp"]["epsilon"] == get_epsilon(noise_multiplier=1.1, sample_rate=256 / 60000, epochs=10,
                                                         delta=1e-5)
    code, out2, _ = run(capsys, ["account", "gaussian", "--sigma", "2.2", "--sensitivity", "2", "--sample-rate",
                                 str(256 / 60000), "--steps", "2344", "--delta", "1e-5", "--accountant", "rdp",
                                 "--json"])
    assert strict_json(out2)["results"]["rdp"]["epsilon"] == d["results"]["rdp"]["epsilon"]
    for argv, fragment in ((["--sigma", "1", "--noise-multiplier", "1"], "either --sigma or --noise-multiplier"),
                           (["--noise-multiplier", "1", "--epochs", "1"], "--batch-size and --dataset-size"),
                           (["--noise-multiplier", "1", "--epochs", "1", "--batch-size", "5", "--dataset-size", "9",
                             "--sample-rate", "0.1"], "not both"),
                           (["--noise-multiplier", "1", "--epochs", "1", "--batch-size", "50", "--dataset-size", "9"],
                            "--batch-size")):
        code, out, err = run(capsys, ["account", "gaussian", "--delta", "1e-5", *argv])
        assert code == 2 and out == "" and fragment in err, (argv, err)


# ------------------------------------------------------------------------------------- JSON
def test_every_json_object_shares_keys_and_is_strict(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    checks = tmp_path / "checks"
    checks.mkdir()
    (checks / "c.py").write_text("print('worst margin inf')\n")
    commands = {
        "account": ["account", "gaussian", "--sigma", "1", "--delta", "1e-5", "--accountant", "rdp,tcdp"],
        "audit": ["audit", "projection", "--trials", "300"],
        "renyi": ["renyi", "--steps", "2", "--alpha", "2", "--trials", "300"],
        "report": ["report", "dp-gd", "--no-audit", "--no-renyi", "--max-steps", "2", "--out", str(tmp_path / "r.html")],
        "proofs": ["proofs", "--path", str(checks)],
        "demo": ["demo", "--trials", "300", "--seed", "1"],
    }
    assert set(commands) == set(SUBCOMMANDS)
    import dpaudit

    for name, argv in commands.items():
        code, out, _ = run(capsys, argv + ["--json"])
        assert code == 0, name
        assert len(out.strip().splitlines()) == 1, name
        d = strict_json(out)
        assert list(d)[:2] == ["command", "dpaudit_version"], name
        assert d["command"] == name and d["dpaudit_version"] == dpaudit.__version__
    code, out, _ = run(capsys, commands["account"] + ["--json"])
    assert strict_json(out)["results"]["tcdp"]["omega"] == "inf"  # a Gaussian is not tCDP-bounded in omega
    code, out, _ = run(capsys, commands["proofs"] + ["--json"])
    assert strict_json(out)["checks"][0]["worst_margin"] == "inf"


def test_non_finite_numbers_follow_one_rule():
    from dpaudit.core.jsonable import to_jsonable

    assert to_jsonable({"a": math.inf, "b": -math.inf, "c": math.nan, "d": 1.5}) == \
        {"a": "inf", "b": "-inf", "c": None, "d": 1.5}


# ------------------------------------------------------------------------------------- before work
@pytest.fixture
def no_work(monkeypatch):
    import dpaudit.audit.linear_instance as lin
    import dpaudit.audit.optimizer as opt_mod
    import dpaudit.cli._estimate as est
    import dpaudit.report.data as data

    def forbidden(*a, **k):
        raise AssertionError("work started before the arguments were checked")

    for mod, name in ((opt_mod, "audit_optimizer"), (lin, "linear_instance_table"), (data, "compare_accountants"),
                      (est, "estimate_audit")):
        monkeypatch.setattr(mod, name, forbidden)


@pytest.mark.parametrize("argv", [
    ["audit", "dp-agd", "--trials", "1000000", "--confidence", "2"],
    ["audit", "dp-agd", "--trials", "0"],
    ["report", "dp-agd", "--trials", "1000000", "--confidence", "0"],
    ["report", "dp-agd", "--renyi-trials", "1"],
    ["renyi", "--trials", "1000000", "--confidence", "1"],
    ["renyi", "--method", "bogus"],
])
def test_bad_trials_and_confidence_fail_before_any_work(capsys, no_work, argv):
    code, out, err = run(capsys, argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err


def test_large_audit_prints_its_estimate_before_starting(capsys, monkeypatch):
    import dpaudit.audit.optimizer as opt_mod
    import dpaudit.cli._estimate as est

    calls = []

    def fake_audit(*a, **k):
        calls.append(capsys.readouterr().err)  # what was printed before the audit started
        raise KeyboardInterrupt

    monkeypatch.setattr(opt_mod, "audit_optimizer", fake_audit)
    monkeypatch.setattr(est, "ANNOUNCE_SECONDS", 0.0)
    code, _, err = run(capsys, ["audit", "dp-sgd", "--trials", "3000000"])
    assert code == 130 and calls
    line = calls[0].strip()
    assert line.startswith("dpaudit audit: 3,000,000 trials per input: estimated") and "of memory" in line
    assert "pilot" in line


def test_estimate_is_in_the_right_range():
    """The pilot's time per run, scaled, is within a factor 3 of a real small audit."""
    import time

    from dpaudit.audit import audit_optimizer
    from dpaudit.cli._estimate import estimate_audit
    from dpaudit.optimizers import make_optimizer

    opt = make_optimizer("dp-sgd")
    est = estimate_audit(opt, 4000)
    t0 = time.perf_counter()
    audit_optimizer(opt, trials=4000, seed=0)
    real = time.perf_counter() - t0
    assert real / 3 < est["seconds"] < real * 3, (est, real)
    assert est["bytes"] > 4000 * 16


# ------------------------------------------------------------------------------------- proofs
@pytest.mark.slow
def test_proofs_run_from_an_installed_wheel(tmp_path):
    """Build the wheel, unpack it as site-packages, and run `dpaudit proofs` far from the checkout."""
    wheel_dir = tmp_path / "wheel"
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(wheel_dir)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    wheel = next(wheel_dir.glob("dpaudit-*.whl"))
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        assert "dpaudit/_proofs_checks/_common.py" in names and "dpaudit/_proofs_checks/conftest.py" not in names
        z.extractall(site)
    shipped = {Path(n).name for n in names if n.startswith("dpaudit/_proofs_checks/")}
    assert shipped == {f.name for f in (ROOT / "proofs_checks").glob("*.py") if f.name != "conftest.py"}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    p = subprocess.run([sys.executable, "-m", "dpaudit", "proofs", "-k", "pure_dp_to_zcdp", "--json"], cwd=elsewhere,
                       capture_output=True, text=True, timeout=600, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    d = strict_json(p.stdout)
    assert d["directory"] == str(site / "dpaudit" / "_proofs_checks") and d["passed"] == 1 and d["failed"] == 0
