"""Renyi-DP accountant: compose RDP curves order by order, convert to (epsilon, delta).

References
----------
Mironov, "Renyi differential privacy", CSF 2017, arXiv:1702.07476: Prop. 1 (adaptive
composition adds RDP order by order).
Balle, Barthe, Gaboardi, Hsu & Sato, AISTATS 2020, arXiv:1905.09982, Thm. 21 (conversion to
(epsilon, delta), see :func:`dpaudit.accounting.conversions.rdp_to_dp`).

(epsilon, delta)-DP steps (``ApproxDP``, dp_accounting's ``EpsilonDeltaDpEvent``)
---------------------------------------------------------------------------------
An (epsilon, delta)-DP step with delta > 0 has no RDP guarantee (its Renyi divergence may be
infinite), but it is *delta-approximately* RDP: by Kairouz, Oh & Viswanath (ICML 2015, Thm. 2.1)
every (epsilon, delta)-DP pair is a post-processing of R(eps, delta), whose laws on both
neighbours are ``(1 - delta) RR_eps + delta E`` -- the SAME weight 1 - delta on randomized
response RR_eps (the pointwise-largest RDP curve of any eps-DP pair, Mironov 2017, Prop. 5) and
the rest on an event of mass delta (KOV 2015, Sec. 3 for the adaptive case). In an adaptive
composition the "all good" event has the same probability prod(1 - delta_i) under both
neighbours, and given it the transcript is an adaptive composition of RR_eps_i and the RDP steps,
whose RDP curves add (Mironov 2017, Prop. 1); this is the composition of approximate zCDP/RDP of
Bun & Steinke (TCC 2016, Sec. 8). Writing P = (1 - d0) P' + d0 A and Q = (1 - d0) Q' + d0 B with
d0 = 1 - prod(1 - delta_i), any (eps, d')-DP bound for (P', Q') gives, for every event S,

    P(S) <= (1 - d0)(e^eps Q'(S) + d') + d0 <= e^eps Q(S) + d' + d0 - d0 d'

(Q >= (1 - d0) Q'). So the accountant keeps the RDP curve of the good part (the eps part charged
as RR_eps) and log(1 - d0) = sum count log(1 - delta_i) (rounded down: d0 up), and answers

    delta(epsilon)   = 1 - (1 - d0)(1 - conversion_delta(epsilon))  (= d' + d0 - d0 d'),
    epsilon(delta)   = conversion(1 - (1 - delta)/(1 - d0))          (inf when delta <= d0),

which is the exact composition with the (0, d0)-DP pair (the curve of P = d0 at +inf and 1 - d0
at loss 0, i.e. the PLD accountant's treatment of the delta part: dp_accounting's
``from_privacy_parameters``), never looser than charging d' + sum delta_i. dp_accounting 0.6.0
has no ``EpsilonDeltaDpEvent``; later versions accept it in the PLD accountant only. A
non-private step (``approx_dp() = (0, 1)``) gives d0 = 1: epsilon = inf, delta = 1; one sampled at
rate q (exactly (0, q)-DP) gives d0 = q per step, the exact answer.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from dpaudit.accounting.base import Accountant
from dpaudit.accounting.conversions import rdp_to_delta, rdp_to_dp
from dpaudit.core.numeric import round_down, round_up, scale_by_count
from dpaudit.core.validation import (
    UnsupportedMechanismError,
    check_delta,
    check_epsilon,
    check_orders,
)
from dpaudit.mechanisms.pure import randomized_response_rdp

__all__ = ["RDPAccountant", "DEFAULT_ORDERS", "DPA_DEFAULT_ORDERS", "OrderGridWarning"]

#: dp_accounting 0.6.0 ``DEFAULT_RDP_ORDERS`` (Mironov 2017): 156 orders.
DPA_DEFAULT_ORDERS = np.array(
    [1.0 + x / 10.0 for x in range(1, 100)] + [float(a) for a in range(11, 64)] + [128.0, 256.0, 512.0, 1024.0]
)

_EXTRA_ORDERS = (
    # close to 1: large composed rho (little noise, many steps) puts the optimum near
    # alpha* = 1 + sqrt(log(1/delta)/rho) -> 1.
    [1.0 + x / 100.0 for x in range(1, 10)]
    # between 63 and 1024 dp_accounting jumps by factors of 2; fill in (epsilon varies by a few
    # per cent across those gaps when the optimum lies there: small q, tiny delta).
    + [64.0, 72.0, 80.0, 96.0, 112.0, 160.0, 192.0, 224.0, 320.0, 384.0, 448.0, 640.0, 768.0, 896.0, 1536.0]
    # beyond 1024: the optimum alpha* ~ 1 + sqrt(log(1/delta)/rho) exceeds 1024 once the composed
    # rho is below ~1e-5 at delta = 1e-5 (q ~ 1e-3 with few steps) or delta is tiny
    # (delta = 1e-300 gives log(1/delta) = 690); 2^20 covers rho down to ~1e-11.
    + [2.0**k for k in range(11, 21)]
    # alpha = inf: D_inf is the pure-DP epsilon (Mironov 2017, Prop. 3 at alpha -> inf), so
    # compositions of pure-DP mechanisms are never charged more than basic composition.
    + [math.inf]
)

#: Default order grid: a strict superset of dp_accounting's ``DEFAULT_RDP_ORDERS`` (so the
#: epsilon is never larger than dp_accounting's on the same curve), sorted, 200+ orders.
DEFAULT_ORDERS = np.unique(np.concatenate([DPA_DEFAULT_ORDERS, np.array(_EXTRA_ORDERS)]))
DEFAULT_ORDERS.flags.writeable = False


class OrderGridWarning(UserWarning):
    """The optimal order lies at an end of the order grid: a wider grid may give a smaller epsilon."""


_CURVE_CACHE: dict = {}
_CURVE_CACHE_MAX = 256


def _mechanism_curve(mechanism, orders: np.ndarray) -> np.ndarray:
    """``mechanism.rdp(orders)`` validated, cached per (mechanism, orders) when hashable.

    Mechanisms are immutable descriptions (frozen dataclasses), so the curve of a given
    mechanism on a given grid never changes; caching makes repeated compositions of the same
    step (DP-SGD) cost one curve evaluation.
    """
    try:
        key = (mechanism, orders.tobytes())
        hash(key)
    except TypeError:
        key = None
    if key is not None:
        cached = _CURVE_CACHE.get(key)
        if cached is not None:
            return cached
    if not hasattr(mechanism, "rdp"):
        raise UnsupportedMechanismError(
            f"{type(mechanism).__name__} has no rdp(orders) method; RDPAccountant needs a Mechanism"
        )
    curve = np.asarray(mechanism.rdp(orders), dtype=float)
    if curve.shape != orders.shape:
        raise ValueError(f"{mechanism!r}.rdp(orders) returned shape {curve.shape}, expected {orders.shape}")
    if np.any(np.isnan(curve)) or np.any(curve < 0):
        raise ValueError(f"{mechanism!r}.rdp(orders) returned NaN or negative values")
    curve = curve.copy()
    curve.flags.writeable = False
    if key is not None:
        if len(_CURVE_CACHE) >= _CURVE_CACHE_MAX:
            _CURVE_CACHE.pop(next(iter(_CURVE_CACHE)))
        _CURVE_CACHE[key] = curve
    return curve


def _add_scaled(total: np.ndarray, count: int, curve: np.ndarray) -> np.ndarray:
    """``total + count * curve`` rounded up (Mironov 2017, Prop. 1), for any integer count
    (``10**400`` included: positive entries become inf); orders where ``curve`` is exactly 0
    keep ``total`` unchanged, so a zero-cost mechanism composed any number of times costs
    exactly nothing."""
    inc = scale_by_count(count, curve)
    with np.errstate(invalid="ignore", over="ignore"):
        new = round_up(total + inc)
    return np.where(inc == 0.0, total, new)


class RDPAccountant(Accountant):
    """Renyi-DP accountant (Mironov 2017).

    Parameters
    ----------
    orders : array_like of float > 1, optional
        Renyi orders on which curves are tracked. Default :data:`DEFAULT_ORDERS`, a superset of
        dp_accounting's default list.
    warn_at_grid_end : bool
        Emit :class:`OrderGridWarning` when the optimal order is the smallest or largest order of
        the grid (the finding is always recorded in :attr:`at_grid_end`).

    Composition adds curves order by order (Mironov 2017, Prop. 1) and each addition is rounded
    up. ``compose(m, count=k)`` evaluates ``m.rdp(orders)`` once and multiplies it by ``k``.
    """

    name = "rdp"
    label = "RDP"

    def __init__(self, orders=None, *, warn_at_grid_end: bool = True):
        super().__init__()
        if orders is None:
            self.orders = np.array(DEFAULT_ORDERS)
        else:
            self.orders = np.unique(check_orders("orders", orders))
        self.orders.flags.writeable = False
        self.warn_at_grid_end = bool(warn_at_grid_end)
        self._curve = np.zeros(self.orders.shape)
        self._log_good = 0.0  # log(1 - d0): sum count log(1 - delta_i), rounded down
        #: order that attained the last epsilon/delta query, and whether it was a grid end
        self.last_order: float | None = None
        self.at_grid_end: bool = False

    @classmethod
    def quiet(cls, **options) -> RDPAccountant:
        """Without :class:`OrderGridWarning` (recorded in :attr:`at_grid_end` only)."""
        acc = cls(warn_at_grid_end=False, **options)
        acc._quiet = True
        return acc

    # -- composition ---------------------------------------------------------------------
    def _step(self, mechanism):
        """``(curve, delta)``: the mechanism's RDP curve on the grid and delta = 0; for a
        mechanism described only by an (epsilon, delta) statement (``rdp`` all inf and
        ``approx_dp()`` not None) the randomized-response curve of its epsilon and its delta
        (the delta-approximate RDP of the module docstring). A mechanism whose RDP curve is
        infinite for a genuine reason and which states nothing else (e.g. a non-private
        release) is accepted and makes the result inf."""
        curve = _mechanism_curve(mechanism, self.orders)
        if np.all(np.isinf(curve)):
            approx = getattr(mechanism, "approx_dp", None)
            stated = approx() if callable(approx) else None
            if stated is not None:
                eps, dl = (float(v) for v in stated)
                if math.isnan(eps) or eps < 0 or math.isnan(dl) or not 0.0 <= dl <= 1.0:
                    raise ValueError(f"{mechanism!r}.approx_dp() returned ({eps}, {dl}), expected epsilon >= 0 "
                                     "and delta in [0, 1]")
                if eps == 0.0:
                    rr = np.zeros(self.orders.shape)
                else:
                    rr = round_up(randomized_response_rdp(eps, self.orders)) if math.isfinite(eps) \
                        else np.full(self.orders.shape, math.inf)
                return rr, dl
        return curve, 0.0

    def _add(self, mechanism, step, count: int) -> bool:
        curve, dl = step
        self._curve = _add_scaled(self._curve, count, curve)
        if dl > 0.0:
            loss = math.inf if dl >= 1.0 else -math.log1p(-dl)  # -log(1 - delta) > 0
            if loss > 0.0:
                loss = float(scale_by_count(count, round_up(loss, ulps=2)))
                self._log_good = round_down(self._log_good - loss)
            else:  # delta below the float resolution of log1p: 1 - (1 - delta)^count <= count delta
                self._log_good = round_down(self._log_good - float(scale_by_count(count, dl)))
        return True

    @property
    def _delta_sum(self) -> float:
        """d0 = 1 - prod(1 - delta_i)^count_i, rounded up (0 when no (epsilon, delta) step)."""
        if self._log_good == 0.0:
            return 0.0
        return min(1.0, round_up(-math.expm1(self._log_good)))

    @property
    def approx_delta(self) -> float:
        """d0 = 1 - prod(1 - delta_i) over the composed (epsilon, delta) steps (rounded up, at most
        1): the mass of the "bad" event, combined exactly with every conversion's delta (module
        docstring)."""
        return self._delta_sum

    def approximate_rdp_curve(self) -> tuple[np.ndarray, float]:
        """``(curve, delta)``: the composition is delta-approximately RDP with this curve
        (Bun & Steinke 2016, Sec. 8); ``delta = 0`` means the curve is a plain RDP bound."""
        return self._curve.copy(), self._delta_sum

    # -- queries -------------------------------------------------------------------------
    def rdp_curve(self, orders=None) -> np.ndarray:
        """The composed RDP curve on ``orders`` (default: the accountant's grid); ``inf``
        everywhere once an (epsilon, delta) step with delta > 0 was composed (no RDP guarantee
        then: see :meth:`approximate_rdp_curve`)."""
        if orders is None:
            if self._delta_sum > 0.0:
                return np.full(self.orders.shape, math.inf)
            return self._curve.copy()
        orders = check_orders("orders", orders)
        out = np.zeros(orders.shape)
        for mech, count in self._events:
            out = _add_scaled(out, count, _mechanism_curve(mech, orders))
        return out

    def _record(self, order: float, value: float, trivial: bool, stacklevel: int) -> None:
        self.last_order = order
        # alpha = inf (pure DP) is the true end of the order range: nothing to extend there;
        # otherwise the ends are the smallest and the largest FINITE orders
        finite = self.orders[np.isfinite(self.orders)]
        at_end = (finite.size > 1 and not trivial and math.isfinite(order)
                  and (order == finite[0] or order == finite[-1]))
        self.at_grid_end = bool(at_end)
        if at_end and self.warn_at_grid_end:
            warnings.warn(
                f"RDPAccountant: the optimal order {order:g} is at the end of the order grid "
                f"[{finite[0]:g}, {finite[-1]:g}]; extend the grid for a tighter bound",
                OrderGridWarning,
                stacklevel=stacklevel,
            )

    def _epsilon_and_order(self, delta, stacklevel: int) -> tuple[float, float]:
        delta = check_delta("delta", delta)
        if self._log_good < 0.0:
            # the conversion gets what the (epsilon, delta) steps leave (module docstring):
            # 1 - (1 - delta)/(1 - d0) = -expm1(log(1 - delta) - log(1 - d0)), rounded down
            with np.errstate(over="ignore"):
                rest = round_down(-math.expm1(math.log1p(-delta) - self._log_good)) if \
                    self._log_good > -math.inf else -math.inf
            if not rest > 0.0:  # nothing left for the conversion: no guarantee (as rdp_to_dp on an inf curve)
                order = float(self.orders[0])
                self._record(order, math.inf, trivial=True, stacklevel=stacklevel)
                return math.inf, order
            delta = rest
        eps, order = rdp_to_dp(self.orders, self._curve, delta)
        self._record(order, eps, trivial=(eps == 0.0 or math.isinf(eps)), stacklevel=stacklevel)
        return eps, order

    def _delta_and_order(self, epsilon, stacklevel: int) -> tuple[float, float]:
        epsilon = check_epsilon("epsilon", epsilon)
        d, order = rdp_to_delta(self.orders, self._curve, epsilon)
        self._record(order, d, trivial=(d == 0.0 or d >= 1.0), stacklevel=stacklevel)
        if self._log_good < 0.0:
            # 1 - (1 - d0)(1 - d) (module docstring), rounded up
            d = 1.0 if d >= 1.0 else min(1.0, round_up(-math.expm1(self._log_good + math.log1p(-d))))
        return d, order

    def epsilon_and_order(self, delta) -> tuple[float, float]:
        """(epsilon, order): the best [Balle et al. 2020, Thm. 21] conversion over the grid
        (see :func:`~dpaudit.accounting.conversions.rdp_to_dp`), epsilon rounded up."""
        return self._epsilon_and_order(delta, stacklevel=4)

    def epsilon(self, delta) -> float:
        """Upper bound on epsilon at ``delta`` (``inf`` when the curve is infinite everywhere)."""
        return self._epsilon_and_order(delta, stacklevel=4)[0]

    def delta_and_order(self, epsilon) -> tuple[float, float]:
        """(delta, order) from :func:`~dpaudit.accounting.conversions.rdp_to_delta`."""
        return self._delta_and_order(epsilon, stacklevel=4)

    def delta(self, epsilon) -> float:
        """Upper bound on delta at ``epsilon`` (at most 1)."""
        return self._delta_and_order(epsilon, stacklevel=4)[0]

    def epsilon_details(self, delta) -> dict:
        eps, order = self.epsilon_and_order(delta)
        return {"epsilon": eps, "order": order, "at_grid_end": self.at_grid_end,
                "approx_delta": self._delta_sum}

    def __repr__(self) -> str:
        return f"RDPAccountant({len(self._events)} events, {self.orders.size} orders)"
