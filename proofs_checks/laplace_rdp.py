"""Laplace mechanism: Mironov's closed form (Mironov 2017, Prop. 6) and the tight zCDP rho.

Independent computation: mpmath quadrature (30 digits) of
    D_alpha(Lap(D, b) || Lap(0, b)) = log( int p^alpha q^(1-alpha) ) / (alpha - 1)
(both directions coincide by symmetry), compared with ``Laplace.rdp``; and
    rho_num = max over a fine alpha grid (1 + 1e-6 ... 200, quadrature values) of D_alpha / alpha,
which must not exceed ``Laplace.zcdp()`` = eps + e^-eps - 1 (and approaches it as alpha -> 1).
"""

from __future__ import annotations

import os
import sys

import mpmath as mp
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402

from dpaudit.mechanisms.laplace import Laplace  # noqa: E402

mp.mp.dps = 30


def divergence(alpha, b, d=1.0):
    a, b, d = mp.mpf(alpha), mp.mpf(b), mp.mpf(d)
    lp = lambda y: -abs(y - d) / b - mp.log(2 * b)  # noqa: E731
    lq = lambda y: -abs(y) / b - mp.log(2 * b)  # noqa: E731
    f = lambda y: mp.exp(a * lp(y) + (1 - a) * lq(y))  # noqa: E731
    return mp.log(mp.quad(f, [-mp.inf, 0, d, mp.inf])) / (a - 1)


def main() -> int:
    rows, margins = [], []
    for b in (0.2, 1.0, 4.0):
        m = Laplace(b)
        for alpha in (1.001, 1.5, 2.0, 10.0, 64.0):
            exact = divergence(alpha, b)
            bound = float(m.rdp([alpha])[0])
            rel = float((bound - exact) / exact)
            rows.append([f"rdp b={b} a={alpha}", bound, float(exact), f"{rel:.2e}"])
            margins += [rel, 1e-11 - abs(rel)]  # an upper bound, and exact to 1e-11
    for eps in (0.1, 1.0, 5.0):
        m = Laplace(1.0 / eps)
        grid = 1.0 + np.geomspace(1e-6, 199.0, 30)
        sup = max(divergence(a, 1.0 / eps) / a for a in grid)
        rho = m.zcdp()
        rows.append([f"zcdp eps={eps}", rho, float(sup), f"{float((rho - sup) / sup):.2e}"])
        margins += [float((rho - sup) / sup), 1e-5 - float((rho - sup) / sup)]  # sup attained as a->1
    return report("Laplace RDP closed form and zCDP rho vs quadrature", ["case", "bound", "exact", "rel"],
                  rows, margins, tol=1e-12)


if __name__ == "__main__":
    sys.exit(main())
