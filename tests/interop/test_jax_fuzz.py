"""Fuzz of the JAX adapter (``dpaudit.interop.jax``; issue 27, item 6).

``JaxCanaries`` built with arguments of every legal and illegal form (the wrapping's validation; nothing is
trained), its claim (dpaudit's PLD accountant of the loop) checked over its whole curve, and the run called
with inclusion masks of every form on a tiny model. Contract: tests/support/fuzz_contract.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.interop.jax import JaxCanaries
from tests.support.fuzz_contract import DEEP, FAST, ODD_VALUES, check_call, check_curve

X3 = np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32)
Y3 = np.array([0, 1] * 4)
NAMES = ("init_params", "apply_fn", "X", "canaries", "noise_multiplier", "max_grad_norm", "sample_rate", "steps",
         "lr", "canary_norm", "pad_to")


def _init(key):
    import jax

    return {"w": 0.01 * jax.random.normal(key, (3, 2))}


def _apply(p, x):
    return x @ p["w"]


def _x_form(form):
    return {"good": (X3, Y3), "strings": ([["a", "b", "c"]] * 8, Y3), "ragged": ([[1.0], [1.0, 2.0]], [0, 1]),
            "none": (None, Y3), "one_d": (np.ones(8), Y3), "empty": (np.zeros((0, 3)), np.zeros(0)),
            "short_y": (X3, Y3[:3])}[form]


args = dict(
    X=st.sampled_from(("good", "good", "strings", "ragged", "none", "one_d", "empty", "short_y")),
    canaries=st.sampled_from((1, 4, 2.0)) | st.sampled_from(ODD_VALUES),
    sigma=st.sampled_from((0.0, 1.0, 5.0)) | st.sampled_from(ODD_VALUES),
    q=st.sampled_from((1e-6, 0.5, 1.0)) | st.sampled_from(ODD_VALUES),
    steps=st.sampled_from((1, 100, 10**6)) | st.sampled_from(ODD_VALUES),
    canary_norm=st.sampled_from((None, None, 0.5, 10.0)) | st.sampled_from(ODD_VALUES),
    pad_to=st.sampled_from((64, 1, 0, 2.5, None)))


def _case(X, canaries, sigma, q, steps, canary_norm, pad_to):
    x, y = _x_form(X)
    run = check_call(lambda: JaxCanaries(_init, _apply, x, y, canaries=canaries, noise_multiplier=sigma,
                                         max_grad_norm=1.0, sample_rate=q, steps=steps, lr=0.1,
                                         canary_norm=canary_norm, pad_to=pad_to), NAMES)
    if isinstance(run, JaxCanaries):
        check_curve(run.claim())  # epsilon in [0, inf] at every delta (inf without noise)


@FAST
@given(**args)
def test_fuzz_jax_canaries_arguments_and_claim(X, canaries, sigma, q, steps, canary_norm, pad_to):
    _case(X, canaries, sigma, q, steps, canary_norm, pad_to)


@pytest.mark.slow
@DEEP
@given(**args)
def test_fuzz_jax_canaries_arguments_and_claim_deep(X, canaries, sigma, q, steps, canary_norm, pad_to):
    _case(X, canaries, sigma, q, steps, canary_norm, pad_to)


@pytest.mark.parametrize("mask", [[True, False], [1, 0], np.array([1.0, 0.0]), [[True, False]], [True], [], None])
def test_jax_run_with_masks_of_every_form(mask):
    """A mask of the right size in any form trains (one finite score per canary); another size is a ValueError
    naming inclusion_mask."""
    pytest.importorskip("jax", reason="jax is not installed (pip install 'dpaudit[jax]')")
    pytest.importorskip("jax_privacy", reason="jax-privacy is not installed (pip install 'dpaudit[jax]')")
    run = JaxCanaries(_init, _apply, X3, Y3, canaries=2, noise_multiplier=1.0, max_grad_norm=1.0, sample_rate=0.5,
                      steps=1, lr=0.1, pad_to=4)
    out = check_call(lambda: run(mask, np.random.default_rng(0)), ("inclusion_mask",))
    if np.asarray(mask, dtype=object).size == 2:
        assert isinstance(out, np.ndarray) and out.shape == (2,), out
    else:
        assert isinstance(out, ValueError), out
