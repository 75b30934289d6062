"""Fuzz of the Tumult Core adapter (``dpaudit.interop.tumult``; issue 27, item 6).

Tumult Core's noise measurements (Laplace and Gaussian on floats, geometric and discrete Gaussian on integers)
audited through :func:`audit_tumult` on inputs of every form, with ``d_in``, ``deltas``, trials, confidences,
statistics and seeding of every form; :func:`measurement_claim` and the sampler on objects of every form;
:func:`check_floating_point` on its samplers. Contract: tests/support/fuzz_contract.py (the adapter seeds
Tumult's generator, so only ``seed_library_rng=False`` may warn, with :class:`LibraryRNGWarning`).

Skipped where Tumult Core is not installed: it pins numpy<2, so it runs in an environment of its own
(``.ci/run`` runs this file in ``.venv-tumult``; docs/tumult.md).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.audit.floating import check_floating_point
from dpaudit.interop.library import LibraryRNGWarning
from dpaudit.interop.tumult import audit_tumult, measurement_claim, measurement_sampler
from tests.support.fuzz_contract import DEEP, FAST, ODD_VALUES, check_call, options

pytest.importorskip("tmlt.core", reason="Tumult Core is not installed (it needs numpy<2: see docs/tumult.md)")
from tmlt.core.domains.numpy_domains import NumpyFloatDomain  # noqa: E402
from tmlt.core.measurements.noise_mechanisms import (  # noqa: E402
    AddDiscreteGaussianNoise,
    AddGaussianNoise,
    AddGeometricNoise,
    AddLaplaceNoise,
)

NAMES = ("meas", "d_in", "deltas", "trials", "confidence", "statistic", "seed", "x", "sampler", "output", "claim",
         "epsilon", "delta", "rho", "outputs")
INPUTS = (0.0, 1.0, 0, 1, np.float64(0.5), np.int64(2), True, -2.5, 1e300, math.nan, math.inf, "a", None, [0.0],
          b"x")


def measurement(kind):
    if kind == "laplace":
        return AddLaplaceNoise(NumpyFloatDomain(), scale=1)
    if kind == "gaussian":
        return AddGaussianNoise(NumpyFloatDomain(), sigma_squared=1)
    if kind == "geometric":
        return AddGeometricNoise(alpha=1)
    if kind == "discrete_gaussian":
        return AddDiscreteGaussianNoise(sigma_squared=1)
    raise AssertionError(kind)


KINDS = ("laplace", "gaussian", "geometric", "discrete_gaussian")
audit_args = dict(
    kind=st.sampled_from(KINDS), x=st.sampled_from(INPUTS), x_prime=st.sampled_from(INPUTS),
    opts=options({"d_in": (1, 2), "deltas": ((1e-3, 1e-6), (1e-6,)), "seed_library_rng": (True, False)},
                 {"d_in": (0, -1, 0.5, math.nan, "one", None), "deltas": ((), (1.0,), None)}))


def _audit_case(kind, x, x_prime, opts):
    meas = measurement(kind)
    seeded = opts.get("seed_library_rng", True)
    check_call(lambda: audit_tumult(meas, x, x_prime, seed=0, **opts), NAMES,
               allowed_warnings=() if seeded else (LibraryRNGWarning,))


@FAST
@given(**audit_args)
def test_fuzz_audit_tumult(kind, x, x_prime, opts):
    _audit_case(kind, x, x_prime, opts)


@pytest.mark.slow
@DEEP
@given(**audit_args)
def test_fuzz_audit_tumult_deep(kind, x, x_prime, opts):
    _audit_case(kind, x, x_prime, opts)


@pytest.mark.parametrize("x", INPUTS)
@pytest.mark.parametrize("kind", ["laplace", "geometric"])
def test_every_input_form_once(kind, x):
    _audit_case(kind, x, 1.0 if kind == "laplace" else 1, {"trials": 40})


@FAST
@given(kind=st.sampled_from(KINDS), d_in=st.sampled_from(ODD_VALUES),
       deltas=st.sampled_from(((1e-6,), (), (0.0,), (1.0,), (math.nan,), ("a",), None)))
def test_fuzz_measurement_claim(kind, d_in, deltas):
    meas = measurement(kind)
    check_call(lambda: measurement_claim(meas, d_in, deltas=deltas), NAMES)


@pytest.mark.parametrize("obj", [None, 3, "laplace", object(), lambda v: v])
def test_claim_and_sampler_of_non_measurements(obj):
    check_call(lambda: measurement_claim(obj), NAMES)
    check_call(lambda: measurement_sampler(obj), NAMES, allowed_warnings=(LibraryRNGWarning,))
    check_call(lambda: measurement_sampler(measurement("laplace"), output=obj), NAMES)


@FAST
@given(kind=st.sampled_from(KINDS), x=st.sampled_from((0.0, 0, 1e300, math.nan, "a")),
       claim=st.sampled_from((0.0, 1.0, math.inf, (1.0, 1e-6))))
def test_fuzz_check_floating_point_on_tumult(kind, x, claim):
    sampler = measurement_sampler(measurement(kind))
    check_call(lambda: check_floating_point(sampler, x, 1, claim=claim, trials=10, seed=0).precision,
               NAMES + ("claim",))


def test_library_generator_is_restored_after_a_refused_input():
    """A batch whose input Tumult refuses restores Tumult's own generator (the seeding is undone in ``finally``)."""
    from tmlt.core.random import rng as trng

    before = trng._core_privacy_prng
    with pytest.raises((TypeError, ValueError), match="sampler tumult"):
        measurement_sampler(measurement("laplace"))("a", np.random.default_rng(0), 3)
    assert trng._core_privacy_prng is before
