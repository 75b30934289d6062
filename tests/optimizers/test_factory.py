"""dpaudit.optimizers.factory: the registered names match the public interface, bad inputs are refused with their
names, seeds reproduce and trials are independent (issue 5)."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.optimizers import make_optimizer, names, optimizer_defaults
from dpaudit.optimizers.data import (
    make_dense,
)


# ------------------------------------------------------------------------------------------------
# factory and hyper-parameters
# ------------------------------------------------------------------------------------------------
def test_names_match_api():
    assert set(names) == {"dp-gd", "dp-sgd", "noisy-gd", "dp-agd", "rgm-gd", "projection", "l1-recovery",
                          "output-perturbation", "bias-reduced-sgd", "dp-ftrl"}
    for name in names:
        opt = make_optimizer(name)          # every hyper-parameter has a default
        assert opt.name == name
        assert opt.neighbouring in ("add_remove", "replace_one")
        assert set(optimizer_defaults(name)) == set(opt.hp)


def test_bad_inputs():
    with pytest.raises(ValueError, match="name"):
        make_optimizer("sgd")
    with pytest.raises(ValueError, match="unknown hyper-parameter"):
        make_optimizer("dp-gd", sigma=1.0)
    with pytest.raises(ValueError, match="noise_multiplier"):
        make_optimizer("dp-gd", noise_multiplier=-1.0)
    with pytest.raises(ValueError, match="step_size"):
        make_optimizer("dp-sgd", step_size=float("nan"))
    with pytest.raises(ValueError, match="sample_rate"):
        make_optimizer("dp-sgd", sample_rate=1.5)
    with pytest.raises(ValueError, match="neighbouring"):
        make_optimizer("dp-sgd", neighbouring="replace_one")
    with pytest.raises(ValueError, match="loss"):
        make_optimizer("dp-gd", loss="hinge2")
    with pytest.raises(ValueError, match="delta"):
        make_optimizer("dp-agd", delta=0.0)
    with pytest.raises(ValueError, match="epsilon"):
        make_optimizer("bias-reduced-sgd", epsilon=2.0)
    X, y = make_dense(20, 3, seed=0)
    opt = make_optimizer("dp-gd")
    with pytest.raises(ValueError, match="y"):
        opt.run(X, y[:-1])
    with pytest.raises(ValueError, match="X"):
        opt.run(X[:, :, None], y)
    with pytest.raises(ValueError, match="trials"):
        opt.run(X, y, trials=0)
    with pytest.raises(ValueError, match="canary_gradient"):
        opt.run(X, y, canary_gradient=np.ones(4))
    with pytest.raises(ValueError, match="canary_gradient"):
        make_optimizer("projection").run(np.zeros((5, 3)), None, canary_gradient=np.ones(3))
    with pytest.raises(ValueError, match="labels"):
        opt.run(X, y + 3)
    with pytest.raises(ValueError, match="feature_bound"):
        make_optimizer("noisy-gd", feature_bound=0.1).run(X, y)


def test_seed_reproducible_and_trials_independent():
    X, y = make_dense(50, 4, seed=1)
    opt = make_optimizer("dp-sgd", steps=5)
    a = opt.run(X, y, trials=6, seed=3).params
    b = opt.run(X, y, trials=6, seed=3).params
    np.testing.assert_array_equal(a, b)
    assert a.shape == (6, 4)
    assert len({tuple(r) for r in a}) == 6        # trials differ
