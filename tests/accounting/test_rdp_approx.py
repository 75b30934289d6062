"""(epsilon, delta) steps in the RDP accountant, composed exactly (issue 27, item 4).

The delta part of k (eps_i, delta_i) steps is an event of probability d0 = 1 - prod(1 - delta_i)
under both neighbours; composed with the rest it gives delta(eps) = 1 - (1 - d0)(1 - d'(eps)),
the exact composition with the (0, d0) pair (the curve the PLD accountant, and dp_accounting's
``from_privacy_parameters``, give that pair), never looser than charging d' + sum delta_i.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit import ApproxDP, ExactAccountant, Gaussian, PLDAccountant, PureDP, RDPAccountant


def test_gaussian_then_an_epsilon_delta_step():
    acc = RDPAccountant().compose(Gaussian(1.0)).compose(ApproxDP(0.0, 0.01))
    eps = acc.epsilon(0.02)
    alone = RDPAccountant().compose(Gaussian(1.0))
    assert eps == pytest.approx(alone.epsilon(1.0 - 0.98 / 0.99), rel=1e-12)
    assert round(eps, 4) == 2.7493 and eps < 2.7531  # 2.7531: the extra delta charged additively (b3a8540)
    for e in (0.5, 1.0, 2.7, 5.0):
        d = alone.delta(e)
        assert acc.delta(e) == pytest.approx(d + 0.01 - 0.01 * d, rel=1e-12)
    assert acc.delta(eps) <= 0.02 * (1 + 1e-12)


def test_deltas_combine_as_independent_bad_events():
    acc = RDPAccountant().compose(ApproxDP(0.5, 1e-3), 40).compose(ApproxDP(0.0, 0.02), 3)
    d0 = 1.0 - (1.0 - 1e-3) ** 40 * (1.0 - 0.02) ** 3
    assert acc.approx_delta == pytest.approx(d0, rel=1e-12) and acc.approx_delta >= d0
    assert acc.epsilon(d0 * 0.999) == math.inf and math.isfinite(acc.epsilon(d0 * 1.001))
    assert acc.delta(1e6) == pytest.approx(d0, rel=1e-12)


@settings(max_examples=25, deadline=None)
@given(sigma=st.floats(0.5, 5.0), k=st.integers(1, 20), eps0=st.floats(0.0, 1.0), d0=st.floats(1e-9, 1e-3),
       m=st.integers(1, 5), delta=st.floats(1e-6, 0.2))
def test_never_looser_than_additive_and_never_below_the_truth(sigma, k, eps0, d0, m, delta):
    acc = RDPAccountant().compose(Gaussian(sigma), k).compose(ApproxDP(eps0, d0), m)
    eps = acc.epsilon(delta)
    # additive charging (b3a8540): the RDP conversion at delta - m d0
    rest = delta - m * d0
    curve = RDPAccountant().compose(Gaussian(sigma), k).compose(PureDP(eps0), m) if eps0 > 0 else \
        RDPAccountant().compose(Gaussian(sigma), k)
    additive = curve.epsilon(rest) if rest > 0 else math.inf
    assert eps <= additive
    # an upper bound: at least the lower end of the PLD interval of the same composition
    if math.isfinite(eps):
        lo, _ = PLDAccountant().compose(Gaussian(sigma), k).compose(ApproxDP(eps0, d0), m).epsilon_interval(delta)
        assert eps >= lo * (1 - 1e-9)


def test_zero_epsilon_delta_step_matches_the_exact_composition_and_dp_accounting():
    """With a Gaussian, the (0, d0) step's exact composition is 1 - (1 - d0)(1 - delta_G): the RDP
    accountant applies the same rule to its own Gaussian bound; dp_accounting's PLD of the pair
    (``from_privacy_parameters``) composed with its Gaussian PLD gives the exact curve too."""
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    from dp_accounting import dp_event  # noqa: F401 - (the package is there)
    from dp_accounting.pld import common

    d0, sigma = 0.01, 1.0
    exact = ExactAccountant().compose(Gaussian(sigma)).compose(ApproxDP(0.0, d0))
    theirs = pld.from_gaussian_mechanism(sigma, value_discretization_interval=1e-4).compose(
        pld.from_privacy_parameters(common.DifferentialPrivacyParameters(0.0, d0), value_discretization_interval=1e-4))
    rdp = RDPAccountant().compose(Gaussian(sigma)).compose(ApproxDP(0.0, d0))
    gauss_rdp = RDPAccountant().compose(Gaussian(sigma))
    for e in (0.5, 1.0, 2.0, 3.0):
        g = ExactAccountant().compose(Gaussian(sigma)).delta(e)
        assert exact.delta(e) == pytest.approx(1 - (1 - d0) * (1 - g), rel=1e-12)
        assert theirs.get_delta_for_epsilon(e) == pytest.approx(exact.delta(e), rel=1e-3)
        assert rdp.delta(e) == pytest.approx(1 - (1 - d0) * (1 - gauss_rdp.delta(e)), rel=1e-12)
        assert rdp.delta(e) >= exact.delta(e)
