"""What the mechanism-library adapters share: claims read from a library, audits against them.

A library states its guarantee in its own terms: a pure epsilon, an (epsilon, delta) pair, or a zCDP
parameter rho. :class:`LibraryClaim` holds the (epsilon, delta) points dpaudit audits:

* pure epsilon: one point ``(epsilon, 0)``;
* (epsilon, delta): one point;
* zCDP rho: several points ``(eps(delta), delta)`` from the conversion of Canonne, Kamath and
  Steinke (NeurIPS 2020, Proposition 8; :func:`dpaudit.conversions.zcdp_to_dp`, rounded up), at
  the deltas given (default :data:`ZCDP_DELTAS`).

:func:`audit_library_claim` audits every point, each at confidence ``1 - beta / k`` (Bonferroni
over the ``k`` points), so that the verdict "some point is violated" is a false alarm with
probability at most ``beta`` on a mechanism that satisfies its claim. It returns the
:class:`~dpaudit.audit.protocol.result.AuditResult` of the point with the largest excess of the certified
bound over the claim, with all points in ``details["claim_points"]``.

Randomness: when a library's own generator cannot be seeded from dpaudit's, the adapters warn with
:class:`LibraryRNGWarning` and record ``details["library"]["library_rng_seeded"] = False``: the
bound stays valid (it never relies on the seed) but the run is not reproducible from the seed.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

from dpaudit.accounting.conversions import zcdp_to_dp
from dpaudit.audit.mechanism import audit_mechanism
from dpaudit.core.seeds import pin_seed, seed_record, spawn
from dpaudit.core.validation import check_confidence, check_delta, check_nonnegative, check_real

__all__ = ["LibraryRNGWarning", "LibraryClaim", "ZCDP_DELTAS", "audit_library_claim", "warn_unseeded", "unseeded_message",
           "release", "check_deltas"]

class LibraryRNGWarning(UserWarning):
    """A library's own random generator is used: the audit is not reproducible from dpaudit's seed."""


#: deltas at which a zCDP claim is checked (one audit each, Bonferroni over them)
ZCDP_DELTAS = (1e-3, 1e-6, 1e-9)


def unseeded_message(library: str, what: str) -> str:
    return (f"{what} draws from {library}'s own random generator, which dpaudit's seed cannot set: the audit is not "
            "reproducible from its seed (the bound stays valid)")


def warn_unseeded(library: str, what: str, stacklevel: int = 3) -> None:
    warnings.warn(unseeded_message(library, what), LibraryRNGWarning, stacklevel=stacklevel)


def check_deltas(deltas) -> tuple:
    """``deltas`` as a non-empty tuple of floats in (0, 1) (a ValueError naming ``deltas`` otherwise)."""
    try:
        ds = tuple(check_delta("deltas", d) for d in deltas)
    except (TypeError, ValueError):
        ds = ()
    if not ds:
        raise ValueError(f"deltas must be a non-empty sequence of numbers in (0, 1), got {deltas!r}")
    return ds


def release(sampler_name: str, call, x):
    """``call(x)``: one release of a library's mechanism inside a sampler. An input the library refuses (its own
    exception: diffprivlib's ``TypeError``, OpenDP's ``OpenDPException``, PyDP's ``RuntimeError``, ...) becomes a
    ``TypeError``/``ValueError`` that names the sampler, the input and what the library said, with the
    library's exception as its cause (an audit reports it through its ``ChunkError``)."""
    try:
        return call(x)
    except (MemoryError, RecursionError):
        raise
    except Exception as exc:
        cls = TypeError if isinstance(exc, TypeError) else ValueError
        raise cls(f"sampler {sampler_name}: the library refused the input x={x!r:.80}: {type(exc).__name__}: "
                  f"{exc}") from exc


@dataclass(frozen=True)
class LibraryClaim:
    """A library's stated guarantee as the (epsilon, delta) points dpaudit audits (module docstring)."""

    kind: str  # "pure", "approx" or "zcdp"
    points: tuple  # ((epsilon, delta), ...)
    parameter: float | tuple  # epsilon, (epsilon, delta) or rho as the library states it
    description: str

    @classmethod
    def pure(cls, epsilon: float, description: str = "") -> LibraryClaim:
        eps = check_nonnegative("epsilon", epsilon, allow_inf=True)
        return cls("pure", ((eps, 0.0),), eps, description or f"{eps:g}-DP")

    @classmethod
    def approx(cls, epsilon: float, delta: float, description: str = "") -> LibraryClaim:
        eps, d = check_nonnegative("epsilon", epsilon, allow_inf=True), check_real("delta", delta)
        if not 0.0 <= d < 1.0:
            raise ValueError(f"delta must be in [0, 1), got {delta!r}")
        return cls("approx", ((eps, d),), (eps, d), description or f"({eps:g}, {d:g})-DP")

    @classmethod
    def zcdp(cls, rho: float, deltas=ZCDP_DELTAS, description: str = "") -> LibraryClaim:
        r = check_nonnegative("rho", rho, allow_inf=True)
        ds = check_deltas(deltas)
        pts = tuple((float(zcdp_to_dp(r, d)), d) for d in ds)
        return cls("zcdp", pts, r, description or f"{r:g}-zCDP, checked at delta in {list(ds)}")

    def to_dict(self) -> dict:
        return {"kind": self.kind, "parameter": self.parameter, "points": [list(p) for p in self.points],
                "description": self.description}


def audit_library_claim(sampler, x, x_prime, claim: LibraryClaim, *, confidence: float = 0.95, seed=None,
                        library: str | None = None, **audit_options):
    """Audit ``sampler`` on ``x, x_prime`` at every point of ``claim`` (module docstring).

    The result is marked as a library's (``details["library"]``, with ``library`` as its name): its verdict is
    explained with the checks of a library adapter (:func:`dpaudit.audit.protocol.verdict.scenario_of`); the
    adapters replace the mark with their own record (library, mechanism, claim, seeding)."""
    if not isinstance(claim, LibraryClaim):
        raise ValueError(f"claim must be a LibraryClaim, got {claim!r}")
    confidence = check_confidence("confidence", confidence)
    for name in ("epsilon", "delta"):
        if name in audit_options:
            raise ValueError(f"{name} is read from the library's claim; pass claim=LibraryClaim.approx(...) instead")
    k = len(claim.points)
    each = 1.0 - (1.0 - confidence) / k
    seed = pin_seed(seed)
    seeds = spawn(seed, k) if k > 1 else [seed]
    results = [audit_mechanism(sampler, x, x_prime, epsilon=eps, delta=d, confidence=each, seed=s, **audit_options)
               for (eps, d), s in zip(claim.points, seeds)]

    def excess(r):
        return r.epsilon_lower - r.epsilon_claimed if math.isfinite(r.epsilon_claimed) else -math.inf

    worst = max(results, key=lambda r: (r.violation, excess(r), r.epsilon_lower))
    points = [{"epsilon": r.epsilon_claimed, "delta": r.delta, "epsilon_lower": r.epsilon_lower,
               "violation": r.violation, "confidence_each": each} for r in results]
    return worst.with_details(library={"name": library or "unnamed library", "claim": claim.to_dict()},
                              claim_points=points, library_claim=claim.to_dict(),
                              claim_confidence={"overall": confidence, "each": each, "points": k,
                                                "rule": "Bonferroni over the claim points"},
                              claim_seed=seed_record(seed))
