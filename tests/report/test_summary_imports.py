"""The report's modules import what a mechanism audit's report needs, and no more (issue 26, item 8: report cost).

The optimizers package (with the matrix-factorisation strategies and scipy.signal behind it) and the PLD accountant
cost a cold report of a mechanism audit about a third of a second to import; they are imported where an optimizer
audit or a mechanism without a closed form needs them. Checked in a fresh interpreter (``sys.modules``), and that
the deferred imports still serve the reports that need them.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import dpaudit
from dpaudit.report.summary import tightest_upper

HEAVY = ("dpaudit.optimizers", "dpaudit.accounting.pld", "dpaudit.accounting.matrix_mechanism", "scipy.signal")


def _modules_after(code: str) -> list[str]:
    prog = code + f"\nimport sys\nprint(sorted(m for m in sys.modules if m.startswith({HEAVY!r})))\n"
    out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return eval(out.stdout.strip().splitlines()[-1])  # a printed list of strings


@pytest.mark.parametrize("module", ["dpaudit.report.summary", "dpaudit.report.writer", "dpaudit.report.plots",
                                    "dpaudit.cli.demo"])
def test_importing_the_report_does_not_import_the_optimizers(module):
    assert _modules_after(f"import {module}") == []


def test_the_check_sees_an_import():
    assert "dpaudit.optimizers" in _modules_after("import dpaudit.optimizers")


def test_a_mechanism_report_with_a_closed_form_imports_neither_optimizers_nor_pld():
    code = """
import dpaudit
from dpaudit.report.writer import render_report
res = dpaudit.audit_mechanism(dpaudit.Gaussian(1.0).sample, 0.0, 1.0, epsilon=5.0, delta=1e-5, trials=500, seed=1)
text, _ = render_report(audit=res, mechanism=dpaudit.Gaussian(1.0))
assert "exact" in text
"""
    assert _modules_after(code) == []


def test_deferred_imports_still_serve_optimizer_and_pld_reports():
    audit = dpaudit.audit_optimizer("dp-gd", trials=500, seed=1).to_dict()
    tight = tightest_upper(audit)  # the optimizer's per-step mechanism: make_optimizer imported on the way
    assert tight is not None and tight["kind"] == "exact" and 0 < tight["upper"] <= audit["epsilon_claimed"] + 1e-9
    sub = tightest_upper(mechanism=dpaudit.PoissonSampled(dpaudit.Gaussian(1.0), 0.1), steps=10, delta=1e-5,
                         digits=3)  # no closed form: the PLD accountant imported on the way
    assert sub is not None and sub["kind"] == "PLD" and 0 < sub["lower"] <= sub["upper"]
