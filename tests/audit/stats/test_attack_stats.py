"""Attack statistics (TPR at fixed FPR, AUROC, accuracy), the ROC-frontier threshold rule and the limit of a
threshold audit (issue 17)."""

from __future__ import annotations

import json
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta as beta_dist
from scipy.stats import binom, norm

from dpaudit.audit import audit_mechanism
from dpaudit.audit.protocol.two_sample import audit_scores
from dpaudit.audit.stats.attack_stats import attack_statistics, auroc, auroc_interval
from dpaudit.audit.stats.gdp import gdp_epsilon_of
from dpaudit.audit.stats.rules import frontier_test, heldout_test
from dpaudit.audit.stats.threshold_limit import threshold_audit_limit
from dpaudit.audit.stats.thresholds import roc_frontier
from dpaudit.report.writer import render_report

MU = 1.0


def _gauss(rng, n, mu=MU):
    return rng.normal(0.0, 1.0, n), rng.normal(mu, 1.0, n)


# ------------------------------------------------------------------ AUROC
@settings(max_examples=60, deadline=None)
@given(a=st.lists(st.integers(-3, 3), min_size=1, max_size=30), b=st.lists(st.integers(-3, 3), min_size=1, max_size=30))
def test_auroc_is_the_mann_whitney_statistic(a, b):
    a, b = np.array(a, float), np.array(b, float)
    brute = np.mean([[1.0 if y > x else 0.5 if y == x else 0.0 for x in a] for y in b])
    assert auroc(a, b) == pytest.approx(brute, abs=1e-12)
    assert auroc(a, b) + auroc(b, a) == pytest.approx(1.0, abs=1e-12)
    assert auroc(np.exp(a), np.exp(b)) == pytest.approx(auroc(a, b), abs=1e-12)  # increasing transform


def test_auroc_interval_coverage_and_closed_form():
    # AUROC of N(0,1) vs N(mu,1) is Phi(mu / sqrt 2); McDiarmid's interval must cover it in >= 95% of samples
    rng = np.random.default_rng(0)
    truth = norm.cdf(MU / math.sqrt(2.0))
    R, n, miss = 1000, 60, 0
    for _ in range(R):
        s0, s1 = _gauss(rng, n)
        lo, hi = auroc_interval(auroc(s0, s1), n, n, 0.95)
        miss += not lo <= truth <= hi
    assert miss <= binom.ppf(0.999, R, 0.05)  # measured: 0 / 1000 (the interval is conservative)
    s0, s1 = _gauss(rng, 200_000)
    assert auroc(s0, s1) == pytest.approx(truth, abs=0.004)


def test_auroc_interval_half_width():
    lo, hi = auroc_interval(0.5, 100, 100, 0.95)
    assert hi - 0.5 == pytest.approx(math.sqrt(math.log(40.0) * 0.02 / 2.0), rel=1e-9)
    assert lo <= 0.5 - math.sqrt(math.log(40.0) * 0.02 / 2.0) + 1e-15


# ------------------------------------------------------------------ TPR at FPR and accuracy
def test_tpr_interval_is_exact_clopper_pearson():
    rng = np.random.default_rng(1)
    s0, s1 = _gauss(rng, 4000)
    st_ = attack_statistics(s0[:1000], s1[:1000], s0[1000:], s1[1000:], fpr_levels=[0.01])
    row = st_["tpr_at_fpr"][0]
    k, n = round(row["tpr"] * 3000), 3000
    assert row["tpr_interval"][0] == pytest.approx(beta_dist.ppf(0.025, k, n - k + 1), rel=1e-8)
    assert row["tpr_interval"][1] == pytest.approx(beta_dist.ppf(0.975, k + 1, n - k), rel=1e-8)
    assert np.sum(s0[:1000] > row["threshold"]) <= 10  # the threshold's selection FPR is at most the level


def test_tpr_and_accuracy_coverage_over_seeds():
    # the threshold is fixed on the selection scores, so the true TPR / accuracy at it are known in closed form
    rng = np.random.default_rng(2)
    R, miss_tpr, miss_acc = 400, 0, 0
    for _ in range(R):
        s0, s1 = _gauss(rng, 1500)
        out = attack_statistics(s0[:500], s1[:500], s0[500:], s1[500:], fpr_levels=[0.01])
        row = out["tpr_at_fpr"][0]
        tpr = norm.sf(row["threshold"] - MU)
        miss_tpr += not row["tpr_interval"][0] <= tpr <= row["tpr_interval"][1]
        t = out["accuracy"]["threshold"]
        acc = 1.0 - 0.5 * (norm.sf(t) + norm.cdf(t - MU))
        miss_acc += not out["accuracy"]["interval"][0] <= acc <= out["accuracy"]["interval"][1]
    assert miss_tpr <= binom.ppf(0.999, R, 0.05)  # measured: 20 / 400 (TPR), 3 / 400 (accuracy)
    assert miss_acc <= binom.ppf(0.999, R, 0.05)


def test_orientation_and_missing_selection():
    rng = np.random.default_rng(3)
    s0, s1 = _gauss(rng, 2000)
    up = attack_statistics(s0[:500], s1[:500], s0[500:], s1[500:])
    down = attack_statistics(-s0[:500], -s1[:500], -s0[500:], -s1[500:])
    assert up["orientation"] == ">" and down["orientation"] == "<="
    assert down["auroc"]["value"] == pytest.approx(up["auroc"]["value"])
    assert [r["tpr"] for r in down["tpr_at_fpr"]] == pytest.approx([r["tpr"] for r in up["tpr_at_fpr"]], abs=2e-3)
    none = attack_statistics([], [], s0, s1)
    assert none["tpr_at_fpr"] == [] and none["accuracy"] is None and "note" in none
    with pytest.raises(ValueError, match="fpr_levels"):
        attack_statistics(s0, s1, s0, s1, fpr_levels=[0.0])
    with pytest.raises(ValueError, match="orientation"):
        attack_statistics(s0, s1, s0, s1, orientation="<")


def _gaussian_sampler(x, rng, size):
    return x + rng.normal(0.0, 1.0, size)


def test_in_audit_result_json_and_report_and_never_the_verdict():
    res = audit_mechanism(_gaussian_sampler, 0.0, 1.0, epsilon=10.0, delta=1e-5, trials=6000, seed=4,
                          statistic="value")
    st_ = res.attack_statistics
    assert st_ is not None and "never" in st_["role"]
    assert [r["fpr_level"] for r in st_["tpr_at_fpr"]] == [1e-3, 1e-2]
    assert st_["auroc"]["interval"][0] <= norm.cdf(1 / math.sqrt(2)) <= st_["auroc"]["interval"][1]
    d = json.loads(json.dumps(res.to_dict()))
    assert d["details"]["attack_statistics"]["auroc"]["value"] == pytest.approx(st_["auroc"]["value"])
    for fmt in ("html", "md"):
        assert "Attack statistics" in render_report(audit=res, fmt=fmt)[0]
    assert res.violation == (res.epsilon_lower > res.epsilon_claimed)
    # a statistic-free copy has the same verdict: the statistics never enter it
    assert res.with_details(attack_statistics=None).verdict == res.verdict


def test_fpr_levels_are_configurable():
    rng = np.random.default_rng(5)
    s0, s1 = _gauss(rng, 3000)
    res = audit_scores(s0[:1000], s1[:1000], s0[1000:], s1[1000:], epsilon=5.0, delta=1e-5, confidence=0.95,
                       fpr_levels=(0.05,))
    assert [r["fpr_level"] for r in res.attack_statistics["tpr_at_fpr"]] == [0.05]
    res = audit_mechanism(_gaussian_sampler, 0.0, 1.0, epsilon=10.0, delta=1e-5, trials=3000, seed=4,
                          statistic="value", fpr_levels=(0.02, 0.2))
    assert [r["fpr_level"] for r in res.attack_statistics["tpr_at_fpr"]] == [0.02, 0.2]


# ------------------------------------------------------------------ the ROC-frontier rule
def test_frontier_is_the_upper_hull_and_depends_on_selection_only():
    rng = np.random.default_rng(6)
    s0, s1 = _gauss(rng, 3000)
    fr = roc_frontier(s0, s1)
    assert fr["orientation"] == ">"
    assert np.all(np.diff(fr["fpr"]) > 0) and np.all(np.diff(fr["tpr"]) >= 0)
    slopes = np.diff(fr["tpr"]) / np.diff(fr["fpr"])
    assert np.all(np.diff(slopes) <= 1e-9)  # concave
    assert len(roc_frontier(s0, s1, max_points=10)["thresholds"]) <= 10


def test_frontier_rule_false_alarms_on_identical_distributions():
    # null (eps = 0): the certified bound must be 0 in >= 95% of seeds
    rng = np.random.default_rng(7)
    R, k = 400, 0
    for _ in range(R):
        s = rng.normal(size=(4, 300))
        fr = roc_frontier(s[0], s[1])
        k += frontier_test(s[2], s[3], fr["thresholds"], fr["orientation"], delta=0.0, beta=0.05)["value"] > 0
    assert k <= binom.ppf(0.99, R, 0.05)  # measured: 0 / 400


def test_frontier_rule_false_alarms_on_randomized_response():
    # randomized response with eps = 1 (a threshold test reaches eps exactly): bound > 1 in at most ~5%
    rng = np.random.default_rng(8)
    q = math.e / (1 + math.e)
    R, k = 300, 0
    for _ in range(R):
        b = [(rng.random(2000) < (q if j % 2 else 1 - q)).astype(float) for j in range(4)]
        fr = roc_frontier(b[0], b[1])
        k += frontier_test(b[2], b[3], fr["thresholds"], fr["orientation"], delta=0.0, beta=0.05)["value"] > 1.0
    assert k <= binom.ppf(0.99, R, 0.05)  # measured: 0 / 300


def test_frontier_rule_through_audit_scores():
    rng = np.random.default_rng(9)
    s0, s1 = _gauss(rng, 20_000)
    res = audit_scores(s0[:6000], s1[:6000], s0[6000:], s1[6000:], epsilon=10.0, delta=1e-5, confidence=0.95,
                       threshold="frontier")
    assert res.details["threshold_test"]["selection"] == "frontier"
    assert "frontier" in res.method
    ho = heldout_test(s0[:6000], s1[:6000], s0[6000:], s1[6000:], delta=1e-5, beta=0.05)["value"]
    assert 0.6 * ho < res.epsilon_lower < gdp_epsilon_of(1.0, 1e-5)


# ------------------------------------------------------------------ the limit of a threshold audit
@pytest.mark.parametrize("n", [10**3, 10**4, 10**5, 10**6])
def test_limit_never_above_the_truth_and_increasing(n):
    g = threshold_audit_limit("gaussian", n, mu=1.0, delta=1e-5)["epsilon"]
    assert g <= gdp_epsilon_of(1.0, 1e-5)
    assert g <= threshold_audit_limit("gaussian", 10 * n, mu=1.0, delta=1e-5)["epsilon"]
    assert threshold_audit_limit("laplace", n, epsilon=1.0)["epsilon"] <= 1.0
    assert threshold_audit_limit("randomized-response", n, epsilon=1.0)["epsilon"] <= 1.0


def test_limit_gaussian_1e5_matches_the_issue():
    # "the limit of any threshold audit at that size is about 2.80" (Gaussian, sigma 1, delta 1e-5, 1e5 trials)
    assert threshold_audit_limit("gaussian", 10**5, mu=1.0, delta=1e-5)["epsilon"] == pytest.approx(2.80, abs=0.03)


def test_limit_randomized_response_against_mpmath():
    # one test at the expected count k = round(n / (1 + e)); its Clopper-Pearson upper bound at 0.025 solved in
    # 30-digit arithmetic by bisection on the regularised incomplete beta function
    n, eps = 2000, 1.0
    r = 1.0 / (1.0 + math.e)
    k = round(r * n)
    mpmath.mp.dps = 30
    lo, hi = mpmath.mpf(r) - mpmath.mpf("0.1"), mpmath.mpf(r) + mpmath.mpf("0.1")
    for _ in range(80):  # P[Bin(n, p) <= k] = 1 - I_p(k + 1, n - k) decreases in p; find where it is 0.025
        mid = (lo + hi) / 2
        if 1 - mpmath.betainc(k + 1, n - k, 0, mid, regularized=True) > mpmath.mpf("0.025"):
            lo = mid
        else:
            hi = mid
    ref = float(mpmath.log((1 - hi) / hi))
    assert threshold_audit_limit("randomized-response", n, epsilon=eps)["epsilon"] == pytest.approx(ref, abs=1e-8)


def test_limit_validation():
    with pytest.raises(ValueError, match="mechanism"):
        threshold_audit_limit("exponential", 100, epsilon=1.0)
    with pytest.raises(ValueError, match="mu"):
        threshold_audit_limit("gaussian", 100)
    with pytest.raises(ValueError, match="epsilon"):
        threshold_audit_limit("laplace", 100)
    with pytest.raises(ValueError, match="n"):
        threshold_audit_limit("laplace", 0, epsilon=1.0)
