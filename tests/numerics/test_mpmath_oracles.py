"""Self-checks of the mpmath references of tests/support/mpmath_oracles.py against closed forms."""

from __future__ import annotations

import math

import mpmath as mp
import pytest

from tests.support.mpmath_oracles import (
    mp_balle_epsilon,
    mp_bs_epsilon,
    mp_cks_delta,
    mp_cks_epsilon,
    mp_gauss_delta,
    mp_laplace_rdp,
    mp_poisson_gaussian_rdp_int,
    mp_rr_rdp,
    mp_subsampled_rr_rdp,
)

# ----------------------------------------------------------------------------- self-checks


def test_oracle_gaussian_reference_values():
    # closed forms (Balle & Wang 2018; Bun & Steinke 2016) = dp_accounting 0.6.0: delta(1) at sigma = 1 is 0.126936737506644
    assert float(mp_gauss_delta(1.0, 1.0)) == pytest.approx(0.126936737506644, rel=1e-13)
    # GDP closed form at eps = 0: 2 Phi(mu/2) - 1
    with mp.workdps(40):
        assert mp_gauss_delta(0.3, 0.0) == pytest.approx(2 * mp.ncdf(mp.mpf(0.15)) - 1, rel=1e-30)
    # deep tail: below 1e-340 reported as 0 (any positive double is then an upper bound)
    assert mp_gauss_delta(1.0, 60.0) == 0


def test_oracle_conversions_reference_values():
    assert float(mp_cks_epsilon(0.5, 1e-5)) == pytest.approx(4.728386984943, rel=1e-11)
    assert float(mp_cks_delta(0.5, 3.0)) == pytest.approx(0.005143184064, rel=1e-9)
    assert float(mp_bs_epsilon(0.5, 1e-5)) == pytest.approx(5.298525912188, rel=1e-11)
    # (alpha, r) = (5.4, 2.7) at delta 1e-5 is the dp-accounting reference point of rho = 0.5
    assert float(mp_balle_epsilon(5.4, 2.7, 1e-5)) == pytest.approx(4.728507067218, rel=1e-11)


def test_oracle_mechanism_curves_limits():
    # alpha -> 1 of the Laplace curve is the KL divergence eps + e^-eps - 1
    assert float(mp_laplace_rdp(0.7, 1 + 1e-12)) == pytest.approx(0.7 + math.exp(-0.7) - 1, rel=1e-9)
    # randomized response at alpha = 2: log(cosh(eps))... p e^eps + (1-p) e^-eps
    e = 1.3
    p = 1 / (1 + math.exp(-e))
    assert float(mp_rr_rdp(e, 2.0)) == pytest.approx(math.log(p * math.exp(e) + (1 - p) * math.exp(-e)), rel=1e-14)
    # q = 1: subsampled RR is RR
    assert float(mp_subsampled_rr_rdp(1.0, e, 3.0)) == pytest.approx(float(mp_rr_rdp(e, 3.0)), rel=1e-20)
    # q = 1: subsampled Gaussian is the Gaussian alpha/(2 sigma^2)
    assert float(mp_poisson_gaussian_rdp_int(1.0, 2.0, 5)) == pytest.approx(5 / 8, rel=1e-20)
