"""renyi_divergence you can trust (issue 11): regressions for each defect, validation, properties.

Defects (numbers from the issue): 1. method="gaussian" crashed with scipy's "function value
is NaN" for noncentralities ~3500-4800; 2. method="gaussian-unequal" (percentile bootstrap)
never covered 0 when P = Q, returned lower = inf for finite truths and covered 64 % at n = 20;
3. a cruder copy of the Gaussian closed form lived in audit/stats/renyi.py; 4. argument validation.
"""

import json
import math
import warnings

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.audit import renyi_divergence
from dpaudit.audit.stats.renyi import gaussian_renyi
from dpaudit.cli import main
from dpaudit.core import gaussian_divergence as gd
from dpaudit.core.gaussian_divergence import gaussian_variance_term, renyi_gaussians

BIG = np.finfo(float).max


def exact_equal(alpha, delta, sigma):
    return alpha * float(np.sum(np.square(delta))) / (2 * sigma**2)


# --------------------------------------------------------------------------- defect 1: crash
def test_issue_reproduction_no_crash_and_covers():
    """P ~ N(0, 1.3^2 I_3), Q ~ N((.3,-.2,.1), 1.3^2 I_3), 1e5 samples each, seed 0 crashed."""
    rng = np.random.default_rng(0)
    delta = np.array([0.3, -0.2, 0.1])
    P = rng.normal(0.0, 1.3, (100_000, 3))
    Q = rng.normal(delta, 1.3, (100_000, 3))
    truth = exact_equal(2.0, delta, 1.3)
    e = renyi_divergence(P, Q, 2.0)
    assert e.lower <= truth <= e.upper and e.lower < e.value < e.upper
    assert e.details["statistic"] > 1000  # in the range where scipy's ncf returned NaN
    k = renyi_divergence(P, Q, 2.0, sigma=1.3)
    assert k.lower <= truth <= k.upper and "known sigma" in k.method


def test_well_separated_samples_give_a_large_value():
    rng = np.random.default_rng(1)
    P, Q = rng.normal(1e6, 1.0, 1000), rng.normal(0.0, 1.0, 1000)
    truth = exact_equal(2.0, [1e6], 1.0)
    for kw, rel in (({}, 0.1), ({"sigma": 1.0}, 0.1), ({"method": "gaussian-unequal"}, 0.3)):
        e = renyi_divergence(P, Q, 2.0, **kw)
        assert e.lower <= truth <= e.upper, kw
        assert e.value == pytest.approx(truth, rel=rel), kw  # the unequal model also estimates the ratio


def test_cli_renyi_seed_1_no_longer_crashes(capsys):
    """`dpaudit renyi --seed 1` crashed (about 40 % of seeds did)."""
    assert main(["renyi", "--seed", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for r in out["rows"]:
        assert 0.0 <= float(r["lower"]) <= r["estimate"] <= float(r["upper"])


@pytest.mark.slow
def test_cli_renyi_seeds_0_to_30_and_report_without_arguments(capsys, tmp_path, monkeypatch):
    for s in range(31):
        assert main(["renyi", "--seed", str(s), "--json"]) == 0, s
        json.loads(capsys.readouterr().out)
    monkeypatch.chdir(tmp_path)
    assert main(["report"]) == 0
    assert (tmp_path / "dpaudit-report.html").exists()


def test_lambda_zero_lower_end_is_zero():
    """P = Q exactly: the lower end is 0 unless the statistic is in its top beta/2 tail."""
    rng = np.random.default_rng(5)
    zeros = sum(renyi_divergence(rng.normal(size=(50, 2)), rng.normal(size=(50, 2)), 3.0).lower == 0.0
                for _ in range(60))
    assert zeros >= 60 * 0.975 - 3 * math.sqrt(60 * 0.975 * 0.025)


# ----------------------------------------------------------------------- defect 2: unequal
def test_unequal_covers_zero_when_p_equals_q():
    """The bootstrap interval covered 0 in 0 of 22,800 runs with P = Q."""
    rng = np.random.default_rng(7)
    runs, hits = 150, 0
    for i in range(runs):
        n, d = (20, 1) if i % 2 else (100, 3)
        e = renyi_divergence(rng.normal(size=(n, d)), rng.normal(size=(n, d)), 2.0, method="gaussian-unequal")
        hits += e.lower == 0.0
    assert hits >= runs * 0.95 - 3 * math.sqrt(runs * 0.95 * 0.05)


def test_unequal_small_n_coverage():
    """n = 20: the bootstrap covered 64 %; the region interval covers at least its nominal level."""
    rng = np.random.default_rng(8)
    alpha, mu, s_p = 2.0, 0.5, 1.2
    truth = renyi_gaussians(alpha, mu, s_p, 0.0, 1.0)
    runs, hits = 100, 0
    for _ in range(runs):
        e = renyi_divergence(rng.normal(mu, s_p, 20), rng.normal(0.0, 1.0, 20), alpha, method="gaussian-unequal")
        hits += e.lower <= truth <= e.upper
    assert hits >= runs * 0.95 - 3 * math.sqrt(runs * 0.95 * 0.05)


def test_unequal_never_returns_infinite_lower_end():
    """Data consistent only with an infinite divergence: a finite (largest double) lower end, flagged."""
    rng = np.random.default_rng(9)
    P, Q = rng.normal(0.0, 2.0, (200, 2)), rng.normal(0.0, 1.0, (200, 2))
    e = renyi_divergence(P, Q, 100.0, method="gaussian-unequal")  # finite only if s_P^2 / s_Q^2 < 100/99
    assert e.lower == BIG and e.upper == math.inf and e.value == math.inf
    assert e.details["consistent_only_with_infinite_divergence"] is True
    assert 1.0 < e.details["finite_orders_below"] < 1.5
    # the truth is infinite here, and at a lower order it is finite and covered
    f = renyi_divergence(P, Q, 1.2, method="gaussian-unequal")
    assert f.lower <= renyi_gaussians(1.2, 0.0, 2.0, 0.0, 1.0, dim=2) <= f.upper < math.inf


def test_unequal_near_the_finiteness_boundary():
    """s_alpha^2 close to 0: the truth is huge; the interval reaches it (upper = inf allowed)."""
    rng = np.random.default_rng(10)
    alpha, s_p = 20.0, math.sqrt(1.05 - 1e-4)  # r = 1.0499 vs limit 20/19 = 1.0526
    truth = renyi_gaussians(alpha, 0.2, s_p, 0.0, 1.0)
    hits = 0
    for _ in range(40):
        e = renyi_divergence(rng.normal(0.2, s_p, 2000), rng.normal(0.0, 1.0, 2000), alpha,
                             method="gaussian-unequal")
        assert math.isfinite(e.lower)
        hits += e.lower <= truth <= e.upper
    assert hits >= 40 * 0.95 - 3 * math.sqrt(40 * 0.95 * 0.05)


def test_unequal_labels_its_method_and_assumption():
    rng = np.random.default_rng(11)
    e = renyi_divergence(rng.normal(size=300), rng.normal(0.3, 1.1, 300), 2.0, method="gaussian-unequal")
    assert "exact pivots" in e.method and "conservative" in e.method
    assert "N(mu_P, s_P^2 I)" in e.assumption and "coverage >= confidence" in e.assumption
    assert "bootstrap" not in e.method


# --------------------------------------------------------------------------- defect 3: one home
def test_gaussian_renyi_is_the_core_closed_form():
    rng = np.random.default_rng(12)
    for _ in range(50):
        d = int(rng.integers(1, 5))
        a = 1.0 + 10 ** rng.uniform(-3, 3)
        mp_, mq_ = rng.normal(size=d), rng.normal(size=d)
        vp, vq = 10 ** rng.uniform(-2, 2, size=2)
        ours = gaussian_renyi(a, mp_, mq_, vp, vq, d)
        core = gd.renyi_gaussians_moments(a, float(np.sum((mp_ - mq_) ** 2)), vp, vq, d)
        assert ours == core
        assert ours == pytest.approx(renyi_gaussians(a, mp_, math.sqrt(vp), mq_, math.sqrt(vq), d), rel=1e-12, abs=0)


def exact_variance_part(alpha, r, square=False):
    """-log(r)/2 - log(1 - (alpha-1)(r-1)) / (2 (alpha-1)) in 50-digit arithmetic (r squared first if asked)."""
    with mp.workdps(50):
        a, r = mp.mpf(alpha), mp.mpf(r)
        r = r * r if square else r
        return float(-mp.log(r) / 2 - mp.log(1 - (a - 1) * (r - 1)) / (2 * (a - 1)))


@pytest.mark.parametrize("e", [1e-12, -3e-9, 2e-6, -0.3, 0.04])
@pytest.mark.parametrize("alpha", [1.001, 2.0, 20.0, 900.0])
def test_closed_form_is_accurate_near_equal_variances(e, alpha):
    """The crude copy computed (1-a) log vp + a log vq - log s_a: all accuracy lost when vp ~ vq."""
    if (alpha - 1) * e >= 1:
        return
    exact = exact_variance_part(alpha, 1.0 + e)  # of the double 1.0 + e
    ours = gaussian_renyi(alpha, [0.0], [0.0], 1.0 + e, 1.0)
    assert ours == pytest.approx(exact, rel=1e-12, abs=0)  # no absolute slack: the values are ~e^2
    ratio = 1.0 + e / 2
    if (alpha - 1) * (ratio * ratio - 1) < 1:
        exact = exact_variance_part(alpha, ratio, square=True)
        assert gaussian_variance_term(alpha, ratio) == pytest.approx(exact, rel=1e-12, abs=0)


@pytest.mark.parametrize("r", [1e-300, 1e-20, 1e-8, 0.3, 0.49, 0.51])
def test_closed_form_is_accurate_for_tiny_variance_ratios(r):
    """r = var_p / var_q far below 1: r - 1 rounds to -1 and -log1p(r - 1) was inf (found by the
    property test: n = 2, sd_q = 1e9 gave lower = inf)."""
    for alpha in (1.5, 2.0, 50.0):
        exact = exact_variance_part(alpha, r)
        assert gaussian_renyi(alpha, [0.0], [0.0], r, 1.0) == pytest.approx(exact, rel=1e-13, abs=0)
        assert gaussian_variance_term(alpha, math.sqrt(r)) == pytest.approx(exact, rel=1e-13, abs=0)


def test_unequal_with_a_tiny_variance_ratio_has_a_finite_lower_end():
    rng = np.random.default_rng(0)
    e = renyi_divergence(rng.normal(0.0, 1.0, 2), rng.normal(0.0, 1e9, 2), 2.0, confidence=0.5,
                         method="gaussian-unequal")
    assert 0.0 < e.lower <= e.value <= e.upper and e.lower < math.inf


def test_closed_form_alpha_inf_and_finiteness():
    assert gaussian_renyi(math.inf, [0.0], [0.0], 1.0, 1.0) == 0.0
    assert gaussian_renyi(math.inf, [0.0], [0.1], 1.0, 1.0) == math.inf
    assert gaussian_renyi(3.0, [0.0], [0.0], 2.0, 1.0) == math.inf  # s_alpha^2 = 3 - 4 < 0


# ------------------------------------------------------------------------ defect 4: validation
GOOD = np.arange(10.0)


@pytest.mark.parametrize("kw,match", [
    (dict(samples_p=np.array([1.0, np.nan, 2.0])), "samples_p"),
    (dict(samples_q=np.array([1.0, np.inf, 2.0])), "samples_q"),
    (dict(samples_p=np.array([1.0])), "samples_p"),
    (dict(samples_p=np.zeros((0, 2))), "samples_p"),
    (dict(samples_p=np.zeros((5, 0))), "samples_p"),
    (dict(samples_p=["a", "b", "c"]), "samples_p"),
    (dict(samples_q=np.array([1 + 1j, 2.0])), "samples_q"),
    (dict(samples_p=3.0), "samples_p"),
    (dict(samples_p=np.zeros((10, 2))), "dimension"),
    (dict(alpha=1.0), "alpha"), (dict(alpha=0.5), "alpha"), (dict(alpha=math.nan), "alpha"),
    (dict(alpha=math.inf), "alpha"), (dict(alpha="2"), "alpha"),
    (dict(confidence=1.0), "confidence"), (dict(confidence=0.0), "confidence"), (dict(confidence=math.nan), "confidence"),
    (dict(sigma=0.0), "sigma"), (dict(sigma=-1.0), "sigma"), (dict(sigma=math.inf), "sigma"), (dict(sigma=math.nan), "sigma"),
    (dict(sigma=True), "sigma"), (dict(sigma=1.0, method="gaussian-unequal"), "sigma"),
    (dict(seed=-1), "seed"), (dict(seed="x"), "seed"), (dict(seed=1.5), "seed"),
    (dict(method="kde"), "method"), (dict(selection_fraction=1.0), "selection_fraction"),
])
def test_every_argument_is_validated(kw, match):
    args = dict(samples_p=GOOD + 1.0, samples_q=GOOD, alpha=2.0) | kw
    with pytest.raises(ValueError, match=match):
        renyi_divergence(args.pop("samples_p"), args.pop("samples_q"), args.pop("alpha"), **args)


def test_zero_variance():
    const = np.full(10, 3.0)
    for method in ("gaussian", "gaussian-unequal"):
        e = renyi_divergence(const, const.copy(), 2.0, method=method)  # identical constants: documented answer
        assert (e.value, e.lower, e.upper) == (0.0, 0.0, math.inf) and "degenerate" in e.details
        with pytest.raises(ValueError, match="zero variance"):
            renyi_divergence(const, const + 1.0, 2.0, method=method)
    with pytest.raises(ValueError, match="samples_q has zero variance"):
        renyi_divergence(GOOD, const, 2.0, method="gaussian-unequal")
    e = renyi_divergence(GOOD, const, 2.0)  # pooling: one constant sample is fine
    assert e.lower <= e.value <= e.upper


# --------------------------------------------------------------------------------- properties
METHODS = ("gaussian", "gaussian-unequal", "nonparametric", "known-sigma")
ARG_NAMES = ("samples_p", "samples_q", "alpha", "sigma", "confidence")


@settings(max_examples=60, deadline=None)
@given(n_p=st.integers(2, 60), n_q=st.integers(2, 60), d=st.integers(1, 6),
       mean_p=st.floats(-1e6, 1e6), mean_q=st.floats(-1e6, 1e6),
       log_sd_p=st.floats(-6, 6), log_sd_q=st.floats(-6, 6),
       log_am1=st.floats(-4, math.log10(999.0)), method=st.sampled_from(METHODS),
       confidence=st.floats(0.5, 0.999), seed=st.integers(0, 2**32 - 1))
def test_property_random_legal_inputs(n_p, n_q, d, mean_p, mean_q, log_sd_p, log_sd_q, log_am1, method, confidence,
                                      seed):
    rng = np.random.default_rng(seed)
    P = rng.normal(mean_p, 10.0**log_sd_p, (n_p, d))
    Q = rng.normal(mean_q, 10.0**log_sd_q, (n_q, d))
    alpha = 1.0 + 10.0**log_am1
    kw = {"sigma": 10.0**log_sd_p} if method == "known-sigma" else {"method": method, "seed": seed}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            e = renyi_divergence(P, Q, alpha, confidence=confidence, **kw)
        except ValueError as exc:  # only a ValueError that names its argument
            assert any(name in str(exc) for name in ARG_NAMES), str(exc)
            return
    assert not any(math.isnan(v) for v in (e.value, e.lower, e.upper))
    assert 0.0 <= e.lower <= e.value <= e.upper
    assert e.lower < math.inf
    json.dumps(e.to_dict())


def test_known_sigma_beyond_the_double_range_of_the_statistic():
    """||m|| / sigma ~ e^354.85: the statistic overflows but D ~ 8e307 does not; a lower end
    replaced by the largest double would be above the truth. At e^400 D itself overflows."""
    from dpaudit.audit.stats.renyi import equal_interval

    sigma = math.exp(-354.85)
    lo, val, hi, det = equal_interval(1.0, 0.0, 1000, 1000, 1, 1.001, 0.95, sigma=sigma)
    with mp.workdps(40):
        truth = float(mp.mpf(1.001) / (2 * mp.mpf(sigma) ** 2))  # alpha ||m||^2 / (2 sigma^2)
    assert det["statistic"] == math.inf
    assert lo <= truth <= hi and hi < BIG and lo == pytest.approx(truth, rel=1e-11)
    lo, val, hi, _ = equal_interval(1.0, 0.0, 1000, 1000, 1, 1.001, 0.95, sigma=math.exp(-400.0))
    assert (lo, val, hi) == (BIG, math.inf, math.inf)
