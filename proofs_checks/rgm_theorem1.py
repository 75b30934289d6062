"""Theorem 1 of Hendrikx, Mangold, Bellet 2024 (RGM RDP, reconstructed form (5*) and general sigma).

For random (A, B, gamma, sigma, d, alpha) with alpha in the admissible range, the exact divergence
D_alpha(RGM(q) || RGM(q')) is maximised over pairs satisfying the relative-sensitivity condition
||q - q'|| <= A + B min(||q||, ||q'||) (eq. 3 for both ordered pairs): a random search over
(||q||, ||q'||, ||q - q'||) -- the divergence depends on nothing else -- plus the radial pair
q' = (1 + B + A/||q||) q. The exact divergence is computed here in mpmath from the general
log-determinant form of the Gaussian Renyi divergence (independent of the library's code), and
for a few one-dimensional cases by quadrature. Theorem 1 must never be below it; on the radial
pair with sigma = gamma A / B it must be attained (ratio 1).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import mpmath as mp  # noqa: E402
import numpy as np  # noqa: E402
from _common import report  # noqa: E402

from dpaudit.bounds.rgm import rgm_rdp  # noqa: E402

mp.mp.dps = 30


def exact_div(a, r1, r2, t, sigma, gamma, d):
    """D_a(N(q, s1^2 I) || N(q', s2^2 I)) with ||q|| = r1, ||q'|| = r2, ||q - q'|| = t (mpmath)."""
    a = mp.mpf(a)
    v1 = (sigma + gamma * mp.mpf(r1)) ** 2
    v2 = (sigma + gamma * mp.mpf(r2)) ** 2
    va = a * v2 + (1 - a) * v1  # Sigma_alpha = alpha Sigma_2 + (1 - alpha) Sigma_1
    if va <= 0:
        return mp.inf
    logdet = d * (mp.log(va) - (1 - a) * mp.log(v1) - a * mp.log(v2))
    return a / 2 * mp.mpf(t) ** 2 / va - logdet / (2 * (a - 1))


def quad_div(a, m1, s1, m2, s2):
    f = lambda x: mp.npdf(x, m1, s1) ** a * mp.npdf(x, m2, s2) ** (1 - a)  # noqa: E731
    return mp.log(mp.quad(f, [-mp.inf, m1, m2, mp.inf])) / (a - 1)


def main() -> int:
    rng = np.random.default_rng(2024)
    rows, margins = [], []
    worst_ratio_radial = 0.0
    for case in range(60):
        A = 10 ** rng.uniform(-2, 1)
        B = 10 ** rng.uniform(-3, 0)
        gamma = 10 ** rng.uniform(-2, 1)
        default_sigma = case % 2 == 0
        sigma_f = gamma * A / B if default_sigma else gamma * A / B * 10 ** rng.uniform(-1, 1)
        # exact parameters in mpmath (sigma = gamma A / B without rounding for the default)
        sigma = mp.mpf(gamma) * A / B if default_sigma else mp.mpf(sigma_f)
        d = int(rng.integers(1, 30))
        b = max(B, gamma * A / sigma_f)
        amax = 1 + 1 / (b * (2 + b))
        a = 1 + (amax - 1) * rng.uniform(0.01, 0.99)
        bound = rgm_rdp(a, A=A, B=B, gamma=gamma, dim=d, sigma=None if default_sigma else sigma_f)
        best = mp.mpf(0)
        # radial pair (both orders), built exactly in mpmath
        r = mp.mpf(10 ** rng.uniform(-3, 3))
        rp = r + A + B * r
        best = max(best, exact_div(a, rp, r, A + B * r, sigma, gamma, d), exact_div(a, r, rp, A + B * r, sigma, gamma, d))
        radial = exact_div(a, rp, r, A + B * r, sigma, gamma, d)
        # random admissible triples
        n = 400
        r1 = 10 ** rng.uniform(-3, 3, n)
        r2 = r1 * np.exp(rng.uniform(-1, 1, n) * np.log1p(B + A / r1))
        tmax = np.minimum(A + B * np.minimum(r1, r2), r1 + r2)
        tmin = np.abs(r1 - r2)
        keep = tmin <= tmax
        t = tmin + (tmax - tmin) * rng.uniform(size=n) ** 0.3 * (1 - 1e-12)  # strictly admissible
        for x1, x2, tt in zip(r1[keep], r2[keep], t[keep]):
            best = max(best, exact_div(a, x1, x2, tt, sigma, gamma, d))
        margin = (bound - float(best)) / bound
        margins.append(margin)
        if default_sigma:
            worst_ratio_radial = max(worst_ratio_radial, float(radial) / bound)
        rows.append([case, f"{A:.3g}", f"{B:.3g}", f"{gamma:.3g}", f"{sigma_f:.3g}", d, f"{a:.4g}", bound, float(best),
                     margin])
    # radial pair attains the bound (sigma = gamma A / B)
    margins.append(1e-9 - abs(1 - worst_ratio_radial))
    rows.append(["radial max ratio", "", "", "", "", "", "", worst_ratio_radial, "", 1e-9 - abs(1 - worst_ratio_radial)])
    # quadrature spot checks, d = 1
    for A, B, gamma, a in ((1.0, 0.1, 0.5, 2.0), (0.5, 0.3, 2.0, 1.5)):
        sigma = gamma * A / B
        q = 0.7
        qp = (1 + B + A / q) * q
        bound = rgm_rdp(a, A=A, B=B, gamma=gamma, dim=1)
        quad = float(quad_div(a, qp, sigma + gamma * qp, q, sigma + gamma * q))
        margins.append((bound - quad) / bound + 1e-12)
        rows.append(["quadrature", A, B, gamma, sigma, 1, a, bound, quad, (bound - quad) / bound])
    return report("RGM Theorem 1 vs the exact divergence maximised over admissible pairs",
                  ["case", "A", "B", "gamma", "sigma", "d", "alpha", "theorem 1", "max exact", "rel margin"],
                  rows, margins, note="rel margin = (bound - max exact)/bound; radial ratio must be 1 (1e-9)")


if __name__ == "__main__":
    sys.exit(main())
