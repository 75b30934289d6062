"""RDP -> (epsilon, delta) (Balle et al. 2020 per order + TV fallback) is never below the exact curve.

For mechanisms whose exact privacy curve is computable independently, this check compares
dpaudit's conversion of the mechanism's RDP curve on the default order grid (plus orders close
to 1: 1.0001, 1.001) with the exact hockey-stick divergence
delta(eps) = max over both directions of int (p - e^eps q)_+, computed here by mpmath quadrature
(Laplace, Poisson-subsampled Gaussian) or by summation over the two outcomes (randomized
response, the tight pair of pure eps0-DP). Both sides of the conversion are checked:

* rdp_to_delta(orders, curve, eps) >= exact delta(eps);
* rdp_to_dp(orders, curve, delta) = eps_hat satisfies exact delta(eps_hat) <= delta.
Margins: bound - exact delta, and delta - exact delta(eps_hat) (both >= 0 required).
"""

from __future__ import annotations

import math
import os
import sys

import mpmath as mp
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402

from dpaudit import conversions as C  # noqa: E402
from dpaudit.accounting.rdp import DEFAULT_ORDERS  # noqa: E402
from dpaudit.mechanisms.gaussian import Gaussian  # noqa: E402

ORDERS = np.unique(np.concatenate([[1.0001, 1.001], DEFAULT_ORDERS]))


def laplace_delta(b: float, eps: float) -> mp.mpf:
    """Lap(0, b) vs Lap(1, b) (symmetric: one direction suffices); crossing at (1 - eps b)/2."""
    b, eps = mp.mpf(b), mp.mpf(eps)
    if eps * b >= 1:
        return mp.mpf(0)
    xc = (1 - eps * b) / 2

    def f(x):
        return mp.exp(-abs(x) / b) / (2 * b) - mp.exp(eps) * mp.exp(-abs(x - 1) / b) / (2 * b)

    return mp.quad(f, [-mp.inf, -40 * b, 0, xc])


def rr_delta(eps0: float, eps: float) -> mp.mpf:
    """Randomized response with P[truth] = e^eps0/(1+e^eps0): sum over the two outcomes."""
    e0, e = mp.mpf(eps0), mp.mpf(eps)
    p = [mp.exp(e0) / (1 + mp.exp(e0)), 1 / (1 + mp.exp(e0))]
    q = [p[1], p[0]]
    return sum(max(mp.mpf(0), pi - mp.exp(e) * qi) for pi, qi in zip(p, q))


def subsampled_gaussian_delta(q: float, sigma: float, eps: float) -> mp.mpf:
    """P = (1-q) N(0,s^2) + q N(1,s^2) vs Q = N(0,s^2), both directions, by quadrature.

    The log-likelihood ratio log((1-q) + q exp((2x-1)/(2 s^2))) increases in x, so each region
    {p > e^eps q} is a half-line with a closed-form end point.
    """
    q, s, e = mp.mpf(q), mp.mpf(sigma), mp.mpf(eps)

    def mix(x):
        return (1 - q) * mp.npdf(x, 0, s) + q * mp.npdf(x, 1, s)

    def base(x):
        return mp.npdf(x, 0, s)

    x1 = s**2 * mp.log((mp.exp(e) - 1 + q) / q) + mp.mpf(1) / 2
    d_remove = mp.quad(lambda x: mix(x) - mp.exp(e) * base(x), [x1, x1 + s, x1 + 10 * s, mp.inf])
    d_add = mp.mpf(0)
    if mp.exp(-e) > 1 - q:
        x2 = s**2 * mp.log((mp.exp(-e) - 1 + q) / q) + mp.mpf(1) / 2
        d_add = mp.quad(lambda x: base(x) - mp.exp(e) * mix(x), [-mp.inf, x2 - 10 * s, x2 - s, x2])
    return max(d_remove, d_add)


def main() -> int:
    mp.mp.dps = 25
    rows, margins = [], []
    cases = [("gaussian s=0.8", Gaussian(0.8), lambda e: exact_gauss(0.8, e))]
    try:
        from dpaudit.mechanisms.laplace import Laplace

        cases.append(("laplace b=1", Laplace(1.0), lambda e: laplace_delta(1.0, e)))
        cases.append(("laplace b=4", Laplace(4.0), lambda e: laplace_delta(4.0, e)))
    except ImportError:  # pragma: no cover
        pass
    try:
        from dpaudit.mechanisms.pure import PureDP

        cases.append(("pure eps0=1.5", PureDP(1.5), lambda e: rr_delta(1.5, e)))
    except ImportError:  # pragma: no cover
        pass
    try:
        from dpaudit.mechanisms.subsampled import PoissonSampled

        cases.append(("poisson q=0.05 s=1", PoissonSampled(Gaussian(1.0), 0.05),
                      lambda e: subsampled_gaussian_delta(0.05, 1.0, e)))
        cases.append(("poisson q=0.3 s=2", PoissonSampled(Gaussian(2.0), 0.3),
                      lambda e: subsampled_gaussian_delta(0.3, 2.0, e)))
    except ImportError:  # pragma: no cover
        pass
    for name, mech, exact in cases:
        curve = np.asarray(mech.rdp(ORDERS), dtype=float)
        for eps in (0.05, 0.3, 1.0, 2.0):
            bound, order = C.rdp_to_delta(ORDERS, curve, eps)
            ex = float(exact(eps))
            rows.append([name, "delta at eps", eps, order, bound, ex, bound - ex])
            margins.append(bound - ex)
        for delta in (1e-2, 1e-5):
            eps_hat, order = C.rdp_to_dp(ORDERS, curve, delta)
            if math.isinf(eps_hat):
                continue
            ex = float(exact(eps_hat))
            rows.append([name, "eps at delta", delta, order, eps_hat, ex, delta - ex])
            margins.append(delta - ex)
    return report(
        "RDP -> (epsilon, delta) conversion vs exact privacy curves (quadrature / summation)",
        ["mechanism", "query", "eps|delta", "order", "bound", "exact delta", "margin"],
        rows, margins, tol=0.0,
    )


def exact_gauss(sigma: float, eps: float) -> mp.mpf:
    s, e = mp.mpf(sigma), mp.mpf(eps)
    x_star = mp.mpf(1) / 2 - e * s**2
    return mp.quad(lambda x: mp.npdf(x, 0, s) - mp.exp(e) * mp.npdf(x, 1, s),
                   [-mp.inf, x_star - 10 * s, x_star - s, x_star])


if __name__ == "__main__":
    sys.exit(main())
