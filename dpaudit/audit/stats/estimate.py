"""The result type of an estimator: :class:`Estimate`, a point value with an interval and the assumption it
rests on (Dong, Roth, Su 2019; Nasr et al. 2023: lower bounds and estimates must never be confused)."""

from __future__ import annotations

from dataclasses import dataclass, field

from dpaudit.core.jsonable import to_jsonable

__all__ = ["Estimate"]


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
