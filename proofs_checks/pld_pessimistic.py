"""Pessimistic PLD delta >= exact delta >= optimistic PLD delta (Poisson-subsampled Gaussian
and Laplace, ADD and REMOVE, single step at several epsilons).

The exact hockey-stick divergence delta(eps) = int (p(x) - e^eps q(x))_+ dx of the mixture pair
(Sommer, Meiser, Mohammadi 2019, Lemma 5) is computed independently by mpmath quadrature on the
output space (no privacy-loss inverse, no discretisation), split at the crossing point of
p and e^eps q (found by mpmath root finding) so the integrand is smooth on each piece. The PLD values come from
dpaudit.accounting.pld (connect-the-dots / merge-and-round-down discretisation + composition).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import mpmath as mp  # noqa: E402
from _common import report  # noqa: E402


def _densities(kind, q, direction):
    if kind == "gauss":
        base = lambda x: mp.npdf(x)  # noqa: E731
    else:
        base = lambda x: mp.exp(-abs(x)) / 2  # noqa: E731
    shifted = lambda x: base(x - 1)  # noqa: E731
    mix = lambda x: (1 - q) * base(x) + q * shifted(x)  # noqa: E731
    return (base, mix) if direction == "add" else (mix, base)


def _exact_delta(kind, q, direction, eps):
    p, qd = _densities(kind, q, direction)
    ee = mp.e ** mp.mpf(eps)
    g = lambda x: p(x) - ee * qd(x)  # noqa: E731
    # the likelihood ratio is monotone in x: one crossing; locate it on a coarse scan
    xs = [mp.mpf(i) / 4 for i in range(-80, 81)]
    cuts = [x for a, x in zip(xs, xs[1:]) if (g(a) > 0) != (g(x) > 0)]
    pts = [-mp.inf, -1, 0, 1, 2, mp.inf]
    if cuts:
        c = mp.findroot(g, (cuts[0] - mp.mpf(1) / 4, cuts[0]), solver="anderson")
        pts = sorted(set([-mp.inf, c, mp.inf] + [x for x in (-1, 0, 1, 2)]))
    return mp.quad(lambda x: max(g(x), 0), pts)


def main() -> int:
    from dpaudit.accounting.pld.discretisation import discretise
    from dpaudit.accounting.pld.distribution import delta_for_epsilon
    from dpaudit.mechanisms.loss_pairs import GaussianPair, LaplacePair, SubsampledPair

    mp.mp.dps = 25
    rows, margins = [], []
    cases = [("gauss", 0.05), ("laplace", 0.1)]
    d = 1e-3
    for kind, q in cases:
        base = GaussianPair(1.0) if kind == "gauss" else LaplacePair(1.0)
        for direction in ("add", "remove"):
            pair = SubsampledPair(base, q, direction)
            pess = discretise(pair, d, 1e-20, True)
            opt = discretise(pair, d, 1e-20, False)
            for eps in (0.0, 0.01234, 0.03705, 0.0618):  # off the grid: chords are exact on it
                exact = float(_exact_delta(kind, q, direction, eps))
                up = delta_for_epsilon(pess, eps)
                lo = delta_for_epsilon(opt, eps)
                rows.append([f"{kind} q={q} {direction}", eps, lo, exact, up])
                # relative margins; quadrature is accurate far below the 1e-9 resolution used
                scale = max(exact, 1e-12)
                margins.append((up - exact) / scale + 1e-9)
                margins.append((exact - lo) / scale + 1e-9)
    return report("PLD pessimistic >= exact >= optimistic (mpmath quadrature of the hockey-stick)",
                  ["case", "eps", "optimistic", "exact (mpmath)", "pessimistic"], rows, margins)


if __name__ == "__main__":
    sys.exit(main())
