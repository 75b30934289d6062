"""Ridge-regression gradient descent with the Relative Gaussian Mechanism (Hendrikx, Mangold, Bellet 2024).

"The Relative Gaussian Mechanism and its Application to Private Gradient Descent", AISTATS 2024,
arXiv:2308.15250 (Definition 3 eq. (4), Section 5.1 eq. (7), Section 5.2 eqs. (9)-(11), Section 6;
the formulas are reconstructions, docs/theorems/rgm.md). Objective (eq. (9), records as the rows of X):

    f_D(x) = (1/(2n)) ||X x - y||^2 + (l2/2) ||x||^2,   grad f_D(x) = A_D x - b_D,
    A_D = X'X/n + l2 I,  b_D = X'y/n.

Update (eq. (7)): x_{t+1} = x_t - step_size (g_t + (sigma + gamma ||g_t||) xi_t), g_t = grad f_D(x_t),
xi_t ~ N(0, I_d): one RGM release per step (``dpaudit.mechanisms.RelativeGaussian``). x_0 = 0.

Relative sensitivity (A, B): the gradient of ridge regression satisfies ||g_D(x) - g_D'(x)|| <=
A + B ||g_D(x)|| (Section 5.2, eqs. (10)-(11)). Two modes:

* ``ptr=False`` (default): A and B are given as hyper-parameters, or computed from the data by
  ``dpaudit.bounds.ridge.ridge_relative_sensitivity`` (local constants at D; as in the paper's
  experiments, the claim is then conditional on those constants holding for D's neighbours -- stated
  in ``claim.description``).
* ``ptr=True``: propose constants valid on the "good" datasets {A_D >= ptr_threshold I} with records
  of norm <= ``record_bound`` (``dpaudit.bounds.ridge.ridge_ptr_constants``), test with
  ``dpaudit.bounds.propose_test_release`` at (ptr_epsilon, ptr_delta) -- one independent test per
  trial -- and run GD only on trials whose test passes (a failed trial outputs x_0 = 0, i.e. "bottom").
  The claim adds the test's cost: epsilon(delta) = ptr_epsilon + eps_RGM(delta - ptr_delta).

gamma: given, or calibrated to the target ``rdp_epsilon`` at order ``alpha`` over all ``steps`` releases:

* ``gamma_rule="main_term"`` (default): gamma = B sqrt(alpha steps / (2 rdp_epsilon)), so that only the main
  term alpha B^2 / (2 gamma^2) of Theorem 1 (5*) sums to ``rdp_epsilon``; the claimed RDP is larger (the
  (1-u) factor and the norm-leakage term d(-log(1+B) - log(1-u)/(2(alpha-1))) come on top);
* ``gamma_rule="exact"``: the smallest gamma (found numerically on ``dpaudit.bounds.rgm_rdp``) with
  steps * rgm_rdp(alpha; A, B, gamma, d) <= rdp_epsilon, so the claimed total RDP at ``alpha`` meets the
  target (up to float rounding, from below). ValueError when the norm-leakage term alone exceeds the
  target (no gamma achieves it: the norm-leakage term of Theorem 1 is about d alpha B^2 whatever the noise).

sigma = gamma A / B (the baseline noise of the authors' code, Definition 3). The claim composes ``RelativeGaussian(sigma, gamma, A, B, d)`` ``steps`` times
in an RDPAccountant and reports the resulting epsilon exactly (not the target).

Absolute constant A (data-dependent mode only): ``absolute="bound"`` (default) takes the paper's bound
A = B ||b_D|| + (||b_1|| + ||b_1'||)/n (Section 5.2, via ``ridge_relative_sensitivity``); ``absolute="optimum"``
evaluates the quantity that bound majorises, A = sup_D' ||grad f_D'(x*_D)|| (eq. (10)): the regulariser
cancels, grad f_D'(x*_D) = (g_{new}(x*_D) - g_i(x*_D))/n with g_i(x) = x_i (x_i.x - y_i), and with the same
data-envelope convention as B (the new record's ||g(x*_D)|| at most max_i ||g_i(x*_D)||),
A = 2 max_i ||g_i(x*_D)|| / n -- the replace-one sensitivity of a sum clipped at C* = max_i ||g_i(x*_D)||.

step_size: given, or 0.5 / lambda_max(A_D) as in the paper's experiments (Section 6, Appendix C; data-dependent,
outside the claim -- pass ``step_size`` to make it public).

Nodes (Section 6): ``run(..., nodes=[idx_0, idx_1, ...])`` runs the federated variant x_{t+1} =
mean_k (x_t - step_size g~_k(x_t)), each node k releasing its local gradient with its own (A_k, B_k);
a record belongs to one node, so the claim is the worst node's (pointwise max of the RDP curves).

Tilted nodes (Section 6, the "bias" split): ``run(..., nodes=..., tilts=[t_0, t_1, ...])`` makes node k minimise
f_k(x - t_k), releasing grad f_k(x - t_k) = A_k (x - t_k) - b_k. The relative-sensitivity bound holds at every
point, so the same (A_k, B_k), gamma and claim apply (the tilt t_k is public).

White-box canary: ``canary_gradient`` is added to the released gradient g_t (a gradient offset of the
differing record; it must satisfy the relative-sensitivity bound for the claim to cover the pair).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpaudit.accounting.claim import PrivacyClaim
from dpaudit.core.numeric import l2_norm
from dpaudit.core.roots import bracket_down, bracket_up, smallest_true
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

__all__ = ["RGMGD", "ridge_quantities", "relative_sensitivity", "optimum_absolute_constant", "calibrate_gamma"]


def ridge_quantities(X: np.ndarray, y: np.ndarray, l2: float):
    """(A_D, b_D) of ridge regression, records as rows (eq. (9)); ValueError naming X
    when they overflow the float range (records beyond ~1e154)."""
    n, d = X.shape
    with np.errstate(over="ignore", invalid="ignore"):
        A_D, b_D = X.T @ X / n + l2 * np.eye(d), X.T @ y / n
    if not (np.all(np.isfinite(A_D)) and np.all(np.isfinite(b_D))):
        raise ValueError("X: X^T X / n or X^T y / n overflows the float range; rescale the records and labels")
    return A_D, b_D


def relative_sensitivity(X, y, l2) -> tuple[float, float]:
    """(A, B) from ``dpaudit.bounds.ridge.ridge_relative_sensitivity`` (tuple or object with .A, .B)."""
    from dpaudit.bounds.ridge import ridge_relative_sensitivity
    res: Any = ridge_relative_sensitivity(X, y, l2=l2)  # a tuple today; an object with .A, .B is read too
    if hasattr(res, "A") and hasattr(res, "B"):
        return float(res.A), float(res.B)
    A, B = res[0], res[1]
    return float(A), float(B)


def optimum_absolute_constant(X, y, l2) -> float:
    """A = 2 max_i ||x_i (x_i.x*_D - y_i)|| / n: sup ||grad f_D'(x*_D)|| of eq. (10), envelope domain.

    Replace-one neighbours of equal size: grad f_D'(x*_D) = grad f_D(x*_D) + (g'(x*_D) - g_i(x*_D))/n with
    grad f_D(x*_D) = 0 and the l2 terms cancelling; both per-example terms are bounded by the largest one on
    the data (the convention ``ridge_relative_sensitivity`` uses for B). Rounded up (with a relative margin
    for the linear solve).
    """
    from dpaudit.core.numeric import round_up
    X, y = check_data(X, y)
    n, d = X.shape
    A_D, b_D = ridge_quantities(X, y, l2)
    ev = np.linalg.eigvalsh(A_D)
    x_star = np.linalg.solve(A_D, b_D)
    per = l2_norm(X * (X @ x_star - y)[:, None], axis=1)
    margin = 1.0 + 64.0 * d * np.finfo(float).eps * float(ev[-1] / ev[0])
    return round_up(2.0 * float(per.max()) / n * margin)


def calibrate_gamma(rdp_epsilon: float, *, alpha: float, steps: int, A: float, B: float, dim: int,
                    start: float | None = None) -> float:
    """Smallest gamma (to ~1e-12 relative) with ``steps * rgm_rdp(alpha; A, B, gamma, dim) <= rdp_epsilon``.

    Theorem 1 (5*) of Hendrikx et al. 2024 with sigma = gamma A / B: the RDP decreases in gamma towards the
    norm-leakage term, so the target is reachable iff steps * leakage < rdp_epsilon (ValueError otherwise,
    naming rdp_epsilon). Bracketing by doubling, then bisection on the rounded-up ``rgm_rdp`` itself, keeping
    the feasible end: the returned gamma always satisfies the inequality as evaluated by ``rgm_rdp``.
    """
    from dpaudit.bounds.rgm import rgm_rdp

    def total(g):
        return steps * float(rgm_rdp(alpha, A=A, B=B, gamma=g, dim=dim))

    if not total(1e100) < rdp_epsilon:
        raise ValueError(f"rdp_epsilon={rdp_epsilon:g} is not achievable at alpha={alpha:g} over {steps} steps: "
                         f"the norm-leakage term alone gives {total(1e100):.6g} (B={B:g}, dim={dim})")
    def ok(g: float) -> bool:
        return total(g) <= rdp_epsilon

    # bracket by doubling/halving (core/roots, at most 2200 steps each; total(1e100) meets the
    # target, so the doubling ends), then bisection keeping the feasible end
    hi = start if start and start > 0 else B
    if ok(hi):
        lo, hi = bracket_down(ok, hi, limit=1e-300)
        if lo is None:
            return hi
    else:
        br = bracket_up(ok, hi, 2.0 * hi, limit=1e100)
        lo, hi = br if br is not None else (hi, 1e100)
    return smallest_true(ok, lo, hi, midpoint="arithmetic", rtol=1e-13, max_iter=200)


class RGMGD(Optimizer):
    """Private ridge GD with the Relative Gaussian Mechanism (see the module docstring)."""

    name = "rgm-gd"
    max_canaries = 1
    hyperparameters = (
        HyperParameter("l2", float, 3e-2, 0, None, "ridge regularisation lambda (lambda_min(A_D) >= l2)",
                       low_open=True),
        HyperParameter("steps", int, 40, 1, None, "number of gradient steps (each one RGM release)"),
        HyperParameter("step_size", float, None, 0, None, "learning rate (None: 0.5 / lambda_max(A_D))",
                       low_open=True, optional=True),
        HyperParameter("alpha", float, 2.0, 1, None, "Renyi order of the calibration target", low_open=True),
        HyperParameter("rdp_epsilon", float, 1.0, 0, None, "target RDP epsilon at order alpha over all steps",
                       low_open=True),
        HyperParameter("gamma", float, None, 0, None, "RGM relative noise scale (None: calibrated to rdp_epsilon "
                       "by gamma_rule)", low_open=True, optional=True),
        HyperParameter("A", float, None, 0, None, "constant part A of the relative sensitivity A + B ||grad|| "
                       "(None: from the data, or the PTR proposal; give A and B together)", optional=True),
        HyperParameter("B", float, None, 0, None, "relative part B of the relative sensitivity A + B ||grad|| "
                       "(None: from the data, or the PTR proposal; give A and B together)", optional=True),
        HyperParameter("ptr", bool, False, help="propose-test-release the constants (needs ptr_threshold)"),
        HyperParameter("ptr_threshold", float, None, 0, None, "PTR's proposed lower bound mu0 on lambda_min(A_D) "
                       "(required with ptr)", low_open=True, optional=True),
        HyperParameter("record_bound", float, 1.0, 0, None, "bound on every record's L2 norm (PTR constants)",
                       low_open=True),
        HyperParameter("label_bound", float, 1.0, 0, None, "bound on |y| (PTR constants)"),
        HyperParameter("ptr_epsilon", float, 0.1, 0, None, "epsilon of the PTR test", low_open=True),
        HyperParameter("ptr_delta", float, 1e-6, 0, 1, "delta of the PTR test", low_open=True, high_open=True),
        HyperParameter("noise", bool, True, help="add the noise (False: no privacy guarantee, for tests)"),
        HyperParameter("gamma_rule", str, "main_term", help="gamma calibration: 'main_term' (closed form) or "
                       "'exact' (bisection on Theorem 1)", choices=("main_term", "exact")),
        HyperParameter("absolute", str, "bound", help="constant A from the data: 'bound' (relative-sensitivity "
                       "bound) or 'optimum' (at the optimum, eq. (10))", choices=("bound", "optimum")),
    )

    def _validate(self):
        if (self.hp["A"] is None) != (self.hp["B"] is None):
            raise ValueError("A and B must be given together (or both left None to compute them from the data)")
        if self.hp["ptr"] and self.hp["ptr_threshold"] is None:
            raise ValueError("ptr_threshold (the proposed lower bound mu0 on lambda_min(A_D)) is required when ptr=True")

    @property
    def neighbouring(self) -> str:
        return "replace_one"

    # -- constants ------------------------------------------------------------------------
    def constants(self, X=None, y=None, n=None) -> tuple[float, float]:
        """(A, B): hyper-parameters, PTR proposal (data-independent), or local constants of (X, y)."""
        if self.hp["A"] is not None:
            return self.hp["A"], self.hp["B"]
        if self.hp["ptr"]:
            from dpaudit.bounds.ridge import ridge_ptr_constants
            if n is None:
                raise ValueError("n must be given for the PTR constants")
            A, B = ridge_ptr_constants(n, record_bound=self.hp["record_bound"], label_bound=self.hp["label_bound"],
                                       threshold=self.hp["ptr_threshold"])
            return float(A), float(B)
        if X is None:
            raise ValueError("A and B must be given (or ptr=True) to state the claim without data; "
                             "use claim_for(X, y) for data-dependent constants")
        A, B = relative_sensitivity(X, y, self.hp["l2"])
        if self.hp["absolute"] == "optimum":
            A = optimum_absolute_constant(X, y, self.hp["l2"])
        return A, B

    def gamma_for(self, B: float, A: float | None = None, dim: int | None = None) -> float:
        """gamma given, or calibrated to ``rdp_epsilon`` at ``alpha`` over ``steps`` (``gamma_rule``)."""
        if self.hp["gamma"] is not None:
            return self.hp["gamma"]
        if B == 0:
            raise ValueError("B = 0: give gamma explicitly (and A > 0 acts as a plain Gaussian sensitivity)")
        main = B * math.sqrt(self.hp["alpha"] * self.hp["steps"] / (2.0 * self.hp["rdp_epsilon"]))
        if self.hp["gamma_rule"] == "main_term":
            return main
        if A is None or dim is None:
            raise ValueError("gamma_rule='exact' needs A and dim")
        return calibrate_gamma(self.hp["rdp_epsilon"], alpha=self.hp["alpha"], steps=self.hp["steps"],
                               A=A, B=B, dim=dim, start=main)

    def mechanism(self, A: float, B: float, dim: int):
        from dpaudit.mechanisms.relative_gaussian import RelativeGaussian
        gamma = self.gamma_for(B, A, dim)
        sigma = gamma * A / B if B > 0 else None
        if sigma is None:
            raise ValueError("B must be > 0 for the RGM's default sigma = gamma A / B")
        return RelativeGaussian(sigma=sigma, gamma=gamma, A=A, B=B, dim=dim)

    # -- claims ---------------------------------------------------------------------------
    def _claim_from_mechanisms(self, mechs, local: bool) -> PrivacyClaim:
        steps = self.hp["steps"]
        if not self.hp["noise"]:
            return no_guarantee_claim("replace_one", "noise switched off")
        if len(mechs) == 1:
            mech = mechs[0]
        else:
            mech = CurveMechanism(lambda o: np.max([m.rdp(o) for m in mechs], axis=0),
                                  "RGM, worst node", "replace_one")
        cond = (" (constants computed from the data, as in the paper's experiments: the claim holds when they "
                "bound the relative sensitivity for every neighbour)") if local else ""
        base = accountant_claim("rdp", mech, steps, neighbouring="replace_one", source="rgm-rdp",
                                description=f"RGM-GD: {steps} x {mech.describe()}{cond}",
                                details={"steps": steps, "mechanisms": [m.describe() for m in mechs],
                                         "local_constants": local})
        if not self.hp["ptr"]:
            return base
        pe, pd = self.hp["ptr_epsilon"], self.hp["ptr_delta"]

        def eps_fn(delta):
            return pe + base.epsilon(delta - pd) if delta > pd else math.inf

        def delta_fn(eps):
            return min(1.0, pd + base.delta(eps - pe)) if eps > pe else 1.0

        return PrivacyClaim(neighbouring="replace_one", epsilon_fn=eps_fn, delta_fn=delta_fn, source="ptr+rgm-rdp",
                            description=f"PTR ({pe:g}, {pd:g}) then {base.description} (basic composition)",
                            details={**base.details, "ptr_epsilon": pe, "ptr_delta": pd})

    def claim(self, n: int, d: int | None = None) -> PrivacyClaim:
        """Claim for n records of dimension d (needs A, B as hyper-parameters or ptr=True)."""
        n = check_count("n", n, minimum=1)
        if d is None:
            raise ValueError("d (the dimension) must be given to state the RGM claim")
        A, B = self.constants(n=n)
        return self._claim_from_mechanisms([self.mechanism(A, B, d)], local=False)

    def claim_for(self, X, y, nodes=None) -> PrivacyClaim:
        X, y = check_data(X, y)
        groups = [np.arange(X.shape[0])] if nodes is None else [np.asarray(g) for g in nodes]
        mechs = []
        for g in groups:
            A, B = self.constants(X[g], y[g], n=len(g))
            mechs.append(self.mechanism(A, B, X.shape[1]))
        local = self.hp["A"] is None and not self.hp["ptr"]
        return self._claim_from_mechanisms(mechs, local)

    # -- run ------------------------------------------------------------------------------
    def run(self, X, y, *, trials=1, seed=None, canary_gradient=None, nodes=None, tilts=None) -> Run:
        X, y = check_data(X, y)
        trials = check_count("trials", trials, minimum=1)
        n, d = X.shape
        g_c = self._check_canary(canary_gradient, d)
        groups = [np.arange(n)] if nodes is None else [np.asarray(g, dtype=np.int64) for g in nodes]
        if any(g.size == 0 for g in groups):
            raise ValueError("nodes must be non-empty index arrays")
        if tilts is None:
            shifts = [np.zeros(d)] * len(groups)
        else:
            shifts = [np.asarray(t, dtype=float) for t in tilts]
            if len(shifts) != len(groups) or any(t.shape != (d,) or not np.all(np.isfinite(t)) for t in shifts):
                raise ValueError(f"tilts must be {len(groups)} finite vectors of length {d} (one per node)")
        rng = make_rng(seed)
        l2 = self.hp["l2"]
        quads, mechs = [], []
        for g in groups:
            A_D, b_D = ridge_quantities(X[g], y[g], l2)
            quads.append((A_D, b_D))
            A, B = self.constants(X[g], y[g], n=len(g))
            mechs.append(self.mechanism(A, B, d))
        eta = self.hp["step_size"]
        if eta is None:
            eta = 0.5 / max(float(np.linalg.eigvalsh(q[0])[-1]) for q in quads)
        passed = np.ones(trials, dtype=bool)
        if self.hp["ptr"]:
            from dpaudit.bounds.ptr import propose_test_release
            for t in range(trials):      # one scalar test per trial (cheap compared with the GD below)
                passed[t] = all(propose_test_release(X[g], self.hp["ptr_threshold"], record_bound=self.hp["record_bound"],
                                                     epsilon=self.hp["ptr_epsilon"], delta=self.hp["ptr_delta"],
                                                     l2=l2, rng=rng).passed for g in groups)
        x = np.zeros((trials, d))
        # overflow comes only from divergent iterates (step_size too large, enormous noise): it is
        # detected below and refused rather than released as inf/NaN
        with np.errstate(over="ignore", invalid="ignore"):
            for _ in range(self.hp["steps"]):
                update = np.zeros((trials, d))
                for (A_D, b_D), mech, t_k in zip(quads, mechs, shifts):
                    grad = (x - t_k) @ A_D - b_D
                    if g_c is not None:
                        grad = grad + g_c
                    if self.hp["noise"]:
                        scale = mech.sigma + mech.gamma * l2_norm(grad, axis=1, keepdims=True)
                        grad = grad + scale * rng.standard_normal((trials, d))
                    update += x - eta * grad
                x = np.where(passed[:, None], update / len(groups), 0.0)
        check_finite_params(x, self.name, ("step_size", "gamma", "rdp_epsilon", "X"))
        local = self.hp["A"] is None and not self.hp["ptr"]
        return Run(params=x, claim=self._claim_from_mechanisms(mechs, local),
                   extra={"n": n, "step_size": eta, "ptr_passed": passed,
                          "constants": [(m.A, m.B, m.gamma, m.sigma) for m in mechs]})
