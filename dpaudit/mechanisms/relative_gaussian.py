"""The Relative Gaussian Mechanism (RGM) of Hendrikx, Mangold and Bellet.

References
----------
Hendrikx, Mangold, Bellet, "The Relative Gaussian Mechanism and its Application to Private
Gradient Descent", AISTATS 2024 (PMLR 238), arXiv:2308.15250:
Definition 2 (eq. 3, relative L2 sensitivity), Definition 3 (eq. 4, the mechanism),
Lemma 1 (variance ratio), Lemma 2 (eq. 13, Renyi divergence of Gaussians), Theorem 1 (RDP).

The paper's formulas were not available verbatim; the forms below are the reconstruction of
Hendrikx, Mangold, Bellet 2024 (docs/theorems/rgm.md; reconstructed forms, verified numerically) and are
checked against exact divergences in ``proofs_checks/rgm_theorem1.py`` and ``rgm_tcdp.py``.

Setting
-------
A query q has (A, B)-relative L2 sensitivity when ``||q(D) - q(D')|| <= A + B ||q(D)||`` for
every ordered pair of neighbours (replace-one). The mechanism releases
``q(D) + (sigma + gamma ||q(D)||) xi`` with ``xi ~ N(0, I_dim)``.

RDP curve (general sigma, the exact form (5*) when sigma = gamma A / B)
-----------------------------------------------------------------------
With ``b = max(B, gamma A / sigma)``, ``m = max(B / gamma, A / sigma)`` (so b = B, m = B/gamma when
sigma = gamma A/B) and ``u = (alpha - 1) b (2 + b)``, for ``1 < alpha < 1 + 1/(b (2 + b))``::

    eps(alpha) = alpha m^2 / (2 (1 - u))  +  max_{r in {1+b, 1/(1+b)}} d * g_alpha(r),
    g_alpha(r) = -log r - log(1 - (alpha-1)(r^2-1)) / (2 (alpha-1))       (Lemma 2, per dimension)

and ``inf`` for larger orders. Derivation: the ratio of noise scales of neighbours lies in
[1/(1+b), 1+b] (Lemma 1; sigma_D <= sigma + gamma A + gamma (1+B) ||q(D')|| <= (1+b) sigma_D');
``||q(D)-q(D')|| <= m sigma_D'``; s_alpha^2 >= sigma_D'^2 (1-u). g_alpha decreases on (0, 1] and
increases on [1, inf) (its derivative -1/r + r/(1-(alpha-1)(r^2-1)) vanishes only at r = 1), so its
maximum over the interval is at an endpoint; the paper's form takes r = 1 + b, which is the
maximum in every case we evaluated, and we take the max of both endpoints to be safe. The bound is
attained by the radial pair q' = (1 + B + A/||q||) q.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np

from dpaudit.core.gaussian_divergence import gaussian_variance_term
from dpaudit.core.numeric import count_to_float, round_up
from dpaudit.core.validation import (
    check_count,
    check_nonnegative,
    check_orders,
    check_positive,
)
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.float_safe import grid_relative_gaussian

__all__ = ["RelativeGaussian", "rgm_constants", "rgm_rdp_curve", "rgm_tcdp_pair", "rgm_norm_leakage",
           "rgm_finish_rdp"]


def rgm_constants(sigma: float, gamma: float, A: float, B: float) -> tuple[float, float]:
    """Effective ``(b, m)`` of the general-sigma bound (Hendrikx, Mangold, Bellet 2024; docs/theorems/rgm.md).

    ``b = max(B, gamma A / sigma)`` bounds the log-ratio of neighbouring noise scales through
    ``1/(1+b) <= sigma_D / sigma_D' <= 1 + b``; ``m = max(B / gamma, A / sigma)`` bounds the mean
    shift in units of the reference noise scale. ``A / sigma`` is taken as 0 when ``A = 0``
    (and as ``inf`` when ``sigma = 0 < A``: no guarantee).
    """
    if A == 0.0:
        a_over_s = 0.0
    elif sigma == 0.0:
        a_over_s = math.inf
    else:
        a_over_s = A / sigma
    b = max(B, gamma * a_over_s) if math.isfinite(a_over_s) else math.inf
    m = max(B / gamma, a_over_s)
    return b, m


def _x_minus_log1p(x: np.ndarray | float) -> np.ndarray:
    """``x - log1p(x)`` for x >= 0 without cancellation (series below 0.01)."""
    x = np.asarray(x, dtype=float)
    small = x < 1e-2
    xs = np.where(small, x, 0.0)
    # x - log(1+x) = sum_{k>=2} (-1)^k x^k / k
    series = np.zeros_like(xs)
    for k in range(13, 1, -1):
        series = xs**k / k * (-1) ** k + series
    with np.errstate(invalid="ignore"):
        direct = x - np.log1p(np.where(small, 0.0, x))
    return np.where(small, series, direct)


def _mlog1m_minus_x(x: np.ndarray) -> np.ndarray:
    """``-log1p(-x) - x`` for 0 <= x < 1 without cancellation (series below 0.01)."""
    x = np.asarray(x, dtype=float)
    small = x < 1e-2
    xs = np.where(small, x, 0.0)
    series = np.zeros_like(xs)
    for k in range(13, 1, -1):
        series = xs**k / k + series
    direct = -np.log1p(-np.where(small, 0.0, x)) - x
    return np.where(small, series, direct)


def rgm_norm_leakage(orders, b: float):
    """Per-dimension norm-leakage term of Theorem 1 and the admissibility mask.

    Returns ``(ok, one_minus_u, leak)`` with ``u = (alpha-1) b (2+b)``, ``ok = 1-u > 16 eps``
    (orders where a finite bound is certified despite rounding) and
    ``leak = max(g_alpha(1+b), g_alpha(1/(1+b)))`` (Lemma 2 variance term, see module docstring).
    ``g_alpha(1+b)`` is evaluated without cancellation as
    ``(b - log1p(b)) + b^2/2 + (-log1p(-u) - u) / (2 (alpha-1))`` (all terms >= 0), since
    ``u / (2 (alpha-1)) = b + b^2/2``.
    """
    a = np.asarray(orders, dtype=float)
    c = b * (2.0 + b)
    with np.errstate(invalid="ignore", over="ignore"):
        u = (a - 1.0) * c
        one_minus_u = 1.0 - u
    ok = np.isfinite(a) & (one_minus_u > 16.0 * np.finfo(float).eps)
    aa = np.where(ok, a, 2.0)
    uu = np.where(ok, u, 0.0)
    hi = _x_minus_log1p(b) + b * b / 2.0 + _mlog1m_minus_x(uu) / (2.0 * (aa - 1.0))
    lo = gaussian_variance_term(aa, 1.0 / (1.0 + b))
    return ok, np.where(ok, one_minus_u, 1.0), np.maximum(hi, lo)


def rgm_finish_rdp(total: np.ndarray, ok: np.ndarray, one_minus_u: np.ndarray) -> np.ndarray:
    """The last step of an RGM RDP bound (shared by :func:`rgm_rdp_curve` and
    :func:`dpaudit.bounds.rgm.rgm_local_sensitivity_rdp`): inflate ``total`` by the rounding error
    amplified by 1/(1-u), round up, and put ``inf`` outside the admissible range (``ok`` False)."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = total * (1.0 + 16.0 * np.finfo(float).eps / one_minus_u)
    out = np.where(ok, out, math.inf)
    return np.atleast_1d(round_up(out))


def rgm_rdp_curve(orders, *, sigma: float, gamma: float, A: float, B: float, dim: int) -> np.ndarray:
    """RDP of the RGM at each order (Theorem 1, exact form (5*); its general-sigma form, derived in docs/theorems/rgm.md).

    Arguments are assumed validated (see :class:`RelativeGaussian`). Returns the bound rounded
    up (with the rounding error of ``1 - u`` accounted for); ``inf`` at orders
    ``alpha >= 1 + 1/(b (2 + b))``.
    """
    a = np.atleast_1d(np.asarray(orders, dtype=float))
    b, m = rgm_constants(sigma, gamma, A, B)
    if not (math.isfinite(b) and math.isfinite(m)):
        return np.full(a.shape, math.inf)
    if b == 0.0:
        # A = B = 0: the query is constant; identical outputs
        return np.zeros(a.shape)
    ok, omu, leak = rgm_norm_leakage(a, b)
    with np.errstate(over="ignore", invalid="ignore"):
        main = np.where(ok, a, 2.0) * (m * m) / (2.0 * omu)
        total = main + count_to_float(dim, "up") * leak
    return rgm_finish_rdp(total, ok, omu)


def rgm_tcdp_pair(*, sigma: float, gamma: float, A: float, B: float, dim: int) -> tuple[float, float]:
    """``(K, omega)``-tCDP of the RGM (Hendrikx, Mangold, Bellet 2024; docs/theorems/rgm.md, derived; checked in rgm_tcdp.py).

    ``omega = 1 + 1/(2 b (2 + b))`` (so u <= 1/2 on (1, omega)) and
    ``K = m^2 + d b^2 (2 + b)^2 / 2``. Proof: on u <= 1/2, 1/(1-u) <= 2 gives the main term
    <= alpha m^2; -log(1-u) <= u + u^2 and b + b^2/2 - log(1+b) <= b^2 give the norm term
    <= d (b^2 + (alpha-1) b^2 (2+b)^2 / 2) <= alpha d b^2 (2+b)^2 / 2 (as (2+b)^2 >= 2); the
    r = 1/(1+b) endpoint of the variance term is <= log(1+b) - ... <= the same bound (checked).
    """
    b, m = rgm_constants(sigma, gamma, A, B)
    if not (math.isfinite(b) and math.isfinite(m)):
        return (math.inf, math.inf)
    if b == 0.0:
        return (0.0, math.inf)
    K = m * m + count_to_float(dim, "up") * (b * b) * ((2.0 + b) * (2.0 + b)) / 2.0
    omega = 1.0 + 1.0 / (2.0 * b * (2.0 + b))
    return (round_up(K), float(omega))


@dataclass(frozen=True)
class RelativeGaussian(Mechanism):
    """Relative Gaussian Mechanism ``q(D) + (sigma + gamma ||q(D)||) N(0, I_dim)`` (eq. 4).

    Parameters
    ----------
    sigma : float >= 0 or None
        Baseline noise standard deviation. ``None`` means the paper's recommended
        ``gamma * A / B`` (requires B > 0).
    gamma : float > 0
        Relative noise factor.
    A, B : float >= 0
        Absolute and relative constants of the query's relative L2 sensitivity (eq. 3),
        ``||q(D) - q(D')|| <= A + B ||q(D)||`` for replace-one neighbours.
    dim : int >= 1
        Output dimension d.

    Curves
    ------
    rdp(alpha) = Theorem 1 (5*) / general-sigma form; ``inf`` for alpha >= 1 + 1/(b(2+b)).
    zcdp()     = inf (the RDP curve blows up at a finite order: not zCDP).
    tcdp()     = (K, omega) with K = m^2 + d b^2 (2+b)^2 / 2, omega = 1 + 1/(2 b (2+b)).
    """

    sigma: float | None
    gamma: float
    A: float
    B: float
    dim: int
    neighbouring: str = "replace_one"

    def __post_init__(self):
        gamma = check_positive("gamma", self.gamma)
        A = check_nonnegative("A", self.A)
        B = check_nonnegative("B", self.B)
        dim = check_count("dim", self.dim, minimum=1)
        if self.sigma is None:
            if B == 0.0:
                raise ValueError("sigma must be given when B = 0 (the default sigma = gamma*A/B needs B > 0)")
            sigma = gamma * A / B
        else:
            sigma = check_nonnegative("sigma", self.sigma)
        if self.neighbouring != "replace_one":
            raise ValueError(f"neighbouring must be 'replace_one' for the RGM, got {self.neighbouring!r}")
        object.__setattr__(self, "sigma", float(sigma))
        object.__setattr__(self, "gamma", gamma)
        object.__setattr__(self, "A", A)
        object.__setattr__(self, "B", B)
        object.__setattr__(self, "dim", dim)

    @property
    def _sigma(self) -> float:
        """sigma as resolved by ``__post_init__`` (always a float there)."""
        return cast(float, self.sigma)

    @property
    def max_order(self) -> float:
        """Supremum of the orders with a finite RDP bound, ``1 + 1/(b (2 + b))``."""
        b, m = rgm_constants(self._sigma, self.gamma, self.A, self.B)
        if not (math.isfinite(b) and math.isfinite(m)):
            return 1.0
        return math.inf if b == 0.0 else 1.0 + 1.0 / (b * (2.0 + b))

    def rdp(self, orders) -> np.ndarray:
        orders = check_orders("orders", orders)
        return np.asarray(rgm_rdp_curve(orders, sigma=self._sigma, gamma=self.gamma, A=self.A,
                                        B=self.B, dim=self.dim), dtype=float)

    def zcdp(self) -> float:
        b, m = rgm_constants(self._sigma, self.gamma, self.A, self.B)
        return 0.0 if b == 0.0 else math.inf

    def tcdp(self) -> tuple[float, float]:
        return rgm_tcdp_pair(sigma=self._sigma, gamma=self.gamma, A=self.A, B=self.B, dim=self.dim)

    def sample(self, value, rng: np.random.Generator, size=None):
        """Draws of ``value + (sigma + gamma ||value||) xi``; ``value`` has last axis ``dim``.

        Float-safe: the exact real output (exact norm) rounded to a floating grid with 29 significant
        bits and spacing at least 2^(floor(log2 sigma) - 20), sampled exactly
        (:func:`dpaudit.mechanisms.float_safe.grid_relative_gaussian`; post-processing of the
        mechanism, so its curves bound the sampler)."""
        value = np.asarray(value, dtype=float)
        if value.ndim == 0 or value.shape[-1] != self.dim:
            raise ValueError(f"value must have last axis of length dim={self.dim}, got shape {value.shape}")
        return grid_relative_gaussian(value, self._sigma, self.gamma, rng, size)

    def describe(self) -> str:
        return (f"RelativeGaussian(sigma={self.sigma:g}, gamma={self.gamma:g}, A={self.A:g}, "
                f"B={self.B:g}, dim={self.dim})")
