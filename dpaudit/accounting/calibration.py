"""Noise calibration: the smallest Gaussian sigma that meets a target (epsilon, delta).

Every accountant's epsilon is non-increasing in sigma (monotone in the noise: Balle & Wang 2018), so the
smallest feasible sigma is found by bracketing and bisection in log(sigma). The returned
sigma is always a point at which the accountant was evaluated and met the target (the upper
end of the final bracket), so the guarantee holds for the returned value itself.

The bracket starts at ``sensitivity * sqrt(steps)`` (exact scale for q = 1: T Gaussian steps
with std sigma are one Gaussian with std sigma/sqrt(T)), so step counts far beyond the float
range (``10**400``) are handled; every loop has an iteration bound.
"""

from __future__ import annotations

import math
import sys

from dpaudit.accounting.base import ACCOUNTANTS, accountant_class
from dpaudit.accounting.conversions import gaussian_epsilon
from dpaudit.core.numeric import count_to_float, next_down, next_up
from dpaudit.core.validation import (
    check_count,
    check_delta,
    check_epsilon,
    check_positive,
    check_probability,
)
from dpaudit.mechanisms.gaussian import Gaussian
from dpaudit.mechanisms.subsampled import PoissonSampled

__all__ = ["calibrate_sigma", "CALIBRATION_ACCOUNTANTS"]

#: accountants understood by :func:`calibrate_sigma`
CALIBRATION_ACCOUNTANTS = (*ACCOUNTANTS, "exact")

#: the search for sigma is confined to [start * _SIGMA_MIN, start * _SIGMA_MAX] with
#: start = sensitivity * sqrt(steps)
_SIGMA_MIN = 1e-12
_SIGMA_MAX = 1e15


def _sqrt_count_up(steps: int) -> float:
    """A float >= sqrt(steps) for any integer steps >= 1 (inf beyond the float range)."""
    if steps <= 2**52:
        return next_up(math.sqrt(float(steps)))
    r = math.isqrt(steps)
    if r * r < steps:
        r += 1
    return count_to_float(r, "up")


def _gaussian_step(sigma: float, sensitivity: float, q: float):
    mech = Gaussian(sigma, sensitivity)
    return PoissonSampled(mech, q) if q < 1.0 else mech


def _epsilon_function(delta: float, q: float, steps: int, accountant: str, sensitivity: float):
    """Return sigma -> epsilon for ``steps`` compositions of the (subsampled) Gaussian."""
    if accountant == "exact":
        if q != 1.0:
            raise ValueError("accountant='exact' needs q = 1 (no closed form for the subsampled Gaussian)")
        # T Gaussians with std sigma compose to one Gaussian with std sigma/sqrt(T) (exact);
        # sigma/sqrt(T) is rounded down (less noise: a larger, conservative epsilon)
        root = _sqrt_count_up(steps)

        def exact(sigma: float) -> float:
            s_eff = next_down(sigma / root)
            if not s_eff > 0.0:
                return math.inf
            return gaussian_epsilon(s_eff, delta, sensitivity)

        return exact
    cls = accountant_class(accountant)

    def eps(sigma: float) -> float:
        return cls.quiet().compose(_gaussian_step(sigma, sensitivity, q), count=steps).epsilon(delta)

    return eps


def calibrate_sigma(target_epsilon, delta, *, q=1.0, steps=1, accountant="rdp", sensitivity=1.0,
                    rtol: float | None = None) -> float:
    """Smallest noise standard deviation sigma such that ``steps`` compositions of the
    (Poisson-subsampled, rate ``q``) Gaussian mechanism with L2 ``sensitivity`` satisfy
    (target_epsilon, delta)-DP under ``accountant``.

    Parameters
    ----------
    target_epsilon : float >= 0
    delta : float in (0, 1)
    q : float in (0, 1]
        Poisson sampling rate (q = 1: no subsampling). q = 0 is rejected: every sigma works.
    steps : int >= 1
    accountant : {"rdp", "zcdp", "tcdp", "pld", "exact"}
        "exact" is the closed form of Balle & Wang (2018, Thm. 8) for q = 1 (T Gaussian steps
        are one Gaussian with sigma/sqrt(T)); "pld" uses :class:`dpaudit.accounting.pld.PLDAccountant`.
    sensitivity : float > 0
    rtol : float, optional
        Relative width of the final bracket (default 1e-12; 1e-5 for "pld").

    Returns
    -------
    sigma : float, the upper end of the final bracket, at which the accountant's epsilon was
        evaluated and is <= target_epsilon (so the target is met by the returned value).

    Raises
    ------
    ValueError
        On bad input, or when no sigma in [1e-12, 1e15] * sensitivity * sqrt(steps) meets the
        target.
    """
    target_epsilon = check_epsilon("target_epsilon", target_epsilon)
    delta = check_delta("delta", delta)
    q = check_probability("q", q)
    if q == 0.0:
        raise ValueError("q must be in (0, 1] for calibration (with q = 0 nothing is released and any sigma works)")
    steps = check_count("steps", steps, minimum=1)
    sensitivity = check_positive("sensitivity", sensitivity)
    if accountant not in CALIBRATION_ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {CALIBRATION_ACCOUNTANTS}, got {accountant!r}")
    if rtol is None:
        rtol = 1e-5 if accountant == "pld" else 1e-12
    rtol = check_positive("rtol", rtol)
    eps_of = _epsilon_function(delta, q, steps, accountant, sensitivity)

    def ok(sigma: float) -> bool:
        return eps_of(sigma) <= target_epsilon

    start = min(sensitivity * _sqrt_count_up(steps), sys.float_info.max)
    sigma_min = start * _SIGMA_MIN
    sigma_max = min(start * _SIGMA_MAX, sys.float_info.max)
    # bracket: lo fails, hi meets the target (doubling/halving: at most ~90 steps each)
    hi = start
    if ok(hi):
        lo = hi / 2.0
        while ok(lo):
            hi, lo = lo, lo / 2.0
            if lo < sigma_min or lo == 0.0:
                return hi
    else:
        lo = hi
        hi = min(2.0 * lo, sys.float_info.max)
        while not ok(hi):
            if hi >= sigma_max:
                raise ValueError(
                    f"no sigma <= {sigma_max:g} meets target_epsilon={target_epsilon:g} at "
                    f"delta={delta:g} under accountant={accountant!r}"
                )
            lo, hi = hi, min(2.0 * hi, sys.float_info.max)
    # bisection in log(sigma): the invariant is ok(hi) and not ok(lo); at most 200 steps
    for _ in range(200):
        if not hi / lo - 1.0 > rtol:
            break
        mid = math.sqrt(lo) * math.sqrt(hi)
        if not lo < mid < hi:
            break
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi
