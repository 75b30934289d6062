"""tCDP amplification by subsampling (Bun, Dwork, Rothblum, Steinke 2018).

References
----------
Bun, Dwork, Rothblum, Steinke, "Composable and versatile privacy via truncated CDP", STOC 2018,
the subsampling theorem (cited as "Theorem 13" by the RGM paper; Bun, Dwork, Rothblum, Steinke 2018,
constants [unconfirmed]).

Statement used (the STRICT form of the hypotheses): let M be (rho, omega)-tCDP and let
M o sample_s run M on a uniformly random subset of n out of N records, s = n/N. If

    rho in (0, 0.1],  s in (0, 0.1],  log(1/s) >= 3 rho (2 + log2(1/rho)),
    omega >= log(1/s) / (2 rho) >= 3,

then M o sample_s is (13 s^2 rho, log(1/s) / (4 rho))-tCDP. (Some public code checks only
omega > 1/(2 rho), dropping the log(1/s) factor; that weaker test is not used.)

Numerical check: ``proofs_checks/tcdp_subsampling.py`` computes the exact Renyi divergences of
the without-replacement subsampled Gaussian (replace-one, 1-D sum query: a two-component
mixture against a Gaussian, both directions) by quadrature and confirms that they stay below
13 s^2 rho alpha for 1 < alpha < log(1/s)/(4 rho).
"""

from __future__ import annotations

import math

from dpaudit.core.numeric import round_down, round_up
from dpaudit.core.validation import check_positive, check_real

__all__ = ["subsampled_tcdp", "subsampling_conditions_hold"]


def subsampling_conditions_hold(rho: float, omega: float, s: float) -> bool:
    """Whether the strict hypotheses of the tCDP subsampling theorem hold (see module docstring)."""
    rho = check_positive("rho", rho)
    omega = check_positive("omega", omega, allow_inf=True)
    if not omega > 1.0:
        raise ValueError(f"omega must be > 1, got {omega}")
    s = check_real("s", s)
    if not 0.0 < s <= 1.0:
        raise ValueError(f"s must be in (0, 1], got {s}")
    if not (rho <= 0.1 and s <= 0.1):
        return False
    log_inv_s = -math.log(s)
    if not log_inv_s >= 3.0 * rho * (2.0 + math.log2(1.0 / rho)):
        return False
    threshold = log_inv_s / (2.0 * rho)
    return threshold >= 3.0 and omega >= threshold


def subsampled_tcdp(rho: float, omega: float, s: float) -> tuple[float, float] | None:
    """tCDP parameters of a (rho, omega)-tCDP mechanism run on a uniform s-fraction subsample.

    Returns ``(13 s^2 rho, log(1/s) / (4 rho))`` (first rounded UP, second rounded DOWN: both
    conservative) when the strict hypotheses hold, else ``None`` (no amplification statement;
    the caller may fall back to the unamplified (rho, omega)). Bun et al. 2018 (STOC),
    subsampling theorem; constants [unconfirmed], checked numerically for the Gaussian base
    (``proofs_checks/tcdp_subsampling.py``).

    Parameters
    ----------
    rho : float > 0
    omega : float > 1 (``inf`` allowed: a zCDP base)
    s : float in (0, 1]
        Sampling fraction n/N (without replacement).
    """
    if not subsampling_conditions_hold(rho, omega, s):
        return None
    return (round_up(13.0 * s * s * rho), round_down(-math.log(s) / (4.0 * rho)))
