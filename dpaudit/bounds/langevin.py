"""Noisy gradient descent with a hidden state (Chourasia, Ye, Shokri, NeurIPS 2021).

References
----------
Chourasia, Ye, Shokri, "Differential Privacy Dynamics of Langevin Diffusion and Noisy Gradient
Descent", NeurIPS 2021, arXiv:2102.05855: Algorithm 1, Theorem 1 (RDP of the last iterate),
Theorem 2 (lower bound), Theorem 3 (utility settings). Formulas as in docs/theorems/langevin.md (the lambda in Theorem 1's exponent is reconstructed; checked numerically in
``proofs_checks/langevin_theorem1.py``).
Mironov, "Renyi differential privacy", CSF 2017, Prop. 3 (conversion used by Theorem 3).

Algorithm (replace-one neighbours, dataset size n, per-record gradient sensitivity S_g)::

    theta_0 ~ Proj_C(N(0, (2 sigma^2 / lambda) I))
    theta_{k+1} = Proj_C(theta_k - eta grad L_D(theta_k) + sqrt(2 eta sigma^2) N(0, I)),  k < K
    release theta_K only.

Every RDP curve here is linear in the order, ``rho * alpha``; ``rho`` is exposed as the zCDP
parameter of :class:`NoisyGDLastIterate`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from dpaudit.accounting.claim import PrivacyClaim
from dpaudit.accounting.conversions import epsilon_from_rdp_curve, gaussian_epsilon_lower, gdp_epsilon, zcdp_delta
from dpaudit.core.numeric import TINY, count_to_float, next_down, product_ratio, round_down, round_up
from dpaudit.core.validation import (
    check_count,
    check_delta,
    check_nonnegative,
    check_orders,
    check_positive,
)
from dpaudit.mechanisms.base import Mechanism, rdp_from_zcdp

__all__ = [
    "langevin_rdp",
    "langevin_lower_rdp",
    "linear_gaussian_rdp",
    "composition_rdp",
    "langevin_rho",
    "langevin_lower_rho",
    "linear_gaussian_rho",
    "composition_rho",
    "langevin_epsilon",
    "langevin_lower_epsilon",
    "linear_gaussian_epsilon",
    "composition_epsilon",
    "NoisyGDLastIterate",
    "LangevinSettings",
    "langevin_utility_settings",
]

BOUNDS = ("theorem1", "composition", "best")


# ----------------------------------------------------------------------------- validation
def _common(sensitivity, step_size, sigma, n, steps):
    return (
        check_nonnegative("sensitivity", sensitivity),
        check_positive("step_size", step_size),
        check_positive("sigma", sigma),
        check_count("n", n, minimum=1),
        check_count("steps", steps, minimum=0),
    )


def _curve(alpha, rho: float, rounding):
    """``rho * alpha`` at scalar or array ``alpha`` (validated), rounded by ``rounding``."""
    scalar = np.ndim(alpha) == 0
    a = check_orders("alpha", alpha)
    if rho == 0.0:  # exact (no steps or zero sensitivity): nothing to round
        out = np.zeros(a.shape)
    else:
        out = np.atleast_1d(rounding(rdp_from_zcdp(rho, a)))
        if rounding is round_down:  # a lower bound whose product overflowed: the largest float
            out = np.where(np.isfinite(a), np.minimum(out, np.finfo(float).max), out)
    return float(out[0]) if scalar else out


# ----------------------------------------------------------------------------- slopes (rho)
def langevin_rho(*, sensitivity, strong_convexity, step_size, sigma, n, steps, smoothness=None) -> float:
    """Slope of Theorem 1: ``S_g^2 / (lambda sigma^2 n^2) * (1 - exp(-lambda eta K / 2))``.

    Hypotheses (Theorem 1): each loss is ``lambda``-strongly convex and ``beta``-smooth,
    ``eta < 1/beta`` and ``theta_0 ~ N(0, (2 sigma^2/lambda) I)``. When ``smoothness`` (beta) is
    given and ``eta >= 1/beta`` no guarantee exists and ``inf`` is returned; ``lambda > beta``
    is impossible and raises ``ValueError``. Without ``smoothness`` the caller asserts
    ``eta < 1/beta``. Rounded up.
    """
    S, eta, sigma, n, K = _common(sensitivity, step_size, sigma, n, steps)
    lam = check_positive("strong_convexity", strong_convexity)
    if smoothness is not None:
        beta = check_positive("smoothness", smoothness)
        if lam > beta:
            raise ValueError(f"strong_convexity must be <= smoothness, got {lam} > {beta}")
        if eta * beta >= 1.0:
            return math.inf
    if S == 0.0 or K == 0:
        return 0.0
    # lambda eta K / 2 as a directed product: a subnormal intermediate (eta ~ 1e-308) would lose
    # its relative precision before being multiplied by a large K
    growth = round_up(-math.expm1(-product_ratio([lam, eta, K], [2], "up")), 4)
    return product_ratio([S, S, growth], [lam, sigma, sigma, n, n], "up")


def composition_rho(*, sensitivity, step_size, sigma, n, steps) -> float:
    """Slope of the composition baseline (all iterates released, Chourasia, Ye, Shokri 2021; docs/theorems/langevin.md).

    Each step is a Gaussian mechanism with sensitivity ``eta S_g / n`` and variance
    ``2 eta sigma^2``; K steps compose to ``eta K S_g^2 / (4 sigma^2 n^2)``. Needs neither
    convexity nor smoothness. Rounded up.
    """
    S, eta, sigma, n, K = _common(sensitivity, step_size, sigma, n, steps)
    if S == 0.0 or K == 0:
        return 0.0
    return product_ratio([eta, K, S, S], [4, sigma, sigma, n, n], "up")


def langevin_lower_rho(*, sensitivity, step_size, sigma, n, steps) -> float:
    """Slope of Theorem 2's lower bound: ``S_g^2 / (4 sigma^2 n^2) * (1 - exp(-eta K))``.

    Theorem 2 (stated for ``eta < 1``): on the squared-loss instance the last iterate's
    divergence is at least this times alpha. ``step_size >= 1`` raises ``ValueError``.
    Rounded down.
    """
    S, eta, sigma, n, K = _common(sensitivity, step_size, sigma, n, steps)
    if eta >= 1.0:
        raise ValueError(f"step_size must be in (0, 1) for Theorem 2, got {eta}")
    if S == 0.0 or K == 0:
        return 0.0  # exactly: no steps or no sensitivity (round_down(0) would be negative)
    growth = round_down(-math.expm1(-product_ratio([eta, K], [], "down")), 4)
    # a lower bound on a divergence: never below 0, and the largest float when the exact value
    # exceeds the float range
    return max(product_ratio([S, S, growth], [4, sigma, sigma, n, n], "down"), 0.0)


def linear_gaussian_moments(*, sensitivity, step_size, sigma, n, steps, init_variance=0.0):
    """``(||mu_K - mu'_K||, s_K^2)`` of the squared-loss instance (Chourasia, Ye, Shokri 2021; docs/theorems/langevin.md).

    Loss ``0.5 ||theta - x||^2`` (lambda = beta = 1), neighbours with ``||xbar - xbar'|| = S_g/n``,
    ``theta_0 ~ N(0, init_variance I)`` shared by both runs (0: deterministic start). Then
    ``theta_K ~ N(mu_K, s_K^2 I)`` with ``mu_K = xbar (1 - r^K)``, ``r = 1 - eta``, and
    ``s_K^2 = r^{2K} v_0 + 2 sigma^2 (1 - r^{2K}) / (2 - eta)``. Requires ``0 < eta < 2``.
    """
    S, eta, sigma, n, K = _common(sensitivity, step_size, sigma, n, steps)
    v0 = check_nonnegative("init_variance", init_variance)
    if eta >= 2.0:
        raise ValueError(f"step_size must be in (0, 2) for the squared-loss instance, got {eta}")
    shift_unit, var_unit = _linear_gaussian_unit_moments(S, eta, sigma, n, K, v0)
    # (the products below may under/overflow for extreme sigma: the scale-free ratio used by
    # linear_gaussian_rho / _epsilon is computed from the unit moments instead)
    return shift_unit * sigma, var_unit * sigma * sigma


def _linear_gaussian_unit_moments(S, eta, sigma, n, K, v0):
    """``(shift / sigma, var / sigma^2)`` of :func:`linear_gaussian_moments`, computed without
    forming sigma^2 (which under/overflows for sigma outside ~[1e-154, 1e154]); counts may be
    beyond the float range."""
    Kf = count_to_float(K, "down")
    if K == 0:
        one_minus_rk, r2k, one_minus_r2k = 0.0, 1.0, 0.0
    elif eta < 1.0:
        lr = math.log1p(-eta)
        one_minus_rk = -math.expm1(Kf * lr)
        r2k = math.exp(2.0 * Kf * lr)
        one_minus_r2k = -math.expm1(2.0 * Kf * lr)
    else:
        r = 1.0 - eta  # |r| < 1
        rk = 0.0 if Kf > 1e6 else (abs(r) ** Kf) * (1.0 if (r >= 0 or K % 2 == 0) else -1.0)
        one_minus_rk = 1.0 - rk
        r2k = rk * rk
        one_minus_r2k = 1.0 - r2k
    shift_unit = product_ratio([S, one_minus_rk], [sigma, n], "up") if one_minus_rk > 0 else 0.0
    with np.errstate(over="ignore"):
        v0_unit = float(np.float64(v0) / sigma / sigma)
    var_unit = r2k * v0_unit + 2.0 * one_minus_r2k / (2.0 - eta)
    return shift_unit, var_unit


def linear_gaussian_rho(*, sensitivity, step_size, sigma, n, steps, init_variance=0.0) -> float:
    """Exact slope ``||mu_K - mu'_K||^2 / (2 s_K^2)`` of the last iterate on the instance of Theorem 2.

    With a deterministic start this is
    ``S_g^2 (2 - eta) / (4 sigma^2 n^2) * (1 - (1-eta)^K) / (1 + (1-eta)^K)``. Not rounded
    (an exact value, not a bound); ``0`` when K = 0.
    """
    mu = _linear_gaussian_mu(sensitivity, step_size, sigma, n, steps, init_variance)
    return mu * mu / 2.0


def _linear_gaussian_mu(sensitivity, step_size, sigma, n, steps, init_variance) -> float:
    """The GDP parameter ||mu_K - mu'_K|| / s_K of the instance of Theorem 2 (scale-free evaluation)."""
    S, eta, sigma, n, K = _common(sensitivity, step_size, sigma, n, steps)
    v0 = check_nonnegative("init_variance", init_variance)
    if eta >= 2.0:
        raise ValueError(f"step_size must be in (0, 2) for the squared-loss instance, got {eta}")
    shift_unit, var_unit = _linear_gaussian_unit_moments(S, eta, sigma, n, K, v0)
    if shift_unit == 0.0:
        return 0.0
    return shift_unit / math.sqrt(var_unit)


# ----------------------------------------------------------------------------- RDP curves
def langevin_rdp(alpha, *, sensitivity, strong_convexity, step_size, sigma, n, steps, smoothness=None):
    """Theorem 1: RDP of the last iterate of noisy GD, for every order alpha > 1::

        eps(alpha, K) = alpha S_g^2 / (lambda sigma^2 n^2) * (1 - exp(-lambda eta K / 2))

    (the lambda in the exponent per Chourasia, Ye, Shokri 2021; docs/theorems/langevin.md). Hypotheses: lambda-strongly convex,
    beta-smooth losses, ``eta < 1/beta`` (``inf`` when ``smoothness`` is given and violated),
    ``theta_0 ~ N(0, (2 sigma^2/lambda) I)``. Converges to ``alpha S_g^2/(lambda sigma^2 n^2)``
    as K grows. Vectorised over ``alpha``; rounded up.
    """
    rho = langevin_rho(sensitivity=sensitivity, strong_convexity=strong_convexity, step_size=step_size,
                       sigma=sigma, n=n, steps=steps, smoothness=smoothness)
    return _curve(alpha, rho, round_up)


def langevin_lower_rdp(alpha, *, sensitivity, step_size, sigma, n, steps):
    """Theorem 2: ``alpha S_g^2 / (4 sigma^2 n^2) * (1 - exp(-eta K))`` (eta < 1), rounded down.

    A lower bound: the squared-loss instance of Theorem 2 started at 0 has at least this divergence.
    """
    rho = langevin_lower_rho(sensitivity=sensitivity, step_size=step_size, sigma=sigma, n=n, steps=steps)
    return _curve(alpha, rho, round_down)


def linear_gaussian_rdp(alpha, *, sensitivity, step_size, sigma, n, steps, init_variance=0.0):
    """Exact Renyi divergence of the last iterate on the squared-loss instance of Theorem 2 (docs/theorems/langevin.md).

    ``alpha ||mu_K - mu'_K||^2 / (2 s_K^2)`` from the closed-form Gaussian law of theta_K (equal
    covariances); with ``init_variance = 0`` (Theorem 2's start)::

        alpha S_g^2 (2 - eta) / (4 sigma^2 n^2) * (1 - (1-eta)^K) / (1 + (1-eta)^K).

    ``init_variance = 2 sigma^2`` gives Theorem 1's start for this instance (lambda = 1).
    Not rounded.
    """
    rho = linear_gaussian_rho(sensitivity=sensitivity, step_size=step_size, sigma=sigma, n=n, steps=steps,
                              init_variance=init_variance)
    return _curve(alpha, rho, lambda x: x)


def composition_rdp(alpha, *, sensitivity, step_size, sigma, n, steps):
    """All iterates released (composition of K Gaussian steps, docs/theorems/langevin.md): ``alpha eta K S_g^2 / (4 sigma^2 n^2)``, rounded up."""
    rho = composition_rho(sensitivity=sensitivity, step_size=step_size, sigma=sigma, n=n, steps=steps)
    return _curve(alpha, rho, round_up)


# ----------------------------------------------------------------------------- (eps, delta)
def _rho_to_epsilon(rho: float, delta: float) -> float:
    """(epsilon, delta) of the RDP curve ``rho * alpha`` through ``rdp_to_dp`` on continuous orders."""
    if math.isinf(rho):
        return math.inf
    if rho == 0.0:
        return 0.0

    eps, _ = epsilon_from_rdp_curve(lambda a: rdp_from_zcdp(rho, a), delta)
    return eps


def langevin_epsilon(delta, *, sensitivity, strong_convexity, step_size, sigma, n, steps, smoothness=None):
    """(epsilon, delta)-DP of the last iterate from Theorem 1 (best valid RDP conversion, rounded up)."""
    delta = check_delta("delta", delta)
    return _rho_to_epsilon(langevin_rho(sensitivity=sensitivity, strong_convexity=strong_convexity,
                                        step_size=step_size, sigma=sigma, n=n, steps=steps,
                                        smoothness=smoothness), delta)


def composition_epsilon(delta, *, sensitivity, step_size, sigma, n, steps):
    """(epsilon, delta)-DP when every iterate is released (the composition bound through the RDP conversion)."""
    delta = check_delta("delta", delta)
    return _rho_to_epsilon(composition_rho(sensitivity=sensitivity, step_size=step_size, sigma=sigma, n=n,
                                           steps=steps), delta)


def linear_gaussian_epsilon(delta, *, sensitivity, step_size, sigma, n, steps, init_variance=0.0):
    """Exact (epsilon, delta) curve of the last iterate on the instance of Theorem 2.

    theta_K and theta'_K are Gaussians with equal covariance, so the pair is a Gaussian
    mechanism with ``mu_GDP = ||mu_K - mu'_K|| / s_K``; the exact epsilon(delta) is Balle-Wang's
    (``gaussian_epsilon(1, delta, sensitivity=mu_GDP)`` from the accounting layer).
    """
    delta = check_delta("delta", delta)
    mu = _linear_gaussian_mu(sensitivity, step_size, sigma, n, steps, init_variance)
    if mu == 0.0:
        return 0.0

    return float(gdp_epsilon(mu, delta)) if math.isfinite(mu) else math.inf


def langevin_lower_epsilon(delta, *, sensitivity, step_size, sigma, n, steps):
    """Lower bound on the epsilon(delta) of noisy GD's last iterate (Theorem 2's instance).

    The instance's last iterates form a Gaussian pair with ``mu_GDP^2 = 2 rho_exact >= 2 rho_lower``;
    the exact epsilon(delta) of a Gaussian increases with mu, so the Balle-Wang epsilon at
    ``mu = sqrt(2 rho_lower)`` is a lower bound (rounded down).
    """
    delta = check_delta("delta", delta)
    rho = langevin_lower_rho(sensitivity=sensitivity, step_size=step_size, sigma=sigma, n=n, steps=steps)
    if rho == 0.0:
        return 0.0

    # a certified lower bound on the Balle-Wang root at mu = sqrt(2 rho) rounded down (the
    # upper-bound root gaussian_epsilon would not do: it errs high)
    mu = next_down(math.sqrt(2.0 * rho))
    if not mu > 0.0:
        return 0.0
    return gaussian_epsilon_lower(mu, 1.0, delta)


# ----------------------------------------------------------------------------- mechanism
@dataclass(frozen=True)
class NoisyGDLastIterate(Mechanism):
    """Noisy GD releasing only its last iterate, as a mechanism the RDP accountant accepts.

    Parameters
    ----------
    sensitivity : float >= 0
        Per-record gradient sensitivity S_g (``2 * Lipschitz`` for a Lipschitz loss).
    strong_convexity, smoothness : float > 0
        lambda <= beta of every per-record loss (Theorem 1's hypotheses).
    step_size : float > 0
        eta; Theorem 1 needs ``eta < 1/beta`` (otherwise its curve is ``inf``).
    sigma : float > 0
        Langevin temperature: per-step noise ``sqrt(2 eta sigma^2) N(0, I)``.
    n : int >= 1
        Dataset size (replace-one neighbours).
    steps : int >= 0
        Number of noisy GD steps K.
    bound : {"theorem1", "composition", "best"}
        Which valid curve to state: Theorem 1 (hidden state), the composition baseline (valid
        whatever the loss), or their pointwise minimum.

    Curves
    ------
    rdp(alpha) = rho * alpha, zcdp() = rho (the RDP curves are linear in alpha), tcdp() = (rho, inf).
    """

    sensitivity: float
    strong_convexity: float
    smoothness: float
    step_size: float
    sigma: float
    n: int
    steps: int
    bound: str = "best"
    neighbouring: str = "replace_one"

    def __post_init__(self):
        if self.bound not in BOUNDS:
            raise ValueError(f"bound must be one of {BOUNDS}, got {self.bound!r}")
        if self.neighbouring != "replace_one":
            raise ValueError(f"neighbouring must be 'replace_one', got {self.neighbouring!r}")
        S, eta, sigma, n, K = _common(self.sensitivity, self.step_size, self.sigma, self.n, self.steps)
        lam = check_positive("strong_convexity", self.strong_convexity)
        beta = check_positive("smoothness", self.smoothness)
        if lam > beta:
            raise ValueError(f"strong_convexity must be <= smoothness, got {lam} > {beta}")
        for name, val in (("sensitivity", S), ("step_size", eta), ("sigma", sigma), ("n", n), ("steps", K),
                          ("strong_convexity", lam), ("smoothness", beta)):
            object.__setattr__(self, name, val)

    def _kw(self):
        return dict(sensitivity=self.sensitivity, step_size=self.step_size, sigma=self.sigma, n=self.n,
                    steps=self.steps)

    def theorem1_rho(self) -> float:
        """Theorem 1's slope (``inf`` when ``step_size >= 1/smoothness``)."""
        return langevin_rho(strong_convexity=self.strong_convexity, smoothness=self.smoothness, **self._kw())

    def composition_rho(self) -> float:
        """The composition baseline's slope."""
        return composition_rho(**self._kw())

    def zcdp(self) -> float:
        if self.bound == "theorem1":
            return self.theorem1_rho()
        if self.bound == "composition":
            return self.composition_rho()
        return min(self.theorem1_rho(), self.composition_rho())

    def has_zcdp_guarantee(self) -> bool:
        # the composition baseline is a composition of Gaussians (always zCDP); Theorem 1 alone
        # holds only under its hypothesis step_size < 1/smoothness
        return self.bound != "theorem1" or self.step_size * self.smoothness < 1.0

    def rdp(self, orders) -> np.ndarray:
        orders = check_orders("orders", orders)
        return rdp_from_zcdp(self.zcdp(), orders)

    def epsilon(self, delta: float) -> float:
        """(epsilon, delta)-DP of the last iterate under the chosen bound (rounded up)."""
        return _rho_to_epsilon(self.zcdp(), check_delta("delta", delta))

    def claim(self):
        """A :class:`~dpaudit.accounting.claim.PrivacyClaim` for this run of noisy GD."""

        rho = self.zcdp()

        def delta_fn(epsilon):
            if math.isinf(rho):
                return 1.0
            if rho == 0.0:
                return 0.0

            return min(1.0, float(zcdp_delta(rho, epsilon)))

        return PrivacyClaim(
            neighbouring="replace_one",
            description=self.describe(),
            epsilon_fn=self.epsilon,
            delta_fn=delta_fn,
            rdp_fn=self.rdp,
            rho=rho,
            source=f"langevin-{self.bound}",
            details={"theorem1_rho": self.theorem1_rho(), "composition_rho": self.composition_rho()},
        )

    def describe(self) -> str:
        return (f"NoisyGDLastIterate(S_g={self.sensitivity:g}, lambda={self.strong_convexity:g}, "
                f"beta={self.smoothness:g}, eta={self.step_size:g}, sigma={self.sigma:g}, n={self.n}, "
                f"K={self.steps}, bound={self.bound})")


# ----------------------------------------------------------------------------- Theorem 3
class LangevinSettings(NamedTuple):
    """Theorem 3 hyper-parameters and the quantities that make them (epsilon, delta)-DP."""

    step_size: float
    sigma: float
    steps: int
    sensitivity: float  #: S_g = 2 L
    order: float  #: Mironov order 1 + 2 log(1/delta)/epsilon at which the limit curve gives epsilon


def langevin_utility_settings(epsilon, delta, *, lipschitz, smoothness, strong_convexity, n, dim) -> LangevinSettings:
    """Theorem 3's settings: ``eta = lambda/(2 beta^2)``,
    ``sigma^2 = 8 L^2 (epsilon + 2 log(1/delta)) / (lambda epsilon^2 n^2)``,
    ``K* = ceil((2 beta^2/lambda^2) log(n^2 epsilon^2 / (4 log(1/delta) d)))``.

    With ``S_g = 2L`` the K -> inf slope of Theorem 1 is ``epsilon^2 / (2 (epsilon + 2 log(1/delta)))``,
    and Mironov's conversion at ``alpha = 1 + 2 log(1/delta)/epsilon`` gives exactly epsilon
    (Chourasia, Ye, Shokri 2021; docs/theorems/langevin.md); every finite K gives less. ``sigma`` is rounded up (more noise).
    Raises ``ValueError`` when ``n^2 epsilon^2 <= 4 log(1/delta) d`` (K* would not be positive).
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta("delta", delta)
    L = check_positive("lipschitz", lipschitz)
    beta = check_positive("smoothness", smoothness)
    lam = check_positive("strong_convexity", strong_convexity)
    n = check_count("n", n, minimum=1)
    d = check_count("dim", dim, minimum=1)
    if lam > beta:
        raise ValueError(f"strong_convexity must be <= smoothness, got {lam} > {beta}")
    log_inv_delta = -math.log(delta)
    n_f = count_to_float(n, "down")
    # log of n^2 epsilon^2 / (4 log(1/delta) d), in log space (n and d may exceed the float range)
    log_ratio = 2.0 * (math.log(n) + math.log(epsilon)) - math.log(4.0 * log_inv_delta) - math.log(d)
    if log_ratio <= 0.0:
        raise ValueError(
            f"n must satisfy n^2 epsilon^2 > 4 log(1/delta) dim for Theorem 3 (got ratio {math.exp(log_ratio):.4g})")
    eta = (lam / beta) / (2.0 * beta)  # (beta * beta under/overflows)
    # sigma = L sqrt(8 (epsilon + 2 log(1/delta)) / lambda) / (epsilon n), without squaring L/(epsilon n)
    sigma = (L / epsilon / n_f) * (math.sqrt(8.0 * (epsilon + 2.0 * log_inv_delta)) / math.sqrt(lam))
    if not (0.0 < eta < math.inf and sigma < math.inf):
        raise ValueError(f"strong_convexity={lam:g} / smoothness={beta:g}: Theorem 3's step size {eta:g} or "
                         f"noise {sigma:g} lies beyond the float range")
    factor = 2.0 * (beta / lam) * (beta / lam)
    if math.isfinite(factor * log_ratio):
        steps = math.ceil(factor * log_ratio)
    else:  # beyond the float range: exact rational arithmetic on the float inputs
        steps = math.ceil(2 * (Fraction(beta) / Fraction(lam)) ** 2 * Fraction(log_ratio))
    return LangevinSettings(step_size=eta, sigma=max(round_up(sigma), TINY), steps=int(steps),
                            sensitivity=2.0 * L, order=1.0 + 2.0 * log_inv_delta / epsilon)
