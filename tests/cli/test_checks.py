"""Issue 11, a command line that checks before it works: every documented exit path of every
subcommand, in-process through ``dpaudit.cli.main`` (fast), plus a few through a subprocess.

Exit status: 0 success, 1 certified violation, 2 the request cannot be carried out (one line,
before any work), 3 internal error (one line + DPAUDIT_DEBUG hint), 130 interrupted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from dpaudit.cli import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, EXIT_VIOLATION
from tests.support.cli import lying_optimizer, one_line, run

HUGE = str(10**400)


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if any audit, simulation or report computation starts."""
    import dpaudit.audit.linear_instance as lin
    import dpaudit.audit.optimizer as opt_mod
    import dpaudit.report.data as data

    def forbidden(*a, **k):
        raise AssertionError("work started before the arguments were checked")

    monkeypatch.setattr(opt_mod, "audit_optimizer", forbidden)
    monkeypatch.setattr(lin, "linear_instance_table", forbidden)
    monkeypatch.setattr(data, "compare_accountants", forbidden)
    return forbidden


# ---------------------------------------------------------------------------------------------
# exit 2: refused before any work, one line naming what is wrong
# ---------------------------------------------------------------------------------------------
USAGE = [
    # audit: paths, connections, values
    (["audit", "dp-gd", "--plot", "/no/such/dir/x.png"], ["--plot", "does not exist"]),
    (["audit", "dp-gd", "--plot", "{tmp}/x.foo"], ["--plot", "unsupported image type", ".png"]),
    (["audit", "dp-gd", "--plot", "{tmp}"], ["--plot", "directory"]),
    (["audit", "dp-gd", "--report", "/nonexistent/r.html"], ["--report", "does not exist"]),
    (["audit", "dp-gd", "--report", "{tmp}/r.pdf"], ["--report", "unsupported report type"]),
    (["audit", "dp-gd", "--scheduler", "tcp://127.0.0.1:1"], ["--scheduler", "no scheduler answers"]),
    (["audit", "dp-gd", "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"], ["either --workers or --scheduler"]),
    (["audit", "dp-gd", "--delta", "0"], ["delta", "pure-DP", "--delta in (0, 1)"]),
    (["audit", "dp-gd", "--delta", "1.5"], ["--delta"]),
    (["audit", "dp-gd", "--method", "gdp", "--delta", "0"], ["--method gdp", "--delta"]),
    (["audit", "dp-gd", "--confidence", "1.5"], ["--confidence"]),
    (["audit", "dp-gd", "--trials", "1"], ["--trials"]),
    (["audit", "dp-gd", "--trials", HUGE], ["--trials", "2^53"]),
    (["audit", "dp-gd", "--trials", "1e400"], ["--trials", "invalid integer"]),
    (["audit", "dp-gd", "--seed", "-1"], ["--seed"]),
    (["audit", "nope"], ["OPTIMIZER", "invalid choice"]),
    (["audit", "dp-gd", "--method", "one-run", "--plot", "x.png"], ["--plot", "one-run"]),
    (["audit", "dp-gd", "--method", "one-run", "--workers", "2"], ["--workers"]),
    (["audit", "dp-gd", "--canaries", "10"], ["--canaries"]),
    # account
    (["account", "gaussian", "--sigma", "-1", "--delta", "1e-5"], ["sigma"]),  # (sigma 0: non-private, inf)
    (["account", "gaussian", "--sigma", "1", "--delta", "1e-5", "--steps", HUGE], ["--steps", "2^53"]),
    (["account", "gaussian", "--sigma", "1", "--delta", "0"], ["delta"]),
    (["account", "gaussian", "--delta", "1e-5"], ["--sigma"]),
    (["account", "laplace", "--scale", "1", "--target-epsilon", "1"], ["gaussian"]),
    # renyi
    (["renyi", "--steps", HUGE], ["--steps", "2^53"]),
    (["renyi", "--steps", "1e400"], ["--steps", "invalid integer"]),
    (["renyi", "--step-size", "1.5"], ["--step-size", "(0, 1)"]),
    (["renyi", "--sigma", "0"], ["--sigma"]),
    (["renyi", "--alpha", "0.5"], ["alpha"]),
    (["renyi", "--trials", "1"], ["--trials"]),
    (["renyi", "--plot", "/no/such/dir/r.png"], ["--plot", "does not exist"]),
    (["renyi", "--report", "{tmp}/r.txt"], ["--report", "unsupported report type"]),
    (["renyi", "--scheduler", "tcp://127.0.0.1:1"], ["--scheduler", "no scheduler answers"]),
    # report
    (["report", "--out", "/nonexistent/r.html"], ["--out", "does not exist"]),
    (["report", "--out", "{tmp}/r.pdf"], ["--out", "unsupported report type"]),
    (["report", "nope", "--out", "{tmp}/r.html"], ["nope"]),
    (["report", "--no-audit", "--no-accountants", "--no-renyi", "--out", "{tmp}/r.html"], ["nothing to report"]),
    (["report", "--delta", "0", "--out", "{tmp}/r.html"], ["--delta"]),
    (["report", "--trials", "1", "--out", "{tmp}/r.html"], ["--trials"]),
    # proofs
    (["proofs", "--path", "/no/such/dir"], ["--path"]),
    (["proofs", "--timeout", "0"], ["--timeout"]),
]


@pytest.mark.parametrize("argv,words", USAGE, ids=[" ".join(a)[:60] for a, _ in USAGE])
def test_usage_errors_exit_2_before_any_work(capsys, tmp_path, no_work, argv, words):
    if any("--scheduler" in a for a in argv) and "--workers" not in argv:
        pytest.importorskip("distributed")
    if any(a in ("--plot", "--report", "--out") for a in argv):
        pytest.importorskip("matplotlib")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, out, err = run(capsys, argv)
    assert code == EXIT_USAGE, (code, err)
    line = one_line(err)
    assert line.startswith("dpaudit"), line
    for w in words:
        assert w in line, (w, line)
    assert out == ""
    assert not any(p.exists() for p in (tmp_path / "r.html", tmp_path / "x.png"))


def test_missing_directories_are_never_created(capsys, tmp_path, no_work):
    pytest.importorskip("matplotlib")
    target = tmp_path / "a" / "b"
    for argv in (["audit", "dp-gd", "--report", str(target / "r.html")],
                 ["audit", "dp-gd", "--plot", str(target / "x.png")],
                 ["report", "--out", str(target / "r.html")]):
        code, _, err = run(capsys, argv)
        assert code == EXIT_USAGE and "does not exist" in one_line(err)
    assert not (tmp_path / "a").exists()


def test_no_command_exits_2(capsys):
    code, out, err = run(capsys, [])
    assert code == EXIT_USAGE and "usage" in err.lower() and out == ""


# ---------------------------------------------------------------------------------------------
# exit 0 and 1
# ---------------------------------------------------------------------------------------------
def test_success_paths_exit_0(capsys, tmp_path):
    code, out, _ = run(capsys, ["account", "gaussian", "--sigma", "1", "--delta", "1e-5", "--accountant", "rdp"])
    assert code == EXIT_OK and "4.72851" in out
    code, out, _ = run(capsys, ["audit", "dp-gd", "--trials", "300"])
    assert code == EXIT_OK and "verdict           : " in out
    code, out, _ = run(capsys, ["audit", "projection", "--trials", "2000", "--json"])
    d = json.loads(out)
    assert code == EXIT_OK and d["verdict"] == "inconclusive" and d["violation"] is False
    assert "advice" in d["details"]
    code, out, _ = run(capsys, ["renyi", "--steps", "3", "--alpha", "2", "--trials", "500"])
    assert code == EXIT_OK and "exact" in out
    pytest.importorskip("matplotlib")
    code, out, _ = run(capsys, ["report", "dp-gd", "--no-audit", "--no-renyi", "--max-steps", "3",
                                "--out", str(tmp_path / "r.html")])
    assert code == EXIT_OK and (tmp_path / "r.html").exists()


def test_inconclusive_audit_says_so_and_exits_0(capsys):
    code, out, _ = run(capsys, ["audit", "projection", "--trials", "2000"])
    assert code == EXIT_OK
    verdict = [line for line in out.splitlines() if line.startswith("verdict")][0]
    assert "inconclusive" in verdict and "consistent" not in verdict
    assert "advisory" in out





def test_violation_exits_1(capsys, monkeypatch, tmp_path):
    lying_optimizer(monkeypatch)
    code, out, _ = run(capsys, ["audit", "dp-gd", "--trials", "2000"])
    assert code == EXIT_VIOLATION and "VIOLATION" in out
    code, out, _ = run(capsys, ["audit", "dp-gd", "--trials", "2000", "--json"])
    assert code == EXIT_VIOLATION and json.loads(out)["verdict"] == "violation"
    pytest.importorskip("matplotlib")
    code, out, _ = run(capsys, ["report", "dp-gd", "--trials", "2000", "--no-accountants", "--no-renyi",
                                "--out", str(tmp_path / "v.html"), "--json"])
    assert code == EXIT_VIOLATION and json.loads(out)["audit"]["verdict"] == "violation"
    assert "VIOLATION" in (tmp_path / "v.html").read_text()


def test_proofs_exit_0_and_1(capsys, tmp_path):
    d = tmp_path / "proofs_checks"
    d.mkdir()
    (d / "good.py").write_text("print('worst margin 0.5')\n")
    code, out, _ = run(capsys, ["proofs", "--path", str(d)])
    assert code == EXIT_OK and "1 ok" in out
    (d / "bad.py").write_text("print('worst margin -1')\nraise SystemExit(1)\n")
    code, out, _ = run(capsys, ["proofs", "--path", str(d)])
    assert code == EXIT_VIOLATION and "bad" in out
    code, _, err = run(capsys, ["proofs", "--path", str(d), "-k", "nomatch"])
    assert code == EXIT_USAGE and "nomatch" in one_line(err)


# ---------------------------------------------------------------------------------------------
# account: notions that ignore sampling are labelled; per-accountant internal failures
# ---------------------------------------------------------------------------------------------
def test_account_says_which_notions_ignore_sampling(capsys):
    argv = ["account", "gaussian", "--sigma", "1", "--sample-rate", "0.01", "--steps", "3", "--delta", "1e-5"]
    code, out, _ = run(capsys, argv)
    assert code == EXIT_OK
    rows = {line.split()[0]: line for line in out.splitlines()[3:]}
    for name in ("zcdp", "tcdp"):
        assert "no amplification by sampling" in rows[name]
    for name in ("rdp", "pld"):
        assert "no amplification" not in rows[name]
    code, out, _ = run(capsys, argv + ["--json"])
    res = json.loads(out)["results"]
    assert [res[k]["ignores_sampling"] for k in ("rdp", "zcdp", "tcdp", "pld")] == [False, True, True, False]
    code, out, _ = run(capsys, ["account", "gaussian", "--sigma", "1", "--delta", "1e-5", "--json"])
    assert not any(r.get("ignores_sampling") for r in json.loads(out)["results"].values())
    calibrate = ["account", "gaussian", "--sample-rate", "0.01", "--steps", "100", "--target-epsilon", "1", "--delta", "1e-5"]
    code, out, _ = run(capsys, calibrate + ["--accountant", "zcdp"])
    assert code == EXIT_OK and "no amplification by sampling" in out
    code, out, _ = run(capsys, calibrate + ["--accountant", "zcdp", "--json"])
    assert json.loads(out)["results"]["zcdp"]["ignores_sampling"] is True


def test_report_accountants_say_which_notions_ignore_sampling(tmp_path):
    import dpaudit
    from dpaudit.report import compare_accountants, write_report

    acc = compare_accountants(dpaudit.PoissonSampled(dpaudit.Gaussian(1.0), 0.1), [1, 3], delta=1e-5,
                              accountants=("rdp", "zcdp"), exact=False)
    assert acc["ignores_sampling"] == ["zCDP"] and "no amplification by sampling" in acc["notes"]["zCDP"]
    plain = compare_accountants(dpaudit.Gaussian(1.0), [1, 3], accountants=("rdp", "zcdp"), exact=False)
    assert plain["ignores_sampling"] == [] and "zCDP" not in plain["notes"]
    pytest.importorskip("matplotlib")
    text = write_report(tmp_path / "a.md", accountants=acc).read_text()
    assert "zCDP (ignores sampling)" in text and "no amplification by sampling" in text


def test_account_failing_accountant_is_an_internal_error_after_the_table(capsys, monkeypatch):
    import dpaudit.accounting.zcdp as z

    def boom(self, mech, count=1):
        raise OverflowError("math range error")

    monkeypatch.setattr(z.ZCDPAccountant, "compose", boom)
    code, out, err = run(capsys, ["account", "gaussian", "--sigma", "1", "--delta", "1e-5", "--accountant", "all"])
    assert code == EXIT_INTERNAL
    assert "rdp" in out and "FAILED: OverflowError" in out
    line = one_line(err)
    assert "internal error" in line and "zcdp" in line and "DPAUDIT_DEBUG=1" in line


def test_account_extreme_sigma_never_exits_1_or_prints_a_traceback(capsys):
    """--sigma 1e-10 used to crash after the work (traceback, exit 1). Now: a number, or an internal
    error after the table (the PLD/closed-form overflow belongs to the accounting layer)."""
    code, out, err = run(capsys, ["account", "gaussian", "--sigma", "1e-10", "--delta", "1e-5"])
    assert code in (EXIT_OK, EXIT_INTERNAL) and "rdp" in out and "Traceback" not in err
    if code == EXIT_INTERNAL:
        assert "internal error" in one_line(err)


# ---------------------------------------------------------------------------------------------
# internal errors (exit 2, a distinct message), DPAUDIT_DEBUG, 130
# ---------------------------------------------------------------------------------------------
def _raise_in_numpy(*a, **k):
    import numpy as np

    np.ones(3).reshape(7)  # a ValueError raised inside numpy: dpaudit's fault, not the user's


@pytest.mark.parametrize("target,argv", [
    ("dpaudit.audit.optimizer.audit_optimizer", ["audit", "dp-gd", "--trials", "300"]),
    ("dpaudit.audit.linear_instance.linear_instance_table", ["renyi", "--steps", "3", "--trials", "300"]),
    ("dpaudit.cli.account._run", ["account", "gaussian", "--sigma", "1", "--delta", "1e-5"]),
])
@pytest.mark.parametrize("error", ["runtime", "numpy-valueerror"])
def test_internal_errors_exit_2_with_a_hint(capsys, monkeypatch, target, argv, error):
    mod, _, name = target.rpartition(".")

    def boom(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr(__import__(mod, fromlist=[name]), name, boom if error == "runtime" else _raise_in_numpy)
    monkeypatch.delenv("DPAUDIT_DEBUG", raising=False)
    code, out, err = run(capsys, argv)
    assert code == EXIT_INTERNAL and code != EXIT_VIOLATION
    line = one_line(err)
    assert "internal error" in line and "DPAUDIT_DEBUG=1" in line
    assert ("RuntimeError: boom" if error == "runtime" else "ValueError") in line
    monkeypatch.setenv("DPAUDIT_DEBUG", "1")
    code, out, err = run(capsys, argv)
    assert code == EXIT_INTERNAL and "Traceback" in err and "internal error" in err.splitlines()[-1]


def test_interrupt_exits_130(capsys, monkeypatch):
    import dpaudit.audit.optimizer as opt_mod

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(opt_mod, "audit_optimizer", interrupted)
    code, _, err = run(capsys, ["audit", "dp-gd", "--trials", "300"])
    assert code == EXIT_INTERRUPTED and "interrupted" in one_line(err)


# ---------------------------------------------------------------------------------------------
# the same through a real process (console exit status, stderr)
# ---------------------------------------------------------------------------------------------
def _proc(args, env=None, code=None):
    cmd = [sys.executable, "-m", "dpaudit", *args] if code is None else [sys.executable, "-c", code]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})})


def test_subprocess_missing_plot_directory_exits_2_one_line():
    pytest.importorskip("matplotlib")
    p = _proc(["audit", "dp-gd", "--trials", "300", "--plot", "/no/such/dir/x.png"])
    assert p.returncode == EXIT_USAGE and p.stdout == ""
    assert "does not exist" in one_line(p.stderr)


def test_subprocess_huge_steps_exits_2_one_line():
    p = _proc(["account", "gaussian", "--sigma", "1", "--delta", "1e-5", "--steps", HUGE])
    assert p.returncode == EXIT_USAGE and "--steps" in one_line(p.stderr)


def test_subprocess_internal_error_exits_3_and_debug_shows_the_traceback():
    code = textwrap.dedent("""
        import sys
        import dpaudit.cli.account as account
        from dpaudit.cli import main
        def boom(args):
            return 1 / 0
        account._run = boom
        sys.exit(main(["account", "gaussian", "--sigma", "1", "--delta", "1e-5"]))
    """)
    p = _proc([], code=code, env={"DPAUDIT_DEBUG": "0"})
    assert p.returncode == EXIT_INTERNAL and "ZeroDivisionError" in one_line(p.stderr)
    p = _proc([], code=code, env={"DPAUDIT_DEBUG": "1"})
    assert p.returncode == EXIT_INTERNAL and "Traceback" in p.stderr
