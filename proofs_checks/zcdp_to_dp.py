"""zCDP -> (epsilon, delta) conversions are valid: never below the exact Gaussian curve.

A rho-zCDP Gaussian (sigma = 1/sqrt(2 rho), sensitivity 1) has the exact hockey-stick curve
delta(eps) = int (p(x) - e^eps q(x))_+ dx with p = N(0, sigma^2), q = N(1, sigma^2). This check
computes that integral by mpmath quadrature over {p > e^eps q} = (-inf, 1/2 - eps sigma^2]
(independent of the Balle-Wang closed form) and compares:

* CKS delta (zcdp_delta)                   >= exact    (Canonne-Kamath-Steinke 2020, Cor. 13);
* Bun-Steinke delta exp(-(eps-rho)^2/(4 rho)) >= CKS delta (BS16 is the weaker conversion);
* Balle et al. delta on the RDP grid (rdp_to_delta of rho*alpha) >= exact;
* the same comparisons on the epsilon side at delta in {1e-3, 1e-6, 1e-10}: CKS epsilon and
  BS epsilon >= the exact epsilon (root of the quadrature curve), and BS >= CKS.
Margins are bound - exact (>= 0 required).
"""

from __future__ import annotations

import math
import os
import sys

import mpmath as mp

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402

from dpaudit import conversions as C  # noqa: E402
from dpaudit.accounting.rdp import DEFAULT_ORDERS  # noqa: E402


def exact_delta(rho: float, eps: float) -> mp.mpf:
    """Hockey-stick divergence of N(0, s^2) vs N(1, s^2), s^2 = 1/(2 rho), by quadrature."""
    s = 1 / mp.sqrt(2 * mp.mpf(rho))
    x_star = mp.mpf(1) / 2 - eps * s**2

    def integrand(x):
        return mp.npdf(x, 0, s) - mp.exp(eps) * mp.npdf(x, 1, s)

    return mp.quad(integrand, [-mp.inf, x_star - 10 * s, x_star - s, x_star])


def exact_epsilon(rho: float, delta: float) -> float:
    """Root of exact_delta(rho, eps) = delta by bisection (the curve decreases in eps)."""
    lo, hi = mp.mpf(0), mp.mpf(rho + 2 * math.sqrt(rho * math.log(1 / delta)))  # BS is an upper bound
    for _ in range(46):
        mid = (lo + hi) / 2
        if exact_delta(rho, mid) > delta:
            lo = mid
        else:
            hi = mid
    return float(lo)  # the smaller end: a margin computed against it is conservative for the check


def main() -> int:
    mp.mp.dps = 20
    rows, margins = [], []
    for rho in (0.005, 0.05, 0.5, 2.0):
        for eps in (0.1, 1.0, 3.0):
            exact = float(exact_delta(rho, eps))
            cks = C.zcdp_delta(rho, eps)
            bs = math.exp(-((eps - rho) ** 2) / (4 * rho)) if eps >= rho else 1.0
            balle, _ = C.rdp_to_delta(DEFAULT_ORDERS, rho * DEFAULT_ORDERS, eps)
            for name, bound, ref in (("cks delta", cks, exact), ("bs delta - cks", bs, cks),
                                     ("balle grid delta", balle, exact)):
                rows.append([rho, eps, name, bound, ref, bound - ref])
                margins.append(bound - ref)
    for rho in (0.01, 0.5, 3.0):
        for delta in (1e-3, 1e-6, 1e-10):
            exact = exact_epsilon(rho, delta)
            cks = C.zcdp_to_dp(rho, delta, "cks")
            bs = C.zcdp_to_dp(rho, delta, "bs")
            for name, bound, ref in (("cks epsilon", cks, exact), ("bs epsilon", bs, exact),
                                     ("bs eps - cks", bs, cks)):
                rows.append([rho, delta, name, bound, ref, bound - ref])
                margins.append(bound - ref)
    return report(
        "zCDP -> (epsilon, delta): CKS and BS conversions vs the exact Gaussian curve (mpmath quadrature)",
        ["rho", "eps|delta", "quantity", "bound", "reference", "margin"],
        rows, margins, tol=0.0,
    )


if __name__ == "__main__":
    sys.exit(main())
