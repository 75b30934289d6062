"""Attack statistics: maps from mechanism/optimizer outputs to one real score per run.

A distinguishing test thresholds a score (``dpaudit.audit.stats.thresholds``); by post-processing,
any score gives a valid test, so the choice only affects power (Nasr et al. 2021, 2023 (canaries)):

* black box: the projection of the released parameters on the canary direction
  (:func:`projection_statistic`) or the loss on the canary record (:func:`loss_statistic`);
* white box: the gradient (Dirac) canary of Nasr et al. 2023 (arXiv:2302.07956), a constant
  per-example gradient of norm equal to the clip bound on one coordinate
  (:func:`dirac_canary`), scored by projecting the final parameters on that coordinate;
* known output families: the log-likelihood ratio (Neyman-Pearson optimal):
  :func:`gaussian_lr_statistic` (isotropic Gaussians, possibly with different variances, so
  the norm of the output is used as well as the mean shift) and :func:`laplace_lr_statistic`.

Every statistic is a picklable callable object (module-level class; process pools need it) with
a settable ``description``, and is vectorised: ``statistic(outputs) -> scores`` with ``outputs`` of shape
``(trials, ...)`` and ``scores`` of shape ``(trials,)``.
"""

from __future__ import annotations

import numpy as np

from dpaudit.core.validation import check_count, check_positive

__all__ = ["flatten_outputs", "projection_statistic", "mean_difference_direction", "default_statistic",
           "dirac_canary", "loss_statistic", "gaussian_lr_statistic", "laplace_lr_statistic", "LOSSES"]

LOSSES = ("logistic", "hinge", "squared")


def flatten_outputs(outputs, size: int | None = None) -> np.ndarray:
    """Outputs as a float array of shape ``(trials, k)`` (scalars give k = 1)."""
    out = np.asarray(outputs, dtype=float)
    if out.ndim == 0:
        out = out.reshape(1, 1)
    elif out.ndim == 1:
        out = out.reshape(-1, 1)
    else:
        out = out.reshape(out.shape[0], -1)
    if size is not None and out.shape[0] != size:
        raise ValueError(f"the sampler returned {out.shape[0]} outputs, expected {size}")
    if np.any(np.isnan(out)):
        raise ValueError("mechanism outputs must not contain NaN")
    return out


class _Statistic:
    """Base of the score functions below: module-level classes, so that they pickle (process
    pools, :mod:`dpaudit.core.runner`); ``description`` is a plain, settable attribute."""

    description = "statistic"

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.description}>"


class _Projection(_Statistic):
    description = "projection on a fixed direction"

    def __init__(self, unit):
        self.u = unit

    def __call__(self, outputs):
        out = flatten_outputs(outputs)
        if out.shape[1] != self.u.size:
            raise ValueError(f"outputs have dimension {out.shape[1]}, direction has {self.u.size}")
        return out @ self.u


class _ScalarValue(_Statistic):
    description = "output value (scalar)"

    def __call__(self, outputs):
        return flatten_outputs(outputs)[:, 0]


def projection_statistic(direction):
    """Score = <output, direction/||direction||> (black-box projection on the canary direction)."""
    d = np.asarray(direction, dtype=float).ravel()
    norm = float(np.linalg.norm(d))
    if not np.isfinite(norm) or norm == 0.0:
        raise ValueError("direction must be a finite non-zero vector")
    return _Projection(d / norm)


def mean_difference_direction(outputs0, outputs1) -> np.ndarray:
    """Difference of the sample means (outputs on D' minus outputs on D); e_0 if it vanishes."""
    a = flatten_outputs(outputs0)
    b = flatten_outputs(outputs1)
    d = b.mean(axis=0) - a.mean(axis=0)
    if not np.all(np.isfinite(d)) or np.linalg.norm(d) == 0.0:
        d = np.zeros(a.shape[1])
        d[0] = 1.0
    return d


def default_statistic(selection0, selection1):
    """Default score for scalar or vector outputs, built from SELECTION outputs only.

    Scalars: the output itself (both orientations are tried by the threshold selection).
    Vectors: the projection on the mean difference estimated on the selection outputs (a
    valid choice because the evaluation outputs are independent of it).
    """
    a = flatten_outputs(selection0)
    if a.shape[1] == 1:
        return _ScalarValue()
    stat = projection_statistic(mean_difference_direction(selection0, selection1))
    stat.description = "projection on the selection-sample mean difference"
    return stat


def dirac_canary(dim: int, norm: float, coordinate: int = 0) -> np.ndarray:
    """Gradient canary ``norm * e_coordinate`` (Nasr et al. 2023, white-box Dirac canary)."""
    dim = check_count("dim", dim, minimum=1)
    norm = check_positive("norm", norm)
    coordinate = check_count("coordinate", coordinate)
    if coordinate >= dim:
        raise ValueError(f"coordinate must be < dim={dim}, got {coordinate}")
    g = np.zeros(dim)
    g[coordinate] = norm
    return g


def loss_statistic(x, y: float, loss: str = "logistic"):
    """Score = minus the loss of the linear model ``params`` on the canary record (x, y).

    Labels are in {-1, +1} for ``"logistic"`` (log(1 + e^{-y <w, x>})) and ``"hinge"``
    (max(0, 1 - y <w, x>)); ``"squared"`` is (<w, x> - y)^2 / 2. A model trained with the
    canary tends to have a smaller loss on it, so larger scores point to D'.
    """
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    return _LossStatistic(np.asarray(x, dtype=float).ravel(), float(y), loss)


class _LossStatistic(_Statistic):
    def __init__(self, xv, yv, loss):
        self.xv, self.yv, self.loss = xv, yv, loss
        self.description = f"minus the {loss} loss on the canary record"

    def __call__(self, params):
        w = flatten_outputs(params)
        if w.shape[1] != self.xv.size:
            raise ValueError(f"params have dimension {w.shape[1]}, canary has {self.xv.size}")
        z = w @ self.xv
        if self.loss == "logistic":
            return -np.logaddexp(0.0, -self.yv * z)
        if self.loss == "hinge":
            return -np.maximum(0.0, 1.0 - self.yv * z)
        return -0.5 * (z - self.yv) ** 2


def gaussian_lr_statistic(mean0, mean1, sigma0: float, sigma1: float | None = None):
    """log p1(o)/p0(o) for P0 = N(mean0, sigma0^2 I), P1 = N(mean1, sigma1^2 I).

    Neyman-Pearson optimal test statistic for a known Gaussian family; with sigma0 != sigma1
    it combines the mean shift with the norm of the output (RGM, Nasr et al. 2021, 2023 (canaries)).
    """
    m0 = np.asarray(mean0, dtype=float).ravel()
    m1 = np.asarray(mean1, dtype=float).ravel()
    if m0.shape != m1.shape:
        raise ValueError("mean0 and mean1 must have the same shape")
    s0 = check_positive("sigma0", sigma0)
    s1 = s0 if sigma1 is None else check_positive("sigma1", sigma1)
    return _GaussianLR(m0, m1, s0, s1)


class _GaussianLR(_Statistic):
    description = "Gaussian log-likelihood ratio"

    def __init__(self, m0, m1, s0, s1):
        self.m0, self.m1, self.s0, self.s1 = m0, m1, s0, s1

    def __call__(self, outputs):
        o = flatten_outputs(outputs)
        d = self.m0.size
        if o.shape[1] != d:
            raise ValueError(f"outputs have dimension {o.shape[1]}, means have {d}")
        r0 = np.sum((o - self.m0) ** 2, axis=1)
        r1 = np.sum((o - self.m1) ** 2, axis=1)
        return r0 / (2 * self.s0**2) - r1 / (2 * self.s1**2) + d * np.log(self.s0 / self.s1)


def laplace_lr_statistic(loc0, loc1, scale: float):
    """log p1(o)/p0(o) for product Laplace laws with locations loc0, loc1 and common ``scale``.

    Computed as a function of the real value of the output: the saturated values +-|loc1 - loc0|/scale
    per coordinate are exact (snapped within 1e-9 relative), so the statistic does not read the
    low bits of floating-point outputs (a bit-level leak is the job of the float-bits attack).
    """
    l0 = np.asarray(loc0, dtype=float).ravel()
    l1 = np.asarray(loc1, dtype=float).ravel()
    b = check_positive("scale", scale)
    return _LaplaceLR(l0, l1, b)


class _LaplaceLR(_Statistic):
    description = "Laplace log-likelihood ratio"

    def __init__(self, l0, l1, b):
        self.l0, self.l1, self.b = l0, l1, b

    def __call__(self, outputs):
        o = flatten_outputs(outputs)
        # per coordinate |o - l0| - |o - l1| lies in [-|l1 - l0|, |l1 - l0|] and equals an end exactly
        # outside [l0, l1]; in floating point it is off by a few ulps there, by an amount that depends
        # on the low bits of o -- which differ between the two inputs of a textbook floating-point
        # mechanism. Clip, and snap values within 1e-9 (relative) of an end to it, so that the
        # statistic is a function of the real value of o, not of its last bits (issue 15).
        d = np.abs(self.l1 - self.l0)
        c = np.clip(np.abs(o - self.l0) - np.abs(o - self.l1), -d, d)
        tol = 1e-9 * np.maximum(d, np.maximum(np.abs(self.l0), np.abs(self.l1)) + 1.0)
        c = np.where(c >= d - tol, d, np.where(c <= -d + tol, -d, c))
        return np.sum(c, axis=1) / self.b
