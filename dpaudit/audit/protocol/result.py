"""Result types of the auditors: :class:`AuditResult` and :class:`Estimate`.

``AuditResult`` carries a *lower confidence bound* on epsilon (the public interface, docs/api.md): on a
mechanism that truly satisfies its claim, ``violation`` is True with probability at most
``1 - confidence``. ``Estimate`` carries a point value with an interval and states the
assumption under which the interval holds (Dong, Roth, Su 2019; Nasr et al. 2023: lower bounds and
estimates must never be confused).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from dpaudit.audit.protocol.verdict import CHECKS, FLUKE, GDP_LABEL, advice_lines, explain, verdict_of
from dpaudit.audit.stats.estimate import Estimate
from dpaudit.core.jsonable import to_jsonable

__all__ = ["AuditResult", "Estimate", "to_jsonable", "VIOLATION_CHECKS"]

#: what to check after a violation of a training loop, most common first (kept for callers of the old name;
#: :func:`dpaudit.audit.protocol.verdict.explain` chooses the checks by the evidence)
VIOLATION_CHECKS = CHECKS[("distribution", "optimizer")] + (FLUKE,)


@dataclass(frozen=True, repr=False)
class AuditResult:
    """Outcome of an empirical audit.

    Attributes
    ----------
    epsilon_lower : float
        Certified lower confidence bound on the true epsilon at ``delta`` (rounded down), for
        every method. With ``method="gdp"`` it is still the certified threshold bound; the GDP
        number is in :attr:`gdp_estimate` (an *estimate, assuming mu-GDP*).
    epsilon_claimed : float
        The epsilon the mechanism/optimizer claims at ``delta`` (``inf``: no claim).
    delta : float
    confidence : float
        ``1 - beta``; the probability that a true claim is flagged is at most ``beta``.
    violation : bool
        ``epsilon_lower > epsilon_claimed`` (certified numbers only; never set by an estimate).
    method : str
        How ``epsilon_lower`` was obtained.
    trials : int
        Number of mechanism/optimizer runs per neighbouring input.
    details : dict
        Counts, thresholds, the GDP estimate with its assumption (``"gdp"``), advisory numbers
        for audits without power (``"advice"``), ROC points, ...

    Derived: :attr:`verdict` (``"violation"``, ``"consistent"`` or ``"inconclusive"``, see
    :mod:`dpaudit.audit.protocol.verdict`) and :attr:`gdp_estimate`.
    """

    epsilon_lower: float
    epsilon_claimed: float
    delta: float
    confidence: float
    violation: bool
    method: str
    trials: int
    details: dict = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        """``"violation"`` (certified bound above the claim), ``"consistent"`` (a positive certified
        bound, not above the claim) or ``"inconclusive"`` (the audit certified nothing)."""
        return verdict_of(self.epsilon_lower, self.epsilon_claimed, self.violation)

    @property
    def gdp_estimate(self):
        """The GDP epsilon *estimate, assuming mu-GDP* (``None`` when not computed). Never a bound."""
        gdp = self.details.get("gdp") if isinstance(self.details, dict) else None
        eps = gdp.get("epsilon") if isinstance(gdp, dict) else None
        return None if eps is None else float(eps)

    @property
    def attack_statistics(self):
        """TPR at fixed low FPRs, AUROC and best accuracy with intervals (``details["attack_statistics"]``, see
        :mod:`dpaudit.audit.stats.attack_stats`; ``None`` when not computed). Descriptive: never a bound."""
        st = self.details.get("attack_statistics") if isinstance(self.details, dict) else None
        return st if isinstance(st, dict) else None

    @property
    def ceiling(self):
        """The largest epsilon the audit could certify (one-run audits: ``details["ceiling"]``, m canaries and every
        guess right; ``None`` when not computed). A claim at or above it cannot be shown violated."""
        c = self.details.get("ceiling") if isinstance(self.details, dict) else None
        eps = c.get("epsilon") if isinstance(c, dict) else None
        return None if eps is None else float(eps)

    @property
    def findings(self) -> list:
        """The two findings of an audit whose contest had a bit-level attack: ``[implementation, mathematical]``
        (each a dict with ``epsilon_lower``, ``family``, ``leak``, ...), valid together at ``confidence``; ``[]``
        for a single finding."""
        f = self.details.get("findings") if isinstance(self.details, dict) else None
        return list(f) if isinstance(f, list) else []

    @property
    def mathematical_lower(self):
        """The certified bound of the mathematical mechanism (the best attack reading the outputs as real numbers)
        when the audit has two findings, else ``None``."""
        f = {x.get("name"): x for x in self.findings}.get("mathematical")
        return None if f is None else float(f["epsilon_lower"])

    @property
    def cause(self):
        """What a violation comes from: ``"floating-point"`` (the bits of the outputs) or ``"distribution"`` (the
        mechanism as a distribution); ``None`` without a violation."""
        if not self.violation:
            return None
        c = self.details.get("cause") if isinstance(self.details, dict) else None
        if c:
            return c
        attack = self.details.get("attack") if isinstance(self.details, dict) else None
        return attack.get("leak", "distribution") if isinstance(attack, dict) else "distribution"

    def explain(self) -> dict:
        """What the audit found, why, and what to do next (:func:`dpaudit.audit.protocol.verdict.explain`)."""
        return explain(self.verdict, self.epsilon_lower, self.epsilon_claimed, self.details)

    def __repr__(self) -> str:
        """One line: the verdict and the numbers that decide it (``details`` are left out; see
        :meth:`summary` or ``to_dict()``)."""
        gdp = self.gdp_estimate
        tail = f", gdp_estimate={gdp:.4g} (not a bound)" if gdp is not None else ""
        if self.mathematical_lower is not None:
            tail = f", mathematical_lower={self.mathematical_lower:.4g}" + tail
        if self.cause is not None:
            tail = f", cause={self.cause!r}" + tail
        return (f"AuditResult(verdict={self.verdict!r}, epsilon_lower={self.epsilon_lower:.4g}, "
                f"epsilon_claimed={self.epsilon_claimed:.4g}, delta={self.delta:.3g}, confidence={self.confidence:.4g}, "
                f"trials={self.trials}, method={self.method.split(',')[0]!r}{tail}, details=<{len(self.details)} keys>)")

    def with_details(self, **details) -> AuditResult:
        """A copy whose ``details`` are updated with ``details`` (the result itself is immutable)."""
        return replace(self, details={**self.details, **details})

    def to_dict(self) -> dict:
        """JSON-serialisable dictionary (``inf`` as the string "inf", NaN as None), with ``verdict`` and the
        labelled ``gdp_estimate``."""
        return to_jsonable({
            "epsilon_lower": self.epsilon_lower, "epsilon_claimed": self.epsilon_claimed,
            "delta": self.delta, "confidence": self.confidence, "violation": self.violation,
            "verdict": self.verdict, "method": self.method, "trials": self.trials,
            "cause": self.cause, "mathematical_lower": self.mathematical_lower, "explanation": self.explain(),
            "gdp_estimate": self.gdp_estimate, "gdp_estimate_label": f"{GDP_LABEL}; not a bound, never sets the verdict",
            "details": self.details,
        })

    def _trials_line(self) -> str:
        """One-run audits count trainings (the audit run and, when calibrated, a calibration run) of m canaries;
        every other audit counts runs per neighbouring input."""
        d = self.details if isinstance(self.details, dict) else {}
        m = d.get("m", (d.get("one_run") or {}).get("m") if isinstance(d.get("one_run"), dict) else None)
        if str(self.method).startswith("one-run") and m is not None:
            runs = "training run" if self.trials == 1 else "training runs"
            return f"trials            : {self.trials} {runs} with {int(m):,} canaries each"
        return f"trials            : {self.trials} per neighbouring input"

    def summary(self) -> str:
        """Multi-line human-readable summary (used by ``dpaudit audit``): the verdict and its next step first, the
        findings, the certified numbers, why and what to check, and last -- apart from the bounds -- the GDP number,
        an estimate that is never a bound."""
        ex = self.explain()
        lines = [f"verdict           : {ex['line']}"]
        lines += [f"finding           : {f}" for f in ex["findings"]]
        lines += [
            f"claimed epsilon   : {self.epsilon_claimed:.6g} at delta = {self.delta:.3g}",
            f"epsilon lower     : {self.epsilon_lower:.6g} (certified, {self.confidence:.0%} confidence)",
            f"method            : {self.method}",
            self._trials_line(),
        ]
        ceiling = self.ceiling
        if ceiling is not None:
            if self.epsilon_claimed >= ceiling:
                note = " -- the claim is at or above it: this audit cannot show it violated"
            elif self.details["ceiling"].get("at_ceiling"):
                note = " -- the bound reached it: more canaries may certify more"
            else:
                note = ""
            lines.append(f"ceiling           : {ceiling:.6g} (the most this audit could certify: every guess right){note}")
        lines += [f"why               : {w}" for w in ex["why"]]
        if self.verdict == "violation":
            lines += [f"check             : {c}" for c in ex["next"]]
        relation = self.details.get("relation") if isinstance(self.details, dict) else None
        if isinstance(relation, dict) and relation.get("warning"):
            lines.append(f"warning           : {relation['warning']}")
        if self.verdict == "inconclusive":
            lines += [f"                    {x}" for x in advice_lines(self.details.get("advice"), self.epsilon_claimed)]
        eps = self.gdp_estimate
        if eps is not None:
            gdp = self.details.get("gdp") or {}
            lines.append(f"estimate          : GDP epsilon {eps:.4g} ({GDP_LABEL}: mu >= "
                         f"{gdp.get('mu_lower', float('nan')):.4g}; not a bound, never sets the verdict)")
        return "\n".join(lines)
