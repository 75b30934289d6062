"""Fuzz of the PyDP adapter (``dpaudit.interop.pydp``; issue 27, item 6).

PyDP's numerical mechanisms (Laplace, Gaussian) and an algorithm (``Count``) audited through
:func:`audit_pydp` on inputs of every form, with trials, confidences and statistics of every form;
:func:`mechanism_claim` and the samplers on objects of every form; :func:`check_floating_point` on its
samplers. Contract: tests/support/fuzz_contract.py; PyDP's generator cannot be seeded, so
:class:`LibraryRNGWarning` is the one warning allowed.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.audit.floating import check_floating_point
from dpaudit.interop.library import LibraryRNGWarning
from dpaudit.interop.pydp import algorithm_sampler, audit_pydp, mechanism_claim, mechanism_sampler
from tests.support.fuzz_contract import DEEP, FAST, ODD_VALUES, check_call, options

pytest.importorskip("pydp", reason="PyDP is not installed (pip install python-dp)")
from pydp.algorithms.laplacian import Count  # noqa: E402
from pydp.algorithms.numerical_mechanisms import GaussianMechanism, LaplaceMechanism  # noqa: E402

NAMES = ("mech", "obj", "factory", "trials", "confidence", "statistic", "seed", "x", "sampler", "claim", "epsilon",
         "delta", "outputs")
RNG = (LibraryRNGWarning,)
INPUTS = (0.0, 1.0, 0, 1, True, -2.5, 1e300, math.nan, math.inf, "a", None, [0.0], b"x")
DATASETS = ([1] * 5, [1] * 6, [], [1.5, 2.5], ["a"], None, 3, [None], [math.nan])


def target(kind):
    if kind == "laplace":
        return LaplaceMechanism(epsilon=1.0, sensitivity=1.0)
    if kind == "gaussian":
        return GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    if kind == "count":
        return lambda: Count(epsilon=1.0, dtype="int")
    raise AssertionError(kind)


audit_args = dict(
    kind=st.sampled_from(("laplace", "gaussian", "count")),
    i=st.integers(0, len(INPUTS) - 1), j=st.integers(0, len(INPUTS) - 1), opts=options())


def _audit_case(kind, i, j, opts):
    pool = DATASETS if kind == "count" else INPUTS
    x, xp = pool[i % len(pool)], pool[j % len(pool)]
    check_call(lambda: audit_pydp(target(kind), x, xp, seed=0, **opts), NAMES, allowed_warnings=RNG)


@FAST
@given(**audit_args)
def test_fuzz_audit_pydp(kind, i, j, opts):
    _audit_case(kind, i, j, opts)


@pytest.mark.slow
@DEEP
@given(**audit_args)
def test_fuzz_audit_pydp_deep(kind, i, j, opts):
    _audit_case(kind, i, j, opts)


@pytest.mark.parametrize("i", range(len(INPUTS)))
@pytest.mark.parametrize("kind", ["laplace", "count"])
def test_every_input_form_once(kind, i):
    _audit_case(kind, i, 1, {"trials": 40})


class Fake:
    def __init__(self, epsilon, delta):
        self.epsilon, self.delta = epsilon, delta
        self.add_noise = lambda v: v


@FAST
@given(eps=st.sampled_from(ODD_VALUES), delta=st.sampled_from(ODD_VALUES))
def test_fuzz_claim_and_sampler_wrapping(eps, delta):
    check_call(lambda: mechanism_claim(Fake(eps, delta)), NAMES)
    for obj in (None, 3, "laplace", object(), lambda: None, lambda: 3):
        check_call(lambda: mechanism_sampler(obj), NAMES, allowed_warnings=RNG)
        check_call(lambda: algorithm_sampler(obj), NAMES, allowed_warnings=RNG)


@FAST
@given(kind=st.sampled_from(("laplace", "gaussian")), x=st.sampled_from((0.0, 0, 1e300, math.nan, "a")),
       claim=st.sampled_from((0.0, 1.0, math.inf, (1.0, 1e-6))))
def test_fuzz_check_floating_point_on_pydp(kind, x, claim):
    with pytest.warns(LibraryRNGWarning):
        sampler = mechanism_sampler(target(kind))
    check_call(lambda: check_floating_point(sampler, x, 1.0, claim=claim, trials=10, seed=0).precision,
               NAMES + ("claim",), allowed_warnings=RNG)
