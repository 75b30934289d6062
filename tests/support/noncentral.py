"""mpmath reference values of the noncentral chi-square and F laws (independent of dpaudit).

Two independent constructions, both in multiple precision:

* ``series_ncx2`` / ``series_ncf``: the Poisson-weighted series of central terms (Johnson, Kotz,
  Balakrishnan 1995, eq. 29.2 and 30.4) over a window holding all but e^-112 of the Poisson
  mass. One regularized incomplete gamma / beta value per tail is computed by its continued
  fraction or power series; the rest follow from the additive recurrences
  P(a, y) = P(a + 1, y) + T(a) and I_y(a, b) = I_y(a + 1, b) + T(a) (run in the direction in
  which they add, so nothing cancels). Cost ~ 30 sqrt(lambda) steps: used for lambda <= ~1e9.
* ``bessel_ncx2`` / ``bessel_ncf``: quadrature of the closed-form density
  f(t; d, lambda) = 1/2 e^{-(t + lambda)/2} (t/lambda)^{d/4 - 1/2} I_{d/2-1}(sqrt(lambda t))
  (JKB eq. 29.4) for the chi-square, and of E_W[ P(chi2'(d, lambda) <= c W) ] for F
  (odd d, where the chi-square CDF is elementary: P_1 = Phi(r - a) - Phi(-r - a) and
  P_{d+2} = P_d - 2 f(.; d + 2)). Used for huge lambda.

Every function returns (cdf, sf) as mpmath numbers.
"""

from __future__ import annotations

import mpmath as mp

DPS = 40


def _eps():
    return mp.mpf(10) ** (-(mp.mp.dps + 2))


def gamma_pq(a, y):
    """Regularized (P(a, y), Q(a, y)) by series (y < a + 1) or Lentz continued fraction."""
    a, y = mp.mpf(a), mp.mpf(y)
    if y == 0:
        return mp.mpf(0), mp.mpf(1)
    lpre = a * mp.log(y) - y - mp.loggamma(a)
    eps = _eps()
    if y < a + 1:
        term = 1 / a
        total = term
        k = 0
        while True:
            k += 1
            term *= y / (a + k)
            total += term
            if term < total * eps:
                break
        P = mp.exp(lpre) * total
        return P, 1 - P
    tiny = mp.mpf(10) ** (-(mp.mp.dps * 3))
    b = y + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    i = 0
    while True:
        i += 1
        an = -i * (i - a)
        b += 2
        d = an * d + b
        if abs(d) < tiny:
            d = tiny
        c = b + an / c
        if abs(c) < tiny:
            c = tiny
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < eps:
            break
    Q = mp.exp(lpre) * h
    return 1 - Q, Q


def _betacf(a, b, x):
    tiny = mp.mpf(10) ** (-(mp.mp.dps * 3))
    eps = _eps()
    qab, qap, qam = a + b, a + 1, a - 1
    c = mp.mpf(1)
    d = 1 - qab * x / qap
    if abs(d) < tiny:
        d = tiny
    d = 1 / d
    h = d
    m = 0
    while True:
        m += 1
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1 + aa * d
        if abs(d) < tiny:
            d = tiny
        c = 1 + aa / c
        if abs(c) < tiny:
            c = tiny
        d = 1 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1 + aa * d
        if abs(d) < tiny:
            d = tiny
        c = 1 + aa / c
        if abs(c) < tiny:
            c = tiny
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < eps:
            return h


def beta_pq(a, b, y, ym):
    """(I_y(a, b), 1 - I_y(a, b)) with y and ym = 1 - y given separately (both exact mpf)."""
    a, b = mp.mpf(a), mp.mpf(b)
    if y == 0:
        return mp.mpf(0), mp.mpf(1)
    if ym == 0:
        return mp.mpf(1), mp.mpf(0)
    lfront = a * mp.log(y) + b * mp.log(ym) - (mp.loggamma(a) + mp.loggamma(b) - mp.loggamma(a + b))
    if y < (a + 1) / (a + b + 2):
        v = mp.exp(lfront) * _betacf(a, b, y) / a
        return v, 1 - v
    v = mp.exp(lfront) * _betacf(b, a, ym) / b
    return 1 - v, v


def _window(mu):
    mu = mp.mpf(mu)
    half = 15 * mp.sqrt(mu) + 60
    lo = max(0, int(mp.floor(mu - half)))
    hi = int(mp.ceil(mu + half))
    return lo, hi


def _poisson_weights(mu, lo, hi):
    mu = mp.mpf(mu)
    if mu == 0:
        return [mp.mpf(1)] + [mp.mpf(0)] * (hi - lo)
    w = mp.exp(lo * mp.log(mu) - mu - mp.loggamma(lo + 1))
    out = []
    for j in range(lo, hi + 1):
        out.append(w)
        w = w * mu / (j + 1)
    return out


def series_ncx2(x, d, lam):
    """(cdf, sf) of chi2'(d, lam) at x by the Poisson series with gamma recurrences."""
    with mp.workdps(DPS):
        x, lam = mp.mpf(x), mp.mpf(lam)
        if x <= 0:
            return mp.mpf(0), mp.mpf(1)
        y = x / 2
        lo, hi = _window(lam / 2)
        w = _poisson_weights(lam / 2, lo, hi)
        a0 = mp.mpf(d) / 2
        # cdf: P(a0 + j) from the top down, P(a) = P(a + 1) + T(a), T(a) = y^a e^-y / Gamma(a + 1)
        a_top = a0 + hi
        P = gamma_pq(a_top, y)[0]
        T = mp.exp((a_top - 1) * mp.log(y) - y - mp.loggamma(a_top))  # T(a_top - 1)
        cdf = mp.mpf(0)
        for k in range(hi - lo, -1, -1):
            cdf += w[k] * P
            if k == 0:
                break
            a = a0 + lo + k - 1  # P(a) = P(a + 1) + T(a)
            P = P + T
            if k > 1:
                T = T * a / y
        # sf: Q(a0 + j) from the bottom up, Q(a + 1) = Q(a) + T(a)
        a_bot = a0 + lo
        Q = gamma_pq(a_bot, y)[1]
        T = mp.exp(a_bot * mp.log(y) - y - mp.loggamma(a_bot + 1))
        sf = mp.mpf(0)
        for k in range(0, hi - lo + 1):
            sf += w[k] * Q
            a = a0 + lo + k
            Q = Q + T
            T = T * y / (a + 1)
        return cdf, sf


def series_ncf(f, d, nu, lam):
    """(cdf, sf) of F'(d, nu, lam) at f by the Poisson series with beta recurrences."""
    with mp.workdps(DPS):
        f, nu, lam = mp.mpf(f), mp.mpf(nu), mp.mpf(lam)
        if f <= 0:
            return mp.mpf(0), mp.mpf(1)
        y = d * f / (d * f + nu)
        ym = nu / (d * f + nu)
        b = nu / 2
        lo, hi = _window(lam / 2)
        w = _poisson_weights(lam / 2, lo, hi)
        a0 = mp.mpf(d) / 2
        lB = lambda a: mp.loggamma(a) + mp.loggamma(b) - mp.loggamma(a + b)  # noqa: E731
        # T(a) = y^a (1-y)^b / (a B(a, b));  I(a) = I(a + 1) + T(a)
        a_top = a0 + hi
        I = beta_pq(a_top, b, y, ym)[0]
        at = a_top - 1
        T = mp.exp(at * mp.log(y) + b * mp.log(ym) - lB(at) - mp.log(at)) if hi > lo else None
        cdf = mp.mpf(0)
        for k in range(hi - lo, -1, -1):
            cdf += w[k] * I
            if k == 0:
                break
            a = a0 + lo + k - 1
            I = I + T
            if k > 1:
                T = T * a / ((a + b - 1) * y)  # T(a - 1) = T(a) a / ((a + b - 1) y)
        a_bot = a0 + lo
        J = beta_pq(a_bot, b, y, ym)[1]
        T = mp.exp(a_bot * mp.log(y) + b * mp.log(ym) - lB(a_bot) - mp.log(a_bot))
        sf = mp.mpf(0)
        for k in range(0, hi - lo + 1):
            sf += w[k] * J
            a = a0 + lo + k
            J = J + T
            T = T * (a + b) * y / (a + 1)  # T(a + 1) = T(a) (a + b) y / (a + 1)
        return cdf, sf


def ncx2_density(t, d, lam):
    t, lam = mp.mpf(t), mp.mpf(lam)
    if t <= 0:
        return mp.mpf(0)
    if lam == 0:
        return mp.exp((mp.mpf(d) / 2 - 1) * mp.log(t) - t / 2 - (mp.mpf(d) / 2) * mp.log(2) - mp.loggamma(mp.mpf(d) / 2))
    z = mp.sqrt(lam * t)
    # I_nu(z) e^{-z} keeps the exponent small; e^{-(t + lam)/2 + z} = e^{-(sqrt t - sqrt lam)^2 / 2}
    return (mp.exp(-(mp.sqrt(t) - mp.sqrt(lam)) ** 2 / 2) / 2 * (t / lam) ** (mp.mpf(d) / 4 - mp.mpf(1) / 2)
            * mp.besseli(mp.mpf(d) / 2 - 1, z) * mp.exp(-z))


def bessel_ncx2(x, d, lam):
    """(cdf, sf) of chi2'(d, lam) by quadrature of the Bessel density (any d; lam > 0)."""
    with mp.workdps(DPS):
        x, lam = mp.mpf(x), mp.mpf(lam)
        m = lam + d
        sd = mp.sqrt(2 * d + 4 * lam)
        pts = sorted({mp.mpf(0)} | {m + k * sd for k in range(-40, 41, 4) if m + k * sd > 0})
        lo_pts = [p for p in pts if p < x] + [x]
        hi_pts = [x] + [p for p in pts if p > x] + [mp.inf]
        cdf = mp.quad(lambda t: ncx2_density(t, d, lam), lo_pts)
        sf = mp.quad(lambda t: ncx2_density(t, d, lam), hi_pts)
        return cdf, sf


def elementary_ncx2_cdf(x, d, lam):
    """P[chi2'(d, lam) <= x] for odd d: Phi(r - a) - Phi(-r - a), then P_{k+2} = P_k - 2 f_{k+2}."""
    if d % 2 != 1:
        raise ValueError("odd d only")
    x, lam = mp.mpf(x), mp.mpf(lam)
    if x <= 0:
        return mp.mpf(0)
    r, a = mp.sqrt(x), mp.sqrt(lam)
    P = mp.ncdf(r - a) - mp.ncdf(-r - a)
    for k in range(3, d + 1, 2):
        P -= 2 * ncx2_density(x, k, lam)
    return P


def bessel_ncf(f, d, nu, lam):
    """(cdf, sf) of F'(d, nu, lam) = E_W[ P(chi2'(d, lam) <= c W) ], odd d, by quadrature over W."""
    if d % 2 != 1:
        raise ValueError("odd d only")
    with mp.workdps(DPS):
        f, nu, lam = mp.mpf(f), mp.mpf(nu), mp.mpf(lam)
        c = d * f / nu
        h = nu / 2
        dens = lambda w: mp.exp((h - 1) * mp.log(w) - w / 2 - h * mp.log(2) - mp.loggamma(h))  # noqa: E731
        sd = mp.sqrt(2 * nu)
        pts = {mp.mpf(0)} | {nu + k * sd for k in range(-40, 41, 2) if nu + k * sd > 0}
        # where c W crosses the bulk of chi2'(d, lam)
        sdx = mp.sqrt(2 * d + 4 * lam)
        pts |= {(lam + d + k * sdx) / c for k in range(-40, 41, 2) if lam + d + k * sdx > 0}
        pts = sorted(pts) + [mp.inf]
        cdf = mp.quad(lambda w: dens(w) * elementary_ncx2_cdf(c * w, d, lam), pts)
        sf = mp.quad(lambda w: dens(w) * (1 - elementary_ncx2_cdf(c * w, d, lam)), pts)
        return cdf, sf
