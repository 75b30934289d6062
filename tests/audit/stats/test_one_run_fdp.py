"""The one-run f-DP test (Mahloujifar, Melis, Chaudhuri 2024) and its place in the one-run protocol."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom, norm

from dpaudit.audit.protocol.one_run import bound_record, one_run_protocol
from dpaudit.audit.stats.binomial import cp_upper
from dpaudit.audit.stats.one_run import one_run_epsilon_lower
from dpaudit.audit.stats.one_run_fdp import (
    dp_inverse_blowup,
    fdp_rejects,
    gaussian_inverse_blowup,
    one_run_fdp_epsilon_lower,
    one_run_fdp_gdp_epsilon,
    one_run_fdp_mu_lower,
)


# ------------------------------------------------------------------ reference values
@pytest.mark.parametrize("r, v, thresholds, expected", [
    # jax_privacy 2.0 tests/auditing_test.py::test_epsilon_one_run_close (deterministic normal scores,
    # 10,000 canaries per side, shift 1 / 2 / 4, significance 0.05 Bonferroni over the G frontier thresholds,
    # delta 1e-6): the (r, v) of the threshold attaining jax_privacy's maximum and the G of that audit
    (406, 379, 386, 2.164749),
    (938, 934, 374, 4.7218075),
    (5436, 5436, 140, 9.133752),
])
def test_gaussian_family_matches_jax_privacy(r, v, thresholds, expected):
    out = one_run_fdp_gdp_epsilon(m=20_000, r=r, v=v, delta=1e-6, confidence=1.0 - 0.05 / thresholds)
    assert out["epsilon"] == pytest.approx(expected, rel=1e-5)
    assert out["epsilon"] <= expected * (1 + 1e-6)  # a lower bound is never rounded up


def test_snj_reference_of_the_same_audit():
    # the plain one-run bound of jax_privacy's shift-4 case (4.395568), same (m, r, v, level)
    assert one_run_epsilon_lower(m=20_000, r=8233, v=8223, delta=1e-6,
                                 confidence=1.0 - 0.05 / 140) == pytest.approx(4.395568, rel=1e-5)


def test_dp_curve_beats_snj_where_the_delta_term_dominates():
    # shift 4 above: the certified (epsilon, delta)-curve test gives 6.53 where SNJ gives 4.40 (measured)
    lvl = 1.0 - 0.05 / 140
    fdp = one_run_fdp_epsilon_lower(m=20_000, r=5436, v=5436, delta=1e-6, confidence=lvl)
    snj = max(one_run_epsilon_lower(m=20_000, r=5436, v=5436, delta=1e-6, confidence=lvl),
              one_run_epsilon_lower(m=20_000, r=8233, v=8223, delta=1e-6, confidence=lvl))
    assert fdp > 6.5 > 4.4 > snj - 1e-6


@pytest.mark.parametrize("mu", [0.0, 0.3, 1.0, 4.0, 10.0])
@pytest.mark.parametrize("x", [1e-300, 1e-30, 1e-8, 0.01, 0.3, 0.5, 0.9, 1 - 1e-9])
def test_gaussian_inverse_blowup_against_mpmath(mu, x):
    mpmath.mp.dps = 40
    ref = mpmath.ncdf(mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(x) - 1) - mu)
    got = gaussian_inverse_blowup(mu)(x)
    assert got == pytest.approx(float(ref), rel=1e-9, abs=1e-300)


def test_dp_inverse_blowup_closed_form():
    g = dp_inverse_blowup(1.0, 1e-3)
    for x in (0.0, 0.1, 0.5, 0.9, 1.0):
        a = 1.0 - x  # f(a) of Kairouz-Oh-Viswanath
        f = max(0.0, 1 - 1e-3 - math.e * a, math.exp(-1.0) * (1 - 1e-3 - a))
        assert g(x) == pytest.approx(f, abs=1e-15)


# ------------------------------------------------------------------ exact soundness
def _exact_false_alarm(bound_of_v, m, q, claim):
    """P[bound(V) > claim] for V ~ Bin(m, q), bound monotone in v (smallest flagged v by bisection)."""
    lo, hi = 0, m + 1  # bound(lo) <= claim; hi: first v that flags (m + 1: none)
    if bound_of_v(m) <= claim:
        return 0.0
    hi = m
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if bound_of_v(mid) > claim:
            hi = mid
        else:
            lo = mid
    return float(binom.sf(hi - 1, m, q))


@pytest.mark.parametrize("m, eps, conf", [(100, 0.5, 0.95), (1000, 1.0, 0.95), (1000, 2.0, 0.9), (5000, 0.3, 0.95)])
def test_false_alarm_probability_exact_pure_dp(m, eps, conf):
    # randomized response on each canary's coin is the tight pure-DP mechanism: guessing every canary from its
    # output, V ~ Bin(m, e^eps / (1 + e^eps)) exactly; the probability of certifying more than eps must be <= beta
    q = math.exp(eps) / (1.0 + math.exp(eps))
    p = _exact_false_alarm(lambda v: one_run_fdp_epsilon_lower(m=m, r=m, v=v, confidence=conf), m, q, eps)
    assert p <= 1.0 - conf
    assert p > (1.0 - conf) / 50  # and the test is not vacuous there


@pytest.mark.parametrize("m, mu", [(500, 0.5), (2000, 1.0), (2000, 2.0)])
def test_false_alarm_probability_exact_gaussian(m, mu):
    # Gaussian canaries of known mu, each guessed by the likelihood-ratio test at 0: V ~ Bin(m, Phi(mu / 2))
    p = _exact_false_alarm(lambda v: one_run_fdp_mu_lower(m=m, r=m, v=v), m, norm.cdf(mu / 2), mu)
    assert p <= 0.05


def test_false_alarm_probability_exact_approximate_dp():
    # the (eps, delta) worst case on one bit: correct with probability 1 - (1 - delta) / (1 + e^eps)
    m, eps, delta = 2000, 1.0, 1e-3
    q = 1.0 - (1.0 - delta) / (1.0 + math.exp(eps))
    p = _exact_false_alarm(lambda v: one_run_fdp_epsilon_lower(m=m, r=m, v=v, delta=delta), m, q, eps)
    assert p <= 0.05


class _RR:
    """Randomized response on each canary's inclusion coin (the tight eps-DP mechanism), batched."""

    def __init__(self, eps):
        self.q = math.exp(eps) / (1.0 + math.exp(eps))

    def __call__(self, coins, seed):
        rng = np.random.default_rng(seed)
        keep = rng.random(coins.shape) < self.q
        return np.where(keep, coins, ~coins).astype(float) + 1e-3 * rng.random(coins.shape)


def test_protocol_false_alarm_rate_over_seeds():
    # 400 independent one-run audits (own coins, calibration and main run) of a mechanism whose true epsilon
    # equals the claim: the rate of epsilon_lower > claim must be consistent with at most beta = 0.05
    A, eps = 400, 1.0
    res = one_run_protocol(_RR(eps), m=1000, m_calibration=1000, seed=11, audits=A, confidence=0.95)
    k = int(np.sum(res["epsilon_lower"] > eps))
    assert binom.cdf(k - 1, A, 0.05) < 0.99  # k is not significantly above 5% (measured: 16/400, tight RR)
    assert set(res["bound"]) <= {"snj", "fdp"}


class _Laplace:
    def __init__(self, b):
        self.b = b

    def __call__(self, coins, seed):
        return coins * 1.0 + np.random.default_rng(seed).laplace(0.0, self.b, coins.shape)


def test_power_half_the_claimed_noise_is_flagged():
    # claim: Laplace b = 2 for a sensitivity-1 canary (eps = 0.5); the mechanism uses b = 1 (eps = 1)
    res = one_run_protocol(_Laplace(1.0), m=5000, m_calibration=5000, seed=2, audits=40)
    flagged = float(np.mean(res["epsilon_lower"] > 0.5))
    assert flagged >= 0.6  # measured 0.86 over 50 audits


# ------------------------------------------------------------------ properties
@settings(max_examples=40, deadline=None)
@given(m=st.integers(10, 3000), rf=st.floats(0.01, 1.0), pf=st.floats(0.0, 1.0), delta=st.sampled_from([0.0, 1e-6, 1e-3]))
def test_monotone_in_correct_guesses(m, rf, pf, delta):
    r = max(1, int(rf * m))
    v = int(pf * r)
    a = one_run_fdp_epsilon_lower(m=m, r=r, v=v, delta=delta)
    if v < r:
        assert one_run_fdp_epsilon_lower(m=m, r=r, v=v + 1, delta=delta) >= a
    if 2 * v <= r:
        assert a == 0.0  # no better than guessing at random: nothing certified


@settings(max_examples=30, deadline=None)
@given(m=st.integers(10, 3000), rf=st.floats(0.01, 1.0), pf=st.floats(0.5, 1.0))
def test_monotone_in_confidence_and_delta(m, rf, pf):
    r = max(1, int(rf * m))
    v = int(pf * r)
    assert one_run_fdp_epsilon_lower(m=m, r=r, v=v, confidence=0.99) <= one_run_fdp_epsilon_lower(
        m=m, r=r, v=v, confidence=0.9)
    assert one_run_fdp_epsilon_lower(m=m, r=r, v=v, delta=1e-2) <= one_run_fdp_epsilon_lower(m=m, r=r, v=v)


@settings(max_examples=30, deadline=None)
@given(m=st.integers(10, 2000), rf=st.floats(0.01, 1.0), pf=st.floats(0.5, 1.0), eps=st.floats(0.0, 8.0))
def test_rejection_monotone_in_epsilon(m, rf, pf, eps):
    r = max(1, int(rf * m))
    v = int(pf * r)
    if fdp_rejects(dp_inverse_blowup(eps + 0.1, 1e-5), m=m, r=r, v=v, beta=0.05):
        assert fdp_rejects(dp_inverse_blowup(eps, 1e-5), m=m, r=r, v=v, beta=0.05)


def test_all_correct_is_finite_and_bounded_by_the_guess_count():
    # r correct guesses out of r cannot certify more than the test that sees r perfect bits (a CP-type ceiling)
    for r in (10, 100, 1000):
        e = one_run_fdp_epsilon_lower(m=1000, r=r, v=r)
        q = 1.0 - cp_upper(0, r, 0.05)  # the Clopper-Pearson lower bound on the correct-guess rate
        assert math.isfinite(e) and e <= math.log(q / (1.0 - q)) + 1e-9


def test_input_validation():
    for kw, name in [(dict(m=0, r=0, v=0), "m"), (dict(m=5, r=6, v=1), "r"), (dict(m=5, r=3, v=4), "v")]:
        with pytest.raises(ValueError, match=name):
            one_run_fdp_epsilon_lower(**kw)
    with pytest.raises(ValueError, match="delta"):
        one_run_fdp_epsilon_lower(m=5, r=3, v=2, delta=1.5)
    with pytest.raises(ValueError, match="delta"):
        one_run_fdp_gdp_epsilon(m=5, r=3, v=2, delta=0.0)
    with pytest.raises(ValueError, match="bound"):
        one_run_protocol(_RR(1.0), m=10, m_calibration=10, seed=0, bound="magic")


def test_bound_record_labels_the_gaussian_number_as_an_estimate():
    res = one_run_protocol(_RR(2.0), m=500, m_calibration=500, seed=3, delta=1e-5)
    rec = bound_record(res)
    assert rec["test"] in ("snj", "fdp")
    assert res["epsilon_lower"][0] == pytest.approx(rec["epsilon_" + rec["test"]])
    assert "estimate" in rec["gdp_family"]["label"]
    fixed = one_run_protocol(_RR(2.0), m=500, m_calibration=500, seed=3, delta=1e-5, guesses=100)
    assert fixed["bound"][0] == "both" and fixed["bound_level"] == pytest.approx(0.975)


def test_one_run_audit_records_the_test_and_the_report_labels_the_gaussian_number():
    from dpaudit.audit import audit_mechanism
    from dpaudit.report.writer import render_report

    def laplace(x, rng, size):
        return x + rng.laplace(0.0, 1.0, size)

    res = audit_mechanism(laplace, 0.0, 1.0, epsilon=0.5, delta=1e-5, trials=4000, seed=4, statistic="value",
                          method="one-run")
    rec = res.details["one_run_bound"]
    assert res.epsilon_lower == pytest.approx(rec["epsilon_" + rec["test"]])
    from dpaudit.audit.protocol.one_run import ONE_RUN_METHODS

    assert res.method == ONE_RUN_METHODS[rec["test"]]  # the method names the test that certified (regression)
    # the Gaussian-family number of a Laplace canary (true epsilon 1) reads above the truth: an estimate only
    assert rec["gdp_family"]["epsilon"] > 1.0 >= res.epsilon_lower
    text = render_report(audit=res, fmt="md")[0]
    assert "one-run test (certified)" in text and "NOT a bound: estimate assuming mu-GDP" in text


class _GaussianCanaries:
    def __init__(self, mu):
        self.mu = mu

    def __call__(self, coins, seed):
        return coins * self.mu + np.random.default_rng(seed).normal(size=coins.shape)


@pytest.mark.parametrize("mu", [1.0, 2.0])
def test_protocol_gaussian_family_false_alarms_with_known_mu(mu):
    # Gaussian canaries with known mu through the whole protocol (300 audits): "not mu-GDP below mu_lower" must
    # be wrong (mu_lower > mu) in at most ~5% of audits; measured 0 / 300 for mu = 1 and 2, mean mu_lower 0.57, 1.22
    A, m = 300, 1000
    res = one_run_protocol(_GaussianCanaries(mu), m=m, m_calibration=m, seed=21, delta=1e-5, audits=A)
    cache = {}
    for r, v in zip(res["r"], res["v"]):
        key = (int(r), int(v))
        if key not in cache:
            cache[key] = one_run_fdp_mu_lower(m=m, r=key[0], v=key[1])
    lows = np.array([cache[(int(r), int(v))] for r, v in zip(res["r"], res["v"])])
    assert binom.cdf(int(np.sum(lows > mu)) - 1, A, 0.05) < 0.99
    assert lows.mean() > 0.4 * mu  # and it has power


def test_method_string_names_the_test_that_certified_regression():
    """Before: AuditResult.method said "Steinke-Nasr-Jagielski 2023" also when the f-DP test had certified the
    bound. It now names the test recorded in details["one_run_bound"]."""
    from dpaudit.audit.protocol.one_run import ONE_RUN_METHODS, one_run_method

    for used in ("snj", "fdp", "both"):
        assert one_run_method({"bound": [used]}) == ONE_RUN_METHODS[used]
    assert "f-DP" in ONE_RUN_METHODS["fdp"] and "Steinke" not in ONE_RUN_METHODS["fdp"]
    from dpaudit.audit import audit_mechanism

    res = audit_mechanism(_shifted_gaussian, 0.0, 4.0, epsilon=0.5, delta=1e-5, trials=4000, seed=1,
                          statistic="value", method="one-run")
    assert res.details["one_run_bound"]["test"] == "fdp" and res.method == ONE_RUN_METHODS["fdp"]


def _shifted_gaussian(x, rng, size):
    return x + rng.normal(0.0, 1.0, size)
