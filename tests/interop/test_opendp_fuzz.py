"""Fuzz of the OpenDP adapter (``dpaudit.interop.opendp``; issue 27, item 6).

OpenDP measurements (Laplace and Gaussian on floats, geometric on integers, randomized response on booleans,
a zCDP-to-approximate-DP profile) audited through :func:`audit_opendp` on inputs of every form, with ``d_in``,
``deltas``, trials, confidences and statistics of every form; :func:`measurement_claim` and the sampler on
objects of every form. Contract: tests/support/fuzz_contract.py; OpenDP's generator cannot be seeded, so
:class:`LibraryRNGWarning` is the one warning allowed.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.interop.library import LibraryRNGWarning
from dpaudit.interop.opendp import audit_opendp, measurement_claim, measurement_sampler
from tests.support.fuzz_contract import DEEP, FAST, ODD_VALUES, check_call, options

dp = pytest.importorskip("opendp.prelude", reason="OpenDP is not installed (pip install opendp)")
dp.enable_features("contrib")

NAMES = ("meas", "d_in", "deltas", "trials", "confidence", "statistic", "seed", "x", "sampler", "output", "claim",
         "epsilon", "delta", "rho", "outputs")
RNG = (LibraryRNGWarning,)
INPUTS = (0.0, 1.0, 0, 1, True, False, -2.5, 1e300, math.nan, math.inf, "a", None, [0.0], b"x")


def measurement(kind):
    FLOAT = dict(input_domain=dp.atom_domain(T=float, nan=False), input_metric=dp.absolute_distance(T=float))
    INT = dict(input_domain=dp.atom_domain(T=int), input_metric=dp.absolute_distance(T=int))
    if kind == "laplace":
        return dp.m.make_laplace(scale=1.0, **FLOAT)
    if kind == "gaussian":
        return dp.m.make_gaussian(scale=1.0, **FLOAT)
    if kind == "geometric":
        return dp.m.make_geometric(scale=1.0, **INT)
    if kind == "rr":
        return dp.m.make_randomized_response_bool(prob=0.75)
    if kind == "profile":
        return dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(scale=1.0, **FLOAT))
    raise AssertionError(kind)


audit_args = dict(
    kind=st.sampled_from(("laplace", "gaussian", "geometric", "rr", "profile")),
    x=st.sampled_from(INPUTS), x_prime=st.sampled_from(INPUTS),
    opts=options({"d_in": (1, 1.0, 2), "deltas": ((1e-3, 1e-6), (1e-6,))},
                 {"d_in": (0, -1, 0.5, math.nan, "one", None, True), "deltas": ((), (0.0,), (1.0,), (math.nan,), None,
                                                                             "x")}))


def _audit_case(kind, x, x_prime, opts):
    meas = measurement(kind)
    check_call(lambda: audit_opendp(meas, x, x_prime, seed=0, **opts), NAMES, allowed_warnings=RNG)


@FAST
@given(**audit_args)
def test_fuzz_audit_opendp(kind, x, x_prime, opts):
    _audit_case(kind, x, x_prime, opts)


@pytest.mark.slow
@DEEP
@given(**audit_args)
def test_fuzz_audit_opendp_deep(kind, x, x_prime, opts):
    _audit_case(kind, x, x_prime, opts)


@pytest.mark.parametrize("x", INPUTS)
@pytest.mark.parametrize("kind", ["laplace", "geometric", "rr"])
def test_every_input_form_once(kind, x):
    _audit_case(kind, x, {"rr": True, "geometric": 1}.get(kind, 1.0),
                {"d_in": 1 if kind != "laplace" else 1.0, "deltas": (1e-6,), "trials": 40})


@FAST
@given(kind=st.sampled_from(("laplace", "gaussian", "geometric", "rr", "profile")), d_in=st.sampled_from(ODD_VALUES),
       deltas=st.sampled_from(((1e-6,), (), (0.0,), (1.0,), (math.nan,), ("a",), None)))
def test_fuzz_measurement_claim(kind, d_in, deltas):
    meas = measurement(kind)
    check_call(lambda: measurement_claim(meas, d_in, deltas=deltas), NAMES)


@pytest.mark.parametrize("obj", [None, 3, "laplace", object(), lambda v: v])
def test_claim_and_sampler_of_non_measurements(obj):
    check_call(lambda: measurement_claim(obj), NAMES)
    check_call(lambda: measurement_sampler(obj), NAMES, allowed_warnings=RNG)
    check_call(lambda: measurement_sampler(measurement("laplace"), output=obj), NAMES, allowed_warnings=RNG)


@pytest.mark.parametrize("deltas", [None, "x", (), ("a",), (1.0,), (0.0,), (math.nan,), 3])
@pytest.mark.parametrize("kind", ["gaussian", "profile"])
def test_deltas_are_validated_by_name(kind, deltas):
    """Found by this fuzz: a privacy profile (SmoothedMaxDivergence) was read at any ``deltas`` unchecked -- a
    claim with no points (``()``), a point at delta 1 (``(1.0,)``), "could not convert string to float" -- and a
    zCDP claim with ``deltas=None`` raised "'NoneType' object is not iterable"."""
    with pytest.raises(ValueError, match="deltas must be"):
        measurement_claim(measurement(kind), 1.0, deltas=deltas)
