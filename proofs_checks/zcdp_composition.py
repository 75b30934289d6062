"""RDP / zCDP composition is additive: exact divergence of product measures by quadrature.

For independent mechanisms M1, M2 the joint output distribution is a product measure, and
D_alpha(P1 x P2 || Q1 x Q2) = D_alpha(P1||Q1) + D_alpha(P2||Q2) (Mironov 2017, Prop. 1; Bun &
Steinke 2016, Lemma 2.3). This check computes the left side by *two-dimensional* numerical
quadrature of int int p1^a p2^a q1^(1-a) q2^(1-a) (scipy dblquad) and compares it with the
composed curve of dpaudit's RDPAccountant (sum of the mechanisms' closed forms) and, for
Gaussians, with ZCDPAccountant's rho * alpha. Margin = accountant - quadrature (must be >= -tol,
and |margin| must be tiny since the composition of exact curves is exact).
"""

from __future__ import annotations

import math
import os
import sys

from scipy import integrate

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402

from dpaudit.accounting.rdp import RDPAccountant  # noqa: E402
from dpaudit.accounting.zcdp import ZCDPAccountant  # noqa: E402
from dpaudit.mechanisms.gaussian import Gaussian  # noqa: E402


def _gauss_logpdf(x, mu, s):
    return -0.5 * ((x - mu) / s) ** 2 - math.log(s * math.sqrt(2 * math.pi))


def _laplace_logpdf(x, mu, b):
    return -abs(x - mu) / b - math.log(2 * b)


def _product_divergence(logp1, logq1, logp2, logq2, alpha, lim1, lim2, points1=(), points2=()):
    """D_alpha of the product measure by 2-D quadrature over a box holding all but ~1e-30 mass."""

    def f(y, x):
        return math.exp(alpha * (logp1(x) + logp2(y)) + (1 - alpha) * (logq1(x) + logq2(y)))

    total = 0.0
    xs = sorted({lim1[0], lim1[1], *points1})
    ys = sorted({lim2[0], lim2[1], *points2})
    for xa, xb in zip(xs[:-1], xs[1:]):
        for ya, yb in zip(ys[:-1], ys[1:]):
            val, _ = integrate.dblquad(f, xa, xb, ya, yb, epsabs=0, epsrel=1e-12)
            total += val
    return math.log(total) / (alpha - 1)


def main() -> int:
    rows, margins, rel_errors = [], [], []
    try:
        from dpaudit.mechanisms.laplace import Laplace
    except ImportError:  # pragma: no cover - the Laplace mechanism is written by another engineer
        Laplace = None
    cases = [("G(1.0) x G(2.0)", Gaussian(1.0), Gaussian(2.0)), ("G(0.7) x G(0.7)", Gaussian(0.7), Gaussian(0.7))]
    if Laplace is not None:
        cases += [("G(1.5) x Lap(1.0)", Gaussian(1.5), Laplace(1.0)), ("Lap(2.0) x Lap(0.5)", Laplace(2.0), Laplace(0.5))]

    def dens(m):
        if isinstance(m, Gaussian):
            s = m.sigma
            # Gaussian tails: mass beyond 12 sigma is ~e^-72
            return (lambda x: _gauss_logpdf(x, 0.0, s)), (lambda x: _gauss_logpdf(x, 1.0, s)), 12 * s, ()
        b = m.scale
        # Laplace tails are exponential: mass beyond 80 b is ~e^-80
        return (lambda x: _laplace_logpdf(x, 0.0, b)), (lambda x: _laplace_logpdf(x, 1.0, b)), 80 * b, (0.0, 1.0)

    for name, m1, m2 in cases:
        lp1, lq1, s1, pts1 = dens(m1)
        lp2, lq2, s2, pts2 = dens(m2)
        for alpha in (1.5, 2.0, 3.5, 6.0):
            # the tilted density p^a q^(1-a) is centred within alpha of the origin
            w1, w2 = s1 + 2 * alpha, s2 + 2 * alpha
            exact = _product_divergence(lp1, lq1, lp2, lq2, alpha, (-w1, w1 + 1), (-w2, w2 + 1), pts1, pts2)
            acc = RDPAccountant(orders=[alpha]).compose(m1).compose(m2)
            bound = float(acc.rdp_curve()[0])
            rows.append([name, alpha, "rdp", bound, exact, bound - exact])
            margins.append(bound - exact)
            rel_errors.append(abs(bound - exact) / exact)
            if isinstance(m1, Gaussian) and isinstance(m2, Gaussian):
                z = ZCDPAccountant().compose(m1).compose(m2)
                rows.append([name, alpha, "zcdp rho*alpha", z.rho * alpha, exact, z.rho * alpha - exact])
                margins.append(z.rho * alpha - exact)
                rel_errors.append(abs(z.rho * alpha - exact) / exact)
    status = report(
        "RDP/zCDP composition = divergence of the product measure (2-D quadrature)",
        ["case", "alpha", "accountant", "composed", "quadrature", "margin"],
        rows, margins, tol=1e-9,
        note="margin = composed curve - exact D_alpha of the joint distribution",
    )
    worst = max(rel_errors)
    print(f"largest relative |composed - quadrature|: {worst:.2e} (must be < 1e-9: composition is exact)")
    return status or int(worst >= 1e-9)


if __name__ == "__main__":
    sys.exit(main())
