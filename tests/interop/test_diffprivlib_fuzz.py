"""Fuzz of the diffprivlib adapter (``dpaudit.interop.diffprivlib``; issue 27, item 6).

diffprivlib's mechanisms (Laplace, Gaussian, GaussianAnalytic, Geometric, Binary) with legal parameters, audited
through :func:`audit_diffprivlib` on inputs of every form (floats, ints, NaN, inf, strings, None, lists,
bools), with trials, confidences, claims and statistics of every form; :func:`mechanism_claim` and the samplers
on objects of every form; :func:`check_floating_point` on its samplers. Contract:
tests/support/fuzz_contract.py (a valid result, or a named ValueError/TypeError, or the library's own
refusal of an input through a ChunkError naming the sampler; no warning -- the adapter seeds diffprivlib's
generator, so not even LibraryRNGWarning).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.audit.floating import check_floating_point
from dpaudit.interop.diffprivlib import audit_diffprivlib, mechanism_claim, mechanism_sampler, tool_sampler
from dpaudit.interop.library import LibraryRNGWarning
from tests.support.fuzz_contract import DEEP, FAST, ODD_VALUES, check_call, options

dpl = pytest.importorskip("diffprivlib", reason="diffprivlib is not installed (pip install diffprivlib)")

NAMES = ("mechanism", "trials", "confidence", "epsilon", "delta", "statistic", "seed", "x", "sampler", "func",
         "output", "claim", "outputs")
INPUTS = (0.0, 1.0, 0, 1, 0.5, -3.0, 1e300, math.nan, math.inf, "a", None, [0.0], True, b"x")


def mechanism(kind: str, eps: float):
    M = dpl.mechanisms
    if kind == "laplace":
        return M.Laplace(epsilon=eps, sensitivity=1.0)
    if kind == "gaussian":
        return M.Gaussian(epsilon=min(eps, 1.0), delta=1e-5, sensitivity=1.0)
    if kind == "gaussian_analytic":
        return M.GaussianAnalytic(epsilon=eps, delta=1e-5, sensitivity=1.0)
    if kind == "geometric":
        return M.Geometric(epsilon=eps, sensitivity=1)
    if kind == "binary":
        return M.Binary(epsilon=eps, value0="a", value1="b")
    raise AssertionError(kind)


audit_args = dict(
    kind=st.sampled_from(("laplace", "gaussian", "gaussian_analytic", "geometric", "binary")),
    eps=st.sampled_from((0.1, 1.0, 5.0)),
    x=st.sampled_from(INPUTS), x_prime=st.sampled_from(INPUTS),
    opts=options({"epsilon": ("own", 0.0, 1.0, math.inf)}, {"epsilon": (-1.0, math.nan, "1", None)}))


def _audit_case(kind, eps, x, x_prime, opts):
    mech = mechanism(kind, eps)
    if kind == "binary":  # its inputs are its two labels; the odd ones are kept as they come
        x = {0.0: "a", 1.0: "b"}.get(x, x) if isinstance(x, float) else x
    opts = dict(opts)
    if opts.get("epsilon") == "own":
        del opts["epsilon"]
    check_call(lambda: audit_diffprivlib(mech, x, x_prime, seed=0, **opts), NAMES)


@FAST
@given(**audit_args)
def test_fuzz_audit_diffprivlib(kind, eps, x, x_prime, opts):
    _audit_case(kind, eps, x, x_prime, opts)


@pytest.mark.slow
@DEEP
@given(**audit_args)
def test_fuzz_audit_diffprivlib_deep(kind, eps, x, x_prime, opts):
    _audit_case(kind, eps, x, x_prime, opts)


@pytest.mark.parametrize("x", INPUTS)
@pytest.mark.parametrize("kind", ["laplace", "geometric", "binary"])
def test_every_input_form_once(kind, x):
    """Each input form at least once in the default run, against a legal neighbour."""
    _audit_case(kind, 1.0, x, 1 if kind == "geometric" else 1.0, {"trials": 40})


class Fake:
    """An object with the attributes the adapter reads, of any form."""

    def __init__(self, epsilon, delta, randomise=True):
        self.epsilon, self.delta = epsilon, delta
        if randomise:
            self.randomise = lambda v: v


@FAST
@given(eps=st.sampled_from(ODD_VALUES), delta=st.sampled_from(ODD_VALUES), randomise=st.booleans())
def test_fuzz_mechanism_claim_and_sampler_wrapping(eps, delta, randomise):
    fake = Fake(eps, delta, randomise)
    check_call(lambda: mechanism_claim(fake), NAMES)
    check_call(lambda: mechanism_sampler(fake, seed_library_rng=False), NAMES, allowed_warnings=(LibraryRNGWarning,))
    for obj in (None, 3, "laplace", object()):
        check_call(lambda: mechanism_sampler(obj), NAMES, allowed_warnings=(LibraryRNGWarning,))
        check_call(lambda: tool_sampler(obj), NAMES, allowed_warnings=(LibraryRNGWarning,))


@FAST
@given(kind=st.sampled_from(("laplace", "gaussian_analytic", "geometric")), eps=st.sampled_from((0.5, 2.0)),
       x=st.sampled_from((0.0, 0, 1e300, math.nan, "a")), claim=st.sampled_from((0.0, 1.0, math.inf, (1.0, 1e-6))))
def test_fuzz_check_floating_point_on_diffprivlib(kind, eps, x, claim):
    sampler = mechanism_sampler(mechanism(kind, eps))

    def call():
        return check_floating_point(sampler, x, 1, claim=claim, trials=10, seed=0).precision

    check_call(call, NAMES + ("claim",))


def test_tool_sampler_is_fuzzed_on_a_histogram():
    """A tool (histogram) on datasets of every form: a result or a named refusal."""
    s = tool_sampler(dpl.tools.histogram, output=lambda r: r[0], epsilon=1.0, bins=2, range=(0, 1))
    for x, xp in (([0.1, 0.9], [0.1]), ([], [0.5]), (["a"], [0.5]), ([math.nan], [0.5])):
        check_call(lambda: __import__("dpaudit").audit_mechanism(s, x, xp, epsilon=1.0, trials=10, seed=0), NAMES)


def test_outputs_near_1e300_audit_without_overflow():
    """Found by this fuzz: Laplace at x = 1e300 gave ``RuntimeWarning: overflow encountered in square`` in the
    logistic attack's standardisation (the spread of outputs near 1e300 squared); now standardised in scale."""
    r = check_call(lambda: audit_diffprivlib(mechanism("laplace", 1.0), 1e300, 1.0, trials=40, seed=0), NAMES)
    assert r.epsilon_lower >= 0.0 and not isinstance(r, Exception)


def test_an_input_the_library_refuses_is_named():
    """Found by this fuzz: check_floating_point on Geometric at x = 0.0 raised diffprivlib's own "Value to be
    randomised must be an integer" (naming neither the sampler nor the input); now a TypeError that names both,
    with the library's exception as its cause."""
    with pytest.raises(TypeError, match=r"sampler diffprivlib\[Geometric\]: the library refused the input x=0.0") \
            as err:
        check_floating_point(mechanism_sampler(mechanism("geometric", 1.0)), 0.0, 1, claim=1.0, trials=10, seed=0)
    assert "must be an integer" in str(err.value) and isinstance(err.value.__cause__, TypeError)


@pytest.mark.parametrize("statistic", [3, 2.5, True])
def test_a_statistic_that_is_a_number_is_refused_by_name(statistic):
    """Found by this fuzz: ``statistic=3`` raised "'int' object is not iterable" (the attack registry iterated it)."""
    with pytest.raises(ValueError, match="statistic must be"):
        audit_diffprivlib(mechanism("laplace", 1.0), 0.0, 1.0, trials=40, seed=0, statistic=statistic)
