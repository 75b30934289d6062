"""The RDP-curve -> (epsilon, delta) conversion has one home, beside the other RDP conversions
(dpaudit.accounting.conversions.epsilon_from_rdp_curve); bounds/rgm.py and bounds/langevin.py use
it (issue 16)."""

import math
import pathlib

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpaudit
from dpaudit.accounting import conversions
from dpaudit.bounds import langevin, rgm


def test_one_home():
    assert rgm.epsilon_from_rdp_curve is conversions.epsilon_from_rdp_curve
    assert langevin.epsilon_from_rdp_curve is conversions.epsilon_from_rdp_curve
    assert rgm.CONVERSIONS == conversions.RDP_CURVE_CONVERSIONS
    root = pathlib.Path(dpaudit.__file__).parent
    for path in (root / "bounds").glob("*.py"):
        text = path.read_text()
        assert "def epsilon_from_rdp_curve" not in text and "minimize_scalar" not in text, path


@pytest.mark.parametrize("bad", [0.0, 1.0, -1e-3, math.nan])
def test_delta_is_validated(bad):
    with pytest.raises(ValueError, match="delta"):
        conversions.epsilon_from_rdp_curve(lambda a: 0.1 * a, bad)


def test_conversion_is_validated():
    with pytest.raises(ValueError, match="conversion"):
        conversions.epsilon_from_rdp_curve(lambda a: 0.1 * a, 1e-5, conversion="bogus")


def _mp_balle(rho, delta, a):
    """The Balle et al. 2020 Thm. 21 conversion of (a, rho*a)-RDP, in 40-digit mpmath."""
    with mp.workdps(40):
        a, rho, delta = mp.mpf(a), mp.mpf(rho), mp.mpf(delta)
        return rho * a + mp.log((a - 1) / a) - (mp.log(delta) + mp.log(a)) / (a - 1)


@settings(max_examples=40, deadline=None)
@given(st.floats(1e-3, 10.0), st.sampled_from([1e-10, 1e-5, 1e-3]), st.floats(1.5, 50.0))
def test_valid_and_tight(rho, delta, max_order):
    eps, order = conversions.epsilon_from_rdp_curve(lambda a: rho * np.asarray(a), delta, max_order=max_order)
    assert 1.0 < order < max_order
    # an upper bound: never below the exact conversion at the order it reports ...
    assert mp.mpf(eps) >= _mp_balle(rho, delta, order)
    # ... and as tight as the closed-form minimiser over (1, max_order] of the same conversion
    best = conversions.tcdp_to_dp(rho, max_order, delta, method="cks")
    assert eps <= best * (1 + 1e-9) + 1e-12
