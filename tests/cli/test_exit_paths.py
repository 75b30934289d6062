"""Issue 13: a table of every documented exit path of ``dpaudit``, tied to docs/cli.md.

The exit-status table of docs/cli.md has one row per path; ``PATHS`` below has one case per
row (same name), and a test checks that the two name the same paths with the same status. Each
case runs ``dpaudit.cli.main`` in-process (fast) and checks the status, that stdout holds only
what it should, and that every failure is ONE line on stderr.
"""

from __future__ import annotations

import builtins
import os
import re

import pytest

from tests.support import REPO
from tests.support.cli import lying_optimizer, one_line, run

ROOT = REPO


def documented_paths() -> dict[str, int]:
    text = (ROOT / "docs" / "cli.md").read_text()
    section = text.split("## Exit status", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| ([^|]+?) \|", section, re.M)
    return {name.strip(): int(status) for status, name in rows}


# ------------------------------------------------------------------------------- setups



def proof_checks(tmp_path, fail: bool) -> str:
    d = tmp_path / ("bad_checks" if fail else "good_checks")
    d.mkdir()
    (d / "check.py").write_text("print('worst margin -1')\nraise SystemExit(1)\n" if fail
                                else "print('worst margin 0.5')\n")
    return str(d)


def no_matplotlib(monkeypatch, tmp_path):
    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)


def unwritable(monkeypatch, tmp_path):
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(tmp_path) else real(p, mode))


def internal_error(monkeypatch, tmp_path):
    import dpaudit.audit.optimizer as opt_mod

    def boom(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr(opt_mod, "audit_optimizer", boom)
    monkeypatch.delenv("DPAUDIT_DEBUG", raising=False)


def interrupt(monkeypatch, tmp_path):
    import dpaudit.audit.optimizer as opt_mod

    def stop(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(opt_mod, "audit_optimizer", stop)


def bad_blas_threads(monkeypatch, tmp_path):
    monkeypatch.setenv("DPAUDIT_BLAS_THREADS", "two")


# name (as in docs/cli.md) -> (status, argv, setup, what stdout / the stderr line must contain)
PATHS = {
    "success": (0, ["account", "gaussian", "--sigma", "1", "--delta", "1e-5", "--accountant", "rdp"], None,
                {"out": "4.72851"}),
    "audit consistent": (0, ["audit", "dp-gd", "--trials", "1000", "--seed", "1"], None,
                         {"out": "verdict           : consistent"}),
    "audit inconclusive": (0, ["audit", "projection", "--trials", "2000", "--seed", "0"], None,
                           {"out": "verdict           : inconclusive"}),
    "deprecated spelling": (0, ["account", "gaussian", "--sigma", "1", "--q", "0.1", "--delta", "1e-5"], None,
                            {"out": "rdp"}),
    "version": (0, ["--version"], None, {"out": "dpaudit 0."}),
    "certified violation": (1, ["audit", "dp-gd", "--trials", "1000"], lying_optimizer, {"out": "VIOLATION"}),
    "failed proof check": (1, ["proofs", "--path", "{bad_checks}"], None, {"out": "1 failed"}),
    "bad argument value": (2, ["audit", "dp-gd", "--confidence", "1.5"], None, {"err": "--confidence"}),
    "hyper-parameter out of range": (2, ["audit", "dp-sgd", "--sample-rate", "1.5"], None,
                                     {"err": "argument --sample-rate: must be a number in (0, 1]"}),
    "sampler cannot be imported": (2, ["audit", "mechanism", "no_such_module_xyz:f", "--x", "0", "--x-prime", "1",
                                       "--epsilon", "1"], None, {"err": "cannot import module"}),
    "no command": (2, [], None, {"err_any": "usage"}),
    "missing or unwritable output directory": (2, ["audit", "dp-gd", "--report", "{tmp}/r.html"], unwritable,
                                               {"err": "not writable"}),
    "unsupported file type": (2, ["report", "--out", "{tmp}/r.pdf"], None, {"err": "unsupported report type"}),
    "pure-DP audit without a pure-DP claim": (2, ["audit", "dp-gd", "--delta", "0"], None, {"err": "pure-DP"}),
    "unreachable scheduler": (2, ["audit", "dp-gd", "--scheduler", "tcp://127.0.0.1:1"], None,
                              {"err": "no scheduler answers"}),
    "missing optional dependency": (2, ["audit", "dp-gd", "--plot", "{tmp}/x.png"], no_matplotlib,
                                    {"err": "pip install"}),
    "bad DPAUDIT_BLAS_THREADS": (2, ["account", "gaussian", "--sigma", "1", "--delta", "1e-5"], bad_blas_threads,
                                 {"err": "DPAUDIT_BLAS_THREADS"}),
    "not enough memory": (2, ["audit", "dp-gd", "--trials", str(2**53)], None, {"err": "memory"}),
    "internal error": (2, ["audit", "dp-gd", "--trials", "300"], internal_error,
                       {"err": "internal error: RuntimeError: boom"}),
    "interrupted": (130, ["audit", "dp-gd", "--trials", "300"], interrupt, {"err": "interrupted"}),
}


def test_the_table_covers_every_documented_path():
    documented = documented_paths()
    assert documented, "docs/cli.md has no exit-status table"
    assert set(documented) == set(PATHS), set(documented) ^ set(PATHS)
    for name, status in documented.items():
        assert PATHS[name][0] == status, name
    assert set(documented.values()) == {0, 1, 2, 130}


@pytest.mark.parametrize("name", sorted(PATHS))
def test_exit_path(name, capsys, monkeypatch, tmp_path):
    status, argv, setup, expect = PATHS[name]
    if "--scheduler" in argv:
        pytest.importorskip("distributed")
    if any(a in ("--plot", "--report", "--out") for a in argv) and setup is not no_matplotlib:
        pytest.importorskip("matplotlib")
    paths = {"tmp": str(tmp_path), "bad_checks": proof_checks(tmp_path, True) if "{bad_checks}" in argv else ""}
    argv = [a.format(**paths) if "{" in a else a for a in argv]
    monkeypatch.setenv("DPAUDIT_PROGRESS", "0")
    if setup is not None:
        setup(monkeypatch, tmp_path)
    code, out, err = run(capsys, argv)
    assert code == status, (name, code, out[-500:], err[-500:])
    if "out" in expect:
        assert expect["out"] in out, (name, out)
    if status in (0, 1):
        assert "error" not in err.lower(), err
    elif "err_any" in expect:
        assert expect["err_any"] in err.lower() and out == ""
    else:
        line = one_line(err)
        assert line.startswith("dpaudit") and expect["err"] in line, (name, line)
        assert out == ""
