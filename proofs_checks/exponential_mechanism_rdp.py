"""Exponential mechanism / eta-bounded range: D_alpha <= min(xi + alpha eta^2/8, eta, RR curve).

Claim (Cesar & Rogers 2021; Bun & Steinke 2016): an eta-BR pair (privacy loss in [t, t+eta])
satisfies D_alpha <= xi + alpha eta^2/8 with xi = KL_max - eta^2/8, and KL <= KL_max.

Independent computation: (i) brute force over the two-point BR pairs with losses exactly t and
t + eta, t on a 4001-point grid of [-eta, 0] (these are the extremal BR pairs), D_alpha by
direct summation (both directions are of this form); (ii) 100,000 random 3-point BR pairs;
(iii) actual exponential mechanisms on 3 candidates with utilities in [0, 1]^3 and a neighbour
shifting each utility by at most 1 (random, brute force).  Compared with
``ExponentialMechanism(eta).rdp`` and ``zcdp() * alpha``.
"""

from __future__ import annotations

import os
import sys

import numpy as np
from scipy.special import logsumexp

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402

from dpaudit.mechanisms.pure import ExponentialMechanism, bounded_range_kl_max  # noqa: E402


def divergences(logp, logq, a):
    return np.maximum(logsumexp(a * logp + (1 - a) * logq, axis=1),
                      logsumexp(a * logq + (1 - a) * logp, axis=1)) / (a - 1)


def main() -> int:
    rng = np.random.default_rng(7)
    rows, margins = [], []
    alphas = np.array([1.001, 1.5, 2.0, 4.0, 16.0, 100.0])
    for eta in (0.3, 1.0, 3.0):
        m = ExponentialMechanism(eta)
        bound = m.rdp(alphas)
        # (i) two-point pairs: Q = (q1, 1-q1), losses t+eta and t
        t = np.linspace(-eta, 0.0, 4001)[1:-1]
        q1 = np.expm1(-t) / np.expm1(eta)
        logq = np.log(np.stack([q1, 1 - q1], axis=1))
        logp = logq + np.stack([t + eta, t], axis=1)
        # (ii) random three-point pairs with loss in [t, t+eta]
        lq3 = np.log(rng.dirichlet(np.ones(3), size=100_000))
        lr = rng.uniform(0, eta, size=(100_000, 3))
        lp3 = lq3 + lr
        lp3 -= logsumexp(lp3, axis=1, keepdims=True)
        # (iii) exponential mechanisms with sensitivity-1 utilities
        u = rng.uniform(0, 1, size=(50_000, 3))
        u2 = u + rng.uniform(-1, 1, size=u.shape)
        lpe = eta * u / 2 - logsumexp(eta * u / 2, axis=1, keepdims=True)
        lqe = eta * u2 / 2 - logsumexp(eta * u2 / 2, axis=1, keepdims=True)
        for a, b in zip(alphas, bound):
            for name, lp, lq in (("2pt", logp, logq), ("3pt", lp3, lq3), ("EM", lpe, lqe)):
                worst = float(divergences(lp, lq, a).max())
                rel = (b - worst) / b
                rows.append([f"eta={eta} {name} a={a}", float(b), worst, f"{rel:.2e}"])
                margins += [rel, (m.zcdp() * a - worst) / b]
        kl = float(np.max(np.sum(np.exp(logp) * (logp - logq), axis=1)))
        klm = bounded_range_kl_max(eta)
        rows.append([f"eta={eta} KL_max", klm, kl, f"{(klm - kl) / klm:.2e}"])
        margins += [(klm - kl) / klm, 1e-5 - (klm - kl) / klm]  # KL_max is attained on the grid
    return report("exponential mechanism (bounded range) RDP", ["case", "bound", "worst", "rel"],
                  rows, margins, tol=1e-12)


if __name__ == "__main__":
    sys.exit(main())
