"""DP-GD and DP-SGD: per-example clipping plus Gaussian noise, batched over trials.

Update (Abadi et al. 2016, "Deep learning with differential privacy", Algorithm 1; full batch
for DP-GD, Poisson subsampling for DP-SGD as in Mironov, Talwar, Zhang 2019):

    S_t      = sum_{i in batch_t} clip_C(grad l(theta_t; x_i))     clip_C(g) = g / max(1, ||g|| / C)
    theta_t+1 = theta_t - step_size * ( (S_t + N(0, (noise_multiplier * C)^2 I)) / m + l2 * theta_t )

with m = n for DP-GD and m = sample_rate * n (the expected batch size, a public constant) for
DP-SGD; n is the number of rows of ``X``. The regulariser gradient ``l2 * theta`` is added after the
noise: it does not depend on the data. ``theta_0 = 0``.

Privacy: each step releases a Gaussian mechanism on the clipped sum, whose L2 sensitivity is C
under add/remove and 2C under replace-one (a record is swapped: two clipped terms change). DP-GD:
``steps``-fold composition of ``Gaussian(noise_multiplier*C, sensitivity)``; DP-SGD:
``steps``-fold composition of ``PoissonSampled(Gaussian(noise_multiplier*C, C), sample_rate)``
(add/remove only: the amplification theorem used is for Poisson sampling with add/remove
neighbours, Mironov-Talwar-Zhang 2019). The accountant (RDP by default) turns that into the claim.

White-box canary (Nasr et al. 2023): ``canary_gradient`` adds one extra record whose per-example
gradient is that constant vector at every step; it is clipped like any record and, in DP-SGD,
included with probability ``sample_rate`` independently at each step and trial. The normaliser m
stays the one of the n rows of ``X``, so runs with and without the canary differ exactly by the
canary's (clipped) contribution to S_t: the add/remove pair the claim covers.

Many canaries (one-run auditing, Steinke, Nasr, Jagielski 2023, arXiv:2305.08846):
``canary_gradients`` of shape (m, dim) with ``canary_mask`` of shape (trials, m) (booleans, the
auditor's inclusion coins, drawn by the caller) add, in trial t, one extra record per canary j with
``canary_mask[t, j]`` whose per-example gradient is the constant row ``canary_gradients[j]`` at
every step; each row is clipped to C on its own and, in DP-SGD, each included canary is Poisson
sampled at rate ``sample_rate`` independently per step, canary and trial, exactly like a record.
The normaliser is still that of the n rows of ``X``, so adding or removing canary j changes S_t by
its clipped gradient alone: the run is (epsilon, delta)-DP with respect to every canary under the
add/remove claim, whatever the other canaries do. The single-canary path is unchanged (same seed,
same parameters); with ``canary_gradients`` the chunks hold at most CHUNK_ENTRIES / (n + m) trials
and DP-SGD draws, per step, the record mask, then the canary mask, then the noise.

Batching: all trials advance together (``theta`` has shape (trials, d)); the Poisson mask is a
(trials, n) Bernoulli array per step. Trials are processed in chunks bounding the (chunk, n)
arrays to a few million entries; each chunk has its own child SeedSequence, so a seed gives the same
result for a given ``trials`` whatever the machine.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from dpaudit.core.numeric import l2_norm
from dpaudit.core.runner import chunk_sizes
from dpaudit.core.seeds import as_seed_sequence
from dpaudit.core.validation import check_count
from dpaudit.mechanisms.gaussian import Gaussian
from dpaudit.mechanisms.subsampled import PoissonSampled
from dpaudit.optimizers.base import (
    NEIGHBOURING_HP,
    HyperParameter,
    Optimizer,
    Run,
    accountant_claim,
    check_data,
    check_finite_params,
    no_guarantee_claim,
)
from dpaudit.optimizers.losses import LOSS_HP, clipped_gradient_sum, get_loss
from dpaudit.optimizers.losses import row_norms as _row_norms

__all__ = ["DPGD", "DPSGD", "trial_chunks"]

#: target number of (trial, record) entries per chunk
CHUNK_ENTRIES = 4_000_000


def trial_chunks(trials: int, n: int, entries: int = CHUNK_ENTRIES) -> list[int]:
    """Split ``trials`` into chunks of at most ``max(1, entries // n)`` trials
    (:func:`~dpaudit.core.runner.chunk_sizes`)."""
    return chunk_sizes(trials, max(1, entries // max(n, 1)))


class _ClippedNoisyDescent(Optimizer):
    """Shared machinery of DP-GD and DP-SGD."""

    #: the hyper-parameters DP-GD and DP-SGD share (defaults of DP-GD)
    COMMON = (
        LOSS_HP,
        HyperParameter("steps", int, 100, 0, None, "number of gradient steps"),
        HyperParameter("step_size", float, 0.5, 0, None, "learning rate", low_open=True),
        HyperParameter("clip", float, 1.0, 0, math.inf, "per-example L2 clipping norm C (inf: no clipping, "
                       "only with noise_multiplier 0)", low_open=True, high_open=False),
        HyperParameter("noise_multiplier", float, 10.0, 0, None, "noise standard deviation divided by the clipping "
                       "norm (Opacus' noise_multiplier)"),
        HyperParameter("l2", float, 0.0, 0, None, "L2 regularisation coefficient"),
        NEIGHBOURING_HP,
        HyperParameter("accountant", str, "rdp", help="accountant composing the claim", choices=("rdp", "pld")),
    )

    #: ``run`` accepts one ``canary_gradient``, or ``canary_gradients`` (m, dim) with a (trials, m) inclusion mask
    max_canaries = math.inf
    _sampled = False

    def _validate(self):
        self.loss = get_loss(self.hp["loss"])
        nm, clip = self.hp["noise_multiplier"], self.hp["clip"]
        if math.isinf(clip) and nm > 0:
            raise ValueError(
                "clip must be finite when noise_multiplier > 0 (the noise std is noise_multiplier * clip); "
                "clip=inf means no clipping and is only meaningful with noise_multiplier=0 (no guarantee)")
        if nm > 0 and not math.isfinite(nm * clip):
            raise ValueError(f"noise_multiplier * clip must be finite (the noise std), got {nm:g} * {clip:g}")

    # -- introspection ---------------------------------------------------------------
    @property
    def clip(self) -> float:
        return self.hp["clip"]

    @property
    def noise_std(self) -> float:
        """Standard deviation of the noise added to the clipped gradient sum, per coordinate
        (0 without noise, also when clip = inf: no clipping, no noise)."""
        nm = self.hp["noise_multiplier"]
        return 0.0 if nm == 0 else nm * self.hp["clip"]

    @property
    def noise_scale(self) -> float:
        return self.noise_std

    @property
    def sensitivity(self) -> float:
        """L2 sensitivity of the clipped sum under the optimizer's neighbouring relation."""
        return self.clip * (2.0 if self.neighbouring == "replace_one" else 1.0)

    def _sample_rate(self) -> float:
        return 1.0

    def _normaliser(self, n: int) -> float:
        return float(n)

    # -- run -------------------------------------------------------------------------
    def _check_canaries(self, canary_gradients, canary_mask, trials: int, dim: int):
        """Validate the (m, dim) canary gradients and the (trials, m) inclusion mask; clip each row to C."""
        G = np.asarray(canary_gradients, dtype=float)
        if G.ndim != 2 or G.shape[0] < 1 or G.shape[1] != dim or not np.all(np.isfinite(G)):
            raise ValueError(f"canary_gradients must be a finite array of shape (m, {dim}) with m >= 1, "
                             f"got shape {G.shape}")
        m = G.shape[0]
        if canary_mask is None:
            raise ValueError("canary_mask (shape (trials, m), the auditor's inclusion coins) must be given "
                             "with canary_gradients")
        mask = np.asarray(canary_mask)
        if mask.dtype != bool:
            raise ValueError(f"canary_mask must be a boolean array, got dtype {mask.dtype}")
        if mask.shape != (trials, m):
            raise ValueError(f"canary_mask must have shape (trials, m) = ({trials}, {m}), got {mask.shape}")
        if math.isfinite(self.clip):
            norms = l2_norm(G, axis=1, keepdims=True)
            G = G * np.minimum(1.0, self.clip / np.where(norms > 0, norms, 1.0))
        return G, mask

    def run(self, X, y, *, trials=1, seed=None, canary_gradient=None, canary_gradients=None,
            canary_mask=None) -> Run:
        """Run ``trials`` independent trainings (see the module docstring for the canary arguments).

        ``canary_gradient`` (dim,): one canary present in every trial. ``canary_gradients`` (m, dim)
        with ``canary_mask`` (trials, m) booleans: canary j is a record of trial t iff
        ``canary_mask[t, j]``. The two forms cannot be combined.
        """
        X, y = check_data(X, y)
        y = self.loss.prepare_labels(y)
        trials = check_count("trials", trials, minimum=1)
        n, d = X.shape
        if canary_gradients is not None:
            if canary_gradient is not None:
                raise ValueError("give canary_gradient or canary_gradients, not both")
            G, mask = self._check_canaries(canary_gradients, canary_mask, trials, d)
            return self._run_canaries(X, y, trials, seed, G, mask)
        if canary_mask is not None:
            raise ValueError("canary_mask is only used with canary_gradients")
        g_c = self._check_canary(canary_gradient, d)
        if g_c is not None and math.isfinite(self.clip):
            norm = l2_norm(g_c)
            if norm > self.clip:
                g_c = g_c * (self.clip / norm)
        row_norms = _row_norms(X)
        sizes = trial_chunks(trials, n)
        children = as_seed_sequence(seed, generator=True).spawn(len(sizes))
        out = np.empty((trials, d))
        start = 0
        # overflow can only come from divergent iterates (huge step_size / noise): it is detected
        # below and refused with a ValueError rather than released as inf/NaN
        with np.errstate(over="ignore", invalid="ignore"):
            for size, child in zip(sizes, children):
                out[start:start + size] = self._run_chunk(X, y, row_norms, size, np.random.default_rng(child), g_c)
                start += size
        check_finite_params(out, self.name, ("step_size", "noise_multiplier", "l2"))
        return Run(params=out, claim=self.claim(n), extra={"n": n, "canary": g_c is not None})

    def _run_canaries(self, X, y, trials, seed, G, mask) -> Run:
        n, d = X.shape
        m = G.shape[0]
        row_norms = _row_norms(X)
        sizes = trial_chunks(trials, n + m)
        children = as_seed_sequence(seed, generator=True).spawn(len(sizes))
        out = np.empty((trials, d))
        start = 0
        with np.errstate(over="ignore", invalid="ignore"):
            for size, child in zip(sizes, children):
                out[start:start + size] = self._run_canary_chunk(X, y, row_norms, size, np.random.default_rng(child),
                                                                 G, mask[start:start + size])
                start += size
        check_finite_params(out, self.name, ("step_size", "noise_multiplier", "l2"))
        return Run(params=out, claim=self.claim(n),
                   extra={"n": n, "canary": False, "canaries": m, "canaries_included": mask.sum(axis=1)})

    @staticmethod
    def _canary_adder(G):
        """``add(total, W)``: ``total += W @ G`` for a (trials, m) 0/1 weight W.

        Dirac canaries on distinct coordinates (one non-zero per row, distinct columns) are added by
        indexing, which gives the same numbers as the product (each column sums one term) at O(trials m)
        instead of O(trials m dim).
        """
        rows, cols = np.nonzero(G)
        if rows.size == G.shape[0] and np.array_equal(rows, np.arange(G.shape[0])) and np.unique(cols).size == cols.size:
            vals = G[rows, cols]

            def add(total, W):
                total[:, cols] += W * vals
        else:
            def add(total, W):
                total += W @ G
        return add

    def _run_canary_chunk(self, X, y, row_norms, trials, rng, G, cmask):
        """``_run_chunk`` with many canaries; data gradients only on the columns where some row of X is non-zero."""
        n, d = X.shape
        q = self._sample_rate()
        m = self._normaliser(n)
        eta, l2, clip = self.hp["step_size"], self.hp["l2"], self.clip
        std = self.noise_std
        active = np.flatnonzero(np.any(X != 0.0, axis=0))  # other columns get no data gradient
        Xa = X[:, active]
        add = self._canary_adder(G)
        fixed = None
        if not self._sampled:  # full batch: the same canary sum at every step
            fixed = np.zeros((trials, d))
            add(fixed, cmask.astype(float))
        theta = np.zeros((trials, d))
        for _ in range(self.hp["steps"]):
            scalars = self.loss.derivative(theta[:, active] @ Xa.T, y)
            mask = rng.random((trials, n)) < q if self._sampled else None
            data, _ = clipped_gradient_sum(Xa, scalars, row_norms, clip, weights=mask)
            if fixed is not None:
                total = fixed.copy()
            else:
                total = np.zeros((trials, d))
                add(total, ((rng.random(cmask.shape) < q) & cmask).astype(float))
            total[:, active] += data
            if std > 0:
                total += rng.standard_normal((trials, d)) * std
            theta = theta - eta * (total / m + l2 * theta)
        return theta

    def _run_chunk(self, X, y, row_norms, trials, rng, g_c):
        n, d = X.shape
        q = self._sample_rate()
        m = self._normaliser(n)
        eta, l2, clip = self.hp["step_size"], self.hp["l2"], self.clip
        std = self.noise_std
        theta = np.zeros((trials, d))
        for _ in range(self.hp["steps"]):
            scalars = self.loss.derivative(theta @ X.T, y)
            mask = None
            if self._sampled:
                mask = rng.random((trials, n)) < q
            total, _ = clipped_gradient_sum(X, scalars, row_norms, clip, weights=mask)
            if g_c is not None:
                if self._sampled:
                    total += (rng.random(trials) < q)[:, None] * g_c
                else:
                    total += g_c
            if std > 0:
                total += rng.standard_normal((trials, d)) * std
            theta = theta - eta * (total / m + l2 * theta)
        return theta


class DPGD(_ClippedNoisyDescent):
    """Full-batch DP-GD (see the module docstring).

    ``clip=inf`` means no clipping; it is accepted only with ``noise_multiplier=0`` (plain
    gradient descent, claim epsilon = inf), since the noise std is ``noise_multiplier * clip``:
    any positive multiplier with ``clip=inf`` raises ValueError naming clip.
    """

    name = "dp-gd"
    # noise_multiplier 10 over 100 full-batch steps is one Gaussian with multiplier 1: epsilon(1e-5)
    # = 4.38 exactly (4.73 by RDP), a budget worth auditing; multiplier 1 would claim epsilon ~ 96.
    hyperparameters = _ClippedNoisyDescent.COMMON

    def claim(self, n: int):
        """``steps``-fold composition of the Gaussian mechanism on the clipped sum (independent of n)."""
        check_count("n", n, minimum=1)
        nm = self.hp["noise_multiplier"]
        mech, steps = self.step_mechanism()
        if mech is None:
            return no_guarantee_claim(self.neighbouring, "noise_multiplier = 0 or no clipping")
        return accountant_claim(
            self.hp["accountant"], mech, steps, neighbouring=self.neighbouring,
            description=f"DP-GD: {steps} x Gaussian(noise multiplier {nm:g} w.r.t. sensitivity "
                        f"{'2C' if self.neighbouring == 'replace_one' else 'C'}), {self.neighbouring}",
            details={"mechanism": mech.describe(), "steps": steps})

    def step_mechanism(self):
        """The Gaussian mechanism on the clipped sum (None without noise or clipping)."""
        if self.hp["noise_multiplier"] == 0 or math.isinf(self.clip):
            return None, self.hp["steps"]
        return Gaussian(sigma=self.noise_std, sensitivity=self.sensitivity, neighbouring=self.neighbouring), \
            self.hp["steps"]


class DPSGD(_ClippedNoisyDescent):
    """DP-SGD with Poisson subsampling at rate ``sample_rate`` (see the module docstring)."""

    name = "dp-sgd"
    _sampled = True
    hyperparameters = tuple(
        p.with_default(1.0) if p.name == "noise_multiplier" else p for p in _ClippedNoisyDescent.COMMON[:5]
    ) + (
        HyperParameter("sample_rate", float, 0.1, 0, 1, "Poisson sampling rate q of each record at each step "
                       "(Opacus' sample_rate; expected batch size q n)", low_open=True, deprecated=("sampling_rate",)),
        _ClippedNoisyDescent.COMMON[5],  # l2
        dataclasses.replace(NEIGHBOURING_HP, choices=("add_remove",),
                            help="neighbouring relation of the claim: add_remove only (Poisson amplification "
                                 "is stated for add/remove neighbours)"),
        *_ClippedNoisyDescent.COMMON[7:],
    )

    def _sample_rate(self) -> float:
        return self.hp["sample_rate"]

    def _normaliser(self, n: int) -> float:
        return self.hp["sample_rate"] * n

    def claim(self, n: int):
        """``steps``-fold composition of the Poisson-subsampled Gaussian (add/remove)."""
        check_count("n", n, minimum=1)
        nm, q = self.hp["noise_multiplier"], self.hp["sample_rate"]
        mech, steps = self.step_mechanism()
        if mech is None:
            return no_guarantee_claim(self.neighbouring, "noise_multiplier = 0 or no clipping")
        return accountant_claim(
            self.hp["accountant"], mech, steps, neighbouring="add_remove",
            description=f"DP-SGD: {steps} x PoissonSampled(Gaussian(noise multiplier {nm:g}), q={q:g}), add_remove",
            details={"mechanism": mech.describe(), "steps": steps, "sample_rate": q})

    def step_mechanism(self):
        """The Poisson-subsampled Gaussian mechanism on the clipped sum (add/remove)."""
        if self.hp["noise_multiplier"] == 0 or math.isinf(self.clip):
            return None, self.hp["steps"]
        return PoissonSampled(Gaussian(sigma=self.noise_std, sensitivity=self.clip), self.hp["sample_rate"]), \
            self.hp["steps"]
