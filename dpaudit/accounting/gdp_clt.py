"""Central-limit GDP *approximation* of DP-SGD (Opacus' ``gdp`` accountant). NOT A BOUND.

Bu, Dong, Long & Su, "Deep learning with Gaussian differential privacy", Harvard Data Science
Review 2020 (arXiv:1911.11607), the central-limit result for Poisson-subsampled noisy SGD (the
central limit theorem of Dong, Roth & Su 2019, Sec. 3, applied to Poisson subsampling): T steps of the Poisson-subsampled Gaussian with
sampling rate p and noise multiplier sigma are *asymptotically* mu-GDP with

    mu = p sqrt(T (e^{1/sigma^2} - 1))        (p sqrt(T) -> nu as T -> infinity),

and mu-GDP is (epsilon, delta(epsilon))-DP with the Gaussian curve
delta(epsilon) = Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2) (Dong, Roth, Su 2019,
Cor. 2.13). Opacus (``opacus.accountants.gdp``, ``analysis/gdp.py``) computes exactly this.

This is a LIMIT, not a bound: at finite T the true privacy loss can be larger (its
non-Gaussian tail is not captured), so the epsilon it gives can be smaller than the true
epsilon -- measured against the PLD accountant (``tests/accounting/test_gdp_clt.py``): q = 0.01,
sigma = 1, T = 10 gives 0.130 where the certified PLD lower end is 0.380; the MNIST setting
of Abadi et al. (q = 256/60000, sigma = 1.1, T = 1000) gives 0.541 against 0.599 (delta = 1e-5).

Hence :class:`CentralLimitGDP` is deliberately NOT an :class:`~dpaudit.accounting.base.Accountant`
and not in the accountant registry: calibration, optimizer claims, the CLI and audit verdicts
cannot pick it, and its results are returned as :class:`GDPApproximation` records whose
``is_bound`` is ``False`` and whose ``label`` says that they may under-estimate. Composition
of several kinds of steps adds mu^2 (Dong, Roth, Su 2019, Cor. 3.3, exact for unsampled
Gaussian steps, whose mu = sensitivity/sigma is used as is).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpaudit.accounting.conversions import gaussian_delta, gaussian_epsilon
from dpaudit.core.validation import (
    UnsupportedMechanismError,
    check_count,
    check_delta,
    check_epsilon,
    check_positive,
    check_probability,
)
from dpaudit.mechanisms.gaussian import Gaussian
from dpaudit.mechanisms.subsampled import PoissonSampled

__all__ = ["CentralLimitGDP", "GDPApproximation", "clt_mu_poisson", "CLT_LABEL"]

#: the label every result of this module carries
CLT_LABEL = ("central-limit GDP approximation (Bu, Dong, Long, Su 2020): NOT a bound, can under-estimate "
             "epsilon at finite T")


def clt_mu_poisson(q: float, noise_multiplier: float, steps: int) -> float:
    """mu = q sqrt(T (e^{1/sigma^2} - 1)) of Bu et al. 2020 (Poisson subsampling; an approximation).

    ``e^{1/sigma^2} - 1`` is evaluated with ``expm1`` (exact for large sigma); inf when it
    overflows (sigma below ~0.038)."""
    q = check_probability("q", q)
    sigma = check_positive("noise_multiplier", noise_multiplier)
    steps = check_count("steps", steps)
    if q == 0.0 or steps == 0:
        return 0.0
    x = sigma ** -2.0
    if x > 709.0:
        return math.inf
    return q * math.sqrt(float(steps) * math.expm1(x))


@dataclass(frozen=True)
class GDPApproximation:
    """An epsilon (or delta) from the central-limit approximation: an ESTIMATE, never a bound."""

    epsilon: float
    delta: float
    mu: float
    label: str = CLT_LABEL
    is_bound: bool = False

    def to_dict(self) -> dict:
        return {"epsilon_estimate": self.epsilon, "delta": self.delta, "mu_estimate": self.mu,
                "label": self.label, "is_bound": self.is_bound}


class CentralLimitGDP:
    """Central-limit GDP approximation of a composition of (Poisson-subsampled) Gaussian steps.

    Not an accountant (module docstring): ``compose(mechanism, count=1) -> self`` accepts
    ``Gaussian`` and ``PoissonSampled(Gaussian, q)``; :attr:`mu_estimate`,
    :meth:`epsilon_estimate` and :meth:`delta_estimate` return approximations, and
    :meth:`estimate` the labelled record.
    """

    label = CLT_LABEL

    def __init__(self):
        self._mu2 = 0.0
        self._events: list[tuple[object, int]] = []

    def compose(self, mechanism, count=1) -> CentralLimitGDP:
        count = check_count("count", count)
        if isinstance(mechanism, PoissonSampled) and isinstance(mechanism.mechanism, Gaussian):
            mu = clt_mu_poisson(mechanism.q, mechanism.mechanism.noise_multiplier, count)
        elif isinstance(mechanism, Gaussian):
            mu = mechanism.mu * math.sqrt(float(count)) if count else 0.0  # exact GDP (DRS19 Cor. 3.3)
        else:
            raise UnsupportedMechanismError(
                f"CentralLimitGDP approximates Gaussian and PoissonSampled(Gaussian) steps only, got {mechanism!r}")
        with_mu2 = mu * mu
        self._mu2 = self._mu2 + with_mu2 if math.isfinite(with_mu2) else math.inf
        if count:
            self._events.append((mechanism, count))
        return self

    @property
    def events(self) -> list[tuple[object, int]]:
        return list(self._events)

    @property
    def mu_estimate(self) -> float:
        """The approximate GDP parameter (sqrt of the summed mu^2)."""
        return math.sqrt(self._mu2)

    def epsilon_estimate(self, delta) -> float:
        """Approximate epsilon at ``delta``: the mu-GDP curve's epsilon (NOT a bound)."""
        delta = check_delta("delta", delta)
        mu = self.mu_estimate
        if mu == 0.0:
            return 0.0
        if math.isinf(mu):
            return math.inf
        return gaussian_epsilon(1.0 / mu, delta)

    def delta_estimate(self, epsilon) -> float:
        """Approximate delta at ``epsilon`` (NOT a bound)."""
        epsilon = check_epsilon("epsilon", epsilon)
        mu = self.mu_estimate
        if mu == 0.0:
            return 0.0
        if math.isinf(mu):
            return 1.0
        return min(1.0, gaussian_delta(1.0 / mu, epsilon))

    def estimate(self, delta) -> GDPApproximation:
        """The labelled record: ``epsilon`` at ``delta``, ``mu``, ``is_bound=False``."""
        return GDPApproximation(self.epsilon_estimate(delta), float(delta), self.mu_estimate)

    def __repr__(self) -> str:
        return f"CentralLimitGDP(mu_estimate={self.mu_estimate:g}; approximation, not a bound)"
