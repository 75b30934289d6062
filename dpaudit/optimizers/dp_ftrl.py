"""DP-FTRL / DP matrix-factorization SGD: per-example clipping plus correlated noise, batched over trials.

Update (Kairouz et al. 2021, arXiv:2103.00039; Denisov, McMahan, Rush, Smith, Thakurta 2022,
arXiv:2202.08312; Choquette-Choo, McMahan, Rush, Thakurta 2023, arXiv:2211.06530, Alg. 1): the
``steps`` steps are ``epochs`` passes over the data in a fixed order -- with b = steps / epochs
batches, record i belongs to batch i mod b and step t uses batch t mod b -- and

    g_t       = sum_{i in batch_t} clip_C(grad l(theta_t; x_i))
    g~_t      = g_t + (C^{-1} z)_t,   z_t ~ N(0, (noise_multiplier * C)^2 I)   (the strategy's noise stream)
    theta_t+1 = theta_t - step_size * ( g~_t / m + l2 * theta_t ),            m = n / b (the batch size)

The noisy gradients g~ are the release ``x + C^{-1} z`` of the matrix-factorization mechanism
(:class:`~dpaudit.mechanisms.matrix_factorization.MatrixFactorization`); the iterates (and their prefix
sums, A g~) are post-processing, and with a lower-triangular C the adaptive choice of the gradients
has the privacy of the non-adaptive Gaussian mechanism (Denisov et al. 2022, Thm. 2.1). Each record
takes part in the steps of its batch: (epochs, b)-fixed-epoch participation, so the claim is one
Gaussian mechanism at sens(C, fixed_epoch(epochs)) * clip / (noise_multiplier * clip) (twice the clip
under replace-one), composed by the accountant (PLD by default, exact for the Gaussian).

Strategies (``strategy``): ``"blt"`` (optimised BLT with ``buffers`` buffers, noise O(buffers) memory),
``"banded"`` (optimised banded Toeplitz with ``bands`` bands), ``"identity"`` (DP-SGD noise), ``"prefix"``
(independent noise per prefix sum), or any :class:`~dpaudit.mechanisms.mf_strategies.Strategy` of
``steps`` steps; optimised strategies minimise the mean prefix-sum error under the run's participation
schema (:mod:`dpaudit.mechanisms.mf_optimize`) and are cached per (kind, steps, size, epochs).

Amplification (``sample_rate`` q < 1): within its step, each record of the step's batch (and the
canary) is included independently with probability q -- cyclic Poisson sampling over the b batches.
With a b'-banded C, b' <= b, the claim is ``epochs`` compositions of the Poisson-subsampled Gaussian
(Choquette-Choo et al. 2023, arXiv:2306.08153, Thm. 4; :func:`~dpaudit.accounting.matrix_mechanism.banded_cyclic_poisson`);
other strategies are refused with q < 1.

White-box canary (Nasr et al. 2023): ``canary_gradient`` is one extra record of batch 0 (steps 0, b,
2b, ...: the worst fixed-epoch pattern for a strategy with non-negative Toeplitz coefficients,
:mod:`~dpaudit.mechanisms.mf_participation`) whose per-example gradient is that constant vector, clipped
like any record. ``trace_coordinate=j`` records theta_t[j] after every step in ``run.extra["trace"]``
(shape (trials, steps)): DP-FTRL releases every iterate, and :meth:`DPFTRL.canary_statistic` maps
such a trace along the canary's coordinate to the likelihood-ratio statistic of the canary (module
:mod:`~dpaudit.mechanisms.matrix_factorization`, ``release_test``), the most powerful test of the
neighbouring pair.
"""

from __future__ import annotations

import numpy as np

from dpaudit.accounting.matrix_mechanism import banded_cyclic_poisson
from dpaudit.core.numeric import l2_norm
from dpaudit.core.seeds import as_seed_sequence
from dpaudit.core.validation import check_count
from dpaudit.mechanisms.matrix_factorization import MatrixFactorization
from dpaudit.mechanisms.mf_optimize import optimize_banded_toeplitz, optimize_blt
from dpaudit.mechanisms.mf_participation import Participation
from dpaudit.mechanisms.mf_strategies import IdentityStrategy, PrefixSumStrategy, Strategy
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
from dpaudit.optimizers.dp_gd import trial_chunks
from dpaudit.optimizers.losses import LOSS_HP, clipped_gradient_sum, get_loss
from dpaudit.optimizers.losses import row_norms as _row_norms

__all__ = ["DPFTRL", "STRATEGIES", "make_strategy"]

#: strategy names understood by the ``strategy`` hyper-parameter
STRATEGIES = ("blt", "banded", "identity", "prefix")
_CACHE: dict = {}


def make_strategy(kind: str, steps: int, *, epochs: int = 1, bands: int = 8, buffers: int = 3) -> Strategy:
    """The strategy ``kind`` for ``steps`` steps under ``epochs``-epoch fixed-order participation (optimised
    strategies are cached)."""
    if kind not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES} or a Strategy, got {kind!r}")
    steps = check_count("steps", steps, minimum=1)
    part = Participation.fixed_epoch(epochs)
    part.check(steps)
    if kind == "identity":
        return IdentityStrategy(steps)
    if kind == "prefix":
        return PrefixSumStrategy(steps)
    size = bands if kind == "banded" else buffers
    key = (kind, steps, size, epochs)
    if key not in _CACHE:
        if kind == "banded":
            _CACHE[key] = optimize_banded_toeplitz(steps, size, part).strategy
        else:
            _CACHE[key] = optimize_blt(max(steps, 2), size, part).strategy if steps > 1 else IdentityStrategy(1)
    return _CACHE[key]


class DPFTRL(Optimizer):
    """DP-FTRL with a matrix-factorization strategy (see the module docstring)."""

    name = "dp-ftrl"
    max_canaries = 1
    canary_semantics = "record"
    audit_dim = 2
    hyperparameters = (
        LOSS_HP,
        HyperParameter("steps", int, 64, 1, None, "number of steps (one noisy prefix-sum release each)"),
        HyperParameter("step_size", float, 0.5, 0, None, "learning rate", low_open=True),
        HyperParameter("clip", float, 1.0, 0, None, "per-example L2 clipping norm C", low_open=True),
        HyperParameter("noise_multiplier", float, 4.0, 0, None, "standard deviation of z divided by the clipping "
                       "norm (the noise before its correlation by C^-1)"),
        HyperParameter("strategy", str, "blt", help="the factorization: an optimised BLT or banded Toeplitz "
                       "strategy, the identity (DP-SGD) or the prefix-sum workload itself", choices=STRATEGIES,
                       instances=Strategy),
        HyperParameter("bands", int, 8, 1, None, "bands of strategy='banded'"),
        HyperParameter("buffers", int, 3, 1, None, "buffers of strategy='blt'"),
        HyperParameter("epochs", int, 1, 1, None, "fixed-order epochs (a record participates every steps/epochs "
                       "steps; epochs must divide steps)"),
        HyperParameter("sample_rate", float, 1.0, 0, 1, "Poisson sampling rate of each batch (< 1: cyclic Poisson "
                       "sampling, banded strategies only)", low_open=True),
        HyperParameter("l2", float, 0.0, 0, None, "L2 regularisation coefficient"),
        NEIGHBOURING_HP,
        HyperParameter("accountant", str, "pld", help="accountant composing the claim", choices=("rdp", "pld")),
    )

    def _validate(self):
        self.loss = get_loss(self.hp["loss"])
        steps, epochs, q = self.hp["steps"], self.hp["epochs"], self.hp["sample_rate"]
        if steps % epochs:
            raise ValueError(f"epochs must divide steps (fixed-order epochs of steps/epochs batches), got "
                             f"epochs={epochs}, steps={steps}")
        s = self.hp["strategy"]
        if q < 1 and s in ("blt", "prefix"):
            raise ValueError(f"sample_rate < 1 needs a banded strategy (arXiv:2306.08153, Thm. 4), got strategy={s!r}")
        if isinstance(s, Strategy):
            if s.steps != steps:
                raise ValueError(f"strategy must have steps = {steps} steps, got {s.steps}")
            self.strategy = s
        else:
            self.strategy = make_strategy(s, steps, epochs=epochs, bands=self.hp["bands"], buffers=self.hp["buffers"])
        if q < 1:
            if self.hp["neighbouring"] != "add_remove":
                raise ValueError("neighbouring must be 'add_remove' with sample_rate < 1 (Poisson amplification)")
            b = self.strategy.bands
            if b is None or b > self.batches:
                raise ValueError(f"sample_rate < 1 needs a banded strategy with at most steps/epochs = {self.batches} "
                                 f"bands (arXiv:2306.08153, Thm. 4); this strategy has "
                                 f"{'no band structure' if b is None else f'{b} bands'}")

    # -- introspection -----------------------------------------------------------------
    @property
    def batches(self) -> int:
        """b = steps / epochs: the number of batches (and the separation of a record's participations)."""
        return self.hp["steps"] // self.hp["epochs"]

    @property
    def clip(self) -> float:
        return self.hp["clip"]

    @property
    def noise_std(self) -> float:
        """Standard deviation of z per step and coordinate (before the correlation by C^{-1})."""
        return self.hp["noise_multiplier"] * self.hp["clip"]

    @property
    def sensitivity(self) -> float:
        """Per-step L2 sensitivity of one record under the neighbouring relation."""
        return self.clip * (2.0 if self.neighbouring == "replace_one" else 1.0)

    @property
    def participation(self) -> Participation:
        return Participation.fixed_epoch(self.hp["epochs"])

    def canary_steps(self) -> tuple[int, ...]:
        """The steps of batch 0 (the canary's participations)."""
        return tuple(range(0, self.hp["steps"], self.batches))

    def step_mechanism(self):
        """``(mechanism, count)``: the MF mechanism of the run (count 1), or with sample_rate < 1 the
        Poisson-subsampled Gaussian composed once per epoch; ``(None, count)`` without noise."""
        if self.hp["noise_multiplier"] == 0:
            return None, 1
        if self.hp["sample_rate"] < 1:
            amp = banded_cyclic_poisson(self.strategy, self.noise_std, self.hp["sample_rate"],
                                        groups=self.batches, sensitivity=self.clip)
            return amp.mechanism, amp.count
        return MatrixFactorization(self.strategy, self.noise_std, self.participation, self.sensitivity,
                                   self.neighbouring), 1

    def claim(self, n: int):
        """The run's claim (independent of n; see the module docstring)."""
        check_count("n", n, minimum=1)
        mech, count = self.step_mechanism()
        if mech is None:
            return no_guarantee_claim(self.neighbouring, "noise_multiplier = 0")
        desc = (f"DP-FTRL: {self.strategy.describe()}, {self.participation.describe()}, noise multiplier "
                f"{self.hp['noise_multiplier']:g}; {count} x {mech.describe()}")
        return accountant_claim(self.hp["accountant"], mech, count, neighbouring=self.neighbouring,
                                description=desc, details={"mechanism": mech.describe(), "count": count})

    def canary_statistic(self, n: int):
        """``stat(trace) -> scores``: the log-likelihood-ratio statistic (up to an affine map) of the canary
        from traces theta_t[j] (shape (trials, steps)) of the canary's coordinate j, for a data set of n
        records whose coordinate j is zero: the noisy gradients g~_t = -(m / step_size) (theta_{t+1} -
        (1 - step_size l2) theta_t) are x + C^{-1} z along j, so C g~ = C x + z and the statistic is
        (C u) . (C g~) with u the canary's steps (mean gap ||C u|| clip / noise_std in noise sds)."""
        n = check_count("n", n, minimum=1)
        m = self._normaliser(n)
        eta, l2 = self.hp["step_size"], self.hp["l2"]
        u = np.zeros(self.hp["steps"])
        u[list(self.canary_steps())] = 1.0
        w = self.strategy.multiply(u)
        strategy = self.strategy

        def stat(trace):
            tr = np.asarray(trace, dtype=float)
            prev = np.concatenate([np.zeros(tr.shape[:-1] + (1,)), tr[..., :-1]], axis=-1)
            noisy = -(m / eta) * (tr - (1.0 - eta * l2) * prev)
            return np.moveaxis(strategy.multiply(np.moveaxis(noisy, -1, 0)), 0, -1) @ w

        return stat

    def _normaliser(self, n: int) -> float:
        return self.hp["sample_rate"] * n / self.batches

    # -- run -------------------------------------------------------------------------
    def run(self, X, y, *, trials=1, seed=None, canary_gradient=None, trace_coordinate=None) -> Run:
        """Run ``trials`` independent trainings (module docstring); ``trace_coordinate``: record that
        coordinate of every iterate in ``run.extra["trace"]``."""
        X, y = check_data(X, y)
        y = self.loss.prepare_labels(y)
        trials = check_count("trials", trials, minimum=1)
        n, d = X.shape
        g_c = self._check_canary(canary_gradient, d)
        if g_c is not None:
            norm = l2_norm(g_c)
            if norm > self.clip:
                g_c = g_c * (self.clip / norm)
        coord = None
        if trace_coordinate is not None:
            coord = check_count("trace_coordinate", trace_coordinate)
            if coord >= d:
                raise ValueError(f"trace_coordinate must be < dim = {d}, got {coord}")
        sizes = trial_chunks(trials, n)
        children = as_seed_sequence(seed, generator=True).spawn(len(sizes))
        out = np.empty((trials, d))
        trace = np.empty((trials, self.hp["steps"])) if coord is not None else None
        start = 0
        with np.errstate(over="ignore", invalid="ignore"):
            for size, child in zip(sizes, children):
                theta, tr = self._run_chunk(X, y, size, np.random.default_rng(child), g_c, coord)
                out[start:start + size] = theta
                if trace is not None:
                    trace[start:start + size] = tr
                start += size
        check_finite_params(out, self.name, ("step_size", "noise_multiplier", "l2"))
        extra = {"n": n, "canary": g_c is not None, "strategy": self.strategy.describe()}
        if trace is not None:
            extra["trace"] = trace
        return Run(params=out, claim=self.claim(n), extra=extra)

    def _run_chunk(self, X, y, trials, rng, g_c, coord):
        n, d = X.shape
        steps, b = self.hp["steps"], self.batches
        q = self.hp["sample_rate"]
        m = self._normaliser(n)
        eta, l2, clip = self.hp["step_size"], self.hp["l2"], self.clip
        norms = _row_norms(X)
        groups = [np.flatnonzero(np.arange(n) % b == k) for k in range(b)]
        stream = self.strategy.noise_stream((trials, d), self.noise_std, rng)
        theta = np.zeros((trials, d))
        trace = np.empty((trials, steps)) if coord is not None else None
        for t in range(steps):
            idx = groups[t % b]
            total = np.zeros((trials, d))
            if idx.size:
                Xb = X[idx]
                scalars = self.loss.derivative(theta @ Xb.T, y[idx])
                mask = (rng.random((trials, idx.size)) < q) if q < 1 else None
                total, _ = clipped_gradient_sum(Xb, scalars, norms[idx], clip, weights=mask)
            if g_c is not None and t % b == 0:
                total = total + ((rng.random(trials) < q)[:, None] * g_c if q < 1 else g_c)
            if self.noise_std > 0:
                total = total + stream.next()
            theta = theta - eta * (total / m + l2 * theta)
            if trace is not None:
                trace[:, t] = theta[:, coord]
        return theta, trace
