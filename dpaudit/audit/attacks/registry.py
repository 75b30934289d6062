"""The registry of attack families: what ``statistic="auto"`` tries, and the names a user may pass.

Adding a family: write its :class:`~dpaudit.audit.attacks.base.AttackFamily` (its own module in this package, or
:mod:`dpaudit.audit.attacks.families`) and add one instance to :data:`ATTACK_FAMILIES` below; a family that reads the
binary representation of floats also goes in :data:`BIT_LEVEL_FAMILIES` (``statistic="auto-real"`` leaves it out).
"""

from __future__ import annotations

from dpaudit.audit.attacks.base import AttackFamily
from dpaudit.audit.attacks.families import (
    EmpiricalLRAttack,
    LogisticAttack,
    MLPAttack,
    NaiveBayesAttack,
    ProjectionAttack,
    ValueAttack,
)
from dpaudit.audit.attacks.floating import FloatBitsAttack

__all__ = ["ATTACK_FAMILIES", "FAMILY_NAMES", "BIT_LEVEL_FAMILIES", "resolve_families", "leak_kind"]

#: the families ``statistic="auto"`` tries, in this order
ATTACK_FAMILIES = (ValueAttack(), ProjectionAttack(), EmpiricalLRAttack(), NaiveBayesAttack(), LogisticAttack(),
                   MLPAttack(), FloatBitsAttack())
FAMILY_NAMES = tuple(f.name for f in ATTACK_FAMILIES)
#: families that read the binary representation of floats (left out by statistic="auto-real")
BIT_LEVEL_FAMILIES = ("float-bits",)


def resolve_families(statistic) -> list[AttackFamily]:
    """The families to try for ``statistic``: "auto" (every family with ``in_auto``: the same on every install),
    "auto-real" (those but the bit-level ones: the outputs are read as real numbers, so the audit is of the
    mathematical mechanism, not of its floating-point implementation), a family name, or a list of names, families
    and "auto"/"auto-real" (``["auto", "mlp"]`` adds the optional neural network)."""
    if isinstance(statistic, (str, AttackFamily)) or not hasattr(statistic, "__iter__"):  # one name, or a number:
        statistic = [statistic]  # refused below by name (was "'int' object is not iterable")
    out = []
    for f in statistic:
        if isinstance(f, AttackFamily):
            out.append(f)
        elif f in ("auto", "auto-real"):  # the families every install has (in_auto), bit-level ones for "auto"
            out += [g for g in ATTACK_FAMILIES if g.in_auto and (f == "auto" or g.name not in BIT_LEVEL_FAMILIES)]
        elif isinstance(f, str) and f in FAMILY_NAMES:
            out.append(ATTACK_FAMILIES[FAMILY_NAMES.index(f)])
        else:
            raise ValueError(f"statistic must be a callable, 'auto', or attack family names from {FAMILY_NAMES}, "
                             f"got {f!r}")
    if not out:
        raise ValueError("statistic: the list of attack families is empty")
    return list(dict.fromkeys(out))  # each family once, in the order given


def leak_kind(family: str, statistic=None) -> str:
    """'floating-point' when the winning statistic reads the binary representation of floats."""
    if family in BIT_LEVEL_FAMILIES or family == "float-reachability" or getattr(statistic, "bit_level", False):
        return "floating-point"
    return "distribution"
