"""Matrix-factorization strategies, their sensitivity under participation schemas, and the mechanism."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit import PLDAccountant, RDPAccountant
from dpaudit.conversions import gaussian_epsilon
from dpaudit.mechanisms.matrix_factorization import MatrixFactorization
from dpaudit.mechanisms.mf_participation import Participation, max_participation_sum
from dpaudit.mechanisms.mf_participation import mf_sensitivity as sensitivity
from dpaudit.mechanisms.mf_strategies import (
    BandedToeplitz,
    BLTStrategy,
    DenseStrategy,
    IdentityStrategy,
    PrefixSumStrategy,
    blt_coefficients,
    geometric_bands,
)

SCHEMAS = [Participation.single(), Participation.fixed_epoch(2), Participation.fixed_epoch(3),
           Participation.min_sep(1, 3), Participation.min_sep(2), Participation.min_sep(4, 2)]


def _brute(C, part):
    """max over the schema's patterns of sum |X_pi| (enumeration)."""
    X = np.abs(C.T @ C)
    n = C.shape[1]
    if part.kind == "single":
        pats = [(j,) for j in range(n)]
    elif part.kind == "fixed_epoch":
        b = n // part.epochs
        pats = [tuple(i + m * b for m in range(part.epochs)) for i in range(b)]
    else:
        pats = [p for r in range(1, part.count(n) + 1) for p in itertools.combinations(range(n), r)
                if all(p[i + 1] - p[i] >= part.separation for i in range(r - 1))]
    return max(float(X[np.ix_(p, p)].sum()) for p in pats) ** 0.5


def _strategies(n):
    rng = np.random.default_rng(n)
    return [IdentityStrategy(n), PrefixSumStrategy(n), geometric_bands(3, n),
            BandedToeplitz((1.0, -0.4, 0.3), n), BLTStrategy((0.9, 0.4), (0.3, 0.2), n),
            DenseStrategy(np.tril(rng.uniform(0, 1, (n, n))) + np.eye(n)),
            DenseStrategy(np.tril(rng.normal(0, 1, (n, n))) + 4 * np.eye(n))]


@pytest.mark.parametrize("part", SCHEMAS, ids=lambda p: p.describe())
def test_sensitivity_equals_enumeration_on_small_cases(part):
    for s in _strategies(6):
        res = sensitivity(s, part)
        bf = _brute(s.matrix(), part)
        assert res.value >= bf * (1 - 1e-15) or not res.exact
        if res.exact:
            assert res.value == pytest.approx(bf, rel=1e-12)
            assert res.attained == pytest.approx(bf, rel=1e-12)
        assert res.value >= res.attained


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=7), st.integers(min_value=0, max_value=2 ** 31),
       st.sampled_from(SCHEMAS[:1] + SCHEMAS[3:]))
def test_sensitivity_is_never_below_enumeration(n, seed, part):
    rng = np.random.default_rng(seed)
    C = np.tril(rng.normal(0, 1, (n, n))) + 3 * np.eye(n)
    res = sensitivity(DenseStrategy(C), part)
    assert res.value >= _brute(C, part) * (1 - 1e-14)


def test_toeplitz_and_dense_paths_agree():
    n = 24
    for s in [geometric_bands(5, n), BLTStrategy((0.95, 0.6, 0.1), (0.2, 0.15, 0.1), n), PrefixSumStrategy(n)]:
        for part in [Participation.single(), Participation.fixed_epoch(4), Participation.min_sep(3),
                     Participation.min_sep(5, 3), Participation.min_sep(8)]:
            fast = sensitivity(s, part)
            dense = sensitivity(s.matrix(), part)
            assert fast.exact
            assert fast.value <= dense.value * (1 + 1e-12)  # the general path is an upper bound
            assert fast.value == pytest.approx(dense.attained, rel=1e-12) or fast.value > dense.attained
            if dense.exact:
                assert fast.value == pytest.approx(dense.value, rel=1e-12)


def test_participation_programme_and_counts():
    x = np.array([5.0, 1.0, 1.0, 4.0, 0.0, 3.0])
    assert max_participation_sum(x, 2, 3) == 12.0  # 5 + 4 + 3
    assert max_participation_sum(x, 3, 2) == 9.0
    assert Participation.min_sep(3).count(10) == 4
    assert Participation.min_sep(3, 2).count(10) == 2
    assert Participation.fixed_epoch(4).count(8) == 4
    with pytest.raises(ValueError, match="epochs"):
        Participation.fixed_epoch(3).check(8)
    with pytest.raises(ValueError, match="kind"):
        Participation("every")


def _jax_sensitivity():
    jax = pytest.importorskip("jax")
    pytest.importorskip("jax_privacy")
    jax.config.update("jax_enable_x64", True)
    from jax_privacy.matrix_factorization import sensitivity as js
    from jax_privacy.matrix_factorization import toeplitz as jt
    return js, jt


def test_jax_privacy_sensitivity_agrees_to_1e9():
    js, jt = _jax_sensitivity()
    rng = np.random.default_rng(3)
    n = 48
    C = np.tril(rng.uniform(0, 1, (n, n)))
    assert sensitivity(C).value == pytest.approx(float(js.single_participation_sensitivity(C)), rel=1e-9)
    assert sensitivity(C, Participation.fixed_epoch(4)).value == pytest.approx(
        float(js.fixed_epoch_sensitivity(C, 4)), rel=1e-9)
    ours = sensitivity(C, Participation.min_sep(6, 3)).value
    assert ours == pytest.approx(float(js.get_min_sep_sensitivity_upper_bound(C, 6, 3)), rel=1e-9)
    coefs = np.asarray(jt.optimal_max_error_strategy_coefs(n))
    full = BandedToeplitz(tuple(coefs), n, normalize=False)
    ours = sensitivity(full, Participation.min_sep(5, 7)).value ** 2
    assert ours == pytest.approx(float(jt.minsep_sensitivity_squared(coefs, 5, 7, n=n)), rel=1e-9)


@pytest.mark.slow
def test_jax_privacy_sensitivity_agrees_to_1e9_more_cases():
    js, jt = _jax_sensitivity()
    rng = np.random.default_rng(4)
    for n in (30, 64):
        for C in (np.tril(rng.uniform(0, 1, (n, n))), np.tril(rng.normal(0, 1, (n, n))) + 3 * np.eye(n)):
            for sep, k in [(6, None), (1, 5), (n // 4, 2)]:
                ours = sensitivity(C, Participation.min_sep(sep, k)).value
                assert ours == pytest.approx(float(js.get_min_sep_sensitivity_upper_bound(C, sep, k)), rel=1e-9)
            for epochs in (2, n // 2):
                assert sensitivity(C, Participation.fixed_epoch(epochs)).value == pytest.approx(
                    float(js.fixed_epoch_sensitivity(C, epochs)), rel=1e-9)
        coefs = np.asarray(jt.optimal_max_error_strategy_coefs(n))
        band = BandedToeplitz(tuple(coefs[:8]), n)
        for sep in (8, 10):
            assert sensitivity(band, Participation.min_sep(sep)).value == pytest.approx(
                float(js.get_sensitivity_banded(band.matrix(), sep)), rel=1e-9)
        full = BandedToeplitz(tuple(coefs), n, normalize=False)
        for sep, k in [(4, None), (12, 2), (1, 3)]:
            ours = sensitivity(full, Participation.min_sep(sep, k)).value ** 2
            assert ours == pytest.approx(float(jt.minsep_sensitivity_squared(coefs, sep, k, n=n)), rel=1e-9)


def test_noise_streams_equal_the_triangular_solve():
    n = 30
    for s in _strategies(n):
        z = np.random.default_rng(1).normal(0, 2.0, (n, 3, 2))
        stream = s.noise_stream((3, 2), 2.0, np.random.default_rng(1))
        got = np.stack([stream.next() for _ in range(n)])
        np.testing.assert_allclose(got, s.solve(z), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(s.multiply(s.solve(z)), z, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(s.multiply(np.eye(n)), s.matrix(), atol=1e-14)


def test_stream_memory_is_bounded_by_the_structure():
    n = 200
    assert BLTStrategy((0.9, 0.5, 0.1), (0.1, 0.1, 0.1), n).noise_stream((4,), 1.0, np.random.default_rng(0)).memory == 3
    band = geometric_bands(7, n).noise_stream((4,), 1.0, np.random.default_rng(0))
    for _ in range(n):
        band.next()
    assert band.memory == 6
    assert IdentityStrategy(n).noise_stream((4,), 1.0, np.random.default_rng(0)).memory == 0


def test_blt_coefficients_and_inverse():
    s = BLTStrategy((0.9, 0.5), (0.3, 0.2), 40)
    c = s.toeplitz()
    assert c[0] == 1.0 and c[1] == pytest.approx(0.5) and c[3] == pytest.approx(0.3 * 0.81 + 0.2 * 0.25)
    theta, omega = s.inverse()
    inv = blt_coefficients(theta, omega, 40)
    np.testing.assert_allclose(s.matrix() @ np.tril(np.array([[inv[i - j] if i >= j else 0 for j in range(40)]
                                                               for i in range(40)])), np.eye(40), atol=1e-12)
    np.testing.assert_allclose(s.solve(np.eye(40))[:, 0], inv, atol=1e-12)


def test_strategy_validation():
    with pytest.raises(ValueError, match="lower-triangular"):
        DenseStrategy(np.ones((3, 3)))
    with pytest.raises(ValueError, match="diagonal"):
        DenseStrategy(np.tril(np.ones((3, 3))) - np.eye(3))
    with pytest.raises(ValueError, match="coefs"):
        BandedToeplitz((0.0, 1.0), 5)
    with pytest.raises(ValueError, match="buf_decay"):
        BLTStrategy((1.2,), (0.1,), 5)
    with pytest.raises(ValueError, match="steps"):
        IdentityStrategy(0)
    with pytest.raises(ValueError, match="strategy"):
        MatrixFactorization(np.eye(3), 1.0)
    with pytest.raises(ValueError, match="sigma"):
        MatrixFactorization(IdentityStrategy(3), 0.0)


@pytest.mark.parametrize("strategy", _strategies(12), ids=lambda s: s.kind)
def test_mechanism_is_the_gaussian_at_the_strategy_sensitivity(strategy):
    part = Participation.fixed_epoch(3)
    m = MatrixFactorization(strategy, 3.0, part, sensitivity=0.5)
    sens = sensitivity(strategy, part).value * 0.5
    assert m.mu == pytest.approx(sens / 3.0, rel=1e-14)
    eps = PLDAccountant().compose(m).epsilon(1e-5)
    if m.strategy_sensitivity.exact:
        assert eps == pytest.approx(gaussian_epsilon(3.0, 1e-5, sens), rel=1e-9)
    else:
        assert eps >= gaussian_epsilon(3.0, 1e-5, sens) * (1 - 1e-9)
    orders = np.array([2.0, 8.0, 64.0])
    np.testing.assert_allclose(m.rdp(orders), orders * (sens / 3.0) ** 2 / 2, rtol=1e-12)
    assert RDPAccountant().compose(m).epsilon(1e-5) >= eps
    assert m.zcdp() == pytest.approx((sens / 3.0) ** 2 / 2, rel=1e-12)


def test_release_test_separates_the_pattern_by_mu():
    n = 16
    m = MatrixFactorization(geometric_bands(6, n), 2.0, Participation.min_sep(3))
    x, xp, llr = m.release_test()
    rng = np.random.default_rng(5)
    a = llr(m.sample(x, rng, size=4000))
    b = llr(m.sample(xp, rng, size=4000))
    gap = (b.mean() - a.mean()) / a.std()
    assert gap == pytest.approx(m.mu, rel=0.08)
    assert not m.strategy_sensitivity.exact or m.strategy_sensitivity.attained == pytest.approx(
        m.strategy_sensitivity.value, rel=1e-12)


def test_sample_shapes_and_prefix_sums():
    n = 10
    m = MatrixFactorization(IdentityStrategy(n), 1e-9, Participation.single())
    x = np.arange(n * 2, dtype=float).reshape(n, 2)
    out = m.sample(x, np.random.default_rng(0), size=3)
    assert out.shape == (3, n, 2)
    np.testing.assert_allclose(out[0], np.cumsum(x, axis=0), atol=1e-6)
    assert math.isfinite(m.describe().count("sens"))


def test_a_strategy_that_is_not_toeplitz_must_define_its_operations():
    """A user's strategy with neither a Toeplitz column nor its own matrix() gets an error that says what to define
    (not a bare NotImplementedError); the bases that each strategy / sampler / answer completes are abstract."""
    from dataclasses import dataclass

    from dpaudit.accounting.monte_carlo import LossSampler, MonteCarloDelta
    from dpaudit.mechanisms.mf_strategies import NoiseStream, Strategy

    @dataclass(frozen=True)
    class Mine(Strategy):
        steps: int = 4

    with pytest.raises(TypeError, match="defines matrix\\(\\), multiply\\(\\)"):
        Mine().matrix()
    with pytest.raises(TypeError, match="not Toeplitz"):
        Mine().multiply(np.ones(4))
    for base in (NoiseStream, LossSampler):
        assert getattr(base, "__abstractmethods__", None), base
    assert "statement" not in MonteCarloDelta.__abstractmethods__
