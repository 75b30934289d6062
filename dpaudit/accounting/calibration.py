"""Noise calibration: the smallest Gaussian sigma (:func:`calibrate_sigma`), Laplace scale
(:func:`calibrate_laplace`) or discrete Laplace scale (:func:`calibrate_discrete_laplace`) that
meets a target (epsilon, delta) after ``steps`` compositions, under a registered accountant
(:func:`dpaudit.accounting.base.make_accountant`: ``"exact"`` is the closed form of
:class:`~dpaudit.accounting.exact.ExactAccountant`, ``"pure"`` basic composition of pure DP).

Every accountant's epsilon is non-increasing in the noise scale (monotone in the noise: Balle &
Wang 2018), so the smallest feasible scale is found by a bracketed bisection in log(scale)
(:mod:`dpaudit.core.roots`). The returned scale is always a point at which the accountant was
evaluated and met the target (the upper end of the final bracket), so the guarantee holds for the
returned value itself. The bisection stops when both (a) the bracket is narrower than ``rtol``
(relative) and (b) the epsilon achieved at the returned scale is within ``EPSILON_RTOL`` (1e-10)
relative below the target -- or when the bracket's ends are adjacent floats (the target is then
met as closely as a float scale allows) or after 200 halvings: a calibration round-trips, its
epsilon equals the target to 1e-10 relative wherever the accountant's epsilon is continuous in
the scale.

The bracket starts at ``sensitivity * sqrt(steps)`` (exact scale for q = 1: T Gaussian steps
with std sigma are one Gaussian with std sigma/sqrt(T)), so step counts far beyond the float
range (``10**400``) are handled; every loop has an iteration bound.
"""

from __future__ import annotations

import math
import sys

from dpaudit.accounting.base import accountant_class
from dpaudit.core.deprecation import renamed_keywords
from dpaudit.core.numeric import count_to_float, next_up
from dpaudit.core.roots import bisect, bracket_down, bracket_up
from dpaudit.core.validation import (
    UnsupportedMechanismError,
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
           "LAPLACE_CALIBRATION_ACCOUNTANTS", "EPSILON_RTOL"]

#: accountants understood by :func:`calibrate_sigma` (registry names; "exact": the closed form of
#: Balle & Wang 2018 for q = 1, or one sampled step)
CALIBRATION_ACCOUNTANTS = ("rdp", "zcdp", "tcdp", "pld", "exact")

#: accountants understood by :func:`calibrate_laplace` and :func:`calibrate_discrete_laplace`
#: ("pure": basic composition of the pure-DP epsilon, steps * epsilon_step; any delta)
LAPLACE_CALIBRATION_ACCOUNTANTS = ("rdp", "zcdp", "tcdp", "pld", "exact", "pure")

#: the bisection goes on until the epsilon at the returned scale is within this relative distance
#: below the target (or the bracket's ends are adjacent floats)
EPSILON_RTOL = 1e-10

#: the search for sigma is confined to [start * _SIGMA_MIN, start * _SIGMA_MAX] with
#: start = sensitivity * sqrt(steps)
_SIGMA_MIN = 1e-12
_SIGMA_MAX = 1e15
#: halvings of the final bracket (adjacent floats are reached within ~60 in log scale)
_MAX_BISECTIONS = 200


def _sqrt_count_up(steps: int) -> float:
    """A float >= sqrt(steps) for any integer steps >= 1 (inf beyond the float range)."""
    if steps <= 2**52:
        return next_up(math.sqrt(float(steps)))
    r = math.isqrt(steps)
    if r * r < steps:
        r += 1
    return count_to_float(r, "up")


def _accountant_of(accountant: str, step, steps: int):
    """scale -> a quiet accountant ``accountant`` with ``steps`` compositions of ``step(scale)``
    (an UnsupportedMechanismError names the accountant and the step)."""
    cls = accountant_class(accountant)

    def make(scale: float):
        try:
            return cls.quiet().compose(step(scale), count=steps)
        except UnsupportedMechanismError as exc:
            raise UnsupportedMechanismError(f"accountant={accountant!r} cannot calibrate {steps} step(s) of "
                                            f"{step(scale).describe()}: {exc}") from None

    return make


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
        A registered accountant. "exact" is :class:`~dpaudit.accounting.exact.ExactAccountant`:
        the closed form of Balle & Wang (2018, Thm. 8) for q = 1 (T Gaussian steps are one
        Gaussian with mu^2 = T (sensitivity/sigma)^2, summed exactly), or one sampled step (q < 1,
        steps > 1 is refused: no closed form); "pld" uses
        :class:`dpaudit.accounting.pld.PLDAccountant`.
    sensitivity : float > 0
    rtol : float, optional
        Relative width of the final bracket (default 1e-12; 1e-5 for "pld"); the bisection also
        goes on until the achieved epsilon is within :data:`EPSILON_RTOL` of the target (module
        docstring).

    Returns
    -------
    sigma : float, the upper end of the final bracket, at which the accountant's epsilon was
        evaluated and is <= target_epsilon (so the target is met by the returned value), and
        within 1e-10 relative of it (module docstring).

    Raises
    ------
    ValueError
        On bad input, or when no sigma in [1e-12, 1e15] * sensitivity * sqrt(steps) meets the
        target; :class:`~dpaudit.core.validation.UnsupportedMechanismError` (a ValueError) when
        the accountant cannot compose the step (e.g. "exact" with q < 1 and steps > 1).

    Example
    -------
    >>> from dpaudit import calibrate_sigma
    >>> print(f"{calibrate_sigma(1.0, 1e-5, accountant='exact'):.4f}")    # one Gaussian step, (1, 1e-5)-DP
    3.7306
    >>> print(f"{calibrate_sigma(1.0, 1e-5, sample_rate=0.01, steps=1000):.4f}")   # DP-SGD-like, RDP
    1.5131
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

    def step(sigma: float):
        mech = Gaussian(sigma, sensitivity)
        return PoissonSampled(mech, q) if q < 1.0 else mech

    start = min(sensitivity * _sqrt_count_up(steps), sys.float_info.max)
    return _smallest_passing(_accountant_of(accountant, step, steps), target_epsilon, delta, start, rtol,
                             lambda bound: (f"no sigma <= {bound:g} meets target_epsilon={target_epsilon:g} at "
                                            f"delta={delta:g} under accountant={accountant!r}"))


def _smallest_passing(make, target: float, delta: float | None, start: float, rtol: float, message) -> float:
    """The smallest noise scale ``s`` in [start * 1e-12, start * 1e15] whose accountant ``make(s)``
    meets (target, delta) (:meth:`~dpaudit.accounting.base.Accountant.meets`): bracket by
    doubling/halving from ``start`` (:func:`~dpaudit.core.roots.bracket_up` /
    :func:`~dpaudit.core.roots.bracket_down`, at most ~90 steps each), then bisection in log(s)
    (:func:`~dpaudit.core.roots.bisect`, at most 200 halvings) until the bracket is narrower than
    ``rtol`` and the epsilon at its upper end is within :data:`EPSILON_RTOL` below the target (or
    its ends are adjacent floats). The result is the upper end: a point where the accountant was
    evaluated and met the target (its epsilon(delta) is checked once more at the end). An
    accountant whose epsilon does not depend on delta (``needs_delta`` False) is queried at
    delta = 1/2 when ``delta`` is None. ``message(bound)`` is the ValueError text when no scale up
    to the bound passes."""
    query = delta if delta else 0.5
    eps_seen: dict[float, float] = {}

    def ok(s: float) -> bool:
        return make(s).meets(target, query)

    def eps_at(s: float) -> float:
        if s not in eps_seen:
            eps_seen[s] = make(s).epsilon(query)
        return eps_seen[s]

    sigma_min = start * _SIGMA_MIN
    sigma_max = min(start * _SIGMA_MAX, sys.float_info.max)
    if ok(start):
        lo, hi = bracket_down(ok, start, limit=sigma_min)
        if lo is None:
            return hi  # every scale tried down to the limit passes: the smallest one tried
    else:
        br = bracket_up(ok, start, min(2.0 * start, sys.float_info.max), limit=sigma_max)
        if br is None:
            raise ValueError(message(sigma_max))
        lo, hi = br
    floor = target * (1.0 - EPSILON_RTOL)

    def done(lo: float, hi: float) -> bool:  # (the epsilon is computed only once the bracket is narrow)
        return hi / lo - 1.0 <= rtol and eps_at(hi) >= floor

    hi = bisect(ok, lo, hi, midpoint="geometric", stop=done, max_iter=_MAX_BISECTIONS).hi
    # the accountant's own epsilon at the returned scale (meets() never passes where it exceeds the
    # target; a scale a few ulps up is taken should its rounding disagree, at most 64 steps)
    for _ in range(64):
        if eps_at(hi) <= target:
            break
        hi = math.nextafter(hi, math.inf)
    return hi


def _check_laplace_target(target_epsilon, delta, q, steps, accountant, rtol):
    target_epsilon = check_epsilon("target_epsilon", target_epsilon)
    if target_epsilon == 0.0:
        raise ValueError("target_epsilon must be > 0 for a Laplace calibration (no finite scale gives 0)")
    if accountant not in LAPLACE_CALIBRATION_ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {LAPLACE_CALIBRATION_ACCOUNTANTS}, got {accountant!r}")
    if delta is None and not accountant_class(accountant).needs_delta:
        delta = 0.0  # (its epsilon is the same at every delta)
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

    start = min(next_up(count_to_float(steps, "up") * sensitivity / target_epsilon), sys.float_info.max)
    return _smallest_passing(_accountant_of(accountant, step, steps), target_epsilon, delta, start, rtol,
                             lambda bound: (f"no {what} scale <= {bound:g} meets target_epsilon={target_epsilon:g} "
                                            f"at delta={delta:g} under accountant={accountant!r}"))


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
    accountant : {"rdp", "zcdp", "tcdp", "pld", "exact", "pure"}
        "pure" is :class:`~dpaudit.accounting.exact.PureDPAccountant`, basic composition of pure
        DP (Dwork, McSherry, Nissim, Smith 2006): epsilon = steps * log(1 + q (e^{sensitivity/b} -
        1)), i.e. b = steps * sensitivity / target for q = 1. The others compose
        :class:`~dpaudit.mechanisms.laplace.Laplace` in that accountant (RDP: Mironov 2017, Prop. 6;
        PLD: the exact Laplace pair; "exact": one release, its closed form).
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
