"""``dpaudit audit mechanism MODULE:SAMPLER``: a user's sampler audited by import path (issue 26, item 5).

Modules are written to a temporary directory, which is the working directory of the command (the
CLI puts the current directory first on ``sys.path``). Exit 1 on a violation, 0 otherwise, 2 with
one line (never a traceback) for an import failure, a missing attribute, a non-callable or a bad
input.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import textwrap

import pytest

from dpaudit.cli import EXIT_OK, EXIT_USAGE, EXIT_VIOLATION
from tests.support import REPO
from tests.support.cli import one_line, run

ROOT = REPO
_COUNTER = itertools.count()

MODULE = textwrap.dedent('''
    import numpy as np

    def honest(x, rng, size):
        return np.asarray(x, dtype=float).sum() + rng.laplace(0.0, 1.0, size)

    def leaky(x, rng, size):
        return np.asarray(x, dtype=float).sum() + rng.laplace(0.0, 0.2, size)

    def coin(x, rng, size):
        p = 0.75 if x == "yes" else 0.25          # randomised response: log 3-DP
        return (rng.random(size) < p).astype(float)

    class Mech:
        def sample(self, x, rng, size):
            return honest(x, rng, size)

    mech = Mech()
    NOT_CALLABLE = 3
''')


@pytest.fixture
def module(tmp_path, monkeypatch):
    """A fresh module (unique name: no stale sys.modules entry) in a temporary working directory."""
    name = f"usermech_{next(_COUNTER)}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the CLI prepends the working directory
    yield name
    sys.modules.pop(name, None)


def audit(capsys, *argv):
    return run(capsys, ["audit", "mechanism", *argv])


def test_consistent_sampler_exits_0(capsys, module):
    code, out, err = audit(capsys, f"{module}:honest", "--x", "0", "--x-prime", "1", "--epsilon", "1",
                           "--statistic", "auto-real", "--trials", "2000", "--seed", "1")
    assert code == EXIT_OK, err
    assert f"mechanism         : {module}:honest" in out and "verdict           : consistent" in out
    assert "seed              : 1 (given; repeat the run with --seed 1)" in out


def test_violation_exits_1_and_json_is_one_object(capsys, module):
    code, out, err = audit(capsys, f"{module}:leaky", "--x", "[0, 0]", "--x-prime", "[0, 1]", "--epsilon", "1",
                           "--statistic", "auto-real", "--trials", "4000", "--seed", "2", "--json")
    assert code == EXIT_VIOLATION, err
    doc = json.loads(out)  # exactly one JSON object on stdout
    assert doc["command"] == "audit" and doc["mechanism"] == f"{module}:leaky"
    assert doc["x"] == [0, 0] and doc["x_prime"] == [0, 1] and doc["violation"] is True
    assert doc["epsilon_claimed"] == 1.0 and doc["epsilon_lower"] > 1.0 and doc["seed"] == 2


def test_chained_attributes_strings_and_delta(capsys, module):
    code, out, err = audit(capsys, f"{module}:mech.sample", "--x", "0", "--x-prime", "1", "--epsilon", "1",
                           "--delta", "1e-6", "--statistic", "value", "--trials", "3000", "--seed", "1", "--json")
    assert code == EXIT_OK, err
    assert json.loads(out)["delta"] == 1e-6
    code, out, err = audit(capsys, f"{module}:coin", "--x", '"yes"', "--x-prime", '"no"', "--epsilon", "1.2",
                           "--trials", "4000", "--seed", "1", "--json")
    assert code == EXIT_OK, err
    assert json.loads(out)["x"] == "yes"


@pytest.mark.parametrize("target, fragment", [
    ("no_such_module_xyz:f", "cannot import module 'no_such_module_xyz'"),
    ("{m}:nope", "has no attribute 'nope'"),
    ("{m}:mech.nope", ":mech has no attribute 'nope'"),
    ("{m}:NOT_CALLABLE", "is not callable"),
    ("{m}", "import path module:attribute"),
    ("dpaudit:Laplace(1.0).sample", "no calls or expressions"),
    ("{m}:", "import path module:attribute"),
])
def test_bad_sampler_exits_2_with_one_line(capsys, module, target, fragment):
    code, out, err = audit(capsys, target.format(m=module), "--x", "0", "--x-prime", "1", "--epsilon", "1")
    assert code == EXIT_USAGE and out == ""
    assert fragment in one_line(err)


def test_module_failing_at_import_exits_2_with_one_line(capsys, tmp_path, module):
    (tmp_path / "broken_at_import.py").write_text("raise RuntimeError('boom at import')\n")
    code, _, err = audit(capsys, "broken_at_import:f", "--x", "0", "--x-prime", "1", "--epsilon", "1")
    sys.modules.pop("broken_at_import", None)
    assert code == EXIT_USAGE and "RuntimeError: boom at import" in one_line(err)


@pytest.mark.parametrize("argv, fragment", [
    (["--x", "abc", "--x-prime", "1", "--epsilon", "1"], "--x must be a JSON value"),
    (["--x", "0", "--x-prime", "[1,", "--epsilon", "1"], "--x-prime must be a JSON value"),
    (["--x", "0", "--x-prime", "1", "--epsilon", "-1"], "--epsilon"),
    (["--x", "0", "--x-prime", "1", "--epsilon", "1", "--delta", "1"], "--delta"),
    (["--x", "0", "--x-prime", "1", "--epsilon", "1", "--statistic", "bogus"], "--statistic"),
    (["--x", "0", "--x-prime", "1", "--epsilon", "1", "--confidence", "1.5"], "--confidence"),
])
def test_bad_inputs_exit_2_with_one_line(capsys, module, argv, fragment):
    code, out, err = audit(capsys, f"{module}:honest", *argv)
    assert code == EXIT_USAGE and out == ""
    assert fragment in one_line(err)


def _shell(tmp_path, *extra):
    import os

    (tmp_path / "cimech.py").write_text(MODULE)
    argv = [sys.executable, "-m", "dpaudit", "audit", "mechanism", "cimech:leaky", "--x", "0", "--x-prime", "1",
            "--epsilon", "1", "--statistic", "value", "--trials", "3000", "--seed", "5", "--json", *extra]
    return subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_from_a_shell_in_the_modules_directory(tmp_path):
    """The CI use: a command run in the directory that holds the module."""
    proc = _shell(tmp_path)
    assert proc.returncode == EXIT_VIOLATION, proc.stderr
    assert json.loads(proc.stdout)["violation"] is True and proc.stderr == ""


@pytest.mark.slow
def test_worker_processes_find_the_module(tmp_path):
    one, two = _shell(tmp_path), _shell(tmp_path, "--workers", "2")
    assert two.returncode == EXIT_VIOLATION, two.stderr
    # the same seed gives the same result on 2 worker processes as in one process
    assert json.loads(two.stdout)["epsilon_lower"] == json.loads(one.stdout)["epsilon_lower"]


def test_report_file(capsys, module, tmp_path):
    pytest.importorskip("matplotlib")
    out_file = tmp_path / "mech.html"
    code, _, err = audit(capsys, f"{module}:honest", "--x", "0", "--x-prime", "1", "--epsilon", "1", "--statistic",
                         "value", "--trials", "1000", "--seed", "1", "--report", str(out_file))
    assert code == EXIT_OK and f"report written to {out_file}" in err
    assert f"{module}:honest" in out_file.read_text()
    code, _, err = audit(capsys, f"{module}:honest", "--x", "0", "--x-prime", "1", "--epsilon", "1",
                         "--report", str(tmp_path / "no" / "r.html"))
    assert code == EXIT_USAGE and "--report" in one_line(err)


def test_help_says_how_the_module_is_found_and_how_to_audit_dpaudits_own_mechanisms(capsys):
    code, out, _ = run(capsys, ["audit", "mechanism", "--help"])
    assert code == 0
    text = " ".join(out.split())
    assert "current directory first on sys.path" in text
    assert "from dpaudit import Laplace" in out and "sample = Laplace(1.0).sample" in out
    assert "--x-prime" in out and "--statistic" in out and "--workers" in out and "--report" in out
