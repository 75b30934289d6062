"""tCDP form of the RGM (Hendrikx, Mangold, Bellet 2024; docs/theorems/rgm.md, derived; the paper's constants are unknown).

Claim: the RGM is (K, omega)-tCDP with K = m^2 + d b^2 (2+b)^2 / 2 and omega = 1 + 1/(2 b (2+b))
(b = B, m = B/gamma for sigma = gamma A / B). Checked over the WHOLE order range 1 < alpha < omega
(dense grid, log-spaced near 1 and linear up to omega) against the exact divergence of the radial
pair q' = (1 + B + A/||q||) q -- which attains the supremum over admissible pairs
(rgm_theorem1.py) -- computed in mpmath from the log-determinant form, and against the library's
Theorem 1 curve: both must stay below alpha K.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import mpmath as mp  # noqa: E402
import numpy as np  # noqa: E402
from _common import report  # noqa: E402

from dpaudit.bounds.rgm import rgm_rdp, rgm_tcdp  # noqa: E402

mp.mp.dps = 30


def radial_div(a, A, B, gamma, sigma, d, r=1.0):
    a = mp.mpf(a)
    r = mp.mpf(r)
    rp = r + A + B * r
    v1 = (sigma + gamma * rp) ** 2
    v2 = (sigma + gamma * r) ** 2
    va = a * v2 + (1 - a) * v1
    if va <= 0:
        return mp.inf
    t = A + B * r
    return a / 2 * t**2 / va - d * (mp.log(va) - (1 - a) * mp.log(v1) - a * mp.log(v2)) / (2 * (a - 1))


def main() -> int:
    rng = np.random.default_rng(18)
    rows, margins = [], []
    cases = [(1.0, 0.01, 1.0, 10), (1.0, 0.001, 0.1, 22), (1.0, 0.05, 0.5, 1), (2.0, 0.5, 2.0, 3), (0.3, 2.0, 5.0, 2)]
    cases += [(10 ** rng.uniform(-2, 1), 10 ** rng.uniform(-3, 0.5), 10 ** rng.uniform(-2, 1), int(rng.integers(1, 50)))
              for _ in range(10)]
    for A, B, gamma, d in cases:
        K, omega = rgm_tcdp(A=A, B=B, gamma=gamma, dim=d)
        sigma = mp.mpf(gamma) * A / B
        w = omega - 1
        grid = 1 + w * np.unique(np.concatenate([np.geomspace(1e-8, 1, 150), np.linspace(0.01, 1, 150)]))
        lib = rgm_rdp(grid, A=A, B=B, gamma=gamma, dim=d)
        worst = np.inf
        for a, lb in zip(grid, lib):
            ex = float(radial_div(a, A, B, gamma, sigma, d, r=10 ** rng.uniform(-2, 2)))
            worst = min(worst, (a * K - ex) / (a * K), (a * K - lb) / (a * K))
        margins.append(worst)
        rows.append([f"{A:.3g}", f"{B:.3g}", f"{gamma:.3g}", d, K, omega, worst])
    return report("RGM tCDP (K, omega): D_alpha <= alpha K on 1 < alpha < omega",
                  ["A", "B", "gamma", "d", "K", "omega", "min rel margin"], rows, margins,
                  note="margin = min over the grid of (alpha K - max(exact radial, theorem 1)) / (alpha K)")


if __name__ == "__main__":
    sys.exit(main())
