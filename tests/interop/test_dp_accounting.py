"""dpaudit.interop.dp_accounting: DpEvents converted; accountants agree with dp_accounting's."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

import dpaudit
from dpaudit.core.validation import UnsupportedMechanismError
from dpaudit.interop import NonPrivate, ZCDPMechanism, accountant_from_dp_event, from_dp_event

dpa = pytest.importorskip("dp_accounting")

DELTA = 1e-5


# -- conversion ------------------------------------------------------------------------------------
def test_gaussian_laplace_selfcomposed_composed():
    ev = dpa.ComposedDpEvent([
        dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(1.1), 10),
        dpa.LaplaceDpEvent(2.0),
        dpa.NoOpDpEvent(),
        dpa.SelfComposedDpEvent(dpa.ComposedDpEvent([dpa.GaussianDpEvent(1.1), dpa.ZCDpEvent(0.1)]), 3),
    ])
    got = from_dp_event(ev)
    assert got == [(dpaudit.Gaussian(1.1), 13), (dpaudit.Laplace(2.0), 1), (ZCDPMechanism(0.1), 3)]


def test_sampled_events():
    [(m, c)] = from_dp_event(dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1)), 7))
    assert c == 7 and type(m).__name__ == "PoissonSampled" and m.q == 0.01 and m.mechanism == dpaudit.Gaussian(1.1)
    [(m, c)] = from_dp_event(dpa.SampledWithoutReplacementDpEvent(1000, 10, dpa.GaussianDpEvent(1.1)))
    assert type(m).__name__ == "SampledWithoutReplacement" and m.q == pytest.approx(0.01)
    assert m.mechanism == dpaudit.Gaussian(1.1, neighbouring="replace_one")
    # q = 1 is the unsampled mechanism; q = 0 releases nothing
    assert from_dp_event(dpa.PoissonSampledDpEvent(1.0, dpa.GaussianDpEvent(2.0))) == [(dpaudit.Gaussian(2.0), 1)]
    assert from_dp_event(dpa.PoissonSampledDpEvent(0.0, dpa.GaussianDpEvent(2.0))) == []


def test_gaussians_inside_a_sampled_event_collapse_exactly():
    inner = dpa.ComposedDpEvent([dpa.GaussianDpEvent(2.0), dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(4.0), 4)])
    [(m, _)] = from_dp_event(dpa.PoissonSampledDpEvent(0.1, inner))
    # precision 1/4 + 4/16 = 1/2 -> sigma sqrt(2)
    assert m.mechanism.sigma == pytest.approx(math.sqrt(2.0), rel=1e-15)
    with pytest.raises(UnsupportedMechanismError, match="single mechanism"):
        from_dp_event(dpa.PoissonSampledDpEvent(0.1, dpa.ComposedDpEvent([dpa.GaussianDpEvent(1.0),
                                                                         dpa.LaplaceDpEvent(1.0)])))


def test_randomized_response_nonprivate_and_unsupported():
    [(m, _)] = from_dp_event(dpa.RandomizedResponseDpEvent(0.5, 2))
    assert m.epsilon == pytest.approx(math.log(3.0))  # truthful w.p. 3/4: ratio 3
    assert from_dp_event(dpa.NonPrivateDpEvent()) == [(NonPrivate(), 1)]
    assert from_dp_event(dpa.GaussianDpEvent(0.0)) == [(NonPrivate(), 1)]
    with pytest.raises(UnsupportedMechanismError, match="not supported"):
        from_dp_event(dpa.dp_event.UnsupportedDpEvent())
    with pytest.raises(ValueError, match="neighbouring"):
        from_dp_event(dpa.GaussianDpEvent(1.0), neighbouring="swap")
    with pytest.raises(ValueError, match="accountant"):
        accountant_from_dp_event(dpa.GaussianDpEvent(1.0), accountant="nope")


def test_duck_typing_without_dp_accounting():
    """Any objects with the right class names and attributes convert: dp_accounting is not needed."""
    def event(name, **attrs):
        return type(name, (), {})() if not attrs else type(name, (SimpleNamespace,), {})(**attrs)
    ev = event("ComposedDpEvent", events=[event("GaussianDpEvent", noise_multiplier=3.0),
                                          event("SelfComposedDpEvent", event=event("LaplaceDpEvent",
                                                                                     noise_multiplier=1.0), count=2)])
    assert from_dp_event(ev) == [(dpaudit.Gaussian(3.0), 1), (dpaudit.Laplace(1.0), 2)]


def test_zcdp_mechanism_curves():
    m = ZCDPMechanism(0.5, xi=0.1)
    np.testing.assert_allclose(m.rdp([2.0, 10.0]), [1.1, 5.1])
    assert m.zcdp() == math.inf and ZCDPMechanism(0.5).zcdp() == 0.5
    assert np.all(np.isinf(NonPrivate().rdp([2.0, 3.0])))
    with pytest.raises(ValueError, match="rho"):
        ZCDPMechanism(-1.0)


# -- accountants against dp_accounting on the same ledger ------------------------------------------
def dpa_rdp(event, relation=None):
    kw = {} if relation is None else {"neighboring_relation": relation}
    return dpa.rdp.RdpAccountant(**kw).compose(event).get_epsilon(DELTA)


LEDGERS = {
    # closed forms and dp_accounting 0.6.0 cases
    "gaussian": dpa.GaussianDpEvent(1.0),
    "dp-sgd": dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1)), 1000),
    "laplace x10": dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(1.0), 10),
    "mixed": dpa.ComposedDpEvent([
        dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.05, dpa.GaussianDpEvent(2.0)), 200),
        dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(10.0), 5), dpa.ZCDpEvent(0.01)]),
}


@pytest.mark.parametrize("name", sorted(LEDGERS))
def test_rdp_matches_dp_accounting_and_is_never_larger(name):
    ev = LEDGERS[name]
    ours = accountant_from_dp_event(ev, "rdp").epsilon(DELTA)
    theirs = dpa_rdp(ev)
    # dpaudit's default orders include dp_accounting's; its fractional-order subsampled RDP is exact
    # where dp_accounting's is conservative (Mironov, Talwar, Zhang 2019), so ours <= theirs, and close.
    assert ours <= theirs * (1 + 1e-9)
    assert ours >= theirs * (1 - 0.02)


def test_rdp_reference_numbers():
    # Mironov, Talwar, Zhang 2019 binomial sum; dp_accounting 0.6.0 gives 1.711770166 for DP-SGD q=0.01, sigma=1.1, T=1000
    assert dpa_rdp(LEDGERS["dp-sgd"]) == pytest.approx(1.711770166, rel=1e-8)
    ours = accountant_from_dp_event(LEDGERS["dp-sgd"], "rdp").epsilon(DELTA)
    assert ours == pytest.approx(1.711770166, rel=5e-3)


def test_wor_matches_dp_accounting_replace_one():
    ev = dpa.SelfComposedDpEvent(dpa.SampledWithoutReplacementDpEvent(1000, 10, dpa.GaussianDpEvent(1.1)), 100)
    theirs = dpa_rdp(ev, dpa.NeighboringRelation.REPLACE_ONE)
    ours = accountant_from_dp_event(ev, "rdp").epsilon(DELTA)
    assert ours <= theirs * (1 + 1e-9) and ours >= theirs * 0.9


def test_zcdp_ledger():
    ev = dpa.ComposedDpEvent([dpa.ZCDpEvent(0.1), dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(2.0), 4)])
    acc = accountant_from_dp_event(ev, "zcdp")
    assert acc.rho == pytest.approx(0.1 + 4 / 8)
    # a non-private step has no guarantee in any notion: inf (dp_accounting's NonPrivateDpEvent), not a refusal
    assert accountant_from_dp_event(dpa.NonPrivateDpEvent(), "zcdp").epsilon(DELTA) == math.inf
    assert accountant_from_dp_event(dpa.NonPrivateDpEvent(), "rdp").epsilon(DELTA) == math.inf


@pytest.mark.parametrize("name", ["gaussian", "laplace x10"])
def test_pld_matches_dp_accounting(name):
    ev = LEDGERS[name]
    theirs = dpa.pld.PLDAccountant().compose(ev).get_epsilon(DELTA)
    ours = accountant_from_dp_event(ev, "pld").epsilon(DELTA)
    assert ours == pytest.approx(theirs, rel=2e-3)


def test_pld_subsampled_gaussian_reference():
    ev = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1)), 1000)
    ours = accountant_from_dp_event(ev, "pld").epsilon(DELTA)
    # Mironov, Talwar, Zhang 2019 binomial sum; dp_accounting 0.6.0 pessimistic PLD, d = 1e-4: 1.5153702; PRV eps_up 1.525376
    assert 1.5153702 * (1 - 2e-3) <= ours <= 1.525376


def test_existing_accountant_instance():
    acc = dpaudit.RDPAccountant()
    out = accountant_from_dp_event(dpa.GaussianDpEvent(1.0), acc)
    assert out is acc and acc.epsilon(DELTA) <= 4.728507067218 * (1 + 1e-12)
