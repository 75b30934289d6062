"""The sinh-normal mechanism of truncated CDP (Bun, Dwork, Rothblum, Steinke 2018).

References
----------
Bun, Dwork, Rothblum, Steinke, "Composable and versatile privacy via truncated CDP",
STOC 2018 (the sinh-normal mechanism; Bun, Dwork, Rothblum, Steinke 2018).

    M(x) = f(x) + A arsinh(Z / A),   Z ~ N(0, D^2 / (2 rho)),   A = 8 D omega,

for a real-valued query f with |f(x) - f(x')| <= D. If 1 < 1/sqrt(rho) <= 8 omega, M is
(16 rho, omega)-tCDP: D_alpha(M(x) || M(x')) <= 16 rho alpha for 1 < alpha < omega.

These constants (16 rho, A = 8 D omega, 1 < 1/sqrt(rho) <= 8 omega) could not be confirmed against the
text of the STOC paper (its theorem number is not cited for that reason). They are checked numerically by
``proofs_checks/sinh_normal_tcdp.py``: the Renyi divergence computed by quadrature of the output
densities (change of variables z = A sinh(y/A)) over the whole order range 1 < alpha < omega,
for several (rho, omega) including the boundary 1/sqrt(rho) = 8 omega, stays below 16 rho alpha
(measured max D_alpha / (rho alpha) = 1.64, at (rho, omega) = (0.01, 1.25)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.core.numeric import round_up
from dpaudit.core.validation import check_neighbouring, check_orders, check_positive
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.float_safe import grid_sinh_normal

__all__ = ["SinhNormal"]


@dataclass(frozen=True)
class SinhNormal(Mechanism):
    """Sinh-normal mechanism with tCDP parameters ``(rho, omega)`` and query ``sensitivity`` D.

    ``rho > 0`` and ``omega > 1`` define the noise (``Z ~ N(0, D^2/(2 rho))``, ``A = 8 D omega``)
    for any values; the tCDP guarantee exists only when ``1 < 1/sqrt(rho) <= 8 omega``
    (:attr:`valid`). Outside that range there is no guarantee: ``tcdp()`` returns
    ``(inf, omega)`` and ``rdp`` is ``inf`` everywhere (never an exception: API convention).

    The guarantee is for a real-valued query with ``|f(x) - f(x')| <= sensitivity`` for all
    neighbours of the relation ``neighbouring`` (default add/remove; the statement depends only
    on that sensitivity); a vector query is handled coordinate by coordinate and must be
    composed.

    Curves
    ------
    tcdp()      = (16 rho, omega)                      when valid
    rdp(alpha)  = 16 rho alpha for alpha < omega, inf for alpha >= omega
    zcdp()      = inf  (not zCDP for any rho: the guarantee is truncated at omega)
    """

    rho: float
    omega: float
    sensitivity: float = 1.0
    neighbouring: str = "add_remove"

    def __post_init__(self):
        object.__setattr__(self, "rho", check_positive("rho", self.rho))
        omega = check_positive("omega", self.omega)
        if not omega > 1.0:
            raise ValueError(f"omega must be > 1, got {omega}")
        object.__setattr__(self, "omega", omega)
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        check_neighbouring("neighbouring", self.neighbouring)

    @property
    def valid(self) -> bool:
        """Whether the tCDP hypothesis ``1 < 1/sqrt(rho) <= 8 omega`` holds."""
        inv = 1.0 / math.sqrt(self.rho)
        return 1.0 < inv <= 8.0 * self.omega

    @property
    def sigma(self) -> float:
        """Standard deviation of the Gaussian Z: D / sqrt(2 rho)."""
        return self.sensitivity / math.sqrt(2.0 * self.rho)

    @property
    def A(self) -> float:
        """The arsinh scale A = 8 D omega."""
        return 8.0 * self.sensitivity * self.omega

    def tcdp(self) -> tuple[float, float]:
        if not self.valid:
            return (math.inf, self.omega)
        return (round_up(16.0 * self.rho), self.omega)

    def rdp(self, orders) -> np.ndarray:
        orders = check_orders("orders", orders)
        out = np.full(orders.shape, math.inf)
        if self.valid:
            below = orders < self.omega
            out[below] = round_up(16.0 * self.rho * orders[below])
        return out

    def zcdp(self) -> float:
        return math.inf

    def sample(self, value, rng: np.random.Generator, size=None):
        """``value + A arsinh(Z/A)`` draws, shape ``size + value.shape``, float-safe: the exact real
        output rounded to the grid of min(sigma, A), sampled exactly
        (:func:`dpaudit.mechanisms.float_safe.grid_sinh_normal`; post-processing of the mechanism)."""
        return grid_sinh_normal(value, self.sigma, self.A, rng, size)

    def describe(self) -> str:
        return f"SinhNormal(rho={self.rho:g}, omega={self.omega:g}, sensitivity={self.sensitivity:g})"
