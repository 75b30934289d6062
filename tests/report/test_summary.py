"""Issue 13, what the report says (without a browser): the gap summary and its rounding, what was
audited, what next, the zoom on the certified point, labels of notions that ignore sampling, and
the linear-instance check's title."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("matplotlib")

import dpaudit  # noqa: E402
from dpaudit.report import compare_accountants, render_report  # noqa: E402
from dpaudit.report.summary import audited_rows, directed, gap_summary, tightest_upper  # noqa: E402


@pytest.fixture(scope="module")
def sgd_audit():
    return dpaudit.audit_optimizer("dp-sgd", trials=2000, seed=1).to_dict()


@given(st.floats(1e-12, 1e12))
def test_displayed_bounds_keep_their_direction(x):
    up, down = float(directed(x, up=True)), float(directed(x, up=False))
    assert down <= x <= up
    assert up - down <= 10 ** (math.floor(math.log10(x)) - 2) * 1.0000001  # 3 significant digits


def test_directed_rounding_examples():
    assert directed(7.8993, up=True) == "7.90" and directed(7.0465, up=False) == "7.04"
    assert directed(2.0, up=True) == "2.00" and directed(math.inf, up=True) == "inf"


def test_gap_line_orders_proved_computed_claimed(sgd_audit):
    tight = tightest_upper(sgd_audit)
    mech = dpaudit.PoissonSampled(dpaudit.Gaussian(1.0), 0.1)
    lo, hi = dpaudit.PLDAccountant().compose(mech, 100).epsilon_interval(1e-5)
    assert tight["kind"] == "PLD" and (tight["lower"], tight["upper"]) == (lo, hi)
    gap = gap_summary(sgd_audit, tight)
    assert gap["text"] == (f"certified lower {directed(sgd_audit['epsilon_lower'], up=False)}  <=  "
                           f"PLD [{directed(lo, up=False)}, {directed(hi, up=True)}]  <=  claim (RDP) "
                           f"{directed(sgd_audit['epsilon_claimed'], up=True)}")
    assert gap["text"].endswith("claim (RDP) 7.90") and "PLD [7.04, 7.05]" in gap["text"]
    assert "reaches" in gap["reading"] and gap["warnings"] == []


def test_gap_warnings_when_numbers_disagree():
    base = {"epsilon_lower": 6.3, "epsilon_claimed": 4.73, "confidence": 0.95, "violation": True, "delta": 1e-5}
    gap = gap_summary(base, {"kind": "exact", "lower": 4.38, "upper": 4.38})
    assert gap["relations"] == [">", "<="] and "does not behave like its model" in gap["warnings"][0]
    under = gap_summary({**base, "epsilon_lower": 1.0, "violation": False, "epsilon_claimed": 3.0},
                        {"kind": "PLD", "lower": 4.0, "upper": 4.1})
    assert under["relations"] == ["<=", ">"] and "under-reports" in under["warnings"][0]
    none = gap_summary({**base, "epsilon_lower": 0.0, "violation": False}, None)
    assert none["text"] == "certified lower 0  <=  claim 4.73" and "Nothing proved" in none["reading"]


def test_exact_is_the_tightest_for_gaussian_optimizers():
    a = dpaudit.audit_optimizer("dp-gd", trials=300, seed=0).to_dict()
    t = tightest_upper(a)
    assert t["kind"] == "exact" and t["lower"] == t["upper"] == dpaudit.conversions.gaussian_epsilon(1.0, 1e-5)
    assert tightest_upper(dpaudit.audit_optimizer("projection", trials=300, seed=0).to_dict()) is None
    json_round_trip = json.loads(json.dumps(dpaudit.audit_optimizer("noisy-gd", trials=300, seed=0).to_dict()))
    assert tightest_upper(json_round_trip) is None  # no Gaussian noise multiplier: nothing computed, no error


def test_what_was_audited(sgd_audit):
    rows = dict(audited_rows(sgd_audit))
    assert rows["algorithm"] == "optimizer dp-sgd"
    for part in ("steps T 100", "sampling rate q 0.1", "noise multiplier 1", "clip norm C 1"):
        assert part in rows["hyper-parameters"]
    assert rows["neighbouring relation"] == "add/remove one record"
    assert "RDP accountant" in rows["claim"] and "epsilon 7.90 " in rows["claim"]  # the claim 7.8993 rounded up to 3 digits (core.display)
    assert "canary" in rows and rows["seed"] == "1" and rows["confidence"].startswith("0.95")
    assert rows["trials"].startswith("2,000 runs per neighbouring input (600 choose the test, 1,400 certify it)")
    with_attack = {**sgd_audit, "details": {**sgd_audit["details"], "attack": {"name": "loss threshold", "k": 3},
                                            "inputs": "D vs D plus record z"}}
    rows = dict(audited_rows(with_attack))
    assert rows["attack"] == "loss threshold (k 3)" and rows["neighbouring inputs"] == "D vs D plus record z"
    mech = dpaudit.audit_mechanism(dpaudit.Laplace(1.0).sample, 0.0, 1.0, epsilon=1.0, trials=300, seed=0).to_dict()
    assert "black-box sampler" in dict(audited_rows(mech))["mechanism"]
    assert dict(audited_rows(mech, mechanism=dpaudit.Laplace(1.0)))["mechanism"].startswith("Laplace(scale=1")


def _html(**kw):
    text, images = render_report(**kw)
    assert images == {}
    return text


def test_consistent_page(sgd_audit):
    text = _html(audit=sgd_audit)
    assert 'class="banner v-consistent"' in text and ">Consistent<" in text
    assert text.index(">Consistent<") < text.index("Proved, computed, claimed") < text.index("What was audited") \
        < text.index("Evidence: where the bound comes from")
    assert "PLD [7.04, 7.05]" in text and "<svg" in text
    assert "only the star counts" in text  # why point estimates may cross the certified boundary
    assert "What to check next" not in text and "What would give this audit power" not in text


def test_inconclusive_page_is_grey_and_says_what_gives_power():
    a = dpaudit.audit_optimizer("projection", trials=2000, seed=3)
    assert a.verdict == "inconclusive"
    text = _html(audit=a)
    assert 'class="banner v-inconclusive"' in text and 'class="banner v-consistent"' not in text
    assert "What would give this audit power" in text and "trials" in text and "stronger attack" in text.lower()
    assert "one-run" not in text  # only suggested for the optimizers that can host many canaries


def test_violation_page_says_what_to_check():
    fake = {"epsilon_lower": 3.0, "epsilon_claimed": 1.0, "delta": 1e-5, "confidence": 0.95, "violation": True,
            "method": "threshold test", "trials": 1000, "details": {}}
    text = _html(audit=fake)
    assert 'class="banner v-violation"' in text and "What to check next" in text
    assert "wrong sensitivity" in text and "re-run with other seeds" in text
    md, _ = render_report(audit=fake, fmt="md")
    assert md.startswith("# dpaudit report") and "> **VIOLATION**" in md and "`certified lower 3.00  >  claim 1.00`" in md


def test_linear_panel_only_when_it_shows_something(sgd_audit):
    from dpaudit.report.plots import linear_panel_useful

    corner = sgd_audit["details"]["threshold_test"]
    near_axis = {**sgd_audit, "details": {**sgd_audit["details"],
                                          "threshold_test": {**corner, "fpr_upper": 0.001, "fnr_upper": 0.9}}}
    far = {**sgd_audit, "details": {**sgd_audit["details"],
                                    "threshold_test": {**corner, "fpr_upper": 0.1, "fnr_upper": 0.5}}}
    assert not linear_panel_useful(near_axis) and linear_panel_useful(far)
    upper = {"kind": "PLD", "lower": 7.0, "upper": 7.1}  # given: no PLD computation needed here
    assert "linear-axis view of the whole curve is left out" in _html(audit=near_axis, upper=upper)
    assert "left out" not in _html(audit=far, upper=upper)


def test_log_ticks_are_readable():
    from matplotlib.figure import Figure

    from dpaudit.report.plots import readable_log_axis

    ax = Figure().subplots()
    ax.set_yscale("log")
    ticks = readable_log_axis(ax, "y", 1.6, 96)
    assert ticks == [2, 5, 10, 20, 50]
    labels = [ax.yaxis.get_major_formatter()(t, 0) for t in ticks]
    assert labels == ["2", "5", "10", "20", "50"]
    wide = readable_log_axis(ax, "x", 1e-7, 1.0)
    assert len(wide) <= 9 and ax.xaxis.get_major_formatter()(1e-5, 0) == "1e-5"
    assert ax.xaxis.get_major_formatter()(0.002, 0) == "0.002"


def test_notions_that_ignore_sampling_are_labelled_everywhere():
    acc = compare_accountants(dpaudit.PoissonSampled(dpaudit.Gaussian(1.0), 0.1), [1, 10], delta=1e-5,
                              accountants=("rdp", "zcdp"), exact=False)
    text = _html(accountants=acc)
    assert "zCDP (ignores sampling)" in text and "say nothing alarming" in text
    from dpaudit.report import plots

    captured = {}
    real = plots._png

    def grab(fig, fmt="png"):
        captured["labels"] = [t.get_text() for ax in fig.axes for t in ax.get_legend().get_texts()]
        return real(fig, fmt)

    plots._png = grab
    try:
        plots.accountants_figure(acc)
    finally:
        plots._png = real
    assert any("zCDP" in lab and "ignores subsampling" in lab for lab in captured["labels"])


def test_renyi_section_is_titled_as_the_linear_instance_check():
    rows = [{"steps": k, "alpha": 2.0, "estimate": 0.1 * k, "lower": 0.05 * k, "upper": 0.2 * k, "exact": 0.1 * k,
             "theorem1": 1.0, "theorem2": 0.01, "composition": 0.2 * k, "trials": 100, "method": "gaussian",
             "confidence": 0.95} for k in (1, 10)]
    text = _html(renyi=rows)
    assert "Linear-instance check" in text and "NOT an audit" in text


def test_json_round_trip_report(sgd_audit, tmp_path):
    from dpaudit.report import write_report

    data = json.loads(json.dumps(sgd_audit))
    text = write_report(tmp_path / "r.html", audit=data).read_text()
    assert 'class="banner v-consistent"' in text and re.search(r"PLD \[7\.04, 7\.05\]", text)
    assert np.isfinite(float(data["epsilon_lower"]))


def test_a_legacy_gdp_number_is_never_shown_as_certified():
    legacy = {"epsilon_lower": 3.5, "epsilon_claimed": 1.0, "delta": 1e-5, "confidence": 0.95, "violation": True,
              "method": "gdp (estimate assuming mu-GDP)", "trials": 1000, "details": {}}
    text = _html(audit=legacy)
    assert "certified lower" not in text and "Nothing certified" in text
    assert 'class="banner v-violation"' not in text and "What to check next" not in text
