"""The checks shared by the framework canary recipes (dpaudit.interop.canaries), without torch or jax."""

import numpy as np
import pytest

from dpaudit.interop.canaries import DEFAULT_CANARY_NORM_FACTOR, canary_setup, training_arrays


def test_canary_setup_defaults_and_checks():
    assert canary_setup(100, 1.5, 2.0) == (100, 1.5, 2.0, DEFAULT_CANARY_NORM_FACTOR * 2.0)
    assert canary_setup(3, 0.0, 1.0, canary_norm=1.0)[3] == 1.0  # at the clip norm: allowed
    for kw, name in [(dict(canaries=0), "canaries"), (dict(noise_multiplier=-1.0), "noise_multiplier"),
                     (dict(max_grad_norm=0.0), "max_grad_norm"), (dict(canary_norm=0.5), "canary_norm")]:
        args = dict(canaries=10, noise_multiplier=1.0, max_grad_norm=1.0) | kw
        with pytest.raises(ValueError, match=name):
            canary_setup(**args)


def test_training_arrays_need_one_row_per_target():
    X, y = training_arrays([[1, 2], [3, 4]], [0, 1])
    assert X.dtype == np.float32 and X.shape == (2, 2) and y.tolist() == [0, 1]
    for bad in [([1, 2], [0, 1]), ([[1, 2]], [0, 1]), (np.zeros((0, 2)), [])]:
        with pytest.raises(ValueError, match="one row per target"):
            training_arrays(*bad)
