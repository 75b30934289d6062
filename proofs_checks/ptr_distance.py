"""Proposition 2 of Hendrikx, Mangold, Bellet 2024 (PTR sorted bound) against brute force.

True distance: the fewest replace-one steps from D to a dataset with A_D' = X'^T X'/n + l2 I not
>= T. A new record adds the PSD term x' x'^T / n, so the adversary's best replacement is the zero
record (when the domain contains 0, as for a ball): the distance is exactly
min{|S| : lambda_min(A_D - T - sum_{i in S} x_i x_i^T / n) < 0}, found by enumerating subsets S
(small n). When 0 is not in the domain this is still a lower bound on the true distance, so the
checks below are sound. A finite set of non-zero candidate replacements is also tried to confirm
that none beats the zero record. Checked: k_hat (sorted bound) <= brute-force distance;
floor(g) + 1 <= k_hat for the sensitivity-1 Weyl statistic g = n lambda_min(A_D - T)/C^2;
|g(D) - g(D')| <= 1 on random neighbours.
"""

import itertools
import math
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402
from _common import report  # noqa: E402

from dpaudit.bounds.ptr import gram_matrix, ptr_distance, ptr_lower_bound_statistic  # noqa: E402


def brute_distance(X, T, l2, candidates=None):
    n, d = X.shape
    M = gram_matrix(X, l2) - T
    if np.linalg.eigvalsh(M)[0] < 0:
        return 0
    for k in range(1, n + 1):
        for S in itertools.combinations(range(n), k):
            XS = X[list(S)]
            base = M - XS.T @ XS / n
            if np.linalg.eigvalsh(base)[0] < -1e-12:
                return k
            if candidates is not None:  # non-zero replacements only add PSD terms: never bad if base is good
                for c in candidates:
                    if np.linalg.eigvalsh(base + np.outer(c, c) / n)[0] < -1e-12:
                        return -1  # would contradict the argument
    return math.inf


def main() -> int:
    rng = np.random.default_rng(68)
    rows, margins = [], []
    worst_sens = 0.0
    for case in range(120):
        n = int(rng.integers(3, 9))
        d = int(rng.integers(1, 4))
        X = rng.normal(size=(n, d)) * rng.uniform(0.2, 2.0, size=d)
        l2 = float(rng.choice([0.0, 0.05]))
        lam = np.linalg.eigvalsh(gram_matrix(X, l2))[0]
        if case % 2:
            T = rng.uniform(0.05, 0.95) * lam * np.eye(d)
        else:
            G = rng.normal(size=(d, d))
            T = G @ G.T
            T *= rng.uniform(0.05, 0.95) * lam / np.linalg.eigvalsh(T)[-1]
        cands = rng.normal(size=(4, d)) if case < 20 else None
        k = brute_distance(X, T, l2, cands)
        k_hat = ptr_distance(X, T, l2=l2)
        C = float(np.linalg.norm(X, axis=1).max()) * 1.01
        g = ptr_lower_bound_statistic(X, T, record_bound=C, l2=l2)
        # neighbour sensitivity of g
        X2 = X.copy()
        v = rng.normal(size=d)
        X2[rng.integers(n)] = C * rng.uniform() * v / np.linalg.norm(v)
        g2 = ptr_lower_bound_statistic(X2, T, record_bound=C, l2=l2)
        worst_sens = max(worst_sens, abs(g - g2))
        if k == -1:
            margins.append(-1.0)
        else:
            gap = 0.0 if (math.isinf(k) and math.isinf(k_hat)) else k - k_hat
            margins.append(min(gap, k_hat - (math.floor(g) + 1), 1.0 - abs(g - g2)))
        rows.append([case, n, d, l2, k, k_hat, round(g, 4), round(abs(g - g2), 4), margins[-1]])
    shown = rows[:25] + [["...", "", "", "", "", "", "", f"max |dg| = {worst_sens:.4f}", ""]]
    return report("PTR: sorted bound k_hat vs brute-force distance, Weyl statistic g",
                  ["case", "n", "d", "l2", "brute k", "k_hat", "g", "|g-g'|", "margin"], shown, margins,
                  note="margin = min(k - k_hat, k_hat - floor(g) - 1, 1 - |g(D) - g(D')|); 120 datasets")


if __name__ == "__main__":
    sys.exit(main())
