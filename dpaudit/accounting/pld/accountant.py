"""PLDAccountant: privacy-loss-distribution accounting with a certified [lower, upper] interval.

The accountant keeps the composed events and, on the first query, builds for each direction
(ADD and REMOVE neighbours; one suffices when every mechanism is symmetric) a *pessimistic*
discrete PLD (connect-the-dots; upper bounds) and an *optimistic* one (privacy buckets rounded
down; lower bounds), composes each event by one FFT power and the events by FFT convolution,
and answers (``accounting.md`` section 8.3)

    delta(eps)   = max over directions of the hockey-stick divergence of the composed PLD,
    epsilon(del) = max over directions of the smallest eps with delta(eps) <= del.

Because every approximation is charged towards more loss in the pessimistic PLD and towards
less loss in the optimistic one, ``lower <= true value <= upper`` for both queries.

Unsampled Gaussian mechanisms compose exactly into one Gaussian with
``mu = sqrt(sum_i count_i (sensitivity_i / sigma_i)^2)`` (Dong, Roth, Su 2019, Cor. 3.3); when
nothing else is composed the answer is the exact Balle-Wang curve (Balle & Wang 2018, Thm. 8)
and the interval is that value rounded outwards.

The grid spacing is the requested ``discretization`` unless a composed mechanism has a
per-step loss so narrow that the grid would distort it (many steps of a small sampling rate);
then it is refined (at most to the memory budget) and :attr:`effective_discretization` reports
the spacing used. Every array is sized from tail bounds before allocation and a configuration
needing more than :data:`~dpaudit.accounting.pld.distribution.MAX_BINS` bins is refused with a
``ValueError`` suggesting a coarser discretisation.

When ``rdp_fallback`` is on (default), the upper end is the smaller of the PLD bound and the RDP
bound of the same events (both are valid upper bounds); this matters only when the requested
delta is below what the PLD can certify (the truncated mass, ~1e-15, e.g. delta = 1e-18).
``details`` records which one was used.
"""

from __future__ import annotations

import math

from scipy import optimize
from scipy.special import log_ndtr

from dpaudit.accounting._relation import join_relation
from dpaudit.accounting.pld.distribution import (
    PLDTooLargeError,
    compose,
    delta_for_epsilon,
    epsilon_for_delta,
    self_compose,
)
from dpaudit.accounting.pld.mechanisms import GaussianPair, discretise, event_for_mechanism, loss_range
from dpaudit.core.numeric import round_down, round_up
from dpaudit.core.validation import (
    UnsupportedMechanismError,
    check_count,
    check_delta,
    check_epsilon,
    check_positive,
)

__all__ = ["PLDAccountant"]

#: the grid is refined until the narrowest per-step loss spans this many bins ...
_BINS_PER_SCALE = 40.0
#: ... as long as the composed PLD stays under this many bins (speed budget, far below the cap)
_REFINE_BUDGET = 2**21


def _gaussian_log_delta(mu: float, eps: float) -> float:
    """log of the exact Gaussian delta (Balle & Wang 2018, Thm. 8) with mu = sensitivity/sigma:
    delta = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) = e^x (1 - e^{y - x})."""
    x = float(log_ndtr(0.5 * mu - eps / mu))
    y = eps + float(log_ndtr(-0.5 * mu - eps / mu))
    if y >= x:
        return -math.inf
    return x + math.log(-math.expm1(y - x))


def _gaussian_interval_delta(mu: float, eps: float) -> tuple[float, float]:
    from dpaudit.accounting.conversions import gaussian_delta

    upper = gaussian_delta(1.0 / mu, eps)  # certified (rounded up) by the conversions module
    lower = math.exp(_gaussian_log_delta(mu, eps)) * (1.0 - 1e-9)
    return round_down(min(lower, upper)), upper


def _gaussian_interval_epsilon(mu: float, delta: float) -> tuple[float, float]:
    from dpaudit.accounting.conversions import gaussian_epsilon

    upper = gaussian_epsilon(1.0 / mu, delta)
    ld = math.log(delta)
    if _gaussian_log_delta(mu, 0.0) <= ld:
        return 0.0, upper

    def f(e):
        return _gaussian_log_delta(mu, e) - ld

    hi = max(upper, 1e-300)
    while f(hi) > 0:
        hi *= 2.0
    root = optimize.brentq(f, 0.0, hi, xtol=1e-15, rtol=1e-14)
    lower = max(root * (1.0 - 1e-9) - 1e-15, 0.0)
    return round_down(min(lower, upper)), upper


class PLDAccountant:
    """Pessimistic privacy-loss-distribution accountant with a certified interval.

    Parameters
    ----------
    discretization : float > 0
        Grid spacing of the privacy loss (default 1e-4, as dp_accounting's
        ``value_discretization_interval``). Smaller is tighter and slower.
    tail_mass : float in (0, 1)
        Mass truncated at each FFT composition (charged to delta; default 1e-15).
    rdp_fallback : bool
        Also compute the RDP bound of the same events and report the smaller upper bound.
    exact_gaussian : bool
        Answer pure Gaussian compositions from the exact Balle-Wang curve (default). With
        ``False`` they go through the discretised machinery like everything else.
    adaptive : bool
        Refine the grid for very narrow per-step losses (see the module docstring).

    Supported mechanisms: ``Gaussian``, ``Laplace``, ``PureDP`` / any mechanism with a finite
    ``pure_epsilon()`` (randomized-response pair), ``ApproxDP`` (the (eps, delta) pair),
    ``PoissonSampled(Gaussian | Laplace)`` (add/remove, both directions). Others raise
    :class:`~dpaudit.core.validation.UnsupportedMechanismError`.
    """

    def __init__(self, discretization=1e-4, *, tail_mass=1e-15, rdp_fallback: bool = True,
                 exact_gaussian: bool = True, adaptive: bool = True):
        self.discretization = check_positive("discretization", discretization)
        if not self.discretization <= 1.0:
            raise ValueError(f"discretization must be in (0, 1], got {self.discretization}")
        tail_mass = check_positive("tail_mass", tail_mass)
        if not tail_mass < 1e-3:
            raise ValueError(f"tail_mass must be in (0, 1e-3), got {tail_mass}")
        self.tail_mass = tail_mass
        self.rdp_fallback = bool(rdp_fallback)
        self.exact_gaussian = bool(exact_gaussian)
        self.adaptive = bool(adaptive)
        self.neighbouring: str | None = None
        self._events: list[tuple[object, int]] = []
        self._pairs: list[tuple[object, object, int]] = []  # (add_pair, remove_pair, count)
        self._mu2 = 0.0
        self._rdp = None
        self._rdp_ok = True
        self._built: dict | None = None
        self._d_eff: float | None = None
        #: how the last query was answered (method, effective discretization, sources)
        self.details: dict = {}

    # -- composition ---------------------------------------------------------------------------
    def compose(self, mechanism, count=1) -> "PLDAccountant":
        """Compose ``count`` (adaptive) runs of ``mechanism``; returns ``self``."""
        count = check_count(count)
        event = event_for_mechanism(mechanism)
        self.neighbouring = join_relation(self.neighbouring, mechanism)
        if count == 0 or event[0] == "identity":
            return self
        if event[0] == "gaussian":
            self._mu2 += count * event[1] ** 2
        else:
            self._pairs.append((event[1], event[2], count))
        self._events.append((mechanism, count))
        self._built = None
        self._d_eff = None
        if self._rdp is not None or self._rdp_ok:
            self._add_rdp(mechanism, count)
        return self

    def _add_rdp(self, mechanism, count):
        if not self.rdp_fallback or not self._rdp_ok:
            return
        try:
            if self._rdp is None:
                from dpaudit.accounting.rdp import RDPAccountant

                self._rdp = RDPAccountant(warn_at_grid_end=False)
            self._rdp.compose(mechanism, count)
        except (UnsupportedMechanismError, ImportError, ValueError):
            self._rdp_ok = False
            self._rdp = None

    @property
    def events(self) -> list[tuple[object, int]]:
        """The composed (mechanism, count) pairs, in order."""
        return list(self._events)

    # -- construction of the composed PLDs -------------------------------------------------------
    def _all_pairs(self):
        pairs = list(self._pairs)
        if self._mu2 > 0:
            g = GaussianPair(math.sqrt(self._mu2))
            pairs.append((g, g, 1))
        return pairs

    def _choose_d(self, pairs) -> float:
        d = self.discretization
        if not self.adaptive:
            return d
        scales = [a.scale for a, _, _ in pairs if a.scale > 1e-12]
        if not scales:
            return d
        want = min(scales) / _BINS_PER_SCALE
        if want >= d:
            return d
        # rough width of the composed PLD: mean drift plus ~20 standard deviations per event,
        # never more than count times the single-step range
        width = 0.0
        for a, _, k in pairs:
            lo, hi = loss_range(a, 1e-20)
            single = hi - lo
            width += min(k * single, k * 0.5 * a.scale**2 + 20.0 * math.sqrt(k) * a.scale + single)
        floor = width / _REFINE_BUDGET
        return min(d, max(want, floor))

    def _build_with(self, pairs, d, pessimistic: bool) -> dict:
        total_steps = sum(k for _, _, k in pairs)
        tail = max(self.tail_mass / (10.0 * total_steps), 1e-300)
        directions = ["add"]
        if any(a is not r for a, r, _ in pairs):
            directions.append("remove")
        out = {}
        for direction in directions:
            acc = None
            for a, r, k in pairs:
                pair = a if direction == "add" else r
                single = discretise(pair, d, tail, pessimistic)
                composed = self_compose(single, k, self.tail_mass)
                acc = composed if acc is None else compose(acc, composed, self.tail_mass)
            out[direction] = acc
        return out

    def _build(self, pessimistic: bool) -> dict:
        """Composed PLDs per direction (built on first use, cached until the next compose)."""
        if self._built is None:
            self._built = {}
        if pessimistic in self._built:
            return self._built[pessimistic]
        pairs = self._all_pairs()
        d = self._d_eff if self._d_eff is not None else self._choose_d(pairs)
        try:
            built = self._build_with(pairs, d, pessimistic)
        except PLDTooLargeError:
            if d >= self.discretization:
                raise
            d = self.discretization
            self._built = {}
            built = self._build_with(pairs, d, pessimistic)
        self._d_eff = d
        self._built[pessimistic] = built
        return built

    @property
    def effective_discretization(self) -> float | None:
        """Grid spacing actually used (``None`` when the answer is exact: pure Gaussian or empty)."""
        if self._exact_path():
            return None
        self._build(True)
        return self._d_eff

    def _exact_path(self) -> bool:
        return not self._pairs and (self.exact_gaussian or self._mu2 == 0)

    # -- queries ---------------------------------------------------------------------------------
    def epsilon_interval(self, delta) -> tuple[float, float]:
        """(lower, upper) bracketing the true epsilon at ``delta`` of the composition."""
        return self._epsilon_interval(check_delta(delta), True)

    def _epsilon_interval(self, delta: float, want_lower: bool) -> tuple[float, float]:
        if self._exact_path():
            if self._mu2 == 0:
                self.details = {"method": "empty"}
                return 0.0, 0.0
            self.details = {"method": "exact-gaussian", "mu": math.sqrt(self._mu2)}
            return _gaussian_interval_epsilon(math.sqrt(self._mu2), delta)
        built = self._build(True)
        up = round_up(max(epsilon_for_delta(v, delta) for v in built.values()))
        lo = math.nan
        if want_lower:
            lo = round_down(max(epsilon_for_delta(v, delta) for v in self._build(False).values()))
        self.details = {"method": "pld", "effective_discretization": self._d_eff, "upper_source": "pld",
                        "pld_upper": up, "directions": sorted(built)}
        if self.rdp_fallback and self._rdp is not None:
            r = self._rdp.epsilon(delta)
            self.details["rdp_upper"] = r
            if r < up:
                up = r
                self.details["upper_source"] = "rdp"
        return lo, up

    def delta_interval(self, epsilon) -> tuple[float, float]:
        """(lower, upper) bracketing the true delta at ``epsilon`` of the composition."""
        return self._delta_interval(check_epsilon(epsilon), True)

    def _delta_interval(self, epsilon: float, want_lower: bool) -> tuple[float, float]:
        if self._exact_path():
            if self._mu2 == 0:
                self.details = {"method": "empty"}
                return 0.0, 0.0
            self.details = {"method": "exact-gaussian", "mu": math.sqrt(self._mu2)}
            return _gaussian_interval_delta(math.sqrt(self._mu2), epsilon)
        built = self._build(True)
        up = min(round_up(max(delta_for_epsilon(v, epsilon) for v in built.values())), 1.0)
        lo = math.nan
        if want_lower:
            lo = round_down(max(delta_for_epsilon(v, epsilon) for v in self._build(False).values()))
        self.details = {"method": "pld", "effective_discretization": self._d_eff, "upper_source": "pld",
                        "pld_upper": up, "directions": sorted(built)}
        if self.rdp_fallback and self._rdp is not None:
            r = self._rdp.delta(epsilon)
            self.details["rdp_upper"] = r
            if r < up:
                up = r
                self.details["upper_source"] = "rdp"
        return lo, up

    def epsilon(self, delta) -> float:
        """Certified upper bound on epsilon at ``delta`` (``inf`` when none)."""
        return self._epsilon_interval(check_delta(delta), False)[1]

    def delta(self, epsilon) -> float:
        """Certified upper bound on delta at ``epsilon`` (at most 1)."""
        return self._delta_interval(check_epsilon(epsilon), False)[1]

    def __repr__(self) -> str:
        return f"PLDAccountant(discretization={self.discretization:g}, {len(self._events)} events)"
