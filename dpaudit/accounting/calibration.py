"""Noise calibration: the smallest Gaussian sigma that meets a target (epsilon, delta).

Every accountant's epsilon is non-increasing in sigma (accounting.md section 6.3), so the
smallest feasible sigma is found by bracketing and bisection in log(sigma). The returned
sigma is always a point at which the accountant was evaluated and met the target (the upper
end of the final bracket), so the guarantee holds for the returned value itself.
"""

from __future__ import annotations

import math

from dpaudit.core.validation import (
    check_count,
    check_delta,
    check_epsilon,
    check_positive,
    check_probability,
)

__all__ = ["calibrate_sigma", "CALIBRATION_ACCOUNTANTS"]

#: accountants understood by :func:`calibrate_sigma`
CALIBRATION_ACCOUNTANTS = ("rdp", "zcdp", "tcdp", "pld", "exact")

_SIGMA_MIN = 1e-12
_SIGMA_MAX = 1e15


def _gaussian_step(sigma: float, sensitivity: float, q: float):
    from dpaudit.mechanisms.gaussian import Gaussian

    mech = Gaussian(sigma, sensitivity)
    if q < 1.0:
        try:
            from dpaudit.mechanisms.subsampled import PoissonSampled
        except ImportError as exc:  # pragma: no cover - depends on another module being present
            raise ValueError("q < 1 needs dpaudit.mechanisms.subsampled.PoissonSampled, which is unavailable") from exc
        mech = PoissonSampled(mech, q)
    return mech


def _epsilon_function(delta: float, q: float, steps: int, accountant: str, sensitivity: float):
    """Return sigma -> epsilon for ``steps`` compositions of the (subsampled) Gaussian."""
    if accountant == "exact":
        if q != 1.0:
            raise ValueError("accountant='exact' needs q = 1 (no closed form for the subsampled Gaussian)")
        from dpaudit.accounting.conversions import gaussian_epsilon

        # T Gaussians with std sigma compose to one Gaussian with std sigma/sqrt(T) (exact)
        return lambda sigma: gaussian_epsilon(sigma / math.sqrt(steps), delta, sensitivity)
    if accountant == "rdp":
        from dpaudit.accounting.rdp import RDPAccountant

        def make():
            return RDPAccountant(warn_at_grid_end=False)
    elif accountant == "zcdp":
        from dpaudit.accounting.zcdp import ZCDPAccountant as make
    elif accountant == "tcdp":
        from dpaudit.accounting.tcdp import TCDPAccountant as make
    else:  # pld
        try:
            from dpaudit.accounting.pld import PLDAccountant as make
        except ImportError as exc:
            raise ValueError("accountant='pld' needs dpaudit.accounting.pld, which is unavailable") from exc

    def eps(sigma: float) -> float:
        return make().compose(_gaussian_step(sigma, sensitivity, q), count=steps).epsilon(delta)

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
        On bad input, or when no sigma in [1e-12, 1e15] meets the target.
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    delta = check_delta(delta)
    q = check_probability("q", q)
    if q == 0.0:
        raise ValueError("q must be in (0, 1] for calibration (with q = 0 nothing is released and any sigma works)")
    steps = check_count(steps, "steps", minimum=1)
    sensitivity = check_positive("sensitivity", sensitivity)
    if accountant not in CALIBRATION_ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {CALIBRATION_ACCOUNTANTS}, got {accountant!r}")
    if rtol is None:
        rtol = 1e-5 if accountant == "pld" else 1e-12
    rtol = check_positive("rtol", rtol)
    eps_of = _epsilon_function(delta, q, steps, accountant, sensitivity)

    def ok(sigma: float) -> bool:
        return eps_of(sigma) <= target_epsilon

    # bracket: lo fails, hi meets the target
    hi = sensitivity
    if ok(hi):
        lo = hi / 2.0
        while ok(lo):
            hi, lo = lo, lo / 2.0
            if lo < _SIGMA_MIN * sensitivity:
                return hi
    else:
        lo = hi
        hi = 2.0 * lo
        while not ok(hi):
            lo, hi = hi, 2.0 * hi
            if hi > _SIGMA_MAX * sensitivity:
                raise ValueError(
                    f"no sigma <= {_SIGMA_MAX * sensitivity:g} meets target_epsilon={target_epsilon:g} at "
                    f"delta={delta:g} under accountant={accountant!r}"
                )
    # bisection in log(sigma): the invariant is ok(hi) and not ok(lo)
    while hi / lo - 1.0 > rtol:
        mid = math.sqrt(lo * hi)
        if not lo < mid < hi:
            break
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi
