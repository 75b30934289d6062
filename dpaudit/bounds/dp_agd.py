"""DP-AGD: the zCDP budget, per-step charges and a budget filter (Lee & Kifer 2018).

References
----------
Lee & Kifer, "Concentrated differentially private gradient descent with adaptive
per-iteration privacy budget", KDD 2018, arXiv:1808.09501: eq. (5) (total budget),
Algorithm 2 (DP-AGD), GradAvg (Section 4), NoisyMax step-size selection.
Bun & Steinke, "Concentrated differential privacy", TCC 2016 (BS16): Prop. 1.3 / Lemma 3.5
(rho-zCDP => (rho + 2 sqrt(rho log(1/delta)), delta)-DP), Prop. 1.4 (eps-DP => eps^2/2-zCDP),
Lemma 2.3 (additive composition).
Dwork & Roth, "The algorithmic foundations of differential privacy", 2014, Claim 3.9
(report-noisy-max with Lap(Delta/eps) is eps-DP when all scores move in the same direction).

Neighbouring relation: DP-AGD's accounting assumes add/remove-one neighbours (the clipped
gradient *sum* has L2 sensitivity C_grad and the clipped loss scores move monotonically by at
most C_obj). Under replace-one both sensitivities double; :func:`noisy_max_charge` takes the
relation explicitly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dpaudit.accounting.conversions import dp_to_zcdp
from dpaudit.core.numeric import count_to_float, round_up
from dpaudit.core.validation import (
    check_count,
    check_delta,
    check_epsilon,
    check_neighbouring,
    check_nonnegative,
    check_positive,
)

__all__ = [
    "dp_agd_budget",
    "DPAGDBudgets",
    "dp_agd_initial_budgets",
    "noisy_max_scale",
    "noisy_max_charge",
    "gradient_noise_sigma",
    "gradavg_charge",
    "gradavg_variance",
    "gradavg",
    "BudgetExceededError",
    "ZCDPFilter",
    "ZCDPFilterBank",
]


def _positive_batch(name: str, x):
    """``x`` as a float (scalar input) or a float array (array input), every entry finite and > 0."""
    if np.ndim(x) == 0:
        return check_positive(name, x)
    arr = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(arr) & (arr > 0)):
        bad = arr[~(np.isfinite(arr) & (arr > 0))].flat[0]
        raise ValueError(f"{name} must be finite and > 0 in every entry, got {bad}")
    return arr


def dp_agd_budget(epsilon: float, delta: float) -> float:
    """Total zCDP budget rho of DP-AGD for a target (epsilon, delta) (Lee & Kifer 2018, eq. 5).

    Eq. (5) asks for the largest rho with ``rho + 2 sqrt(rho log(1/delta)) <= epsilon`` (the
    Bun-Steinke conversion, BS16 Prop. 1.3). Its closed form is

        rho = (sqrt(log(1/delta) + epsilon) - sqrt(log(1/delta)))^2
            = epsilon^2 / (sqrt(log(1/delta) + epsilon) + sqrt(log(1/delta)))^2,

    evaluated in the second (cancellation-free) form. The result is a *budget*: it is rounded
    DOWN, and then stepped down further until the Bun-Steinke conversion evaluated with an
    upward rounding stays ``<= epsilon`` (so ``zcdp_to_dp(rho, delta, method="bs")`` never
    exceeds the target). The Canonne-Kamath-Steinke conversion would allow a larger rho; the
    paper uses the simple bound, and so does this function. This is the accounting layer's
    inverse :func:`dpaudit.accounting.conversions.dp_to_zcdp` with ``method="bs"`` (one home).

    Parameters
    ----------
    epsilon : float
        Target epsilon, >= 0 (``epsilon = 0`` gives ``rho = 0``).
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    float
        rho >= 0.
    """
    epsilon = check_epsilon("epsilon", epsilon)
    delta = check_delta("delta", delta)
    return dp_to_zcdp(epsilon, delta, method="bs")


@dataclass(frozen=True)
class DPAGDBudgets:
    """Initial budgets of DP-AGD (Lee & Kifer 2018, Algorithm 2 inputs).

    Attributes
    ----------
    rho_total : total zCDP budget from eq. (5) (:func:`dp_agd_budget`).
    epsilon_nmax, epsilon_ng : epsilon_tot / (2 splits) each.
    rho_nmax : epsilon_nmax^2 / 2 (the NoisyMax call is epsilon_nmax-DP, BS16 Prop. 1.4).
    rho_ng : zCDP charge of one noisy gradient (see ``calibration``).
    calibration : how rho_ng was obtained.
    """

    rho_total: float
    epsilon_nmax: float
    epsilon_ng: float
    rho_nmax: float
    rho_ng: float
    calibration: str


def dp_agd_initial_budgets(epsilon: float, delta: float, splits: int = 60, *,
                           calibration: str = "classical") -> DPAGDBudgets:
    """Initial per-step budgets of DP-AGD (Lee & Kifer 2018, Algorithm 2).

    ``epsilon_nmax = epsilon_ng = epsilon / (2 splits)`` and ``rho_nmax = epsilon_nmax^2 / 2``.

    ``calibration="classical"`` (default) reproduces the authors' code (ppmlguy/DP-AGD,
    ``algo/agd_rho.py``): the gradient noise is calibrated with the *classical* Gaussian
    mechanism, ``sigma = C_grad sqrt(2 ln(1.25/delta)) / epsilon_ng``, and charged as
    ``rho_ng = C_grad^2 / (2 sigma^2) = epsilon_ng^2 / (4 ln(1.25/delta))``. Whether the paper
    itself converts epsilon_ng this way is unconfirmed; the charge is what the noise costs in
    zCDP either way, so the accounting is valid. ``calibration="pure"`` instead uses the same
    map as for NoisyMax, ``rho_ng = epsilon_ng^2 / 2`` (a larger per-step budget, less noise).

    Budgets are design choices, not guarantees, so they are not rounded; the charge of the
    noise actually added is what the filter must account (:func:`gradient_noise_sigma`).
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta("delta", delta)
    splits = check_count("splits", splits, minimum=1)
    eps_step = epsilon / 2.0 / count_to_float(splits, "up")  # splits may be 10**400
    rho_nmax = eps_step * eps_step / 2.0
    if calibration == "classical":
        rho_ng = eps_step * eps_step / (4.0 * (math.log(1.25) - math.log(delta)))
    elif calibration == "pure":
        rho_ng = rho_nmax
    else:
        raise ValueError(f"calibration must be 'classical' or 'pure', got {calibration!r}")
    return DPAGDBudgets(dp_agd_budget(epsilon, delta), eps_step, eps_step, rho_nmax, rho_ng, calibration)


def gradient_noise_sigma(rho_ng, clip: float):
    """Noise std of the rho_ng-zCDP noisy clipped-gradient sum (Lee & Kifer 2018, Alg. 2 line 6).

    The clipped sum has L2 sensitivity ``clip`` (add/remove); ``N(0, clip^2/(2 rho_ng) I)`` is
    rho_ng-zCDP (BS16 Prop. 1.6). Rounded UP: more noise never costs more than rho_ng.
    Batched: ``rho_ng`` may be an array (one budget per trial); the result then is an array
    (``inf`` where the std leaves the float range).
    """
    rho_ng = _positive_batch("rho_ng", rho_ng)
    clip = check_positive("clip", clip)
    with np.errstate(over="ignore"):
        return round_up(clip / np.sqrt(2.0 * np.asarray(rho_ng, dtype=float)))


def noisy_max_scale(rho_nmax: float, sensitivity: float) -> float:
    """Laplace scale of DP-AGD's NoisyMax with budget rho_nmax (Lee & Kifer 2018, Alg. 2 line 12).

    The paper calls ``NoisyMax(-Omega, C_obj, sqrt(2 rho_nmax))``: Laplace noise of scale
    ``Delta / eps`` with ``eps = sqrt(2 rho_nmax)`` and ``Delta = C_obj``; eps-DP in the
    monotone case (Dwork-Roth Claim 3.9) hence rho_nmax-zCDP (BS16 Prop. 1.4). Rounded UP.
    """
    rho_nmax = check_positive("rho_nmax", rho_nmax)
    sensitivity = check_positive("sensitivity", sensitivity)
    return round_up(sensitivity / math.sqrt(2.0 * rho_nmax))


def noisy_max_charge(scale: float, sensitivity: float, *, neighbouring: str = "add_remove") -> float:
    """zCDP rho charged for one report-noisy-max call with ``Lap(scale)`` noise on each score.

    Each score has sensitivity ``sensitivity`` (C_obj: per-example losses clipped to
    [0, C_obj]). Under ``"add_remove"`` every score moves in the same direction, so
    report-noisy-max is eps-DP with ``eps = sensitivity / scale`` (Dwork-Roth Claim 3.9, the
    monotone case); under ``"replace_one"`` scores can move in opposite directions and
    ``eps = 2 sensitivity / scale``. The charge is ``eps^2 / 2`` (BS16 Prop. 1.4), rounded UP.
    """
    scale = check_positive("scale", scale)
    sensitivity = check_positive("sensitivity", sensitivity)
    check_neighbouring("neighbouring", neighbouring)
    eps = (1.0 if neighbouring == "add_remove" else 2.0) * sensitivity / scale
    return round_up(eps * eps / 2.0)


def _check_gradavg_rhos(rho_old, rho_new):
    rho_old = _positive_batch("rho_old", rho_old)
    rho_new = _positive_batch("rho_new", rho_new)
    if np.shape(rho_old) != np.shape(rho_new):
        raise ValueError(f"rho_new must have the shape of rho_old {np.shape(rho_old)}, got {np.shape(rho_new)}")
    if not np.all(np.asarray(rho_new) > np.asarray(rho_old)):
        raise ValueError(f"rho_new must be > rho_old, got rho_new={rho_new}, rho_old={rho_old}")
    return rho_old, rho_new


def gradavg_charge(rho_old, rho_new):
    """Extra zCDP charge of GradAvg (Lee & Kifer 2018, Alg. 2 line 19): ``rho_new - rho_old``.

    GradAvg draws one fresh measurement at budget ``rho_new - rho_old`` and averages it with
    the previous rho_old measurement; by additive composition (BS16 Lemma 2.3) the pair costs
    rho_new in total. Rounded UP. Batched: arrays of equal shape give an array of charges.
    """
    rho_old, rho_new = _check_gradavg_rhos(rho_old, rho_new)
    return round_up(np.asarray(rho_new, dtype=float) - np.asarray(rho_old, dtype=float))


def gradavg_variance(rho_old: float, rho_new: float, clip: float) -> float | np.ndarray:
    """Per-coordinate variance of GradAvg's combined estimate (Lee & Kifer 2018, Sec. 4).

    With ``g1 = g + N(0, C^2/(2 rho_old))`` and ``g2 = g + N(0, C^2/(2 (rho_new - rho_old)))``,
    ``S = (rho_old g1 + (rho_new - rho_old) g2) / rho_new`` has variance

        (rho_old^2 C^2/(2 rho_old) + (rho_new-rho_old)^2 C^2/(2 (rho_new-rho_old))) / rho_new^2
        = C^2 / (2 rho_new),

    the variance of a single fresh rho_new measurement.
    """
    _check_gradavg_rhos(rho_old, rho_new)
    clip = check_positive("clip", clip)
    return clip**2 / (2.0 * np.asarray(rho_new, dtype=float)) if np.ndim(rho_new) else clip**2 / (2.0 * rho_new)


def gradavg(rho_old, rho_new, g, g_tilde, clip: float, *, rng=None, seed=None):
    """GradAvg (Lee & Kifer 2018, Sec. 4): combine the old noisy gradient with a fresh one.

    Parameters
    ----------
    rho_old, rho_new : float or array
        Budget of the existing measurement ``g_tilde`` and the target budget (> rho_old).
        Batched: arrays of shape ``(trials,)``, one pair per row of ``g``.
    g : array
        The exact clipped-gradient sum (shape ``(dim,)`` or batched ``(trials, dim)``).
    g_tilde : array
        The previous *unnormalised* noisy estimate ``g + N(0, clip^2/(2 rho_old) I)``
        (same shape as ``g``).
    clip : float
        C_grad, the L2 sensitivity of ``g`` (add/remove).
    rng, seed :
        A ``numpy.random.Generator`` or a seed for ``np.random.default_rng``.

    Returns
    -------
    (estimate, charge)
        ``estimate = (rho_old g_tilde + (rho_new - rho_old) g2) / rho_new`` with
        ``g2 = g + N(0, clip^2/(2 (rho_new - rho_old)) I)``, and ``charge`` =
        :func:`gradavg_charge` (rounded up) which the caller must draw from its filter BEFORE
        releasing the estimate.

    Numerics: ``extra g2`` is drawn as ``extra g + N(0, extra clip^2 / 2)`` (the same law), with
    the std ``clip sqrt(extra / 2)`` rounded up; the std of ``g2`` itself, ``clip / sqrt(2 extra)``,
    overflows when the increase ``extra = rho_new - rho_old`` is tiny.
    """
    rho_old, rho_new = _check_gradavg_rhos(rho_old, rho_new)
    clip = check_positive("clip", clip)
    g = np.asarray(g, dtype=float)
    g_tilde = np.asarray(g_tilde, dtype=float)
    if g.shape != g_tilde.shape:
        raise ValueError(f"g_tilde must have the shape of g {g.shape}, got {g_tilde.shape}")
    r_old = np.asarray(rho_old, dtype=float)
    r_new = np.asarray(rho_new, dtype=float)
    if r_old.ndim:
        if g.ndim != 2 or g.shape[0] != r_old.shape[0] or r_old.ndim != 1:
            raise ValueError(f"batched rho_old of shape {r_old.shape} needs g of shape (trials, dim), got {g.shape}")
        r_old, r_new = r_old[:, None], r_new[:, None]
    if rng is None:
        rng = np.random.default_rng(seed)
    extra = r_new - r_old
    std = round_up(clip * np.sqrt(extra / 2.0))
    weighted = r_old * g_tilde + extra * g + rng.standard_normal(g.shape) * std
    return weighted / r_new, gradavg_charge(rho_old, rho_new)


class BudgetExceededError(RuntimeError):
    """Raised by :meth:`ZCDPFilter.charge` when a request would exceed the total budget.

    The filter's state is unchanged when this is raised (the request is refused, not
    partially charged).
    """


def _exact(name: str, x: float) -> Fraction:
    return Fraction(check_nonnegative(name, x))


class ZCDPFilter:
    """A zCDP privacy filter: an adaptive algorithm draws charges from a fixed total rho.

    By additive zCDP composition (BS16 Lemma 2.3), which holds for adaptively chosen
    mechanisms whose budgets depend only on past outputs, an algorithm whose every release is
    charged through this filter *before* it is made is ``total_rho``-zCDP (the DP-AGD
    invariant, Lee & Kifer 2018, Alg. 2). The filter REFUSES every request that would make the
    sum of charges exceed ``total_rho``:

    * :meth:`request` returns ``False`` and leaves the state unchanged;
    * :meth:`charge` raises :class:`BudgetExceededError` and leaves the state unchanged.

    Floating-point safety: charges are accumulated EXACTLY (as rationals, every float being a
    dyadic rational), and compared exactly with ``total_rho``, so no sequence of requests can
    make the true sum exceed the total through rounding. The reported :attr:`spent` is rounded
    up and :attr:`remaining` rounded down (``request(f.remaining)`` always succeeds), and
    ``spent <= total_rho`` always holds.
    """

    def __init__(self, total_rho: float):
        self._total_float = check_positive("total_rho", total_rho)
        self._total = Fraction(self._total_float)
        self._spent = Fraction(0)
        self._history: list[float] = []

    @classmethod
    def from_dp(cls, epsilon: float, delta: float) -> ZCDPFilter:
        """A filter with the DP-AGD budget :func:`dp_agd_budget` (eq. 5) for (epsilon, delta)."""
        return cls(dp_agd_budget(epsilon, delta))

    @property
    def total(self) -> float:
        return self._total_float

    @property
    def spent(self) -> float:
        """Sum of accepted charges, rounded up to a float (never above :attr:`total`)."""
        f = float(self._spent)
        if Fraction(f) < self._spent:
            f = math.nextafter(f, math.inf)
        return f

    @property
    def remaining(self) -> float:
        """Exact remaining budget rounded down to a float (>= 0)."""
        rem = self._total - self._spent
        f = float(rem)
        if Fraction(f) > rem:
            f = math.nextafter(f, 0.0)
        return f

    @property
    def exhausted(self) -> bool:
        """True when nothing positive can be charged any more (the exact remainder is 0)."""
        return self._spent >= self._total

    @property
    def history(self) -> tuple[float, ...]:
        """The accepted charges, in order."""
        return tuple(self._history)

    def can_afford(self, rho: float) -> bool:
        """Whether :meth:`request` would accept ``rho`` (no state change)."""
        return self._spent + _exact("rho", rho) <= self._total

    def request(self, rho: float) -> bool:
        """Charge ``rho`` (>= 0, finite) if it fits in the remaining budget; return whether it did."""
        r = _exact("rho", rho)
        if self._spent + r > self._total:
            return False
        self._spent += r
        self._history.append(float(rho))
        return True

    def charge(self, rho: float) -> float:
        """Charge ``rho`` or raise :class:`BudgetExceededError`; returns the remaining budget."""
        if not self.request(rho):
            raise BudgetExceededError(
                f"charge of rho={float(rho)!r} refused: remaining budget {self.remaining!r} "
                f"of total {self._total_float!r}")
        return self.remaining

    def __repr__(self) -> str:
        return f"ZCDPFilter(total_rho={self._total_float!r}, spent={self.spent!r})"



class ZCDPFilterBank:
    """One :class:`ZCDPFilter` per trial, for optimizers batched over independent trials.

    Every trial's charges go through its own :class:`ZCDPFilter`, so the acceptance rule is
    the filter's (exact rational sum compared with the total, BS16 Lemma 2.3 composition) --
    there is no second, vectorised rule to keep in agreement with it.
    """

    def __init__(self, total_rho: float, trials: int):
        trials = check_count("trials", trials, minimum=1)
        self._filters = [ZCDPFilter(total_rho) for _ in range(trials)]

    def __len__(self) -> int:
        return len(self._filters)

    def __getitem__(self, k: int) -> ZCDPFilter:
        return self._filters[k]

    @property
    def total(self) -> float:
        return self._filters[0].total

    def request(self, idx, charges) -> np.ndarray:
        """Charge ``charges[j]`` (or one scalar charge) to trial ``idx[j]``'s filter where it fits.

        Returns the boolean mask of the accepted requests; refused trials are unchanged.
        """
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        charges = np.broadcast_to(np.asarray(charges, dtype=float), idx.shape)
        return np.fromiter((self._filters[k].request(float(c)) for k, c in zip(idx, charges)),
                           dtype=bool, count=idx.size)

    @property
    def spent(self) -> np.ndarray:
        """Per trial, the exact sum of accepted charges rounded up (never above :attr:`total`)."""
        return np.array([f.spent for f in self._filters])

    @property
    def remaining(self) -> np.ndarray:
        """Per trial, the exact remaining budget rounded down (>= 0)."""
        return np.array([f.remaining for f in self._filters])

    def histories(self) -> list[list[float]]:
        """Per trial, the accepted charges in order."""
        return [list(f.history) for f in self._filters]
