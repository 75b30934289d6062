"""Laplace and discrete Laplace calibration (issue 17): the smallest scale meeting a target.

References: basic composition of pure DP (k steps of Lap(b) with sensitivity s give k s / b;
Dwork, McSherry, Nissim, Smith 2006), dp_accounting's PLD of the Laplace and discrete Laplace
mechanisms, and the returned scale recomputed in each accountant.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit import (
    DiscreteLaplace,
    Laplace,
    PoissonSampled,
    calibrate_discrete_laplace,
    calibrate_laplace,
    make_accountant,
)


def _eps(mech, steps, accountant, delta):
    return make_accountant(accountant, quiet=True).compose(mech, steps).epsilon(delta)


@pytest.mark.parametrize("k, eps, sens", [(1, 1.0, 1.0), (10, 1.0, 1.0), (7, 0.3, 2.5), (1000, 5.0, 1.0)])
def test_pure_composition_closed_form(k, eps, sens):
    b = calibrate_laplace(eps, accountant="pure", steps=k, sensitivity=sens)
    assert b >= k * sens / eps and b == pytest.approx(k * sens / eps, rel=1e-11)
    assert k * Laplace(b, sens).epsilon <= eps  # the returned scale meets the target
    t = calibrate_discrete_laplace(eps, accountant="pure", steps=k, sensitivity=int(math.ceil(sens)))
    assert t == pytest.approx(k * math.ceil(sens) / eps, rel=1e-11)
    assert k * DiscreteLaplace(t, int(math.ceil(sens))).pure_epsilon() <= eps


@pytest.mark.parametrize("accountant", ["rdp", "zcdp", "tcdp", "pld"])
@pytest.mark.parametrize("k, target, delta", [(1, 1.0, 1e-5), (10, 1.0, 1e-5), (50, 2.0, 1e-6)])
def test_returned_scale_meets_the_target_and_is_smallest(accountant, k, target, delta):
    rtol = 1e-5 if accountant == "pld" else 1e-12
    b = calibrate_laplace(target, delta, steps=k, accountant=accountant)
    assert _eps(Laplace(b), k, accountant, delta) <= target
    assert _eps(Laplace(b * (1 - 3 * rtol)), k, accountant, delta) > target
    t = calibrate_discrete_laplace(target, delta, steps=k, accountant=accountant)
    assert _eps(DiscreteLaplace(t), k, accountant, delta) <= target
    assert _eps(DiscreteLaplace(t * (1 - 3 * rtol)), k, accountant, delta) > target
    # RDP (its alpha = inf order) and PLD never need more than basic composition's scale; zCDP
    # and tCDP can (their curves rho*alpha are unbounded in alpha)
    if accountant in ("rdp", "pld"):
        assert b <= k / target * (1 + 1e-5) and t <= k / target * (1 + 1e-5)


def test_subsampled_laplace_meets_the_target():
    b = calibrate_laplace(1.0, 1e-5, steps=200, sample_rate=0.02)
    assert _eps(PoissonSampled(Laplace(b), 0.02), 200, "rdp", 1e-5) <= 1.0
    assert _eps(PoissonSampled(Laplace(b * (1 - 3e-12)), 0.02), 200, "rdp", 1e-5) > 1.0


@pytest.mark.parametrize("k, target, delta", [(1, 1.0, 1e-5), (10, 1.0, 1e-5), (20, 3.0, 1e-6)])
def test_pld_calibration_against_dp_accounting(k, target, delta):
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    b = calibrate_laplace(target, delta, steps=k, accountant="pld")
    theirs = pld.from_laplace_mechanism(b, value_discretization_interval=1e-4).self_compose(k)
    assert theirs.get_epsilon_for_delta(delta) == pytest.approx(target, rel=2e-3)
    for sens in (1, 3):
        t = calibrate_discrete_laplace(target, delta, steps=k, accountant="pld", sensitivity=sens)
        # dp_accounting's discrete Laplace parameter a: P(z) proportional to e^{-a |z|}, a = 1/t
        theirs = pld.from_discrete_laplace_mechanism(1.0 / t, sensitivity=sens,
                                                     value_discretization_interval=1e-4).self_compose(k)
        assert theirs.get_epsilon_for_delta(delta) == pytest.approx(target, rel=2e-3)


@settings(max_examples=40, deadline=None)
@given(target=st.floats(0.05, 20.0), k=st.integers(1, 200), delta=st.floats(1e-10, 0.1),
       sens=st.floats(0.1, 10.0))
def test_rdp_calibration_property(target, k, delta, sens):
    b = calibrate_laplace(target, delta, steps=k, sensitivity=sens)
    assert _eps(Laplace(b, sens), k, "rdp", delta) <= target
    assert b <= k * sens / target * (1 + 1e-11)


@pytest.mark.parametrize("kwargs, name", [
    (dict(target_epsilon=0.0, delta=1e-5), "target_epsilon"),
    (dict(target_epsilon=-1.0, delta=1e-5), "target_epsilon"),
    (dict(target_epsilon=math.nan, delta=1e-5), "target_epsilon"),
    (dict(target_epsilon=1.0, delta=0.0), "delta"),
    (dict(target_epsilon=1.0), "delta"),
    (dict(target_epsilon=1.0, delta=1e-5, sample_rate=0.0), "sample_rate"),
    (dict(target_epsilon=1.0, delta=1e-5, sample_rate=1.5), "sample_rate"),
    (dict(target_epsilon=1.0, delta=1e-5, steps=0), "steps"),
    (dict(target_epsilon=1.0, delta=1e-5, accountant="gdp"), "accountant"),
    (dict(target_epsilon=1.0, delta=1e-5, rtol=0.0), "rtol"),
])
def test_bad_inputs_name_the_argument(kwargs, name):
    for fn in (calibrate_laplace, calibrate_discrete_laplace):
        with pytest.raises(ValueError, match=name):
            fn(**kwargs)


def test_bad_sensitivity_names_it():
    with pytest.raises(ValueError, match="sensitivity"):
        calibrate_laplace(1.0, 1e-5, sensitivity=-1.0)
    for bad in (1.5, 0, -2):
        with pytest.raises(ValueError, match="sensitivity"):
            calibrate_discrete_laplace(1.0, 1e-5, sensitivity=bad)


def test_unattainable_target_is_a_value_error():
    # steps beyond the float range: no finite scale meets the target
    with pytest.raises(ValueError, match="no Laplace scale"):
        calibrate_laplace(1.0, 1e-5, steps=10**400)
    with pytest.raises(ValueError, match="no discrete Laplace scale"):
        calibrate_discrete_laplace(1.0, accountant="pure", steps=10**400)
