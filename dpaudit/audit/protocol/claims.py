"""Claims an audit compares with: what a claim says at the audit's delta, and how a user states one.

A claim is a number epsilon (pure DP, or at the given delta), a pair ``(epsilon, delta)``, or an object with
``.epsilon(delta)`` -- a :class:`~dpaudit.accounting.claim.PrivacyClaim` (an optimizer's ``run.claim``, an
accountant's composition). At ``delta = 0`` an audit checks the pure-DP epsilon, which a claim without one
(a Gaussian) does not have: asking for it is a ``ValueError`` naming delta, never a silent change of delta.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dpaudit.audit.stats.error_rates import check_audit_delta
from dpaudit.core.validation import check_nonnegative

__all__ = ["DEFAULT_AUDIT_DELTA", "pure_dp_epsilon", "claim_epsilon", "claim_record", "resolve_claim"]

#: delta of an audit of a claim object when neither the call nor the audited algorithm gives one
DEFAULT_AUDIT_DELTA = 1e-5


def pure_dp_epsilon(claim) -> float:
    """The pure-DP epsilon of a claim, ``inf`` when it has none.

    From an explicit ``details["pure_epsilon"]``, a single (epsilon, 0) statement, or the RDP curve
    at order infinity (D_inf <= eps is eps-DP; Mironov 2017, Prop. 3 and the definition of D_inf).
    """
    details = getattr(claim, "details", None) or {}
    if details.get("pure_epsilon") is not None:
        return float(details["pure_epsilon"])
    if details.get("delta") == 0 and details.get("epsilon") is not None:
        return float(details["epsilon"])
    if getattr(claim, "has_rdp", False):
        value = float(np.asarray(claim.rdp([math.inf]), dtype=float)[0])
        if math.isfinite(value):
            return value
    return math.inf


def claim_epsilon(claim, delta: float, name: str = "the optimizer") -> float:
    """The claimed epsilon at the audit's delta; at ``delta = 0`` the pure-DP epsilon, or a
    ``ValueError`` naming delta when the claim has none (auditing it at another delta would
    answer a question that was not asked)."""
    if delta > 0.0:
        return float(claim.epsilon(delta))
    eps = pure_dp_epsilon(claim)
    if not math.isfinite(eps):
        raise ValueError(f"delta = 0 asks for a pure-DP audit, but the claim of {name} has no pure-DP epsilon "
                         f"({getattr(claim, 'description', claim)}); give delta in (0, 1)")
    return eps


def claim_record(claim, delta: float, eps_claimed: float) -> dict:
    """``details["claim"]`` of an audit of ``claim`` at ``delta`` (a pure-DP audit records its pure epsilon)."""
    if delta > 0.0:
        return claim.to_dict(delta)
    return {**claim.to_dict(), "delta": 0.0, "epsilon": eps_claimed, "pure_dp": True}


def resolve_claim(claim, delta=None) -> dict:
    """The claim an audit compares with: ``{"deltas", "epsilons", "record", "neighbouring"}``.

    ``claim``: ``None`` (no claim: epsilon inf), a number epsilon (``delta`` default 0, pure DP), a pair
    ``(epsilon, delta)`` (``delta`` must then be omitted or equal), or an object with ``.epsilon(delta)``
    (``delta`` default 1e-5; a sequence of deltas checks the claim at each). Raises ``ValueError`` naming
    ``claim`` or ``delta``."""
    several = isinstance(delta, (Sequence, np.ndarray)) and not isinstance(delta, str)
    if several:
        deltas: list[float] | None = [check_audit_delta("delta", d) for d in delta]
        if not deltas:
            raise ValueError("delta must be a number or a non-empty sequence of numbers")
        if len(set(deltas)) != len(deltas):
            raise ValueError(f"delta must not repeat a value, got {list(delta)}")
    else:
        deltas = None if delta is None else [check_audit_delta("delta", delta)]
    if claim is None or (isinstance(claim, (int, float, np.integer, np.floating)) and not isinstance(claim, bool)):
        eps = math.inf if claim is None else check_nonnegative("claim", claim, allow_inf=True)
        if several:
            raise ValueError("delta: several deltas need a claim object with .epsilon(delta) (a number is one "
                             "(epsilon, delta) statement)")
        deltas = deltas or [0.0]
        return {"deltas": deltas, "epsilons": [eps],
                "record": {"epsilon": eps, "delta": deltas[0], "kind": "none" if claim is None else "epsilon"},
                "neighbouring": None}
    if isinstance(claim, (tuple, list)):
        if len(claim) != 2:
            raise ValueError(f"claim must be epsilon, (epsilon, delta) or a claim object, got {claim!r}")
        eps = check_nonnegative("claim", claim[0], allow_inf=True)
        d = check_audit_delta("claim", claim[1])
        if deltas is not None and deltas != [d]:
            raise ValueError(f"delta = {delta!r} differs from the claim's delta {d}: give one of them")
        return {"deltas": [d], "epsilons": [eps], "record": {"epsilon": eps, "delta": d, "kind": "(epsilon, delta)"},
                "neighbouring": None}
    if not callable(getattr(claim, "epsilon", None)):
        raise ValueError(f"claim must be epsilon, (epsilon, delta) or an object with .epsilon(delta), got {claim!r}")
    deltas = deltas or [DEFAULT_AUDIT_DELTA]
    epsilons = [claim_epsilon(claim, d, "the claim") for d in deltas]
    rec = claim.to_dict(deltas[0]) if callable(getattr(claim, "to_dict", None)) and deltas[0] > 0 else {
        "description": getattr(claim, "description", repr(claim))}
    rec = {**rec, "checked_at": [{"delta": d, "epsilon": e} for d, e in zip(deltas, epsilons)]}
    neighbouring = getattr(claim, "neighbouring", None)
    return {"deltas": deltas, "epsilons": epsilons, "record": rec,
            "neighbouring": neighbouring if neighbouring in ("add_remove", "replace_one") else None}
