"""ApproxDP (dpaudit/mechanisms/approx.py): an (epsilon, delta) statement without RDP or zCDP, amplified by Poisson
sampling as a pair."""

import math

import mpmath as mp
import numpy as np
import pytest

from dpaudit.mechanisms.approx import ApproxDP
from dpaudit.mechanisms.gaussian import Gaussian
from dpaudit.mechanisms.pure import PureDP
from dpaudit.mechanisms.subsampled import PoissonSampled

mp.mp.dps = 40


@pytest.mark.parametrize("bad", [-1e-3, 1.0, 2.0, math.nan])
def test_bad_delta(bad):
    with pytest.raises(ValueError, match="delta"):
        ApproxDP(1.0, bad)


# ----------------------------------------------------------------------------- ApproxDP
def test_approx_dp_has_no_rdp_or_zcdp():
    m = ApproxDP(1.0, 1e-6)
    assert np.all(np.isinf(m.rdp([1.5, 2, 100])))
    assert m.zcdp() == math.inf and m.pure_epsilon() == math.inf
    assert m.approx_dp() == (1.0, 1e-6)
    with pytest.raises(TypeError):
        m.sample(0.0, np.random.default_rng(0))
    pure = ApproxDP(0.8, 0.0)
    np.testing.assert_allclose(pure.rdp([3.0]), PureDP(0.8).rdp([3.0]))
    assert pure.pure_epsilon() == 0.8


def test_poisson_of_approx_dp_amplifies_pair():
    eps, delta = PoissonSampled(ApproxDP(1.0, 1e-5), 0.1).approx_dp()
    assert eps == pytest.approx(math.log1p(0.1 * math.expm1(1.0)), rel=1e-14)
    assert delta == pytest.approx(1e-6, rel=1e-14)
    assert PoissonSampled(Gaussian(1.0), 0.1).approx_dp() is None
