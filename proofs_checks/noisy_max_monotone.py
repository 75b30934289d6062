"""Report-noisy-max with Lap(Delta/eps) is eps-DP in the monotone case (Dwork-Roth Claim 3.9).

This is the charge DP-AGD's NoisyMax relies on (Lee & Kifer 2018, Alg. 2 line 12; dpaudit's
``noisy_max_charge`` with neighbouring="add_remove"): clipped per-example losses lie in
[0, C_obj], so under add/remove every score moves in the same direction by at most C_obj.

Independent computation: the exact selection probabilities
    P[argmax_j (u_j + Lap_j(b)) = i] = int f_b(x - u_i) prod_{j != i} F_b(x - u_j) dx
by adaptive quadrature (scipy, breakpoints at the kinks u_j), for score vectors u in R^k
(k = 2..5) and neighbours u' = u + v with v in [0, Delta]^k (all scores up) or [-Delta, 0]^k
(all down): random v and the extreme vertices (one coordinate moved, all but one moved, all
moved). Margin = eps - max_i |log P_u(i) - log P_u'(i)| with eps = Delta/b. The same
probabilities sum to 1 (checked). Non-monotone moves are shown for contrast only (not claimed).
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np
from scipy import integrate

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402


def lap_pdf(x, b):
    return math.exp(-abs(x) / b) / (2 * b)


def lap_cdf(x, b):
    return 0.5 * math.exp(x / b) if x < 0 else 1 - 0.5 * math.exp(-x / b)


def select_probs(u, b):
    u = list(map(float, u))
    k = len(u)
    lo, hi = min(u) - 60 * b, max(u) + 60 * b
    out = []
    for i in range(k):
        def f(x, i=i):
            p = lap_pdf(x - u[i], b)
            for j in range(k):
                if j != i:
                    p *= lap_cdf(x - u[j], b)
            return p
        val, _ = integrate.quad(f, lo, hi, points=sorted(set(u)), epsabs=1e-15, epsrel=1e-12, limit=400)
        out.append(val)
    return np.array(out)


def max_log_ratio(u, v, b):
    p, q = select_probs(u, b), select_probs(np.asarray(u) + np.asarray(v), b)
    return float(np.max(np.abs(np.log(p) - np.log(q)))), abs(p.sum() - 1), abs(q.sum() - 1)


def main() -> int:
    rng = np.random.default_rng(39)
    rows, margins, sum_err = [], [], []
    worst_by_k = {}
    for k in (2, 3, 4, 5):
        for eps in (0.1, 1.0, 3.0):
            delta_s, b = 1.0, 1.0 / eps
            vs = []
            for _ in range(4):
                vs.append(rng.uniform(0, delta_s, size=k))
            for j in range(k):
                e = np.zeros(k)
                e[j] = delta_s
                vs.append(e)
                vs.append(delta_s - e)
            vs.append(np.full(k, delta_s))
            for _ in range(2):
                u = rng.uniform(-2, 2, size=k) * delta_s
                for v in vs:
                    for sign in (1, -1):
                        lr, e1, e2 = max_log_ratio(u, sign * v, b)
                        margins.append(eps - lr)
                        sum_err.append(max(e1, e2))
                        key = (k, eps)
                        worst_by_k[key] = max(worst_by_k.get(key, 0.0), lr)
    for (k, eps), lr in sorted(worst_by_k.items()):
        rows.append([k, eps, lr, eps, eps - lr])
    status = report("report-noisy-max, Laplace(Delta/eps), monotone neighbours: max |log P ratio| <= eps",
                    ["k", "eps", "max log ratio (quadrature)", "eps", "margin"], rows, margins)
    status |= report("selection probabilities sum to 1 (quadrature accuracy, tolerance 1e-9)",
                     ["cases", "max |sum - 1|"], [[len(sum_err), max(sum_err)]], [1e-9 - e for e in sum_err])
    # contrast: opposite moves can exceed eps (why replace-one needs Lap(2 Delta/eps))
    contrast = []
    for eps in (0.1, 1.0, 3.0):
        lr, _, _ = max_log_ratio([0.0, 0.0], [1.0, -1.0], 1.0 / eps)
        contrast.append([eps, lr, 2 * eps])
    print("contrast (not a claim): non-monotone move v = (+Delta, -Delta) on k = 2")
    print("  eps  max log ratio  2 eps")
    for r in contrast:
        print(f"  {r[0]:g}  {r[1]:.6g}  {r[2]:g}")
    return status


if __name__ == "__main__":
    sys.exit(main())
