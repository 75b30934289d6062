"""dpaudit.optimizers.data: the .dat loader, BANK if present, the neighbouring pairs and the generators."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.optimizers.data import (
    add_remove_pair,
    bank_path,
    load_dat,
    make_dense,
    make_sparse_gradient,
    make_two_node_ridge,
    replace_one_pair,
)


# ------------------------------------------------------------------------------------------------
# data
# ------------------------------------------------------------------------------------------------
def test_load_dat_tmp(tmp_path):
    p = tmp_path / "small.dat"
    p.write_text("1 10 5 0\n3 20 5 1\n2 30 5 1\n")
    X, y = load_dat(p)
    np.testing.assert_allclose(X, [[1, 0, 0, 0], [1, 1, 0.5, 0], [1, 0.5, 1, 0]])
    np.testing.assert_array_equal(y, [0, 1, 1])
    X2, _ = load_dat(p, minmax=False, bias=False)
    np.testing.assert_array_equal(X2[:, 0], [1, 3, 2])


def test_load_bank_if_present():
    path = bank_path()
    if path is None:
        pytest.skip("bank.dat not available")
    X, y = load_dat(path)
    assert X.shape == (45_211, 33)
    assert int(y.sum()) == 5_289
    assert X.min() >= 0 and X.max() <= 1 and np.all(X[:, 0] == 1)


def test_neighbouring_pairs():
    X, y = make_dense(5, 2, seed=0)
    pair = add_remove_pair(X, y, [9.0, 9.0], 1.0)
    assert pair.X_prime.shape == (6, 2) and pair.relation == "add_remove" and pair.index == 5
    np.testing.assert_array_equal(pair.X_prime[:5], X)
    rep = replace_one_pair(X, y, [9.0, 9.0], 1.0, index=2)
    assert rep.X_prime.shape == X.shape and np.sum(np.any(rep.X_prime != X, axis=1)) == 1
    assert rep.y_prime[2] == 1.0 and X[2, 0] != 9.0
    with pytest.raises(ValueError, match="index"):
        replace_one_pair(X, y, [9.0, 9.0], 1.0, index=7)
    with pytest.raises(ValueError, match="canary_x"):
        add_remove_pair(X, y, [1.0], 1.0)


def test_generators():
    Z = make_sparse_gradient(100, 30, 4, L=2.0, seed=0)
    assert np.all(np.count_nonzero(Z, axis=1) <= 4)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), 2.0)
    X, y, nodes = make_two_node_ridge(300, 4, seed=0)
    assert sorted(np.concatenate(nodes).tolist()) == list(range(300))
    assert set(np.unique(y)) == {-1.0, 1.0}
