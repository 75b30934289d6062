"""dpaudit.core.noncentral against mpmath (issue 11: every number trustworthy).

Reference values come from tests/support/noncentral.py (Poisson series with multiple-
precision recurrences; quadrature of the Bessel density for huge lambda), independent of the
code under test. Accuracy claim checked here (module docstring of dpaudit.core.noncentral):
relative error <= 1e-9 where the true value is >= 1e-20, absolute error <= 1e-25 below.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special as sc
from scipy import stats

from dpaudit.core import noncentral as N  # noqa: E402
from dpaudit.core.noncentral import (  # noqa: E402
    invert_noncentrality,
    ncf_cdf,
    ncf_sf,
    ncx2_cdf,
    ncx2_sf,
    noncentrality_interval,
)
from tests.support import noncentral as R  # noqa: E402

REL, ABS, FLOOR = 1e-9, 1e-25, 1e-20


def assert_close(ours, ref, what):
    ref = float(ref)
    assert math.isfinite(ours), what
    if ref >= FLOOR:
        assert abs(ours - ref) <= REL * ref, (what, ours, ref, abs(ours - ref) / ref)
    else:
        assert abs(ours - ref) <= ABS, (what, ours, ref)


def ncf_point(d, nu, lam, z):
    """A statistic z rough standard deviations from the centre of F'(d, nu, lam) (far tails for |z| large)."""
    m = (lam + d) / d * (nu / (nu - 2) if nu > 2 else 1.0)
    sd = math.sqrt(2 * d + 4 * lam) / d + m * math.sqrt(2.0 / nu)
    x = m + z * sd
    return x if x > 0 else m * 10.0 ** (z / 4)


def ncx2_point(d, lam, z):
    m, sd = lam + d, math.sqrt(2 * d + 4 * lam)
    x = m + z * sd
    return x if x > 0 else m * 10.0 ** (z / 4)


# ------------------------------------------------------------------------------------ accuracy
NCX2_CASES = [(d, lam, z) for d in (1, 2, 7, 50) for lam in (0.0, 0.3, 40.0, 1.5e4, 2.5e4)
              for z in (-30.0, -1.0, 0.0, 2.0, 30.0)] + [(3, 3e5, -8.0), (50, 3e5, 0.5), (1, 3e5, 9.0)]


@pytest.mark.parametrize("d,lam,z", NCX2_CASES)
def test_ncx2_matches_mpmath_series(d, lam, z):
    x = ncx2_point(d, lam, z)
    cdf, sf = R.series_ncx2(x, d, lam)
    assert_close(ncx2_cdf(x, d, lam), cdf, ("cdf", x, d, lam))
    assert_close(ncx2_sf(x, d, lam), sf, ("sf", x, d, lam))


NCF_CASES = [(1, 3.0, 0.0, -3.0), (1, 3.0, 7.0, 25.0), (2, 5.0, 100.0, 2.0), (3, 10.0, 2.0, 0.0),
             (3, 599_994.0, 4000.0, -0.7), (3, 599_994.0, 4000.0, -30.0), (3, 599_994.0, 3000.0, -40.0),
             (3, 599_994.0, 4500.0, 6.0), (50, 1e8, 30.0, -8.0), (50, 1e8, 3e4, 1.0), (50, 100.0, 3e4, -1.0),
             (50, 100.0, 3e4, 20.0), (1, 8.0, 3e4, -10.0), (5, 2e4, 1e5, 3.0), (5, 2e4, 1e5, -25.0),
             (2, 95_606_155.0, 0.0, -3.0), (50, 33_533_014.0, 10.0, 1.0), (7, 1.0, 2.5e4, 3.0)]


@pytest.mark.parametrize("d,nu,lam,z", NCF_CASES)
def test_ncf_matches_mpmath_series(d, nu, lam, z):
    x = ncf_point(d, nu, lam, z)
    cdf, sf = R.series_ncf(x, d, nu, lam)
    assert_close(ncf_cdf(x, d, nu, lam), cdf, ("cdf", x, d, nu, lam))
    assert_close(ncf_sf(x, d, nu, lam), sf, ("sf", x, d, nu, lam))


def test_scipy_nan_points_regression():
    """scipy 1.17's ncf.cdf returns NaN at these points (the crash of issue 11); ours are exact."""
    nu = 3 * (2e5 - 2)
    for x, lam in ((200.0, 3000.0), (666.6666666666666, 5000.0)):
        cdf, sf = R.series_ncf(x, 3, nu, lam)
        assert_close(ncf_cdf(x, 3, nu, lam), cdf, x)
        assert_close(ncf_sf(x, 3, nu, lam), sf, x)


def test_betainc_side_near_one_is_avoided():
    """scipy's betainc(a, b, y) is off by ~3e-10 on the side near 1 for large integral b; the
    survival function must not be computed as 1 - betainc there."""
    a, b, f = 25.0, 4e7, 1.2
    y = f / (f + 2 * b / 50)
    I, J = R.beta_pq(a, b, R.mp.mpf(50) * f / (R.mp.mpf(50) * f + 2 * b), R.mp.mpf(2 * b) / (R.mp.mpf(50) * f + 2 * b))
    assert abs(sc.betainc(a, b, y) / float(I) - 1) > 1e-10  # scipy's error is real
    cdf, sf = R.series_ncf(f, 50, 2 * b, 0.0)
    assert_close(ncf_sf(f, 50, 2 * b, 0.0), sf, "sf")
    assert_close(ncf_cdf(f, 50, 2 * b, 0.0), cdf, "cdf")


def test_reference_constructions_agree():
    """The two mpmath references (Poisson series, Bessel-density quadrature) agree, so neither is broken."""
    for x, d, lam in ((30.0, 3, 20.0), (1.2e4, 2, 1.1e4)):
        a, b = R.series_ncx2(x, d, lam), R.bessel_ncx2(x, d, lam)
        assert abs(a[0] - b[0]) < 1e-25 + 1e-20 * b[0] and abs(a[1] - b[1]) < 1e-25 + 1e-20 * b[1]
    a, b = R.series_ncf(2.0, 1, 40.0, 25.0), R.bessel_ncf(2.0, 1, 40.0, 25.0)
    assert abs(a[0] - b[0]) < 1e-20 and abs(a[1] - b[1]) < 1e-20


@pytest.mark.slow
@pytest.mark.parametrize("x_rel,d,lam", [(1.0, 1, 1e9), (1 - 3e-5, 3, 1e10), (1 + 1e-5, 7, 1e12),
                                         (1 - 1e-5, 49, 1e12), (1.0 + 2e-6, 2, 1e12)])
def test_ncx2_huge_lambda_against_bessel_quadrature(x_rel, d, lam):
    x = lam * x_rel
    cdf, sf = R.bessel_ncx2(x, d, lam)
    assert_close(ncx2_cdf(x, d, lam), cdf, ("cdf", x, d, lam))
    assert_close(ncx2_sf(x, d, lam), sf, ("sf", x, d, lam))


@pytest.mark.slow
@pytest.mark.parametrize("d,nu,lam,z", [(1, 5.0, 1e10, 0.5), (3, 1e6, 1e12, -2.0), (1, 1e8, 1e12, 3.0),
                                        (3, 60.0, 1e9, -4.0)])
def test_ncf_huge_lambda_against_bessel_quadrature(d, nu, lam, z):
    x = ncf_point(d, nu, lam, z)
    cdf, sf = R.bessel_ncf(x, d, nu, lam)
    assert_close(ncf_cdf(x, d, nu, lam), cdf, ("cdf", x))
    assert_close(ncf_sf(x, d, nu, lam), sf, ("sf", x))


@pytest.mark.slow
def test_random_sweep_against_mpmath_series():
    """120 random points: d 1..50, nu 1..1e8, lambda 0..1e6, statistic within +-40 scales."""
    rng = np.random.default_rng(2024)
    for _ in range(60):
        d = int(rng.choice([1, 2, 3, 5, 10, 25, 50]))
        nu = float(np.round(10 ** rng.uniform(0, 8)))
        lam = 0.0 if rng.random() < 0.1 else float(10 ** rng.uniform(-3, 6))
        z = float(rng.uniform(-40, 40))
        x = ncf_point(d, nu, lam, z)
        cdf, sf = R.series_ncf(x, d, nu, lam)
        assert_close(ncf_cdf(x, d, nu, lam), cdf, ("ncf cdf", x, d, nu, lam))
        assert_close(ncf_sf(x, d, nu, lam), sf, ("ncf sf", x, d, nu, lam))
        x = ncx2_point(d, lam, z)
        cdf, sf = R.series_ncx2(x, d, lam)
        assert_close(ncx2_cdf(x, d, lam), cdf, ("ncx2 cdf", x, d, lam))
        assert_close(ncx2_sf(x, d, lam), sf, ("ncx2 sf", x, d, lam))


def test_poisson_logpmf_against_mpmath():
    mp = R.mp
    with mp.workdps(30):
        for mu in (1e-8, 0.7, 30.0, 5e3, 1e6, 5e11):
            js = sorted({0, 1, 2, int(mu), int(mu) + 1, int(mu + 5 * math.sqrt(mu) + 3), max(0, int(mu - 5 * math.sqrt(mu)))})
            ours = N.poisson_logpmf(np.array(js, dtype=float), mu)
            for j, o in zip(js, ours):
                ref = float(j * mp.log(mu) - mu - mp.loggamma(j + 1))
                assert abs(o - ref) <= 2e-14 * max(1.0, abs(ref)) + 1e-13, (mu, j, o, ref)


# ----------------------------------------------------------------------------------- properties
LAMS = st.one_of(st.just(0.0), st.floats(1e-6, 1e12))


@settings(max_examples=60, deadline=None)
@given(d=st.integers(1, 50), lam=LAMS, x=st.floats(1e-300, 1e300), nu=st.one_of(st.none(), st.floats(1.0, 1e8)))
def test_cdf_sf_are_probabilities_that_add_to_one(d, lam, x, nu):
    if nu is None:
        c, s = ncx2_cdf(x, d, lam), ncx2_sf(x, d, lam)
    else:
        c, s = ncf_cdf(x, d, nu, lam), ncf_sf(x, d, nu, lam)
    assert 0.0 <= c <= 1.0 and 0.0 <= s <= 1.0
    assert abs(c + s - 1.0) <= 1e-9


@settings(max_examples=40, deadline=None)
@given(d=st.integers(1, 50), lam=st.floats(0.0, 1e9), nu=st.floats(1.0, 1e8), z=st.floats(-8, 8))
def test_monotone_in_noncentrality_and_statistic(d, lam, nu, z):
    x = ncf_point(d, nu, lam, z)
    lam2 = lam * 1.01 + 0.5
    tol = 1e-12
    assert ncf_cdf(x, d, nu, lam2) <= ncf_cdf(x, d, nu, lam) * (1 + 1e-9) + tol
    assert ncf_cdf(x * 1.01, d, nu, lam) >= ncf_cdf(x, d, nu, lam) * (1 - 1e-9) - tol
    y = ncx2_point(d, lam, z)
    assert ncx2_cdf(y, d, lam2) <= ncx2_cdf(y, d, lam) * (1 + 1e-9) + tol


def test_edge_values_and_validation():
    assert ncx2_cdf(0.0, 3, 5.0) == 0.0 and ncx2_sf(0.0, 3, 5.0) == 1.0
    assert ncf_cdf(math.inf, 3, 10, 5.0) == 1.0 and ncf_sf(math.inf, 3, 10, 5.0) == 0.0
    for bad, match in ((dict(x=math.nan), "x"), (dict(df=0), "df"), (dict(nc=-1.0), "nc"), (dict(nc=math.inf), "nc")):
        kw = dict(x=1.0, df=2, nc=1.0) | bad
        with pytest.raises(ValueError, match=match):
            ncx2_cdf(kw["x"], kw["df"], kw["nc"])
    with pytest.raises(ValueError, match="dfd"):
        ncf_cdf(1.0, 2, 0.0, 1.0)


# ------------------------------------------------------------------------------------ inversion
@pytest.mark.parametrize("stat,d,nu", [(1400.0, 3, 599_994.0), (10.0, 1, 10.0), (3.0, 50, 1e8), (1e6, 2, 100.0),
                                       (20.0, 1, None), (5e5, 3, None), (1e40, 2, 40.0), (1e18, 5, None)])
def test_inversion_brackets_the_root(stat, d, nu):
    cdf = (lambda lam: ncx2_cdf(stat, d, lam)) if nu is None else (lambda lam: ncf_cdf(stat, d, nu, lam))  # noqa: E731
    sf = (lambda lam: ncx2_sf(stat, d, lam)) if nu is None else (lambda lam: ncf_sf(stat, d, nu, lam))  # noqa: E731
    lo = invert_noncentrality(stat, d, nu, sf=0.025, side="lower")
    hi = invert_noncentrality(stat, d, nu, cdf=0.025, side="upper")
    med = invert_noncentrality(stat, d, nu, cdf=0.5)
    assert 0 < lo <= med <= hi < math.inf
    assert lo < med < hi or stat > 1e30  # beyond, the ends differ by less than an ulp
    # sides: the lower limit is at or left of the exact root, the upper one at or right
    assert sf(lo) <= 0.025 * (1 + 1e-9)
    assert cdf(hi) <= 0.025 * (1 + 1e-9)
    # and close to it
    assert sf(lo * (1 + 1e-6)) > 0.025 or lo > 1e30
    assert cdf(hi * (1 - 1e-6)) > 0.025 or hi > 1e30
    assert abs(cdf(med) - 0.5) < 1e-6 or med > 1e30


def test_inversion_edge_cases():
    # at 1e250 the interval is narrower than an ulp of lambda: the ends coincide, still finite
    lo, med, hi = noncentrality_interval(1e250, 5, None)
    assert lo == pytest.approx(1e250, rel=1e-12) and hi == pytest.approx(1e250, rel=1e-12) and lo <= hi
    assert invert_noncentrality(0.0, 3, 10.0, cdf=0.025) == 0.0
    assert invert_noncentrality(math.inf, 3, 10.0, cdf=0.025) == math.inf
    # small statistic: no lambda reaches the target, the answer is 0 (interval reported as {0})
    assert invert_noncentrality(0.01, 3, 10.0, cdf=0.025, side="upper") == 0.0
    lo, med, hi = noncentrality_interval(0.01, 3, 10.0)
    assert lo == med == hi == 0.0
    with pytest.raises(ValueError, match="exactly one"):
        invert_noncentrality(1.0, 3, 10.0)
    with pytest.raises(ValueError, match="side"):
        invert_noncentrality(1.0, 3, 10.0, cdf=0.1, side="left")


def test_interval_matches_scipy_where_scipy_is_reliable():
    """In the centre of moderate cases scipy's ncf is right: the inversions agree with it."""
    for stat, d, nu in ((4.0, 2, 30.0), (12.0, 5, 200.0)):
        lo, med, hi = noncentrality_interval(stat, d, nu, confidence=0.9)
        assert stats.ncf.sf(stat, d, nu, lo) == pytest.approx(0.05, rel=1e-6)
        assert stats.ncf.cdf(stat, d, nu, hi) == pytest.approx(0.05, rel=1e-6)
        assert stats.ncf.cdf(stat, d, nu, med) == pytest.approx(0.5, rel=1e-6)


def test_tail_selection_never_reads_uninitialised_memory(monkeypatch):
    """Regression: the upper-tail buffer was np.empty_like, so 1 - (garbage) could raise
    "invalid value encountered in subtract" (an error under the test configuration) when the
    garbage happened to be a signalling NaN. Simulate that garbage."""
    import warnings

    def snan_like(a, *args, **kw):
        return np.full(np.shape(a), 0x7FF0000000000001, dtype=np.uint64).view(np.float64)

    monkeypatch.setattr(N.np, "empty_like", snan_like)
    low = np.array([0.2, 0.7, 0.9])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for upper in (False, True):
            v = N._tail_terms(lambda m: low if m is None else low[m], lambda m: (1.0 - low)[m], upper)
            assert np.allclose(v, 1.0 - low if upper else low)
