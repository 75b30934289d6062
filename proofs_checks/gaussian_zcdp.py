"""Gaussian mechanism: D_alpha(N(D, s^2) || N(0, s^2)) = alpha D^2 / (2 s^2) (Mironov 2017, Prop. 7).

Independent computation: mpmath quadrature (30 digits) of
    D_alpha = log( int p(y)^alpha q(y)^(1-alpha) dy ) / (alpha - 1)
for a grid of (sigma, sensitivity, alpha), compared with ``Gaussian.rdp`` and ``zcdp() * alpha``
(which must equal it: the Gaussian is tight at every order).  Margin = bound - exact, relative.
"""

from __future__ import annotations

import os
import sys

import mpmath as mp

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402

from dpaudit.mechanisms.gaussian import Gaussian  # noqa: E402

mp.mp.dps = 30


def divergence(alpha, sigma, d):
    a, s, d = mp.mpf(alpha), mp.mpf(sigma), mp.mpf(d)
    f = lambda y: mp.exp(a * mp.log(mp.npdf(y, d, s)) + (1 - a) * mp.log(mp.npdf(y, 0, s)))  # noqa: E731
    centre = a * d
    integral = mp.quad(f, [centre - 60 * s, centre - 5 * s, centre, centre + 5 * s, centre + 60 * s])
    return mp.log(integral) / (a - 1)


def main() -> int:
    rows, margins = [], []
    for sigma, d in [(1.0, 1.0), (0.5, 1.0), (3.0, 2.0), (10.0, 0.5)]:
        m = Gaussian(sigma, sensitivity=d)
        for alpha in (1.01, 1.5, 2.0, 7.3, 32.0):
            exact = divergence(alpha, sigma, d)
            bound = float(m.rdp([alpha])[0])
            zc = m.zcdp() * alpha
            rel = float((bound - exact) / exact)
            rel_zc = float((zc - exact) / exact)
            rows.append([f"s={sigma} D={d} a={alpha}", bound, float(exact), f"{rel:.2e}", f"{rel_zc:.2e}"])
            margins += [rel, -abs(rel), rel_zc]  # upper bound and exact to 1e-12
    # tightness: |rel| <= 1e-12 (the closed form is exact) and never below
    return report("Gaussian RDP = alpha D^2/(2 sigma^2) vs quadrature", ["case", "bound", "exact", "rel", "rel zcdp"],
                  rows, margins, tol=1e-12)


if __name__ == "__main__":
    sys.exit(main())
