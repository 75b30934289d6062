"""Privacy-loss pairs of the supported mechanisms and their discretisation.

For a dominating pair (P, Q) with privacy loss L = log(dP/dQ), a :class:`LossPair` gives the
four tails ``log P(L > e)``, ``log P(L <= e)``, ``log Q(L > e)``, ``log Q(L <= e)`` (vectorised
over ``e``) and the exact hockey-stick divergence

    delta(e) = P(L > e) - e^e Q(L > e)                                    (reference sheet 8.1)

Pairs (reference sheet ``accounting.md`` section 8.1):

* Gaussian, mu = sensitivity/sigma: P = N(0, 1), Q = N(mu, 1), L(x) = mu^2/2 - mu x.
* Laplace, eps0 = sensitivity/scale: P = Lap(0, 1), Q = Lap(eps0, 1),
  L(x) = |x - eps0| - |x| in [-eps0, eps0] (atoms at both ends).
* pure eps-DP: the randomized-response pair, P = (e^eps, 1)/(1 + e^eps), Q reversed; it dominates
  every eps-DP mechanism (Kairouz, Oh, Viswanath 2015, Thm. 2.1).
* (eps, delta)-DP: P = (delta, (1-delta) e^eps/(1+e^eps), (1-delta)/(1+e^eps)) on losses
  (+inf, eps, -eps), Q mirrored (ibid.; Zhu, Dong, Wang 2022, Prop. 8).
* Poisson subsampling with rate q of a base pair (A, B) with loss l = log(dA/dB) (add/remove;
  Zhu, Dong, Wang 2022, "Optimal accounting of differential privacy via characteristic
  function", Thm. 10): ADD: P = A, Q = (1-q)A + qB, L = -log(1 - q + q e^{-l});
  REMOVE: P = (1-q)A + qB, Q = A, L = log(1 - q + q e^{-l}). The two directions differ; the
  accountant reports the worse one.

Discretisation on the grid ``e_i = i d`` (:func:`discretise`):

* pessimistic: connect-the-dots (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022,
  arXiv:2207.04380, Alg. 1): the discrete PLD whose delta-curve, as a function of ``e^eps``,
  is the chord interpolation of the exact convex curve through ``(e^{e_i}, delta(e_i))``,
  joined to ``(0, 1)`` on the left and flat beyond the last point (mass ``delta(e_n)`` at
  +inf). Chords of a convex function lie above it, so the curve dominates the exact one for
  *every* real epsilon, which is what survives composition (Blackwell / post-processing).
* optimistic: privacy buckets rounded *down* (Meiser, Mohammadi 2018, "Tight on budget?";
  reference sheet 8.2): the P-mass of each loss cell ``(e_i, e_{i+1}]`` is put at ``e_i``,
  the mass above the range at the last grid point, the mass below it dropped. Losses only
  decrease, so every delta is a lower bound, and this survives convolution (stochastic order).
"""

from __future__ import annotations

import abc
import math

import numpy as np
from scipy.special import log_ndtr

from dpaudit.accounting.pld.distribution import DiscretePLD, _check_size
from dpaudit.core.validation import UnsupportedMechanismError

__all__ = [
    "LossPair",
    "GaussianPair",
    "LaplacePair",
    "RandomizedResponsePair",
    "ApproxDPPair",
    "SubsampledPair",
    "discretise",
    "event_for_mechanism",
]

_LOG2 = math.log(2.0)
_U = np.finfo(float).eps


def _arr(e) -> np.ndarray:
    return np.asarray(e, dtype=float)


def _laplace_log_cdf(x: np.ndarray) -> np.ndarray:
    """log F(x) of the standard Laplace distribution (scale 1), stable on both sides."""
    x = _arr(x)
    with np.errstate(over="ignore"):
        return np.where(x < 0, x - _LOG2, np.log1p(-0.5 * np.exp(-np.abs(x))))


class LossPair(abc.ABC):
    """A dominating pair described through the distribution of its privacy loss."""

    #: P(L = +inf)
    inf_mass: float = 0.0
    #: (inf L, sup L) over the finite part
    support: tuple[float, float] = (-math.inf, math.inf)
    #: a rough scale of the per-step loss (its standard deviation), used to choose the grid
    scale: float = 1.0

    @abc.abstractmethod
    def log_sf_p(self, e) -> np.ndarray:
        """log P(L > e)"""

    @abc.abstractmethod
    def log_cdf_p(self, e) -> np.ndarray:
        """log P(L <= e)"""

    @abc.abstractmethod
    def log_sf_q(self, e) -> np.ndarray:
        """log Q(L > e)"""

    @abc.abstractmethod
    def log_cdf_q(self, e) -> np.ndarray:
        """log Q(L <= e)"""

    def delta(self, e) -> np.ndarray:
        """Exact hockey-stick divergence ``P(L > e) - e^e Q(L > e)`` at each real ``e``,
        as ``exp(a) * (-expm1(e + b - a))`` with ``a, b`` the log tails (no cancellation of
        the two tails themselves)."""
        e = _arr(e)
        a = self.log_sf_p(e)
        b = self.log_sf_q(e)
        with np.errstate(invalid="ignore", over="ignore"):
            r = e + b - a
            out = np.exp(a) * -np.expm1(np.minimum(r, 0.0))
        out = np.where(np.isneginf(a), 0.0, out)
        return np.clip(out, 0.0, 1.0)


# ------------------------------------------------------------------------------------------------
# base pairs (also usable as the (A, B) of a subsampled pair)


class GaussianPair(LossPair):
    """P = N(0, 1), Q = N(mu, 1): L = mu^2/2 - mu x, so L > e iff x < mu/2 - e/mu."""

    def __init__(self, mu: float):
        self.mu = float(mu)
        self.scale = self.mu

    def _z(self, e):
        return 0.5 * self.mu - _arr(e) / self.mu

    def log_sf_p(self, e):
        return log_ndtr(self._z(e))

    def log_cdf_p(self, e):
        return log_ndtr(-self._z(e))

    def log_sf_q(self, e):
        return log_ndtr(self._z(e) - self.mu)

    def log_cdf_q(self, e):
        return log_ndtr(self.mu - self._z(e))


class LaplacePair(LossPair):
    """P = Lap(0, 1), Q = Lap(eps0, 1): L(x) = |x - eps0| - |x|, decreasing, constant eps0 on
    x <= 0 and -eps0 on x >= eps0; for e in [-eps0, eps0), L > e iff x < (eps0 - e)/2."""

    def __init__(self, eps0: float):
        self.eps0 = float(eps0)
        self.support = (-self.eps0, self.eps0)
        self.scale = self.eps0

    def _x(self, e):
        return 0.5 * (self.eps0 - _arr(e))

    def _sf(self, e, shift):
        e = _arr(e)
        v = _laplace_log_cdf(self._x(e) - shift)
        return np.where(e < -self.eps0, 0.0, np.where(e >= self.eps0, -np.inf, v))

    def _cdf(self, e, shift):
        e = _arr(e)
        v = _laplace_log_cdf(-(self._x(e) - shift))
        return np.where(e < -self.eps0, -np.inf, np.where(e >= self.eps0, 0.0, v))

    def log_sf_p(self, e):
        return self._sf(e, 0.0)

    def log_cdf_p(self, e):
        return self._cdf(e, 0.0)

    def log_sf_q(self, e):
        return self._sf(e, self.eps0)

    def log_cdf_q(self, e):
        return self._cdf(e, self.eps0)


class ApproxDPPair(LossPair):
    """The (eps, delta)-DP dominating pair; ``delta = 0`` is randomized response."""

    def __init__(self, eps: float, delta: float = 0.0):
        self.eps = float(eps)
        self.inf_mass = float(delta)
        self.support = (-self.eps, self.eps)
        self.scale = max(self.eps, 1e-300)
        # log P(L = eps), log P(L = -eps) (both scaled by 1 - delta); Q mirrored
        lo1m = math.log1p(-self.inf_mass)
        self._lhi = lo1m - math.log1p(math.exp(-self.eps))  # e^eps/(1+e^eps)
        self._llo = lo1m - self.eps - math.log1p(math.exp(-self.eps))  # 1/(1+e^eps)
        self._ldel = math.log(self.inf_mass) if self.inf_mass > 0 else -math.inf

    def _tails(self, e, l_hi, l_lo, l_inf, l_minf):
        e = _arr(e)
        above_lo = np.logaddexp(np.logaddexp(l_hi, l_lo), l_inf)  # e < -eps
        mid = np.logaddexp(l_hi, l_inf)  # -eps <= e < eps
        sf = np.where(e < -self.eps, above_lo, np.where(e < self.eps, mid, l_inf))
        below_all = l_minf
        cdf_mid = np.logaddexp(l_lo, l_minf)
        cdf_top = np.logaddexp(np.logaddexp(l_hi, l_lo), l_minf)
        cdf = np.where(e < -self.eps, below_all, np.where(e < self.eps, cdf_mid, cdf_top))
        return sf, cdf

    def log_sf_p(self, e):
        return self._tails(e, self._lhi, self._llo, self._ldel, -np.inf)[0]

    def log_cdf_p(self, e):
        return self._tails(e, self._lhi, self._llo, self._ldel, -np.inf)[1]

    def log_sf_q(self, e):
        return self._tails(e, self._llo, self._lhi, -np.inf, self._ldel)[0]

    def log_cdf_q(self, e):
        return self._tails(e, self._llo, self._lhi, -np.inf, self._ldel)[1]


def RandomizedResponsePair(eps: float) -> ApproxDPPair:
    """The pure eps-DP dominating pair (randomized response)."""
    return ApproxDPPair(eps, 0.0)


class SubsampledPair(LossPair):
    """Poisson subsampling with rate ``q`` of a base pair ``(A, B)`` (both directions).

    ADD: L = -log(1 - q + q e^{-l}) is increasing in l; L > e iff l > v(e) with
    v(e) = -log1p(expm1(-e)/q), for e < -log(1-q) (above it L > e never happens).
    REMOVE: L = log(1 - q + q e^{-l}) is decreasing in l; L > e iff l < w(e) with
    w(e) = -log1p(expm1(e)/q), for e > log(1-q) (below it always).
    """

    def __init__(self, base: LossPair, q: float, direction: str):
        if direction not in ("add", "remove"):
            raise ValueError("direction must be 'add' or 'remove'")
        self.base, self.q, self.direction = base, float(q), direction
        self._lq = math.log(self.q)
        self._l1q = math.log1p(-self.q)
        lo, hi = base.support
        if direction == "add":
            self.support = (self._loss(lo), self._loss(hi))
        else:
            self.support = (self._l1q if hi == math.inf else self._loss(hi), self._loss(lo))
        # standard deviation of the likelihood ratio under A is q * sqrt(chi^2(B || A))
        chi2 = math.expm1(base.mu**2) if isinstance(base, GaussianPair) else math.expm1(min(base.scale, 700.0))
        self.scale = max(self.q * math.sqrt(chi2), 1e-300)

    def _loss(self, l: float) -> float:
        """L as a function of the base loss l (scalar, for the support)."""
        if l == -math.inf:
            return -math.inf if self.direction == "add" else math.inf
        if l == math.inf:
            return -self._l1q if self.direction == "add" else self._l1q
        val = math.log1p(self.q * math.expm1(-l)) if -l < 700 else self._lq - l
        return -val if self.direction == "add" else val

    def _mix(self, la, lb):
        return np.logaddexp(self._l1q + la, self._lq + lb)

    def _threshold(self, e, sign):
        """v(e) (sign=-1, ADD) or w(e) (sign=+1, REMOVE) and the mask where it exists."""
        e = _arr(e)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            r = np.expm1(sign * e) / self.q
            ok = r > -1.0
            t = -np.log1p(np.where(ok, r, 0.0))
        return t, ok

    def log_sf_p(self, e):
        b = self.base
        if self.direction == "add":
            v, ok = self._threshold(e, -1.0)
            return np.where(ok, b.log_sf_p(v), -np.inf)
        w, ok = self._threshold(e, 1.0)
        return np.where(ok, self._mix(b.log_cdf_p(w), b.log_cdf_q(w)), 0.0)

    def log_cdf_p(self, e):
        b = self.base
        if self.direction == "add":
            v, ok = self._threshold(e, -1.0)
            return np.where(ok, b.log_cdf_p(v), 0.0)
        w, ok = self._threshold(e, 1.0)
        return np.where(ok, self._mix(b.log_sf_p(w), b.log_sf_q(w)), -np.inf)

    def log_sf_q(self, e):
        b = self.base
        if self.direction == "add":
            v, ok = self._threshold(e, -1.0)
            return np.where(ok, self._mix(b.log_sf_p(v), b.log_sf_q(v)), -np.inf)
        w, ok = self._threshold(e, 1.0)
        return np.where(ok, b.log_cdf_p(w), 0.0)

    def log_cdf_q(self, e):
        b = self.base
        if self.direction == "add":
            v, ok = self._threshold(e, -1.0)
            return np.where(ok, self._mix(b.log_cdf_p(v), b.log_cdf_q(v)), 0.0)
        w, ok = self._threshold(e, 1.0)
        return np.where(ok, b.log_sf_p(w), -np.inf)


# ------------------------------------------------------------------------------------------------
# discretisation


def _solve_tail(fn, log_target: float, start: float, direction: float, scale: float) -> float:
    """Point x beyond ``start`` (in ``direction``) with ``fn(x) <= log_target``, fn monotone."""
    step = max(scale, 1e-12)
    a = start
    b = start + direction * step
    it = 0
    while float(fn(np.array([b]))[0]) > log_target:
        a = b
        step *= 2.0
        b = start + direction * step
        it += 1
        if it > 200:
            return b
    for _ in range(80):  # bisection; only the bracket end b is guaranteed to satisfy fn <= target
        m = 0.5 * (a + b)
        if float(fn(np.array([m]))[0]) > log_target:
            a = m
        else:
            b = m
    return b


def loss_range(pair: LossPair, tail: float) -> tuple[float, float]:
    """[e_lo, e_hi]: the support ends where finite, else the points where
    P(e_hi < L < inf) <= tail and Q(L <= e_lo) <= tail."""
    lo, hi = pair.support
    lt = math.log(tail)
    if not math.isfinite(hi):
        if pair.inf_mass > 0:  # pragma: no cover - every pair with an atom at +inf has bounded support
            raise ValueError("unbounded pair with an atom at +inf")
        start = 0.0 if not math.isfinite(lo) else lo
        hi = _solve_tail(pair.log_sf_p, lt, start, 1.0, pair.scale)
    if not math.isfinite(lo):
        start = min(0.0, hi)
        lo = _solve_tail(lambda e: pair.log_cdf_q(e), lt, start, -1.0, pair.scale)
    return lo, hi


def grid_for(pair: LossPair, d: float, tail: float) -> tuple[int, int]:
    """Integer grid indices [i1, i_n] covering the (truncated) loss range, at least 2 points."""
    lo, hi = loss_range(pair, tail)
    i1 = int(math.floor(lo / d))
    i_n = max(int(math.ceil(hi / d)), i1 + 1)
    return i1, i_n


#: candidate offsets (in bins) of the optimistic groups G_i = [(i - 1/2 + s) d, (i + 1/2 + s) d);
#: the one with the smallest expected rounding (sum_i P(G_i) (lambda_i - floor)) is used
_GROUP_SHIFTS = (0.01, 0.03, 0.1, 0.5)


def _interval_masses(log_sf, log_cdf, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masses of [edges_j, edges_{j+1}) (from whichever tail is smaller: no cancellation of
    numbers near 1) and an upper bound on their rounding error."""
    with np.errstate(under="ignore"):
        sf = np.exp(log_sf(edges))
        cdf = np.exp(log_cdf(edges))
    use_sf = sf[:-1] <= 0.5
    m = np.where(use_sf, sf[:-1] - sf[1:], cdf[1:] - cdf[:-1])
    err = 4.0 * _U * np.where(use_sf, sf[:-1], cdf[1:])
    return np.maximum(m, 0.0), err


def _pessimistic(pair: LossPair, eps: np.ndarray, d: float) -> tuple[np.ndarray, float]:
    """Connect-the-dots masses on the grid ``eps`` and the mass at +inf.

    The curve is split as delta(e) = lin(e) + c(e): for e < 0, lin = 1 - e^e and
    c = e^e Q(L <= e) - P(L <= e) >= 0 (= E_Q[(e^e - e^L)_+]); for e >= 0, lin = 0 and
    c = delta(e). The second differences in e^e of ``lin`` vanish except at the junction, so the
    masses are formed from the small part ``c`` with relative accuracy.
    """
    n = eps.size
    t = np.exp(eps)
    left = eps < 0
    c = np.empty(n)
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        a = pair.log_cdf_q(eps[left]) + eps[left]
        b = pair.log_cdf_p(eps[left])
        cl = np.exp(a) * -np.expm1(np.minimum(b - a, 0.0))
    c[left] = np.where(np.isneginf(a), 0.0, cl)
    c[~left] = pair.delta(eps[~left])
    c *= 1.0 + 1e-10  # covers the evaluation error of the exact curve (pessimistic direction)
    em1 = math.expm1(d)
    ed = math.exp(d)
    dc = np.diff(c)
    dlin = np.where(left[1:], -t[:-1] * em1, np.where(left[:-1], -(-np.expm1(eps[:-1])), 0.0))
    dd = dc + dlin
    p = np.empty(n)
    p[1:-1] = (dc[1:] - ed * dc[:-1]) / em1
    # lin contributes only where the junction is involved (indices s-1, s)
    j = np.nonzero(left[:-1] & ~left[1:])[0]
    for i in j:  # at most one junction
        for k in (i, i + 1):
            if 1 <= k <= n - 2:
                p[k] += (dlin[k] - ed * dlin[k - 1]) / em1
    p[-1] = -dd[-1] * ed / em1
    np.maximum(p, 0.0, out=p)
    inf = float(c[-1] + (1.0 - t[-1] if left[-1] else 0.0))
    p[0] = max(1.0 - inf - float(np.sum(p[1:])), 0.0)
    return p, inf


def _optimistic(pair: LossPair, i1: int, n: int, d: float) -> tuple[np.ndarray, float]:
    """Best of :func:`_optimistic_shift` over :data:`_GROUP_SHIFTS` (every candidate is valid)."""
    best = None
    for shift in _GROUP_SHIFTS:
        p, slack, cost = _optimistic_shift(pair, i1, n, d, shift)
        if best is None or cost < best[2]:
            best = (p, slack, cost)
    return best[0], best[1]


def _optimistic_shift(pair: LossPair, i1: int, n: int, d: float, shift: float):
    """Merge-and-round-down masses on the grid i1..i1+n-1 and the slack.

    The loss axis is cut into groups G_i = [(i - 1/2 + s) d, (i + 1/2 + s) d) (plus the two
    tails); merging each group into one outcome is post-processing, so the merged pair is
    dominated by the true one (Blackwell); the merged atom has loss lambda_i = log(P(G_i)/Q(G_i))
    in G_i, and is moved *down* to the grid point floor(lambda_i/d) d (stochastic order).
    The left tail group is dropped (moved to -inf); the right one lands on the last grid point.
    """
    edges = (i1 + np.arange(n) + (shift - 0.5)) * d  # n edges: n - 1 inner groups
    edges = np.concatenate([edges, [math.inf]])
    pm, perr = _interval_masses(pair.log_sf_p, pair.log_cdf_p, edges)
    qm, _ = _interval_masses(pair.log_sf_q, pair.log_cdf_q, edges)
    fin_top = max(float(np.exp(pair.log_sf_p(np.array([edges[-2]])))[0]) - pair.inf_mass, 0.0)
    pm[-1] = fin_top  # finite mass of the right tail group (the +inf atom stays at +inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.log(pm) - np.log(qm)
    idx = np.floor(lam / d - 1e-9)
    # group j (0-based) is centred on grid index i1 + j; its atom goes to index <= that
    target = np.where(np.isfinite(idx), idx - i1, -1.0)
    target = np.minimum(target, np.arange(n))  # never above the group's own grid point
    target[-1] = min(target[-1], n - 1) if np.isfinite(lam[-1]) else n - 1
    keep = (target >= 0) & (pm > 0)
    p = np.bincount(target[keep].astype(np.int64), weights=pm[keep], minlength=n)[:n]
    slack = float(np.sum(perr))
    moved = keep & np.isfinite(lam)
    cost = float(np.sum(pm[moved] * (lam[moved] - (i1 + target[moved]) * d))) + float(np.sum(pm[~keep]))
    return p, slack, cost


def discretise(pair: LossPair, d: float, tail: float, pessimistic: bool) -> DiscretePLD:
    """Discrete PLD of ``pair`` on the grid of spacing ``d`` (see the module docstring).

    ``tail`` is the mass beyond the grid on each unbounded side; pessimistically it is charged
    through ``delta(e_n)`` (at +inf) and the chord from (0, 1); optimistically the tails are
    merged into single outcomes (right) or dropped (left).
    """
    i1, i_n = grid_for(pair, d, tail)
    n = i_n - i1 + 1
    _check_size(n, "the single-step PLD", d)
    if pessimistic:
        eps = (i1 + np.arange(n)) * d
        p, inf = _pessimistic(pair, eps, d)
        return DiscretePLD(d, i1, p, inf, True, 0.0)
    p, slack = _optimistic(pair, i1, n, d)
    return DiscretePLD(d, i1, p, pair.inf_mass, False, slack)


# ------------------------------------------------------------------------------------------------
# mechanisms -> pairs


def _cls(module: str, name: str):
    try:
        mod = __import__(module, fromlist=[name])
        return getattr(mod, name, None)
    except ImportError:
        return None


def _base_pair(mech):
    """(A, B) base pair of an unsampled additive-noise mechanism, or None."""
    Gaussian = _cls("dpaudit.mechanisms.gaussian", "Gaussian")
    Laplace = _cls("dpaudit.mechanisms.laplace", "Laplace")
    if Gaussian is not None and isinstance(mech, Gaussian):
        return GaussianPair(mech.sensitivity / mech.sigma)
    if Laplace is not None and isinstance(mech, Laplace):
        return LaplacePair(mech.sensitivity / mech.scale)
    return None


def event_for_mechanism(mech):
    """Describe one step of ``mech`` for the accountant.

    Returns ``("gaussian", mu)`` for an unsampled Gaussian (composed exactly), ``("identity",)``
    for a step that releases nothing (sampling rate 0), or ``("pair", add_pair, remove_pair)``.
    Raises :class:`UnsupportedMechanismError` for mechanisms without a PLD description here.
    """
    Gaussian = _cls("dpaudit.mechanisms.gaussian", "Gaussian")
    PoissonSampled = _cls("dpaudit.mechanisms.subsampled", "PoissonSampled")
    if Gaussian is not None and isinstance(mech, Gaussian):
        return ("gaussian", mech.sensitivity / mech.sigma)
    if PoissonSampled is not None and isinstance(mech, PoissonSampled):
        base_mech = mech.mechanism
        base = _base_pair(base_mech)
        q = float(mech.q)
        if q == 0.0:
            return ("identity",)
        if q == 1.0:
            return event_for_mechanism(base_mech)
        if base is not None and getattr(base_mech, "neighbouring", "add_remove") == "add_remove":
            return ("pair", SubsampledPair(base, q, "add"), SubsampledPair(base, q, "remove"))
        # other bases: the mechanism's own (amplified) pure / approximate DP statement below
    base = _base_pair(mech)
    if base is not None:  # Laplace: symmetric, ADD and REMOVE pairs coincide
        return ("pair", base, base) if base.scale > 0 else ("identity",)
    pure = getattr(mech, "pure_epsilon", None)
    eps = float(pure()) if callable(pure) else math.inf
    if math.isfinite(eps):
        if eps == 0.0:
            return ("identity",)
        pair = RandomizedResponsePair(eps)
        return ("pair", pair, pair)
    approx = getattr(mech, "approx_dp", None)
    ad = approx() if callable(approx) else None
    if ad is not None:
        e, dl = float(ad[0]), float(ad[1])
        if e == 0.0 and dl == 0.0:
            return ("identity",)
        pair = ApproxDPPair(max(e, 0.0), dl)
        return ("pair", pair, pair)
    raise UnsupportedMechanismError(
        f"PLDAccountant has no privacy loss distribution for {type(mech).__name__}; supported: "
        "Gaussian, Laplace, pure-DP mechanisms, ApproxDP, PoissonSampled(Gaussian | Laplace)"
    )
