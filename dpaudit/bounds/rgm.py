"""Privacy bounds of the Relative Gaussian Mechanism (Hendrikx, Mangold, Bellet, AISTATS 2024).

References
----------
Hendrikx, Mangold, Bellet, "The Relative Gaussian Mechanism and its Application to Private
Gradient Descent", AISTATS 2024 (PMLR 238), arXiv:2308.15250: Theorem 1 (RDP, reconstructed
exact form (5*)), eq. (6) (noise of a local-sensitivity Gaussian mechanism), eqs. (44)-(48) and
Corollary 1 (conversion to (epsilon, delta)-DP).
Mironov, "Renyi differential privacy", CSF 2017, Prop. 3 (RDP -> (epsilon, delta)).
Bun, Dwork, Rothblum, Steinke, "Composable and versatile privacy via truncated CDP", STOC 2018
(tCDP: D_alpha <= rho alpha on 1 < alpha < omega).

Where the paper's printed constants could not be confirmed the forms are reconstructions,
checked numerically by ``proofs_checks/rgm_*.py`` against exact divergences (docs/theorems/rgm.md).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize_scalar

from dpaudit.core.numeric import count_to_float, round_up, scale_by_count
from dpaudit.core.validation import (
    check_count,
    check_delta,
    check_nonnegative,
    check_orders,
)
from dpaudit.mechanisms.relative_gaussian import RelativeGaussian, _finish, rgm_norm_leakage

__all__ = [
    "rgm_rdp",
    "rgm_tcdp",
    "rgm_epsilon",
    "rgm_local_sensitivity_rdp",
    "rgm_closed_form_epsilon",
    "CONVERSIONS",
    "epsilon_from_rdp_curve",
]

#: conversions accepted by :func:`rgm_epsilon`
CONVERSIONS = ("best", "mironov")


def _scalar_or_array(scalar: bool, arr: np.ndarray):
    return float(arr[0]) if scalar else arr


def rgm_rdp(alpha, *, A, B, gamma, dim, sigma=None):
    """RDP epsilon of one RGM release at order(s) ``alpha`` (Theorem 1, exact form (5*)).

    With ``sigma = gamma A / B`` (the default) and ``u = (alpha-1) B (2+B)``::

        eps(alpha) = alpha B^2 / (2 gamma^2 (1-u)) - d log(1+B) - d log(1-u) / (2 (alpha-1))

    for ``1 < alpha < 1 + 1/(B (2+B))`` and ``inf`` outside (the divergence of the radial pair is
    infinite there). Other ``sigma`` use the general form of Theorem 1 (reconstructed) with
    ``b = max(B, gamma A/sigma)`` and ``m = max(B/gamma, A/sigma)`` in place of B and B/gamma.
    Rounded up. Returns a float for scalar ``alpha``, else an array.
    """
    scalar = np.ndim(alpha) == 0
    a = check_orders(alpha, "alpha")
    mech = RelativeGaussian(sigma, gamma, A, B, dim)
    return _scalar_or_array(scalar, mech.rdp(a))


def rgm_tcdp(*, A, B, gamma, dim, sigma=None) -> tuple[float, float]:
    """``(K, omega)``-tCDP of one RGM release (from Theorem 1; derived, checked numerically).

    ``K = B^2/gamma^2 + d B^2 (2+B)^2 / 2`` and ``omega = 1 + 1/(2 B (2+B))`` for the default
    sigma (general sigma: b, m as in :func:`rgm_rdp`). ``T`` releases compose to ``(T K, omega)``.
    """
    return RelativeGaussian(sigma, gamma, A, B, dim).tcdp()


def rgm_local_sensitivity_rdp(alpha, *, epsilon, B, dim):
    """RDP of the RGM calibrated like a local-sensitivity Gaussian mechanism (eq. (6)).

    The local-sensitivity Gaussian mechanism with target ``(alpha, epsilon)`` uses noise
    ``(A + B ||q(D)||) sqrt(alpha / (2 epsilon))``, i.e. the RGM with
    ``sigma = A sqrt(alpha/(2 epsilon))`` and ``gamma = B sqrt(alpha/(2 epsilon))`` (calibrated
    separately at each order ``alpha``). Its true RDP at that order is::

        eps_RGM(alpha) = epsilon / (1-u) - d log(1+B) - d log(1-u) / (2 (alpha-1)),
        u = (alpha-1) B (2+B),

    ``inf`` when ``u >= 1``. Rounded up.
    """
    scalar = np.ndim(alpha) == 0
    a = check_orders(alpha, "alpha")
    epsilon = check_nonnegative("epsilon", epsilon)
    B = check_nonnegative("B", B)
    dim = check_count(dim, "dim", minimum=1)
    ok, omu, leak = rgm_norm_leakage(a, B)
    with np.errstate(over="ignore", invalid="ignore"):
        total = epsilon / omu + count_to_float(dim, "up") * leak
    out = _finish(total, ok, omu)
    return _scalar_or_array(scalar, out)


def _mironov(orders: np.ndarray, rdp: np.ndarray, delta: float) -> np.ndarray:
    """Mironov 2017 Prop. 3 at each order: ``rdp + log(1/delta)/(alpha-1)``."""
    with np.errstate(over="ignore", invalid="ignore"):
        return rdp + (-math.log(delta)) / (orders - 1.0)


def _convert(orders: np.ndarray, rdp: np.ndarray, delta: float, conversion: str) -> tuple[float, float]:
    """(epsilon, order) of the best order under ``conversion``."""
    if conversion == "mironov":
        eps = _mironov(orders, rdp, delta)
        eps = np.where(np.isnan(eps), math.inf, eps)
        i = int(np.argmin(eps))
        return float(eps[i]), float(orders[i])
    from dpaudit.accounting.conversions import rdp_to_dp

    eps, order = rdp_to_dp(orders, rdp, delta)
    return float(eps), float(order)


def _order_grid(max_order: float, points: int = 1500) -> np.ndarray:
    """Log-spaced orders on (1, max_order), dense near both ends."""
    if math.isinf(max_order):
        return 1.0 + np.geomspace(1e-8, 1e10, points)
    w = max_order - 1.0
    inner = w * np.geomspace(1e-9, 1.0, points, endpoint=False)
    edge = w * (1.0 - np.geomspace(1e-12, 1e-2, 60))
    grid = 1.0 + np.unique(np.concatenate([inner, edge]))
    return grid[(grid > 1.0) & (grid < max_order)]


def epsilon_from_rdp_curve(curve, delta: float, *, max_order: float = math.inf,
                           conversion: str = "best") -> tuple[float, float]:
    """Minimise the (epsilon, delta) conversion of an RDP curve over continuous orders.

    ``curve(orders) -> array`` is an RDP upper bound on ``1 < alpha < max_order``. A log-spaced
    grid of 1,500+ orders is searched first, then a bounded Brent refinement runs between the
    grid neighbours of the best order. Every candidate is a valid bound at its own order, so
    the optimisation affects tightness only. Returns ``(epsilon, order)``, epsilon rounded up
    (``inf`` with order ``nan`` when no order gives a finite bound).

    ``conversion``: ``"best"`` uses the accounting layer's ``rdp_to_dp`` (best of the valid
    conversions at each order); ``"mironov"`` uses Mironov 2017 Prop. 3.
    """
    if conversion not in CONVERSIONS:
        raise ValueError(f"conversion must be one of {CONVERSIONS}, got {conversion!r}")
    if max_order <= 1.0:
        return math.inf, math.nan
    grid = _order_grid(max_order)
    best_eps, best_order = _convert(grid, np.atleast_1d(curve(grid)), delta, conversion)
    if not math.isfinite(best_eps):
        return math.inf, math.nan
    i = int(np.searchsorted(grid, best_order))
    lo = grid[max(i - 1, 0)]
    hi = grid[min(i + 1, grid.size - 1)]
    if hi > lo:
        def objective(t):
            order = np.array([1.0 + math.exp(t)])
            e, _ = _convert(order, np.atleast_1d(curve(order)), delta, conversion)
            return e if math.isfinite(e) else 1e300

        res = minimize_scalar(objective, bounds=(math.log(lo - 1.0), math.log(hi - 1.0)),
                              method="bounded", options={"xatol": 1e-10})
        order = 1.0 + math.exp(float(res.x))
        if order < max_order:
            e, _ = _convert(np.array([order]), np.atleast_1d(curve(np.array([order]))), delta, conversion)
            if e < best_eps:
                best_eps, best_order = e, order
    return round_up(best_eps), best_order


def rgm_epsilon(delta, *, A, B, gamma, dim, sigma=None, steps=1, conversion="best",
                return_details=False):
    """(epsilon, delta)-DP epsilon of ``steps`` RGM releases (numerical route of Section 3).

    Minimises the conversion of ``steps * eps(alpha)`` (Theorem 1, :func:`rgm_rdp`) over the
    continuous admissible range ``1 < alpha < 1 + 1/(b (2+b))`` with
    :func:`epsilon_from_rdp_curve` (log grid, then bounded Brent).

    Parameters
    ----------
    delta : float in (0, 1)
    A, B, gamma, dim, sigma : see :class:`dpaudit.mechanisms.relative_gaussian.RelativeGaussian`
    steps : int >= 1
        Number of adaptively composed releases (RDP composition, order by order).
    conversion : {"best", "mironov"}
        ``"best"``: the accounting layer's ``rdp_to_dp`` (the best of the valid conversions at
        each order); ``"mironov"``: Mironov Prop. 3 (eq. 45), the conversion the paper uses
        (the reference values in docs/theorems/rgm.md are computed with it).
    return_details : bool
        If True return ``(epsilon, order, conversion)`` instead of ``epsilon``.

    Returns
    -------
    epsilon rounded up (``inf`` when no order gives a finite bound).
    """
    delta = check_delta(delta)
    steps = check_count(steps, "steps", minimum=1)
    if conversion not in CONVERSIONS:
        raise ValueError(f"conversion must be one of {CONVERSIONS}, got {conversion!r}")
    mech = RelativeGaussian(sigma, gamma, A, B, dim)

    def curve(orders):
        return np.atleast_1d(scale_by_count(steps, mech.rdp(orders)))

    eps, order = epsilon_from_rdp_curve(curve, delta, max_order=mech.max_order, conversion=conversion)
    return (eps, order, conversion) if return_details else eps


def rgm_closed_form_epsilon(delta, *, A, B, gamma, dim, sigma=None, steps=1):
    """Closed-form (epsilon, delta) of Corollary 1 (eqs. 44-48), only where it is a valid bound.

    With ``(K, omega)`` the tCDP pair of :func:`rgm_tcdp` (``K`` multiplied by ``steps``) and
    ``L = log(1/delta)``, Mironov's conversion of ``alpha K`` at ``alpha* = 1 + sqrt(L/K)`` gives::

        epsilon = K + 2 sqrt(K L).

    This is an upper bound only if ``alpha*`` is admissible (``alpha* <= omega``), i.e.
    ``K >= 4 b^2 (2+b)^2 L``. The paper's hypothesis "d >= 8 log(1/delta) or
    gamma <= 1/(2 (2+B) sqrt(log(1/delta)))" implies this condition (each term of K alone
    reaches it). When the condition fails this function raises ``ValueError`` instead of
    returning a number that can be below the true epsilon (counterexample: B=1e-3, gamma=0.1,
    d=10, delta=1e-5 gives 0.07446 < 0.07478 from :func:`rgm_epsilon`); use :func:`rgm_epsilon`.
    """
    delta = check_delta(delta)
    steps = check_count(steps, "steps", minimum=1)
    mech = RelativeGaussian(sigma, gamma, A, B, dim)
    K1, omega = mech.tcdp()
    if math.isinf(K1):
        return math.inf
    K = scale_by_count(steps, K1)
    L = (-math.log(delta))
    if K == 0.0:
        return 0.0
    if math.isinf(K):
        return math.inf
    alpha_star = 1.0 + math.sqrt(L / K)
    if alpha_star > omega:
        raise ValueError(
            "the closed form of Corollary 1 is not a valid bound here: its optimal order "
            f"1 + sqrt(log(1/delta)/K) = {alpha_star:.6g} exceeds omega = {omega:.6g} "
            "(needs dim >= 8 log(1/delta) or gamma <= 1/(2(2+B) sqrt(log(1/delta)))); "
            "use rgm_epsilon for the numerical bound"
        )
    return round_up(K + 2.0 * math.sqrt(K * L))
