"""Sensitivities and Gaussian calibrations of the sparse-gradient mechanisms (Ghazi et al. 2024, C.2-C.4).

Claims: for records with ||z||_2 <= L and ||z||_0 <= s, replace-one, the mean has l1 sensitivity
2 L sqrt(s)/n and l2 sensitivity 2L/n (both attained); the classical Gaussian calibrations of
``dpaudit.bounds.sparse`` give (eps, delta)-DP (projection, output perturbation) and
(eps, delta/2)-DP for the l1-recovery sketch at sensitivity 3L/n.

Independent computations:
1. brute force over random sparse datasets: max over records i and over candidate replacements
   z' (random s-sparse vectors of norm <= L, plus -z_i and sign-flipped equal-magnitude vectors)
   of ||mean(D) - mean(D')||_1 and _2; margin = bound - brute-force max; and the extremal pair
   (z = L/sqrt(s) * (+-1 on s coordinates), z' = -z) attains the bound (|gap| <= 1e-12 relative).
2. the exact Gaussian delta(eps) (Balle-Wang; Phi evaluated in mpmath, 30 digits) of the returned
   sigma at the returned sensitivity is <= the claimed delta; margin = log(delta) - log(exact).
"""

from __future__ import annotations

import math
import os
import sys

import mpmath as mp
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402

from dpaudit.bounds.sparse import (  # noqa: E402
    l1_recovery_calibration,
    output_perturbation_calibration,
    projection_mechanism_calibration,
    sparse_mean_sensitivity,
)

mp.mp.dps = 30


def random_sparse(rng, size, d, s, L):
    Z = np.zeros((size, d))
    for r in range(size):
        k = int(rng.integers(1, s + 1))
        idx = rng.choice(d, size=k, replace=False)
        v = rng.normal(size=k)
        Z[r, idx] = v / np.linalg.norm(v) * L * rng.uniform(0.2, 1.0) ** 0.3
    return Z


def equal_magnitude(rng, d, s, L):
    z = np.zeros(d)
    idx = rng.choice(d, size=s, replace=False)
    z[idx] = rng.choice([-1.0, 1.0], size=s) * L / math.sqrt(s)
    return z


def gaussian_delta_exact(sigma, eps, sens):
    sigma, eps, sens = mp.mpf(sigma), mp.mpf(eps), mp.mpf(sens)
    return mp.ncdf(sens / (2 * sigma) - eps * sigma / sens) - mp.exp(eps) * mp.ncdf(-sens / (2 * sigma) - eps * sigma / sens)


def main() -> int:
    rng = np.random.default_rng(2404)
    rows, margins = [], []
    for n, d, s, L in [(3, 6, 1, 1.0), (5, 10, 2, 2.0), (8, 20, 3, 0.5), (10, 30, 5, 1.0), (4, 8, 8, 1.5)]:
        b1 = sparse_mean_sensitivity(L, s, n, "l1")
        b2 = sparse_mean_sensitivity(L, s, n, "l2")
        worst1 = worst2 = 0.0
        for _ in range(20):
            D = random_sparse(rng, n, d, s, L)
            D[0] = equal_magnitude(rng, d, s, L) if rng.random() < 0.5 else D[0]
            mean = D.mean(axis=0)
            cands = np.vstack([random_sparse(rng, 200, d, s, L), -D, [equal_magnitude(rng, d, s, L) for _ in range(50)]])
            for i in range(n):
                Dp_means = mean + (cands - D[i]) / n  # mean of D with record i replaced, all candidates at once
                diff = Dp_means - mean
                worst1 = max(worst1, np.abs(diff).sum(axis=1).max())
                worst2 = max(worst2, np.linalg.norm(diff, axis=1).max())
        z = equal_magnitude(rng, d, s, L)
        tight1 = np.abs(2 * z).sum() / n
        tight2 = np.linalg.norm(2 * z) / n
        margins += [b1 - worst1, b2 - worst2, 1e-12 * b1 - abs(b1 - tight1), 1e-12 * b2 - abs(b2 - tight2)]
        rows.append([n, d, s, L, worst1, tight1, b1, worst2, tight2, b2])
    status = report("sparse mean sensitivity: brute-force max over neighbours <= bound, extremal pair attains it",
                    ["n", "d", "s", "L", "max l1", "tight l1", "bound l1", "max l2", "tight l2", "bound l2"],
                    rows, margins)
    # calibrations against the exact Gaussian delta
    crow, cmarg = [], []
    for eps in (0.1, 0.5, 0.9):
        for delta in (1e-8, 1e-5, 1e-3):
            for name, cal, target in (
                ("projection", projection_mechanism_calibration(1.0, 4, 100, eps, delta), delta),
                ("output-pert", output_perturbation_calibration(1.0, 100, 0.1, eps, delta), delta),
                ("l1-recovery", l1_recovery_calibration(1.0, 4, 64, 100, eps, delta), delta / 2),
            ):
                ex = gaussian_delta_exact(cal.scale, eps, cal.sensitivity)
                cmarg.append(float(mp.log(target) - mp.log(ex)))
                crow.append([name, eps, delta, cal.scale, cal.sensitivity, float(ex), target])
    status |= report("classical Gaussian calibrations: exact delta(eps) of the returned sigma <= claimed delta",
                     ["mechanism", "eps", "delta", "sigma", "l2 sens", "exact delta", "claimed"], crow, cmarg)
    return status


if __name__ == "__main__":
    sys.exit(main())
