"""DP-AGD total budget, eq. (5) of Lee & Kifer 2018 (closed form) against an independent solve.

Claim: rho = (sqrt(log(1/delta) + epsilon) - sqrt(log(1/delta)))^2 is the largest rho with
rho + 2 sqrt(rho log(1/delta)) <= epsilon (the Bun-Steinke conversion, BS16 Prop. 1.3).

Independent computations (mpmath, 50 digits):
1. the root of rho + 2 sqrt(rho log(1/delta)) = epsilon by bisection (no closed form): dpaudit's
   rho must be <= that root (a budget is rounded down) and within 1e-12 relative of it; the BS
   conversion of dpaudit's rho, evaluated in 50 digits, must be <= epsilon (margin = eps - BS(rho)).
2. the Canonne-Kamath-Steinke delta of dpaudit's rho at epsilon, minimised over alpha by golden-
   section search in mpmath: it must be <= delta (CKS allows a larger rho; margin = log delta - log
   delta_CKS >= 0, reported separately).
Also the values at delta = 1e-8 quoted in docs/theorems/dp_agd.md are reproduced to 4 significant digits.
"""

from __future__ import annotations

import os
import sys

import mpmath as mp

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402

from dpaudit.bounds.dp_agd import dp_agd_budget  # noqa: E402

mp.mp.dps = 50
TABLE = {0.05: 3.388e-5, 0.1: 1.353e-4, 0.2: 5.399e-4, 0.4: 2.148e-3, 0.8: 8.502e-3, 1.6: 3.331e-2}


def bs_root(eps, delta):
    L = -mp.log(mp.mpf(delta))
    lo, hi = mp.mpf(0), mp.mpf(eps)
    for _ in range(400):
        mid = (lo + hi) / 2
        if mid + 2 * mp.sqrt(mid * L) <= eps:
            lo = mid
        else:
            hi = mid
    return lo


def cks_log_delta(rho, eps):
    """min over alpha > 1 of (alpha-1)(alpha rho - eps) + alpha log(1-1/alpha) - log(alpha-1)."""
    rho, eps = mp.mpf(rho), mp.mpf(eps)

    def g(a):
        return (a - 1) * (a * rho - eps) + a * mp.log(1 - 1 / a) - mp.log(a - 1)

    lo, hi = mp.mpf(1) + mp.mpf(10) ** -30, (eps + 1) / (2 * rho) + 10
    invphi = (mp.sqrt(5) - 1) / 2
    for _ in range(400):
        m1, m2 = hi - invphi * (hi - lo), lo + invphi * (hi - lo)
        if g(m1) < g(m2):
            hi = m2
        else:
            lo = m1
    return g((lo + hi) / 2)


def main() -> int:
    rows, margins = [], []
    cks_rows, cks_margins = [], []
    for delta in (1e-8, 1e-5, 1e-3, 0.1):
        for eps in (1e-4, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 5.0, 20.0):
            rho = dp_agd_budget(eps, delta)
            root = bs_root(eps, delta)
            L = -mp.log(mp.mpf(delta))
            conv = mp.mpf(rho) + 2 * mp.sqrt(mp.mpf(rho) * L)
            rel_gap = float((root - rho) / root)
            # margins: BS conversion <= eps, rho <= root, and rho within 1e-12 relative of the root
            margins += [float(eps - conv), float(root - rho), 1e-12 - rel_gap]
            ref = TABLE.get(eps) if delta == 1e-8 else None
            if ref is not None:
                margins.append(0.5e-3 - abs(rho / ref - 1))  # 4 significant digits of B.1
            rows.append([delta, eps, rho, float(root), rel_gap, float(eps - conv), ref if ref else "-"])
            lcks = cks_log_delta(rho, eps)
            cks_rows.append([delta, eps, rho, float(mp.exp(lcks))])
            cks_margins.append(float(mp.log(delta) - lcks))
    status = report("DP-AGD eq. (5): closed-form rho vs 50-digit root of rho + 2 sqrt(rho log(1/delta)) = eps",
                    ["delta", "epsilon", "rho (dpaudit)", "root (mpmath)", "rel gap", "eps - BS(rho)", "B.1 table"],
                    rows, margins)
    status |= report("CKS conversion of the eq. (5) rho stays within delta (CKS allows a larger rho)",
                     ["delta", "epsilon", "rho", "CKS delta(eps)"], cks_rows, cks_margins)
    return status


if __name__ == "__main__":
    sys.exit(main())
