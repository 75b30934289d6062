"""The accountant contract, and the one registry of accountants by name.

Every accountant (RDP, zCDP, tCDP, PLD) subclasses :class:`Accountant`, which owns what they
share: ``compose(mechanism, count=1) -> self`` (count validated, the neighbouring relation
joined, the composed ``(mechanism, count)`` pairs recorded in :attr:`Accountant.events`), and the
queries ``epsilon(delta)`` (upper bound, ``inf`` when no guarantee) and ``delta(epsilon)`` (upper
bound, at most 1). A subclass states what it reads of one step (:meth:`Accountant._step`, which
raises :class:`~dpaudit.core.validation.UnsupportedMechanismError` when the mechanism has no
guarantee in its notion) and how ``count`` steps are added (:meth:`Accountant._add`).

:func:`make_accountant` builds one by name (``"rdp"``, ``"zcdp"``, ``"tcdp"``, ``"pld"``);
:data:`ACCOUNTANTS` lists the names. A new accountant subclasses :class:`Accountant`, sets
``name`` and ``label`` and adds one line to :data:`_REGISTRY`; the contract tests
(``tests/test_accountant_contract.py``) apply to it by inheriting their class.
"""

from __future__ import annotations

import abc
import importlib

from dpaudit.core.validation import UnsupportedMechanismError, check_count

__all__ = ["Accountant", "ACCOUNTANTS", "accountant_class", "make_accountant", "join_relation"]

#: accountant name -> (module, class)
_REGISTRY = {
    "rdp": ("dpaudit.accounting.rdp", "RDPAccountant"),
    "zcdp": ("dpaudit.accounting.zcdp", "ZCDPAccountant"),
    "tcdp": ("dpaudit.accounting.tcdp", "TCDPAccountant"),
    "pld": ("dpaudit.accounting.pld.accountant", "PLDAccountant"),
}

#: the accountant names understood by :func:`make_accountant`, the CLI, reports and interop
ACCOUNTANTS = tuple(_REGISTRY)


def infinite_curvature(mechanism, accountant: str, guarantee: str, no_guarantee: str) -> None:
    """For a mechanism whose zCDP-type parameter is infinite: return when it states a guarantee beyond
    the float range (``has_zcdp_guarantee()``: it composes to epsilon = inf); otherwise raise
    UnsupportedMechanismError -- naming an (epsilon, delta) statement with delta > 0 as such (it has
    no ``guarantee``; RDPAccountant carries its delta, PLDAccountant has its exact pair), and any
    other mechanism with ``no_guarantee``. Shared by the zCDP and tCDP accountants."""
    has = getattr(mechanism, "has_zcdp_guarantee", None)
    if callable(has) and has():
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


class Accountant(abc.ABC):
    """Base class of the accountants (see the module docstring)."""

    #: registry name ("rdp", ...) and the label used in tables and plots
    name: str = ""
    label: str = ""

    def __init__(self):
        self.neighbouring: str | None = None
        self._events: list[tuple[object, int]] = []

    @classmethod
    def quiet(cls, **options) -> Accountant:
        """An instance for internal use (claims, calibration, the CLI): it emits no warnings of
        its own (the RDP accountant's order-grid warning); the same numbers as ``cls()``."""
        return cls(**options)

    # -- composition -------------------------------------------------------------------------
    def compose(self, mechanism, count=1) -> Accountant:
        """Compose ``count`` (adaptive) runs of ``mechanism``; returns ``self``.

        ``count`` is any integer >= 0 (0 composes nothing but still checks the mechanism and its
        neighbouring relation). Raises :class:`~dpaudit.core.validation.UnsupportedMechanismError`
        when the mechanism has no guarantee in the accountant's notion, and ``ValueError`` when
        its neighbouring relation differs from that of the mechanisms composed before.
        """
        count = check_count("count", count)
        step = self._step(mechanism)
        self.neighbouring = join_relation(self.neighbouring, mechanism)
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


def accountant_class(name: str) -> type[Accountant]:
    """The class of accountant ``name`` (one of :data:`ACCOUNTANTS`)."""
    key = name.lower() if isinstance(name, str) else name
    if key not in _REGISTRY:
        raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {name!r}")
    module, cls = _REGISTRY[key]
    return getattr(importlib.import_module(module), cls)


def make_accountant(name: str, *, quiet: bool = False, **options) -> Accountant:
    """A new, empty accountant ``name`` (``options`` go to its constructor); with ``quiet`` the
    instance for internal use (:meth:`Accountant.quiet`)."""
    cls = accountant_class(name)
    return cls.quiet(**options) if quiet else cls(**options)
