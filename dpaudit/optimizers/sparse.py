"""The sparse-gradient algorithms of Ghazi, Guzman, Kamath, Kumar, Manurangsi (NeurIPS 2024).

"Differentially Private Optimization with Sparse Gradients", arXiv:2404.10881 (the algorithms as named
in the authors' NeurIPS 2024 poster; constants that could not be checked against the paper are marked
[unconfirmed], see docs/theorems/sparse.md).
Noise calibrations and step costs come from ``dpaudit.bounds.sparse`` (replace-one neighbours).

* ``projection`` (the Projection Mechanism, after Nikolov, Talwar, Zhang 2013): mean of the rows z_i
  of X (||z_i||_2 <= L, ||z_i||_0 <= s), plus Laplace (delta = 0) or Gaussian noise, then the
  Euclidean projection onto the l1 ball of radius L sqrt(s).
* ``l1-recovery`` (Gaussian l1-Recovery): b = A mean + N(0, sigma^2 I_m) with A ~ N(0, 1/m)^{m x d}
  drawn independently of the data; output argmin{||z||_1 : A z = b} (basis pursuit,
  ``scipy.optimize.linprog`` inside exact column generation, :func:`basis_pursuit`), trial by trial. If m >= d the equality system is overdetermined and the least-squares solution A^+ b is
  returned instead (post-processing of the same release) -- that is outside the mechanism's regime:
  compressed sensing needs d >> m = n eps sqrt(s ln(d/s) / ln(1/delta)) (e.g. n = 300, eps = 0.5 gives
  m = 208-290 for d = 1e3-1e5; one LP costs about 1 / 3 / 5 CPU-s at d = 1e3 / 1e4 / 1e5 by column
  generation, against 0.4 / 8 / 121 for the full LP, benchmarks/sparse_mean.py).
* ``output-perturbation`` (Output Perturbation with l_inf-Projection): the regularised ERM minimiser
  (solved to high accuracy with L-BFGS; it is the same for every trial, so it is solved once), plus noise, then the l_inf projection onto
  the box X = [-box, box]^d (coordinatewise clipping is an l_inf-nearest point of the box).
* ``bias-reduced-sgd`` (the Subsampled Bias-Reduced Gradient Estimator, Alg. 3, in DP-SGD with a
  random stopping time, Alg. 4): projected SGD with the bias-reduced gradient estimator of
  Algorithm 3 and the random stopping time of Algorithm 4; output the average of the iterates.

Mean-estimation algorithms take the vectors as the rows of X and ignore y. Records that violate
the stated norm / sparsity bounds raise ValueError (never clipped silently). ``noise=False`` switches
every noise draw off (faithfulness tests); the claim is then "no guarantee".
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.core.numeric import TINY, l2_norm, round_up
from dpaudit.core.validation import check_count
from dpaudit.optimizers.base import (
    HyperParameter,
    Optimizer,
    Run,
    check_data,
    check_finite_params,
    make_rng,
    no_guarantee_claim,
)
from dpaudit.optimizers.losses import LIPSCHITZ_LOSS_HP, get_loss
from dpaudit.optimizers.losses import row_norms as _row_norms

__all__ = ["Projection", "L1Recovery", "OutputPerturbation", "BiasReducedSGD", "project_l1_ball",
           "basis_pursuit"]


def project_l1_ball(v: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection of each row of ``v`` onto {z : ||z||_1 <= radius} (Duchi et al. 2008, Fig. 1).

    Rows already inside are returned unchanged; otherwise w = sign(v) max(|v| - theta, 0) with theta the
    threshold making ||w||_1 = radius, found from the sorted magnitudes (batched, no loop over rows).
    """
    v = np.atleast_2d(np.asarray(v, dtype=float))
    a = np.abs(v)
    inside = a.sum(axis=1) <= radius
    u = -np.sort(-a, axis=1)
    css = np.cumsum(u, axis=1) - radius
    j = np.arange(1, v.shape[1] + 1)
    cond = u - css / j > 0
    rho = v.shape[1] - 1 - np.argmax(cond[:, ::-1], axis=1)       # last index where cond holds
    theta = css[np.arange(v.shape[0]), rho] / (rho + 1)
    theta = np.where(inside, 0.0, np.maximum(theta, 0.0))
    return np.sign(v) * np.maximum(a - theta[:, None], 0.0)


#: column-generation rounds of :func:`basis_pursuit` (each adds at least one column, so the loop is finite;
#: this bound only guards against a solver that stops making progress)
BP_MAX_ROUNDS = 200
#: a column prices out when |a_j' y| <= 1 + BP_DUAL_TOL (HiGHS' default dual feasibility tolerance is 1e-7)
BP_DUAL_TOL = 1e-7


def _restricted_bp(A_w: np.ndarray, b: np.ndarray):
    """min 1'(u + v) s.t. A_w (u - v) = b, u, v >= 0 on the working columns (HiGHS): (x_w, y, objective)."""
    from scipy.optimize import linprog
    k = A_w.shape[1]
    res = linprog(np.ones(2 * k), A_eq=np.hstack([A_w, -A_w]), b_eq=b, bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"basis pursuit failed: {res.message}")
    return res.x[:k] - res.x[k:], np.asarray(res.eqlin.marginals, dtype=float), float(res.fun)


def basis_pursuit(A: np.ndarray, b: np.ndarray, *, max_rounds: int = BP_MAX_ROUNDS) -> np.ndarray:
    """argmin ||z||_1 subject to A z = b (A of shape (m, d), m < d), solved exactly by column generation.

    The LP min 1'(u + v) s.t. A(u - v) = b, u, v >= 0 has the dual max b'y s.t. ||A'y||_inf <= 1 (Chen,
    Donoho, Saunders 1998, "Atomic decomposition by basis pursuit", Sec. 3.1). Its solution has at most m
    non-zeros, so it is solved on a working set W of columns (HiGHS): start with the 2m columns most
    correlated with b, solve the restricted LP, price every column with its dual y, and add the columns
    with |a_j'y| > 1 + ``BP_DUAL_TOL`` (the most violated first) until none is left (Dantzig-Wolfe column
    generation; Bertsimas, Tsitsiklis 1997, Sec. 6.1; d <= 4m: all columns at once). At that point y is dual feasible for the full
    problem and the restricted solution, padded with zeros, is optimal for it: the same optimum as the
    full LP, at the cost of restricted LPs of about 2m columns and one product A'y per round (d = 1e5,
    m = 284: about a second instead of two minutes for the full LP).

    The problem is homogeneous in b (the solution for c b is c times the solution for b), so it is
    solved for b / max|b| and rescaled: HiGHS treats values beyond 1e20 as infinite and fails on
    badly scaled right-hand sides (huge noise)."""
    A = np.asarray(A, dtype=float)
    m, d = A.shape
    b = np.asarray(b, dtype=float)
    max_rounds = check_count("max_rounds", max_rounds, minimum=1)
    s = float(np.max(np.abs(b))) if b.size else 0.0
    if s == 0.0:
        return np.zeros(d)
    if not math.isfinite(s):
        raise ValueError("b: basis pursuit needs a finite right-hand side")
    bs = b / s
    if d <= 4 * m:  # small problems: the full LP in one round (column generation would cost more)
        work = np.arange(d)
    else:
        work = np.sort(np.argpartition(-np.abs(A.T @ bs), 2 * m - 1)[:2 * m])
    for _ in range(max_rounds):
        x_w, y, _obj = _restricted_bp(A[:, work], bs)
        corr = np.abs(A.T @ y)
        corr[work] = 0.0  # the working columns are dual feasible by the restricted LP's optimality
        bad = np.flatnonzero(corr > 1.0 + BP_DUAL_TOL)
        if bad.size == 0:
            x = np.zeros(d)
            x[work] = x_w
            return x * s
        add = bad[np.argsort(-corr[bad])[:max(m, 1)]]
        work = np.union1d(work, add)
    raise RuntimeError(f"basis pursuit: column generation did not price out in {max_rounds} rounds")


def _check_sparse_rows(Z: np.ndarray, L: float, s: int) -> None:
    norms = _row_norms(Z)
    if np.any(norms > L * (1 + 1e-12)):
        raise ValueError(f"X: every row must have L2 norm <= lipschitz = {L:g} (max {norms.max():.6g})")
    nnz = np.count_nonzero(Z, axis=1)
    if np.any(nnz > s):
        raise ValueError(f"X: every row must have at most sparsity = {s} non-zeros (max {nnz.max()})")


#: declarations shared by the sparse-gradient algorithms (``_SparseBase``)
_EPSILON = HyperParameter("epsilon", float, 0.5, 0, None, "target epsilon of the release", low_open=True)
_DELTA = HyperParameter("delta", float, 1e-6, 0, 1, "target delta of the release (0: pure DP with Laplace noise)",
                        high_open=True)
_DELTA_POSITIVE = HyperParameter("delta", float, 1e-6, 0, 1, "target delta of the release (approximate DP only)",
                                 low_open=True, high_open=True)
_NOISE = HyperParameter("noise", bool, True, help="add the noise (False: no privacy guarantee, for tests)")
_SPARSITY = HyperParameter("sparsity", int, 5, 1, None, "bound s on the non-zeros of every record (checked)")
_CALIBRATION = HyperParameter("calibration", str, "classical", help="Gaussian noise calibration: 'classical' or "
                              "'analytic' (Balle-Wang)", choices=("classical", "analytic"))
_FEATURE_BOUND = HyperParameter("feature_bound", float, 1.0, 0, None, "bound on every record's L2 norm (checked)",
                                low_open=True)


class _SparseBase(Optimizer):

    @property
    def neighbouring(self) -> str:
        return "replace_one"

    def _check_scale(self, cal, culprits: str) -> None:
        """Refuse a noise scale beyond the float range (the released values would be inf/NaN)."""
        if self.hp["noise"] and not math.isfinite(cal.scale):
            raise ValueError(f"{culprits}: the calibrated noise scale overflows the float range "
                             f"(epsilon={self.hp['epsilon']:g})")

    def _claim_from(self, cal):
        if not self.hp["noise"]:
            return no_guarantee_claim("replace_one", "noise switched off")
        return cal.claim


class Projection(_SparseBase):
    """Projection mechanism for the mean of sparse vectors (Ghazi et al. 2024, Projection Mechanism, after
    Nikolov, Talwar, Zhang 2013)."""

    name = "projection"
    audit_scenario = "mean-estimation"
    hyperparameters = (
        _EPSILON, _DELTA,
        HyperParameter("lipschitz", float, 1.0, 0, None, "bound L on every vector's L2 norm (checked)", low_open=True),
        _SPARSITY, _CALIBRATION, _NOISE,
    )

    def calibration(self, n: int):
        from dpaudit.bounds.sparse import projection_mechanism_calibration
        return projection_mechanism_calibration(self.hp["lipschitz"], self.hp["sparsity"], n, self.hp["epsilon"],
                                                self.hp["delta"], calibration=self.hp["calibration"])

    @property
    def radius(self) -> float:
        return self.hp["lipschitz"] * math.sqrt(self.hp["sparsity"])

    def claim(self, n: int):
        return self._claim_from(self.calibration(check_count("n", n, minimum=1)))

    def run(self, X, y=None, *, trials=1, seed=None, canary_gradient=None) -> Run:
        Z, _ = check_data(X, None, need_y=False)
        self._check_canary(canary_gradient, Z.shape[1])
        trials = check_count("trials", trials, minimum=1)
        _check_sparse_rows(Z, self.hp["lipschitz"], self.hp["sparsity"])
        n, d = Z.shape
        cal = self.calibration(n)
        self._check_scale(cal, "epsilon / lipschitz")
        rng = make_rng(seed)
        mean = Z.mean(axis=0)
        noisy = np.broadcast_to(mean, (trials, d)).copy()
        if self.hp["noise"]:
            if cal.noise == "laplace":
                noisy += rng.laplace(0.0, cal.scale, size=(trials, d))
            else:
                noisy += rng.normal(0.0, cal.scale, size=(trials, d))
        out = project_l1_ball(noisy, self.radius)
        return Run(params=out, claim=self._claim_from(cal),
                   extra={"n": n, "mean": mean, "noise": cal.noise, "noise_scale": cal.scale, "radius": self.radius})


class L1Recovery(_SparseBase):
    """Gaussian l1-recovery (compressed sensing) mean estimation (Ghazi et al. 2024, Gaussian l1-Recovery)."""

    name = "l1-recovery"
    audit_scenario = "mean-estimation"
    audit_dim = property(lambda self: max(20, 4 * int(self.hp.get("sparsity", 5))))  # sparsity < dim
    hyperparameters = (
        _EPSILON, _DELTA_POSITIVE,
        HyperParameter("lipschitz", float, 1.0, 0, None, "bound L on every vector's L2 norm (checked)", low_open=True),
        _SPARSITY, _NOISE,
    )

    def calibration(self, n: int, d: int):
        from dpaudit.bounds.sparse import l1_recovery_calibration
        return l1_recovery_calibration(self.hp["lipschitz"], self.hp["sparsity"], d, n, self.hp["epsilon"],
                                       self.hp["delta"])

    def claim(self, n: int, d: int = 1000):
        """The claim for n records in dimension d (the claim itself does not depend on d)."""
        return self._claim_from(self.calibration(check_count("n", n, minimum=1), d))

    def run(self, X, y=None, *, trials=1, seed=None, canary_gradient=None) -> Run:
        Z, _ = check_data(X, None, need_y=False)
        self._check_canary(canary_gradient, Z.shape[1])
        trials = check_count("trials", trials, minimum=1)
        _check_sparse_rows(Z, self.hp["lipschitz"], self.hp["sparsity"])
        n, d = Z.shape
        cal = self.calibration(n, d)
        if self.hp["noise"] and not math.isfinite(cal.scale):
            raise ValueError(f"epsilon={self.hp['epsilon']:g} with lipschitz={self.hp['lipschitz']:g} gives an "
                             "infinite noise scale")
        m = int(cal.details["m"])
        rng = make_rng(seed)
        mean = Z.mean(axis=0)
        out = np.empty((trials, d))
        # one linear programme per trial (the LP solver is not batched)
        for t in range(trials):
            A = rng.normal(0.0, 1.0 / math.sqrt(m), size=(m, d))
            b = A @ mean
            if self.hp["noise"]:
                b = b + rng.normal(0.0, cal.scale, size=m)
            out[t] = basis_pursuit(A, b) if m < d else np.linalg.lstsq(A, b, rcond=None)[0]
        return Run(params=out, claim=self._claim_from(cal),
                   extra={"n": n, "mean": mean, "m": m, "noise_scale": cal.scale})


class OutputPerturbation(_SparseBase):
    """Output perturbation of regularised ERM with l_inf projection onto a box (Ghazi et al. 2024, Output
    Perturbation with l_inf-Projection)."""

    name = "output-perturbation"
    hyperparameters = (
        LIPSCHITZ_LOSS_HP,
        HyperParameter("l2", float, 0.1, 0, None, "L2 regularisation (the strong convexity of the ERM)",
                       low_open=True),
        _EPSILON, _DELTA, _FEATURE_BOUND,
        HyperParameter("box", float, 10.0, 0, math.inf, "half-width of the l_inf box [-box, box]^d the output is "
                       "projected on (inf: no projection)", low_open=True, high_open=False),
        HyperParameter("sparsity", int, None, 1, None, "bound on the non-zeros of every record (None: dense "
                       "calibration)", optional=True),
        _CALIBRATION, _NOISE,
    )

    def _validate(self):
        self.loss = get_loss(self.hp["loss"])
        if not math.isfinite(self.loss.derivative_bound):
            raise ValueError("loss must be Lipschitz ('logistic' or 'hinge') for output perturbation")

    @property
    def lipschitz(self) -> float:
        return self.hp["feature_bound"] * self.loss.derivative_bound

    @property
    def smoothness(self) -> float:
        """feature_bound^2 times the loss curvature bound, rounded up (never 0 by underflow)."""
        return max(round_up((self.hp["feature_bound"] * self.hp["feature_bound"]) * self.loss.curvature_bound), TINY)

    def calibration(self, n: int):
        from dpaudit.bounds.sparse import output_perturbation_calibration
        return output_perturbation_calibration(self.lipschitz, n, self.hp["l2"], self.hp["epsilon"], self.hp["delta"],
                                               sparsity=self.hp["sparsity"], smoothness=self.smoothness,
                                               calibration=self.hp["calibration"])

    def claim(self, n: int):
        return self._claim_from(self.calibration(check_count("n", n, minimum=1)))

    def solve_erm(self, X, y) -> np.ndarray:
        """argmin_theta (1/n) sum_i l(x_i . theta; y_i) + (l2/2) ||theta||^2 (L-BFGS, gradient tolerance 1e-12)."""
        from scipy.optimize import minimize
        n, d = X.shape
        lam = self.hp["l2"]

        def fun(theta):
            z = X @ theta
            val = self.loss.value(z, y).mean() + 0.5 * lam * theta @ theta
            grad = X.T @ self.loss.derivative(z, y) / n + lam * theta
            return val, grad

        # huge records overflow the loss (inf, or inf - inf); a non-finite minimiser is refused below
        with np.errstate(over="ignore", invalid="ignore"):
            res = minimize(fun, np.zeros(d), jac=True, method="L-BFGS-B",
                           options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000})
        return check_finite_params(res.x, "output-perturbation (ERM solve)", ("feature_bound", "l2", "X"))

    def run(self, X, y, *, trials=1, seed=None, canary_gradient=None) -> Run:
        X, y = check_data(X, y)
        self._check_canary(canary_gradient, X.shape[1])
        y = self.loss.prepare_labels(y)
        trials = check_count("trials", trials, minimum=1)
        norms = _row_norms(X)
        if np.any(norms > self.hp["feature_bound"] * (1 + 1e-12)):
            raise ValueError(f"X: every record must have L2 norm <= feature_bound = {self.hp['feature_bound']:g}")
        n, d = X.shape
        cal = self.calibration(n)
        self._check_scale(cal, "epsilon / l2 / feature_bound")
        theta_star = self.solve_erm(X, y)
        rng = make_rng(seed)
        noisy = np.broadcast_to(theta_star, (trials, d)).copy()
        if self.hp["noise"]:
            if cal.noise == "laplace":
                noisy += rng.laplace(0.0, cal.scale, size=(trials, d))
            else:
                noisy += rng.normal(0.0, cal.scale, size=(trials, d))
        box = self.hp["box"]
        out = noisy if math.isinf(box) else np.clip(noisy, -box, box)
        check_finite_params(out, self.name, ("epsilon", "l2", "feature_bound"))
        return Run(params=out, claim=self._claim_from(cal),
                   extra={"n": n, "erm": theta_star, "noise": cal.noise, "noise_scale": cal.scale})


class BiasReducedSGD(_SparseBase):
    """Projected SGD with the bias-reduced estimator (Alg. 3) and random stopping (Alg. 4) of Ghazi et al. 2024.

    One step, per trial: draw the level N (``bias_reduced_level_probabilities``), a uniform batch B of
    2^(N+1) records split into halves O, E, and one uniform record i; each of the four gradient means
    (over B, O, E and {i}) is released by the projection mechanism at budget (epsilon/32, delta/16)
    (Gaussian noise calibrated by ``projection_mechanism_calibration`` for the set's size, then the
    l1-ball projection of radius L sqrt(s)); G = (G_B - (G_O + G_E)/2) / p_N + G_i;
    x <- Proj_ball(x - step_size G). Before every step the (vectorised) random-stopping filter with the
    thresholds of ``dpaudit.bounds.sparse.RandomStoppingFilter`` checks the step's cost
    (``bias_reduced_step_cost``); a trial stops at its first refused step. Output: average of its iterates
    x^0..x^T. ``max_steps`` caps the loop (a trial that reaches it stops early; privacy is unaffected).

    Per-example gradients are l'(x_i . theta) x_i of a linear model; the records must satisfy
    ||x_i|| <= feature_bound and ||x_i||_0 <= sparsity, so gradients are s-sparse with norm <= L =
    feature_bound sup|l'|. White-box canary: ``canary_gradient`` replaces the gradient of record 0 by that
    constant vector (replace-one; it must be s-sparse with norm <= L).

    Claim: (epsilon, delta)-DP (replace-one) as stated by the paper for Algorithm 4; the SGD phase itself is
    covered by the filter (thresholds epsilon/2 with log(4/delta), delta/4: (epsilon/2, delta/2)-DP), the rest of the budget is the
    paper's reserve for private selection. The per-step costs are [unconfirmed]: they follow a third-party transcription
    of the paper's per-step lemma (GitHub Larraguibel/dimma_lib), not the paper's text (docs/theorems/sparse.md).
    """

    name = "bias-reduced-sgd"
    max_canaries = 1
    canary_semantics = "replace"  # canary_gradient replaces record 0's gradient
    hyperparameters = (
        LIPSCHITZ_LOSS_HP,
        HyperParameter("epsilon", float, 0.5, 0, 1, "target epsilon of Algorithm 4 (the paper's range)",
                       low_open=True),
        _DELTA_POSITIVE, _FEATURE_BOUND, _SPARSITY,
        HyperParameter("step_size", float, 0.1, 0, None, "learning rate", low_open=True),
        HyperParameter("radius", float, 10.0, 0, math.inf, "radius of the L2 ball the iterates are projected on "
                       "(inf: no projection)", low_open=True, high_open=False),
        HyperParameter("max_steps", int, 10_000, 1, None, "cap on the SGD steps (the random stopping time usually "
                       "ends a trial first; privacy is unaffected)"),
        _NOISE,
    )

    def _validate(self):
        self.loss = get_loss(self.hp["loss"])
        if not math.isfinite(self.loss.derivative_bound):
            raise ValueError("loss must be Lipschitz ('logistic' or 'hinge') for bias-reduced-sgd")

    @property
    def lipschitz(self) -> float:
        return self.hp["feature_bound"] * self.loss.derivative_bound

    def claim(self, n: int):
        check_count("n", n, minimum=4)
        if not self.hp["noise"]:
            return no_guarantee_claim("replace_one", "noise switched off")
        from dpaudit.accounting.claim import PrivacyClaim
        eps, delta = self.hp["epsilon"], self.hp["delta"]
        return PrivacyClaim.approx_dp(
            eps, delta, neighbouring="replace_one", source="ghazi2024-bias-reduced-sgd",
            description=f"Ghazi et al. 2024 Alg. 4 (random stopping): ({eps:g}, {delta:g})-DP, replace-one; "
                        "SGD phase covered by the filter ((epsilon/2, delta/2): thresholds epsilon/2, log(4/delta), delta/4) "
                        "[unconfirmed step costs]",
            details={"epsilon": eps, "delta": delta})

    def _sigmas(self, n: int) -> np.ndarray:
        """Gaussian noise std of the projection mechanism for a mean over 2^k records, k = 0..M+1."""
        from dpaudit.bounds.sparse import projection_mechanism_calibration
        M = int(math.floor(math.log2(n))) - 1
        eps, delta = self.hp["epsilon"] / 32.0, self.hp["delta"] / 16.0
        return np.array([projection_mechanism_calibration(self.lipschitz, self.hp["sparsity"], 2**k, eps, delta).scale
                         for k in range(M + 2)])

    def _filter(self, st: dict, idx, level, costs) -> tuple:
        """The random-stopping filter, checked before the step (vectorised ``RandomStoppingFilter.allows``): the
        trials whose step fits go on (their spent budget updated), the others stop. Returns ``(idx, level)``."""
        log4 = math.log(4.0 / self.hp["delta"])
        new_e2 = st["eps2"][idx] + costs[0][level]
        new_d = st["delta"][idx] + costs[1][level]
        lhs = round_up(np.sqrt(2.0 * log4 * new_e2) + 0.5 * new_e2)
        ok = (lhs <= self.hp["epsilon"] / 2.0) & (round_up(new_d) <= self.hp["delta"] / 4.0)
        st["active"][idx[~ok]] = False
        idx, level = idx[ok], level[ok]
        st["eps2"][idx], st["delta"][idx] = new_e2[ok], new_d[ok]
        return idx, level

    def _gradient(self, th, X, y, level, g_c, rng, sig, probs):
        """G = (G_B - (G_O + G_E)/2) / p_N + G_i for trials at levels ``level`` (module docstring), each mean
        released by the projection mechanism (noise, then the l1-ball projection)."""
        k, n = th.shape[0], X.shape[0]
        scal = self.loss.derivative(th @ X.T, y)                 # (k, n)
        if g_c is not None:
            scal[:, 0] = 0.0
        ranks = np.argsort(rng.random((k, n)), axis=1).argsort(axis=1)   # uniform random ranks per trial
        half = (2 ** level)[:, None]
        in_O = ranks < half
        in_E = (ranks >= half) & (ranks < 2 * half)
        pick = rng.integers(0, n, size=k)          # the record i ~ Unif([n]), independent of B
        one = np.zeros((k, n), dtype=bool)
        one[np.arange(k), pick] = True
        radius_l1 = self.lipschitz * math.sqrt(self.hp["sparsity"])

        def mean_over(mask, size_log2):
            g = (scal * mask) @ X
            if g_c is not None:
                g = g + mask[:, 0:1] * g_c
            g = g / np.exp2(size_log2)[:, None]
            if self.hp["noise"]:
                g = g + rng.standard_normal(g.shape) * sig[size_log2][:, None]
            return project_l1_ball(g, radius_l1)

        G_B = mean_over(in_O | in_E, level + 1)
        G_O = mean_over(in_O, level)
        G_E = mean_over(in_E, level)
        G_i = mean_over(one, np.zeros(k, dtype=np.int64))
        return (G_B - 0.5 * (G_O + G_E)) / probs[level][:, None] + G_i

    @np.errstate(over="ignore", invalid="ignore", divide="ignore")
    def run(self, X, y, *, trials=1, seed=None, canary_gradient=None) -> Run:
        """Run ``trials`` independent trainings; iterates that leave the float range (enormous
        step_size with an infinite radius) are refused with a ValueError, not released."""
        from dpaudit.bounds.sparse import bias_reduced_level_probabilities, bias_reduced_step_cost
        X, y = check_data(X, y)
        y = self.loss.prepare_labels(y)
        trials = check_count("trials", trials, minimum=1)
        n, d = X.shape
        if n < 4:
            raise ValueError("X must have at least 4 rows for bias-reduced-sgd")
        _check_sparse_rows(X, self.hp["feature_bound"], self.hp["sparsity"])
        g_c = self._check_canary(canary_gradient, d)
        if g_c is not None:
            _check_sparse_rows(g_c[None, :], self.lipschitz, self.hp["sparsity"])
        rng = make_rng(seed)
        probs = bias_reduced_level_probabilities(n)
        levels_cost = bias_reduced_step_cost(np.arange(probs.size), n, self.hp["epsilon"], self.hp["delta"])
        costs = (np.asarray(levels_cost[0]) ** 2, np.asarray(levels_cost[1]))
        sig = self._sigmas(n)
        eta, radius = self.hp["step_size"], self.hp["radius"]
        theta = np.zeros((trials, d))
        total = np.zeros((trials, d))          # sum of iterates x^0..x^T
        count = np.ones(trials)                # x^0 counted
        st = {"eps2": np.zeros(trials), "delta": np.zeros(trials), "active": np.ones(trials, dtype=bool)}
        steps = np.zeros(trials, dtype=np.int64)
        for _ in range(self.hp["max_steps"]):
            idx = np.flatnonzero(st["active"])
            if not idx.size:
                break
            level = rng.choice(probs.size, size=len(idx), p=probs)
            idx, level = self._filter(st, idx, level, costs)
            if not idx.size:
                break
            th = theta[idx] - eta * self._gradient(theta[idx], X, y, level, g_c, rng, sig, probs)
            if math.isfinite(radius):
                norms = l2_norm(th, axis=1, keepdims=True)
                th = th * np.where(norms > radius, radius / np.maximum(norms, 1e-300), 1.0)
            theta[idx] = th
            total[idx] += th
            count[idx] += 1
            steps[idx] += 1
        params = check_finite_params(total / count[:, None], self.name, ("step_size", "radius", "feature_bound"))
        return Run(params=params, claim=self.claim(n),
                   extra={"n": n, "steps": steps, "last_iterate": theta, "epsilon_filter": st["eps2"],
                          "delta_filter": st["delta"]})
