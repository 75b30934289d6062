"""Audit an Opacus DP-SGD training loop (Yousefpour et al. 2021): canary recipes that turn your Opacus setup
into a ``train_fn`` for :func:`dpaudit.audit.training.audit_training`.

PyTorch and Opacus are optional: they are imported when a training runs, never when this module is imported
(``pip install "dpaudit[torch]"``: the pinned CPU build ``torch==2.13.0`` and ``opacus>=1.4``).

White-box gradient canaries (Nasr et al. 2023, arXiv:2302.07956; in one run: Steinke, Nasr, Jagielski 2023,
arXiv:2305.08846). Your model is wrapped with one extra parameter vector ``canary.weight`` of m entries, one
DEDICATED coordinate per canary, initialised at zero, on which no data example has a gradient. Canary j is a
row of the dataset whose loss is ``c * w_j`` (``w_j`` the canary's coordinate, ``c = canary_norm``): its
per-sample gradient is the constant ``c e_j`` whatever the model's state, of norm ``c >= max_grad_norm``, so
Opacus clips it to exactly ``max_grad_norm`` -- the worst case the DP-SGD analysis allows (Abadi et al. 2016)
-- and ``c > max_grad_norm`` (default 10x) makes a loop whose clipping is missing move the coordinate further.
An ABSENT canary is still a row (its input is zero, so its per-sample gradient is zero): the dataset keeps
its size N = n + m, so Opacus' sample rate (Poisson sampling at ``batch_size / N``) and its normaliser
(``expected_batch_size``) are the same whatever the coins, exactly as the add/remove analysis of one canary
assumes. The canary rows feed zeros to your model and their data loss is masked, so they give your model's
parameters no gradient either. Score of canary j: how far its coordinate moved against the gradient,
``-w_j(T)`` (gradient descent with lr > 0 moves an included canary's coordinate down; noise moves every
coordinate alike).

Input canaries (``kind="input"``): m records ``(canary_X[j], canary_y[j])`` you choose (e.g. mislabelled or
out-of-distribution examples), included by the coins; an absent canary stays as a row whose loss weight is 0
(a zero per-sample gradient: the dataset size is kept again). Score: the negative loss of the final model on
the canary. This is the black-box audit of what a real record reveals: it certifies far less than gradient
canaries (the per-sample gradient of a record is rarely at the clipping norm and not orthogonal to the data's),
so use it to ask "does my data leak", and gradient canaries to test the implementation against its claim.

Usage::

    run = OpacusCanaries(make_model, X, y, canaries=1000, noise_multiplier=1.5, max_grad_norm=1.0,
                         batch_size=100, steps=300, lr=0.5)
    claim = opacus_claim(noise_multiplier=1.5, sample_rate=run.sample_rate, steps=300)
    res = dpaudit.audit_training(run, canaries=1000, claim=claim, delta=1e-5, seed=0)

``make_model()`` returns a fresh ``torch.nn.Module`` (layers Opacus supports); ``loss_fn(output, target)``
returns per-example losses (``reduction="none"``; default: cross-entropy). ``privatize(module, optimizer,
data_loader)`` is your call to ``PrivacyEngine().make_private(...)`` (default: that call with
``noise_multiplier``, ``max_grad_norm`` and Poisson sampling): pass your own to audit the setup you really run.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from dpaudit.accounting.claim import PrivacyClaim
from dpaudit.core.validation import check_count, check_positive
from dpaudit.interop.canaries import DEFAULT_CANARY_NORM_FACTOR, canary_setup, training_arrays

__all__ = ["OpacusCanaries", "opacus_claim", "require_torch", "KINDS", "DEFAULT_CANARY_NORM_FACTOR"]

KINDS = ("gradient", "input")

#: warnings Opacus' accountants give on every query, kept out of the audit (the bound stays Opacus' own): its
#: RDP order grid is too short for a tight bound (the bound is valid, looser), and its GDP accountant is
#: experimental (said in the claim's description instead)
OPACUS_NOTES = ("Optimal order is the (largest|smallest) alpha", "GDP accounting is experimental")


def require_torch():
    """``(torch, opacus)``, or an ``ImportError`` saying how to install them (the pinned CPU build)."""
    try:
        import opacus
        import torch
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError('auditing an Opacus loop needs torch and opacus: pip install "dpaudit[torch]" '
                          "(torch==2.13.0, the CPU build, and opacus>=1.4)") from exc
    return torch, opacus


_CLASSES: dict = {}


def _wrapper_class():
    """The model wrapper (defined on first use: nn.Module needs torch)."""
    if "wrapper" not in _CLASSES:
        torch, _ = require_torch()

        Module: Any = torch.nn.Module  # torch is imported here, at run time (module docstring)

        class CanaryWrapper(Module):
            """Your model ``body`` plus ``canary``: a bias-free linear map of the m canary inputs (one weight per canary)."""

            def __init__(self, body, m):
                super().__init__()
                self.body = body
                self.canary = torch.nn.Linear(m, 1, bias=False)
                torch.nn.init.zeros_(self.canary.weight)

            def forward(self, x, c):
                return self.body(x), self.canary(c).squeeze(-1)

        _CLASSES["wrapper"] = CanaryWrapper
    return _CLASSES["wrapper"]


def _default_privatize(noise_multiplier, max_grad_norm):
    def privatize(module, optimizer, data_loader):
        _, opacus = require_torch()
        with warnings.catch_warnings():  # "Secure RNG turned off": the audit draws its own seeds on purpose
            warnings.filterwarnings("ignore", message="Secure RNG turned off")
            engine = opacus.PrivacyEngine()
        return engine.make_private(module=module, optimizer=optimizer, data_loader=data_loader,
                                   noise_multiplier=noise_multiplier, max_grad_norm=max_grad_norm,
                                   poisson_sampling=True)
    return privatize


class OpacusCanaries:
    """``run(inclusion_mask, rng) -> scores``: one Opacus DP-SGD training with canaries (module docstring).

    Parameters
    ----------
    make_model : callable() -> torch.nn.Module
        A fresh model (its parameters are initialised from the training's seed).
    X, y : array-like
        The data (``n`` rows); ``X`` float features, ``y`` targets for ``loss_fn``.
    canaries : int
        m. The dataset has ``n + m`` rows whatever the coins.
    noise_multiplier, max_grad_norm : float
        Your DP-SGD settings (the default ``privatize`` uses them; ``max_grad_norm`` sets the canary norm).
    batch_size : int
        Expected batch size: Opacus samples each row with probability ``batch_size / (n + m)``
        (:attr:`sample_rate`).
    steps : int
        Optimizer steps (Poisson batches; the loader is restarted as often as needed).
    lr : float
        Learning rate of ``torch.optim.SGD`` (or give ``make_optimizer(params)``).
    kind : {"gradient", "input"}
        White-box gradient canaries (default) or input canaries (``canary_X``, ``canary_y``).
    loss_fn : callable(output, target) -> per-example losses, optional
        Default: ``torch.nn.functional.cross_entropy(..., reduction="none")``.
    canary_norm : float, optional
        Gradient canaries' per-sample gradient norm (default ``10 * max_grad_norm``; must be >= max_grad_norm).
    privatize : callable(module, optimizer, data_loader) -> (module, optimizer, data_loader), optional
        Your ``PrivacyEngine().make_private(...)`` call.
    make_optimizer : callable(params) -> torch.optim.Optimizer, optional
    threads : int
        ``torch.set_num_threads`` during a training (default 1: trainings run side by side on workers).

    A training draws all its randomness from ``rng`` (``torch.manual_seed`` of a seed drawn from it): the audit
    is reproducible from dpaudit's seed in one process (Opacus' Poisson sampling and noise use torch's global
    generator). Picklable (with cloudpickle) when ``make_model``, ``loss_fn``, ... are.
    """

    def __init__(self, make_model, X, y, *, canaries: int, noise_multiplier: float, max_grad_norm: float,
                 batch_size: int, steps: int, lr: float, kind: str = "gradient", canary_X=None, canary_y=None,
                 loss_fn=None, canary_norm: float | None = None, privatize=None, make_optimizer=None,
                 threads: int = 1):
        if not callable(make_model):
            raise ValueError("make_model must be callable as make_model() -> torch.nn.Module")
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        self.X, self.y = training_arrays(X, y)
        self.m, self.noise_multiplier, self.max_grad_norm, self.canary_norm = canary_setup(
            canaries, noise_multiplier, max_grad_norm, canary_norm)
        self.batch_size = check_count("batch_size", batch_size, minimum=1)
        self.steps = check_count("steps", steps, minimum=1)
        self.lr = check_positive("lr", lr)
        self.kind = kind
        if kind == "input":
            if canary_X is None or canary_y is None:
                raise ValueError("kind='input' needs canary_X and canary_y (one record per canary)")
            self.canary_X = np.asarray(canary_X, dtype=np.float32)
            self.canary_y = np.asarray(canary_y)
            if self.canary_X.shape[0] != self.m or self.canary_y.shape[0] != self.m:
                raise ValueError(f"canary_X and canary_y must have canaries = {self.m} rows, got "
                                 f"{self.canary_X.shape[0]} and {self.canary_y.shape[0]}")
            if self.canary_X.shape[1:] != self.X.shape[1:]:
                raise ValueError(f"canary_X rows must have the shape of X rows {self.X.shape[1:]}, got "
                                 f"{self.canary_X.shape[1:]}")
        elif canary_X is not None or canary_y is not None:
            raise ValueError("canary_X and canary_y apply to kind='input'")
        self.make_model, self.loss_fn, self.make_optimizer = make_model, loss_fn, make_optimizer
        self.privatize = privatize or _default_privatize(self.noise_multiplier, self.max_grad_norm)
        self.threads = check_count("threads", threads, minimum=1)
        if self.batch_size > self.rows:
            raise ValueError(f"batch_size must be <= the {self.rows} rows (data and canaries), got {batch_size}")

    @property
    def rows(self) -> int:
        """Rows of every training's dataset: n data rows and m canary rows (present or absent)."""
        return int(self.X.shape[0] + self.m)

    @property
    def sample_rate(self) -> float:
        """Opacus' Poisson sampling rate ``1 / len(data_loader)`` with ``batch_size`` over :attr:`rows`."""
        return 1.0 / math.ceil(self.rows / self.batch_size)

    def claim(self, accountant: str = "prv") -> PrivacyClaim:
        """The claim of this training by Opacus' own accountant (:func:`opacus_claim`)."""
        return opacus_claim(noise_multiplier=self.noise_multiplier, sample_rate=self.sample_rate, steps=self.steps,
                            accountant=accountant)

    def many_runs(self):
        """``train_fn(include_canary, rng) -> score`` for ``audit_training(..., mode="many_runs")`` (one canary)."""
        if self.m != 1:
            raise ValueError(f"many_runs audits one canary: build with canaries=1, got {self.m}")
        return _ManyRuns(self)

    # -- one training ------------------------------------------------------------------------------------
    def _dataset(self, torch, mask):
        n, m = self.X.shape[0], self.m
        feat = self.X.shape[1:]
        if self.kind == "gradient":
            x = np.concatenate([self.X, np.zeros((m, *feat), dtype=np.float32)])
            c = np.zeros((n + m, m), dtype=np.float32)
            c[n + np.flatnonzero(mask), np.flatnonzero(mask)] = 1.0  # c e_j enters through the loss scale
            y = np.concatenate([self.y, np.zeros(m, dtype=self.y.dtype)])
            w = np.concatenate([np.ones(n, dtype=np.float32), np.zeros(m, dtype=np.float32)])
        else:
            x = np.concatenate([self.X, self.canary_X])
            c = np.zeros((n + m, 1), dtype=np.float32)
            y = np.concatenate([self.y, self.canary_y.astype(self.y.dtype)])
            w = np.concatenate([np.ones(n, dtype=np.float32), mask.astype(np.float32)])
        tensors = [torch.from_numpy(np.ascontiguousarray(a)) for a in (x, c, y, w)]
        return torch.utils.data.TensorDataset(*tensors)

    def __call__(self, mask, rng):
        torch, _ = require_torch()
        mask = np.asarray(mask, dtype=bool).ravel()
        if mask.size != self.m:
            raise ValueError(f"inclusion_mask must have canaries = {self.m} entries, got {mask.size}")
        old_threads = torch.get_num_threads()
        torch.set_num_threads(self.threads)
        try:
            torch.manual_seed(int(rng.integers(0, 2**63 - 1)))
            return self._train(torch, mask)
        finally:
            torch.set_num_threads(old_threads)

    def _train(self, torch, mask):
        wrapper = _wrapper_class()(self.make_model(), self.m if self.kind == "gradient" else 1)
        params = [p for p in wrapper.parameters() if p.requires_grad]
        opt = self.make_optimizer(params) if self.make_optimizer else torch.optim.SGD(params, lr=self.lr)
        loader = torch.utils.data.DataLoader(self._dataset(torch, mask), batch_size=self.batch_size, shuffle=False)
        module, opt, loader = self.privatize(wrapper, opt, loader)
        loss_fn = self.loss_fn or (lambda out, target: torch.nn.functional.cross_entropy(out, target, reduction="none"))
        module.train()
        with warnings.catch_warnings():  # the canary inputs need no gradient: torch says so on every backward
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            self._steps(module, opt, loader, loss_fn)
        return self._scores(torch, wrapper, loss_fn)

    def _steps(self, module, opt, loader, loss_fn):
        torch, _ = require_torch()
        scale = float(self.canary_norm)
        step = 0
        while step < self.steps:
            before = step
            for x, c, y, w in loader:
                opt.zero_grad(set_to_none=True)
                out, cout = module(x, c)
                data_loss = loss_fn(out, y).reshape(len(x), -1).sum(dim=1)
                per_example = torch.where(w > 0, w * data_loss, torch.zeros_like(data_loss)) + scale * cout
                per_example.mean().backward()
                opt.step()
                step += 1
                if step >= self.steps:
                    break
            if step == before:
                raise ValueError("the data loader returned by privatize yields no batch: no training step can run")

    def _scores(self, torch, wrapper, loss_fn):
        body = wrapper.body
        with torch.no_grad():
            if self.kind == "gradient":
                return -wrapper.canary.weight.detach().double().numpy().ravel().copy()
            body.eval()
            losses = loss_fn(body(torch.from_numpy(self.canary_X)), torch.from_numpy(self.canary_y))
            return -losses.reshape(self.m, -1).sum(dim=1).double().numpy().copy()


class _ManyRuns:
    """``train_fn(include_canary, rng)`` of one canary (picklable with its training)."""

    def __init__(self, training):
        self.training = training

    def __call__(self, include, rng):
        return float(self.training(np.array([bool(include)]), rng)[0])


#: the largest step count handed to Opacus' accountants (integers up to 2^53 are exact in its float arithmetic)
_MAX_OPACUS_STEPS = 2**53


def opacus_claim(*, noise_multiplier: float, sample_rate: float, steps: int, accountant: str = "prv") -> PrivacyClaim:
    """What Opacus states for DP-SGD with these settings: ``epsilon(delta)`` from its ``"prv"`` (default), ``"rdp"``
    or ``"gdp"`` accountant (add/remove neighbours, Poisson sampling). Needs opacus when queried."""
    sigma = check_positive("noise_multiplier", noise_multiplier)
    q = check_positive("sample_rate", sample_rate)
    if q > 1.0:
        raise ValueError(f"sample_rate must be in (0, 1], got {sample_rate}")
    steps = check_count("steps", steps, minimum=1)
    if steps > _MAX_OPACUS_STEPS:  # Opacus' GDP takes np.sqrt of the int: beyond int64 numpy raises a bare TypeError
        raise ValueError(f"steps must be an integer in [1, 2^53] for Opacus' accountants, got {steps:.3g}")
    if accountant not in ("prv", "rdp", "gdp"):
        raise ValueError(f"accountant must be 'prv', 'rdp' or 'gdp', got {accountant!r}")

    def _acc():
        _, opacus = require_torch()
        acc = opacus.accountants.create_accountant(accountant)
        acc.history = [(sigma, q, steps)]
        return acc

    def epsilon(delta):
        if not delta > 0:
            return math.inf
        # Opacus' notes, not errors: recorded in the claim instead (below); numpy's errstate: its PRV evaluates
        # both branches of an np.where (log(0) at sample rate 1) -- the answer is checked by PrivacyClaim
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            for note in OPACUS_NOTES:
                warnings.filterwarnings("ignore", message=note)
            try:
                return float(_acc().get_epsilon(delta))  # below 0 at large delta: PrivacyClaim reads it as 0
            except (RuntimeError, ValueError, ArithmeticError) as exc:  # PRV: "Cannot compute epsilon" (delta
                # beyond its loss domain) or "Floating point errors will dominate"; GDP: scipy's root finder
                raise ValueError(f"Opacus' {accountant} accountant cannot compute epsilon at delta={delta} for "
                                 f"this claim: {exc}") from None

    def delta_of(eps):
        return 1.0  # Opacus' accountants answer epsilon(delta) only: no delta(epsilon) is stated

    caveat = " (Opacus: GDP accounting is experimental and can underestimate the privacy expenditure)" \
        if accountant == "gdp" else ""
    return PrivacyClaim(neighbouring="add_remove", description=f"Opacus {accountant.upper()} accountant: DP-SGD, "
                        f"noise multiplier {sigma:g}, sample rate {q:g}, {steps} steps{caveat}", epsilon_fn=epsilon,
                        delta_fn=delta_of, source=f"opacus-{accountant}",
                        details={"noise_multiplier": sigma, "sample_rate": q, "steps": steps,
                                 "opacus_notes": list(OPACUS_NOTES)})
