"""Closed-form accountants: the exact composition where it is known, and pure-DP basic composition.

:class:`ExactAccountant` (registry name ``"exact"``) composes steps whose dominating pair is
*attained* (``privacy_loss().exact``, or its upper pair is one of its attained lower candidates:
the worst case of the class the mechanism describes) and whose composition has a closed form; it
refuses everything else with :class:`~dpaudit.core.validation.UnsupportedMechanismError` (use the
PLD accountant, which brackets any composition). What it composes, in each direction (ADD and
REMOVE neighbours; the answer is the larger curve):

* a *core*, one of
  - unsampled Gaussians, any counts: one Gaussian with mu^2 = sum count (sensitivity/sigma)^2
    (Dong, Roth, Su 2019, Cor. 3.3; mu^2 summed exactly), whose curve is Balle & Wang (2018,
    Thm. 8), certified to about an ulp by :mod:`dpaudit.accounting.gaussian_profile`;
  - k steps of one pure-DP pair (randomized response with eps: ``PureDP``, the finite part of
    ``ApproxDP``): the optimal composition of Kairouz, Oh, Viswanath (2015, Thm. 3.3),
    ``delta_k(e) = sum_i C(k, i) p^(k-i) (1-p)^i (1 - e^(e - (k - 2i) eps))_+``, p = e^eps/(1 +
    e^eps), summed in log space (k <= :data:`MAX_RR_COUNT`);
  - one step of any other attained pair (Laplace, discrete Laplace, a Poisson-sampled Gaussian,
    ...), from its own curve;
* times *one-atom factors*: steps whose pair has P-mass pi at +inf and 1 - pi at one finite
  loss a (a non-private release: pi = 1; an (0, delta) statement: a = 0, pi = delta; a
  non-private release sampled at rate q: ADD a = -log(1 - q), pi = 0 and REMOVE a = log(1 - q),
  pi = q, see :mod:`dpaudit.mechanisms.nonprivate`). By the composition identity
  H_{X x C}(x) = E_X[H_C(x e^{-L_X})] (Balle, Barthe, Gaboardi 2018; Zhu, Dong, Wang 2022) such
  factors compose into one with p = prod (1 - pi_i), a = sum a_i, and
  ``delta(e) = 1 - p (1 - delta_core(e - a))``, exactly (the core's curve at a negative
  argument from ``delta(t) = 1 - e^t + e^t delta_rev(-t)``).

Rounding (the one rule of this module): every curve value is an upper bound (evaluation error
bounds added, then :func:`~dpaudit.core.numeric.round_up`; p rounded down), and epsilon(delta)
is the smallest float at which the upper curve was evaluated and met delta (a bracketed bisection,
:func:`dpaudit.core.roots.smallest_true`; the Gaussian core alone: the certified root of
:func:`dpaudit.accounting.gaussian_profile.epsilon_bounds`). So ``epsilon(delta)`` is an upper
bound within a few ulps of the exact value, never below it. :func:`exact_epsilon` is this
accountant's epsilon (``None`` where it refuses), used by calibration, the CLI, reports and the
testing helpers.

:class:`PureDPAccountant` (``"pure"``) is basic composition of pure DP (Dwork, McSherry, Nissim,
Smith 2006; Dwork & Roth 2014, Thm. 3.16): epsilon = sum count * pure_epsilon (rounded up),
whatever delta. Poisson sampling is amplified through the mechanisms' ``pure_epsilon()``
(Balle et al. 2018, Thm. 8); sampling without replacement is not (its ``pure_epsilon`` is the
base's), and composing such a step warns (:class:`~dpaudit.accounting.base.NoAmplificationWarning`).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy import special

from dpaudit.accounting import gaussian_profile
from dpaudit.accounting.base import Accountant, non_private_step, subsample_of
from dpaudit.core.numeric import round_down, round_up, scale_by_count
from dpaudit.core.roots import bracket_up, smallest_true
from dpaudit.core.validation import UnsupportedMechanismError, check_count, check_delta, check_epsilon

__all__ = ["ExactAccountant", "PureDPAccountant", "exact_epsilon", "MAX_RR_COUNT"]

#: largest count of one pure-DP pair composed by the closed form (a sum of count + 1 terms)
MAX_RR_COUNT = 10**6
_EPS = float(np.finfo(float).eps)
_FMAX = 1.7976931348623157e308
#: relative tolerance when recognising a randomized-response pair from its atoms
_RR_TOL = 1e-12


def _attained(loss) -> bool:
    """The step's upper pairs are its own (``exact``) or one of its attained candidates."""
    if loss.exact:
        return True
    return bool(loss.lower) and loss.lower[0][0] is loss.upper[0] and loss.lower[0][1] is loss.upper[1]


def _one_atom(pair):
    """``(p, a)`` for a pair whose P-mass is at +inf and at one finite loss a (P-mass p there);
    ``(0, 0)`` for the non-private pair; ``None`` otherwise."""
    if pair.continuous:
        return None
    losses, _, pm = pair.atoms()
    if losses.size == 0:
        return (0.0, 0.0) if pair.inf_mass >= 1.0 or not pair.has_finite else None
    if losses.size != 1:
        return None
    return float(pm[0]), float(losses[0])


def _rr(pair):
    """``(eps, inf_mass)`` for a symmetric randomized-response pair with an atom at +inf (the
    (eps, delta)-DP pair of Kairouz et al. 2015), else ``None``."""
    if pair.continuous:
        return None
    losses, _, pm = pair.atoms()
    if losses.size != 2 or not losses[0] == -losses[1] or not losses[1] > 0:
        return None
    eps, rest = float(losses[1]), 1.0 - float(pair.inf_mass)
    p_hi = rest / (1.0 + math.exp(-eps)) if eps < 700 else rest
    p_lo = rest - p_hi
    if abs(pm[1] - p_hi) > _RR_TOL * rest or abs(pm[0] - p_lo) > _RR_TOL * rest + 1e-300:
        return None
    if abs(pair.minf_mass - pair.inf_mass) > _RR_TOL:
        return None
    return eps, float(pair.inf_mass)


def _rr_log_terms(eps: float, k: int):
    """(log weights, losses) of the k-fold randomized-response pair: i outcomes at -eps."""
    i = np.arange(k + 1, dtype=float)
    log_p = -float(np.logaddexp(0.0, -eps))  # log(e^eps/(1 + e^eps))
    log_1p = -float(np.logaddexp(0.0, eps))
    log_c = special.gammaln(k + 1.0) - special.gammaln(i + 1.0) - special.gammaln(k - i + 1.0)
    return log_c + (k - i) * log_p + i * log_1p, (k - 2.0 * i) * eps


class _RRCore:
    """k steps of randomized response with eps (KOV 2015, Thm. 3.3)."""

    def __init__(self, eps: float, k: int):
        self.eps, self.k = eps, k
        self._terms: tuple[np.ndarray, np.ndarray] | None = None
        # relative error of each term: log C(k, i) <= k log 2 and the two log-probabilities, each
        # evaluated to a few ulps of its size; 64 ulps of the largest log (never below 1e-14)
        scale = k * (math.log(2.0) + abs(math.log1p(math.exp(-eps))) + eps) + 10.0
        self.rel = 64.0 * _EPS * scale + 1e-14

    def delta(self, t: float) -> float:
        terms = self._terms
        if terms is None:
            terms = self._terms = _rr_log_terms(self.eps, self.k)
        log_w, losses = terms
        keep = losses > t
        if not np.any(keep):
            return 0.0
        with np.errstate(divide="ignore", over="ignore", under="ignore"):
            logs = log_w[keep] + np.log(-np.expm1(np.minimum(t - losses[keep], 0.0)))
        val = float(np.exp(special.logsumexp(logs)))
        return min(1.0, round_up(val * (1.0 + self.rel)))


class _PairCore:
    """One step of an attained pair (per direction), from its curve and error bound."""

    def __init__(self, pairs):
        self.pairs = pairs

    def delta(self, t: float, direction: int) -> float:
        val, err = self.pairs[direction].delta(t)
        return min(1.0, round_up(float(val[0]) + float(err[0])))


def _gaussian_delta_up(mu2: Fraction, t: float) -> float:
    """Upper bound on the Gaussian curve at any real t (t < 0 from the symmetry of the pair:
    delta(t) = 1 - e^t + e^t delta(-t))."""
    if t >= 0.0:
        return gaussian_profile.delta_bounds(mu2, t)[1]
    if t < -745.0:
        return 1.0
    d = gaussian_profile.delta_bounds(mu2, -t)[1]
    return min(1.0, round_up(-math.expm1(t) + math.exp(t) * d))


class ExactAccountant(Accountant):
    """The exact composition where a closed form is known (see the module docstring); refuses
    the rest with :class:`~dpaudit.core.validation.UnsupportedMechanismError`.

    ``epsilon(delta)`` and ``delta(epsilon)`` are certified upper bounds within a few ulps of the
    exact values. A non-private step makes both ``inf`` / 1. Subsampled steps are composed
    exactly or refused, never charged as unsampled (``amplifies_subsampling``).
    """

    name = "exact"
    label = "exact (closed form)"
    amplifies_subsampling = True

    def __init__(self):
        super().__init__()
        self._gauss: list[tuple[float, float, int]] = []
        self._core = None  # None | ("rr", eps, count) | ("pair", loss)
        self._log_p = [0.0, 0.0]  # per direction (add, remove): sum count log p of the factors
        self._shift = [0.0, 0.0]  # per direction: sum count a of the factors
        self._nonprivate = False
        self._count = 1
        self._cache: dict = {}

    def compose(self, mechanism, count=1) -> ExactAccountant:
        self._count = check_count("count", count)
        return super().compose(mechanism, count)

    # -- composition -------------------------------------------------------------------------
    def _step(self, mechanism):
        method = getattr(mechanism, "privacy_loss", None)
        loss = method() if callable(method) else None
        what = mechanism.describe() if hasattr(mechanism, "describe") else repr(mechanism)
        if loss is None:
            raise UnsupportedMechanismError(f"ExactAccountant: {what} has no privacy-loss pair; use PLDAccountant")
        if loss.releases_nothing:
            return ("nothing",)
        if all(pair.inf_mass >= 1.0 for pair in loss.upper):
            return ("nonprivate",)
        if loss.gaussian is not None:
            if self._core is not None:
                raise UnsupportedMechanismError(
                    f"ExactAccountant: no closed form for a Gaussian composed with {self._describe_core()}; "
                    "use PLDAccountant")
            return ("gauss",) + tuple(float(v) for v in loss.gaussian)
        if not _attained(loss):
            raise UnsupportedMechanismError(
                f"ExactAccountant: the pair of {what} is a dominating pair only (not attained), so its composition "
                "has no exact value here; use PLDAccountant (which brackets it)")
        atoms = [_one_atom(pair) for pair in loss.upper]
        if all(a is not None for a in atoms):
            return ("factor", atoms)
        rr = [_rr(pair) for pair in loss.upper]
        if rr[0] is not None and rr[0] == rr[1]:
            eps, pi = rr[0]
            core = self._core
            if self._gauss or (core is not None and not (core[0] == "rr" and core[1] == eps)):
                raise UnsupportedMechanismError(
                    f"ExactAccountant: no closed form for randomized response with eps = {eps:g} composed with "
                    f"{self._describe_core()}; use PLDAccountant")
            total = self._count + (core[2] if core is not None else 0)
            if total > MAX_RR_COUNT:
                raise UnsupportedMechanismError(
                    f"ExactAccountant: {total} pure-DP steps exceed the closed form's limit ({MAX_RR_COUNT}); "
                    "use PLDAccountant")
            factor = (1.0 - pi, 0.0) if pi > 0.0 else None
            return ("rr", eps, factor)
        if self._gauss or self._core is not None or self._count > 1:
            raise UnsupportedMechanismError(
                f"ExactAccountant: no closed form for {self._count} step(s) of {what}"
                + (f" composed with {self._describe_core()}" if (self._gauss or self._core) else "")
                + "; use PLDAccountant")
        return ("pair", loss)

    def _describe_core(self) -> str:
        if self._gauss:
            return "Gaussian mechanisms"
        if self._core is None:
            return "nothing"
        if self._core[0] == "rr":
            return f"{self._core[2]} randomized-response step(s) with eps = {self._core[1]:g}"
        return f"one {self._core[1].label} step"

    def _add_factor(self, p: float, a: float, count: int, direction: int) -> None:
        if p <= 0.0:
            self._log_p[direction] = -math.inf
            return
        with np.errstate(over="ignore"):
            lp = float(scale_by_count(count, -math.log(p))) if p < 1.0 else 0.0
            sh = float(count * a) if abs(a) < 1e300 else math.copysign(math.inf, a)
        self._log_p[direction] = round_down(self._log_p[direction] - lp)
        self._shift[direction] = self._shift[direction] + sh

    def _add(self, mechanism, step, count: int) -> bool:
        kind = step[0]
        if kind == "nothing":
            return False
        self._cache = {}
        if kind == "nonprivate":
            self._nonprivate = True
        elif kind == "gauss":
            self._gauss.append((step[1], step[2], count))
        elif kind == "factor":
            for d, (p, a) in enumerate(step[1]):
                self._add_factor(p, a, count, d)
        elif kind == "rr":
            eps, factor = step[1], step[2]
            prev = self._core[2] if self._core is not None else 0
            self._core = ("rr", eps, prev + count)
            if factor is not None:
                for d in (0, 1):
                    self._add_factor(factor[0], factor[1], count, d)
        else:
            self._core = ("pair", step[1])
        return True

    # -- curves ------------------------------------------------------------------------------
    def _mu2(self) -> Fraction:
        if "mu2" not in self._cache:
            self._cache["mu2"] = gaussian_profile.mu_squared(self._gauss)
        return self._cache["mu2"]

    def _core_delta(self, t: float, direction: int) -> float:
        """Upper bound on the core's curve at t (the identity pair when there is none)."""
        if self._gauss:
            return _gaussian_delta_up(self._mu2(), t)
        core = self._core
        if core is None:
            return 0.0 if t >= 0.0 else min(1.0, round_up(-math.expm1(t)))
        if core[0] == "rr":
            key = ("rr", core[1], core[2])
            if key not in self._cache:
                self._cache[key] = _RRCore(core[1], core[2])
            return self._cache[key].delta(t)
        return _PairCore(core[1].upper).delta(t, direction)

    def _delta_up(self, epsilon: float) -> float:
        if self._nonprivate:
            return 1.0
        out = 0.0
        for d in (0, 1):
            log_p = self._log_p[d]
            if log_p == -math.inf:
                return 1.0
            shift = self._shift[d]
            t = epsilon - shift
            if not math.isfinite(t):
                c = 0.0 if t > 0 else 1.0
            else:
                c = self._core_delta(t, d)
            if log_p == 0.0:
                val = c
            else:
                p_lo = round_down(math.exp(log_p))
                val = round_up(1.0 - p_lo * (1.0 - c))
            out = max(out, min(val, 1.0))
            if self._symmetric():
                break  # both directions have the same curve
        return out

    def _symmetric(self) -> bool:
        core_symmetric = self._core is None or self._core[0] == "rr" or self._core[1].symmetric
        return core_symmetric and self._log_p[0] == self._log_p[1] and self._shift[0] == self._shift[1]

    def _only_gaussian(self) -> bool:
        return bool(self._gauss) and self._log_p == [0.0, 0.0] and self._shift == [0.0, 0.0]

    # -- queries -----------------------------------------------------------------------------
    def delta(self, epsilon) -> float:
        """Upper bound on delta(epsilon) of the composition (at most 1; within a few ulps)."""
        epsilon = check_epsilon("epsilon", epsilon)
        if not self._events:
            return 0.0
        return self._delta_up(epsilon)

    def epsilon(self, delta) -> float:
        """Upper bound on epsilon(delta): the smallest float at which the upper curve was
        evaluated and met ``delta`` (``inf`` when none is finite)."""
        delta = check_delta("delta", delta)
        if not self._events:
            return 0.0
        if self._nonprivate:
            return math.inf
        if self._only_gaussian():
            return gaussian_profile.epsilon_bounds(self._mu2(), delta)[1]

        def ok(e: float) -> bool:
            return self._delta_up(e) <= delta

        if ok(0.0):
            return 0.0
        br = bracket_up(ok, 0.0, 1.0, limit=_FMAX, max_steps=1100)
        if br is None:
            return math.inf
        return smallest_true(ok, br.lo, br.hi)

    def epsilon_details(self, delta) -> dict:
        return {"epsilon": self.epsilon(delta), "method": "closed form"}

    def meets(self, epsilon, delta) -> bool:
        """Gaussians only: the certified comparison delta(epsilon) <= delta of
        :func:`dpaudit.accounting.gaussian_profile.delta_at_most`, the test :meth:`epsilon` bisects on
        (so True implies ``epsilon(delta) <= epsilon``), at the cost of one curve evaluation instead
        of a root search; otherwise ``epsilon(delta) <= epsilon``."""
        if self._only_gaussian() and not self._nonprivate:
            epsilon = check_epsilon("epsilon", epsilon)
            delta = check_delta("delta", delta)
            return gaussian_profile.delta_at_most(self._mu2(), epsilon, delta)
        return super().meets(epsilon, delta)

    def __repr__(self) -> str:
        return f"ExactAccountant({len(self._events)} events)"


def exact_epsilon(mechanism, delta: float, count: int = 1) -> float | None:
    """Exact epsilon(delta) of ``count``-fold composition of ``mechanism`` (an upper bound within a
    few ulps), or ``None`` when no closed form is known: :class:`ExactAccountant`'s answer.

    E.g. T Gaussians with noise sigma compose to one with mu^2 = T (sensitivity/sigma)^2 (Balle &
    Wang 2018, Thm. 8); one Laplace release has epsilon(delta) = max(0, eps0 + 2 log(1 - delta));
    k releases of an eps-DP mechanism compose as k randomized responses (Kairouz et al. 2015).
    """
    delta = check_delta("delta", delta)
    count = check_count("count", count, minimum=1)
    try:
        return float(ExactAccountant.quiet().compose(mechanism, count).epsilon(delta))
    except UnsupportedMechanismError:
        return None


class PureDPAccountant(Accountant):
    """Basic composition of pure DP: ``epsilon = sum count * pure_epsilon`` (rounded up), the same
    at every delta (see the module docstring).

    ``delta(epsilon)``: 0 at or above that epsilon, below it the largest delta an eps_total-DP
    mechanism can have, that of randomized response (Kairouz et al. 2015, Thm. 2.1):
    ``(1 - e^(epsilon - eps_total)) / (1 + e^-eps_total)``. Mechanisms without a pure-DP guarantee
    are refused; a non-private step gives ``inf``.
    """

    name = "pure"
    label = "pure DP (basic composition)"
    amplifies_subsampling = True
    #: epsilon does not depend on delta
    needs_delta = False

    def __init__(self):
        super().__init__()
        self.total = 0.0

    @classmethod
    def ignores_subsampling(cls, mechanism) -> bool:
        """Sampling without replacement: the base's pure epsilon (no amplification)."""
        sub = subsample_of(mechanism)
        if sub is None:
            return False
        return float(mechanism.pure_epsilon()) >= float(sub[0].pure_epsilon())

    def _step(self, mechanism) -> float:
        if non_private_step(mechanism) and not math.isfinite(float(mechanism.pure_epsilon())):
            return math.inf
        method = getattr(mechanism, "pure_epsilon", None)
        eps = float(method()) if callable(method) else math.inf
        if math.isnan(eps) or eps < 0:
            raise ValueError(f"{mechanism!r}.pure_epsilon() returned {eps}, expected epsilon >= 0")
        if math.isinf(eps):
            what = mechanism.describe() if hasattr(mechanism, "describe") else repr(mechanism)
            raise UnsupportedMechanismError(f"PureDPAccountant: {what} is not pure DP (pure_epsilon() = inf); use "
                                            "RDPAccountant, PLDAccountant or ExactAccountant")
        return eps

    def _add(self, mechanism, eps: float, count: int) -> bool:
        if eps > 0.0:
            self.total = round_up(self.total + scale_by_count(count, eps))
        return True

    def epsilon(self, delta) -> float:
        """The basic-composition epsilon (independent of ``delta``, which is validated)."""
        check_delta("delta", delta)
        return self.total

    def delta(self, epsilon) -> float:
        epsilon = check_epsilon("epsilon", epsilon)
        total = self.total
        if epsilon >= total:
            return 0.0
        if math.isinf(total):
            return 1.0
        return min(1.0, round_up(-math.expm1(epsilon - total) / (1.0 + math.exp(-total))))

    def epsilon_details(self, delta) -> dict:
        return {"epsilon": self.epsilon(delta), "method": "basic composition"}

    def __repr__(self) -> str:
        return f"PureDPAccountant(epsilon={self.total:g})"
