"""Strategy error on the prefix sums and optimised banded-Toeplitz / BLT strategies."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import approx_fprime

from dpaudit.mechanisms.mf_optimize import (
    _banded_loss,
    _blt_loss,
    optimize_banded_toeplitz,
    optimize_blt,
    per_query_error,
    strategy_error,
    tree_error,
    tree_node_matrix,
)
from dpaudit.mechanisms.mf_participation import Participation, mf_sensitivity
from dpaudit.mechanisms.mf_strategies import (
    BandedToeplitz,
    BLTStrategy,
    DenseStrategy,
    IdentityStrategy,
    PrefixSumStrategy,
    geometric_bands,
)
from dpaudit.mechanisms.tree_aggregation import prefix_noise_matrix

#: jax_privacy 2.0 (jax 0.10.2, x64), toeplitz.optimize_banded_toeplitz(256, 8) then toeplitz.loss(coef, 256):
#: the mean-error loss of its optimum (reproduced by test_jax_privacy_optimizers_agree, slow)
JAX_BANDED_256_8_MEAN = 20.681211081439287
#: buffered_toeplitz.optimize(n=256, error="mean", min_buffers=4, max_buffers=4), loss sens^2 * mean error
JAX_BLT_256_4_MEAN = 6.84966107202336
#: the same with n=128, 3 buffers
JAX_BLT_128_3_MEAN = 5.7499184083693144
#: the same with min_sep=500 (as many participations as fit) on n = 2000
JAX_BLT_2000_MINSEP500_MEAN = 50.334320576438905


@pytest.mark.parametrize("k, sep", [(1, 40), (4, 10), (8, 5), (20, 2)])
def test_loss_gradients_match_finite_differences(k, sep):
    n = 40
    rng = np.random.default_rng(k)
    w = (n - np.arange(n)) / n
    c = np.sort(rng.uniform(0.2, 1.0, 6))[::-1]
    g = _banded_loss(c, n, w, k, sep)[1]
    fd = approx_fprime(c, lambda v: _banded_loss(v, n, w, k, sep)[0], 1e-7)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-5 * np.max(np.abs(g)))
    x = np.concatenate([rng.normal(1.0, 1.0, 3), rng.normal(-1.0, 0.5, 3)])
    g = _blt_loss(x, 3, n, w, k, sep)[1]
    fd = approx_fprime(x, lambda v: _blt_loss(v, 3, n, w, k, sep)[0], 1e-7)
    np.testing.assert_allclose(g, fd, rtol=1e-4, atol=1e-5 * np.max(np.abs(g)))


def test_per_query_error_matches_dense_b():
    n = 20
    rng = np.random.default_rng(2)
    for s in [geometric_bands(4, n), BLTStrategy((0.9, 0.3), (0.4, 0.1), n),
              DenseStrategy(np.tril(rng.uniform(0, 1, (n, n))) + np.eye(n)), IdentityStrategy(n), PrefixSumStrategy(n)]:
        B = np.tril(np.ones((n, n))) @ np.linalg.inv(s.matrix())
        np.testing.assert_allclose(per_query_error(s), np.sum(B * B, axis=1), rtol=1e-10)
    assert strategy_error(IdentityStrategy(n)).mean == pytest.approx((n + 1) / 2)
    assert strategy_error(PrefixSumStrategy(n)).max == pytest.approx(n)  # sens^2 = n, ||B_t|| = 1


def test_loss_is_sensitivity_squared_times_error():
    n, part = 60, Participation.fixed_epoch(6)
    s = BandedToeplitz((1.0, 0.6, 0.3, 0.1), n)
    e = strategy_error(s, part)
    loss = _banded_loss(np.asarray(s.coefs), n, (n - np.arange(n)) / n, 6, 10)[0]
    assert loss == pytest.approx(e.mean, rel=1e-12)
    assert e.sensitivity == pytest.approx(mf_sensitivity(s, part).value)


def test_tree_is_the_node_factorisation():
    n = 16
    C = tree_node_matrix(n)
    B = prefix_noise_matrix(n)
    np.testing.assert_array_equal(B @ C, np.tril(np.ones((n, n))))
    single = tree_error(n)
    assert single.sensitivity == pytest.approx(np.sqrt(5)) and single.max == pytest.approx(5 * 4)
    multi = tree_error(n, Participation.fixed_epoch(4))
    assert multi.sensitivity == pytest.approx(mf_sensitivity(C, Participation.fixed_epoch(4)).value)
    assert multi.sensitivity > 2 * single.sensitivity * 0.99


def test_optimised_banded_toeplitz_matches_jax_privacy_reference():
    res = optimize_banded_toeplitz(256, 8)
    assert res.loss == pytest.approx(JAX_BANDED_256_8_MEAN, rel=1e-7)
    start = _banded_loss(np.asarray(geometric_bands(8, 256).coefs), 256, (256 - np.arange(256)) / 256, 1, 256)[0]
    assert res.loss < start
    assert np.linalg.norm(res.strategy.coefs) == pytest.approx(1.0)


def test_monotone_banded_parameterisation_when_bands_exceed_the_separation():
    part = Participation.min_sep(4)
    res = optimize_banded_toeplitz(64, 8, part, max_iter=200)
    c = np.asarray(res.strategy.coefs)
    assert np.all(c >= 0) and np.all(np.diff(c) <= 1e-15)
    sens = mf_sensitivity(res.strategy, part)
    assert sens.exact
    assert res.loss == pytest.approx(strategy_error(res.strategy, part).mean, rel=1e-9)


def test_optimised_blt_matches_jax_privacy_reference():
    res = optimize_blt(128, 3, restarts=1)
    assert res.loss == pytest.approx(JAX_BLT_128_3_MEAN, rel=1e-6)
    s = res.strategy
    c = s.toeplitz()
    assert np.all(c >= 0) and np.all(np.diff(c) <= 0)
    assert res.loss == pytest.approx(strategy_error(s).mean, rel=1e-9)
    with pytest.raises(ValueError, match="error"):
        optimize_blt(16, 2, error="median")


@pytest.mark.slow
def test_optimisation_is_bounded_at_ten_thousand_steps():
    n = 10_000
    band = optimize_banded_toeplitz(n, 32, Participation.fixed_epoch(4))
    blt = optimize_blt(n, 4, Participation.min_sep(2500))
    ident = strategy_error(IdentityStrategy(n), Participation.fixed_epoch(4))
    assert band.loss < ident.mean and blt.loss < ident.mean
    assert strategy_error(blt.strategy, Participation.min_sep(2500)).mean == pytest.approx(blt.loss, rel=1e-9)
    res = optimize_blt(2000, 4, Participation.min_sep(500))
    assert res.loss <= JAX_BLT_2000_MINSEP500_MEAN * (1 + 1e-6)
    assert optimize_blt(256, 4).loss <= JAX_BLT_256_4_MEAN * (1 + 1e-6)


@pytest.mark.slow
def test_jax_privacy_optimizers_agree():
    jax = pytest.importorskip("jax")
    pytest.importorskip("jax_privacy")
    jax.config.update("jax_enable_x64", True)
    from jax_privacy.matrix_factorization import buffered_toeplitz as jb
    from jax_privacy.matrix_factorization import toeplitz as jt

    coef = np.asarray(jt.optimize_banded_toeplitz(256, 8))
    assert float(jt.loss(coef, 256)) == pytest.approx(JAX_BANDED_256_8_MEAN, rel=1e-9)
    for n, m, ref in [(256, 4, JAX_BLT_256_4_MEAN), (128, 3, JAX_BLT_128_3_MEAN)]:
        blt = jb.optimize(n=n, error="mean", min_buffers=m, max_buffers=m)
        theirs = BLTStrategy(tuple(np.asarray(blt.buf_decay)), tuple(np.asarray(blt.output_scale)), n)
        assert strategy_error(theirs).mean == pytest.approx(ref, rel=1e-9)
