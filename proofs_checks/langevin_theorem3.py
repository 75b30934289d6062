"""Theorem 3 (Chourasia, Ye, Shokri 2021): the utility settings are (epsilon, delta)-DP.

For each target (epsilon, delta) the returned (eta, sigma, K*) are plugged, in mpmath (40 digits,
independently of the library's formulas), into Theorem 1 with S_g = 2L; Mironov's conversion at
alpha = 1 + 2 log(1/delta)/epsilon of the K -> infinity curve must give epsilon EXACTLY (to 1e-12
relative, from below: sigma is rounded up), and the finite-K* curve through the library's best
conversion must not exceed epsilon.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import mpmath as mp  # noqa: E402
from _common import report  # noqa: E402

from dpaudit.bounds.langevin import langevin_epsilon, langevin_utility_settings  # noqa: E402


def main() -> int:
    mp.mp.dps = 40
    rows, margins = [], []
    for eps in (0.1, 0.5, 1.0, 4.0):
        for delta in (1e-5, 1e-8):
            for L, beta, lam in ((1.0, 1.0, 1.0), (2.0, 5.0, 0.5)):
                n, d = 20000, 10
                s = langevin_utility_settings(eps, delta, lipschitz=L, smoothness=beta, strong_convexity=lam,
                                              n=n, dim=d)
                a = 1 + 2 * mp.log(1 / mp.mpf(delta)) / eps
                slope_inf = (2 * mp.mpf(L)) ** 2 / (lam * mp.mpf(s.sigma) ** 2 * n**2)
                mironov_inf = a * slope_inf + mp.log(1 / mp.mpf(delta)) / (a - 1)
                slope_K = slope_inf * (1 - mp.exp(-lam * mp.mpf(s.step_size) * s.steps / 2))
                mironov_K = a * slope_K + mp.log(1 / mp.mpf(delta)) / (a - 1)
                best_K = langevin_epsilon(delta, sensitivity=s.sensitivity, strong_convexity=lam,
                                          smoothness=beta, step_size=s.step_size, sigma=s.sigma, n=n,
                                          steps=s.steps)
                rel = abs(float(mironov_inf) - eps) / eps
                m = min(eps - float(mironov_inf), 1e-12 - rel, eps - float(mironov_K), eps - best_K)
                margins.append(m)
                rows.append([eps, delta, L, beta, lam, s.steps, float(mironov_inf), float(mironov_K), best_K, m])
    return report(
        "Langevin Theorem 3 settings reproduce (epsilon, delta)",
        ["eps", "delta", "L", "beta", "lambda", "K*", "mironov(K=inf)", "mironov(K*)", "best conv(K*)", "margin"],
        rows,
        margins,
        note="margin = min(eps - each value, 1e-12 - |mironov(K=inf) - eps|/eps)",
    )


if __name__ == "__main__":
    sys.exit(main())
