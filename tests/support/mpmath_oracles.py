"""Independent high-precision references (mpmath) used by the tests/numerics/ and tests/properties/
suites; their self-checks against closed forms are tests/numerics/test_mpmath_oracles.py.

Every reference is computed from the double inputs exactly as given (mpmath converts a float
exactly) at a working precision raised until the result keeps 20+ significant digits, so a
computed upper bound can be compared with ``>=`` and nothing else.

References
----------
Balle & Wang, ICML 2018, Thm. 8 (exact Gaussian delta); Dong, Roth & Su 2019, Cor. 2.13 (GDP).
Canonne, Kamath & Steinke 2020, Prop. 12 / Cor. 13; Balle et al. 2020, Thm. 21 (RDP -> DP).
Mironov 2017, Prop. 6 (Laplace RDP); Steinke 2024 / Mironov 2017 Prop. 5 (randomized response).
Bun & Steinke 2016, Prop. 1.3 (zCDP -> DP).
"""

from __future__ import annotations

import math

import mpmath as mp

# ----------------------------------------------------------------------------- Gaussian


def _mills(x):
    """Mills ratio Phi(-x)/phi(x) (mpf), asymptotic series for huge x (mpmath's erfc fails there)."""
    if x > 1e6:
        s = mp.mpf(1)
        t = mp.mpf(1)
        for k in range(1, 8):
            t *= -(2 * k - 1) / (x * x)
            s += t
        return s / x
    return mp.ncdf(-x) / mp.npdf(x)


def mp_gauss_delta(mu, eps):
    """Exact delta(eps) of mu-GDP = the Gaussian mechanism with sensitivity/sigma = mu (mpf).

    ``mu`` may be an mpf (e.g. sensitivity/sigma computed exactly) or a float. Returns 0 when the
    exact value is below 1e-340 (then any positive double is an upper bound).
    """
    dps = 40
    for _ in range(8):
        with mp.workdps(dps):
            m = mp.mpf(mu)
            e = mp.mpf(eps)
            a = m / 2 - e / m
            nb = m / 2 + e / m
            if a < -39.5:
                return mp.mpf(0)  # exact < Phi(a) < 1e-340
            t1 = 1 - mp.npdf(a) * _mills(a) if a > 1e6 else mp.ncdf(a)
            t2 = mp.npdf(a) * _mills(nb)  # = e^eps Phi(-mu/2 - eps/mu)
            d = t1 - t2
            if d > 0 and d > t1 * mp.mpf(10) ** (25 - dps):
                return +d
        dps *= 2
    raise RuntimeError("Gaussian oracle did not converge")


def mp_mu(sigma, sensitivity=1.0):
    """sensitivity/sigma computed exactly enough (60 digits) from the double inputs."""
    with mp.workdps(60):
        return mp.mpf(sensitivity) / mp.mpf(sigma)


# ----------------------------------------------------------------------------- RDP -> DP


def mp_balle_delta(alpha, r, eps):
    """min(Balle et al. delta at (alpha, r), TV bound, 1) at one RDP point (mpf)."""
    with mp.workdps(60):
        R = mp.mpf(r)
        if R == 0:
            return mp.mpf(0)
        if math.isinf(r):
            return mp.mpf(1)
        tv = mp.sqrt(-mp.expm1(-R))
        if math.isinf(alpha):
            return min(tv, mp.mpf(0) if r <= eps else mp.mpf(1))
        A, E = mp.mpf(alpha), mp.mpf(eps)
        b = mp.exp((A - 1) * (R - E) + A * mp.log1p(-1 / A) - mp.log(A - 1))
        return min(tv, b, mp.mpf(1))


def mp_balle_epsilon(alpha, r, delta):
    """Balle et al. epsilon at one RDP point, with the TV rule (0 when sqrt(1-e^-r) <= delta)."""
    with mp.workdps(60):
        if math.isinf(r):
            return mp.inf
        R, D = mp.mpf(r), mp.mpf(delta)
        if R <= -mp.log1p(-D * D):
            return mp.mpf(0)
        if math.isinf(alpha):
            return R
        A = mp.mpf(alpha)
        return max(R + mp.log1p(-1 / A) - (mp.log(D) + mp.log(A)) / (A - 1), mp.mpf(0))


# ----------------------------------------------------------------------------- zCDP / tCDP -> DP


def _bisect(f, lo, hi, n=400):
    for _ in range(n):
        mid = (lo + hi) / 2
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return hi


def mp_cks_epsilon(rho, delta, omega=math.inf):
    """min over alpha in (1, omega] of the CKS/Balle epsilon of rho*alpha-RDP; 0 if the TV bound
    applies (the smallest valid value any correct conversion may report)."""
    with mp.workdps(50):
        R, D = mp.mpf(rho), mp.mpf(delta)
        if R == 0 or R <= -mp.log1p(-D * D):
            return mp.mpf(0)
        L = -mp.log(D)

        def g(t):
            return R * t * t + mp.log1p(t) - L

        hi = mp.mpf(1)
        while g(hi) < 0:
            hi *= 2
        t = _bisect(g, mp.mpf(0), hi, 220)
        if not math.isinf(omega):
            t = min(t, mp.mpf(omega) - 1)
        val = (1 + t) * R - mp.log1p(1 / t) - (mp.log(D) + mp.log1p(t)) / t
        return max(val, mp.mpf(0))


def mp_cks_delta(rho, eps, omega=math.inf):
    """min over alpha in (1, omega] of the CKS delta of rho*alpha-RDP, and the TV bound."""
    with mp.workdps(50):
        R, E = mp.mpf(rho), mp.mpf(eps)
        if R == 0:
            return mp.mpf(0)

        def h(a):
            return (2 * a - 1) * R - E + mp.log1p(-1 / a)

        hi = mp.mpf(2)
        while h(hi) < 0:
            hi = 1 + 2 * (hi - 1)
        a = _bisect(h, mp.mpf(1), hi, 220)
        if not math.isinf(omega):
            a = min(a, mp.mpf(omega))
        ld = (a - 1) * (a * R - E) + a * mp.log1p(-1 / a) - mp.log(a - 1)
        return min(mp.exp(ld), mp.sqrt(-mp.expm1(-R)), mp.mpf(1))


def mp_bs_epsilon(rho, delta):
    """Bun-Steinke rho + 2 sqrt(rho log(1/delta))."""
    with mp.workdps(50):
        R = mp.mpf(rho)
        return R + 2 * mp.sqrt(R * -mp.log(mp.mpf(delta)))


# ----------------------------------------------------------------------------- mechanism curves


def _digits(*small):
    """A starting precision for closed forms whose value is a tiny excess over 1: 60 digits plus
    twice the decimal exponent of every small input (the excess is second order in them)."""
    return 60 + sum(2 * max(0, int(-math.log10(x)) + 1) for x in small if 0 < x < 1)


def _converged(f, dps=50):
    """f() evaluated at a working precision doubled until two successive values agree to 30
    digits (the closed forms below cancel catastrophically for tiny epsilon or alpha near 1);
    ``dps`` must already resolve the quantity (see :func:`_digits`): two roundings to the same
    wrong value would agree."""
    prev = None
    for _ in range(8):
        with mp.workdps(dps):
            val = f()
        if prev is not None and (val == prev or abs(val - prev) <= abs(val) * mp.mpf(10) ** -30):
            return +val
        prev = val
        dps *= 2
    raise RuntimeError("oracle did not converge")


def mp_laplace_rdp(eps, alpha):
    """Mironov 2017 Prop. 6: Laplace RDP with epsilon = sensitivity/scale (alpha = inf: eps)."""
    if math.isinf(alpha):
        return mp.mpf(eps)

    def f():
        E, A = mp.mpf(eps), mp.mpf(alpha)
        inner = A / (2 * A - 1) * mp.exp((A - 1) * E) + (A - 1) / (2 * A - 1) * mp.exp(-A * E)
        return min(mp.log(inner) / (A - 1), E)

    return _converged(f, _digits(eps, alpha - 1))


def mp_rr_rdp(eps, alpha):
    """Tight RDP of eps-DP (randomized response, p = e^eps/(1+e^eps))."""
    if math.isinf(alpha):
        return mp.mpf(eps)

    def f():
        E, A = mp.mpf(eps), mp.mpf(alpha)
        p, p0 = 1 / (1 + mp.exp(-E)), 1 / (1 + mp.exp(E))  # p and 1 - p, each without cancellation
        return mp.log(p * mp.exp((A - 1) * E) + p0 * mp.exp(-(A - 1) * E)) / (A - 1)

    return _converged(f, _digits(eps, alpha - 1))


def mp_subsampled_rr_rdp(q, eps, alpha):
    """Exact RDP (max of both directions) of Poisson-subsampled randomized response."""

    def f():
        Q, E, A = mp.mpf(q), mp.mpf(eps), mp.mpf(alpha)
        p, p0 = 1 / (1 + mp.exp(-E)), 1 / (1 + mp.exp(E))  # p and 1 - p, each without cancellation
        P = [Q * p + (1 - Q) * p0, Q * p0 + (1 - Q) * p]
        R = [p0, p]
        add = mp.log(mp.fsum(x**A * y ** (1 - A) for x, y in zip(P, R))) / (A - 1)
        rem = mp.log(mp.fsum(y**A * x ** (1 - A) for x, y in zip(P, R))) / (A - 1)
        return max(add, rem)

    # the excess over 1 is ~ q^2 (or p0 (q e^eps)^alpha): digits for q, eps, alpha - 1 and e^-eps
    return _converged(f, _digits(q, eps, alpha - 1) + int(min(eps, 3000.0) / 2.3))


def mp_poisson_gaussian_rdp_int(q, sigma, alpha: int):
    """Exact RDP of the Poisson-subsampled Gaussian at an integer order (binomial sum, [MTZ])."""

    def f():
        Q, S = mp.mpf(q), mp.mpf(sigma)
        tot = mp.fsum(mp.binomial(alpha, k) * Q**k * (1 - Q) ** (alpha - k) * mp.exp((k * k - k) / (2 * S * S))
                      for k in range(alpha + 1))
        return mp.log(tot) / (alpha - 1)

    return _converged(f, _digits(q))
