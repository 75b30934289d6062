"""The exact rational-scale discrete Laplace sampler (dpaudit/mechanisms/discrete_gaussian.py,
sample_discrete_laplace) and its use by DiscreteLaplace: only integer draws from the generator,
the exact pmf for rational and float scales (chi-square against mpmath), validation."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from dpaudit import DiscreteLaplace
from dpaudit.mechanisms import DiscreteGaussian
from dpaudit.mechanisms.discrete_gaussian import MAX_SCALE_NUMERATOR, sample_discrete_laplace


class _IntegerOnlyGenerator:
    """A numpy Generator that allows ``integers`` only (any float draw fails the test)."""

    def __init__(self, seed):
        self._rng = np.random.default_rng(seed)
        self.calls = 0

    def integers(self, *args, **kwargs):
        self.calls += 1
        return self._rng.integers(*args, **kwargs)

    def __getattr__(self, name):
        raise AssertionError(f"the sampler drew from rng.{name}: not integer arithmetic")


@pytest.mark.parametrize("scale", [0.1, 1.3, 2.0, 1e-3, 37.25, 2.0 ** 40])
def test_discrete_laplace_sampler_uses_integer_draws_only(scale):
    # regression: the sampler used numpy's float-parameter rng.geometric(1 - e^{-1/t})
    rng = _IntegerOnlyGenerator(1)
    out = DiscreteLaplace(scale, 2).sample(np.array([3, -7]), rng, 50)
    assert out.dtype == np.int64 and out.shape == (50, 2) and rng.calls > 0


def test_discrete_gaussian_sampler_uses_integer_draws_only():
    rng = _IntegerOnlyGenerator(2)
    assert DiscreteGaussian(1.7).sample(0, rng, 100).dtype == np.int64


def _pmf_mp(scale: Fraction, z: int):
    t = mp.mpf(scale.numerator) / scale.denominator
    return mp.tanh(1 / (2 * t)) * mp.e ** (-abs(z) / t)


@pytest.mark.parametrize("scale", [Fraction(7, 3), Fraction(1, 10), Fraction(0.1), Fraction(13, 10), Fraction(149, 4),
                                   Fraction(5, 1)])
def test_sampler_has_the_exact_pmf(scale):
    mp.mp.dps = 30
    rng = np.random.default_rng(11)
    z = sample_discrete_laplace(scale, 200_000, rng)
    vals = np.arange(-8, 9)
    p = np.array([float(_pmf_mp(scale, int(v))) for v in vals])
    counts = np.array([np.sum(z == v) for v in vals])
    obs = np.append(counts, z.size - counts.sum())
    exp = np.append(p, max(1.0 - p.sum(), 0.0)) * z.size
    keep = exp > 5
    rest = obs[~keep].sum()
    obs_k, exp_k = np.append(obs[keep], rest), np.append(exp[keep], exp[~keep].sum())
    if exp_k[-1] <= 5:
        obs_k, exp_k = obs_k[:-1], exp_k[:-1]
        exp_k = exp_k * obs_k.sum() / exp_k.sum()
    assert stats.chisquare(obs_k, exp_k).pvalue > 1e-4


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(num=st.integers(1, 50), den=st.integers(1, 50), seed=st.integers(0, 2 ** 32 - 1))
def test_property_mass_at_zero_and_symmetry(num, den, seed):
    scale = Fraction(num, den)
    z = sample_discrete_laplace(scale, 20_000, np.random.default_rng(seed))
    p0 = math.tanh(den / (2 * num))  # P(Z = 0) = tanh(1/(2t))
    se = math.sqrt(p0 * (1 - p0) / z.size) + 1e-12
    assert abs(np.mean(z == 0) - p0) < 6 * se
    pos, neg = np.sum(z > 0), np.sum(z < 0)
    assert abs(pos - neg) < 6 * math.sqrt(pos + neg + 1)


def test_tiny_scale_is_all_zeros_and_the_mechanism_keeps_its_accounting():
    assert np.all(sample_discrete_laplace(1e-30, 1000, np.random.default_rng(0)) == 0)
    m = DiscreteLaplace(0.1)
    assert m.epsilon == 10.0  # the float 0.1 is both the sampler's exact scale and the accounted one


@pytest.mark.parametrize("scale", [0, -1.0, math.nan, math.inf, True, "a", Fraction(MAX_SCALE_NUMERATOR + 1, 2)])
def test_sampler_validation_names_the_scale(scale):
    with pytest.raises(ValueError, match="scale"):
        sample_discrete_laplace(scale, 3, np.random.default_rng(0))
