"""dpaudit.audit.stats.gdp: GDP epsilon/delta of mu against mpmath and the conversions, mu from rates."""


import mpmath
import pytest

from dpaudit.audit.stats.gdp import gdp_delta_of, gdp_epsilon_of, mu_lower_from_rates


# ------------------------------------------------------------------ GDP
def test_gdp_epsilon_reference_and_inverse():
    # Balle & Wang 2018, Thm. 8: sigma = 3.73 is (1, 1e-5)-DP
    assert gdp_epsilon_of(1 / 3.73, 1e-5) == pytest.approx(1.0, abs=2e-3)
    for mu in (0.1, 0.5, 1.0, 3.0):
        eps = gdp_epsilon_of(mu, 1e-6)
        assert gdp_delta_of(mu, eps) == pytest.approx(1e-6, rel=1e-8)
        assert gdp_delta_of(mu, eps) >= 1e-6 * (1 - 1e-9)  # rounded down: delta at eps is not below target


def test_gdp_delta_matches_mpmath():
    mpmath.mp.dps = 40
    for mu, eps in ((1.0, 2.0), (0.3, 0.5), (2.0, 6.0)):
        m, e = mpmath.mpf(mu), mpmath.mpf(eps)
        exact = mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)
        assert gdp_delta_of(mu, eps) == pytest.approx(float(exact), rel=1e-9)


def test_gdp_epsilon_against_conversions():
    conv = pytest.importorskip("dpaudit.accounting.conversions")
    if not hasattr(conv, "gdp_epsilon"):
        pytest.skip("conversions.gdp_epsilon not available")
    for mu in (0.2, 1.0, 2.5):
        assert gdp_epsilon_of(mu, 1e-5) == pytest.approx(conv.gdp_epsilon(mu, 1e-5), rel=1e-6)


def test_mu_lower_formula():
    from scipy.stats import norm
    fpr, fnr = 0.1, 0.2
    assert mu_lower_from_rates(fpr, fnr) == pytest.approx(norm.ppf(0.9) - norm.ppf(0.2), rel=1e-12)
    assert mu_lower_from_rates(0.5, 0.5) == 0.0
    assert mu_lower_from_rates(0.6, 0.6) == 0.0
