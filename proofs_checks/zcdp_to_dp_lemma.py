"""rho-zCDP => (rho + 2 sqrt(rho log(1/delta)), delta)-DP (Bun & Steinke 2016, Lemma 3.5 / Prop. 1.3).

This is the conversion DP-AGD's eq. (5) inverts (Lee & Kifer 2018, Lemma 3.8). Claim checked on
the mechanism that attains every rho exactly, the Gaussian N(0, sigma^2) vs N(1, sigma^2) with
sigma = 1/sqrt(2 rho): its exact delta at eps_BS must be <= delta. The CKS conversion (tighter,
Canonne-Kamath-Steinke 2020) is checked the same way, and must not exceed BS.

Independent computation: the hockey-stick divergence
    delta(eps) = int max(0, p(y) - e^eps q(y)) dy = int_{-inf}^{1/2 - eps sigma^2} p(y) (1 - e^{eps - L(y)}) dy
by mpmath quadrature (40 digits), L(y) = log p(y)/q(y). The epsilons come from
``dpaudit.conversions.zcdp_to_dp`` (methods "bs" and "cks") and, independently, from the
formula written here in mpmath. Margin = log(delta) - log(delta_exact(eps)).
"""

from __future__ import annotations

import os
import sys

import mpmath as mp

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402

mp.mp.dps = 40


def gaussian_hockey_stick(rho, eps):
    sigma = 1 / mp.sqrt(2 * mp.mpf(rho))
    eps = mp.mpf(eps)
    ystar = mp.mpf(1) / 2 - eps * sigma**2

    def f(y):
        p = mp.npdf(y, 0, sigma)
        L = (1 - 2 * y) / (2 * sigma**2)
        return p * (-mp.expm1(eps - L))

    return mp.quad(f, [-mp.inf, ystar - 10 * sigma, ystar - sigma, ystar])


def main() -> int:
    try:
        from dpaudit.conversions import zcdp_to_dp
    except ImportError:
        zcdp_to_dp = None
    rows, margins = [], []
    for rho in (1e-4, 0.01, 0.1, 0.5, 2.0, 8.0):
        for delta in (1e-10, 1e-5, 1e-2):
            L = mp.log(1 / mp.mpf(delta))
            eps_formula = mp.mpf(rho) + 2 * mp.sqrt(mp.mpf(rho) * L)
            d_formula = gaussian_hockey_stick(rho, eps_formula)
            margins.append(float(mp.log(delta) - mp.log(d_formula)))
            row = [rho, delta, float(eps_formula), float(d_formula)]
            if zcdp_to_dp is not None:
                e_bs, e_cks = zcdp_to_dp(rho, delta, method="bs"), zcdp_to_dp(rho, delta, method="cks")
                d_bs, d_cks = gaussian_hockey_stick(rho, e_bs), gaussian_hockey_stick(rho, e_cks)
                margins += [float(mp.log(delta) - mp.log(d_bs)), float(mp.log(delta) - mp.log(d_cks)),
                            e_bs - float(eps_formula) + 1e-12 * e_bs,  # library BS = formula (rounded up)
                            e_bs - e_cks]                               # CKS never worse than BS
                row += [e_bs, e_cks, float(d_cks)]
            rows.append(row)
    header = ["rho", "delta", "eps BS (mpmath)", "exact delta at eps BS"]
    if zcdp_to_dp is not None:
        header += ["eps bs (lib)", "eps cks (lib)", "exact delta at eps cks"]
    return report("zCDP -> (eps, delta): exact Gaussian hockey-stick delta (quadrature) <= delta",
                  header, rows, margins)


if __name__ == "__main__":
    sys.exit(main())
