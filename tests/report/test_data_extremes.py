"""Report and plot functions take any epsilon in [0, inf] and any delta in [0, 1] (issue 27, item 2).

b3a8540: ``dp_region_tpr`` raised ``OverflowError: math range error`` at epsilon 710 and 1000
(``math.exp(epsilon)``); the region is now formed in log space.
"""

from __future__ import annotations

import math
import sys
import warnings

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.report.data import dp_region_tpr

EPS = st.one_of(st.floats(0.0, 1e308), st.sampled_from([709.78, 710.0, 1000.0, 1e5, sys.float_info.max, math.inf]))
DELTA = st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 1e-300, 1e-10, 1.0]))
FPR = st.lists(st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 5e-324, 1e-300, 1.0])), min_size=1, max_size=8)


def test_the_overflow_of_the_issue():
    for eps in (710.0, 1000.0):
        out = dp_region_tpr([0.0, 1e-300, 1e-3, 1.0], eps, 1e-5)
        assert out.tolist() == [1e-5, 1.0, 1.0, 1.0]


@settings(max_examples=300, deadline=None)
@given(eps=EPS, delta=DELTA, fpr=FPR)
def test_region_is_a_probability_monotone_in_everything(eps, delta, fpr):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = dp_region_tpr(fpr, eps, delta)
    fpr = np.asarray(fpr)
    assert out.shape == fpr.shape and np.all((0.0 <= out) & (out <= 1.0))
    assert np.all(out >= np.minimum(fpr, 1.0) * (1 - 1e-12))  # never below random guessing
    order = np.argsort(fpr)
    assert np.all(np.diff(out[order]) >= -1e-12)  # non-decreasing in the false-positive rate
    if math.isfinite(eps):
        assert np.all(dp_region_tpr(fpr, eps * 2 + 1, delta) >= out - 1e-12)  # and in epsilon
        assert np.all(dp_region_tpr(fpr, eps, min(1.0, delta * 2 + 1e-3)) >= out - 1e-12)  # and in delta


@settings(max_examples=100, deadline=None)
@given(eps=st.floats(0.0, 5000.0), delta=st.floats(0.0, 1.0), fpr=st.floats(0.0, 1.0))
def test_region_against_mpmath(eps, delta, fpr):
    with mpmath.workdps(50):
        e, d, f = mpmath.mpf(eps), mpmath.mpf(delta), mpmath.mpf(fpr)
        ref = min(1, d + mpmath.e ** e * f, 1 - mpmath.e ** (-e) * max(1 - d - f, 0))
    assert float(dp_region_tpr([fpr], eps, delta)[0]) == pytest.approx(float(ref), rel=1e-12, abs=1e-15)


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="epsilon"):
        dp_region_tpr([0.1], -1.0, 0.1)
    with pytest.raises(ValueError, match="delta"):
        dp_region_tpr([0.1], 1.0, 1.5)
    with pytest.raises(ValueError, match="delta"):
        dp_region_tpr([0.1], 1.0, math.nan)


# -- summaries, pages and figures ---------------------------------------------------------------------------
def _fake(eps_claimed, eps_lower, delta):
    return {"epsilon_lower": eps_lower, "epsilon_claimed": eps_claimed, "delta": delta, "confidence": 0.95,
            "violation": eps_lower > eps_claimed, "method": "threshold test", "trials": 1000,
            "details": {"threshold_test": {"fpr_upper": 1e-3, "fnr_upper": 0.2, "n0": 1000, "n1": 1000,
                                           "k_fp": 0, "k_fn": 150},
                        "roc": {"fpr": [0.0, 1e-3, 0.1, 1.0], "tpr": [0.0, 0.6, 0.9, 1.0]}}}


@settings(max_examples=15, deadline=None)
@given(claim=EPS, lower=EPS, delta=DELTA)
def test_gap_summary_and_pages(claim, lower, delta):
    from dpaudit.report import render_report
    from dpaudit.report.summary import gap_summary

    fake = _fake(claim, lower, delta)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        gap = gap_summary(fake, {"kind": "exact", "lower": claim, "upper": claim})
        assert "certified lower" in gap["text"]
        md, _ = render_report(audit={**fake, "details": {}}, fmt="md")
    assert md.startswith("# dpaudit report")


@pytest.mark.parametrize("claim, lower, delta", [(710.0, 3.0, 1e-5), (1000.0, 999.0, 0.0), (1e308, 2.0, 1.0),
                                                 (math.inf, 5.0, 0.5), (2.0, 1e5, 1e-300)])
def test_roc_figure(claim, lower, delta):
    pytest.importorskip("matplotlib")
    from dpaudit.report.plots import roc_figure

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        png = roc_figure(_fake(claim, lower, delta), linear=True)
    assert png[:4] == b"\x89PNG"


@pytest.mark.parametrize("delta, expected", [(0.0, 2.0), (1.0, 0.0)])
def test_tightest_upper_at_the_ends_of_delta(delta, expected):
    from dpaudit import Laplace
    from dpaudit.report.summary import tightest_upper

    out = tightest_upper(mechanism=Laplace(1.0), steps=2, delta=delta)
    assert out["upper"] == pytest.approx(expected, rel=1e-12)
