"""Optimizer protocol, the ``Run`` result, and claim builders shared by the optimizers.

Every optimizer (``docs/architecture.md``, "Optimizers") is built with hyper-parameters, runs
many independent trials as one batched computation, and states its own privacy claim:

    opt = make_optimizer("dp-sgd", noise_multiplier=1.0, sampling_rate=0.01, steps=100)
    run = opt.run(X, y, trials=1000, seed=0)    # run.params: (trials, dim); run.claim: PrivacyClaim
    opt.claim(n)                                # the same claim for n records, without running

Claims are produced by the accounting layer only (accountants composing mechanism
descriptions, or the seed theorems of ``dpaudit.bounds`` wrapped as a mechanism curve); the
optimizers never compute an epsilon themselves.

Numerical conventions shared by every optimizer:

* data must be real: complex or non-numeric ``X`` / ``y`` / canary gradients raise ValueError
  (never a silent cast that drops the imaginary part);
* released parameters are finite: iterates that leave the float range (a divergent step size,
  enormous noise or records) raise ValueError naming the responsible hyper-parameters instead
  of returning inf/NaN; record norms and clipping are computed without overflow;
* a claim never warns: internal RDP accountants are built with ``warn_at_grid_end=False``
  (an optimal order at the end of the order grid can only make the claim looser than the
  continuous optimum, never invalid: every order's conversion is a valid bound);
* ``clip=inf`` means "no clipping" and is accepted only without noise (DP-GD/DP-SGD:
  ``noise_multiplier=0``, claim epsilon = inf), since the noise std is ``noise_multiplier * clip``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from dpaudit.accounting.base import make_accountant
from dpaudit.accounting.claim import PrivacyClaim
from dpaudit.core.seeds import make_rng
from dpaudit.core.validation import (
    check_count,
    check_neighbouring,
    check_nonnegative,
    check_orders,
    check_positive,
    check_probability,
    check_real_array,
)
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.zcdp import ZCDPMechanism

__all__ = ["Run", "Optimizer", "CurveMechanism", "ZCDPStatement", "no_guarantee_claim",
           "accountant_claim", "check_data", "check_finite_params", "make_rng"]


@dataclass
class Run:
    """Result of ``optimizer.run``.

    Attributes
    ----------
    params : ndarray, shape (trials, dim)
        The released parameters of every trial.
    claim : PrivacyClaim
        The privacy guarantee of one trial's release.
    extra : dict
        Optimizer-specific diagnostics (e.g. DP-AGD's spent budget and stopping step per trial).
    """

    params: np.ndarray
    claim: PrivacyClaim
    extra: dict = field(default_factory=dict)

    @property
    def trials(self) -> int:
        return self.params.shape[0]


def check_finite_params(params: np.ndarray, name: str, culprits: tuple[str, ...]) -> np.ndarray:
    """Refuse to release non-finite parameters: iterates that left the float range (a divergent
    step size or an enormous noise scale) raise ValueError naming the responsible
    hyper-parameters, instead of returning inf/NaN."""
    if not np.all(np.isfinite(params)):
        raise ValueError(
            f"{' / '.join(culprits)}: the iterates of {name} left the float range (non-finite parameters); "
            "reduce them or rescale the data")
    return params


def check_data(X, y=None, *, need_y: bool = True):
    """Validate a design matrix (records as rows) and labels; returns float arrays.

    Complex or non-numeric input is refused (ValueError naming X or y): converting it to float
    would silently drop the imaginary part.
    """
    X = check_real_array("X", X)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must be a non-empty 2-D array (records as rows), got shape {X.shape}")
    if y is None:
        if need_y:
            raise ValueError("y must be given for this optimizer")
        return X, None
    y = check_real_array("y", y, finite=False)  # labels are checked by the loss
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},) to match X, got {y.shape}")
    return X, y


class CurveMechanism(Mechanism):
    """A mechanism known only through an RDP curve (e.g. a seed theorem's bound).

    Lets an accountant compose a theorem's statement exactly as it composes a Gaussian: the
    accountants read ``rdp(orders)`` only (``dpaudit.mechanisms.base``).
    """

    def __init__(self, rdp_fn: Callable[[np.ndarray], np.ndarray], label: str, neighbouring: str):
        self._rdp_fn = rdp_fn
        self.label = label
        self.neighbouring = check_neighbouring("neighbouring", neighbouring)

    def rdp(self, orders) -> np.ndarray:
        orders = check_orders("orders", orders)
        return np.asarray(self._rdp_fn(orders), dtype=float)

    def describe(self) -> str:
        return self.label


def ZCDPStatement(rho: float, label: str, neighbouring: str = "add_remove") -> ZCDPMechanism:
    """A mechanism known only as rho-zCDP (e.g. DP-AGD, whose total budget is rho by construction):
    :class:`~dpaudit.mechanisms.zcdp.ZCDPMechanism` with a label (the name DP-AGD's module uses)."""
    return ZCDPMechanism(check_nonnegative("rho", rho), label=label, neighbouring=neighbouring)


def no_guarantee_claim(neighbouring: str, reason: str) -> PrivacyClaim:
    """The claim of a run with no privacy guarantee (noise off, no clipping, ...): epsilon = inf."""
    return PrivacyClaim(neighbouring=neighbouring, description=f"no privacy guarantee: {reason}",
                        epsilon_fn=lambda d: math.inf, delta_fn=lambda e: 1.0, source="none",
                        details={"reason": reason})


def accountant_claim(kind: str, mechanism, count: int, *, neighbouring: str, description: str,
                     source: str | None = None, details: dict | None = None) -> PrivacyClaim:
    """Compose ``mechanism`` ``count`` times in accountant ``kind`` (a name of
    :func:`~dpaudit.accounting.base.make_accountant`) and wrap it.

    Claims never emit :class:`~dpaudit.accounting.rdp.OrderGridWarning`: the RDP accountant
    built here has ``warn_at_grid_end=False``. When the best order is an end of the order grid
    the claim is still an upper bound (each order's conversion is valid on its own); it may be
    looser than the optimum over continuous orders, never below it.
    """
    # internal accountant: no OrderGridWarning to the user (the claim is a valid upper bound
    # whichever order attains it; at a grid end it can only be looser than the continuous
    # optimum; acc.at_grid_end records it)
    acc = make_accountant(kind, quiet=True)
    if count > 0:
        acc.compose(mechanism, count=count)
    return PrivacyClaim.from_accountant(acc, neighbouring=neighbouring, description=description,
                                        source=source or kind, details=details)


class Optimizer:
    """Base class: hyper-parameter handling and the shared interface.

    Subclasses set ``name``, ``defaults`` (every hyper-parameter with its default) and implement
    ``_validate``, ``run`` and ``claim``.
    """

    name: str = ""
    defaults: dict = {}

    # -- the optimizer's audit scenario (read by dpaudit.audit.optimizer and dpaudit.report) --
    #: how many white-box gradient canaries one ``run`` hosts: 0 (none), 1 (``canary_gradient``)
    #: or more (``canary_gradients`` with a ``canary_mask``, for one-run audits)
    max_canaries: float = 0
    #: how ``canary_gradient`` enters the run: ``"record"`` (an extra record with that gradient),
    #: ``"offset"`` (grad L_D' = grad L_D + g/n) or ``"replace"`` (record 0's gradient replaced)
    canary_semantics: str = "record"
    #: dimension of the audit's data set
    audit_dim: int = 5

    @property
    def supports_canary(self) -> bool:
        """Whether ``run`` accepts a white-box ``canary_gradient``."""
        return self.max_canaries >= 1

    @property
    def audit_scenario(self) -> str:
        """The neighbouring pair an audit uses: ``"gradient-canary"`` (white-box Dirac gradient
        canary, for optimizers hosting one), ``"input-canary"`` (record 0's label flipped) or
        ``"mean-estimation"`` (row 0 = -L e_0 vs +L e_0; declared by mean estimators)."""
        return "gradient-canary" if self.supports_canary else "input-canary"

    def canary_norm(self) -> float:
        """Norm of the audit's Dirac canary: the clip bound, else the gradient-sensitivity bound
        (feature bound times the loss's derivative bound, or ``sensitivity``), else 1."""
        hp = self.hp
        if "clip" in hp and not math.isfinite(float(hp["clip"])):
            s = getattr(self, "sensitivity", None)
            if s is not None and math.isfinite(float(s)):
                return float(s)
        if "clip" in hp and math.isfinite(float(hp["clip"])):
            return float(hp["clip"])
        if "feature_bound" in hp:
            loss = getattr(self, "loss", None)
            bound = getattr(loss, "derivative_bound", 1.0)
            return float(hp["feature_bound"]) * float(bound if math.isfinite(bound) else 1.0)
        s = getattr(self, "sensitivity", None)
        if s is not None and math.isfinite(float(s)):
            return float(s)
        return 1.0

    def step_mechanism(self):
        """``(mechanism, steps)``: the per-step mechanism the claim composes ``steps`` times, or
        ``(None, steps)`` when the claim is not such a composition (the default)."""
        return None, int(self.hp.get("steps", 1))

    def __init__(self, **hyperparameters):
        unknown = sorted(set(hyperparameters) - set(self.defaults))
        if unknown:
            raise ValueError(f"unknown hyper-parameter(s) {unknown} for optimizer {self.name!r}; "
                             f"allowed: {sorted(self.defaults)}")
        self.hp = {**self.defaults, **hyperparameters}
        self._validate()

    # -- helpers for subclasses ---------------------------------------------------------
    def _pos(self, key, *, allow_inf=False):
        self.hp[key] = check_positive(key, self.hp[key], allow_inf=allow_inf)
        return self.hp[key]

    def _nonneg(self, key, *, allow_inf=False):
        self.hp[key] = check_nonnegative(key, self.hp[key], allow_inf=allow_inf)
        return self.hp[key]

    def _prob(self, key):
        self.hp[key] = check_probability(key, self.hp[key])
        return self.hp[key]

    def _count(self, key, minimum=0):
        self.hp[key] = check_count(key, self.hp[key], minimum=minimum)
        return self.hp[key]

    def _validate(self) -> None:
        """Check and normalise ``self.hp`` (subclasses override)."""

    def _check_canary(self, canary_gradient, dim: int):
        if canary_gradient is None:
            return None
        if not self.supports_canary:
            raise ValueError(f"canary_gradient is not supported by optimizer {self.name!r}")
        g = check_real_array("canary_gradient", canary_gradient)
        if g.shape != (dim,):
            raise ValueError(f"canary_gradient must be a finite vector of shape ({dim},), got shape {g.shape}")
        return g

    # -- interface ----------------------------------------------------------------------
    @property
    def neighbouring(self) -> str:
        return self.hp.get("neighbouring", "add_remove")

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.hp.items())
        return f"make_optimizer({self.name!r}, {args})"
