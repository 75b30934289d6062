"""Relative sensitivity of the ridge gradient (Hendrikx, Mangold, Bellet 2024, eqs. 9-11).

For random datasets, the constants (A, B) returned by ridge_relative_sensitivity must dominate
the actual gradient differences ||grad f_D(w) - grad f_D'(w)|| <= A + B ||grad f_D(w)|| for random
neighbours D' and random w (log-uniform scales, plus w*_D and w*_D' where the absolute term
matters). Gradients are computed directly from the per-record sums (not through A_D, b_D).
Three settings: (i) eq. (11) constants, new record drawn from the data's envelope (another
record, or a random direction scaled to the envelope); (ii) domain constants for ||x'|| <= C,
|y'| <= Y; (iii) ridge_ptr_constants on pairs of datasets that both satisfy A_D >= mu0 I (the
guarantee PTR relies on), checked in both directions.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402
from _common import report  # noqa: E402

from dpaudit.bounds.ridge import ridge_ptr_constants, ridge_relative_sensitivity  # noqa: E402


def grad(X, y, l2, W):
    """(1/n) sum_i x_i (x_i^T w - y_i) + l2 w for each row w of W."""
    n = X.shape[0]
    res = W @ X.T - y  # (m, n)
    return res @ X / n + l2 * W


def ratio(X, y, Xn, yn, l2, W, A, B):
    g = grad(X, y, l2, W)
    diff = np.linalg.norm(g - grad(Xn, yn, l2, W), axis=1)
    return float(np.max(diff / (A + B * np.linalg.norm(g, axis=1))))


def random_w(rng, X, y, Xn, yn, l2, m=100):
    d = X.shape[1]
    W = rng.normal(size=(m, d)) * 10 ** rng.uniform(-4, 3, size=(m, 1))
    opt = [np.linalg.solve(Z.T @ Z / Z.shape[0] + l2 * np.eye(d), Z.T @ t / Z.shape[0]) for Z, t in ((X, y), (Xn, yn))]
    return np.vstack([W, opt[0], opt[1], opt[0] + 1e-3 * rng.normal(size=d)])


def main() -> int:
    rng = np.random.default_rng(911)
    rows, margins = [], []
    for case in range(30):
        n = int(rng.integers(5, 60))
        d = int(rng.integers(1, 5))
        l2 = float(10 ** rng.uniform(-3, 0))
        X = rng.normal(size=(n, d)) * rng.uniform(0.1, 3.0, size=d)
        y = rng.normal(size=n) * rng.uniform(0.1, 5.0)
        A, B = ridge_relative_sensitivity(X, y, l2)
        AD = X.T @ X / n + l2 * np.eye(d)
        h = np.linalg.norm(X, axis=1) * np.linalg.norm(np.linalg.solve(AD, X.T), axis=0)
        r = np.abs(y) * np.linalg.norm(X, axis=1)
        worst1 = 0.0
        for _ in range(40):
            j = rng.integers(n)
            Xn, yn = X.copy(), y.copy()
            if rng.uniform() < 0.5:
                k = rng.integers(n)
                Xn[j], yn[j] = X[k], y[k] * rng.choice([-1.0, 1.0])
            else:
                v = rng.normal(size=d)
                hv = np.linalg.norm(v) * np.linalg.norm(np.linalg.solve(AD, v))
                v *= np.sqrt(h.max() / hv) * rng.uniform() ** 0.2  # ||v|| ||A^{-1} v|| <= max h
                Xn[j] = v
                yn[j] = rng.choice([-1.0, 1.0]) * r.max() / np.linalg.norm(v) * rng.uniform()
            worst1 = max(worst1, ratio(X, y, Xn, yn, l2, random_w(rng, X, y, Xn, yn, l2), A, B))
        # (ii) domain constants
        C, Y = float(np.linalg.norm(X, axis=1).max()) * 1.2, float(np.abs(y).max()) * 1.2
        A2, B2 = ridge_relative_sensitivity(X, y, l2, record_bound=C, label_bound=Y)
        worst2 = 0.0
        for _ in range(40):
            Xn, yn = X.copy(), y.copy()
            j = rng.integers(n)
            v = rng.normal(size=d)
            Xn[j] = C * rng.uniform() ** 0.1 * v / np.linalg.norm(v)
            yn[j] = Y * rng.uniform(-1, 1)
            worst2 = max(worst2, ratio(X, y, Xn, yn, l2, random_w(rng, X, y, Xn, yn, l2), A2, B2))
        # (iii) PTR constants on good pairs (both A_D, A_D' >= mu0 I), both directions
        Xc = X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True) / C)
        yc = np.clip(y, -Y, Y)
        mu0 = 0.9 * (np.linalg.eigvalsh(Xc.T @ Xc / n + l2 * np.eye(d))[0] - C * C / n)
        worst3 = 0.0
        if mu0 > 0:
            A3, B3 = ridge_ptr_constants(n, record_bound=C, label_bound=Y, threshold=mu0)
            for _ in range(40):
                Xn, yn = Xc.copy(), yc.copy()
                j = rng.integers(n)
                v = rng.normal(size=d)
                Xn[j] = C * rng.uniform() ** 0.1 * v / np.linalg.norm(v)
                yn[j] = Y * rng.uniform(-1, 1)
                assert np.linalg.eigvalsh(Xn.T @ Xn / n + l2 * np.eye(d))[0] >= mu0
                W = random_w(rng, Xc, yc, Xn, yn, l2)
                worst3 = max(worst3, ratio(Xc, yc, Xn, yn, l2, W, A3, B3), ratio(Xn, yn, Xc, yc, l2, W, A3, B3))
        margins.append(1.0 - max(worst1, worst2, worst3))
        rows.append([case, n, d, f"{l2:.3g}", f"{A:.3g}", f"{B:.3g}", round(worst1, 4), round(worst2, 4),
                     round(worst3, 4) if mu0 > 0 else "n/a", margins[-1]])
    return report("Ridge relative sensitivity: max ||dgrad|| / (A + B ||grad f_D||) over random neighbours and w",
                  ["case", "n", "d", "l2", "A", "B", "envelope", "domain", "ptr (both ways)", "margin"], rows, margins,
                  note="margin = 1 - worst ratio (must be >= 0)")


if __name__ == "__main__":
    sys.exit(main())
