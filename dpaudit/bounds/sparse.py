"""Calibration and accounting of DP optimisation with sparse gradients (Ghazi et al. 2024).

References
----------
Ghazi, Guzman, Kamath, Kumar, Manurangsi, "Differentially private optimization with sparse
gradients", NeurIPS 2024, arXiv:2404.10881: the projection mechanism (after
Nikolov-Talwar-Zhang 2013), Gaussian l1-recovery, output perturbation with l_inf projection,
the bias-reduced gradient estimator (Algorithm 3) and DP-SGD with a random stopping time
(Algorithm 4); docs/theorems/sparse.md states what is reproduced.
Dwork & Roth 2014, Thm. A.1 (classical Gaussian calibration, valid for epsilon < 1).
Balle & Wang, "Improving the Gaussian mechanism", ICML 2018, Thm. 8 (exact calibration).
Whitehouse, Ramdas, Rogers, Wu, "Fully-adaptive composition in differential privacy",
ICML 2023 (the privacy filter behind Algorithm 4).

Setting: records z_i in R^d with ||z_i||_2 <= L and ||z_i||_0 <= s (the per-example
gradients); n records; REPLACE-ONE neighbours (the paper's constants imply it). Every claim
returned here is a single (epsilon, delta)-DP statement with ``neighbouring="replace_one"``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from dpaudit.accounting.calibration import calibrate_sigma
from dpaudit.accounting.claim import PrivacyClaim
from dpaudit.core.numeric import count_to_float, next_up, product_ratio, round_up
from dpaudit.core.validation import (
    check_count,
    check_delta,
    check_neighbouring,
    check_positive,
)

__all__ = [
    "SparseCalibration",
    "sparse_mean_sensitivity",
    "projection_mechanism_calibration",
    "l1_recovery_calibration",
    "output_perturbation_calibration",
    "analytic_gaussian_sigma",
    "bias_reduced_level_probabilities",
    "bias_reduced_step_cost",
    "RandomStoppingFilter",
]

_CALIBRATIONS = ("classical", "analytic")


@dataclass(frozen=True)
class SparseCalibration:
    """Noise calibration of one sparse-gradient mechanism.

    Attributes
    ----------
    mechanism : str
        ``"projection"``, ``"l1-recovery"`` or ``"output-perturbation"``.
    noise : str
        ``"laplace"`` (``scale`` is the Laplace scale b, per coordinate) or ``"gaussian"``
        (``scale`` is the standard deviation sigma, per coordinate).
    scale : float
        Noise scale, rounded UP.
    sensitivity : float
        l1 (Laplace) or l2 (Gaussian) sensitivity the scale is calibrated to.
    epsilon, delta : float
        The (epsilon, delta)-DP guarantee (replace-one).
    claim : PrivacyClaim
        The same guarantee as a claim.
    details : dict
        Extra calibration outputs (e.g. ``m`` for l1-recovery) and notes.
    """

    mechanism: str
    noise: str
    scale: float
    sensitivity: float
    epsilon: float
    delta: float
    claim: PrivacyClaim = field(repr=False, compare=False)
    details: dict = field(default_factory=dict, compare=False)

    @property
    def variance(self) -> float:
        """Per-coordinate noise variance (2 b^2 for Laplace, sigma^2 for Gaussian)."""
        return 2.0 * self.scale**2 if self.noise == "laplace" else self.scale**2


def _sqrt_up(k: int) -> float:
    """A float >= sqrt(k) for any integer k >= 0 (k may exceed the float range)."""
    if k < 2**1000:
        return next_up(math.sqrt(count_to_float(k, "up")))
    shift = (k.bit_length() - 200) // 2 * 2  # even: sqrt(k) = sqrt(k >> shift) * 2^(shift/2)
    r = math.isqrt(k >> shift) + 2
    return next_up(math.ldexp(count_to_float(r, "up"), shift // 2))


def _claim(mechanism: str, epsilon: float, delta: float, text: str, details: dict) -> PrivacyClaim:
    return PrivacyClaim.approx_dp(
        epsilon, delta, neighbouring="replace_one",
        description=f"Ghazi et al. 2024 {mechanism}: ({epsilon:g}, {delta:g})-DP, replace-one; {text}",
        source=f"ghazi2024-{mechanism}", details=details)


def sparse_mean_sensitivity(lipschitz: float, sparsity: int, n: int, norm: str = "l2", *,
                            neighbouring: str = "replace_one") -> float:
    """Sensitivity of the mean of n s-sparse vectors of l2 norm <= L (Ghazi et al. 2024, projection mechanism).

    Replacing z_i by z_i' moves the mean by (z_i - z_i')/n, so

    * ``norm="l2"``: ||.||_2 <= (||z_i||_2 + ||z_i'||_2)/n <= 2L/n;
    * ``norm="l1"``: ||z||_1 <= sqrt(s) ||z||_2 for s-sparse z, so ||.||_1 <= 2L sqrt(s)/n;
    * ``norm="linf"``: ||.||_inf <= 2L/n.

    All three are attained (z_i' = -z_i with s equal-magnitude entries). Only
    ``neighbouring="replace_one"`` is defined: the mean has no fixed denominator under
    add/remove. Rounded UP.
    """
    lipschitz = check_positive("lipschitz", lipschitz)
    sparsity = check_count("sparsity", sparsity, minimum=1)
    n = check_count("n", n, minimum=1)
    check_neighbouring("neighbouring", neighbouring)
    if neighbouring != "replace_one":
        raise ValueError("neighbouring must be 'replace_one' for the mean of a fixed-size dataset")
    if norm in ("l2", "linf"):
        return product_ratio([2, lipschitz], [n], "up")
    if norm == "l1":
        return product_ratio([2, lipschitz, _sqrt_up(sparsity)], [n], "up")
    raise ValueError(f"norm must be one of 'l1', 'l2', 'linf', got {norm!r}")


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Smallest sigma with the exact Gaussian delta(epsilon) <= delta (Balle & Wang 2018, Thm. 8).

    The exact accountant's calibration (:func:`dpaudit.accounting.calibration.calibrate_sigma`
    with ``accountant="exact"``, to adjacent floats): the returned sigma was evaluated and meets
    (epsilon, delta). ``inf`` when no sigma up to 1e15 * sensitivity does.
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta("delta", delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    try:
        # (rtol 1e-15: to adjacent floats, as this function always did)
        return calibrate_sigma(epsilon, delta, accountant="exact", sensitivity=sensitivity, rtol=1e-15)
    except ValueError:  # (inputs validated above: no sigma in the search range meets the target)
        return math.inf


def _gaussian_sigma(epsilon: float, delta: float, sensitivity: float, calibration: str,
                    argname: str = "epsilon") -> tuple[float, str]:
    if calibration not in _CALIBRATIONS:
        raise ValueError(f"calibration must be one of {_CALIBRATIONS}, got {calibration!r}")
    if calibration == "classical":
        if not epsilon < 1.0:
            raise ValueError(
                f"{argname} must be < 1 for the classical Gaussian calibration "
                f"(Dwork-Roth Thm. A.1), got {epsilon}; use calibration='analytic'")
        sigma = sensitivity * math.sqrt(2.0 * (math.log(1.25) - math.log(delta))) / epsilon
        return round_up(sigma), "classical sigma = Delta sqrt(2 ln(1.25/delta))/epsilon (valid for epsilon < 1)"
    return analytic_gaussian_sigma(epsilon, delta, sensitivity), "exact Balle-Wang calibration"


def projection_mechanism_calibration(lipschitz: float, sparsity: int, n: int, epsilon: float,
                                     delta: float = 0.0, *, calibration: str = "classical"
                                     ) -> SparseCalibration:
    """Noise of the projection mechanism for the mean of sparse vectors (Ghazi et al. 2024, projection mechanism).

    The output is the Euclidean projection of ``mean + xi`` onto the l1 ball of radius
    ``L sqrt(s)`` (post-processing). Noise:

    * ``delta == 0``: ``xi ~ Lap(b)^d`` with ``b = 2 L sqrt(s) / (n epsilon)`` (l1 sensitivity
      of the mean, :func:`sparse_mean_sensitivity`): epsilon-DP.
    * ``delta > 0``: ``xi ~ N(0, sigma^2 I)`` with l2 sensitivity ``2L/n``;
      ``calibration="classical"`` (the paper's) ``sigma^2 = 8 L^2 ln(1.25/delta)/(n epsilon)^2``,
      valid only for ``epsilon < 1`` (enforced); ``calibration="analytic"`` the smallest sigma
      meeting (epsilon, delta) exactly (Balle-Wang), valid for every epsilon > 0.
    """
    lipschitz = check_positive("lipschitz", lipschitz)
    sparsity = check_count("sparsity", sparsity, minimum=1)
    n = check_count("n", n, minimum=1)
    epsilon = check_positive("epsilon", epsilon)
    if delta == 0.0:
        sens = sparse_mean_sensitivity(lipschitz, sparsity, n, "l1")
        b = round_up(sens / epsilon)
        details = {"noise": "laplace"}
        return SparseCalibration("projection", "laplace", b, sens, epsilon, 0.0,
                                 _claim("projection", epsilon, 0.0, "Laplace noise on the mean", details), details)
    delta = check_delta("delta", delta)
    sens = sparse_mean_sensitivity(lipschitz, sparsity, n, "l2")
    sigma, how = _gaussian_sigma(epsilon, delta, sens, calibration)
    details = {"noise": "gaussian", "calibration": calibration, "note": how}
    return SparseCalibration("projection", "gaussian", sigma, sens, epsilon, delta,
                             _claim("projection", epsilon, delta, f"Gaussian noise on the mean, {how}", details),
                             details)


def l1_recovery_calibration(lipschitz: float, sparsity: int, dim: int, n: int, epsilon: float,
                            delta: float) -> SparseCalibration:
    """Sketch size and noise of Gaussian l1-recovery (Ghazi et al. 2024, Gaussian l1-recovery).

    ``m = ceil(n epsilon sqrt(s ln(d/s) / ln(1/delta)))`` rows of ``A ~ N(0, 1/m)`` (drawn
    independently of the data), ``b = A mean + N(0, sigma^2 I_m)`` with
    ``sigma^2 = 18 L^2 ln(2.5/delta) / (n epsilon)^2``, output ``argmin{||z||_1 : A z = b}``.

    Privacy accounting [constants not confirmed against the paper's printed text]: ``18 ln(2.5/delta) =
    2 ln(1.25/(delta/2)) * 3^2``, i.e. a classical Gaussian mechanism at (epsilon, delta/2)
    for l2 sensitivity ``3L/n = 1.5 (2L/n)``, using ``||A(z_i - z_i')||_2 <= 1.5 ||z_i - z_i'||_2``
    for the 2s-sparse difference; the failure event of that restricted-isometry bound is
    charged to the other delta/2 (the paper's regime conditions on m and d are not verified
    here). The classical calibration requires ``epsilon < 1`` (enforced). Requires ``s < d``.
    """
    lipschitz = check_positive("lipschitz", lipschitz)
    sparsity = check_count("sparsity", sparsity, minimum=1)
    dim = check_count("dim", dim, minimum=2)
    n = check_count("n", n, minimum=1)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta("delta", delta)
    if not sparsity < dim:
        raise ValueError(f"sparsity must be < dim ({dim}) for l1-recovery, got {sparsity}")
    if not epsilon < 1.0:
        raise ValueError(f"epsilon must be < 1 for the classical Gaussian calibration of l1-recovery, got {epsilon}")
    log_ratio = math.log(dim) - math.log(sparsity)  # dim / sparsity may exceed the float range
    root = math.sqrt(count_to_float(sparsity, "up") * log_ratio / (-math.log(delta)))
    m_f = count_to_float(n, "up") * epsilon * root
    m = max(1, math.ceil(m_f)) if math.isfinite(m_f) else max(1, math.ceil(n * Fraction(epsilon) * Fraction(root)))
    sigma = product_ratio([math.sqrt(18.0 * (math.log(2.5) - math.log(delta))), lipschitz], [n, epsilon], "up")
    sens = product_ratio([3, lipschitz], [n], "up")
    details: dict = {"m": m, "noise": "gaussian",
                     "note": "[unconfirmed constants] Gaussian at (epsilon, delta/2), sensitivity 3L/n; "
                             "RIP failure event charged to delta/2"}
    return SparseCalibration("l1-recovery", "gaussian", sigma, sens, epsilon, delta,
                             _claim("l1-recovery", epsilon, delta, details["note"], details), details)


def output_perturbation_calibration(lipschitz: float, n: int, l2: float, epsilon: float,
                                    delta: float = 0.0, *, sparsity: int | None = None,
                                    smoothness: float | None = None,
                                    calibration: str = "classical") -> SparseCalibration:
    """Noise of output perturbation with l_inf projection (Ghazi et al. 2024, output perturbation with l_inf projection).

    The regularised minimiser ``x*_lambda(S) = argmin (1/n) sum f(x; z_i) + (lambda/2)||x||^2``
    is perturbed and then projected in l_inf onto the feasible set (post-processing).

    * ``delta == 0`` (needs ``sparsity`` s and ``smoothness`` H): ``Lap(b)^d`` with
      ``b = (2 sqrt(2 s) L / (lambda n epsilon)) (2H/lambda + 1)`` (l1-sensitivity bound of the
      poster, not re-derived here).
    * ``delta > 0``: ``N(0, sigma^2 I)`` with l2 sensitivity ``2L/(lambda n)``;
      ``"classical"``: ``sigma^2 = 8 L^2 ln(1.25/delta) / (lambda n epsilon)^2`` (epsilon < 1,
      enforced), ``"analytic"``: the exact Balle-Wang calibration.

    ``l2`` is the regularisation strength lambda > 0.
    """
    lipschitz = check_positive("lipschitz", lipschitz)
    n = check_count("n", n, minimum=1)
    lam = check_positive("l2", l2)
    epsilon = check_positive("epsilon", epsilon)
    if delta == 0.0:
        if sparsity is None or smoothness is None:
            raise ValueError("sparsity and smoothness are required for the Laplace (delta = 0) calibration")
        sparsity = check_count("sparsity", sparsity, minimum=1)
        smooth = check_positive("smoothness", smoothness, allow_inf=True)  # inf: no finite scale
        sens = product_ratio([2, _sqrt_up(2 * sparsity), lipschitz, round_up(2.0 * smooth / lam + 1.0)],
                             [lam, n], "up")
        b = round_up(sens / epsilon)
        details = {"noise": "laplace", "note": "l1 sensitivity (2 sqrt(2s) L/(lambda n))(2H/lambda + 1) [paper]"}
        return SparseCalibration("output-perturbation", "laplace", b, sens, epsilon, 0.0,
                                 _claim("output-perturbation", epsilon, 0.0, details["note"], details), details)
    delta = check_delta("delta", delta)
    sens = product_ratio([2, lipschitz], [lam, n], "up")
    sigma, how = _gaussian_sigma(epsilon, delta, sens, calibration)
    details = {"noise": "gaussian", "calibration": calibration, "note": how}
    return SparseCalibration("output-perturbation", "gaussian", sigma, sens, epsilon, delta,
                             _claim("output-perturbation", epsilon, delta,
                                    f"l2 sensitivity 2L/(lambda n), {how}", details), details)


def _levels(n: int) -> int:
    n = check_count("n", n, minimum=4)
    return int(math.floor(math.log2(n))) - 1


def bias_reduced_level_probabilities(n: int) -> np.ndarray:
    """Law of the level N of the bias-reduced estimator (Ghazi et al. 2024, Algorithm 3).

    ``N in {0, ..., M}``, ``M = floor(log2 n) - 1``, ``P[N = k] = 2^-k / (2 (1 - 2^-(M+1)))``
    (so the largest batch ``2^(M+1) <= n``). Whether the paper's support starts at 0 or 1 is
    unconfirmed; with support from 0 the telescoping sum makes the estimator's expectation the
    DP mean estimate at batch size ``2^(M+1)`` (the full batch when n is a power of two).
    Requires n >= 4.
    """
    M = _levels(n)
    k = np.arange(M + 1, dtype=float)
    return np.exp2(-k) / (2.0 * (1.0 - 2.0 ** (-(M + 1))))


def bias_reduced_step_cost(level, n: int, epsilon: float, delta: float):
    """Per-step (epsilon_t, delta_t) of the bias-reduced DP-SGD step at level N_t (Ghazi et al. 2024, Alg. 3).

    ``epsilon_t = (3 2^(N_t+1) + 1) epsilon / (16 n)``, ``delta_t = (3 2^(N_t+1) + 1) delta / (16 n)``
    [unconfirmed, transcription of the paper's Lemma 5.3]: the step's budget (epsilon/8,
    delta/4) is split four ways; the three releases computed on the batch B of size
    ``2^(N_t+1)`` are amplified by subsampling at rate ``2^(N_t+1)/n`` and the single-record
    release at rate ``1/n``. The cost depends only on the public coin N_t. Stated for
    epsilon <= 1 (enforced). ``level`` may be an int or an integer array (vectorised).
    Rounded UP.
    """
    n = check_count("n", n, minimum=4)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta("delta", delta)
    if epsilon > 1.0:
        raise ValueError(f"epsilon must be in (0, 1] for the bias-reduced step cost, got {epsilon}")
    lv = np.asarray(level)
    if lv.dtype.kind not in "iu" and not (lv.dtype.kind == "f" and np.all(np.isfinite(lv)) and np.all(lv == np.round(lv))):
        raise ValueError("level must be an integer (or integer array) in {0, ..., floor(log2 n) - 1}")
    lv = lv.astype(np.int64)
    M = _levels(n)
    if np.any(lv < 0) or np.any(lv > M):
        raise ValueError(f"level must be in {{0, ..., {M}}} (M = floor(log2 n) - 1), got {lv}")
    with np.errstate(over="ignore"):
        factor = 3.0 * np.exp2(lv + 1.0) + 1.0  # 2^(level+1) <= n: may exceed the float range
    n_f = count_to_float(n, "down")
    with np.errstate(over="ignore", invalid="ignore"):
        eps_t = round_up(factor * (epsilon / 16.0) / n_f)
        delta_t = round_up(factor * (delta / 16.0) / n_f)
    return eps_t, delta_t


class RandomStoppingFilter:
    """Stopping rule of DP-SGD with a random stopping time (Ghazi et al. 2024, Alg. 4).

    A fully adaptive privacy filter (Whitehouse et al. 2023) [unconfirmed thresholds]: the
    next step with cost (epsilon_t, delta_t) is allowed only if, counting it,

        sqrt(2 ln(4/delta) sum_s epsilon_s^2) + (1/2) sum_s epsilon_s^2 <= epsilon / 2
        and  sum_s delta_s <= delta / 4.

    Guarantee: Whitehouse et al.'s advanced-composition filter with slack delta' = delta/4 (the
    ``ln(4/delta)``) and approximate-DP budget delta_g = delta/4 is (epsilon/2, delta' + delta_g) =
    (epsilon/2, delta/2)-DP; :meth:`claim` states that (not delta/4, which would omit delta').

    Unlike the paper's printed loop (which checks the sum up to t-1 and so takes one unchecked
    step), this filter checks the step BEFORE it is taken, so every executed step is covered.
    The left-hand side is evaluated with exact-sum accumulation (``math.fsum``) and rounded up
    before comparison, so rounding never admits a step the exact inequality would refuse.
    """

    def __init__(self, epsilon: float, delta: float):
        self.epsilon = check_positive("epsilon", epsilon)
        self.delta = check_delta("delta", delta)
        self._eps2: list[float] = []
        self._deltas: list[float] = []

    @property
    def steps(self) -> int:
        """Number of steps taken (accepted)."""
        return len(self._eps2)

    def _lhs(self, eps2: list[float]) -> float:
        s = math.fsum(eps2)
        return round_up(math.sqrt(2.0 * (math.log(4.0) - math.log(self.delta)) * s) + 0.5 * s)

    @property
    def epsilon_spent(self) -> float:
        """Current value of the epsilon arm's left-hand side (rounded up)."""
        return self._lhs(self._eps2)

    @property
    def delta_spent(self) -> float:
        """Sum of the accepted delta_t (rounded up)."""
        return round_up(math.fsum(self._deltas)) if self._deltas else 0.0

    def allows(self, epsilon_t: float, delta_t: float) -> bool:
        """Whether a step of cost (epsilon_t, delta_t) may be taken (no state change)."""
        e = check_positive("epsilon_t", epsilon_t)
        d = check_positive("delta_t", delta_t)
        ok_eps = self._lhs(self._eps2 + [e * e]) <= self.epsilon / 2.0
        ok_delta = round_up(math.fsum(self._deltas + [d])) <= self.delta / 4.0
        return ok_eps and ok_delta

    def step(self, epsilon_t: float, delta_t: float) -> bool:
        """Take the step (record its cost) if :meth:`allows` it; return whether it was taken."""
        if not self.allows(epsilon_t, delta_t):
            return False
        self._eps2.append(float(epsilon_t) ** 2)
        self._deltas.append(float(delta_t))
        return True

    def claim(self) -> PrivacyClaim:
        """The guarantee of the steps taken so far: (epsilon/2, delta/2)-DP for the SGD phase
        (filter slack delta/4 from the ln(4/delta) term plus the delta/4 budget of the delta arm)."""
        return PrivacyClaim.approx_dp(
            self.epsilon / 2.0, self.delta / 2.0, neighbouring="replace_one",
            description="Ghazi et al. 2024 Alg. 4: random-stopping DP-SGD phase; advanced-composition filter "
                        "(Whitehouse et al. 2023) with thresholds epsilon/2, ln(4/delta), delta/4 gives "
                        "(epsilon/2, delta/2) [unconfirmed step costs]",
            source="ghazi2024-random-stopping", details={"steps": self.steps})

    def __repr__(self) -> str:
        return f"RandomStoppingFilter(epsilon={self.epsilon!r}, delta={self.delta!r}, steps={self.steps})"
