"""Per-example losses of linear models, batched over trials.

A linear model with parameters ``theta`` (shape ``(trials, d)``) scores record ``x_i`` by the
margin ``z_i = x_i . theta``; every loss here is a function ``l(z; y)`` of that scalar, so the
per-example gradient is ``l'(z_i; y_i) * x_i``. The batched helpers below therefore never
materialise the ``(trials, n, d)`` tensor of per-example gradients:

* margins ``Z = theta @ X.T`` (``(trials, n)``),
* per-example scalars ``A = l'(Z; y)`` (``(trials, n)``),
* per-example gradient norms ``|A| * ||x_i||`` (exact, since the gradient is a multiple of x_i),
* clipped gradient sum ``(A * min(1, C / (|A| ||x_i||))) @ X`` (``(trials, d)``).

An L2 regulariser ``(l2/2) ||theta||^2`` is *not* part of the per-example loss here: it is
data-independent, so the optimizers add its gradient ``l2 * theta`` after clipping and noise
(it costs no privacy and does not change the clipped-sum sensitivity).

Losses
------
logistic  l(z; y) = log(1 + e^z) - y z,  y in {0, 1}   (Lee & Kifer 2018 experiments; labels -1 are read as 0)
          l' = sigmoid(z) - y in [-1, 1];  l'' <= 1/4.
hinge     smooth (Huberised) hinge of the margin m = y z, y in {-1, +1} (labels 0 are read as -1, as
          the DP-AGD code does for SVM), smoothing width h (default 0.5):
          l = 0 for m >= 1;  (1 - m)^2 / (2h) for 1 - h < m < 1;  1 - m - h/2 for m <= 1 - h.
          It equals the hinge max(0, 1 - m) up to h/2 everywhere, is convex, 1-Lipschitz in m and
          (1/h)-smooth (Chapelle 2007, "Training a support vector machine in the primal", eq. 8
          gives the quadratically smoothed hinge; here the Huber form that keeps the slope -1).
squared   l(z; y) = (z - y)^2 / 2, y real;  l' = z - y (unbounded), l'' = 1.
"""

from __future__ import annotations

import abc
import math

import numpy as np
from scipy.special import expit

from dpaudit.core.numeric import l2_norm
from dpaudit.core.validation import check_positive
from dpaudit.optimizers.base import HyperParameter

__all__ = ["Loss", "Logistic", "SmoothHinge", "Squared", "get_loss", "LOSSES", "LOSS_HP", "LIPSCHITZ_LOSS_HP",
           "margins", "clipped_gradient_sum", "row_norms"]


class Loss(abc.ABC):
    """A loss of the margin ``z = x . theta``; subclasses define ``value`` and ``derivative``."""

    name = ""
    #: bound on |l'(z; y)| over all z and admissible y (inf when unbounded)
    derivative_bound = math.inf
    #: bound on l''(z; y) (the smoothness of l in z)
    curvature_bound = math.inf

    def prepare_labels(self, y) -> np.ndarray:
        """Labels as the float array this loss expects (ValueError on inadmissible labels)."""
        y = np.asarray(y, dtype=float)
        if y.ndim != 1:
            raise ValueError(f"y must be a 1-D array of labels, got shape {y.shape}")
        if not np.all(np.isfinite(y)):
            raise ValueError("y must be finite")
        return y

    @abc.abstractmethod
    def value(self, z, y) -> np.ndarray:
        """Per-example loss l(z; y), elementwise (``y`` broadcasts against ``z``)."""

    @abc.abstractmethod
    def derivative(self, z, y) -> np.ndarray:
        """dl/dz, elementwise."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Logistic(Loss):
    """Logistic loss ``log(1 + e^z) - y z`` with labels in {0, 1} (``-1`` is read as ``0``)."""

    name = "logistic"
    derivative_bound = 1.0
    curvature_bound = 0.25

    def prepare_labels(self, y) -> np.ndarray:
        y = super().prepare_labels(y)
        if not np.all((y == 0) | (y == 1) | (y == -1)):
            raise ValueError("y must contain binary labels in {0, 1} (or {-1, 1}) for the logistic loss")
        return np.where(y == 1, 1.0, 0.0)

    def value(self, z, y):
        z = np.asarray(z, dtype=float)
        # log(1 + e^z) = logaddexp(0, z): no overflow for large |z|
        return np.logaddexp(0.0, z) - y * z

    def derivative(self, z, y):
        return expit(z) - y


class SmoothHinge(Loss):
    """Huberised hinge of the margin ``m = y z`` with smoothing width ``h`` (labels +-1; 0 read as -1)."""

    name = "hinge"
    derivative_bound = 1.0

    def __init__(self, smoothing: float = 0.5):
        self.smoothing = check_positive("smoothing", smoothing)
        self.curvature_bound = 1.0 / self.smoothing

    def prepare_labels(self, y) -> np.ndarray:
        y = super().prepare_labels(y)
        if not np.all((y == 0) | (y == 1) | (y == -1)):
            raise ValueError("y must contain binary labels in {-1, 1} (or {0, 1}) for the hinge loss")
        return np.where(y == 1, 1.0, -1.0)

    def value(self, z, y):
        h = self.smoothing
        m = y * np.asarray(z, dtype=float)
        return np.where(m >= 1.0, 0.0, np.where(m > 1.0 - h, (1.0 - m) ** 2 / (2.0 * h), 1.0 - m - h / 2.0))

    def derivative(self, z, y):
        h = self.smoothing
        m = y * np.asarray(z, dtype=float)
        dm = np.where(m >= 1.0, 0.0, np.where(m > 1.0 - h, -(1.0 - m) / h, -1.0))
        return dm * y

    def __repr__(self) -> str:
        return f"SmoothHinge(smoothing={self.smoothing:g})"


class Squared(Loss):
    """Squared loss ``(z - y)^2 / 2`` (ridge regression with the optimizer's ``l2``)."""

    name = "squared"
    curvature_bound = 1.0

    def value(self, z, y):
        return 0.5 * (np.asarray(z, dtype=float) - y) ** 2

    def derivative(self, z, y):
        return np.asarray(z, dtype=float) - y


LOSSES = {"logistic": Logistic, "hinge": SmoothHinge, "squared": Squared}

#: the ``loss`` hyper-parameter (a name of LOSSES, or a Loss object)
LOSS_HP = HyperParameter("loss", str, "logistic", help="per-example loss of the linear model",
                         choices=tuple(LOSSES), instances=Loss)
#: ``loss`` of the optimizers whose analysis needs a Lipschitz loss
LIPSCHITZ_LOSS_HP = HyperParameter("loss", str, "logistic", help="per-example loss of the linear model "
                                   "(Lipschitz: the analysis bounds the gradient)", choices=("logistic", "hinge"),
                                   instances=Loss)


def get_loss(loss) -> Loss:
    """A :class:`Loss` from its name (``"logistic"``, ``"hinge"``, ``"squared"``) or an instance."""
    if isinstance(loss, Loss):
        return loss
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {tuple(LOSSES)}, got {loss!r}")
    return LOSSES[loss]()


def row_norms(X: np.ndarray) -> np.ndarray:
    """L2 norm of each row of ``X`` without overflow or underflow (rows scaled by their largest
    entry; ``np.linalg.norm`` overflows to inf for entries beyond ~1e154)."""
    return l2_norm(X, axis=1)


def margins(theta: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``theta @ X.T``: margins of every record under every trial's parameters, shape (trials, n)."""
    return theta @ X.T


def clipped_gradient_sum(X: np.ndarray, scalars: np.ndarray, row_norms: np.ndarray, clip: float,
                         weights: np.ndarray | None = None):
    """Sum over records of per-example gradients ``scalars[t, i] * X[i]`` clipped to L2 norm ``clip``.

    Per-example clipping (Abadi et al. 2016, Algorithm 1): ``g_i / max(1, ||g_i|| / clip)``, with the
    exact norm ``||g_i|| = |scalars[t, i]| * ||x_i||``. ``weights`` (e.g. a Poisson mask) multiplies
    each record's clipped gradient. Returns ``(sum, norms)`` with shapes (trials, d), (trials, n).
    ``clip = inf`` disables clipping.

    The clipped scalar is ``clip(scalars, -clip/||x_i||, clip/||x_i||)`` (the same value as
    ``scalars * min(1, clip / (|scalars| ||x_i||))``), which neither overflows for huge records
    nor underflows the factor to 0; ``row_norms`` should come from :func:`row_norms`.
    """
    with np.errstate(over="ignore"):
        norms = np.abs(scalars) * row_norms
    if math.isinf(clip):
        w = scalars
    else:
        with np.errstate(divide="ignore"):
            bound = clip / row_norms  # inf for a zero record: no clipping needed
        w = np.clip(scalars, -bound, bound)
    if weights is not None:
        w = w * weights
    with np.errstate(over="ignore", invalid="ignore"):
        return w @ X, norms
