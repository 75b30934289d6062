"""What the white-box canary recipes for training frameworks share (``dpaudit.interop.opacus``, ``.jax``).

Dirac gradient canaries (Nasr, Hayes, Steinke, Balle, Tramer, Jagielski, Carlini, Terzis, "Tight auditing of
differentially private machine learning", USENIX Security 2023): each canary owns one parameter entry and
contributes a constant per-sample gradient on it; its norm must be at least the clipping norm, so that
clipping leaves exactly the clip norm on the canary's coordinate (the worst case of the analysis).
"""

from __future__ import annotations

import numpy as np

from dpaudit.core.validation import check_count, check_nonnegative, check_positive

__all__ = ["DEFAULT_CANARY_NORM_FACTOR", "training_arrays", "canary_setup"]

#: default canary gradient norm, as a multiple of the clipping norm (clipped to the clip norm by the optimizer)
DEFAULT_CANARY_NORM_FACTOR = 10.0


def training_arrays(X, y):
    """``(X as float32, y)`` with one row per target (``ValueError`` naming the shapes otherwise)."""
    try:
        X = np.asarray(X, dtype=np.float32)
    except (TypeError, ValueError) as exc:  # strings, ragged rows, objects
        raise ValueError(f"X must be an array of numbers (one row per target), got {type(X).__name__}: {exc}") \
            from None
    y = np.asarray(y)
    if X.ndim < 2 or X.shape[0] != y.shape[0] or X.shape[0] < 1:
        raise ValueError(f"X must have one row per target in y, got shapes {X.shape} and {y.shape}")
    return X, y


def canary_setup(canaries, noise_multiplier, max_grad_norm, canary_norm=None):
    """Validated ``(m, noise_multiplier, max_grad_norm, canary_norm)``; ``canary_norm`` defaults to
    ``DEFAULT_CANARY_NORM_FACTOR * max_grad_norm`` and must be at least ``max_grad_norm``."""
    m = check_count("canaries", canaries, minimum=1)
    noise_multiplier = check_nonnegative("noise_multiplier", noise_multiplier)
    max_grad_norm = check_positive("max_grad_norm", max_grad_norm)
    norm = DEFAULT_CANARY_NORM_FACTOR * max_grad_norm if canary_norm is None else canary_norm
    norm = check_positive("canary_norm", norm)
    if norm < max_grad_norm:
        raise ValueError(f"canary_norm must be >= max_grad_norm = {max_grad_norm} (a canary below the clip "
                         f"norm is not the worst case), got {norm}")
    return m, noise_multiplier, max_grad_norm, norm
