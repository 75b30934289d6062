"""Fuzz of what the mechanism-library adapters share (``dpaudit.interop.library``; issue 27, item 6).

:class:`LibraryClaim`'s constructors with parameters of every form, :func:`audit_library_claim` with claims of
every kind (pure, approx, zCDP at several deltas) and objects that are not claims, and :func:`release` on
library calls that fail in every way. Contract: tests/support/fuzz_contract.py. (The audit on sampler
outputs of every form is fuzzed by tests/properties/test_audit_fuzz.py::test_fuzz_library_claim.)
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.interop.library import LibraryClaim, audit_library_claim, check_deltas, release
from tests.support.fuzz_contract import DEEP, FAST, ODD_VALUES, check_call, options

NAMES = ("epsilon", "delta", "rho", "deltas", "claim", "confidence", "trials", "sampler", "statistic")
DELTA_SETS = ((1e-3, 1e-6), (1e-9,), (), None, "x", (0.0,), (1.0,), (math.nan,), ("a",), [0.5], np.array([1e-6]))


@FAST
@given(a=st.sampled_from(ODD_VALUES), b=st.sampled_from(ODD_VALUES), deltas=st.sampled_from(DELTA_SETS))
def test_fuzz_claim_constructors(a, b, deltas):
    check_call(lambda: LibraryClaim.pure(a), NAMES)
    check_call(lambda: LibraryClaim.approx(a, b), NAMES)
    check_call(lambda: LibraryClaim.zcdp(a, deltas), NAMES)


@pytest.mark.parametrize("value", ["1.0", None, True, [1.0], 1 + 1j, b"x"])
def test_claim_parameters_are_validated_by_name(value):
    """Found by this fuzz: ``float(epsilon)`` read the string "1.0" and True as numbers and raised Python's own
    "float() argument must be ..." for None and lists (naming nothing)."""
    for make, name in ((LibraryClaim.pure, "epsilon"), (lambda v: LibraryClaim.approx(v, 0.0), "epsilon"),
                       (lambda v: LibraryClaim.approx(1.0, v), "delta"), (LibraryClaim.zcdp, "rho")):
        with pytest.raises(ValueError, match=name):
            make(value)


def _sampler(x, rng, size):
    return rng.laplace(float(x), 1.0, size)


claim_kinds = st.sampled_from(("pure0", "pure1", "pureinf", "approx", "zcdp", "zcdp1", "none", "tuple", "float"))


def _claim(kind):
    return {"pure0": LibraryClaim.pure(0.0), "pure1": LibraryClaim.pure(1.0), "pureinf": LibraryClaim.pure(math.inf),
            "approx": LibraryClaim.approx(1.0, 1e-6), "zcdp": LibraryClaim.zcdp(0.5),
            "zcdp1": LibraryClaim.zcdp(0.5, (1e-6,)), "none": None, "tuple": (1.0, 0.0), "float": 1.0}[kind]


def _audit_case(kind, opts):
    check_call(lambda: audit_library_claim(_sampler, 0.0, 1.0, _claim(kind), seed=0, **opts), NAMES)


audit_args = dict(kind=claim_kinds, opts=options(odd={"epsilon": (1.0,), "delta": (0.1,)}))


@FAST
@given(**audit_args)
def test_fuzz_audit_library_claim(kind, opts):
    _audit_case(kind, opts)


@pytest.mark.slow
@DEEP
@given(**audit_args)
def test_fuzz_audit_library_claim_deep(kind, opts):
    _audit_case(kind, opts)


class LibraryFailure(Exception):
    """A library's own exception class (OpenDP's OpenDPException, ...)."""


@pytest.mark.parametrize("exc, cls", [(LibraryFailure("no"), ValueError), (RuntimeError("no"), ValueError),
                                      (TypeError("no"), TypeError), (ValueError("no"), ValueError),
                                      (ZeroDivisionError("no"), ValueError)])
def test_release_names_the_sampler_and_the_input(exc, cls):
    def call(v):
        raise exc

    with pytest.raises(cls, match=r"sampler lib\[m\]: the library refused the input x='abc'") as err:
        release("lib[m]", call, "abc")
    assert err.value.__cause__ is exc
    with pytest.raises(MemoryError):  # not a refusal of the input: passed through as it is
        release("lib[m]", lambda v: (_ for _ in ()).throw(MemoryError()), 1)


def test_check_deltas():
    assert check_deltas([1e-6, 0.5]) == (1e-6, 0.5) and check_deltas(np.array([1e-3])) == (1e-3,)
    for bad in DELTA_SETS[2:9]:
        with pytest.raises(ValueError, match="deltas must be"):
            check_deltas(bad)
