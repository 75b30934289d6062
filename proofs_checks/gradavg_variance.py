"""GradAvg (Lee & Kifer 2018, Sec. 4): the averaged estimate has the variance of one rho_new draw.

Claim: with g1 = g + N(0, C^2/(2 rho_old)) and g2 = g + N(0, C^2/(2 (rho_new - rho_old))),
S = (rho_old g1 + (rho_new - rho_old) g2) / rho_new is unbiased with per-coordinate variance
C^2/(2 rho_new), while the extra zCDP charge is rho_new - rho_old.

Independent computation: Monte Carlo. dpaudit's ``gradavg`` is run on batched inputs
(200,000 x 8 coordinates per case, fixed seed) starting from a g1 drawn here; the sample
variance and mean are compared with C^2/(2 rho_new) and g. Margin = 6 standard errors minus the
deviation (for the variance, SE = var sqrt(2/(N-1)) of a Gaussian sample variance). A second
table applies GradAvg twice in a row (two consecutive failures, feeding the averaged estimate
back in): the variance must again be that of a single fresh measurement at the final budget.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402

from dpaudit.bounds.dp_agd import gradavg, gradavg_charge  # noqa: E402

N, DIM = 200_000, 8


def main() -> int:
    rows, margins = [], []
    rng = np.random.default_rng(20180819)
    cases = [(1e-3, 1.1e-3, 3.0), (0.01, 0.05, 1.0), (0.5, 0.55, 2.0), (2e-5, 2.2e-5, 3.0)]
    for rho_old, rho_new, C in cases:
        g = rng.normal(size=DIM) * 5
        g1 = g + rng.normal(0, C / math.sqrt(2 * rho_old), size=(N, DIM))
        S, charge = gradavg(rho_old, rho_new, np.broadcast_to(g, (N, DIM)), g1, C, rng=rng)
        var_theory = C**2 / (2 * rho_new)
        var_emp = S.var(axis=0, ddof=1).mean()
        se_var = var_theory * math.sqrt(2 / (N - 1)) / math.sqrt(DIM)
        mean_dev = np.abs(S.mean(axis=0) - g).max()
        se_mean = math.sqrt(var_theory / N)
        margins += [6 * se_var - abs(var_emp - var_theory), 6 * se_mean - mean_dev,
                    charge - (rho_new - rho_old)]
        rows.append([rho_old, rho_new, C, var_emp, var_theory, var_emp / var_theory, mean_dev / se_mean, charge])
    status = report("GradAvg: Monte Carlo variance of the averaged estimate vs C^2/(2 rho_new)",
                    ["rho_old", "rho_new", "C", "var (MC)", "C^2/(2 rho_new)", "ratio", "|mean err|/SE", "charge"],
                    rows, margins)
    # two consecutive failures: rho -> (1+gamma) rho -> (1+gamma)^2 rho, averaged estimate fed back
    rows2, margins2 = [], []
    rho0, gamma, C = 1e-3, 0.1, 3.0
    g = rng.normal(size=DIM)
    est = g + rng.normal(0, C / math.sqrt(2 * rho0), size=(N, DIM))
    total = rho0
    r = rho0
    for step in (1, 2, 3):
        r_new = (1 + gamma) * r
        est, ch = gradavg(r, r_new, np.broadcast_to(g, (N, DIM)), est, C, rng=rng)
        total += ch
        var_theory = C**2 / (2 * r_new)
        var_emp = est.var(axis=0, ddof=1).mean()
        se_var = var_theory * math.sqrt(2 / (N - 1)) / math.sqrt(DIM)
        margins2 += [6 * se_var - abs(var_emp - var_theory), gradavg_charge(r, r_new) - (r_new - r)]
        rows2.append([step, r_new, var_emp, var_theory, var_emp / var_theory, total])
        r = r_new
    # the composed charges sum to the final budget (zCDP composition), up to upward rounding
    margins2.append(total - r)
    margins2.append(1e-12 * r - (total - r))
    status |= report("GradAvg repeated (averaged estimate fed back): variance of one fresh rho measurement",
                     ["failures", "rho", "var (MC)", "C^2/(2 rho)", "ratio", "total charged"], rows2, margins2)
    return status


if __name__ == "__main__":
    sys.exit(main())
