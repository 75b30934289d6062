"""Optimizer protocol, the ``Run`` result, and claim builders shared by the optimizers.

Every optimizer (``docs/architecture.md``, "Optimizers") is built with hyper-parameters, runs
many independent trials as one batched computation, and states its own privacy claim:

    opt = make_optimizer("dp-sgd", noise_multiplier=1.0, sample_rate=0.01, steps=100)
    run = opt.run(X, y, trials=1000, seed=0)    # run.params: (trials, dim); run.claim: PrivacyClaim
    opt.claim(n)                                # the same claim for n records, without running

Hyper-parameters are declared once, on the class: ``hyperparameters`` is a tuple of
:class:`HyperParameter` (name, type, default, range, help). The declarations validate every value
(:meth:`HyperParameter.validate`, before the optimizer's own cross-parameter checks in
``_validate``), give ``defaults`` / ``optimizer_defaults(name)``, the "Hyper-parameters" section of
the class docstring and of ``help(make_optimizer)``, and the flags of ``dpaudit audit NAME`` (one
per hyper-parameter: ``noise_multiplier`` is ``--noise-multiplier``). Nothing else lists them, so
they cannot drift apart.

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

import abc
import dataclasses
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.accounting.base import make_accountant
from dpaudit.accounting.claim import PrivacyClaim
from dpaudit.core.deprecation import warn_deprecated_spelling
from dpaudit.core.seeds import make_rng
from dpaudit.core.validation import (
    NEIGHBOURING_RELATIONS,
    check_neighbouring,
    check_nonnegative,
    check_orders,
    check_real,
    check_real_array,
)
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.zcdp import ZCDPMechanism

__all__ = ["Run", "Optimizer", "HyperParameter", "hyperparameter_doc", "check_declarations", "NEIGHBOURING_HP",
           "CurveMechanism", "ZCDPStatement", "no_guarantee_claim", "accountant_claim", "check_data",
           "check_finite_params", "make_rng"]


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


def _fmt_bound(x: float) -> str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:g}"


@dataclass(frozen=True)
class HyperParameter:
    """One hyper-parameter of an optimizer, declared once on its class (``Optimizer.hyperparameters``).

    Parameters
    ----------
    name : str
        The Python keyword (``noise_multiplier``); the CLI flag is ``--noise-multiplier``.
    type : float, int, bool or str
        ``str`` goes with ``choices``. ``None`` (only for optimizers written before the declarations,
        which list ``defaults`` alone): any value, checked by the optimizer's ``_validate``.
    default : the value used when the keyword is not given (``None`` needs ``optional=True``).
    low, high : float
        The allowed range of a number (``None``: unbounded; ``math.inf`` may be a closed end).
    help : str
        One sentence for ``help()`` and ``--help``.
    choices : tuple, optional
        The allowed values of a ``str`` hyper-parameter.
    low_open, high_open : bool
        Whether the ends are excluded. ``high_open=None`` (the default) excludes an infinite upper
        end and includes a finite one; ``low`` is included unless ``low_open``.
    optional : bool
        ``None`` is also accepted (its meaning is said in ``help``, e.g. "None: computed from the data").
    instances : type, optional
        Objects of this class are accepted as they are (``Loss`` objects for ``loss``).
    deprecated : tuple of str
        Older keywords of the same hyper-parameter: accepted with a ``DeprecationWarning`` naming this one.
    """

    name: str
    type: Any
    default: Any
    low: float | None = None
    high: float | None = None
    help: str = ""
    choices: tuple | None = None
    low_open: bool = False
    high_open: bool | None = None
    optional: bool = False
    instances: Any = None
    deprecated: tuple = ()

    # -- derived --------------------------------------------------------------------------
    @property
    def flag(self) -> str:
        """The CLI flag: ``--`` and the name with dashes."""
        return "--" + self.name.replace("_", "-")

    @property
    def _high_open(self) -> bool:
        if self.high_open is not None:
            return bool(self.high_open)
        return self.high is None or math.isinf(self.high)

    @property
    def interval(self) -> str:
        """The allowed range of a number as an interval, e.g. ``"(0, 1]"`` or ``"(0, inf]"``."""
        lo = -math.inf if self.low is None else self.low
        hi = math.inf if self.high is None else self.high
        return (("(" if self.low_open or math.isinf(lo) else "[") + f"{_fmt_bound(lo)}, {_fmt_bound(hi)}"
                + (")" if self._high_open else "]"))

    @property
    def allowed(self) -> str:
        """What values are allowed, in words (used in every error message and in the help)."""
        if self.type is None:
            text = "any value the optimizer accepts"
        elif self.type is bool:
            text = "True or False"
        elif self.choices is not None:
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        elif self.type is int:
            text = f"an integer in {self.interval}"
        else:
            text = f"a number in {self.interval}"
        if self.instances is not None:
            text += f" (or a {self.instances.__name__} object)"
        return text + (" or None" if self.optional else "")

    @property
    def type_name(self) -> str:
        return "any" if self.type is None else self.type.__name__

    # -- checks ---------------------------------------------------------------------------
    def _in_range(self, x) -> bool:
        if self.low is not None and not (x > self.low if self.low_open else x >= self.low):
            return False
        return self.high is None or (x < self.high if self._high_open else x <= self.high)

    def _refuse(self, value, name=None):
        raise ValueError(f"{name or self.name} must be {self.allowed}, got {value!r}")

    def validate(self, value, name: str | None = None):
        """``value`` checked against the declaration and normalised (``float``/``int``/``bool``);
        a ``ValueError`` naming the hyper-parameter (or ``name``, e.g. a CLI flag) and the allowed
        values otherwise."""
        if value is None and self.optional:
            return None
        if self.type is None:
            return value
        if self.instances is not None and isinstance(value, self.instances):
            return value
        if self.type is bool:
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            self._refuse(value, name)
        if self.choices is not None:
            if isinstance(value, str) and value in self.choices:
                return value
            self._refuse(value, name)
        if self.type is str:
            if isinstance(value, str):
                return value
            self._refuse(value, name)
        if self.type is int:
            if isinstance(value, (bool, np.bool_)):
                self._refuse(value, name)
            if isinstance(value, (float, np.floating)) and float(value).is_integer():
                value = int(value)
            if not isinstance(value, (numbers.Integral, np.integer)) or not self._in_range(int(value)):
                self._refuse(value, name)
            return int(value)
        try:
            x = check_real(name or self.name, value, allow_inf=True)
        except ValueError:
            self._refuse(value, name)
        if not self._in_range(x):
            self._refuse(x, name)
        return x

    def parse(self, text: str, name: str | None = None):
        """The value of a command-line string (``inf``, ``1e-5``; ``none`` for an optional one), validated."""
        raw = str(text).strip()
        if self.optional and raw.lower() == "none":
            return None
        if self.type is int:
            try:
                value: Any = int(raw)
            except ValueError:
                try:
                    value = float(raw)
                except ValueError:
                    self._refuse(text, name)
        elif self.type is float:
            try:
                value = float(raw)
            except ValueError:
                self._refuse(text, name)
        elif self.type is bool:
            low = raw.lower()
            if low not in ("true", "false", "1", "0", "yes", "no"):
                self._refuse(text, name)
            value = low in ("true", "1", "yes")
        else:
            value = raw
        return self.validate(value, name)

    def with_default(self, default) -> HyperParameter:
        """The same declaration with another default (optimizers sharing a hyper-parameter)."""
        return dataclasses.replace(self, default=default)

    @property
    def spec(self) -> str:
        """Type and range in short: ``float in (0, 1]``, ``int in [1, inf)``, ``one of 'a', 'b'``, ``bool``."""
        if self.type is None or self.type is bool:
            text = self.type_name
        elif self.choices is not None:
            text = "one of " + ", ".join(repr(c) for c in self.choices)
            if self.instances is not None:
                text += f" (or a {self.instances.__name__} object)"
        elif self.type is str:
            text = "str"
        else:
            text = f"{self.type_name} in {self.interval}"
        return text + (" or None" if self.optional else "")

    def describe(self) -> str:
        """``name : spec; default D`` and the help on an indented line (the docstring entry)."""
        head = f"{self.name} : {self.spec}; default {self.default!r}"
        if self.deprecated:
            head += f" (older spelling{'s' if len(self.deprecated) > 1 else ''}, deprecated: " + \
                    ", ".join(self.deprecated) + ")"
        return head + (f"\n    {self.help}" if self.help else "")


#: the neighbouring relation, a hyper-parameter of the optimizers that offer both
NEIGHBOURING_HP = HyperParameter("neighbouring", str, "add_remove", help="neighbouring relation of the claim",
                                 choices=NEIGHBOURING_RELATIONS)


def check_declarations(owner: str, declarations) -> tuple[HyperParameter, ...]:
    """The declarations of ``owner`` as a tuple, refused (``TypeError``) when they are not
    :class:`HyperParameter` objects, repeat a name, or have a default their own check refuses."""
    decl = tuple(declarations)
    seen: set[str] = set()
    for p in decl:
        if not isinstance(p, HyperParameter):
            raise TypeError(f"{owner}.hyperparameters must hold HyperParameter objects, got {p!r}")
        for name in (p.name, *p.deprecated):
            if name in seen:
                raise TypeError(f"{owner}.hyperparameters declares {name!r} twice")
            seen.add(name)
        if p.type not in (None, float, int, bool, str):
            raise TypeError(f"{owner}.hyperparameters: {p.name} has type {p.type!r} (float, int, bool or str)")
        try:
            p.validate(p.default)
        except ValueError as exc:
            raise TypeError(f"{owner}.hyperparameters: the default of {p.name} is refused: {exc}") from None
    return decl


def hyperparameter_doc(declarations, indent: str = "") -> str:
    """The "Hyper-parameters" entries of ``declarations`` (one :meth:`HyperParameter.describe` each)."""
    lines = []
    for p in declarations:
        lines += [indent + line for line in p.describe().splitlines()]
    return "\n".join(lines)


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


class Optimizer(abc.ABC):
    """Base class: hyper-parameter handling and the shared interface.

    Subclasses set ``name`` and ``hyperparameters`` (a tuple of :class:`HyperParameter`, one per
    keyword the constructor takes: see the module docstring) and implement ``run`` and ``claim``;
    ``_validate`` adds the checks that involve several hyper-parameters (each value has already
    passed its own declaration). ``defaults`` and the "Hyper-parameters" section of the class
    docstring are derived from the declarations when the class is created.
    """

    name: str = ""
    #: every hyper-parameter, declared once (derived: ``defaults``, the docstring, the CLI flags)
    hyperparameters: tuple[HyperParameter, ...] = ()
    #: ``{name: default}`` of the declarations (derived; do not set it in a new optimizer)
    defaults: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("hyperparameters")
        if own is None and "defaults" in cls.__dict__:
            # an optimizer written before the declarations: its defaults, accepted as they are
            own = tuple(HyperParameter(k, None, v) for k, v in cls.__dict__["defaults"].items())
        if own is None:
            return
        cls.hyperparameters = check_declarations(cls.__name__, own)
        cls.defaults = {p.name: p.default for p in cls.hyperparameters}
        if cls.hyperparameters:
            doc = (cls.__doc__ or "").rstrip()
            cls.__doc__ = (doc + "\n\n" if doc else "") + "Hyper-parameters (``make_optimizer(name, **hp)``)\n" + \
                "-------------------------------------------------\n" + hyperparameter_doc(cls.hyperparameters) + "\n"

    @classmethod
    def hyperparameter(cls, name: str) -> HyperParameter:
        """The declaration of hyper-parameter ``name``."""
        for p in cls.hyperparameters:
            if p.name == name:
                return p
        raise ValueError(f"optimizer {cls.name!r} has no hyper-parameter {name!r}; "
                         f"allowed: {sorted(p.name for p in cls.hyperparameters)}")

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
        hyperparameters = self._new_spellings(hyperparameters)
        unknown = sorted(set(hyperparameters) - set(self.defaults))
        if unknown:
            raise ValueError(f"unknown hyper-parameter(s) {unknown} for optimizer {self.name!r}; "
                             f"allowed: {sorted(self.defaults)}")
        self.hp = {**self.defaults, **hyperparameters}
        for p in self.hyperparameters:  # each value against its own declaration (the one place)
            self.hp[p.name] = p.validate(self.hp[p.name])
        self._validate()

    @classmethod
    def _new_spellings(cls, hyperparameters: dict) -> dict:
        """Deprecated keywords (``HyperParameter.deprecated``) renamed, with a DeprecationWarning each."""
        out = dict(hyperparameters)
        for p in cls.hyperparameters:
            for old in p.deprecated:
                if old in out:
                    if p.name in out:
                        raise ValueError(f"give {p.name} only ({old} is its deprecated spelling), not both")
                    warn_deprecated_spelling(old, p.name, f"optimizer {cls.name!r}")
                    out[p.name] = out.pop(old)
        return out

    # -- helpers for subclasses ---------------------------------------------------------
    def _validate(self) -> None:  # noqa: B027 - a hook with nothing to do by default, not an abstract method
        """Checks involving several hyper-parameters (subclasses override); each value has already
        passed its own declaration."""

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
    @abc.abstractmethod
    def run(self, X, y, *, trials: int = 1, seed=None, canary_gradient=None) -> Run:
        """``trials`` independent runs on the records ``X`` (rows) with labels ``y``, batched: ``Run.params`` of
        shape (trials, dim) and ``Run.claim``. ``canary_gradient`` (optimizers with ``max_canaries >= 1``) adds
        the white-box Dirac canary of Nasr et al. 2023 as the optimizer's ``canary_semantics`` say."""

    @abc.abstractmethod
    def claim(self, n: int) -> PrivacyClaim:
        """The privacy claim of one run on ``n`` records, from the accounting layer (without running)."""

    @property
    def neighbouring(self) -> str:
        return self.hp.get("neighbouring", "add_remove")

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.hp.items())
        return f"make_optimizer({self.name!r}, {args})"
