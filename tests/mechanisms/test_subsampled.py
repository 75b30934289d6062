"""PoissonSampled / SampledWithoutReplacement (dpaudit/mechanisms/subsampled.py), behaviour; the kernels are in
tests/mechanisms/test_subsampled_rdp.py."""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.mechanisms.gaussian import Gaussian
from dpaudit.mechanisms.laplace import Laplace
from dpaudit.mechanisms.pure import PureDP
from dpaudit.mechanisms.subsampled import PoissonSampled, SampledWithoutReplacement

mp.mp.dps = 40


@given(st.floats(1e-3, 5.0), st.floats(1e-3, 1.0), st.floats(1.0 + 1e-3, 200.0))
def test_poisson_subsampled_below_base_and_increasing_in_q(eps, q, a):
    base = Laplace(1.0 / eps)
    r_q = PoissonSampled(base, q).rdp([a])[0]
    r_half = PoissonSampled(base, q / 2).rdp([a])[0]
    assert r_q <= base.rdp([a])[0]
    assert r_half <= r_q * (1 + 1e-12)


@pytest.mark.parametrize("bad", [-0.1, 1.1, math.nan, math.inf])
def test_bad_q(bad):
    with pytest.raises(ValueError, match="q"):
        PoissonSampled(Gaussian(1.0), bad)
    with pytest.raises(ValueError, match="q"):
        SampledWithoutReplacement(Gaussian(1.0, neighbouring="replace_one"), bad)


def test_neighbouring_relation_of_base_is_checked():
    with pytest.raises(ValueError, match="add_remove"):
        PoissonSampled(Gaussian(1.0, neighbouring="replace_one"), 0.1)
    with pytest.raises(ValueError, match="replace_one"):
        SampledWithoutReplacement(Gaussian(1.0), 0.1)
    with pytest.raises(ValueError, match="mechanism"):
        PoissonSampled("gaussian", 0.1)
    assert PoissonSampled(Gaussian(1.0), 0.1).neighbouring == "add_remove"
    assert SampledWithoutReplacement(Laplace(1.0, neighbouring="replace_one"), 0.1).neighbouring == "replace_one"


# ----------------------------------------------------------------------------- subsampled misc
def test_subsampled_special_q():
    for base, cls in ((Gaussian(1.3), PoissonSampled), (Laplace(0.5), PoissonSampled),
                      (Gaussian(1.3, neighbouring="replace_one"), SampledWithoutReplacement)):
        o = [1.5, 2.0, 17.0]
        assert np.all(cls(base, 0.0).rdp(o) == 0.0)
        np.testing.assert_array_equal(cls(base, 1.0).rdp(o), base.rdp(o))


def test_subsampled_zcdp_tcdp_pure():
    g = Gaussian(2.0)
    assert PoissonSampled(g, 0.3).zcdp() == g.zcdp()
    assert PoissonSampled(g, 0.3).tcdp() == (g.zcdp(), math.inf)
    assert PoissonSampled(g, 0.3).pure_epsilon() == math.inf
    eps = PoissonSampled(PureDP(2.0), 0.1).pure_epsilon()
    assert eps == pytest.approx(math.log1p(0.1 * math.expm1(2.0)), rel=1e-14)
    assert eps >= math.log1p(0.1 * math.expm1(2.0))
    # the rdp at alpha = inf equals the amplified pure epsilon for a pure-DP base
    assert PoissonSampled(PureDP(2.0), 0.1).rdp([math.inf])[0] == pytest.approx(eps, rel=1e-14)
    assert PoissonSampled(Gaussian(1.0), 0.1).rdp([math.inf])[0] == math.inf


def test_wor_tcdp_uses_amplification_or_falls_back():
    g = Gaussian(1.0 / math.sqrt(2 * 0.05), neighbouring="replace_one")  # rho = 0.05
    rho, omega = SampledWithoutReplacement(g, 0.01).tcdp()
    try:
        from dpaudit.mechanisms._tcdp_amplification import subsampled_tcdp
    except ImportError:
        assert (rho, omega) == g.tcdp()
    else:
        res = subsampled_tcdp(g.zcdp(), math.inf, 0.01)
        assert (rho, omega) == (g.tcdp() if res is None else tuple(map(float, res)))
    assert rho <= g.zcdp()


def test_poisson_pure_rdp_exact_for_randomized_response():
    # subsampled RR: exact two-point divergence (both directions) computed with mpmath
    eps, q = 1.3, 0.2
    p = 1 / (1 + mp.exp(-mp.mpf(eps)))
    P = [q * p + (1 - q) * (1 - p), q * (1 - p) + (1 - q) * p]
    Q = [1 - p, p]
    for a in (1.5, 2.0, 9.0, 40.0):
        a_ = mp.mpf(a)
        add = mp.log(sum(x**a_ * y ** (1 - a_) for x, y in zip(P, Q))) / (a_ - 1)
        rem = mp.log(sum(y**a_ * x ** (1 - a_) for x, y in zip(P, Q))) / (a_ - 1)
        got = PoissonSampled(PureDP(eps), q).rdp([a])[0]
        assert got == pytest.approx(float(max(add, rem)), rel=1e-12)
        assert got >= float(max(add, rem))


def test_poisson_sampler_mixture():
    rng = np.random.default_rng(4)
    m = PoissonSampled(Gaussian(0.1), 0.3)
    x = m.sample(np.array([5.0, 5.0]), rng, size=20_000)
    assert x.shape == (20_000, 2)
    sampled = x[:, 0] > 2.5
    assert abs(sampled.mean() - 0.3) < 0.02
    # the whole output vector comes from the same branch
    assert np.all(sampled == (x[:, 1] > 2.5))
    assert PoissonSampled(Gaussian(1.0), 0.5).sample(1.0, rng).shape == ()
