"""Monte Carlo check of the exact last-iterate law of noisy GD on the squared-loss instance.

Simulates Algorithm 1 (Chourasia, Ye, Shokri 2021) on l(theta; x) = 0.5 (theta - x)^2 for two
neighbouring datasets (xbar and xbar' = xbar + S_g/n), many independent trials at once, and
compares the empirical mean and variance of theta_K with those behind linear_gaussian_rdp, and the
plug-in Renyi divergence alpha (m - m')^2 / (2 v) with the exact value. Tolerances are 5 standard
errors (CLT: mean s/sqrt(N), variance s^2 sqrt(2/(N-1)); divergence by the delta method).
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402
from _common import report  # noqa: E402

from dpaudit.bounds.langevin import linear_gaussian_moments, linear_gaussian_rdp  # noqa: E402


def simulate(xbar, eta, sigma, K, trials, rng):
    theta = np.zeros(trials)
    noise = math.sqrt(2 * eta * sigma**2)
    for _ in range(K):  # loop over steps, batched over trials
        theta = theta - eta * (theta - xbar) + noise * rng.standard_normal(trials)
    return theta


def main() -> int:
    rng = np.random.default_rng(20210205)
    trials, alpha, S, n, z = 200_000, 2.0, 1.0, 1, 5.0
    rows, margins = [], []
    for eta, K, sigma in [(0.1, 10, 1.0), (0.1, 100, 1.0), (0.5, 3, 1.0), (0.05, 60, 0.5), (0.9, 20, 2.0)]:
        a = simulate(0.0, eta, sigma, K, trials, rng)
        b = simulate(S / n, eta, sigma, K, trials, rng)
        shift, var = linear_gaussian_moments(sensitivity=S, step_size=eta, sigma=sigma, n=n, steps=K)
        exact = linear_gaussian_rdp(alpha, sensitivity=S, step_size=eta, sigma=sigma, n=n, steps=K)
        s = math.sqrt(var)
        se_mean = s / math.sqrt(trials)
        se_var = var * math.sqrt(2.0 / (trials - 1))
        m_gap = abs((b.mean() - a.mean()) - shift)
        v_pool = 0.5 * (a.var(ddof=1) + b.var(ddof=1))
        v_gap = abs(v_pool - var)
        est = alpha * (b.mean() - a.mean()) ** 2 / (2 * v_pool)
        # delta method: d est = alpha*shift/var * d(shift) - alpha*shift^2/(2 var^2) * d(var)
        se_est = math.hypot(alpha * shift / var * math.sqrt(2) * se_mean,
                            alpha * shift**2 / (2 * var**2) * se_var / math.sqrt(2))
        for name, gap, tol in (("mean shift", m_gap, z * math.sqrt(2) * se_mean),
                               ("variance", v_gap, z * se_var / math.sqrt(2)),
                               ("divergence", abs(est - exact), z * se_est)):
            margins.append(tol - gap)
            rows.append([eta, K, sigma, name, gap, tol, tol - gap])
        rows.append([eta, K, sigma, "exact/MC", exact, est, ""])
    return report(
        "Noisy GD last iterate: exact Gaussian law vs Monte Carlo (200k trials per dataset)",
        ["eta", "K", "sigma", "quantity", "|gap| / exact", "5 s.e. / MC", "margin"],
        rows,
        margins,
    )


if __name__ == "__main__":
    sys.exit(main())
