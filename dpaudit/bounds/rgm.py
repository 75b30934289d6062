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

from dpaudit.accounting.conversions import RDP_CURVE_CONVERSIONS, epsilon_from_rdp_curve
from dpaudit.core.numeric import count_to_float, round_up, scale_by_count
from dpaudit.core.validation import (
    check_count,
    check_delta,
    check_nonnegative,
    check_orders,
)
from dpaudit.mechanisms.relative_gaussian import RelativeGaussian, rgm_finish_rdp, rgm_norm_leakage

__all__ = [
    "rgm_rdp",
    "rgm_tcdp",
    "rgm_epsilon",
    "rgm_local_sensitivity_rdp",
    "rgm_closed_form_epsilon",
    "CONVERSIONS",
]

#: conversions accepted by :func:`rgm_epsilon` (those of
#: :func:`dpaudit.accounting.conversions.epsilon_from_rdp_curve`)
CONVERSIONS = RDP_CURVE_CONVERSIONS


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
    a = check_orders("alpha", alpha)
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
    a = check_orders("alpha", alpha)
    epsilon = check_nonnegative("epsilon", epsilon)
    B = check_nonnegative("B", B)
    dim = check_count("dim", dim, minimum=1)
    ok, omu, leak = rgm_norm_leakage(a, B)
    with np.errstate(over="ignore", invalid="ignore"):
        total = epsilon / omu + count_to_float(dim, "up") * leak
    out = rgm_finish_rdp(total, ok, omu)
    return _scalar_or_array(scalar, out)


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
    delta = check_delta("delta", delta)
    steps = check_count("steps", steps, minimum=1)
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
    delta = check_delta("delta", delta)
    steps = check_count("steps", steps, minimum=1)
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
