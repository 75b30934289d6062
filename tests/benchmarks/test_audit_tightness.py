"""Smoke test of benchmarks/audit_tightness.py: --help without running; tiny runs of the issue-29 tables."""

from __future__ import annotations

import runpy
import sys

import numpy as np
import pytest

from tests.support import REPO

ROOT = REPO
sys.path.insert(0, str(ROOT / "benchmarks"))

import audit_tightness  # noqa: E402


def test_help_without_running(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["audit_tightness.py", "--help"])
    with pytest.raises(SystemExit) as e:
        runpy.run_path(str(ROOT / "benchmarks" / "audit_tightness.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert e.value.code == 0 and "--false-alarms" in out and "--choice" in out


@pytest.mark.slow
def test_tiny_rules_table_with_jax_privacy():
    rows = audit_tightness.rules_table(sizes=(600,), seeds=(0, 1), mechanisms=("gaussian",),
                                       rules=("heldout", "all-thresholds"))
    (kind, n, vals, lim, lim_all, _), = rows
    assert kind == "gaussian" and n == 600 and vals["heldout"].shape == (2,) and 0 < lim <= lim_all
    assert np.all(vals["all-thresholds"] <= audit_tightness.gdp_epsilon_of(1.0, 1e-5))
    audit_tightness.print_rules(rows, (0, 1))


def test_tiny_tables(capsys):
    choice = audit_tightness.choice_table(sizes=(400,), seeds=(0,))
    assert len(choice) == 2 * len(audit_tightness.CHOICE_CASES)
    audit_tightness.print_choice(choice, (0,))
    fa = audit_tightness.false_alarm_table(n=300, seeds=3)
    assert all(a <= m for _, _, _, _, a, m, _, _ in fa)
    audit_tightness.print_false_alarms(fa)
    assert "false alarms" in capsys.readouterr().out
