"""Exact curve of a composition of Gaussian mechanisms, as a certified float interval.

Composing Gaussian mechanisms with ``mu_i = sensitivity_i / sigma_i`` (``count_i`` times each)
gives one Gaussian with ``mu^2 = sum_i count_i mu_i^2`` (Dong, Roth, Su 2019, Cor. 3.3), whose
curve is (Balle & Wang 2018, Thm. 8)

    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu).

It is evaluated here in mpmath at a working precision raised until the subtraction keeps at
least 25 significant digits, so counts above 1e308, mu^2 beyond the float range and epsilons
far in the tails are all handled; the float results are then moved outwards until the
high-precision curve confirms each side (a lower end with ``delta(lower) >= delta`` and an upper
end with ``delta(upper) <= delta``). An epsilon above the float range is ``(float max, inf)``.
"""

from __future__ import annotations

import math
import sys

import mpmath as mp
import numpy as np

__all__ = ["mu_squared", "delta_interval", "epsilon_interval"]

_FMAX = sys.float_info.max
_DPS = 30
_MAX_DPS = 4000


def mu_squared(terms) -> mp.mpf:
    """sum count * (sensitivity / sigma)^2 over ``terms`` of (sensitivity, sigma, count), exactly
    enough (40 digits; counts may exceed the float range)."""
    with mp.workdps(40):
        total = mp.mpf(0)
        for sens, sigma, count in terms:
            total += mp.mpf(int(count)) * (mp.mpf(sens) / mp.mpf(sigma)) ** 2
        return +total


def _delta_mp(mu2: mp.mpf, eps) -> mp.mpf:
    """delta(eps) at a precision keeping >= 25 significant digits after the subtraction.

    With a = mu/2 - eps/mu (computed with 2 log10(mu) extra digits: it is a small difference of
    large numbers when eps ~ mu^2/2), delta = Phi(a) - e^eps Phi(a - mu) and
    e^eps Phi(a - mu) = phi(a) M(mu - a), M(x) = Phi(-x)/phi(x) the Mills ratio; for mu > 1e100
    M(x) = 1/x (1 + O(x^-2)) is used (mpmath's erfc does not reach such arguments). Outside
    |a| <= 1e4, Phi(a) is 1 or 0 to far below any float (e^{-5e7})."""
    with mp.workdps(20):
        big = mu2 > mp.mpf(10) ** 200
        extra = int(max(0.0, float(mp.log10(mu2)))) + 10 if mu2 > 1 else 0
    dps = _DPS + extra
    while True:
        with mp.workdps(dps):
            mu = mp.sqrt(mu2)
            e = mp.mpf(eps)
            a = mu / 2 - e / mu
            if a < -10000:
                return mp.mpf(0)
            t1 = mp.mpf(1) if a > 10000 else mp.ncdf(a)
            if big:
                t2 = mp.npdf(a) / (mu - a)
            else:
                t2 = mp.exp(e) * mp.ncdf(a - mu)
            diff = t1 - t2
            if t1 == 0:
                return mp.mpf(0)
            if diff > 0:
                lost = float(mp.log10(t1 / diff))
                if lost < dps - extra - 25 or dps >= _MAX_DPS:
                    return +diff
                dps = min(int(lost) + extra + 40, _MAX_DPS)
            else:
                if dps >= _MAX_DPS:
                    return mp.mpf(0)
                dps = min(dps * 4, _MAX_DPS)


def _down(x: float) -> float:
    return float(np.nextafter(x, -np.inf))


def _up(x: float) -> float:
    return float(np.nextafter(x, np.inf))


def delta_interval(mu2: mp.mpf, eps: float) -> tuple[float, float]:
    """(lower, upper) float bounds on delta(eps) of the Gaussian with mean difference^2 = mu2."""
    if mu2 == 0:
        return 0.0, 0.0
    val = _delta_mp(mu2, eps)
    with mp.workdps(40):
        f = float(val)
        lo, up = f, f
        for _ in range(4):  # float() rounds to nearest: one step each way is enough
            if mp.mpf(lo) <= val:
                break
            lo = _down(lo)
        for _ in range(4):
            if mp.mpf(up) >= val:
                break
            up = _up(up)
    return max(_down(lo), 0.0), min(_up(up), 1.0)


def epsilon_interval(mu2: mp.mpf, delta: float) -> tuple[float, float]:
    """(lower, upper) float bounds on the smallest eps >= 0 with delta(eps) <= ``delta``."""
    if mu2 == 0:
        return 0.0, 0.0
    target = mp.mpf(delta)
    with mp.workdps(40):
        if mu2 > mp.mpf(4) * _FMAX:  # eps >= mu^2/2 - 10 mu > float max
            return _FMAX, math.inf
    if _delta_mp(mu2, 0) <= target:
        return 0.0, 0.0
    with mp.workdps(40 + (int(float(mp.log10(mu2))) if mu2 > 1 else 0)):
        mu = mp.sqrt(mu2)
        z = mp.sqrt(2 * mp.log(1 / target)) + 2
        # in the variable a = mu/2 - eps/mu (increasing delta, order-one scale): delta(a = -z)
        # <= Phi(-z) < delta; at a = min(mu/2, 10) delta > delta (eps = 0, or Phi(10) minus
        # e^eps Phi(a - mu) <= phi(a)/(mu - a) when mu >= 20)
        lo_a, hi_a = -z, min(mu / 2, mp.mpf(10))
        for _ in range(240):  # bisection to 1e-35 relative
            mid = (lo_a + hi_a) / 2
            if _delta_mp(mu2, mu * (mu / 2 - mid)) > target:
                hi_a = mid
            else:
                lo_a = mid
            # float resolution of eps = mu (mu/2 - a) reached (a to 1e-35 when eps is small)
            if mu * (hi_a - lo_a) <= mp.mpf(10) ** -22 * abs(mu * (mu / 2 - mid)) + mp.mpf(10) ** -35:
                break
        root = mu * (mu / 2 - (lo_a + hi_a) / 2)
        if root > _FMAX:
            return _FMAX, math.inf
        f = float(root)
    lo, up = f, f
    for _ in range(64):  # delta(lo) >= delta: lo is at most the root
        if lo <= 0.0 or _delta_mp(mu2, lo) >= target:
            break
        lo = _down(lo) if lo > 1e-300 else 0.0
    for _ in range(64):  # delta(up) <= delta: up is at least the root
        if _delta_mp(mu2, up) <= target:
            break
        up = _up(up)
    else:  # pragma: no cover - the root is within a few ulps of f
        up = math.inf
    return max(_down(lo), 0.0), _up(up)
