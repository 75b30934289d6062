"""ExponentialMechanism(1) then ExponentialMechanism(2): epsilon(1e-12) is below 3 (issue 27, item 5).

dp_accounting's test of this composition expects epsilon(1e-12) = 3.0 (to 1e-6): it treats each
exponential mechanism as eps-DP, whose worst pair is randomized response, for which the loss
1 + 2 = 3 has probability 0.64 and epsilon(1e-12) = 3 - 2e-12. dpaudit's PLD accountant answers
2.99979: it uses that the exponential mechanism is eta-bounded-range with eta = eps (Durfee &
Rogers 2019), a strictly smaller class than eps-DP.

Claims checked here (exact enumeration in mpmath, 40 digits):

1. The least dominating pair of all eta-BR pairs (``BoundedRangePair``; every eta-BR pair is a
   post-processing of a generalised randomized response GRR_t, Dong, Durfee, Rogers 2020) has the
   curve sup_t delta_t(e) = (e^{eta/2} - e^{e/2})^2/(e^eta - 1): checked against the supremum over
   a fine grid of t of the GRR_t curves.
2. UPPER: dominating pairs compose under adaptive composition (Zhu, Dong, Wang 2022, Thm. 10 and
   Sec. 4), so the composition of the two BR pairs dominates every adaptive composition of a
   1-BR and a 2-BR mechanism. Its curve is exactly
   delta(e) = int p_1(l) delta_2(e - l) dl, p_1(l) = e^{(1 + l)/2}/(2 expm1(1)) on [-1, 1]
   (the composition identity H_{A x B}(x) = E_A[H_B(x e^{-L_A})]); its epsilon(1e-12) = eps_up.
   The PLD accountant's answer must be >= eps_up (valid) and close to it (tight).
3. LOWER: GRR_{t1} x GRR_{t2} is attained (two two-candidate exponential mechanisms); its
   epsilon(1e-12), maximised over (t1, t2), is eps_lo. So the worst case lies in [eps_lo, eps_up].
4. eps_up < 3 - 1e-4: the value 3.0 is not the worst case of this composition (it is that of two
   pure-DP mechanisms); dpaudit's number is the tighter truth for exponential mechanisms.
"""

from __future__ import annotations

import math
import os
import sys

import mpmath as mp

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402

from dpaudit import ExponentialMechanism, PLDAccountant  # noqa: E402
from dpaudit.mechanisms.loss_pairs import BoundedRangePair  # noqa: E402

mp.mp.dps = 40
DELTA = mp.mpf("1e-12")
ETA1, ETA2 = mp.mpf(1), mp.mpf(2)


def br_delta(eta, e):
    """The BR pair's curve (claim 1's closed form)."""
    if e < -eta:
        return 1 - mp.exp(e)
    if e >= eta:
        return mp.mpf(0)
    return (mp.exp(eta / 2) - mp.exp(e / 2)) ** 2 / mp.expm1(eta)


def grr(eta, t):
    """GRR_t: [(loss, P-mass)] of the generalised randomized response (losses t and t - eta)."""
    p = (mp.exp(eta) - mp.exp(t)) / mp.expm1(eta)
    return [(t, p), (t - eta, 1 - p)]


def atoms_delta(atoms, e):
    return mp.fsum(m * (1 - mp.exp(e - loss)) for loss, m in atoms if loss > e)


def composed_br_delta(e):
    """delta of BR(1) x BR(2) at e: int over l in [-1, 1] of p_1(l) delta_2(e - l) (claim 2)."""
    lo = max(-ETA1, e - ETA2)  # delta_2(e - l) = 0 for e - l >= eta2
    if lo >= ETA1:
        return mp.mpf(0)

    def f(l):
        return mp.exp((ETA1 + l) / 2) / (2 * mp.expm1(ETA1)) * br_delta(ETA2, e - l)

    pts = sorted({lo, ETA1, *(x for x in (e + ETA2,) if lo < x < ETA1)})
    return mp.quad(f, pts)


def epsilon_at(curve, delta, lo, hi):
    """The e in [lo, hi] with curve(e) = delta (curve decreasing), by bisection to 1e-15."""
    lo, hi = mp.mpf(lo), mp.mpf(hi)
    for _ in range(200):
        mid = (lo + hi) / 2
        if curve(mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo < mp.mpf("1e-15"):
            break
    return hi


def _eps_grr_float(a: float, b: float, delta: float = 1e-12) -> float:
    """epsilon(delta) of GRR(1, 1 - a) x GRR(2, 2 - b) in float64 (a, b = eta - t > 0 small):
    P-masses p = -expm1(-a)/-expm1(-eta) at loss t (and 1 - p at t - eta), curve
    sum m (-expm1(e - L))_+, bisection on [0, 3] (a search aid; the optimum is re-evaluated in mpmath)."""
    pa, pb = -math.expm1(-a) / -math.expm1(-1.0), -math.expm1(-b) / -math.expm1(-2.0)
    atoms = [(3.0 - a - b, pa * pb), (1.0 - a - b, pa * (1 - pb)), (2.0 - a - b, (1 - pa) * pb),
             (-a - b, (1 - pa) * (1 - pb))]

    def d(e):
        return sum(m * -math.expm1(e - loss) for loss, m in atoms if loss > e)

    lo, hi = 0.0, 3.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if d(mid) > delta else (lo, mid)
    return hi


def main() -> int:
    rows, margins = [], []
    # 1. the BR pair is the supremum of the GRR curves: attained at t* = (eta + e)/2 for |e| <= eta
    #    (the maximiser of (e^eta - u)(1 - e^e/u) over u = e^t), and no t of a grid exceeds it
    worst = mp.mpf(0)
    for eta in (ETA1, ETA2):
        pair = BoundedRangePair(float(eta))
        for e in [eta * k / 20 for k in range(-25, 21)]:
            closed = br_delta(eta, e)
            grid = max(atoms_delta(grr(eta, eta * j / 200), e) for j in range(201))
            at_star = atoms_delta(grr(eta, (eta + e) / 2), e) if abs(e) <= eta else closed
            impl = mp.mpf(float(pair.delta(float(e))[0][0]))
            worst = max(worst, abs(at_star - closed))
            margins.append(float(closed - grid) + 1e-30)  # no GRR_t above the closed form (to 40 digits)
            margins.append(1e-30 - float(abs(at_star - closed)))  # attained at t*
            margins.append(float(impl - closed) + 1e-14)  # the implementation evaluates it
    rows.append(["BR curve = sup_t GRR_t (eta 1, 2; 45 e; at t* and 201 t)", float(worst), "", ""])
    # 2. upper: the exact composition of the dominating pairs
    eps_up = epsilon_at(composed_br_delta, DELTA, 2.99, 3.0)
    acc = PLDAccountant().compose(ExponentialMechanism(1.0)).compose(ExponentialMechanism(2.0))
    lo, up = acc.epsilon_interval(float(DELTA))
    rows.append(["BR(1) x BR(2): exact eps(1e-12)", float(eps_up), "PLD upper", up])
    margins.append(up - float(eps_up))  # the accountant is an upper bound on the dominating pair
    margins.append(float(eps_up) + 1e-4 - up)  # and tight to 1e-4
    # 3. lower: attained GRR compositions, (a, b) = (eta1 - t1, eta2 - t2) searched on a log grid
    #    in float64, the best one re-evaluated exactly
    best = max((_eps_grr_float(10.0 ** (-6 + i / 8), 10.0 ** (-6 + j / 8)), i, j)
               for i in range(1, 33) for j in range(1, 33))
    a, b = mp.mpf(10) ** (-6 + mp.mpf(best[1]) / 8), mp.mpf(10) ** (-6 + mp.mpf(best[2]) / 8)
    atoms = [(l1 + l2, m1 * m2) for l1, m1 in grr(ETA1, ETA1 - a) for l2, m2 in grr(ETA2, ETA2 - b)]
    eps_lo = epsilon_at(lambda e: atoms_delta(atoms, e), DELTA, 0, 3)
    rows.append(["GRR(1, t1) x GRR(2, t2): max eps(1e-12)", float(eps_lo), "PLD lower", lo])
    margins.append(float(eps_up - eps_lo))  # lower <= upper
    margins.append(float(eps_lo) - lo)  # the accountant's lower end is attained (below the best GRR)
    margins.append(lo - 2.999)  # and close to it
    # 4. both below 3
    rows.append(["3 - eps_up (the pure-DP value 3.0 is not the worst case)", float(3 - eps_up), "", ""])
    margins.append(float(3 - eps_up) - 1e-4)
    return report("Exponential mechanisms eta = 1 and 2 composed, epsilon at delta = 1e-12",
                  ["case", "value", "accountant", "value"], rows, margins,
                  note=f"worst pair (dominating) {float(eps_up):.9f}, best attained pair {float(eps_lo):.9f}: "
                       "the worst case of the composition lies between them, below 3")


if __name__ == "__main__":
    raise SystemExit(main())
