"""The matrix-factorization (MF) mechanism: correlated-noise prefix sums (DP-FTRL's noise).

References
----------
Denisov, McMahan, Rush, Smith, Thakurta, "Improved differential privacy for SGD via optimal private
linear operators on adaptive streams", NeurIPS 2022 (arXiv:2202.08312), Sec. 2 and Thm. 2.1
(adaptive streams with lower-triangular C have the privacy of the non-adaptive Gaussian mechanism);
Choquette-Choo, McMahan, Rush, Thakurta, "Multi-epoch matrix factorization mechanisms for private
machine learning", ICML 2023 (arXiv:2211.06530), Sec. 2 (multi-participation sensitivity).

The release. For per-step contributions x (step t: the sum of the clipped records of its batch), the
mechanism releases the noisy prefix sums ``A x + B z = A (x + C^{-1} z)`` with A the prefix-sum
matrix, ``B = A C^{-1}`` and z i.i.d. N(0, sigma^2) (per step and coordinate). It is post-processing
of ``C x + z``, the Gaussian mechanism with L2 sensitivity sens(C, schema) * ``sensitivity``
(``sensitivity``: the L2 norm bound of one record's contribution to one step, e.g. the clip bound
under add/remove, twice it under replace-one; sens(C, schema) from
:func:`~dpaudit.mechanisms.mf_participation.mf_sensitivity`). Hence, exactly as for the Gaussian
mechanism (Mironov 2017, Prop. 7; Bun & Steinke 2016, Prop. 1.6; Balle & Wang 2018, Thm. 8), with
mu = sens(C) * sensitivity / sigma:

    RDP(alpha) = alpha mu^2 / 2,   rho = mu^2 / 2,   privacy_loss() = the Gaussian pair with mu,

exact whenever sens(C) is (``strategy_sensitivity.exact``), an upper bound otherwise. The
mechanism is one release of the whole run: compose it once per run (its claim already counts every
participation of a record).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dpaudit.core.numeric import round_up
from dpaudit.core.validation import check_neighbouring, check_positive, check_real_array
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.gaussian import Gaussian
from dpaudit.mechanisms.loss_pairs import PrivacyLoss, gaussian_pairs
from dpaudit.mechanisms.mf_participation import Participation, SensitivityBound, mf_sensitivity
from dpaudit.mechanisms.mf_strategies import Strategy

__all__ = ["MatrixFactorization"]


@dataclass(frozen=True, eq=False)
class MatrixFactorization(Mechanism):
    """The MF mechanism ``A (x + C^{-1} z)`` (module docstring).

    ``strategy``: a :class:`~dpaudit.mechanisms.mf_strategies.Strategy` (C, ``steps`` x ``steps``);
    ``sigma``: standard deviation of z per step and coordinate; ``participation``: the schema of one
    record's participations (default: single); ``sensitivity``: L2 bound of one record's contribution
    to one step under ``neighbouring``. ``noise_multiplier`` = sigma / sensitivity (the DP-SGD
    convention: the noise added to z, before the correlation by C^{-1}).

    Curves
    ------
    rdp(alpha)      alpha mu^2/2, mu = sens(C) sensitivity / sigma       [exact when sens(C) is]
    zcdp()          mu^2/2                                               [exact when sens(C) is]
    pure_epsilon()  inf
    privacy_loss()  the Gaussian pair with mu                            [exact when sens(C) is]
    """

    strategy: Strategy
    sigma: float
    participation: Participation = Participation()
    sensitivity: float = 1.0
    neighbouring: str = "add_remove"
    _sens: SensitivityBound = field(init=False, repr=False, compare=False, default=None)  # type: ignore[assignment]

    def __post_init__(self):
        if not isinstance(self.strategy, Strategy):
            raise ValueError(f"strategy must be a Strategy (dpaudit.mechanisms.mf_strategies), "
                             f"got {type(self.strategy).__name__}")
        object.__setattr__(self, "sigma", check_positive("sigma", self.sigma))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        if not isinstance(self.participation, Participation):
            raise ValueError(f"participation must be a Participation, got {type(self.participation).__name__}")
        self.participation.check(self.strategy.steps)
        check_neighbouring("neighbouring", self.neighbouring)
        object.__setattr__(self, "_sens", mf_sensitivity(self.strategy, self.participation))

    @property
    def steps(self) -> int:
        return self.strategy.steps

    @property
    def strategy_sensitivity(self) -> SensitivityBound:
        """sens(C, participation) with its exactness and method."""
        return self._sens

    @property
    def noise_multiplier(self) -> float:
        return self.sigma / self.sensitivity

    @property
    def effective_sensitivity(self) -> float:
        """sens(C) * sensitivity, rounded up: the L2 sensitivity of C x."""
        return round_up(self._sens.value * self.sensitivity, ulps=2)

    @property
    def mu(self) -> float:
        """The Gaussian-DP parameter effective_sensitivity / sigma."""
        return self.effective_sensitivity / self.sigma

    def gaussian(self) -> Gaussian:
        """The Gaussian mechanism ``C x + z`` this release is post-processing of."""
        return Gaussian(self.sigma, self.effective_sensitivity, self.neighbouring)

    def rdp(self, orders) -> np.ndarray:
        return self.gaussian().rdp(orders)

    def zcdp(self) -> float:
        return self.gaussian().zcdp()

    def has_zcdp_guarantee(self) -> bool:
        return True

    def privacy_loss(self) -> PrivacyLoss:
        """The Gaussian pair at mu (exact when sens(C) is); otherwise the upper pair at the bound
        and the attained lower candidate at ``strategy_sensitivity.attained`` (a pattern with equal
        contributions is a mechanism of the class)."""
        if self._sens.exact:
            return self.gaussian().privacy_loss()
        up = gaussian_pairs(self.mu)[0]
        lo = gaussian_pairs(self._sens.attained * self.sensitivity / self.sigma)[1]
        return PrivacyLoss.symmetric_pair(up, [lo] if self._sens.attained > 0 else [], "matrix-factorization")

    def pattern(self) -> tuple:
        """The participation steps (0-based) of the pattern attaining ``strategy_sensitivity.attained``."""
        p = self._sens.pattern
        return self.participation.earliest(self.steps) if p is None else p

    def release_test(self, pattern=None):
        """``(x, x_prime, llr)`` for scalar streams: x = 0 against ``sensitivity`` at the steps of
        ``pattern`` (default :meth:`pattern`); ``llr(y)`` maps released prefix sums (last axis) to
        w . (C A^{-1} y) with w = C u -- the log-likelihood ratio up to an affine map (y = A x + B z,
        so C A^{-1} y = C x + z). Its mean gap over the noise sd is ||C u|| sensitivity / sigma.

        (Not :meth:`likelihood_ratio_test`: one release here is a vector of prefix sums.)"""
        n = self.steps
        u = np.zeros(n)
        u[list(self.pattern() if pattern is None else pattern)] = 1.0
        w = self.strategy.multiply(u)
        x = np.zeros(n)
        xp = self.sensitivity * u

        def llr(y):
            y = np.asarray(y, dtype=float)
            steps_first = np.moveaxis(y, -1, 0)
            incr = np.diff(steps_first, axis=0, prepend=np.zeros((1,) + steps_first.shape[1:]))
            return np.moveaxis(self.strategy.multiply(incr), 0, -1) @ w

        return x, xp, llr

    def sample(self, value, rng: np.random.Generator, size=None):
        """Noisy prefix sums ``cumsum(x + C^{-1} z)`` for per-step contributions ``value`` (shape
        (steps,) + dims), shape ``size + value.shape``; the noise is generated as a stream."""
        v = check_real_array("value", value)
        if v.ndim == 0 or v.shape[0] != self.steps:
            raise ValueError(f"value must have {self.steps} steps along its first axis, got shape {v.shape}")
        lead = () if size is None else tuple(np.atleast_1d(size))
        stream = self.strategy.noise_stream(lead + v.shape[1:], self.sigma, rng)
        out = np.empty(lead + v.shape)
        total = np.zeros(lead + v.shape[1:])
        for t in range(self.steps):
            total = total + v[t] + stream.next()
            out[(slice(None),) * len(lead) + (t,)] = total
        return out

    def describe(self) -> str:
        return (f"MatrixFactorization({self.strategy.describe()}, sigma={self.sigma:g}, "
                f"{self.participation.describe()}, sensitivity={self.sensitivity:g}, "
                f"sens(C)={self._sens.value:.6g}{'' if self._sens.exact else ' (upper bound)'}, {self.neighbouring})")
