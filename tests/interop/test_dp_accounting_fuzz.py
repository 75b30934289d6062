"""Fuzz of the dp_accounting adapter (``dpaudit.interop.dp_accounting``; issue 27, item 6).

Event trees of every kind -- Gaussian, Laplace, zCDP, randomized response, (epsilon, delta), exponential
mechanism, NoOp, NonPrivate, unknown events and non-events -- nested in Poisson and without-replacement
sampling, self-compositions and compositions, with parameters of every legal and illegal form (zero noise,
infinite noise, sampling probability 0 and 1, counts 0 to 10^12, NaN, strings, arrays, None). The events are
duck-typed (classes named like dp_accounting's, with its attribute names), so the fuzz runs without
dp_accounting; :func:`test_real_events_agree_with_duck_typed` checks the same trees built from the real
classes. Contract (tests/support/fuzz_contract.py): ``from_dp_event`` returns a ledger with positive
integer counts and every accountant answers epsilon in [0, inf] and delta in [0, 1], or the call raises a
ValueError/TypeError naming the event attribute; the accountants' documented notes (NoAmplificationWarning:
zCDP/tCDP have no subsampling theorem; OrderGridWarning) are the only warnings.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.accounting.base import NoAmplificationWarning
from dpaudit.accounting.rdp import OrderGridWarning
from dpaudit.interop.dp_accounting import accountant_from_dp_event, from_dp_event
from dpaudit.mechanisms import Gaussian, PoissonSampled, SampledWithoutReplacement
from dpaudit.mechanisms.nonprivate import NonPrivate
from tests.support.fuzz_contract import DEEP, FAST, check_call, check_curve

ACCOUNTANTS = ("rdp", "zcdp", "tcdp", "pld")
NOTES = (NoAmplificationWarning, OrderGridWarning)
#: what a refusal may name: an event attribute, the event, or the mechanism the accountant cannot compose
NAMES = ("noise_multiplier", "sampling_probability", "source_dataset_size", "sample_size", "count", "events",
         "event", "rho", "xi", "noise_parameter", "num_buckets", "epsilon", "delta", "DpEvent", "not supported",
         "sampled event", "has no privacy loss distribution", "(epsilon, delta)-DP statement")


def ev(name: str, **attrs):
    """A duck-typed dp_accounting event: an instance of a class called ``name`` with ``attrs``."""
    obj = type(name, (), {"__repr__": lambda self: f"{name}({attrs})"})()
    obj.__dict__.update(attrs)
    return obj


ODD = st.sampled_from((None, "a", "1.0", b"x", -1.0, math.nan, -math.inf, True, [1.0], 1 + 1j, 1e308))
NOISE = st.sampled_from((0.0, 1e-3, 0.5, 1.0, 4.0, 1e6, math.inf, 0, 2)) | ODD
PROB = st.sampled_from((0.0, 1e-9, 0.01, 0.5, 0.999, 1.0, 0, 1)) | ODD | st.sampled_from((-0.1, 1.5))
EPS = st.sampled_from((0.0, 1e-6, 0.5, 1.0, 30.0, 800.0, math.inf)) | ODD
COUNT = st.sampled_from((0, 1, 2, 3, 1000, 10**6, 10**12, 2.0)) | ODD | st.sampled_from((-1, 2.5))

leaves = st.one_of(
    st.builds(lambda v: ev("GaussianDpEvent", noise_multiplier=v), NOISE),
    st.builds(lambda v: ev("LaplaceDpEvent", noise_multiplier=v), NOISE),
    st.builds(lambda r, x: ev("ZCDpEvent", rho=r, xi=x), EPS, st.sampled_from((0.0, None, 0.1)) | ODD),
    st.builds(lambda p, k: ev("RandomizedResponseDpEvent", noise_parameter=p, num_buckets=k), PROB, COUNT),
    st.builds(lambda e, d: ev("EpsilonDeltaDpEvent", epsilon=e, delta=d), EPS, PROB),
    st.builds(lambda e: ev("ExponentialMechanismDpEvent", epsilon=e), EPS),
    st.just(ev("NoOpDpEvent")), st.just(ev("NonPrivateDpEvent")), st.just(ev("UnsupportedDpEvent")),
    st.just(ev("GaussianDpEvent")),  # an attribute missing
    st.sampled_from((None, 3, "GaussianDpEvent", 1.0)),  # not events at all
)


def _nest(children):
    return st.one_of(
        st.builds(lambda q, e: ev("PoissonSampledDpEvent", sampling_probability=q, event=e), PROB, children),
        st.builds(lambda n, m, e: ev("SampledWithoutReplacementDpEvent", source_dataset_size=n, sample_size=m,
                                     event=e), COUNT, COUNT, children),
        st.builds(lambda e, c: ev("SelfComposedDpEvent", event=e, count=c), children, COUNT),
        st.builds(lambda es: ev("ComposedDpEvent", events=es), st.lists(children, max_size=3)),
        st.builds(lambda es: ev("ComposedDpEvent", events=es), ODD),
    )


events = st.recursive(leaves, _nest, max_leaves=5)


def _case(event, accountant):
    check_call(lambda: from_dp_event(event), NAMES, allowed_warnings=NOTES)
    check_call(lambda: accountant_from_dp_event(event, accountant), NAMES, allowed_warnings=NOTES)


@FAST
@given(event=events, accountant=st.sampled_from(ACCOUNTANTS))
def test_fuzz_event_trees(event, accountant):
    _case(event, accountant)


@pytest.mark.slow
@DEEP
@given(event=events, accountant=st.sampled_from(ACCOUNTANTS))
def test_fuzz_event_trees_deep(event, accountant):
    _case(event, accountant)


# --------------------------------------------------------------------------- regressions of the classes found
G1, G0 = ev("GaussianDpEvent", noise_multiplier=1.0), ev("GaussianDpEvent", noise_multiplier=0.0)


@pytest.mark.parametrize("inner", [ev("ComposedDpEvent", events=[G1, G0]),
                                   ev("SelfComposedDpEvent", event=G0, count=3),
                                   ev("ComposedDpEvent", events=[ev("NonPrivateDpEvent"), ev("NonPrivateDpEvent")]),
                                   ev("ComposedDpEvent", events=[ev("LaplaceDpEvent", noise_multiplier=0.0), G1])])
@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_sampled_composition_with_a_nonprivate_step_is_the_sampled_nonprivate_step(inner, accountant):
    """Was refused ("a sampled event must contain a single mechanism"): a composition with a non-private step
    is non-private (mutually singular pair), so Poisson sampling at q makes it exactly (0, q)-DP (remove:
    delta(eps) = q for every eps >= 0) and sampling m of n records exactly (0, m/n)-DP."""
    q = 0.3
    assert from_dp_event(ev("PoissonSampledDpEvent", sampling_probability=q, event=inner)) == \
        [(PoissonSampled(NonPrivate(), q), 1)]
    acc = accountant_from_dp_event(ev("PoissonSampledDpEvent", sampling_probability=q, event=inner), accountant)
    check_curve(acc)
    for eps in (0.0, 1.0, 50.0):
        assert acc.delta(eps) == pytest.approx(q, rel=1e-12)
    wor = ev("SampledWithoutReplacementDpEvent", source_dataset_size=10, sample_size=2, event=inner)
    assert from_dp_event(wor) == [(SampledWithoutReplacement(NonPrivate("replace_one"), 0.2), 1)]
    # and the Gaussians-only composition is still collapsed exactly
    both = ev("PoissonSampledDpEvent", sampling_probability=q, event=ev("ComposedDpEvent", events=[G1, G1]))
    assert from_dp_event(both) == [(PoissonSampled(Gaussian(1 / math.sqrt(2)), q), 1)]


@pytest.mark.parametrize("rho, xi, name", [("a", 0.0, "rho"), (None, 0.0, "rho"), ([1], 0.0, "rho"),
                                           (1 + 1j, 0.0, "rho"), (math.nan, 0.0, "rho"), (True, 0.0, "rho"),
                                           ("1.0", 0.0, "rho"), (0.5, "1.0", "xi"), (0.5, [0.5, 1.0], "xi"),
                                           (0.5, b"x", "xi"), (-1.0, 0.0, "rho"), (0.5, -0.1, "xi")])
def test_zcdp_event_parameters_are_validated_by_name(rho, xi, name):
    """Was ``float(rho)``: a string "1.0" or True was read as a number, None/lists/arrays raised Python's own
    "float() argument must be ..." or "truth value of an array" naming nothing."""
    with pytest.raises(ValueError, match=name):
        from_dp_event(ev("ZCDpEvent", rho=rho, xi=xi))


def test_zero_zcdp_event_costs_nothing_in_every_accountant():
    """``ZCDpEvent(0, 0)`` was refused by the PLD accountant (no loss distribution for ZCDPMechanism)."""
    for name in ACCOUNTANTS:
        acc = accountant_from_dp_event(ev("ZCDpEvent", rho=0.0, xi=0.0), name)
        assert acc.epsilon(1e-6) == 0.0 and acc.delta(0.0) == 0.0


@pytest.mark.parametrize("events", [None, 3, 1.5, "ab", b"ab", math.nan])
def test_composed_event_needs_a_sequence_and_says_so(events):
    """Was ``TypeError: 'NoneType' object is not iterable`` (or a walk over a string's characters)."""
    with pytest.raises(TypeError, match="ComposedDpEvent.events"):
        from_dp_event(ev("ComposedDpEvent", events=events))


@pytest.mark.parametrize("event", [ev("EpsilonDeltaDpEvent", epsilon=1e308, delta=1e-6),
                                   ev("ExponentialMechanismDpEvent", epsilon=1e308),
                                   ev("RandomizedResponseDpEvent", noise_parameter=1e-308, num_buckets=2)])
def test_huge_epsilon_events_compose_without_overflow_warnings(event):
    """PLD of a loss of 1e308 raised ``RuntimeWarning: overflow encountered in subtract`` (the pair's spread)."""
    acc = check_call(lambda: accountant_from_dp_event(event, "pld"), NAMES)
    assert acc.epsilon(0.5) > 1e3


def test_real_events_agree_with_duck_typed():
    """The same trees from dp_accounting's own classes give the same ledgers."""
    dpa = pytest.importorskip("dp_accounting")
    real = dpa.PoissonSampledDpEvent(0.3, dpa.ComposedDpEvent([dpa.GaussianDpEvent(1.0), dpa.GaussianDpEvent(0.0)]))
    duck = ev("PoissonSampledDpEvent", sampling_probability=0.3, event=ev("ComposedDpEvent", events=[G1, G0]))
    assert from_dp_event(real) == from_dp_event(duck)
    real = dpa.SelfComposedDpEvent(dpa.ComposedDpEvent([dpa.ZCDpEvent(0.0), dpa.LaplaceDpEvent(2.0)]), 10**12)
    assert check_call(lambda: accountant_from_dp_event(real, "pld"), NAMES).epsilon(1e-6) > 1e11
