"""Projected noisy gradient descent releasing only its last iterate (Chourasia, Ye, Shokri 2021).

Algorithm 1 of Chourasia, Ye, Shokri, "Differential Privacy Dynamics of Langevin Diffusion and
Noisy Gradient Descent", NeurIPS 2021, arXiv:2102.05855:

    theta_0 ~ Proj_C( N(0, (2 sigma^2 / lambda) I) )
    theta_{k+1} = Proj_C( theta_k - step_size * grad L_D(theta_k) + sqrt(2 step_size sigma^2) Z_k )
    output theta_K                                   (K = steps; theta_1..theta_{K-1} stay hidden)

with L_D(theta) = (1/n) sum_i l(theta; x_i) + (l2/2) ||theta||^2, C the L2 ball of radius ``radius``
(``inf``: C = R^d) and lambda = l2. ``sigma`` is the Langevin temperature (per-step noise variance
2 step_size sigma^2). When lambda = 0 the start is theta_0 = 0 (the Gaussian start has infinite variance).

Gradient sensitivity (replace-one, same n; their Section 2 setting): S_g = max ||grad l(theta; x) - grad l(theta; x')||.
Records must satisfy ||x|| <= ``feature_bound`` (R; checked, never clipped silently). The regulariser
cancels in the difference, so S_g = 2 R sup|l'|: sup|l'| = 1 for the logistic and smooth hinge; for
the squared loss |x.theta - y| <= R radius + ``label_bound`` needs a finite ``radius``. With a
finite ``clip`` the data part of every per-example gradient is clipped to norm ``clip`` and
S_g = 2 min(clip, 2 R sup|l'|/2); the update is then no longer a gradient step.

Claim (Theorem 1; composition, docs/theorems/langevin.md): the composition bound (every iterate released; each step a Gaussian
mechanism with sensitivity step_size S_g / n and variance 2 step_size sigma^2) always holds; Theorem 1
(last iterate) additionally holds when every l(.; x) + l2/2 ||.||^2 is lambda-strongly convex and
beta-smooth with lambda = l2 > 0, beta = R^2 sup l'' + l2, step_size < 1/beta, no clipping and the
Gaussian start. The claim is the smaller of the two at each query, labelled in ``claim.details``
(``PrivacyClaim.best_of``); both RDP curves come from ``dpaudit.bounds.langevin``.

White-box canary: ``canary_gradient`` g is the gradient offset of the differing record,
grad L_D'(theta) = grad L_D(theta) + g / n, with ||g|| <= S_g required (the replace-one pair the
theorems cover, with the worst-case constant gradient difference).
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.accounting.claim import PrivacyClaim
from dpaudit.bounds.langevin import composition_rdp, langevin_rdp
from dpaudit.core.numeric import l2_norm
from dpaudit.core.validation import check_count
from dpaudit.optimizers.base import (
    CurveMechanism,
    HyperParameter,
    Optimizer,
    Run,
    accountant_claim,
    check_data,
    check_finite_params,
    make_rng,
    no_guarantee_claim,
)
from dpaudit.optimizers.losses import LOSS_HP, clipped_gradient_sum, get_loss
from dpaudit.optimizers.losses import row_norms as _row_norms

__all__ = ["NoisyGD", "project_ball", "evaluate_curve"]


def project_ball(theta: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection of each row of ``theta`` onto the L2 ball of ``radius`` (inf: identity)."""
    if math.isinf(radius):
        return theta
    norms = _row_norms(theta.reshape(-1, theta.shape[-1])).reshape(theta.shape[:-1] + (1,))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # (the unused branch may overflow)
        factor = np.where(norms > radius, radius / norms, 1.0)
    return theta * factor


def evaluate_curve(fn, orders: np.ndarray, **kwargs) -> np.ndarray:
    """``fn(orders, **kwargs)`` as an array, evaluating order by order if ``fn`` takes scalars only."""
    try:
        out = np.asarray(fn(orders, **kwargs), dtype=float)
        if out.shape == orders.shape:
            return out
    except (TypeError, ValueError):
        pass
    return np.array([float(fn(float(a), **kwargs)) for a in orders])


class NoisyGD(Optimizer):
    """Projected noisy GD, last iterate only (see the module docstring)."""

    name = "noisy-gd"
    max_canaries = 1
    canary_semantics = "offset"  # grad L_D' = grad L_D + g/n with ||g|| <= S_g
    hyperparameters = (
        LOSS_HP,
        HyperParameter("steps", int, 100, 0, None, "number of noisy gradient steps K (only the last iterate is "
                       "released)"),
        HyperParameter("step_size", float, 0.1, 0, None, "learning rate eta", low_open=True),
        HyperParameter("sigma", float, 0.1, 0, None, "Langevin temperature: per-step noise N(0, 2 eta sigma^2 I) "
                       "(not a noise multiplier)"),
        HyperParameter("l2", float, 0.1, 0, None, "L2 regularisation lambda (the strong convexity of Theorem 1)"),
        HyperParameter("feature_bound", float, 1.0, 0, None, "bound R on every record's L2 norm (checked)",
                       low_open=True),
        HyperParameter("label_bound", float, 1.0, 0, None, "bound on |y| for the squared loss (checked)"),
        HyperParameter("radius", float, math.inf, 0, math.inf, "radius of the L2 ball the iterates are projected "
                       "on (inf: no projection)", low_open=True, high_open=False),
        HyperParameter("clip", float, math.inf, 0, math.inf, "clipping norm of the data part of each "
                       "per-example gradient (inf: no clipping)", low_open=True, high_open=False),
    )

    def _validate(self):
        self.loss = get_loss(self.hp["loss"])
        sigma, l2 = self.hp["sigma"], self.hp["l2"]
        if not math.isfinite(self.noise_std):
            raise ValueError(f"sigma must keep the per-step noise std sqrt(2 step_size) sigma finite, got sigma={sigma:g}")
        if l2 > 0 and not math.isfinite(sigma * math.sqrt(2.0 / l2)):
            raise ValueError(f"sigma must keep the initial std sigma sqrt(2/l2) finite, got sigma={sigma:g}, l2={l2:g}")

    @property
    def neighbouring(self) -> str:
        return "replace_one"

    # -- constants of the analysis ------------------------------------------------------
    @property
    def derivative_bound(self) -> float:
        """sup |l'(z; y)| over the admissible region."""
        if math.isfinite(self.loss.derivative_bound):
            return self.loss.derivative_bound
        # squared loss: |x.theta - y| <= R * radius + label_bound on the ball C
        return self.hp["feature_bound"] * self.hp["radius"] + self.hp["label_bound"]

    @property
    def sensitivity(self) -> float:
        """Gradient sensitivity S_g (replace-one)."""
        per_record = self.hp["feature_bound"] * self.derivative_bound
        return 2.0 * min(per_record, self.hp["clip"])

    def canary_norm(self) -> float:
        """The gradient sensitivity S_g (the offset canary's largest allowed norm)."""
        s = self.sensitivity
        return float(s) if math.isfinite(float(s)) else super().canary_norm()

    @property
    def strong_convexity(self) -> float:
        return self.hp["l2"]

    @property
    def smoothness(self) -> float:
        return (self.hp["feature_bound"] * self.hp["feature_bound"]) * self.loss.curvature_bound + self.hp["l2"]

    @property
    def noise_std(self) -> float:
        """Per-step, per-coordinate noise standard deviation sqrt(2 step_size sigma^2)."""
        return math.sqrt(2.0 * self.hp["step_size"]) * self.hp["sigma"]

    @property
    def noise_scale(self) -> float:
        return self.noise_std

    @property
    def theorem1_applies(self) -> bool:
        """Hypotheses of Theorem 1: lambda > 0, beta finite, step_size < 1/beta, no clipping, S_g finite."""
        lam, beta = self.strong_convexity, self.smoothness
        return (lam > 0 and math.isfinite(beta) and self.hp["step_size"] < 1.0 / beta
                and math.isinf(self.hp["clip"]) and math.isfinite(self.sensitivity))

    # -- run --------------------------------------------------------------------------
    def run(self, X, y, *, trials=1, seed=None, canary_gradient=None) -> Run:
        X, y = check_data(X, y)
        y = self.loss.prepare_labels(y)
        trials = check_count("trials", trials, minimum=1)
        n, d = X.shape
        row_norms = _row_norms(X)
        R = self.hp["feature_bound"]
        if np.any(row_norms > R * (1 + 1e-12)):
            raise ValueError(f"X: every record must have L2 norm <= feature_bound = {R:g} "
                             f"(max found {row_norms.max():.6g})")
        if not math.isfinite(self.loss.derivative_bound) and np.any(np.abs(y) > self.hp["label_bound"]):
            raise ValueError(f"y: every label must satisfy |y| <= label_bound = {self.hp['label_bound']:g}")
        g_c = self._check_canary(canary_gradient, d)
        if g_c is not None and l2_norm(g_c) > self.sensitivity * (1 + 1e-12):
            raise ValueError(f"canary_gradient must have norm <= the gradient sensitivity S_g = {self.sensitivity:g}")
        rng = make_rng(seed)
        eta, l2, sigma, radius = self.hp["step_size"], self.hp["l2"], self.hp["sigma"], self.hp["radius"]
        clip = self.hp["clip"]
        if l2 > 0 and sigma > 0:
            theta = rng.standard_normal((trials, d)) * (sigma * math.sqrt(2.0 / l2))  # (sigma**2 overflows)
        else:
            theta = np.zeros((trials, d))
        theta = project_ball(theta, radius)
        std = self.noise_std
        with np.errstate(over="ignore", invalid="ignore"):
            for _ in range(self.hp["steps"]):
                scalars = self.loss.derivative(theta @ X.T, y)
                total, _ = clipped_gradient_sum(X, scalars, row_norms, clip)
                grad = total / n + l2 * theta
                if g_c is not None:
                    grad = grad + g_c / n
                step = theta - eta * grad
                if std > 0:
                    step = step + std * rng.standard_normal((trials, d))
                theta = project_ball(step, radius)
        check_finite_params(theta, "noisy-gd", ("step_size", "sigma"))
        return Run(params=theta, claim=self.claim(n),
                   extra={"n": n, "sensitivity": self.sensitivity, "theorem1": self.theorem1_applies})

    # -- claim ------------------------------------------------------------------------
    def claim(self, n: int) -> PrivacyClaim:
        """min(Theorem 1, composition) as RDP curves from ``dpaudit.bounds.langevin`` (labelled)."""
        n = check_count("n", n, minimum=1)
        if self.hp["sigma"] == 0:
            return no_guarantee_claim("replace_one", "sigma = 0 (no noise)")
        if not math.isfinite(self.sensitivity):
            return no_guarantee_claim("replace_one", "unbounded gradient sensitivity (squared loss needs a "
                                                     "finite radius or clip)")
        parts = self.claim_components(n)
        if len(parts) == 1:
            return parts["composition"]
        return PrivacyClaim.best_of([parts["langevin-theorem-1"], parts["composition"]], description=(
            "noisy GD last iterate: min(Theorem 1 of Chourasia et al. 2021, composition bound)"))

    def claim_components(self, n: int) -> dict:
        """The individual claims, keyed by source: ``"composition"`` and, when it applies, ``"langevin-theorem-1"``."""
        n = check_count("n", n, minimum=1)
        S = self.sensitivity
        common = dict(sensitivity=S, step_size=self.hp["step_size"], sigma=self.hp["sigma"], n=n,
                      steps=self.hp["steps"])
        details = {"sensitivity": S, "n": n, **{k: v for k, v in common.items() if k != "sensitivity"}}
        comp = accountant_claim(
            "rdp", CurveMechanism(lambda o: evaluate_curve(composition_rdp, o, **common),
                                  "noisy GD, all iterates (composition)", "replace_one"), 1,
            neighbouring="replace_one", source="composition",
            description=f"noisy GD composition bound (all {self.hp['steps']} iterates), S_g={S:g}",
            details=details)
        if not self.theorem1_applies:
            return {"composition": comp}
        lam = self.strong_convexity
        thm = accountant_claim(
            "rdp", CurveMechanism(lambda o: evaluate_curve(langevin_rdp, o, strong_convexity=lam, **common),
                                  "noisy GD last iterate (Theorem 1)", "replace_one"), 1,
            neighbouring="replace_one", source="langevin-theorem-1",
            description=f"Chourasia et al. 2021 Theorem 1 (last iterate), lambda={lam:g}, "
                        f"beta={self.smoothness:g}, S_g={S:g}",
            details={**details, "strong_convexity": lam, "smoothness": self.smoothness})
        return {"langevin-theorem-1": thm, "composition": comp}
