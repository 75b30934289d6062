"""DP-AGD: gradient descent with an adaptive per-iteration zCDP budget (Lee & Kifer 2018).

Algorithm 2 of Lee & Kifer, "Concentrated Differentially Private Gradient Descent with Adaptive
per-Iteration Privacy Budget", KDD 2018 (Algorithm 2, GradAvg, NoisyMax), batched over trials, following
the PAPER where the public code deviates (docs/theorems/dp_agd.md lists the deviations). Objective f(w) = sum_i l(w; d_i) (a sum).

Budgets (Algorithm 2 inputs): total rho from eq. (5) (``dpaudit.bounds.dp_agd_budget``);
eps_nmax = eps_ng = epsilon / (2 splits); rho_nmax = eps_nmax^2 / 2 (Lemma 3.7: eps-DP => eps^2/2-zCDP);
rho_ng: option ``budget_split``. ``"classical"`` (default, unchanged from earlier versions): rho_ng =
eps_ng^2 / (4 log(1.25/delta)), the authors' code, which calibrates the gradient noise to eps_ng with the
classical Gaussian formula and so gives the gradient about 1/37 of the selection's per-step budget at
delta = 1e-8. ``"equal"`` (the paper-text reading): rho_ng = rho_nmax, since the slides set eps_nmax = eps_ng
and the paper converts eps-DP budgets to zCDP by eps^2/2 (Lemma 3.7); the authors' code has
``rho_ng = rho_nmax`` commented out. Both are charged exactly what their noise costs, so both claims are valid;
benchmarks/dp_agd_bank.py reports both (docs/theorems/dp_agd.md).

One outer iteration, per trial (every release is charged to the trial's zCDP filter *before* it is
made; a release whose charge does not fit in the remaining budget is not made and the trial stops,
returning its current w -- documented choice 8 below):
    g      = sum_i clip_{C_grad}(grad l(w; d_i))                       (line 5)
    g~     = g + N(0, C_grad^2 / (2 rho_ng) I)          charge rho_ng    (lines 6-7)
    repeat:
      Omega_j = sum_i min(l(w - alpha_j g~/||g~||; d_i), C_obj)  for alpha_j in Phi      (line 10)
      i = argmax_j(-Omega_j + Lap(C_obj / sqrt(2 rho_nmax)))    charge rho_nmax     (lines 11-12)
      if i > 0: w <- w - alpha_i g~/||g~||; stop repeating          (line 14; choice 1: alpha_i, not alpha_{i-1})
      else:     rho_old = rho_ng; rho_ng = (1 + gamma) rho_ng                         (lines 16-17)
                g~ <- GradAvg(rho_old, rho_ng, g, g~, C_grad)    charge rho_ng - rho_old (lines 18-19)
    every tau accepted steps: alpha_max <- (1 + eta) max(last tau chosen alpha), Phi rebuilt (lines 20-22)

GradAvg (the function GRADAVG of Algorithm 2): g~2 = g + N(0, C^2/(2(rho_H - rho_old)) I); S = (rho_old g~ + (rho_H - rho_old) g~2)/rho_H,
always applied to the current UNnormalised estimate (choice 6), so Var(S) = C^2/(2 rho_H) exactly.

Documented choices where the authors' public code (GitHub ppmlguy/DP-AGD) deviates from the paper
(docs/theorems/dp_agd.md):
1. the accepted step applies alpha_i (the code applies alpha_{i-1});
2. rho_ng is charged once per gradient measurement (the code charges it again after acceptance);
3. NoisyMax adds Laplace noise of scale C_obj/sqrt(2 rho_nmax) to -Omega and takes the argmax (the code uses
   one-sided exponential noise and an argmin);
4. Phi = linspace(0, alpha_max, grid_size) with grid_size = m = 20 points, index 0 being alpha = 0 (the
   code uses 21 points);
5. alpha_max = (1 + eta) max(last tau accepted alpha), uncapped by default: the paper text (Alg. 2 lines 20-22,
   slides) states the update without a cap, so the default follows it; the recorded alpha is the applied one.
   ``alpha_cap`` (default None) reproduces the code's cap min(., 2.0). At very small epsilon noise-dominated
   selections let the uncapped alpha_max drift upwards (benchmarks/dp_agd_bank.py reports both variants);
6. GradAvg averages the current unnormalised estimate;
7. regulariser: ``l2 > 0`` puts (l2/2)||w||^2 into f consistently -- its gradient l2 w is added to the noisy
   clipped sum and the scores add (l2/2)||w - alpha g^||^2 (data-independent, so no privacy cost); default l2 = 0
   as in the paper's Algorithm 2;
8. the budget invariant is explicit (above); a NoisyMax whose charge fits is used (the paper's "if rho > 0" on
   line 14 is subsumed: the selection was paid for);
9. full batch (no code-only mini-batches).

Reference-code variant (the code's side of choices 1, 3, 4, 5), for utility comparisons only; the privacy
accounting is the same as the paper's and stays exactly valid:
``noisy_max="exponential"`` selects argmax_j (-Omega_j + Exp(C_obj/sqrt(2 rho_nmax))) (report-noisy-max with
one-sided exponential noise, i.e. permute-and-flip (Ding et al. 2021); with monotone scores it is
sqrt(2 rho_nmax)-DP, checked exactly in tests/optimizers/test_dp_agd_rgm_gd_utility.py). The reference code instead computes
argmin_j (Omega_j + Exp(.)) -- the noise is added to the cost, not to the utility -- whose privacy loss reaches
(m - 1) sqrt(2 rho_nmax) with m candidates (exact computation in the same test file). That orientation is
offered only as ``noisy_max="authors"``, NOT PRIVATE: its claim is "no privacy guarantee" (epsilon = inf), so
it is refused wherever a private optimizer is required; it exists to show what drives the paper's small-epsilon
results. ``applied_step="previous"`` applies
alpha_{i-1} (no move when i = 1) while recording alpha_i for the alpha_max update; ``grid_size=21`` and
``alpha_cap=2.0``. ``DPAGD.REFERENCE_CODE`` holds these four settings. Not reproduced: the code's second
rho_ng charge after an accepted step (a pure waste of budget) and its regulariser on the direction.

Budget arithmetic: every charge goes through ``dpaudit.bounds.dp_agd.ZCDPFilterBank`` (one exact
``ZCDPFilter`` per trial); noise stds and GradAvg come from ``gradient_noise_sigma``, ``gradavg_charge`` and
``gradavg`` of the same module (batched over trials). There is no second implementation of these rules here.

Privacy: add/remove neighbours (clipped sum sensitivity C_grad; clipped losses in [0, C_obj] move
all scores the same way, the monotone case of report-noisy-max, Dwork & Roth 2014, Claim 3.9). Every trial spends at most rho,
so the claim is rho-zCDP with rho = dp_agd_budget(epsilon, delta), composed in a ZCDPAccountant.

Batching: trials are independent filters held in arrays; each loop pass advances the trials that
need a gradient and, separately, those that need a step-size selection (boolean masks), so trials
may accept, reject and stop at different times.

White-box canary: ``canary_gradient`` adds a record whose per-example gradient is that constant
vector (clipped to C_grad) to the gradient sums g; it contributes 0 to the scores Omega (a
gradient-only canary).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dpaudit.core.numeric import l2_norm
from dpaudit.core.validation import check_count
from dpaudit.optimizers.base import (
    HyperParameter,
    Optimizer,
    Run,
    ZCDPStatement,
    accountant_claim,
    check_data,
    check_finite_params,
    make_rng,
    no_guarantee_claim,
)
from dpaudit.optimizers.losses import LOSS_HP, Logistic, get_loss
from dpaudit.optimizers.losses import row_norms as _row_norms

if TYPE_CHECKING:  # imported where used (start), named here for the annotation
    from dpaudit.bounds.dp_agd import ZCDPFilterBank

__all__ = ["DPAGD", "initial_budgets"]


def initial_budgets(epsilon: float, delta: float, splits: int, budget_split: str = "classical") -> tuple[float, float]:
    """(rho_nmax, rho_ng) of Lee & Kifer 2018 (Algorithm 2's inputs), from ``dpaudit.bounds.dp_agd_initial_budgets``.

    ``budget_split="equal"``: rho_ng = rho_nmax (the paper text: eps_nmax = eps_ng, each converted by
    eps-DP => eps^2/2-zCDP); ``"classical"``: rho_ng = eps_ng^2 / (4 ln(1.25/delta)), the authors' code.
    """
    from dpaudit.bounds.dp_agd import dp_agd_initial_budgets
    if budget_split not in _SPLITS:
        raise ValueError(f"budget_split must be one of {tuple(_SPLITS)}, got {budget_split!r}")
    b = dp_agd_initial_budgets(epsilon, delta, splits, calibration=_SPLITS[budget_split])
    return b.rho_nmax, b.rho_ng


#: DPAGD's ``budget_split`` option -> ``dp_agd_initial_budgets``'s ``calibration``
_SPLITS = {"equal": "pure", "classical": "classical"}
#: DPAGD's ``noisy_max`` options; "authors" (argmin(Omega + Exp)) is NOT PRIVATE at the charged budget
_NOISY_MAX = ("laplace", "exponential", "authors")


def _normalise(v: np.ndarray) -> np.ndarray:
    """Rows of ``v`` scaled to unit norm (zero rows stay 0); overflow-free norms."""
    norms = _row_norms(v)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(norms > 0, v / norms, 0.0)


#: entries of the (trials, candidates, n) score tensor evaluated at once
SCORE_ENTRIES = 2_000_000


def _logistic_value(z, y):
    """log(1 + e^z) - y z as max(z, 0) + log1p(e^-|z|) - y z (stable, ~5x faster than logaddexp)."""
    return np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z))) - y * z


@dataclass
class _AGDState:
    """The batched state of ``trials`` DP-AGD runs (Lee and Kifer 2018, Algorithm 2): row t is trial t."""

    budget: ZCDPFilterBank  # every charge is drawn here BEFORE its release
    w: np.ndarray
    rho_ng: np.ndarray      # the gradient budget of the current measurement
    phase: np.ndarray       # 0: needs a gradient, 1: needs a selection, 2: stopped
    g_clean: np.ndarray     # clipped sum g at the current w
    g_est: np.ndarray       # current unnormalised noisy estimate
    alpha_max: np.ndarray
    history: np.ndarray     # last tau accepted step sizes (ring buffer)
    accepted: np.ndarray
    n_grad: np.ndarray
    n_select: np.ndarray
    n_avg: np.ndarray
    stop_charge: np.ndarray  # the charge that did not fit

    @classmethod
    def start(cls, trials: int, d: int, total: float, rho_ng0: float, alpha_max: float, tau: int) -> _AGDState:
        from dpaudit.bounds.dp_agd import ZCDPFilterBank

        count = np.zeros(trials, dtype=np.int64)
        return cls(ZCDPFilterBank(total, trials), np.zeros((trials, d)), np.full(trials, rho_ng0),
                   np.zeros(trials, dtype=np.int8), np.zeros((trials, d)), np.zeros((trials, d)),
                   np.full(trials, alpha_max), np.zeros((trials, tau)), count.copy(), count.copy(), count.copy(),
                   count.copy(), np.zeros(trials))

    def stop(self, idx, charge) -> None:
        """Trials ``idx`` stop: their next ``charge`` does not fit in the budget."""
        self.phase[idx], self.stop_charge[idx] = 2, charge

    def charge(self, idx, rho) -> np.ndarray:
        """Draw ``rho[idx]`` from the budget of trials ``idx``; the ones it does not fit stop. The trials charged."""
        if not idx.size:
            return idx
        fits = self.budget.request(idx, rho[idx])
        self.stop(idx[~fits], rho[idx][~fits])
        return idx[fits]


class DPAGD(Optimizer):
    """DP-AGD (Algorithm 2 of Lee & Kifer 2018); see the module docstring."""

    name = "dp-agd"
    max_canaries = 1
    hyperparameters = (
        LOSS_HP,
        HyperParameter("epsilon", float, 1.0, 0, None, "target epsilon of the total budget (eq. (5))",
                       low_open=True),
        HyperParameter("delta", float, 1e-8, 0, 1, "target delta of the total budget (eq. (5))", low_open=True,
                       high_open=True),
        HyperParameter("clip", float, 3.0, 0, None, "per-example gradient clipping norm C_grad", low_open=True),
        HyperParameter("clip_obj", float, 3.0, 0, None, "per-example loss clipping bound C_obj of the step-size "
                       "scores", low_open=True),
        HyperParameter("splits", int, 60, 1, None, "budget splits: eps_nmax = eps_ng = epsilon / (2 splits)"),
        HyperParameter("budget_increase", float, 0.1, 0, None, "gamma: rho_ng grows by (1 + gamma) after a rejected "
                       "step", low_open=True),
        HyperParameter("grid_size", int, 20, 2, None, "number of candidate step sizes in Phi (index 0 is 0)"),
        HyperParameter("alpha_max", float, 2.0, 0, None, "initial largest step size", low_open=True),
        HyperParameter("tau", int, 10, 1, None, "accepted steps between updates of alpha_max"),
        HyperParameter("alpha_growth", float, 0.1, 0, None, "eta: alpha_max <- (1 + eta) max(last tau step sizes)"),
        HyperParameter("alpha_cap", float, None, 0, None, "cap on alpha_max (None: uncapped, the paper; 2.0: the "
                       "authors' code)", low_open=True, optional=True),
        HyperParameter("l2", float, 0.0, 0, None, "L2 regularisation (l2/2)||w||^2 in the objective"),
        HyperParameter("noise", bool, True, help="add the noise (False: no privacy guarantee, for tests)"),
        HyperParameter("budget_split", str, "classical", help="rho_ng of the gradient: 'classical' (the authors' "
                       "code) or 'equal' (rho_ng = rho_nmax, the paper text)", choices=tuple(_SPLITS)),
        HyperParameter("noisy_max", str, "laplace", help="step-size selection noise: 'laplace' (paper), "
                       "'exponential' (permute-and-flip), 'authors' (NOT PRIVATE, claim inf)", choices=_NOISY_MAX),
        HyperParameter("applied_step", str, "chosen", help="step applied after a selection: 'chosen' (alpha_i, "
                       "paper) or 'previous' (alpha_{i-1}, the authors' code)", choices=("chosen", "previous")),
        HyperParameter("record_charges", bool, False, help="record every budget charge in run.extra"),
    )
    #: the public reference code's choices (ppmlguy/DP-AGD; the module docstring's choices 1, 3, 4, 5)
    REFERENCE_CODE = {"noisy_max": "exponential", "applied_step": "previous", "grid_size": 21, "alpha_cap": 2.0}

    def _validate(self):
        self.loss = get_loss(self.hp["loss"])

    @property
    def neighbouring(self) -> str:
        return "add_remove"

    @property
    def rho(self) -> float:
        """Total zCDP budget from eq. (5) (``dpaudit.bounds.dp_agd_budget``)."""
        from dpaudit.bounds.dp_agd import dp_agd_budget
        return float(dp_agd_budget(self.hp["epsilon"], self.hp["delta"]))

    @property
    def initial_budgets(self) -> tuple[float, float]:
        """(rho_nmax, rho_ng) at the start."""
        return initial_budgets(self.hp["epsilon"], self.hp["delta"], self.hp["splits"], self.hp["budget_split"])

    @property
    def noise_scale(self) -> float:
        """Initial gradient-noise standard deviation C_grad / sqrt(2 rho_ng)."""
        return self.hp["clip"] / math.sqrt(2.0 * self.initial_budgets[1])

    def claim(self, n: int):
        """rho-zCDP (add/remove) with rho = dp_agd_budget(epsilon, delta); independent of n."""
        check_count("n", n, minimum=1)
        if not self.hp["noise"]:
            return no_guarantee_claim("add_remove", "noise switched off")
        if self.hp["noisy_max"] == "authors":
            return no_guarantee_claim(
                "add_remove", "NOT PRIVATE: noisy_max='authors' (argmin(Omega + Exp), the authors' code) loses up "
                              "to (m - 1) times the charged NoisyMax epsilon; the zCDP charge does not cover it")
        rho = self.rho
        return accountant_claim(
            "zcdp", ZCDPStatement(rho, "DP-AGD total budget"), 1, neighbouring="add_remove", source="zcdp",
            description=f"DP-AGD (Lee & Kifer 2018): total budget rho={rho:.6g} from eq. (5) at "
                        f"epsilon={self.hp['epsilon']:g}, delta={self.hp['delta']:g}; add_remove",
            details={"rho": rho, "epsilon": self.hp["epsilon"], "delta": self.hp["delta"]})

    # -- helpers ----------------------------------------------------------------------
    def _clipped_sum(self, X, y, row_norms, w, g_c):
        """g = sum_i clip_{C_grad}(grad l(w; d_i)) per trial (line 5), plus the canary's clipped gradient."""
        with np.errstate(over="ignore", invalid="ignore"):
            scalars = self.loss.derivative(w @ X.T, y)
        C = self.hp["clip"]
        # scalars * min(1, C / (|scalars| ||x_i||)) written as a clip of the scalar to
        # +-C/||x_i|| (no overflow of |scalars| ||x_i|| for huge records; C/0 = inf: no clipping)
        with np.errstate(divide="ignore"):
            bound = C / row_norms
        total = (X.T @ np.clip(scalars, -bound, bound).T).T
        if g_c is not None:
            total = total + g_c
        return total

    def _losses(self, z, y):
        if type(self.loss) is Logistic:
            return _logistic_value(z, y)
        return self.loss.value(z, y)

    def _scores(self, X, y, w, direction, alphas):
        """Omega[k, j] = sum_i min(l(w_k - alphas[k, j] direction_k; d_i), C_obj) (+ regulariser) (line 10)."""
        z = w @ X.T
        dz = direction @ X.T
        c_obj, l2 = self.hp["clip_obj"], self.hp["l2"]
        k, m = alphas.shape
        n = z.shape[1]
        out = np.empty((k, m))
        block = max(1, SCORE_ENTRIES // max(1, m * n))
        for s in range(0, k, block):
            sl = slice(s, s + block)
            zz = z[sl, None, :] - alphas[sl, :, None] * dz[sl, None, :]
            losses = self._losses(zz, y)
            # a loss undefined by overflow (inf - inf) counts as C_obj, the largest clipped loss:
            # every record's term stays in [0, C_obj], as the NoisyMax sensitivity argument needs
            losses = np.where(np.isnan(losses), c_obj, losses)
            out[sl] = np.minimum(losses, c_obj).sum(axis=2)
        if l2 > 0:  # data-independent (public) term; may be +inf for enormous steps
            moved = w[:, None, :] - alphas[:, :, None] * direction[:, None, :]
            out += 0.5 * l2 * np.sum(moved**2, axis=2)
        return out

    def _select(self, scores, rng, scale):
        """NoisyMax(-Omega, C_obj, sqrt(2 rho_nmax)) (line 12): index of the selected step size per trial.

        ``"laplace"`` (paper): argmax_j (-Omega_j + Lap(scale)); ``"exponential"``: argmax_j (-Omega_j + Exp(scale)),
        report-noisy-max with exponential noise = permute-and-flip (Ding et al. 2021). Both are C_obj/scale-DP for
        monotone scores (checked exactly in tests/optimizers/test_dp_agd_rgm_gd_utility.py). ``"authors"``: the reference code's
        argmin_j (Omega_j + Exp(scale)) (noise added to the cost), NOT PRIVATE at the charge: its privacy loss
        reaches (m - 1) C_obj/scale with m candidates, so the claim of that variant is "no guarantee".
        Ties (noise off) go to the smallest index.
        """
        if not self.hp["noise"]:
            return np.argmin(scores, axis=1)
        if self.hp["noisy_max"] == "laplace":
            return np.argmax(-scores + rng.laplace(0.0, scale, size=scores.shape), axis=1)
        if self.hp["noisy_max"] == "authors":       # NOT PRIVATE at the charge (see the module docstring)
            return np.argmin(scores + rng.exponential(scale, size=scores.shape), axis=1)
        return np.argmax(-scores + rng.exponential(scale, size=scores.shape), axis=1)

    # -- run --------------------------------------------------------------------------
    def _step_budgets(self):
        """The per-step charges of a run, checked: ``(total rho, initial gradient rho, NoisyMax scale, NoisyMax
        charge)``; a ValueError names the hyper-parameters when a budget underflows or a scale overflows."""
        from dpaudit.bounds.dp_agd import noisy_max_charge, noisy_max_scale

        C, c_obj, total = self.hp["clip"], self.hp["clip_obj"], self.rho
        rho_nmax, rho_ng0 = self.initial_budgets
        if not (math.isfinite(rho_nmax) and math.isfinite(rho_ng0)):
            raise ValueError(f"epsilon={self.hp['epsilon']:g} with splits={self.hp['splits']} gives per-step budgets "
                             "beyond the float range")
        if not (rho_nmax > 0 and rho_ng0 > 0 and total > 0):
            raise ValueError(f"epsilon={self.hp['epsilon']:g} with splits={self.hp['splits']} gives per-step budgets "
                             "that underflow to 0: no step can be charged")
        if self.hp["noise"] and not math.isfinite(C / math.sqrt(2.0 * rho_ng0)):
            raise ValueError(f"clip={C:g} / sqrt(2 rho_ng) (the gradient noise std at epsilon="
                             f"{self.hp['epsilon']:g}) overflows the float range")
        lap_scale = noisy_max_scale(rho_nmax, c_obj)
        if not math.isfinite(lap_scale):
            raise ValueError(f"clip_obj={c_obj:g} / sqrt(2 rho_nmax) (the NoisyMax Laplace scale at epsilon="
                             f"{self.hp['epsilon']:g}) overflows the float range")
        return total, rho_ng0, lap_scale, noisy_max_charge(lap_scale, c_obj, neighbouring="add_remove")

    def _measure(self, st: _AGDState, X, y, row_norms, g_c, rng) -> None:
        """Lines 5-8: a noisy clipped gradient for every trial that needs one and whose budget still fits."""
        from dpaudit.bounds.dp_agd import gradient_noise_sigma

        idx = st.charge(np.flatnonzero(st.phase == 0), st.rho_ng)
        if idx.size:
            st.n_grad[idx] += 1
            g = self._clipped_sum(X, y, row_norms, st.w[idx], g_c)
            st.g_clean[idx] = g
            if self.hp["noise"]:   # finite: checked at the start, and rho_ng only grows
                g = g + rng.standard_normal(g.shape) * gradient_noise_sigma(st.rho_ng[idx], self.hp["clip"])[:, None]
            st.g_est[idx] = g
            st.phase[idx] = 1

    def _accept(self, st: _AGDState, acc, alphas, choice, direction) -> None:
        """Line 14: move the trials whose NoisyMax chose a positive step (the reference code applies alpha_{i-1});
        every ``tau`` accepted steps, alpha_max follows the largest recent step (lines 20-22)."""
        tau, growth = self.hp["tau"], self.hp["alpha_growth"]
        a = alphas[np.arange(acc.size), choice]
        applied = a if self.hp["applied_step"] != "previous" else alphas[np.arange(acc.size), choice - 1]
        st.w[acc] = st.w[acc] - applied[:, None] * direction
        st.history[acc, st.accepted[acc] % tau] = a
        st.accepted[acc] += 1
        st.phase[acc] = 0
        renew = acc[st.accepted[acc] % tau == 0]
        if renew.size:
            st.alpha_max[renew] = np.minimum((1.0 + growth) * st.history[renew].max(axis=1), np.finfo(float).max)
            if self.hp["alpha_cap"] is not None:
                st.alpha_max[renew] = np.minimum(st.alpha_max[renew], self.hp["alpha_cap"])

    def _average(self, st: _AGDState, rej, rng) -> None:
        """Lines 16-19: GradAvg -- a fresh measurement with a larger budget, averaged with the old one."""
        from dpaudit.bounds.dp_agd import gradavg, gradavg_charge

        rho_old = st.rho_ng[rej]
        # (1 + gamma) rho_old, at least one ulp above rho_old (a budget increase below float resolution would
        # buy nothing and stall)
        rho_new = np.maximum((1.0 + self.hp["budget_increase"]) * rho_old, np.nextafter(rho_old, np.inf))
        charge = gradavg_charge(rho_old, rho_new)
        fits = st.budget.request(rej, charge)
        st.stop(rej[~fits], charge[~fits])
        rej, rho_old, rho_new = rej[fits], rho_old[fits], rho_new[fits]
        if not rej.size:
            return
        st.n_avg[rej] += 1
        if self.hp["noise"]:
            st.g_est[rej], _ = gradavg(rho_old, rho_new, st.g_clean[rej], st.g_est[rej], self.hp["clip"], rng=rng)
        else:
            st.g_est[rej] = (rho_old[:, None] * st.g_est[rej] + (rho_new - rho_old)[:, None] * st.g_clean[rej]) \
                / rho_new[:, None]
        st.rho_ng[rej] = rho_new

    def _select_steps(self, st: _AGDState, X, y, rng, lap_scale, nmax_charge, unit_grid) -> None:
        """Lines 9-19: for every trial with a fresh gradient whose NoisyMax charge fits, choose a step size on the
        grid; accept a positive one, else average the gradient with a new measurement."""
        idx = np.flatnonzero(st.phase == 1)
        if not idx.size:
            return
        idx = st.charge(idx, np.full(st.phase.size, nmax_charge))
        if not idx.size:
            return
        st.n_select[idx] += 1
        direction = _normalise(st.g_est[idx] + self.hp["l2"] * st.w[idx])
        alphas = st.alpha_max[idx, None] * unit_grid[None, :]
        choice = self._select(self._scores(X, y, st.w[idx], direction, alphas), rng, lap_scale)
        ok = choice > 0
        if np.any(ok):
            self._accept(st, idx[ok], alphas[ok], choice[ok], direction[ok])
        if np.any(~ok):
            self._average(st, idx[~ok], rng)

    @np.errstate(over="ignore", invalid="ignore", divide="ignore")
    def run(self, X, y, *, trials=1, seed=None, canary_gradient=None) -> Run:
        """Run ``trials`` independent DP-AGD trainings (see the module docstring).

        Extreme hyper-parameters can overflow intermediate quantities (huge step-size grids,
        scores of huge records): overflowed losses count as C_obj (privacy unaffected), the
        step-size grid is capped at the largest float, and parameters that left the float range
        are refused (ValueError) rather than released.
        """
        X, y = check_data(X, y)
        y = self.loss.prepare_labels(y)
        trials = check_count("trials", trials, minimum=1)
        n, d = X.shape
        g_c = self._check_canary(canary_gradient, d)
        if g_c is not None:
            norm = l2_norm(g_c)
            if norm > self.hp["clip"]:
                g_c = g_c * (self.hp["clip"] / norm)
        rng = make_rng(seed)
        row_norms = _row_norms(X)
        total, rho_ng0, lap_scale, nmax_charge = self._step_budgets()
        unit_grid = np.linspace(0.0, 1.0, self.hp["grid_size"])
        st = _AGDState.start(trials, d, total, rho_ng0, self.hp["alpha_max"], self.hp["tau"])
        while np.any(st.phase < 2):
            self._measure(st, X, y, row_norms, g_c, rng)
            self._select_steps(st, X, y, rng, lap_scale, nmax_charge, unit_grid)
        log = st.budget.histories() if self.hp["record_charges"] else None
        extra_info = {"n": n, "rho_total": total, "spent": st.budget.spent, "steps": st.accepted,
                      "gradient_measurements": st.n_grad, "selections": st.n_select, "gradavg": st.n_avg,
                      "final_rho_ng": st.rho_ng, "alpha_max": st.alpha_max, "stop_charge": st.stop_charge,
                      "remaining": st.budget.remaining, "charges": log}
        check_finite_params(st.w, self.name, ("alpha_max", "alpha_growth", "X"))
        return Run(params=st.w, claim=self.claim(n), extra=extra_info)
