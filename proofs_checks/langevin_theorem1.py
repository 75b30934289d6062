"""Theorem 1 (Chourasia, Ye, Shokri 2021) on the squared-loss instance, and Theorem 2 / composition.

Independent exact computation: the last iterate of noisy GD on l(theta; x) = 0.5 ||theta - x||^2
is Gaussian; its mean and variance are obtained by ITERATING the one-step recursion in mpmath
(mu <- (1-eta) mu + eta xbar, s^2 <- (1-eta)^2 s^2 + 2 eta sigma^2), not from the closed form,
and the Renyi divergence of the two equal-variance Gaussians is alpha dmu^2 / (2 s^2).
Checks for every (eta, K): Theorem 2 lower <= exact <= Theorem 1 (lambda = beta = 1), with both
Theorem 1's Gaussian start N(0, 2 sigma^2/lambda) and Theorem 2's deterministic start, and
exact <= composition baseline.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import mpmath as mp  # noqa: E402
from _common import report  # noqa: E402

from dpaudit.bounds.langevin import (  # noqa: E402
    composition_rdp,
    langevin_lower_rdp,
    langevin_rdp,
    linear_gaussian_rdp,
)


def exact_by_recursion(alpha, eta, K, S, sigma, n, v0):
    mp.mp.dps = 40
    eta, sigma, v0 = mp.mpf(eta), mp.mpf(sigma), mp.mpf(v0)
    dmu, s2 = mp.mpf(0), v0  # difference of means of the two runs; shared variance
    for _ in range(K):
        dmu = (1 - eta) * dmu + eta * mp.mpf(S) / n
        s2 = (1 - eta) ** 2 * s2 + 2 * eta * sigma**2
    if dmu == 0:
        return 0.0
    return float(alpha * dmu**2 / (2 * s2))


def main() -> int:
    rows, margins = [], []
    alpha, S, n = 2.0, 1.0, 1
    for eta in (0.001, 0.01, 0.1, 0.5, 0.9, 0.999):
        for K in (1, 3, 10, 100, 1000, 5000):
            for sigma in (0.5, 1.0):
                kw = dict(sensitivity=S, step_size=eta, sigma=sigma, n=n, steps=K)
                upper = langevin_rdp(alpha, strong_convexity=1.0, smoothness=1.0 + 1e-12, **kw)
                lower = langevin_lower_rdp(alpha, **kw)
                comp = composition_rdp(alpha, **kw)
                ex0 = exact_by_recursion(alpha, eta, K, S, sigma, n, 0.0)
                exg = exact_by_recursion(alpha, eta, K, S, sigma, n, 2 * sigma**2)
                # the library's closed form agrees with the recursion
                closed = linear_gaussian_rdp(alpha, **kw)
                rel = abs(closed - ex0) / ex0
                m = min(upper - ex0, upper - exg, ex0 - lower, comp - ex0, 1e-10 - rel)
                margins.append(m)
                rows.append([eta, K, sigma, lower, ex0, exg, upper, comp, m])
    return report(
        "Langevin Theorem 1 / Theorem 2 / composition on the squared-loss instance",
        ["eta", "K", "sigma", "thm2_lower", "exact(0)", "exact(gauss)", "thm1", "composition", "margin"],
        rows,
        margins,
        note="exact = alpha*dmu^2/(2 s^2) with (dmu, s^2) iterated in mpmath; margin = min of the gaps",
    )


if __name__ == "__main__":
    sys.exit(main())
