"""The accountant contract, and the one registry of accountants by name.

Every accountant (RDP, zCDP, tCDP, PLD) subclasses :class:`Accountant`, which owns what they
share: ``compose(mechanism, count=1) -> self`` (count validated, the neighbouring relation
joined, the composed ``(mechanism, count)`` pairs recorded in :attr:`Accountant.events`), and the
queries ``epsilon(delta)`` (upper bound, ``inf`` when no guarantee) and ``delta(epsilon)`` (upper
bound, at most 1). A subclass states what it reads of one step (:meth:`Accountant._step`, which
raises :class:`~dpaudit.core.validation.UnsupportedMechanismError` when the mechanism has no
guarantee in its notion) and how ``count`` steps are added (:meth:`Accountant._add`).

:func:`make_accountant` builds one by name (``"rdp"``, ``"zcdp"``, ``"tcdp"``, ``"pld"``,
``"exact"``, ``"pure"``); :data:`ACCOUNTANTS` lists the names. A new accountant subclasses
:class:`Accountant`, sets ``name``, ``label`` and ``amplifies_subsampling`` and adds one line to
:data:`_REGISTRY`; the contract tests (``tests/contracts/test_accountant_contract.py``) apply to it by
inheriting their class.

Subsampling. Each class declares :attr:`Accountant.amplifies_subsampling`: whether it applies
an amplification-by-subsampling theorem. zCDP has none (a subsampled Gaussian is no better than
the Gaussian in zCDP: Bun & Steinke 2016 give no amplification, and the RDP of a Poisson-
subsampled Gaussian is not of the form rho*alpha), and the tCDP amplification theorem (Bun,
Dwork, Rothblum, Steinke 2018) covers sampling without replacement under its conditions only. Such
an accountant *warns* (:class:`NoAmplificationWarning`) instead of refusing when it composes a
sampled mechanism whose charge is that of the unsampled one (:meth:`Accountant.ignores_subsampling`):
its number is a valid upper bound, only a loose one, and may be what the user wants (a zCDP
budget); the warning names the accountants that amplify. Refusing would break ledgers that mix
notions on purpose. Instances for internal use (:meth:`Accountant.quiet`: claims, calibration,
the CLI and reports, which label the number themselves) do not warn.
"""

from __future__ import annotations

import abc
import importlib
import warnings
from typing import TypeVar

from dpaudit.core.validation import UnsupportedMechanismError, check_count

__all__ = ["Accountant", "ACCOUNTANTS", "accountant_class", "make_accountant", "join_relation",
           "NoAmplificationWarning", "NO_AMPLIFICATION", "amplifying_accountants", "non_private_step"]

#: accountant name -> (module, class)
_REGISTRY = {
    "rdp": ("dpaudit.accounting.rdp", "RDPAccountant"),
    "zcdp": ("dpaudit.accounting.zcdp", "ZCDPAccountant"),
    "tcdp": ("dpaudit.accounting.tcdp", "TCDPAccountant"),
    "pld": ("dpaudit.accounting.pld.accountant", "PLDAccountant"),
    "exact": ("dpaudit.accounting.exact", "ExactAccountant"),
    "pure": ("dpaudit.accounting.exact", "PureDPAccountant"),
}

#: the accountant names understood by :func:`make_accountant`, the CLI, reports and interop
ACCOUNTANTS = tuple(_REGISTRY)

#: note shown wherever an accountant gives a subsampled mechanism no amplification
NO_AMPLIFICATION = "no amplification by sampling in this notion: the unsampled mechanism's value"


class NoAmplificationWarning(UserWarning):
    """An accountant without an amplification-by-subsampling theorem composed a sampled mechanism:
    its number ignores the sampling (it is that of the unsampled mechanism). Valid, but far
    larger than what an accountant that amplifies gives (the message names them)."""


def amplifying_accountants() -> list[str]:
    """Names of the registered accountants that amplify subsampling."""
    return [n for n in ACCOUNTANTS if accountant_class(n).amplifies_subsampling]


def subsample_of(mechanism):
    """``(base, q)`` with 0 < q < 1 when ``mechanism`` runs ``base`` on a subsample, else None."""
    method = getattr(mechanism, "subsampling", None)
    sub = method() if callable(method) else None
    if sub is None or not 0.0 < float(sub[1]) < 1.0:
        return None
    return sub


def non_private_step(mechanism) -> bool:
    """True when ``mechanism`` is non-private (``non_private()``), or runs a non-private mechanism
    on a subsample: an accountant without amplification gives it no guarantee at all."""
    method = getattr(mechanism, "non_private", None)
    if callable(method) and method():
        return True
    sub = subsample_of(mechanism)
    return sub is not None and non_private_step(sub[0])


def infinite_curvature(mechanism, accountant: str, guarantee: str, no_guarantee: str) -> None:
    """For a mechanism whose zCDP-type parameter is infinite: return when it states a guarantee beyond
    the float range (``has_zcdp_guarantee()``: it composes to epsilon = inf) or is non-private
    (:func:`non_private_step`: the answer inf is known, and exact); otherwise raise
    UnsupportedMechanismError -- naming an (epsilon, delta) statement with delta > 0 as such (it has
    no ``guarantee``; RDPAccountant carries its delta, PLDAccountant has its exact pair), and any
    other mechanism with ``no_guarantee``. Shared by the zCDP and tCDP accountants."""
    has = getattr(mechanism, "has_zcdp_guarantee", None)
    if callable(has) and has():
        return
    if non_private_step(mechanism):
        return
    approx = getattr(mechanism, "approx_dp", None)
    if callable(approx) and approx() is not None:
        raise UnsupportedMechanismError(
            f"{mechanism!r} is an (epsilon, delta)-DP statement (ApproxDP / EpsilonDeltaDpEvent) with "
            f"delta > 0: it has no {guarantee} guarantee and {accountant} refuses it; use RDPAccountant (which "
            "carries the delta additively) or PLDAccountant (its exact privacy-loss distribution)"
        )
    raise UnsupportedMechanismError(no_guarantee)


def join_relation(current: str | None, mechanism) -> str:
    """The accountant's relation after composing ``mechanism``.

    The first mechanism fixes it; a later mechanism under another relation raises ValueError:
    guarantees under add/remove and replace-one neighbours do not compose into either.
    """
    relation = getattr(mechanism, "neighbouring", "add_remove")
    if current is not None and relation != current:
        raise ValueError(
            f"mechanism neighbouring relation {relation!r} differs from the accountant's {current!r}; "
            "guarantees under different neighbouring relations cannot be composed"
        )
    return relation


#: an accountant's own class: ``compose`` returns ``self``, typed as the subclass it is called on
_Acc = TypeVar("_Acc", bound="Accountant")


class Accountant(abc.ABC):
    """Base class of the accountants (see the module docstring)."""

    #: registry name ("rdp", ...) and the label used in tables and plots
    name: str = ""
    label: str = ""
    #: whether the accountant applies an amplification-by-subsampling theorem (module docstring)
    amplifies_subsampling: bool = True
    #: whether epsilon depends on delta (False: a pure-DP accountant, the same epsilon at every delta)
    needs_delta: bool = True

    def __init__(self):
        self.neighbouring: str | None = None
        self._events: list[tuple[object, int]] = []
        self._quiet = False

    @classmethod
    def quiet(cls: type[_Acc], **options) -> _Acc:
        """An instance for internal use (claims, calibration, the CLI, reports): it emits no
        warnings of its own (the RDP accountant's order-grid warning,
        :class:`NoAmplificationWarning`); the same numbers as ``cls()``."""
        acc = cls(**options)
        acc._quiet = True
        return acc

    # -- subsampling -------------------------------------------------------------------------
    @classmethod
    def ignores_subsampling(cls, mechanism) -> bool:
        """True when ``mechanism`` is sampled (0 < q < 1) and this accountant charges it as much as
        the unsampled mechanism (it has no amplification for it). Always False for an accountant
        that :attr:`amplifies_subsampling`."""
        if cls.amplifies_subsampling:
            return False
        sub = subsample_of(mechanism)
        if sub is None:
            return False
        return cls._charge(mechanism) >= cls._charge(sub[0])

    @classmethod
    def _charge(cls, mechanism) -> float:
        """What the accountant charges for one step (compared with the unsampled step's by
        :meth:`ignores_subsampling`); accountants that do not amplify override it."""
        return 0.0

    def _warn_subsampling(self, mechanism) -> None:
        if self._quiet or not self.ignores_subsampling(mechanism):
            return
        warnings.warn(
            f"{type(self).__name__} composed {_describe(mechanism)} without amplification by subsampling: "
            f"{self.label} has no amplification theorem for it, so the number ignores the sampling (it is that "
            f"of the unsampled mechanism) and is far larger than it needs to be. Accountants that amplify "
            f"subsampling: {', '.join(amplifying_accountants())} (make_accountant(name)).",
            NoAmplificationWarning, stacklevel=3)

    # -- composition -------------------------------------------------------------------------
    def compose(self: _Acc, mechanism, count=1) -> _Acc:
        """Compose ``count`` (adaptive) runs of ``mechanism``; returns ``self``.

        ``count`` is any integer >= 0 (0 composes nothing but still checks the mechanism and its
        neighbouring relation). Raises :class:`~dpaudit.core.validation.UnsupportedMechanismError`
        when the mechanism has no guarantee in the accountant's notion, and ``ValueError`` when
        its neighbouring relation differs from that of the mechanisms composed before.
        """
        count = check_count("count", count)
        step = self._step(mechanism)
        self.neighbouring = join_relation(self.neighbouring, mechanism)
        self._warn_subsampling(mechanism)
        if count and self._add(mechanism, step, count):
            self._events.append((mechanism, count))
        return self

    @abc.abstractmethod
    def _step(self, mechanism):
        """What the accountant reads of one step of ``mechanism`` (validated); raises
        :class:`~dpaudit.core.validation.UnsupportedMechanismError` when there is none."""

    @abc.abstractmethod
    def _add(self, mechanism, step, count: int) -> bool:
        """Add ``count`` >= 1 steps; ``False`` when the step releases nothing (not recorded)."""

    @property
    def events(self) -> list[tuple[object, int]]:
        """The composed (mechanism, count) pairs, in order."""
        return list(self._events)

    # -- queries -----------------------------------------------------------------------------
    @abc.abstractmethod
    def epsilon(self, delta) -> float:
        """Upper bound on epsilon at ``delta`` in (0, 1) (``inf`` when there is no guarantee)."""

    @abc.abstractmethod
    def delta(self, epsilon) -> float:
        """Upper bound on delta at ``epsilon`` >= 0 (at most 1)."""

    def epsilon_details(self, delta) -> dict:
        """``{"epsilon": ...}`` and what produced it (e.g. the RDP order, zCDP rho)."""
        return {"epsilon": self.epsilon(delta)}

    def meets(self, epsilon, delta) -> bool:
        """True when the composition is certified (epsilon, delta)-DP: ``epsilon(delta) <=
        epsilon`` (an accountant with a cheaper certified test overrides it; it never answers True
        where ``epsilon(delta) > epsilon``). Calibration's feasibility test."""
        return self.epsilon(delta) <= epsilon


def _describe(mechanism) -> str:
    describe = getattr(mechanism, "describe", None)
    return describe() if callable(describe) else repr(mechanism)


def accountant_class(name: str) -> type[Accountant]:
    """The class of accountant ``name`` (one of :data:`ACCOUNTANTS`)."""
    key = name.lower() if isinstance(name, str) else name
    if key not in _REGISTRY:
        raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {name!r}")
    module, cls = _REGISTRY[key]
    return getattr(importlib.import_module(module), cls)


def make_accountant(name: str, *, quiet: bool = False, **options) -> Accountant:
    """A new, empty accountant ``name`` (``options`` go to its constructor); with ``quiet`` the
    instance for internal use (:meth:`Accountant.quiet`).

    Example
    -------
    >>> from dpaudit import Gaussian, make_accountant
    >>> acc = make_accountant("rdp").compose(Gaussian(1.0), 10)   # ten Gaussian steps, sigma = sensitivity = 1
    >>> print(f"{acc.epsilon(1e-5):.4f}")
    19.0536
    >>> type(make_accountant("zcdp")).__name__
    'ZCDPAccountant'
    """
    cls = accountant_class(name)
    return cls.quiet(**options) if quiet else cls(**options)
