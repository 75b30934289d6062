"""The neighbouring relation of an audited pair, and of the claim it is compared with.

A DP claim holds for one neighbouring relation: ``"add_remove"`` (the datasets differ by one
record added or removed) or ``"replace_one"`` (same size, one record replaced). An audit's pair
(x, x_prime) has a relation too. When they differ, a lower bound above the claim need not be a bug:

* a replace-one pair is an add/remove pair composed twice (remove a record, add another), so an
  add/remove (epsilon, delta)-DP mechanism is only (2 epsilon, (1 + e^epsilon) delta)-DP on it
  (group privacy for groups of size 2: Dwork and Roth 2014, Theorem 2.2). diffprivlib's
  histogram "violates" 1-DP on a replace-one pair for this reason alone;
* a replace-one claim (bounded DP) says nothing about datasets of different sizes.

:func:`relation_record` validates the two relations and returns what the audit records in
``AuditResult.details["relation"]`` (and ``details["neighbouring"]``, the pair's relation), with
a warning text when they differ; the audit also emits it as a :class:`NeighbouringRelationWarning`.
"""

from __future__ import annotations

import warnings

__all__ = ["RELATIONS", "NeighbouringRelationWarning", "relation_record", "warn_relation"]

RELATIONS = ("add_remove", "replace_one")


class NeighbouringRelationWarning(UserWarning):
    """The audited pair and the claim use different neighbouring relations."""


def _check(name: str, value):
    if value is None:
        return None
    if value not in RELATIONS:
        raise ValueError(f"{name} must be one of {RELATIONS} or None, got {value!r}")
    return value


def relation_record(neighbouring=None, claim_neighbouring=None) -> dict:
    """``{"pair", "claim", "warning"}``: the validated relations and the mismatch warning (or None)."""
    pair = _check("neighbouring", neighbouring)
    claim = _check("claim_neighbouring", claim_neighbouring)
    warning = None
    if pair == "replace_one" and claim == "add_remove":
        warning = ("the audited pair is replace-one but the claim is add/remove: an add/remove (epsilon, delta)-DP "
                   "mechanism is only (2 epsilon, (1 + e^epsilon) delta)-DP on a replace-one pair (group privacy "
                   "of size 2), so a lower bound above the claim does not by itself show a bug; audit an add/remove "
                   "pair (x with one record added or removed) or compare with the replace-one claim")
    elif pair == "add_remove" and claim == "replace_one":
        warning = ("the audited pair is add/remove but the claim is replace-one: a replace-one claim says nothing "
                   "about datasets of different sizes, so a lower bound above the claim does not by itself show a "
                   "bug; audit a replace-one pair (same size, one record replaced)")
    return {"pair": pair, "claim": claim, "warning": warning}


def warn_relation(record: dict, stacklevel: int = 2) -> None:
    """Emit the record's warning, if any, as a :class:`NeighbouringRelationWarning`."""
    if record.get("warning"):
        warnings.warn(record["warning"], NeighbouringRelationWarning, stacklevel=stacklevel + 1)
