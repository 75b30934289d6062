"""Audit a JAX DP-SGD loop built on jax-privacy's clipped gradients: the canary recipe of
:mod:`dpaudit.interop.opacus`, for JAX.

JAX and jax-privacy are optional: imported when a training runs, never when this module is imported
(``pip install "dpaudit[jax]"``).

:class:`JaxCanaries` is ``run(inclusion_mask, rng) -> scores`` for :func:`dpaudit.audit.training.audit_training`:
one DP-SGD training (Abadi et al. 2016) written with ``jax_privacy.clipped_grad`` (per-example clipping to
``max_grad_norm``, summed), Gaussian noise of standard deviation ``noise_multiplier * max_grad_norm``, Poisson
sampling at ``sample_rate`` and the sum divided by the expected batch size -- with white-box gradient canaries
(Nasr et al. 2023; one run: Steinke, Nasr, Jagielski 2023):

* the parameters are ``{"model": your parameters, "canary": zeros(m)}``: one dedicated coordinate per canary;
* canary row j's loss is ``canary_norm * canary[j]`` (a constant per-example gradient of norm
  ``canary_norm >= max_grad_norm``, default 10x; clipped to exactly ``max_grad_norm``); an absent canary is a
  row with a zero loss (zero gradient), so the dataset keeps its n + m rows and the sampling rate and the
  normaliser do not depend on the coins; canary rows give your model no gradient (their data loss has weight 0);
* Poisson batches are padded with zero-weight rows to a multiple of ``pad_to`` (a zero gradient: padding
  changes nothing but the number of compiled shapes);
* the score of canary j is ``-canary[j]`` after training.

``init_params(key) -> params`` and ``apply_fn(params, x) -> outputs`` are your model (e.g. a Flax module's
``init``/``apply``); ``loss_fn(outputs, y) -> per-example losses`` (default: softmax cross-entropy on integer
labels). The claim of the loop is :meth:`JaxCanaries.claim` (dpaudit's PLD accountant of the Poisson-subsampled
Gaussian mechanism composed ``steps`` times, add/remove; Koskela et al. 2020, Doroshenko et al. 2022).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from dpaudit.accounting.claim import PrivacyClaim
from dpaudit.accounting.pld import PLDAccountant
from dpaudit.core.validation import check_count, check_positive, check_probability
from dpaudit.interop.canaries import DEFAULT_CANARY_NORM_FACTOR, canary_setup, training_arrays
from dpaudit.mechanisms import Gaussian, PoissonSampled

__all__ = ["JaxCanaries", "require_jax", "DEFAULT_CANARY_NORM_FACTOR"]

#: jax-privacy's own use of a deprecated optax name (warned when its clipped gradient is traced): not the
#: user's code, kept out of the audit
JAX_PRIVACY_NOTES = r"optax\.global_norm is deprecated"

_COMPILED: dict = {}  # jitted steps by (apply_fn, loss_fn, clip norm, canary norm): noise, lr, normaliser are arguments


def require_jax():
    """``(jax, jax.numpy, jax_privacy)``, or an ``ImportError`` saying how to install them."""
    try:
        import jax
        import jax.numpy as jnp
        import jax_privacy
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError('auditing a JAX loop needs jax and jax-privacy: pip install "dpaudit[jax]"') from exc
    return jax, jnp, jax_privacy


class JaxCanaries:
    """One JAX DP-SGD training with gradient canaries, as ``run(inclusion_mask, rng) -> scores`` (module docstring).

    Parameters: ``init_params``, ``apply_fn``, ``X``, ``y``, ``canaries`` (m), ``noise_multiplier``,
    ``max_grad_norm``, ``sample_rate`` (Poisson), ``steps``, ``lr`` (plain SGD), ``loss_fn``, ``canary_norm``,
    ``pad_to``. The training draws all its randomness (initialisation, batches, noise) from ``rng``.
    """

    def __init__(self, init_params, apply_fn, X, y, *, canaries: int, noise_multiplier: float, max_grad_norm: float,
                 sample_rate: float, steps: int, lr: float, loss_fn=None, canary_norm: float | None = None,
                 pad_to: int = 64):
        if not callable(init_params) or not callable(apply_fn):
            raise ValueError("init_params and apply_fn must be callable: init_params(key), apply_fn(params, x)")
        self.init_params, self.apply_fn, self.loss_fn = init_params, apply_fn, loss_fn
        self.X, self.y = training_arrays(X, y)
        self.m, self.noise_multiplier, self.max_grad_norm, self.canary_norm = canary_setup(
            canaries, noise_multiplier, max_grad_norm, canary_norm)
        self.sample_rate = check_probability("sample_rate", sample_rate)
        if self.sample_rate == 0.0:
            raise ValueError("sample_rate must be in (0, 1], got 0")
        self.steps = check_count("steps", steps, minimum=1)
        self.lr = check_positive("lr", lr)
        self.pad_to = check_count("pad_to", pad_to, minimum=1)

    @property
    def rows(self) -> int:
        return int(self.X.shape[0] + self.m)

    def claim(self) -> PrivacyClaim:
        """DP-SGD's claim: PLD accountant of ``steps`` Poisson-subsampled Gaussian steps (add/remove)."""
        if self.noise_multiplier == 0.0:
            return PrivacyClaim(neighbouring="add_remove", description="no noise: no guarantee",
                                epsilon_fn=lambda d: math.inf, delta_fn=lambda e: 1.0, source="none")
        acc = PLDAccountant().compose(PoissonSampled(Gaussian(self.noise_multiplier), self.sample_rate),
                                      count=self.steps)
        return PrivacyClaim.from_accountant(acc, neighbouring="add_remove", source="pld",
                                           description=f"DP-SGD: noise multiplier {self.noise_multiplier:g}, Poisson "
                                                       f"rate {self.sample_rate:g}, {self.steps} steps (PLD)")

    def _compiled(self):
        key = (self.apply_fn, self.loss_fn, self.max_grad_norm, self.canary_norm)
        if key not in _COMPILED:
            jax, jnp, jax_privacy = require_jax()
            apply_fn, scale = self.apply_fn, float(self.canary_norm)

            def default_loss(out, y):
                logp = jax.nn.log_softmax(out)
                return -jnp.take_along_axis(logp, y[..., None].astype(jnp.int32), axis=-1)[..., 0]

            loss_fn = self.loss_fn or default_loss

            def example_loss(params, batch):  # batch of one example (keep_batch_dim=True: leading axis of 1)
                x, y, w, idx, present = batch
                data = jnp.sum(loss_fn(apply_fn(params["model"], x), y))
                canary = jnp.sum(present * params["canary"][idx])
                return jnp.sum(w) * data + scale * canary

            grad = jax_privacy.clipped_grad(example_loss, l2_clip_norm=self.max_grad_norm, batch_argnums=1)

            def step(params, batch, key, sigma_c, lr_over_batch):
                g = grad(params, batch)
                leaves, tree = jax.tree_util.tree_flatten(g)
                keys = jax.random.split(key, len(leaves))
                noisy = [leaf + sigma_c * jax.random.normal(k, leaf.shape, leaf.dtype) for leaf, k in zip(leaves, keys)]
                update = jax.tree_util.tree_unflatten(tree, noisy)
                return jax.tree_util.tree_map(lambda p, u: p - lr_over_batch * u, params, update)

            _COMPILED[key] = jax.jit(step)
        return _COMPILED[key]

    def __call__(self, mask, rng):
        jax, jnp, _ = require_jax()
        mask = np.asarray(mask, dtype=bool).ravel()
        if mask.size != self.m:
            raise ValueError(f"inclusion_mask must have canaries = {self.m} entries, got {mask.size}")
        n, m = self.X.shape[0], self.m
        x = np.concatenate([self.X, np.zeros((m, *self.X.shape[1:]), dtype=np.float32)])
        y = np.concatenate([self.y, np.zeros(m, dtype=self.y.dtype)])
        w = np.concatenate([np.ones(n, np.float32), np.zeros(m, np.float32)])
        idx = np.concatenate([np.zeros(n, np.int32), np.arange(m, dtype=np.int32)])
        present = np.concatenate([np.zeros(n, np.float32), mask.astype(np.float32)])
        key = jax.random.PRNGKey(int(rng.integers(0, 2**31 - 1)))
        key, init_key = jax.random.split(key)
        params = {"model": self.init_params(init_key), "canary": jnp.zeros(m, jnp.float32)}
        step = self._compiled()
        sigma_c = np.float32(self.noise_multiplier * self.max_grad_norm)
        lr_over_batch = np.float32(self.lr / (self.sample_rate * self.rows))
        with warnings.catch_warnings():  # jax-privacy's own use of a deprecated optax name, raised when it traces
            warnings.filterwarnings("ignore", message=JAX_PRIVACY_NOTES, category=DeprecationWarning)
            params = self._steps(step, params, key, rng, (x, y, w, idx, present), sigma_c, lr_over_batch)
        return -np.asarray(params["canary"], dtype=float)

    def _steps(self, step, params, key, rng, rows_data, sigma_c, lr_over_batch):
        x, y, w, idx, present = rows_data
        n, m = self.X.shape[0], self.m
        for _ in range(self.steps):
            rows = np.flatnonzero(rng.random(n + m) < self.sample_rate)
            size = max(self.pad_to, -(-rows.size // self.pad_to) * self.pad_to)
            pad = size - rows.size
            take = np.concatenate([rows, np.zeros(pad, dtype=np.int64)])
            keep = np.concatenate([np.ones(rows.size, np.float32), np.zeros(pad, np.float32)])  # padding: no gradient
            batch = (x[take], y[take], w[take] * keep, idx[take], present[take] * keep)
            key, sub = self._split(key)
            params = step(params, batch, sub, sigma_c, lr_over_batch)
        return params

    @staticmethod
    def _split(key):
        jax, _, _ = require_jax()
        return jax.random.split(key)
