"""Noise calibration: the smallest Gaussian sigma (:func:`calibrate_sigma`), Laplace scale
(:func:`calibrate_laplace`) or discrete Laplace scale (:func:`calibrate_discrete_laplace`) that
meets a target (epsilon, delta) after ``steps`` compositions.

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
from dpaudit.core.deprecation import renamed_keywords
from dpaudit.core.numeric import count_to_float, next_down, next_up, scale_by_count
from dpaudit.core.validation import (
    check_count,
    check_delta,
    check_epsilon,
    check_positive,
    check_probability,
)
from dpaudit.mechanisms.discrete_laplace import DiscreteLaplace
from dpaudit.mechanisms.gaussian import Gaussian
from dpaudit.mechanisms.laplace import Laplace
from dpaudit.mechanisms.subsampled import PoissonSampled

__all__ = ["calibrate_sigma", "calibrate_laplace", "calibrate_discrete_laplace", "CALIBRATION_ACCOUNTANTS",
           "LAPLACE_CALIBRATION_ACCOUNTANTS"]

#: accountants understood by :func:`calibrate_sigma`
CALIBRATION_ACCOUNTANTS = (*ACCOUNTANTS, "exact")

#: accountants understood by :func:`calibrate_laplace` and :func:`calibrate_discrete_laplace`
#: ("pure": basic composition of the pure-DP epsilon, steps * epsilon_step; any delta)
LAPLACE_CALIBRATION_ACCOUNTANTS = (*ACCOUNTANTS, "pure")

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
            raise ValueError("accountant='exact' needs sample_rate = 1 (no closed form for the subsampled Gaussian)")
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


@renamed_keywords(q="sample_rate")
def calibrate_sigma(target_epsilon, delta, *, sample_rate=1.0, steps=1, accountant="rdp", sensitivity=1.0,
                    rtol: float | None = None) -> float:
    """Smallest noise standard deviation sigma such that ``steps`` compositions of the
    (Poisson-subsampled, rate ``sample_rate``) Gaussian mechanism with L2 ``sensitivity`` satisfy
    (target_epsilon, delta)-DP under ``accountant``.

    Parameters
    ----------
    target_epsilon : float >= 0
    delta : float in (0, 1)
    sample_rate : float in (0, 1]
        Poisson sampling rate q (1: no subsampling; 0 is rejected: every sigma works). ``q=`` is its
        deprecated spelling (accepted with a DeprecationWarning).
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
    q = check_probability("sample_rate", sample_rate)
    if q == 0.0:
        raise ValueError("sample_rate must be in (0, 1] for calibration (at rate 0 nothing is released and any sigma "
                         "works)")
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
    return _smallest_passing(ok, start, rtol, lambda bound: (
        f"no sigma <= {bound:g} meets target_epsilon={target_epsilon:g} at "
        f"delta={delta:g} under accountant={accountant!r}"))


def _smallest_passing(ok, start: float, rtol: float, message) -> float:
    """The smallest noise scale ``s`` in [start * 1e-12, start * 1e15] with ``ok(s)`` (to
    relative width ``rtol``): bracket by doubling/halving from ``start`` (at most ~90 steps
    each), then at most 200 bisection steps in log(s). The result is always a point where
    ``ok`` was evaluated and held. ``message(bound)`` is the ValueError text when no scale up to
    the bound passes."""
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
                raise ValueError(message(sigma_max))
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


def _check_laplace_target(target_epsilon, delta, q, steps, accountant, rtol):
    target_epsilon = check_epsilon("target_epsilon", target_epsilon)
    if target_epsilon == 0.0:
        raise ValueError("target_epsilon must be > 0 for a Laplace calibration (no finite scale gives 0)")
    if accountant not in LAPLACE_CALIBRATION_ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {LAPLACE_CALIBRATION_ACCOUNTANTS}, got {accountant!r}")
    if accountant == "pure" and delta is None:
        delta = 0.0
    else:
        delta = check_delta("delta", delta)
    q = check_probability("sample_rate", q)
    if q == 0.0:
        raise ValueError("sample_rate must be in (0, 1] for calibration (at rate 0 nothing is released and any scale "
                         "works)")
    steps = check_count("steps", steps, minimum=1)
    if rtol is None:
        rtol = 1e-5 if accountant == "pld" else 1e-12
    rtol = check_positive("rtol", rtol)
    return target_epsilon, delta, q, steps, rtol


def _calibrate_scale(make, target_epsilon, delta, q, steps, accountant, sensitivity, rtol, what):
    """Smallest scale b with ``steps`` compositions of (Poisson-sampled) ``make(b)`` meeting the
    target; the search starts at the pure-DP closed form steps * sensitivity / target_epsilon."""

    def step(scale: float):
        mech = make(scale)
        return PoissonSampled(mech, q) if q < 1.0 else mech

    if accountant == "pure":
        def eps_of(scale: float) -> float:  # basic composition (Dwork et al. 2006): steps * eps_step
            return float(scale_by_count(steps, step(scale).pure_epsilon()))
    else:
        cls = accountant_class(accountant)

        def eps_of(scale: float) -> float:
            return cls.quiet().compose(step(scale), count=steps).epsilon(delta)

    def ok(scale: float) -> bool:
        return eps_of(scale) <= target_epsilon

    start = min(next_up(count_to_float(steps, "up") * sensitivity / target_epsilon), sys.float_info.max)
    return _smallest_passing(ok, start, rtol, lambda bound: (
        f"no {what} scale <= {bound:g} meets target_epsilon={target_epsilon:g} at delta={delta:g} "
        f"under accountant={accountant!r}"))


@renamed_keywords(q="sample_rate")
def calibrate_laplace(target_epsilon, delta=None, *, sample_rate=1.0, steps=1, accountant="rdp", sensitivity=1.0,
                      rtol: float | None = None) -> float:
    """Smallest Laplace scale b such that ``steps`` compositions of the (Poisson-subsampled, rate
    ``sample_rate``) Laplace mechanism ``Lap(b)`` with L1 ``sensitivity`` satisfy (target_epsilon,
    delta)-DP under ``accountant``.

    Parameters
    ----------
    target_epsilon : float > 0
    delta : float in (0, 1); optional (ignored) for ``accountant="pure"``
    sample_rate : float in (0, 1]
        Poisson sampling rate q (``q=`` is its deprecated spelling).
    steps : int >= 1
    accountant : {"rdp", "zcdp", "tcdp", "pld", "pure"}
        "pure" is basic composition of pure DP (Dwork, McSherry, Nissim, Smith 2006): epsilon =
        steps * log(1 + q (e^{sensitivity/b} - 1)), i.e. b = steps * sensitivity / target for q = 1.
        The others compose :class:`~dpaudit.mechanisms.laplace.Laplace` in that accountant (RDP:
        Mironov 2017, Prop. 6; PLD: the exact Laplace pair).
    sensitivity : float > 0
    rtol : float, optional
        Relative width of the final bracket (default 1e-12; 1e-5 for "pld").

    Returns
    -------
    scale : float, a value at which the accountant's epsilon was evaluated and is <= target
        (the upper end of the final bracket, so the target is met by the returned value).

    Raises
    ------
    ValueError
        On bad input (naming the argument), and when no scale up to 1e15 times the pure-DP
        closed form meets the target (e.g. delta below what a PLD's discretisation resolves).
    """
    target_epsilon, delta, q, steps, rtol = _check_laplace_target(target_epsilon, delta, sample_rate, steps,
                                                                  accountant, rtol)
    sensitivity = check_positive("sensitivity", sensitivity)
    return _calibrate_scale(lambda b: Laplace(b, sensitivity), target_epsilon, delta, q, steps, accountant,
                            sensitivity, rtol, "Laplace")


@renamed_keywords(q="sample_rate")
def calibrate_discrete_laplace(target_epsilon, delta=None, *, sample_rate=1.0, steps=1, accountant="rdp",
                               sensitivity=1, rtol: float | None = None) -> float:
    """Smallest discrete Laplace scale t (P(z) proportional to e^{-|z|/t}) such that ``steps``
    compositions of the (Poisson-subsampled) :class:`~dpaudit.mechanisms.discrete_laplace.DiscreteLaplace`
    with integer L1 ``sensitivity`` satisfy (target_epsilon, delta)-DP under ``accountant``.

    Same parameters, search and guarantee as :func:`calibrate_laplace`; ``sensitivity`` is a
    positive integer; "pure" gives t = steps * sensitivity / target for q = 1 (its pure epsilon
    is sensitivity/t: Ghosh, Roughgarden, Sundararajan 2009, the geometric mechanism; Canonne, Kamath, Steinke 2020,
    the discrete Laplace mechanism). The RDP and
    PLD accountants use its exact RDP curve and loss pair.
    """
    target_epsilon, delta, q, steps, rtol = _check_laplace_target(target_epsilon, delta, sample_rate, steps,
                                                                  accountant, rtol)
    sens = DiscreteLaplace(1.0, sensitivity).sensitivity  # validates: a positive integer
    return _calibrate_scale(lambda t: DiscreteLaplace(t, sens), target_epsilon, delta, q, steps, accountant,
                            float(sens), rtol, "discrete Laplace")
