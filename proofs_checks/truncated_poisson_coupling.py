"""The coupling behind ``TruncatedPoissonGaussian`` (dpaudit.mechanisms.truncated_subsampled).

Claim (the module's derivation; add/remove, D' = D + x*): given that M = m >= b of the other records are
sampled, the truncated batch of D' (x* sampled with probability q; a batch above b replaced by a uniform
b-subset) has exactly the law

    q_m * Unif{S + x* : S a (b-1)-subset of the m}  +  (1 - q_m) * Unif{b-subsets of the m},   q_m = q b / (m + 1),

while D's batch is Unif{b-subsets of the m}; so with S and the extra record revealed the pair is a
Poisson-subsampled Gaussian of sensitivity 2C at rate q_m. And the hockey-stick divergence of that pair,
in both directions, is non-decreasing in the rate (the grouping of m into ranges charged the largest
rate is then an upper bound).

Independent computation: (1) the batch law by exhaustive enumeration in exact rational arithmetic
(fractions) for small m, b; (2) the hockey-stick divergences of (N(0,1), (1-r) N(0,1) + r N(2,1)) and its
reverse by mpmath quadrature (25 digits) on a grid of rates.
"""

from __future__ import annotations

import itertools
import math
import os
import sys
from fractions import Fraction

import mpmath as mp

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402

mp.mp.dps = 25


def truncated_batch_law(m: int, b: int, q: Fraction) -> dict:
    """P(batch = T) under D' given m sampled others (records 0..m-1, x* = 'x'), by enumeration."""
    law: dict = {}
    for with_x, p_x in ((True, q), (False, 1 - q)):
        pool = list(range(m)) + (["x"] if with_x else [])
        subsets = list(itertools.combinations(pool, b)) if len(pool) > b else [tuple(pool)]
        for T in subsets:
            key = frozenset(T)
            law[key] = law.get(key, Fraction(0)) + p_x / len(subsets)
    return law


def coupling_law(m: int, b: int, q: Fraction) -> dict:
    qm = q * b / (m + 1)
    law: dict = {}
    for S in itertools.combinations(range(m), b - 1):
        key = frozenset(S) | {"x"}
        law[key] = law.get(key, Fraction(0)) + qm / math.comb(m, b - 1)
    for T in itertools.combinations(range(m), b):
        key = frozenset(T)
        law[key] = law.get(key, Fraction(0)) + (1 - qm) / math.comb(m, b)
    return law


def hockey(r, eps, reverse):
    r, e = mp.mpf(r), mp.exp(mp.mpf(eps))
    A = lambda y: mp.npdf(y)  # noqa: E731
    M = lambda y: (1 - r) * mp.npdf(y) + r * mp.npdf(y, 2)  # noqa: E731
    f = (lambda y: max(A(y) - e * M(y), 0)) if reverse else (lambda y: max(M(y) - e * A(y), 0))
    return mp.quad(f, [-mp.inf, -4, -1, 0, 1, 2, 3, 6, mp.inf])


def main() -> int:
    rows, margins = [], []
    for m, b, q in [(3, 2, Fraction(1, 3)), (4, 2, Fraction(1, 10)), (5, 3, Fraction(2, 7)), (6, 4, Fraction(1, 2)),
                    (7, 3, Fraction(3, 100))]:
        law, coup = truncated_batch_law(m, b, q), coupling_law(m, b, q)
        keys = set(law) | set(coup)
        diff = max(abs(law.get(k, Fraction(0)) - coup.get(k, Fraction(0))) for k in keys)
        rows.append([f"batch law m={m} b={b} q={q}", float(sum(law.values())), float(sum(coup.values())), float(diff)])
        margins.append(-float(diff))  # exact equality: any difference is a violation
    for eps in (0.0, 0.5, 2.0):
        for reverse in (False, True):
            rates = [0.0, 0.01, 0.05, 0.2, 0.5, 0.9, 1.0]
            h = [hockey(r, eps, reverse) for r in rates]
            steps = [float(h[i + 1] - h[i]) for i in range(len(h) - 1)]
            rows.append([f"H(r) {'reverse' if reverse else 'forward'} eps={eps}", float(h[0]), float(h[-1]), min(steps)])
            margins.append(min(steps) + 1e-20)  # non-decreasing in the rate (quadrature noise far below 1e-20)
    return report("Truncated Poisson batches: the coupling is exact and the curve grows with the rate",
                  ["case", "first", "second", "min (diff or step)"], rows, margins, tol=0.0)


if __name__ == "__main__":
    sys.exit(main())
