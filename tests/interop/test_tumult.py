"""Issue 18: Tumult Core measurements as dpaudit samplers, their privacy functions as claims.

Skipped (with the reason) where Tumult Core is not installed. Tumult Core 0.20 pins numpy<2 and
pandas<2, so it cannot be installed beside the ``test`` extra; run this file from an environment of
its own (docs/tumult.md): ``pip install "tmlt.core==0.20.0" pytest hypothesis && pip install --no-deps -e .``.
"""

import warnings

import numpy as np
import pytest

from dpaudit.audit.floating import check_floating_point
from dpaudit.conversions import zcdp_to_dp
from dpaudit.interop.library import LibraryRNGWarning
from dpaudit.interop.tumult import audit_tumult, measurement_claim, measurement_sampler

pytest.importorskip("tmlt.core", reason="Tumult Core is not installed (it needs numpy<2: see docs/tumult.md)")
from tmlt.core.domains.numpy_domains import NumpyFloatDomain  # noqa: E402
from tmlt.core.measurements.noise_mechanisms import (  # noqa: E402
    AddDiscreteGaussianNoise,
    AddGaussianNoise,
    AddGeometricNoise,
    AddLaplaceNoise,
)


def test_claims_are_read_from_the_privacy_function():
    assert measurement_claim(AddLaplaceNoise(NumpyFloatDomain(), scale=2)).points == ((0.5, 0.0),)
    assert measurement_claim(AddGeometricNoise(alpha=1), 2).points == ((2.0, 0.0),)
    c = measurement_claim(AddGaussianNoise(NumpyFloatDomain(), sigma_squared=1))
    assert c.kind == "zcdp" and c.parameter == 0.5
    assert [p[0] for p in c.points] == [zcdp_to_dp(0.5, d) for d in (1e-3, 1e-6, 1e-9)]
    with pytest.raises(ValueError, match="meas"):
        measurement_claim(object())


def test_library_rng_is_seeded_from_ours_and_restored():
    from tmlt.core.random import rng as trng

    before = trng._core_privacy_prng
    s = measurement_sampler(AddLaplaceNoise(NumpyFloatDomain(), scale=1))
    a = s(0.0, np.random.default_rng(3), 6)
    b = s(0.0, np.random.default_rng(3), 6)
    assert np.array_equal(a, b) and not np.array_equal(a, s(0.0, np.random.default_rng(4), 6))
    assert trng._core_privacy_prng is before
    with pytest.warns(LibraryRNGWarning, match="not reproducible"):
        measurement_sampler(AddLaplaceNoise(NumpyFloatDomain(), scale=1), seed_library_rng=False)
    r1 = audit_tumult(AddGeometricNoise(alpha=1), 0, 1, trials=500, seed=5, statistic="value")
    r2 = audit_tumult(AddGeometricNoise(alpha=1), 0, 1, trials=500, seed=5, statistic="value")
    assert r1.epsilon_lower == r2.epsilon_lower and r1.details["library"]["library_rng_seeded"] is True
    assert r1.details["library"]["warning"] is None
    with pytest.warns(LibraryRNGWarning):
        r3 = audit_tumult(AddGeometricNoise(alpha=1), 0, 1, trials=300, seed=5, statistic="value",
                          seed_library_rng=False)
    assert "not reproducible" in r3.details["library"]["warning"]


@pytest.mark.parametrize("name", ["laplace", "geometric", "discrete_gaussian"])
def test_tumult_mechanisms_audit_consistent(name):
    meas, x, xp = {
        "laplace": (AddLaplaceNoise(NumpyFloatDomain(), scale=1), 0.0, 1.0),
        "geometric": (AddGeometricNoise(alpha=1), 0, 1),
        "discrete_gaussian": (AddDiscreteGaussianNoise(sigma_squared=1), 0, 1),
    }[name]
    r = audit_tumult(meas, x, xp, trials=2000, seed=0, statistic=["value", "float-bits"])
    assert not r.violation, r.summary()
    assert r.epsilon_lower > 0


def test_tumult_gaussian_audits_consistent_on_the_mathematical_mechanism():
    r = audit_tumult(AddGaussianNoise(NumpyFloatDomain(), sigma_squared=1), 0.0, 1.0, trials=2000, seed=0,
                     statistic="value")
    assert not r.violation


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="Tumult Core 0.20's AddGaussianNoise samples the noise exactly but adds it to the value in "
                          "double precision (float(value) + gaussian(...)): outputs near 0 under 0 cannot be produced "
                          "from 1 (Mironov 2012); its AddLaplaceNoise samples value + noise exactly and has no leak")
def test_tumult_gaussian_has_no_floating_point_leak():
    s = measurement_sampler(AddGaussianNoise(NumpyFloatDomain(), sigma_squared=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibraryRNGWarning)
        r = check_floating_point(s, 0.0, 1.0, claim=(zcdp_to_dp(0.5, 1e-6), 1e-6), trials=2000, seed=0)
    assert not r.impossible and not r.violation, r.message


def test_tumult_laplace_has_no_floating_point_leak():
    s = measurement_sampler(AddLaplaceNoise(NumpyFloatDomain(), scale=1))
    r = check_floating_point(s, 0.0, 1.0, claim=1.0, trials=2000, seed=0)
    assert not r.impossible and not r.violation
