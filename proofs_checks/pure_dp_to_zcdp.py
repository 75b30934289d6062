"""eps-DP implies (eps^2/2)-zCDP (Bun & Steinke 2016, Prop. 1.4; Lee & Kifer 2018, Lemma 3.7).

Claim: if every pair of neighbouring output distributions (P, Q) satisfies e^-eps <= P/Q <= e^eps,
then D_alpha(P || Q) <= alpha eps^2 / 2 for every alpha > 1.

Independent computation: brute force over small discrete distributions in mpmath (30 digits).
For random pairs (P, Q) on k = 2..6 outcomes (Dirichlet draws, and pairs built from log-ratios
pushed to the +-eps vertices), eps_pair := max_j |log P_j / Q_j| is the exact pure-DP epsilon of
the pair, and D_alpha(P || Q) = log(sum_j P_j^alpha Q_j^(1-alpha)) / (alpha - 1) is summed exactly
on a grid of orders alpha in (1, 200]. Randomized response (the extremal pair,
P = (e^eps, 1)/(1 + e^eps), Q reversed) is included for eps in {0.01, ..., 5}.
Margin = alpha eps^2/2 - D_alpha, and also (reported separately) the randomized-response
divergence against the tight curve of Bun & Steinke 2016 (Steinke 2024).
"""

from __future__ import annotations

import os
import sys

import mpmath as mp
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402

mp.mp.dps = 30
ALPHAS = [1.001, 1.1, 1.5, 2, 3, 5, 10, 30, 100, 200]


def renyi(P, Q, alpha):
    a = mp.mpf(alpha)
    return mp.log(mp.fsum(p**a * q ** (1 - a) for p, q in zip(P, Q))) / (a - 1)


def pair_eps(P, Q):
    return max(abs(mp.log(p / q)) for p, q in zip(P, Q))


def random_pairs(rng, count):
    for _ in range(count):
        k = int(rng.integers(2, 7))
        Q = rng.dirichlet(np.ones(k))
        if rng.random() < 0.5:
            P = rng.dirichlet(np.ones(k))
        else:  # log-ratios at the vertices +-t, then renormalised
            t = rng.uniform(0.01, 3)
            P = Q * np.exp(t * rng.choice([-1.0, 1.0], size=k))
            P = P / P.sum()
        yield [mp.mpf(float(x)) for x in P], [mp.mpf(float(x)) for x in Q]


def main() -> int:
    rng = np.random.default_rng(1605)
    rows, margins = [], []
    worst_ratio = 0.0
    n_pairs = 0
    for P, Q in random_pairs(rng, 300):
        eps = pair_eps(P, Q)
        if eps < 1e-12:  # identical distributions (all log-ratios of one sign renormalise to P = Q)
            continue
        n_pairs += 1
        for a in ALPHAS:
            d = renyi(P, Q, a)
            bound = a * eps**2 / 2
            margins.append(float(bound - d))
            worst_ratio = max(worst_ratio, float(d / bound))
    rows.append(["random pairs", n_pairs, "-", worst_ratio])
    rr_rows, rr_margins = [], []
    for eps in (0.01, 0.1, 0.5, 1.0, 2.0, 5.0):
        e = mp.mpf(eps)
        P = [mp.exp(e) / (1 + mp.exp(e)), 1 / (1 + mp.exp(e))]
        Q = [P[1], P[0]]
        wr = 0.0
        for a in ALPHAS:
            d = renyi(P, Q, a)
            bound = a * e**2 / 2
            margins.append(float(bound - d))
            wr = max(wr, float(d / bound))
            # tight curve (Bun & Steinke 2016): eps - log((1+e^-eps)/(1+e^-(2a-1)eps))/(a-1)
            am = mp.mpf(a)
            tight = e - mp.log((1 + mp.exp(-e)) / (1 + mp.exp(-(2 * am - 1) * e))) / (am - 1)
            rr_margins.append(float(1e-20 - abs(tight - d)))
            if a in (2, 200):
                rr_rows.append([eps, a, float(d), float(tight)])
        rows.append(["randomized response", 1, eps, wr])
    status = report("pure eps-DP => eps^2/2-zCDP: brute-force D_alpha <= alpha eps^2/2 over alpha in (1, 200]",
                    ["family", "pairs", "eps", "max D_alpha/(alpha eps^2/2)"], rows, margins)
    status |= report("randomized response: brute-force D_alpha equals the tight pure-DP curve (Steinke 2024)",
                     ["eps", "alpha", "D_alpha (sum)", "tight curve"], rr_rows, rr_margins)
    return status


if __name__ == "__main__":
    sys.exit(main())
