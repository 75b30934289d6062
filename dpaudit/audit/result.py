"""Result types of the auditors: :class:`AuditResult` and :class:`Estimate`.

``AuditResult`` carries a *lower confidence bound* on epsilon (``API.md``, "Auditing"): on a
mechanism that truly satisfies its claim, ``violation`` is True with probability at most
``1 - confidence``. ``Estimate`` carries a point value with an interval and states the
assumption under which the interval holds (auditing.md sec. 4, 6, 7: lower bounds and
estimates must never be confused).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["AuditResult", "Estimate", "to_jsonable"]


def to_jsonable(obj):
    """Convert numpy scalars/arrays, tuples and non-finite floats into JSON-serialisable values.

    ``inf``/``-inf``/``nan`` become the strings ``"inf"``, ``"-inf"``, ``"nan"`` (strict JSON has
    no representation for them).
    """
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return x
    if obj is None or isinstance(obj, str):
        return obj
    if hasattr(obj, "to_dict"):
        return to_jsonable(obj.to_dict())
    return repr(obj)


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a confidence interval and the assumption it rests on.

    Attributes
    ----------
    value : float
        Point estimate.
    lower, upper : float
        Confidence interval at level ``confidence`` (``lower = 0`` / ``upper = inf`` when that
        side is not bounded by the method).
    method : str
        Name of the estimator.
    assumption : str
        What must hold for the interval to have its nominal coverage.
    confidence : float
        Nominal coverage of ``[lower, upper]``.
    details : dict
        Method-specific numbers (sample sizes, fitted parameters, ...).
    """

    value: float
    lower: float
    upper: float
    method: str
    assumption: str = ""
    confidence: float = 0.95
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return to_jsonable({
            "value": self.value, "lower": self.lower, "upper": self.upper, "method": self.method,
            "assumption": self.assumption, "confidence": self.confidence, "details": self.details,
        })


@dataclass(frozen=True)
class AuditResult:
    """Outcome of an empirical audit.

    Attributes
    ----------
    epsilon_lower : float
        Lower confidence bound on the true epsilon at ``delta`` (rounded down). With
        ``method`` starting with ``"gdp"`` it is instead an *estimate assuming mu-GDP*.
    epsilon_claimed : float
        The epsilon the mechanism/optimizer claims at ``delta`` (``inf``: no claim).
    delta : float
    confidence : float
        ``1 - beta``; the probability that a true claim is flagged is at most ``beta``.
    violation : bool
        ``epsilon_lower > epsilon_claimed``.
    method : str
        How ``epsilon_lower`` was obtained.
    trials : int
        Number of mechanism/optimizer runs per neighbouring input.
    details : dict
        Counts, thresholds, the GDP estimate with its assumption, ROC points, ...
    """

    epsilon_lower: float
    epsilon_claimed: float
    delta: float
    confidence: float
    violation: bool
    method: str
    trials: int
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-serialisable dictionary (non-finite floats as strings)."""
        return to_jsonable({
            "epsilon_lower": self.epsilon_lower, "epsilon_claimed": self.epsilon_claimed,
            "delta": self.delta, "confidence": self.confidence, "violation": self.violation,
            "method": self.method, "trials": self.trials, "details": self.details,
        })

    def summary(self) -> str:
        """Multi-line human-readable summary (used by ``dpaudit audit``)."""
        verdict = "VIOLATION: the claim is contradicted" if self.violation else "consistent with the claim"
        lines = [
            f"claimed epsilon   : {self.epsilon_claimed:.6g} at delta = {self.delta:.3g}",
            f"epsilon lower     : {self.epsilon_lower:.6g} ({self.confidence:.0%} confidence)",
            f"method            : {self.method}",
            f"trials            : {self.trials} per neighbouring input",
        ]
        gdp = self.details.get("gdp")
        if gdp and not self.method.startswith("gdp"):
            eps = gdp.get("epsilon")
            if eps is not None:
                lines.append(f"GDP estimate      : {eps:.6g} (mu >= {gdp['mu_lower']:.4g}; {gdp['assumption']})")
        lines.append(f"verdict           : {verdict}")
        return "\n".join(lines)
