"""Discretisation of dominating pairs (the pairs themselves: :mod:`dpaudit.mechanisms.loss_pairs`).

Discretisation on the grid ``e_i = i d`` (:func:`discretise`), both directions from the exact
curve ``delta`` of a pair (:mod:`dpaudit.mechanisms.loss_pairs`, equation (1)), in the variable
``x = e^e`` where the curve ``H(x)`` is convex:

* **pessimistic** (upper bounds): connect-the-dots (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi
  2022, "Connect the dots", Alg. 1): the discrete PLD whose curve is the chord interpolation of
  ``H`` through the grid points (values rounded *up* by their evaluation error bound), joined to
  ``(0, 1)`` on the left and flat beyond the last point (mass ``H(x_n)`` at +inf). Chords of a
  convex function lie above it, so the discrete curve is >= ``H`` for *every* x.
* **optimistic** (lower bounds), the lower counterpart of connect-the-dots (the same paper
  notes its approach supports optimistic estimates): chords through values *lowered* by a bound
  on the chord gap. On ``[a, b] = [x_i, x_{i+1}]`` with one-sided slopes ``s_a <= m <= s_b``
  (``m`` the chord slope, ``s = -Q(L > log x)``), convexity gives
  ``H >= max(tangent at a, tangent at b)``, hence

      chord(x) - H(x) <= min((m - s_a)(x - a), (s_b - m)(b - x))
                      <= G := (m - s_a)(s_b - m)(b - a)/(s_b - s_a) <= (s_b - s_a)(b - a)/4,

  and ``s_b - s_a = Q(e_i < L < e_{i+1})``. Lowering the value at each grid point by the larger
  gap bound of its two intervals (and by its evaluation error bound) puts every chord below
  ``H``. Then, each step only lowering the curve further:

  - atoms of the loss are first moved *down* onto the grid (their kinks then sit on grid
    points and cost no chord gap);
  - cells much heavier than their neighbours (where the lowered chords would turn non-convex)
    have their mass moved down to their left end instead: the curve changes by the linear
    function ``(x/x_i) delta_cell(e_i)`` left of the cell;
  - at the ends: ``T(x_1) <= 1 - x_1 Q(L > -inf)`` (the tangent at 0); the finite mass above the
    last grid point ``e_J`` is moved down to it (again a linear change), the last interval lies
    below the tangent at ``x_J`` from the left, and the curve ends flat at the exact mass
    ``P(L = +inf)``; where a lowered value falls below that level, the curve ends earlier;
  - finally the greatest convex minorant of the points is taken (points above a chord of two
    others are dropped and take the chord value), so all masses are non-negative.

  The gap is second order in ``d`` where the density is smooth on the grid scale
  (``G ~ d^2 H''``); unlike rounding each loss down (privacy buckets), whose bias adds up
  linearly over compositions (a shift of up to ``T d`` after T steps), the estimate then stays
  within second-order terms per step of the exact curve (for steep densities see the two-level
  composition of :class:`~dpaudit.accounting.pld.accountant.PLDAccountant` and
  :func:`coarsen`).

Masses come from second differences of ``H`` along the grid (``p_i = x_i (s_i - s_{i-1})``);
``H = (1 - x)_+ + c`` is split so that the differences are taken of the small part ``c``
(``c = E_Q[(x - e^L)_+]`` left of 0, ``c = delta`` right of it) and the linear part contributes
exactly mass 1 at loss 0. Floating-point noise can make a mass negative: pessimistically it is
set to 0 (the curve only rises); optimistically too, and its size is charged to the slack
(the curve rises by at most that much), and the total mass is brought back to at most one by
removing mass from the lowest losses (the curve only drops).

Why composed curves stay valid: if ``H'_i <= H_i + s_i`` for all x (``s_i = 0``
pessimistically with the inequality reversed), then with the composition identity
``H_{A x B}(x) = E_A[H_B(x e^{-L_A})]`` (valid for any non-negative measures) one gets
``H'_{1x2} <= H_{1x2} + s_1 + s_2 P'_1(total)`` (hybrid argument), and the reversed inequality
without slack for upper bounds. So only pointwise curve inequalities and non-negative masses
are needed; the discrete "pairs" need not be probability pairs (pessimistic totals may exceed
one).
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.accounting.pld.distribution import DiscretePLD, check_size
from dpaudit.mechanisms.loss_pairs import LossPair, as_float_array

__all__ = [
    "discretise",
    "hybrid_split",
    "lift_left",
    "coarsen_part",
    "grid_for",
    "loss_range",
    "compose_atomic",
    "coarsen",
]

_U = float(np.finfo(float).eps)
_REL_SNAP = 64.0 * _U
#: at most this many violations per pass are resolved by a tangent search from their neighbours
_ANCHOR_MAX = 64


def loss_range(pair: LossPair, tail: float) -> tuple[float, float]:
    """[lo, hi] holding all but ``tail`` of the loss on each side (clipped to the support)."""
    lo, hi = pair.loss_range(tail)
    s_lo, s_hi = pair.support
    lo = max(lo, s_lo) if math.isfinite(s_lo) else lo
    hi = min(hi, s_hi) if math.isfinite(s_hi) else hi
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError("loss range is not finite")  # pragma: no cover - every pair gives finite ranges
    return min(lo, 0.0), max(hi, 0.0)


def grid_for(pair: LossPair, d: float, tail: float) -> tuple[int, int]:
    """Integer grid indices [i1, i_n] covering the (truncated) loss range and 0, >= 2 points."""
    lo, hi = loss_range(pair, tail)
    i1 = min(int(math.floor(lo / d)), 0)
    i_n = max(int(math.ceil(hi / d)), 0, i1 + 1)
    return i1, i_n


def _c_values(pair: LossPair, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """c = H(x) - (1 - x)_+ at x = e^e, and an absolute error bound: delta(e) for e >= 0 and,
    for e < 0, with x = e^e and any measures P, Q (totals P_tot, Q_tot),

        H(x) = P_tot - x Q_tot + x delta_rev(-e),   x delta_rev(-e) = E_Q[(x - e^L)_+] + x Q(L = -inf),

    so c = x delta_rev(-e) + (P_tot - 1) + x (1 - Q_tot). A mechanism's pair has P_tot = Q_tot = 1;
    a discrete PLD seen as a pair (:class:`_GridPLDPair`) need not (an optimistic one has moved
    mass down, so its Q total exceeds one): its totals are added (their error bounds too)."""
    c = np.empty(e.shape)
    err = np.empty(e.shape)
    neg = e < 0
    if np.any(~neg):
        c[~neg], err[~neg] = pair.delta(e[~neg])
    if np.any(neg):
        rv, re = pair.reversed().delta(-e[neg])
        x = np.exp(e[neg])
        c[neg], err[neg] = x * rv, x * re
        totals = getattr(pair, "totals", None)
        if totals is not None:
            p_m1, q_m1, _ = totals()  # (P_tot - 1, Q_tot - 1, error bound on each)
            c[neg] += p_m1 - x * q_m1  # (its error: :func:`_totals_err`)
    return c, err


def _totals_err(pair, e: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Absolute error of the totals correction of :func:`_c_values` (0 for a mechanism's pair):
    the totals' own bound times (1 + x), and the rounding of the addition. Kept apart from the
    curve's relative error (a tiny absolute error at tiny values would swamp a relative bound)."""
    out = np.zeros(e.shape)
    totals = getattr(pair, "totals", None)
    if totals is None:
        return out
    p_m1, q_m1, t_err = totals()
    neg = e < 0
    x = np.exp(e[neg])
    out[neg] = t_err * (1.0 + x) + 4.0 * _U * (np.abs(p_m1 - x * q_m1) + np.abs(c[neg]))
    return out


def _ctd_masses(vals: np.ndarray, d: float, i0: int) -> tuple[np.ndarray, float]:
    """Masses of the chord interpolation through (x_i, (1 - x_i)_+ + vals_i), joined to (0, 1)
    and flat after the last point; i0 is the index of loss 0. Returns (p, inf)."""
    n = vals.size
    em1 = math.expm1(d)
    ed = math.exp(d)
    dv = np.diff(vals)
    p = np.empty(n)
    p[0] = -vals[0] + dv[0] / em1
    if n > 2:
        p[1:-1] = (dv[1:] - ed * dv[:-1]) / em1
    p[-1] = -dv[-1] * ed / em1
    p[i0] += 1.0
    return p, float(vals[-1])


def _snapped_atoms(pair: LossPair, e: np.ndarray, d: float, interior: bool = False):
    """Atoms of the pair's loss and the grid points at or below them: (l, l', P-mass), with l'
    the largest grid loss (as the grid computes it) not above l (with ``interior``, only the
    atoms in (e_0, e_last])."""
    al, aq, ap = pair.atoms()
    if interior and al.size:
        sel = (al > e[0]) & (al <= e[-1])
        al, aq, ap = al[sel], aq[sel], ap[sel]
    if al.size == 0:
        return al, al, ap
    k = np.floor((al - e[0]) / d).astype(np.int64)
    k = np.clip(k, 0, e.size - 1)
    # the grid value e[k] must not exceed l (floating point): step down where it does
    up = (k + 1 < e.size)
    k = np.where(up & (e[np.minimum(k + 1, e.size - 1)] <= al), k + 1, k)
    k = np.where(e[k] > al, np.maximum(k - 1, 0), k)
    return al, e[k], ap


def _snap_correction(e: np.ndarray, al, al2, ap) -> np.ndarray:
    """H_original - H_snapped >= 0 at each grid point: each atom's P-mass p moved from loss l
    down to l' changes its term p (1 - e^{e - l})_+ to p (1 - e^{e - l'})_+."""
    out = np.zeros(e.shape)
    for l, l2, pm in zip(al, al2, ap):
        if l2 >= l:
            continue
        with np.errstate(over="ignore", under="ignore"):
            t1 = np.where(e < l, -np.expm1(np.minimum(e - l, 0.0)), 0.0)
            t2 = np.where(e < l2, -np.expm1(np.minimum(e - l2, 0.0)), 0.0)
        out += pm * (t1 - t2)
    return out


def _chord_gaps(pair: LossPair, e: np.ndarray, d: float, al, aq, lq: np.ndarray | None = None) -> np.ndarray:
    """Upper bound on chord(x) - H(x) on each grid interval [x_i, x_{i+1}] for the pair whose
    atoms sit on grid points: (s_b - s_a)(b - a)/4 with s_b - s_a the Q-mass of the continuous
    part of the loss in (e_i, e_{i+1}) (module docstring)."""
    if lq is None:
        lq = pair.log_q_sf(e)  # log Q(L > e): Q itself underflows far in the tail, x_i Q does not
    la, lb = lq[:-1], lq[1:]
    with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
        # Q-mass of (e_i, e_{i+1}] relative to Q(L > e_i), with a few ulps for the two tails
        rel = np.where(np.isfinite(la), -np.expm1(np.minimum(lb - la, 0.0)), 0.0)
        if al.size:  # remove the atoms' Q-mass from the cells (e_i, e_{i+1}] holding them
            qa = np.zeros(la.size)
            j = np.searchsorted(e, al, side="left") - 1  # e[j] < l <= e[j+1]
            ok = (j >= 0) & (j < la.size)
            np.add.at(qa, j[ok], aq[ok])
            sub = np.where(qa > 0, np.exp(np.log(np.where(qa > 0, qa, 1.0)) - la), 0.0)
            rel = np.maximum(rel - sub, 0.0)
        rel = rel * (1.0 + 1e-9) + 16.0 * _U
        # (b - a) qc / 4 with b - a = x_i expm1(d), formed in log space (x_i may overflow)
        return np.where(np.isfinite(la), np.exp(e[:-1] + la + np.log(rel)), 0.0) * (math.expm1(d) / 4.0)


def _chord_ratio(e: np.ndarray, m, a, b) -> np.ndarray:
    """(x_m - x_a)/(x_b - x_a) for point indices a <= m <= b, x = e^e (no overflow; the points
    need not be evenly spaced)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        hm = e[m] - e[a]
        hb = e[b] - e[a]
        num = np.expm1(hm)
        den = np.expm1(hb)
        big = hb > 30.0
        alt = np.exp(e[m] - e[b]) * -np.expm1(-hm) / -np.expm1(-hb)
        return np.where(big, alt, num / den)


def _lin_slope_x(e, a, b, i) -> np.ndarray:
    """x_i times the slope of (1 - x)_+ along the segment from point a to b (a < b)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        xi = np.exp(np.minimum(e[i], 0.0))
        left = -xi  # both ends at losses <= 0: slope -1
        # a < 0 < b: slope -(1 - x_a)/(x_b - x_a); times x_i
        straddle = np.expm1(np.minimum(e[a], 0.0)) * np.exp(np.minimum(e[i] - e[b], 0.0)) / -np.expm1(-(e[b] - e[a]))
    return np.where(e[b] <= 0, left, np.where(e[a] >= 0, 0.0, straddle))


def _concave_at(c, e, a, i, b) -> np.ndarray:
    """Whether the kept point i lies above the chord of its kept neighbours a < i < b, for
    D = (1 - x)_+ + c in x = e^e (compares x_i times the two slopes; no overflow)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        s_in = _lin_slope_x(e, a, i, i) + (c[i] - c[a]) / -np.expm1(-(e[i] - e[a]))
        s_out = _lin_slope_x(e, i, b, i) + (c[b] - c[i]) / np.expm1(e[b] - e[i])
    return s_out <= s_in  # collinear points are no vertices either (and flat float staircases resolve in one pass)


def _lin(e):
    return np.where(e < 0, -np.expm1(np.minimum(e, 0.0)), 0.0)


def _slope_from(c, e, a: int, js: np.ndarray) -> np.ndarray:
    """x_a times the slope of D = (1 - x)_+ + c from point a to each point in js (> a)
    (x_a is a common positive factor: only the order matters)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        den = np.expm1(e[js] - e[a])  # (x_j - x_a) / x_a
        num = (c[js] - c[a]) + (_lin(e[js]) - _lin(e[a:a + 1]))
        out = num / den
    return np.where(np.isfinite(out), out, np.inf)


def _slope_to(c, e, b: int, js: np.ndarray) -> np.ndarray:
    """x_b times the slope of D from each point in js (< b) to point b."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        den = -np.expm1(-(e[b] - e[js]))  # (x_b - x_j) / x_b
        num = (c[b] - c[js]) + (_lin(e[b:b + 1]) - _lin(e[js]))
        out = num / den
    return np.where(np.isfinite(out), out, -np.inf)


def _above_chord(c, e, a: int, b: int, ms: np.ndarray) -> np.ndarray:
    """Whether the points ms (a < m < b) lie strictly above the chord of D from a to b."""
    lam = _chord_ratio(e, ms, np.full(ms.shape, a), np.full(ms.shape, b))
    Da = float(_lin(e[a:a + 1])[0] + c[a])
    Db = float(_lin(e[b:b + 1])[0] + c[b])
    return _lin(e[ms]) + c[ms] > Da + (Db - Da) * lam


def _convex_minorant(c: np.ndarray, e: np.ndarray, i0: int, passes: int = 10000) -> np.ndarray:
    """Greatest convex minorant, in x = e^e, of the points (0, 1), (x_i, (1 - x_i)_+ + c_i),
    returned as c-values on the grid. Points above the chord of their kept neighbours are no
    hull vertices and are dropped together in each pass (only the neighbours of dropped points
    are re-examined); the last point is kept. Dropped points take the chord value, which is below them, so the result is below
    the input."""
    n = c.size
    keep = np.ones(n, dtype=bool)
    # from the virtual point (0, 1) the hull goes to the point of least slope (D_i - 1)/x_i;
    # every point before it is dropped
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        slope0 = np.where(e <= 0, -1.0 + c * np.exp(-np.minimum(e, 0.0)), (c - 1.0) * np.exp(-np.maximum(e, 0.0)))
    j_star = min(int(np.argmin(slope0)), n - 1)
    keep[:j_star] = False
    K = np.nonzero(keep)[0]
    cand = K[1:-1]
    for _ in range(passes):
        if K.size < 3 or cand.size == 0:
            break
        pos = np.searchsorted(K, cand)
        ok = (pos > 0) & (pos < K.size - 1)
        pos = pos[ok]
        i = K[pos]
        bad = _concave_at(c, e, K[pos - 1], i, K[pos + 1])
        drop = i[bad]
        if drop.size == 0:
            break
        if drop.size <= _ANCHOR_MAX:
            # few violations: from the kept point left of each, the hull's next vertex is the
            # kept point of least slope (it may lie far to the right: a local pass would walk
            # there one point at a time); everything in between is dropped
            # (and symmetrically from the kept point right of it, the previous vertex is the
            # kept point of largest slope: cascades run in both directions)
            extra = []
            # (only points strictly above the chord found are dropped, whatever the rounding)
            for a in np.unique(K[pos[bad] - 1]):
                ja = int(np.searchsorted(K, a))
                right = K[ja + 1:]
                j_best = int(right[int(np.argmin(_slope_from(c, e, int(a), right)))])
                mid = right[right < j_best]
                extra.append(mid[_above_chord(c, e, int(a), j_best, mid)])
            for b in np.unique(K[pos[bad] + 1]):
                jb = int(np.searchsorted(K, b))
                left = K[:jb]
                j_best = int(left[int(np.argmax(_slope_to(c, e, int(b), left)))])
                mid = left[left > j_best]
                extra.append(mid[_above_chord(c, e, j_best, int(b), mid)])
            drop = np.unique(np.concatenate([drop] + extra))
        keep[drop] = False
        K = K[keep[K]]
        # only the kept neighbours of dropped points can change status
        pos = np.searchsorted(K, drop)
        cand = np.unique(np.concatenate([K[np.maximum(pos - 1, 0)], K[np.minimum(pos, K.size - 1)]]))
    if K.size == n:
        return c
    out = c.copy()
    miss = np.nonzero(~keep)[0]
    pos = np.searchsorted(K, miss)  # K[pos-1] < m < K[pos]
    has_left = pos > 0
    # between two kept points: chord of D = (1 - x)_+ + c, returned as c
    m1 = miss[has_left]
    a1 = K[pos[has_left] - 1]
    b1 = K[np.minimum(pos[has_left], K.size - 1)]
    lam = _chord_ratio(e, m1, a1, b1)
    out[m1] = c[a1] + (c[b1] - c[a1]) * lam
    cross = (e[a1] < 0) & (e[b1] > 0)
    if np.any(cross):  # (1 - x)_+ has its kink inside: add chord(lin) - lin >= 0
        mc, ac, lc = m1[cross], a1[cross], lam[cross]
        lin_a = -np.expm1(e[ac])
        lin_m = np.where(e[mc] < 0, -np.expm1(np.minimum(e[mc], 0.0)), 0.0)
        out[mc] += lin_a * (1.0 - lc) - lin_m
    # before the first kept point: chord from (0, 1) to (x_b, D_b): D_m = 1 - (1 - D_b) x_m/x_b
    m0 = miss[~has_left]
    if m0.size:
        b0 = K[0]
        lin_b = -math.expm1(e[b0]) if e[b0] < 0 else 0.0
        D_b = lin_b + c[b0]
        with np.errstate(under="ignore"):
            D_m = 1.0 - (1.0 - D_b) * np.exp(e[m0] - e[b0])
        lin_m = np.where(e[m0] < 0, -np.expm1(np.minimum(e[m0], 0.0)), 0.0)
        out[m0] = D_m - lin_m
    return out


def discretise(pair: LossPair, d: float, tail: float, pessimistic: bool, cache: dict | None = None) -> DiscretePLD:
    """Discrete PLD of ``pair`` on the grid of spacing ``d`` (see the module docstring).

    ``tail`` only sets the range of the grid: pessimistically the mass beyond it is charged
    through the flat right end (``inf = H(x_n)``) and the chord from (0, 1); optimistically it
    is dropped. Every choice of the range gives a valid estimate. ``cache`` (a dict) keeps the
    curve values for the other estimate of the same pair and grid.
    """
    key = (id(pair), d, tail)
    if cache is not None and key in cache:
        _, i1, n, e, c, err = cache[key]
    else:
        i1, i_n = grid_for(pair, d, tail)
        n = i_n - i1 + 1
        check_size(n, "the single-step PLD", d)
        e = (i1 + np.arange(n)) * d
        c, err = _c_values(pair, e)
        if cache is not None:
            cache[key] = (pair, i1, n, e, c, err)  # the pair is kept alive: its id stays unique
    i0 = -i1
    if pessimistic:
        p, inf = _ctd_masses(c + err, d, i0)
        np.maximum(p, 0.0, out=p)
        rest = float(np.sum(p[1:]))
        p[0] = max(1.0 - inf - rest, 0.0)
        inf = min(inf, 1.0)
        # the curve at x = 0 is the total mass, which must not fall below 1 by rounding (after
        # k compositions a deficit of one ulp becomes k ulps at every epsilon): top it up at the
        # lowest loss (this raises the curve left of x_1 only, where the chord from (0, 1) runs)
        # (the sum in extended precision, rounded once: the correctly rounded sum but for a tie,
        # and the top-up below has a margin of 4 ulps)
        deficit = 1.0 - float(np.sum(p.astype(np.longdouble))) - inf
        if deficit > -4.0 * _U:
            p[0] += max(deficit, 0.0) + 4.0 * _U
        return DiscretePLD(d, i1, p, inf, True, 0.0)
    return _optimistic(pair, e, c, err, d, i0)


def _top_vals(base_vals, c, err, e, d, J, inf_mass, inf_true, lq_sf, atoms_l, atoms_q, al2, ap, lin):
    """Optimistic values when the curve ends (flat, at the mass at +inf) at grid index J: the
    finite mass above e_J is moved down to e_J, i.e. H' = H - (x/x_J) r with r the finite part
    of delta(e_J) (a linear correction: chord gaps are unchanged); the interval [x_{J-1}, x_J]
    lies below the left tangent of H' at x_J, of slope -(Q(L >= e_J) + r/x_J); beyond x_J the
    curve is the constant inf_true (H >= P(L = +inf) everywhere)."""
    n = e.size
    r_hi = max(float(c[J] + err[J]) - inf_mass, 0.0)
    r_lo = max(float(c[J] - err[J]) - inf_mass, 0.0)
    vals = np.empty(n)
    with np.errstate(under="ignore"):
        vals[:J] = base_vals[:J] - np.exp(e[:J] - e[J]) * r_hi
    # x_J Q(L >= e_J), in log space relative to x_J (Q itself may underflow)
    lq = float(lq_sf[J])
    if atoms_l.size:
        with np.errstate(under="ignore", over="ignore"):
            above = float(np.sum(atoms_q[atoms_l > e[J]]))  # original atoms above e_J are snapped
            sel = al2 >= e[J]
            snapped = float(np.sum(ap[sel] * np.exp(-al2[sel]))) if np.any(sel) else 0.0
        qv = max(math.exp(lq) - above, 0.0) + snapped if math.isfinite(lq) else snapped
        lq = math.log(qv) if qv > 0 else -math.inf
    omd = -math.expm1(-d)  # (x_J - x_{J-1}) / x_J
    xq = math.exp(min(e[J] + lq + math.log1p(-1e-9), 700.0)) if math.isfinite(lq) else 0.0
    tangent = inf_true + omd * (xq + r_lo)
    vals[J - 1] = min(vals[J - 1], tangent - lin[J - 1])
    vals[J:] = inf_true - lin[J:]
    return vals


def _interior_masses(vals: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Masses at the interior points of the chord interpolation of c-values ``vals`` at points
    ``e`` (x_i times the change of slope; the kink of (1 - x)_+ at 0 is not included)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        h = np.diff(e)
        dv = np.diff(vals)
        return dv[1:] / np.expm1(h[1:]) - dv[:-1] / -np.expm1(-h[:-1])


def _masses_e(vals: np.ndarray, e: np.ndarray, i0: int) -> np.ndarray:
    """:func:`_ctd_masses` for points ``e`` that need not be evenly spaced (i0: the point at loss
    0): masses of the chord interpolation of (x_i, (1 - x_i)_+ + vals_i), joined to (0, 1) and
    flat after the last point."""
    n = vals.size
    p = np.empty(n)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        h = np.diff(e)
        dv = np.diff(vals)
        p[0] = -vals[0] + dv[0] / np.expm1(h[0])
        if n > 2:
            p[1:-1] = dv[1:] / np.expm1(h[1:]) - dv[:-1] / -np.expm1(-h[:-1])
        p[-1] = -dv[-1] / -np.expm1(-h[-1])
    p[i0] += 1.0
    return p


def _snap_heavy_cells(pm: np.ndarray, gap: np.ndarray, snapped: np.ndarray, free: np.ndarray | None) -> bool:
    """Cells much heavier than their neighbours make the lowered chords non-convex (negative masses
    ``pm`` next to them): mark such cells in ``snapped`` (their mass will be moved to the left end);
    True when a cell was newly marked. Points next to a ``free`` cell are ignored (their chords are
    not used)."""
    n = pm.size
    neg = pm < -1e-9
    if free is not None:
        touch = np.zeros(n, dtype=bool)
        touch[:-1] |= free
        touch[1:] |= free
        neg &= ~touch
    newly = False
    for j in np.nonzero(neg)[0]:
        lo_c, hi_c = max(j - 2, 0), min(j + 2, n - 1)
        k = lo_c + int(np.argmax(gap[lo_c:hi_c]))
        if not snapped[k] and (free is None or not free[k]):
            snapped[k] = True
            newly = True
    return newly


def _optimistic_values(pair: LossPair, e: np.ndarray, c: np.ndarray, err: np.ndarray, d: float,
                       i0: int, abs_err: np.ndarray | None = None, interior: bool = False,
                       free: np.ndarray | None = None, info: dict | None = None,
                       top: bool | None = None):
    """Lowered values (c-values) at the grid points e whose chords lie below the curve (module
    docstring): atoms moved down onto the grid, values lowered by the chord-gap bounds (cells
    much heavier than their neighbours snapped to their left end instead), and -- unless
    ``interior`` -- the finite mass above the last point moved down to it, the last interval
    below the tangent at its right end and the first point below the tangent at 0. With
    ``interior`` only the chords between the points are below the curve (the points cover a
    part of the loss range; atoms outside it are left alone). ``free``: cells (i, i+1) whose
    chords will not be used (a finer grid covers them): their gaps are not charged and they are
    never snapped. ``top`` (default: not ``interior``): the range ends the curve (top end
    handled) even when its left end is open. Returns (vals, inf_true); ``info["snap_slope"]``: K with the snapped cells'
    correction equal to K x at every x up to the first point (the mass of a snapped cell moved to
    its left end lowers the curve by a linear function left of the cell)."""
    n = e.size
    J = n - 1
    if top is None:
        top = not interior
    al, al2, ap = _snapped_atoms(pair, e, d, interior)
    if al.size:
        corr = _snap_correction(e, al, al2, ap)
        c = c - corr
        err = err + _REL_SNAP * corr
    aq_all = pair.atoms()[1]
    if interior and pair.atoms()[0].size:
        sel = (pair.atoms()[0] > e[0]) & (pair.atoms()[0] <= e[-1])
        aq_all = aq_all[sel]
    lq_sf = pair.log_q_sf(e)
    gap = _chord_gaps(pair, e, d, al, aq_all, lq_sf)
    if free is not None:
        gap = np.where(free, 0.0, gap)
    inf_true = pair.inf_mass * (1.0 - 4.0 * _U)
    atoms_l, atoms_q, _ = pair.atoms()
    lin = np.where(e < 0, -np.expm1(np.minimum(e, 0.0)), 0.0)
    # evaluation errors as one relative factor: (1 - rho) c keeps the convexity of c (a
    # pointwise bound err_i would add its own, generally concave, profile); values too small for
    # a relative bound keep their absolute one
    big = c > 1e-250
    rho = float(np.max(err[big] / c[big])) if np.any(big) else 0.0
    floor_err = np.where(big, 0.0, err)
    # mass a cell would move if snapped to its left end: r_i = delta_cell(e_i) =
    # H_i - H_{i+1} - (x_{i+1} - x_i) Q(L > e_{i+1}) (an upper estimate)
    H = lin + c
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        wq = np.exp(e[:-1] + lq_sf[1:] + math.log1p(-1e-9)) * math.expm1(d)
    r_cell = np.maximum(H[:-1] - H[1:] - wq, 0.0) + err[:-1] + err[1:] + 8.0 * _U * (H[:-1] + wq)
    snapped = np.zeros(n - 1, dtype=bool)
    for _ in range(5):
        g = np.where(snapped, 0.0, gap)
        lower = np.zeros(n)
        lower[:-1] = g
        lower[1:] = np.maximum(lower[1:], g)
        # snapped cells: the correction (x_j/x_i) r_i for every grid point j <= i (linear in x)
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            log_s = np.where(snapped, np.log(r_cell) - e[:-1], -np.inf)  # log(r_i / x_i)
            log_tail = np.append(np.logaddexp.accumulate(log_s[::-1])[::-1], -np.inf)
            corr = np.exp(e + log_tail)
        base_vals = (1.0 - rho) * c - floor_err - lower - corr
        if abs_err is not None:
            base_vals = base_vals - abs_err
        if not top:
            vals = base_vals
            pm = np.concatenate([[0.0], _interior_masses(vals, e), [0.0]])
            if 0 < i0 < n - 1:
                pm[i0] += 1.0
        else:
            J = n - 1
            for _ in range(64):
                vals = _top_vals(base_vals, c, err, e, d, J, pair.inf_mass, inf_true, lq_sf, atoms_l, atoms_q,
                                 al2, ap, lin)
                # a value below the final level cannot be followed by the flat end: end the curve earlier
                below = np.nonzero(lin[:J] + vals[:J] < inf_true)[0]
                if below.size == 0 or J <= 1:
                    break
                J = max(int(below[0]), 1)
            if interior:  # (open left end: only the masses of the points after the first)
                pm = np.concatenate([[0.0], _interior_masses(vals, e), [0.0]])
                if 0 < i0 < n - 1:
                    pm[i0] += 1.0
            else:
                pm, _ = _ctd_masses(vals, d, i0)
        if not _snap_heavy_cells(pm, gap, snapped, free):
            break
    if info is not None:
        with np.errstate(over="ignore", under="ignore"):
            info["snap_slope"] = float(np.exp(log_tail[0])) if np.isfinite(log_tail[0]) else 0.0
    if not interior:
        # left end: below the tangent at 0, T(x_0) <= 1 - x_0 Q(L > -inf)
        vals[0] = min(vals[0], math.exp(e[0]) * pair.q_deficit())
    return vals, inf_true


def _optimistic_finish(vals: np.ndarray, e: np.ndarray, i0: int, inf: float, q_def: float):
    """(masses, slack) of the greatest convex minorant of lowered values at points e (evenly
    spaced or not): negative masses (floating-point noise) set to 0 and charged, total mass
    brought to at most one by removing mass from the lowest losses, the left part lifted onto
    the line 1 - x (1 - q_def) (:func:`_lift_left`)."""
    n = e.size
    vals = _convex_minorant(vals, e, i0)
    p = _masses_e(vals, e, i0)
    # (the lift first: the masses it replaces -- where rounding noise makes the most negative
    # ones, next to the left end -- then need no charge; it holds for signed masses too, whose
    # curve is the minorant itself)
    p = _lift_left(p, e, inf, q_def)
    neg = p < 0
    slack = float(-np.sum(p[neg])) if np.any(neg) else 0.0
    p[neg] = 0.0
    excess = float(np.sum(p)) + inf - 1.0
    if excess > 0:  # remove mass from the lowest losses (the curve only drops)
        c0 = np.cumsum(p)
        j_cut = int(np.searchsorted(c0, excess))
        if j_cut >= n:
            p[:] = 0.0
        else:
            p[j_cut] -= excess - (float(c0[j_cut - 1]) if j_cut > 0 else 0.0)
            p[:j_cut] = 0.0
            p[j_cut] = max(p[j_cut], 0.0)
    return p, slack


def _optimistic(pair: LossPair, e: np.ndarray, c: np.ndarray, err: np.ndarray, d: float,
                i0: int, abs_err: np.ndarray | None = None) -> DiscretePLD:
    """Optimistic discrete PLD (module docstring): atoms moved down onto the grid, the finite
    mass above the last grid point moved down to it, values lowered by the chord-gap bounds,
    the last interval below the tangent at its right end, then the greatest convex minorant
    of the points (non-negative masses; it lies below the chords, hence below H), its left
    part lifted onto the line below the curve (:func:`_lift_left`)."""
    vals, inf = _optimistic_values(pair, e, c, err, d, i0, abs_err)
    p, slack = _optimistic_finish(vals, e, i0, inf, pair.q_deficit())
    return DiscretePLD(d, -i0, p, inf, False, slack, pair.q_deficit())


def _lift_left(p: np.ndarray, L: np.ndarray, inf: float, q_def: float) -> np.ndarray:
    """Lift the left part of an optimistic PLD onto the line 1 - x (1 - q_def), a lower bound of
    the exact curve (H(x) >= P_tot - x Q(L > -inf) = 1 - x (1 - Q(L = -inf)) for a pair of
    probability measures, and q_def <= Q(L = -inf)).

    The lowered chords near the left end of the support can dip below that line (where the loss
    has little Q-mass to the left, the chord-gap lowering exceeds the curve's height above it);
    the curve, being convex and at most 1 at x = 0, then leaves x = 0 with slope below
    -(1 - q_def): its Q-total exceeds one, a shift of the mean loss that composes linearly. With
    D(x) = H'(x) - line(x) convex and <= 0 at 0, D < 0 on an initial interval; if D(x_j) <= 0
    (certified) the masses at x_0 .. x_j are replaced by one mass 1 - inf - sum_{k>j} p_k at x_j
    (rounded down): the new curve is the chord from (0, <= 1) to (x_j, H'(x_j)), below the line
    there, and H' itself right of x_j -- so still below the exact curve, and higher than H'.

    D(x_j) = inf + U_j - x_j W_j - 1 + x_j (1 - q_def) with U_j, W_j the sums of p_k and
    p_k e^{-L_k} over k > j, formed from the totals minus prefix sums (pairwise sums in double,
    their error bound charged); only the prefix up to the first certified positive D is formed."""
    n = p.size
    if n < 2:
        return p
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        w_all = np.where(p > 0, p * np.exp(-L), 0.0)
    if not np.all(np.isfinite(w_all)):
        return p
    P = float(np.sum(p))
    Wt = float(np.sum(w_all))
    slope = 1.0 - q_def
    lg = math.log2(n) + 6.0
    j = -1
    start = 0
    chunk = 256
    dmin = 0.0
    while start < n:
        stop = min(n, start + chunk)
        cp = np.cumsum(p[start:stop]) + (float(np.sum(p[:start])) if start else 0.0)
        cw = np.cumsum(w_all[start:stop]) + (float(np.sum(w_all[:start])) if start else 0.0)
        U = P - cp
        W = Wt - cw
        with np.errstate(over="ignore", invalid="ignore"):  # e^L beyond the float range: D is nan, not certified
            x = np.exp(L[start:stop])
            D = inf + U - x * W - 1.0 + x * slope
            err = lg * _U * (abs(inf) + P + np.abs(x) * Wt + 1.0 + np.abs(x * slope)) * 2.0 + 1e-300
            ok = (D + err) <= 0.0
        bad = np.nonzero(~ok)[0]
        upto = int(bad[0]) if bad.size else D.size
        if upto:
            dmin = min(dmin, float(np.min(D[:upto])))
        if bad.size:
            j = start + int(bad[0]) - 1
            break
        j = stop - 1
        start = stop
        chunk *= 4
    margin = lg * _U * (1.0 + abs(inf) + P) * 2.0
    if j < 0 or not dmin < -16.0 * margin:  # (no dip worth the rounding margin)
        return p
    U_j = P - float(np.sum(p[:j + 1]))
    mass = 1.0 - inf - U_j - margin
    if not mass > 0.0:
        return p
    out = p.copy()
    out[:j] = 0.0
    out[j] = mass
    # one point further: the curve C on the line up to x_{j+1} (where H' is above the line), then
    # from (x_{j+1}, line) to (x_{j+2}, H'(x_{j+2})), then H'. With the mass at x_{j+2} set to
    # p2 <= p_{j+2}, C <= H' on [x_{j+1}, x_{j+2}] (C and H' are linear there, equal at x_{j+2},
    # C the less steep); with p2 <= p2* = x_{j+2} (A/(x_{j+2} - x_{j+1}) - W_{>j+2}),
    # A = 1 - x_{j+1} slope - H'(x_{j+2}), C(x_{j+1}) <= line(x_{j+1}), and C is linear from
    # (0, total <= 1) to there: below the line. So C <= max(line, H') <= H for any such p2 >= 0;
    # p2* is formed in extended precision and lowered by its error bound. The curve then leaves 0
    # along the line (no residual Q-mass excess).
    if j + 3 <= n:
        ld = np.longdouble
        u_ld = float(np.finfo(ld).eps)
        Lx = L[j + 1:j + 3].astype(ld)
        x1, x2 = np.exp(Lx[0]), np.exp(Lx[1])
        gap = x1 * np.expm1(Lx[1] - Lx[0])  # x2 - x1
        pl = p.astype(ld)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            wl = np.where(p > 0, pl * np.exp(-L.astype(ld)), ld(0))
        W1 = np.sum(wl[j + 2:])  # over k > j+1
        W2 = W1 - wl[j + 2]
        U1 = np.sum(pl[j + 2:])
        A = ld(1.0) - ld(inf) - U1 - x1 * ld(slope) + x2 * W1
        e_a = (math.log2(n) + 8.0) * u_ld * (1.0 + abs(inf) + float(U1) + float(x1) * abs(slope) + float(x2 * W1))
        p2s = float(x2 * (A / gap - W2))
        e_p2 = float(x2) * (e_a / float(gap) * (1.0 + 1e-6) + (math.log2(n) + 8.0) * u_ld * float(W1) + 8.0 * u_ld * abs(float(A / gap)))
        p2 = min(float(p[j + 2]), p2s - 2.0 * e_p2 - 4.0 * _U * abs(p2s))
        if p2 >= 0.0:
            rest = float(ld(1.0) - ld(inf) - (U1 - pl[j + 2]) - ld(p2)) - margin
            if rest >= 0.0:
                alt = p.copy()
                alt[:j + 1] = 0.0
                alt[j + 1] = rest
                alt[j + 2] = p2
                return alt
    return out


# ------------------------------------------------------------------------------------------------
# exact composition of two-point pairs


def _binomial_window(k: int, p: float, q: float, j_lo: int, j_hi: int):
    """Binomial(k, p) masses on j_lo..j_hi with certified error bounds, without special functions.

    ``p`` and ``q`` (= 1 - p, passed separately so that neither is formed by cancellation) are the
    atom probabilities. scipy's ``binom.logpmf`` is not accurate enough here: its masses over a
    +-40 sd window summed to 1 + 1.2e-10 at k = 2^16, 1 + 1.5e-9 at k = 2^20, 1.0008 at k = 10^12
    and 0.344 at k = 2^49 (p = 1 - 6.9e-13), far outside the rounding margin of a certified PLD.
    Instead the masses relative to the mode are products of the ratios
    pmf(j+1)/pmf(j) = (k-j)/(j+1) * p/q (each product of n ratios has relative error <= 4 n u),
    normalised by their sum; the mass outside the window is bounded by the Chernoff bound
    P(X <= a) <= exp(-k KL(a/k || p)) (a < kp) and likewise above, with KL taken 1 % low.

    Returns (jj, pmf, rel, left, right): |pmf - exact| <= rel * exact + (left + right) * exact
    (relative to the normalisation), ``left``/``right`` upper bounds on the mass below/above the
    window.
    """
    kf = float(k)
    rho = p / q
    mode = min(max(int(math.floor((kf + 1.0) * p)), j_lo), j_hi)
    up_j = np.arange(mode, j_hi, dtype=float)  # ratios pmf(j+1)/pmf(j), j = mode..j_hi-1
    dn_j = np.arange(mode, j_lo, -1, dtype=float)  # ratios pmf(j-1)/pmf(j), j = mode..j_lo+1
    with np.errstate(under="ignore", over="ignore"):
        up = np.cumprod((kf - up_j) / (up_j + 1.0) * rho)
        dn = np.cumprod(dn_j / (kf - dn_j + 1.0) / rho)
    w = np.concatenate([dn[::-1], [1.0], up])
    w = np.where(np.isfinite(w), w, 0.0)  # (cannot overflow: the mode is the largest mass)
    total = math.fsum(w.tolist())
    n = max(up.size, dn.size) + 1
    rel = 8.0 * (n + 2) * _U  # ratios' and products' roundings, twice (numerator, normaliser)

    def chernoff(a: float) -> float:  # bound on P(X <= a) for a < kp, P(X >= a) for a > kp
        x = a / kf
        dx = (a - kf * p) / kf
        if x <= 0.0:
            kl = -math.log(q)
        elif x >= 1.0:
            kl = -math.log(p)
        else:
            kl = x * math.log1p(dx / p) + (1.0 - x) * math.log1p(-dx / q)
        return math.exp(-0.99 * kf * max(kl, 0.0))

    left = chernoff(float(j_lo - 1)) if j_lo > 0 else 0.0
    right = chernoff(float(j_hi + 1)) if j_hi < k else 0.0
    return np.arange(j_lo, j_hi + 1), w / total, rel, left, right


#: largest count composed by :func:`compose_atomic` (2^50: j, k - j and k * pj stay exact in doubles)
_MAX_ATOMIC_K = 2**50


def compose_atomic(pair: LossPair, k: int, d: float, tail: float, pessimistic: bool,
                   max_bins: int) -> DiscretePLD | None:
    """k-fold composition of a pair with at most two finite atoms (randomized response, the
    (eps, delta) pair, generalised randomized response, their Poisson-subsampled pairs when two
    atoms remain), or ``None`` for other pairs or when it does not fit ``max_bins``.

    The composed loss is ``j l1 + (k - j) l0`` with binomial weights (j the number of steps at
    the atom l1), plus the mass ``1 - (1 - P(L = inf))^k`` at +inf. Each composed atom is moved
    to the grid point above it (pessimistic) or below it (optimistic), once: the error is one
    grid step in the composed loss, not one per step as when each step is put on the grid.
    Binomial masses come from :func:`_binomial_window` (ratio products normalised on a window of
    +-40 standard deviations, certified relative error, Chernoff bounds on the mass outside) and
    are inflated (pessimistic) or deflated (optimistic) by that error. Outside the window the
    mass is charged pessimistically (the left part to the lowest atom, the right part to +inf)
    and dropped optimistically."""
    if pair.continuous:
        return None
    al, _, ap = pair.atoms()
    if al.size > 2:
        return None
    inf1 = pair.inf_mass
    k = int(k)
    if k > _MAX_ATOMIC_K:  # binomial indices and k * loss no longer exact in doubles / int64
        return None
    if al.size == 0:  # all finite mass (none) -- only the atom at +inf
        inf = -math.expm1(k * math.log1p(-inf1)) if inf1 < 1 else 1.0
        return DiscretePLD(d, 0, np.zeros(1), inf, pessimistic, 0.0, pair.q_deficit() if not pessimistic else 0.0)
    order = np.argsort(al)
    al, ap = al[order], ap[order]
    fin = float(np.sum(ap))
    l0, l1 = (float(al[0]), float(al[0])) if al.size == 1 else (float(al[0]), float(al[1]))
    # (finite mass)^k, directed: the atoms' masses carry roundings (their sum can exceed 1 by an
    # ulp, which k-fold gives 1 + k ulps: an optimistic mass above 1 at k = 8e4). Without an atom
    # at +inf the finite mass is exactly 1; otherwise it is at most min(sum, 1 - P(L = inf)), and
    # the logarithm is moved by 4 ulps outwards before the k-fold power.
    if fin <= 0.0:
        n_fin_log = -math.inf
    elif inf1 == 0.0:
        n_fin_log = 0.0
    elif pessimistic:
        n_fin_log = min(k * (math.log(fin) + 4.0 * _U), 0.0)
    else:
        n_fin_log = k * (math.log(min(fin, 1.0 - inf1)) - 4.0 * _U)
    rel = left = right = 0.0
    if al.size == 1 or ap[1] <= 0.0 or ap[0] <= 0.0:
        jj = np.array([k if al.size > 1 and ap[0] <= 0.0 else 0])
        pmf = np.ones(1)
    else:
        p1, p0 = float(ap[1]) / fin, float(ap[0]) / fin  # conditional atom probabilities
        mean = k * p1
        sd = math.sqrt(k * p1 * p0)
        j_lo = max(int(math.floor(mean - 40.0 * sd - 2)), 0)
        j_hi = min(int(math.ceil(mean + 40.0 * sd + 2)), k)
        if j_hi - j_lo + 1 > max_bins:
            return None
        jj, pmf, rel, left, right = _binomial_window(k, p1, p0, j_lo, j_hi)
    losses = jj * l1 + (k - jj) * l0
    idx = np.floor(losses / d) if not pessimistic else np.ceil(losses / d)
    # the grid value must be on the right side of the loss despite rounding
    if pessimistic:
        idx = np.where(idx * d < losses, idx + 1, idx)
    else:
        idx = np.where(idx * d > losses, idx - 1, idx)
    if not np.all(np.abs(idx) < 2.0**62):  # grid indices beyond int64: use the general path
        return None
    idx = idx.astype(np.int64)
    lo, hi = int(idx.min()), int(idx.max())
    if hi - lo + 1 > max_bins:
        return None
    fk = math.exp(n_fin_log) if math.isfinite(n_fin_log) else 0.0
    # masses: pmf within rel (+ the normalisation's share of the tails) of the exact ones; the
    # factor (finite mass)^k adds a few roundings
    err = rel + left + right + 1e-13
    scale = (1.0 + err) if pessimistic else max(1.0 - err, 0.0)
    with np.errstate(under="ignore"):
        w = pmf * fk
    p = np.bincount(idx - lo, weights=w * scale, minlength=hi - lo + 1)
    # (one step: the pair's own mass at +inf, exactly -- an (epsilon, delta) step then answers
    # epsilon(delta) = epsilon instead of inf; k steps: 1 - (1 - P(L = inf))^k, rounded outwards)
    inf = -math.expm1(k * math.log1p(-inf1)) if 0 < inf1 < 1 and k > 1 else inf1
    if pessimistic:
        p[0] += left * fk * (1.0 + 1e-13)  # the mass below the window, at the lowest atom
        inf = (inf if k == 1 else inf * (1.0 + 4.0 * _U)) + right * fk * (1.0 + 1e-13)  # the mass above, at +inf
        return DiscretePLD(d, lo, p, min(inf, 1.0), True, 0.0)
    # optimistic: the mass outside the window is dropped (a sub-probability PLD stays a lower end)
    return DiscretePLD(d, lo, p, inf if k == 1 else inf * (1.0 - 4.0 * _U), False, 0.0,
                       -math.expm1(k * math.log1p(-pair.q_deficit())) * (1.0 - 4.0 * _U) if pair.q_deficit() < 1 else 1.0)


# ------------------------------------------------------------------------------------------------
# coarsening a composed optimistic PLD (two-level composition)


class _GridPLDPair(LossPair):
    """A discrete PLD on a fine grid d_f seen as a pair, evaluated on the grid d = m d_f (whose
    points are fine grid points). Sums run over fine indices, so "L > e" is exact.

    With A_J = sum_{l > e_J} p (1 - e^{e_J - l}) and V_J = sum_{l > e_J} p e^{e_J - l} (both sums of
    non-negative terms), splitting off the fine points of the coarse cell (e_J, e_{J+1}] gives
    V_J = v_J + e^{-d} V_{J+1} and A_J = a_J + A_{J+1} + (1 - e^{-d}) V_{J+1}; the curve (1) is
    A_J + inf and Q(L > e_J) = e^{-e_J} V_J.
    """

    def __init__(self, logp: np.ndarray, lo: int, d_f: float, m: int, inf_mass: float, minf: float = 0.0):
        self.logp, self.lo, self.d_f, self.m = logp, int(lo), d_f, int(m)
        self.d = d_f * m
        self.inf_mass = float(inf_mass)
        self.minf_mass = float(minf)
        fin = np.isfinite(logp)
        idx = np.nonzero(fin)[0]
        self.has_finite = idx.size > 0
        self.support = ((lo + idx[0]) * d_f, (lo + idx[-1]) * d_f) if idx.size else (0.0, 0.0)
        self.scale = math.inf
        self._tab: tuple[int, np.ndarray, np.ndarray, int] | None = None
        self._totals: tuple[float, float, float] | None = None

    def totals(self) -> tuple[float, float, float]:
        """(P_tot - 1, Q_tot - 1, error bound of each): P_tot = finite masses + inf, Q_tot = sum of
        p e^{-l} (no Q-mass at -inf), summed in extended precision."""
        if self._totals is None:
            fin = np.isfinite(self.logp)
            lp = self.logp[fin]
            ll = (self.lo + np.nonzero(fin)[0]) * self.d_f
            with np.errstate(under="ignore", over="ignore"):
                pt = float(np.sum(np.exp(lp))) + self.inf_mass
                qt = float(np.sum(np.exp(lp - ll)))
            n = max(int(np.count_nonzero(fin)), 2)
            # exp of the logarithms (the masses' own logarithms carry a rounding each: a few u
            # relative per term) and pairwise sums
            e_p = pt * (8.0 + math.log2(n)) * _U
            e_q = qt * (8.0 + math.log2(n)) * _U
            self._totals = (pt - 1.0, qt - 1.0, max(e_p, e_q) + 2.0 * _U * max(abs(pt - 1.0), abs(qt - 1.0)))
        return self._totals

    def _table(self):
        """A, log V on the coarse indices J0..J1 covering the fine support (cached)."""
        if self._tab is not None:
            return self._tab
        m, n = self.m, self.logp.size
        J0 = int(math.floor(self.lo / m)) - 1
        J1 = int(math.ceil((self.lo + n - 1) / m)) + 1
        ncell = J1 - J0 + 1
        # fine index i (absolute lo + i) belongs to cell J if J m < lo + i <= (J + 1) m
        pad_front = (self.lo - J0 * m) - 1  # absolute index J0 m + 1 is the first slot
        buf = np.full(ncell * m, -np.inf)
        buf[pad_front:pad_front + n] = self.logp
        blk = buf.reshape(ncell, m)
        k = np.arange(1, m + 1) * self.d_f  # l - e_J of the slots of a cell
        with np.errstate(under="ignore", invalid="ignore"):
            a_loc = np.sum(np.exp(blk) * -np.expm1(-k), axis=1)
            lv_loc = np.logaddexp.reduce(blk - k, axis=1)
        Js = J0 + np.arange(ncell)
        with np.errstate(invalid="ignore"):
            lvs = np.logaddexp.accumulate((lv_loc - Js * self.d)[::-1])[::-1] + Js * self.d  # log V_J
        v_next = np.append(np.exp(lvs[1:]), 0.0)
        A = np.cumsum((a_loc + -math.expm1(-self.d) * v_next)[::-1])[::-1]
        self._tab = (J0, A, lvs, ncell)
        return self._tab

    def _lookup(self, e):
        J0, A, lvs, ncell = self._table()
        J = np.rint(as_float_array(e) / self.d).astype(np.int64) - J0
        below = J < 0
        Jc = np.clip(J, 0, ncell - 1)
        a = np.where(J >= ncell, 0.0, A[Jc])
        lv = np.where(J >= ncell, -np.inf, lvs[Jc])
        return a, lv, below

    def delta(self, e):
        e = as_float_array(e)
        a, lv, below = self._lookup(e)
        # below the support every mass is above e: A = total - e^e Q-total (never needed on the grid)
        val = np.where(below, np.nan, a) + self.inf_mass
        if np.any(below):
            tot = float(np.sum(np.exp(self.logp[np.isfinite(self.logp)]))) + self.inf_mass
            J0 = self._table()[0]
            lv0 = self._table()[2][0]
            with np.errstate(over="ignore"):
                val = np.where(below, tot - np.exp(e - J0 * self.d + lv0) , val)
        val = np.clip(val, 0.0, None)
        return val, 4.0 * self._table()[3] * _U * val + 1e-300

    def q_sf(self, e):
        return np.exp(self.log_q_sf(e))

    def log_q_sf(self, e):
        e = as_float_array(e)
        a, lv, below = self._lookup(e)
        return np.where(below, np.nan, lv - e)

    def reversed(self):
        # the Q-side measure: masses q = p e^{-l} at losses -l (reversed fine order)
        n = self.logp.size
        l = (self.lo + np.arange(n)) * self.d_f
        return _GridPLDPair((self.logp - l)[::-1].copy(), -(self.lo + n - 1), self.d_f, self.m, 0.0)

    def ranges(self, tail):
        return self.support, self.support

    def q_deficit(self):
        # the Q-mass at -inf of the composition the PLD stands for (a lower bound, tracked
        # through the compositions): its true curve has slope -(1 - minf) at 0
        return self.minf_mass


def coarsen(pld: DiscretePLD, m: int) -> DiscretePLD:
    """Optimistic PLD on the grid m * pld.d below (the curve of) the optimistic ``pld``: the
    optimistic discretisation of the module docstring applied to ``pld`` seen as a pair. For a
    composition of several steps the curve is smooth on the coarse scale, so the chord gaps are
    second order; the slack of ``pld`` is carried over."""
    if pld.pessimistic:
        raise ValueError("coarsen: only optimistic PLDs are coarsened")
    with np.errstate(divide="ignore"):
        logp = np.log(pld.p)
    pair = _GridPLDPair(logp, pld.lo, pld.d, m, pld.inf, pld.minf)
    d = pld.d * m
    if not pair.has_finite:
        return DiscretePLD(d, 0, np.zeros(1), pld.inf, False, pld.slack, pld.minf)
    lo, hi = pair.support
    i1 = min(int(math.floor(lo / d)), 0)
    i_n = max(int(math.ceil(hi / d)), 0, i1 + 1)
    e = (i1 + np.arange(i_n - i1 + 1)) * d
    c, err = _c_values(pair, e)
    out = _optimistic(pair, e, c, err, d, -i1, _totals_err(pair, e, c))
    out.slack += pld.slack
    return out


# ------------------------------------------------------------------------------------------------
# hybrid grid for the first level of the two-level optimistic composition


def _grid_values(pair: LossPair, d: float, tail: float, cache: dict | None):
    key = (id(pair), d, tail)
    if cache is not None and key in cache:
        _, i1, n, e, c, err = cache[key]
        return i1, n, e, c, err
    i1, i_n = grid_for(pair, d, tail)
    n = i_n - i1 + 1
    check_size(n, "the single-step PLD", d)
    e = (i1 + np.arange(n)) * d
    c, err = _c_values(pair, e)
    if cache is not None:
        cache[key] = (pair, i1, n, e, c, err)
    return i1, n, e, c, err


def hybrid_split(pair: LossPair, d: float, m: int, tail: float, cache: dict | None = None,
                 max_fine: int = 2**17, heavy: float = 1e-7):
    """An optimistic discrete PLD of one step on a mixed grid: spacing d/m on the core of the loss
    (the smallest range of grid cells outside of which every cell of the pessimistic PLD has
    P-mass below ``heavy``), spacing d elsewhere, split into its two parts.

    Both sets of lowered values (:func:`_optimistic_values`: the coarse ones over the whole range,
    the fine ones over the core, ``interior``) have every chord between consecutive points below
    the curve H of the pair; the points of the mixed grid are the coarse points outside the core
    and the fine ones inside (m is a power of two, so the two grids share their points exactly
    in floating point), the two values at the two junctions the smaller of each pair. Every chord
    of the mixed point set is one of those chords (or one with an end lowered further), so the
    chord interpolation is below H; its greatest convex minorant gives non-negative masses
    (:func:`_optimistic_finish`). Returns ``(A, B, slack)``: A the masses on the core (fine grid,
    no mass at +inf), B those outside (coarse grid, with the mass at +inf), ``slack`` the charge
    of the whole step (its curve is <= H + slack); ``None`` when the core is too wide for
    ``max_fine`` fine points. (Beyond the last point the curve is flat at the mass at +inf, below
    H; the last value is the smaller of the fine one and the coarse one, which is at that level.)
    """
    if m < 2 or m & (m - 1):
        raise ValueError("hybrid_split: m must be a power of two")
    i1, n, e, c, err = _grid_values(pair, d, tail, cache)
    if n < 4:
        return None
    i0 = -i1
    pc, _ = _ctd_masses(c + err, d, i0)
    big = np.nonzero(pc >= heavy)[0]
    if big.size == 0:
        return None
    ia, ib = int(big[0]), int(big[-1])
    ia, ib = max(ia - 2, 0), min(ib + 2, n - 1)
    nf = (ib - ia) * m + 1
    if nf > max_fine or ib - ia < 2:
        return None
    free = np.zeros(n - 1, dtype=bool)
    free[ia:ib] = True  # (coarse cells inside the core: their chords are replaced by fine ones)
    top_in_core = ib == n - 1
    # when the core reaches the last point the fine values end the curve: the coarse ones need no
    # top end (it would lower every coarse value by the finite mass above its flat end)
    vals_c, inf_true = _optimistic_values(pair, e, c, err, d, i0, free=free, interior=top_in_core)
    if top_in_core:
        vals_c[0] = min(vals_c[0], math.exp(e[0]) * pair.q_deficit())  # (the tangent at 0)
        inf_true = pair.inf_mass * (1.0 - 4.0 * _U)
    d_f = d / m
    e_f = ((i1 + ia) * m + np.arange(nf)) * d_f
    if e_f[0] != e[ia] or e_f[-1] != e[ib]:  # pragma: no cover - exact for m a power of two
        return None
    c_f, err_f = _c_values(pair, e_f)
    z = np.nonzero(e_f == 0.0)[0]
    i0_f = int(z[0]) if z.size else -1
    info: dict = {}
    vals_f, _ = _optimistic_values(pair, e_f, c_f, err_f, d_f, i0_f, interior=True, info=info,
                                   top=top_in_core)
    # the fine cells snapped to their left end lower the curve by K x everywhere left of them:
    # the coarse values left of the core are lowered the same way (no step at the junction)
    if ia > 0 and info.get("snap_slope", 0.0) > 0.0:
        with np.errstate(over="ignore", under="ignore"):
            vals_c[:ia + 1] = vals_c[:ia + 1] - info["snap_slope"] * np.exp(e[:ia + 1])
    # taper: at a junction the coarse values are lowered by the coarse gap of the cell outside;
    # a step in the lowering would move mass (about lowering / d) there, so the fine values next
    # to it are lowered as well, by the difference tapered smoothly to 0 over w fine points
    # (lowering more keeps every chord below H)
    w = max(min(nf // 3, 16 * m), 1)
    s = np.arange(w) / w
    taper = (1.0 - s) ** 3
    if ia > 0:
        step = (c_f[0] - vals_c[ia]) - (c_f[0] - vals_f[0])
        if step > 0:
            vals_f[:w] -= step * taper
    if ib < n - 1:
        step = (c_f[-1] - vals_c[ib]) - (c_f[-1] - vals_f[-1])
        if step > 0:
            vals_f[nf - w:] -= (step * taper)[::-1]
    eh = np.concatenate([e[:ia], e_f, e[ib + 1:]])
    vh = np.concatenate([vals_c[:ia], vals_f, vals_c[ib + 1:]])
    vh[ia] = min(vh[ia], vals_c[ia])
    vh[ia + nf - 1] = min(vh[ia + nf - 1], vals_c[ib])
    if top_in_core:  # flat after the last point, at the mass at +inf (below H)
        vh[-1] = min(vh[-1], inf_true - float(_lin(eh[-1:])[0]))
    if i0 < ia:
        i0_h = i0
    elif i0 <= ib:
        i0_h = ia + (i0 - ia) * m
    else:
        i0_h = ia + nf + (i0 - ib - 1)
    ph, slack = _optimistic_finish(vh, eh, i0_h, inf_true, pair.q_deficit())
    A = ph[ia:ia + nf].copy()
    B = np.zeros(n)
    B[:ia] = ph[:ia]
    B[ib + 1:] = ph[ia + nf:]
    return (DiscretePLD(d_f, (i1 + ia) * m, A, 0.0, False, 0.0, 0.0),
            DiscretePLD(d, i1, B, inf_true, False, 0.0, 0.0), slack)


def coarsen_part(pld: DiscretePLD, m: int) -> DiscretePLD:
    """:func:`coarsen` of a part of a PLD (total mass below one, standing for no pair of its own):
    coarsened after scaling to total mass one, with its own tangent at 0 (slope -Q_tot: the
    scaled masses' Q total, rounded up), then scaled back; the curve scales with the masses."""
    ld = np.longdouble
    u_ld = float(np.finfo(ld).eps)
    pl = pld.p.astype(ld)
    tot = float(np.sum(pl) + ld(pld.inf))
    if not tot > 0.0:
        return DiscretePLD(pld.d * m, 0, np.zeros(1), 0.0, False, pld.slack, 0.0)
    L = pld.losses.astype(ld)
    with np.errstate(over="ignore", under="ignore"):
        qt = float(np.sum(pl * np.exp(-L))) / tot
    qt *= 1.0 + (math.log2(max(pld.p.size, 2)) + 8.0) * u_ld + 4.0 * _U
    scaled = DiscretePLD(pld.d, pld.lo, pld.p / tot, pld.inf / tot, False, pld.slack / tot, 1.0 - qt)
    out = coarsen(scaled, m)
    # (division and multiplication by tot: two roundings per mass, charged on the total)
    return DiscretePLD(out.d, out.lo, out.p * tot, out.inf * tot, False,
                       out.slack * tot + 8.0 * _U * tot, 0.0)


def lift_left(pld: DiscretePLD, q_def: float = 0.0) -> DiscretePLD:
    """``pld`` (optimistic, standing for a composition whose Q-mass at -inf is at least ``q_def``)
    with its left part lifted onto the line 1 - x (1 - q_def) (:func:`_lift_left`; the slack is
    carried: the lifted curve minus the slack stays below the exact one)."""
    if pld.pessimistic:
        raise ValueError("lift_left: only optimistic PLDs are lifted")
    p = _lift_left(pld.p, pld.losses, pld.inf, q_def)
    return DiscretePLD(pld.d, pld.lo, p, pld.inf, False, pld.slack, max(pld.minf, 0.0))
