"""PrivacyClaim: what an algorithm promises, in a form auditors and reports can read.

A claim is produced by the accounting layer (an accountant, a seed theorem, or a single
(epsilon, delta) statement) and answers ``epsilon(delta)`` and ``delta(epsilon)`` with
*upper bounds*. Where the claim rests on an RDP curve or a zCDP rho, ``rdp(orders)`` and
``rho`` expose them; otherwise they are ``None``-valued / ``inf``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from dpaudit.core.validation import check_delta, check_epsilon, check_neighbouring, check_orders

__all__ = ["PrivacyClaim"]


class PrivacyClaim:
    """An (upper-bound) privacy guarantee with the neighbouring relation it refers to.

    Parameters
    ----------
    neighbouring : {"add_remove", "replace_one"}
    description : str
        Human-readable statement of what is claimed and why (theorem, accountant).
    epsilon_fn : callable(delta) -> float
        Upper bound on epsilon at ``delta`` (``inf`` when none).
    delta_fn : callable(epsilon) -> float
        Upper bound on delta at ``epsilon`` (``1.0`` when none).
    rdp_fn : callable(orders) -> array, optional
        RDP curve when the claim rests on one.
    rho : float, optional
        zCDP parameter when the claim is a zCDP statement.
    source : str
        Short label of the accounting method (``"rdp"``, ``"zcdp"``, ``"pld"``,
        ``"langevin-theorem-1"``, ...).
    """

    def __init__(
        self,
        *,
        neighbouring: str,
        description: str,
        epsilon_fn: Callable[[float], float],
        delta_fn: Callable[[float], float],
        rdp_fn: Callable[[np.ndarray], np.ndarray] | None = None,
        rho: float | None = None,
        source: str = "",
        details: dict | None = None,
    ):
        self.neighbouring = check_neighbouring("neighbouring", neighbouring)
        self.description = description
        self._epsilon_fn = epsilon_fn
        self._delta_fn = delta_fn
        self._rdp_fn = rdp_fn
        self.rho = rho
        self.source = source
        self.details = dict(details or {})

    # -- queries -------------------------------------------------------------------------
    def epsilon(self, delta: float) -> float:
        """Upper bound on epsilon for the given delta, in [0, inf].

        A source may answer below 0 (Opacus' RDP conversion gives epsilon = -0.69 at delta 0.5 for weak
        compositions): epsilon = 0 is then the bound it proves (every epsilon >= 0 holds whenever a negative one
        does). NaN (no answer) reads as inf, no guarantee."""
        eps = float(self._epsilon_fn(check_delta("delta", delta)))
        return math.inf if math.isnan(eps) else max(eps, 0.0)

    def delta(self, epsilon: float) -> float:
        """Upper bound on delta for the given epsilon, in [0, 1] (clipped likewise; NaN reads as 1)."""
        d = float(self._delta_fn(check_epsilon("epsilon", epsilon)))
        return 1.0 if math.isnan(d) else min(max(d, 0.0), 1.0)

    def rdp(self, orders) -> np.ndarray:
        """RDP curve of the claim (``inf`` everywhere when the claim is not an RDP statement)."""
        orders = check_orders("orders", orders)
        if self._rdp_fn is None:
            return np.full(orders.shape, math.inf)
        return np.asarray(self._rdp_fn(orders), dtype=float)

    @property
    def has_rdp(self) -> bool:
        return self._rdp_fn is not None

    # -- constructors --------------------------------------------------------------------
    @classmethod
    def from_accountant(cls, accountant, *, neighbouring: str, description: str, source: str | None = None,
                        details: dict | None = None) -> PrivacyClaim:
        """Wrap an accountant (anything with ``epsilon(delta)`` and ``delta(epsilon)``)."""
        rdp_fn = None
        if hasattr(accountant, "rdp_curve"):
            rdp_fn = accountant.rdp_curve
        rho = getattr(accountant, "rho", None)
        return cls(
            neighbouring=neighbouring,
            description=description,
            epsilon_fn=accountant.epsilon,
            delta_fn=accountant.delta,
            rdp_fn=rdp_fn,
            rho=rho,
            source=source or type(accountant).__name__,
            details=details,
        )

    @classmethod
    def approx_dp(cls, epsilon: float, delta: float, *, neighbouring: str, description: str,
                  source: str = "approx-dp", details: dict | None = None) -> PrivacyClaim:
        """A single (epsilon, delta)-DP statement.

        ``epsilon(d)`` is ``epsilon`` for ``d >= delta`` and ``inf`` below; ``delta(e)`` is
        ``delta`` for ``e >= epsilon`` and ``1`` below (no guarantee).
        """
        epsilon = check_epsilon("epsilon", epsilon)
        delta0 = float(delta)
        if not 0.0 <= delta0 < 1.0:
            raise ValueError(f"delta must be in [0, 1), got {delta0}")
        return cls(
            neighbouring=neighbouring,
            description=description,
            epsilon_fn=_SinglePoint(epsilon, delta0).epsilon,
            delta_fn=_SinglePoint(epsilon, delta0).delta,
            source=source,
            details={"epsilon": epsilon, "delta": delta0, **(details or {})},
        )

    @classmethod
    def best_of(cls, claims: Sequence[PrivacyClaim], *, description: str | None = None) -> PrivacyClaim:
        """The pointwise minimum of several valid claims about the same algorithm.

        Each query is answered by the claim that gives the smallest bound;
        ``details["chosen"]`` records which one answered the latest query. The result holds no
        closures, so it pickles (process pools and Dask workers receive claims).
        """
        claims = list(claims)
        if not claims:
            raise ValueError("claims must not be empty")
        rel = claims[0].neighbouring
        if any(c.neighbouring != rel for c in claims):
            raise ValueError("claims must all refer to the same neighbouring relation")
        best = _BestOf(claims)
        rdp_fn = best.rdp if any(c.has_rdp for c in claims) else None
        rhos = [c.rho for c in claims if c.rho is not None]
        out = cls(
            neighbouring=rel,
            description=description or " / ".join(c.description for c in claims),
            epsilon_fn=best.epsilon,
            delta_fn=best.delta,
            rdp_fn=rdp_fn,
            rho=min(rhos) if rhos else None,
            source="min(" + ", ".join(c.source for c in claims) + ")",
        )
        out.details = best.details  # shared, so "chosen" is visible after each query
        return out

    def to_dict(self, delta: float | None = None) -> dict:
        """JSON-serialisable summary (with ``epsilon`` at ``delta`` when given)."""
        d = {
            "neighbouring": self.neighbouring,
            "description": self.description,
            "source": self.source,
            "rho": self.rho,
        }
        if delta is not None:
            d["delta"] = delta
            d["epsilon"] = self.epsilon(delta)
        return d

    def __repr__(self) -> str:
        return f"PrivacyClaim(source={self.source!r}, neighbouring={self.neighbouring!r}, {self.description!r})"


class _BestOf:
    """Picklable pointwise minimum over claims (used by :meth:`PrivacyClaim.best_of`)."""

    def __init__(self, claims):
        self.claims = list(claims)
        self.details: dict = {"candidates": [c.source for c in self.claims]}

    def _pick(self, values):
        i = int(np.argmin(values))
        self.details["chosen"] = self.claims[i].source
        return values[i]

    def epsilon(self, delta):
        return self._pick([c.epsilon(delta) for c in self.claims])

    def delta(self, epsilon):
        return self._pick([c.delta(epsilon) for c in self.claims])

    def rdp(self, orders):
        return np.min([c.rdp(orders) for c in self.claims if c.has_rdp], axis=0)


class _SinglePoint:
    """Picklable (epsilon, delta) statement: epsilon(d) and delta(e) of one point."""

    def __init__(self, epsilon: float, delta: float):
        self.eps, self.dlt = epsilon, delta

    def epsilon(self, d):
        return self.eps if d >= self.dlt else math.inf

    def delta(self, e):
        return self.dlt if e >= self.eps else 1.0
