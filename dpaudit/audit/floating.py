"""Floating-point leaks of a sampler: :func:`check_floating_point`.

A mechanism that adds real-valued noise in double precision, ``fl(x + n)``, does not release the
distribution its proof is about: the set of doubles it can output depends on ``x`` (Mironov, "On
significance of the least significant bits for differential privacy", CCS 2012). Two attacks are
run on the sampler as written:

1. **Precision attack** (bit-level features of the outputs: sign, exponent, significant mantissa
   bits; the statistic ``float-bits`` of :mod:`dpaudit.audit.attacks.families`, in the spirit of
   Haney et al., "Precision-based attacks and interval refining", PETS 2022). Its result is an
   :class:`~dpaudit.audit.protocol.result.AuditResult` with a certified lower bound, valid with no
   assumption on the sampler.

2. **Reachable-set attack** (Mironov 2012, Section 3): an output ``y`` observed under ``x`` is
   checked for being *impossible* under ``x'``. Two models of the code are available:

   * ``"additive"`` (any noise distribution): the sampler computes ``fl(v + n)`` for a double
     ``n`` (``v + rng.normal(0, s)``, ``rng.laplace(v, b)``, ``v - b * log(u)``, ...), ``v`` the
     query value of the input. ``y`` is reachable from ``v`` iff some double ``n`` has
     ``fl(v + n) == y``; the doubles ``n`` with that property form an interval around the real
     ``y - v``, so checking the doubles within two ulps of ``fl(y - v)`` decides it exactly.
   * ``"numpy-laplace"`` (with ``scale=b``): the sampler is numpy's ``laplace`` (``Generator`` or
     ``RandomState``), whose noise is ``b * log(2U)`` or ``-b * log(2 - U - U)`` for ``U`` a
     multiple of ``2**-53`` (numpy's ``random_laplace``); the output is reachable iff one of
     these ``2**53`` noise values gives it. The map from ``U`` to the output is monotone, so a
     bisection over ``U`` (53 steps) and a check of its neighbours with the C library's ``log``
     decides it.

   The model is first checked against the sampler: every output observed under ``x`` must be
   reachable from ``x`` and every output under ``x'`` from ``x'`` under the model (otherwise the
   model does not describe the code, is reported as rejected and nothing is concluded from it).
   An output of one input unreachable from the other is an event of probability 0 under the other
   input and positive probability under the first: if the model describes the code, no finite
   epsilon, at any delta smaller than that probability, covers the pair. The result says so
   (``impossible``, ``model_epsilon = inf``), but as a *finding under the model*: the model is an
   assumption about the code (the check above can refute it, not prove it), so it sets neither the
   verdict nor ``epsilon_lower``, which are the precision attack's certified ones.

What a safe implementation does (docs/floating-point.md): snap the output to a grid coarser than
the rounding error after clamping (Mironov's snapping mechanism, 2012), sample discrete noise
exactly (the discrete Laplace and Gaussian of Canonne, Kamath and Steinke, NeurIPS 2020;
:class:`dpaudit.DiscreteLaplace`, :class:`dpaudit.DiscreteGaussian`), or add noise in exact
(integer / rational) arithmetic and round once at the end onto a fixed grid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dpaudit.audit.attacks.floating import additive_reachable, numpy_laplace_reachable
from dpaudit.audit.attacks.preflight import check_sampler_signature
from dpaudit.audit.attacks.selection import attack_choice
from dpaudit.audit.protocol.relation import relation_record
from dpaudit.audit.protocol.result import AuditResult
from dpaudit.audit.protocol.sampler import run_sampler_audit, warn_pure_dp_claim
from dpaudit.audit.protocol.two_sample import SamplerAudit, candidate_pairs
from dpaudit.core.execution import Execution
from dpaudit.core.jsonable import to_jsonable
from dpaudit.core.seeds import as_seed_sequence, make_rng, pin_seed, seed_record, spawn
from dpaudit.core.threads import blas_limited
from dpaudit.core.validation import check_confidence, check_count

__all__ = ["check_floating_point", "FloatingPointResult", "MODELS"]

#: models of the reachable-set attack
MODELS = ("auto", "additive", "numpy-laplace", "none")


@dataclass(frozen=True, repr=False)
class FloatingPointResult:
    """Outcome of :func:`check_floating_point`.

    Attributes
    ----------
    impossible : bool
        An output observed under one input has probability 0 under the other under ``model`` (checked on the
        outputs of both inputs first). A finding resting on the model: it sets no verdict and no bound.
    witness : dict or None
        The output, the input it was observed under and the input it is impossible under.
    model : str
        The reachable-set model used (``"additive"``, ``"numpy-laplace"``) or ``"none"``.
    model_note : str
        Why the model was used, rejected or not applicable.
    precision : AuditResult
        The precision (bit-level) attack: its ``epsilon_lower`` is certified without assumptions.
    counts : dict
        Outputs checked and impossible outputs found, per direction.
    """

    impossible: bool
    witness: dict | None
    model: str
    model_note: str
    precision: AuditResult
    counts: dict = field(default_factory=dict)

    @property
    def epsilon_claimed(self) -> float:
        return self.precision.epsilon_claimed

    @property
    def epsilon_lower(self) -> float:
        """The precision attack's certified lower bound (valid with no assumption on the sampler)."""
        return self.precision.epsilon_lower

    @property
    def model_epsilon(self) -> float | None:
        """``inf`` when an output of probability 0 under one input was observed *under the model* (a finding
        that rests on the model describing the code: never a bound), else ``None``."""
        return math.inf if self.impossible else None

    @property
    def violation(self) -> bool:
        """The precision attack's certified violation (the reachable-set finding never sets it)."""
        return bool(self.precision.violation)

    @property
    def verdict(self) -> str:
        return self.precision.verdict

    @property
    def message(self) -> str:
        pr = self.precision
        if pr.violation:
            certified = (f"the precision attack certified epsilon >= {pr.epsilon_lower:.4g} > claimed "
                         f"{pr.epsilon_claimed:.4g} (floating-point leak)")
        else:
            certified = (f"precision attack: epsilon >= {pr.epsilon_lower:.4g} certified (claim "
                         f"{pr.epsilon_claimed:.4g})")
        if self.impossible:
            w = self.witness or {}
            return (f"an output of probability 0 under one input was observed: {w.get('output')!r} (under "
                    f"{w.get('observed_under')}) cannot be produced from {w.get('impossible_under')} under the "
                    f"{self.model} model of the sampler (Mironov 2012; the model is an assumption about the code, "
                    f"checked on both inputs' outputs): if it describes the code, epsilon is infinite. Certified: "
                    + certified)
        return f"no output of probability 0 observed ({self.model_note}); " + certified

    def __repr__(self) -> str:
        return (f"FloatingPointResult(verdict={self.verdict!r}, impossible={self.impossible}, "
                f"epsilon_lower={self.epsilon_lower:.4g}, epsilon_claimed={self.epsilon_claimed:.4g}, "
                f"model={self.model!r})")

    def summary(self) -> str:
        return "\n".join([self.message, "precision attack:", self.precision.summary()])

    def to_dict(self) -> dict:
        return to_jsonable({"verdict": self.verdict, "violation": self.violation, "impossible": self.impossible,
                            "model_epsilon": self.model_epsilon, "epsilon_lower": self.epsilon_lower, "epsilon_claimed": self.epsilon_claimed,
                            "message": self.message, "witness": self.witness, "model": self.model,
                            "model_note": self.model_note, "counts": self.counts,
                            "precision": self.precision.to_dict()})


def _claim(claim):
    try:
        if isinstance(claim, (tuple, list)) and len(claim) == 2:
            eps, delta = float(claim[0]), float(claim[1])
        elif hasattr(claim, "epsilon") and callable(claim.epsilon):
            eps, delta = float(claim.epsilon(0.0)), 0.0
        else:
            eps, delta = float(claim), 0.0
    except (TypeError, ValueError):
        raise ValueError(f"claim must be an epsilon, an (epsilon, delta) pair or a PrivacyClaim, got {claim!r}") \
            from None
    if math.isnan(eps) or eps < 0 or not 0.0 <= delta < 1.0:
        raise ValueError(f"claim must have epsilon >= 0 and delta in [0, 1), got {claim!r}")
    return eps, delta


def _scalar(x):
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if a.size != 1 or not np.isfinite(a).all():
        return None
    return float(a.ravel()[0])


def _outputs(sampler, x, rng, n):
    out = sampler(x, rng, n)
    try:
        a = np.asarray(out, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if a.shape[:1] != (n,) or a.size != n:
        return None
    return a.ravel()


def _precision_attack(sampler, x, x_prime, *, eps, delta, trials, confidence, families, seed) -> AuditResult:
    """The certified threshold audit of the sampler with the given attack families (in this process)."""
    if delta == 0.0:
        warn_pure_dp_claim(sampler)
    req = SamplerAudit(sampler, candidate_pairs(x, x_prime, None), eps, delta, confidence, trials,
                       attack_choice(families))
    seed = pin_seed(seed)
    result, probe_runs = run_sampler_audit(req, "threshold", as_seed_sequence(seed), Execution())
    return result.with_details(seed=seed_record(seed), neighbouring=None, relation=relation_record(None, None),
                               preflight_runs=probe_runs)


@blas_limited
def check_floating_point(sampler, x, x_prime, *, claim=1.0, trials: int = 20_000, seed=None,
                         model: str = "auto", scale: float | None = None, values=None,
                         confidence: float = 0.95) -> FloatingPointResult:
    """Check a real-valued sampler for floating-point leaks (module docstring).

    Parameters
    ----------
    sampler : callable(x, rng, size) -> ``size`` real numbers
    x, x_prime : the neighbouring inputs.
    claim : epsilon, ``(epsilon, delta)`` or a PrivacyClaim (its pure-DP epsilon)
    trials : runs per input of each attack (the precision attack and the reachable-set attack each
        draw ``trials`` outputs per input).
    seed : None, int or SeedSequence
    model : ``"auto"`` (``"numpy-laplace"`` when ``scale`` is given, else ``"additive"``),
        ``"additive"``, ``"numpy-laplace"`` or ``"none"`` (precision attack only).
    scale : the Laplace scale ``b`` of the ``"numpy-laplace"`` model.
    values : ``(v, v')``, the exact query values of ``x`` and ``x'`` (default: ``x`` and ``x'``
        themselves when they are real numbers; the model is not applicable otherwise).
    confidence : of the precision attack's certified bound.
    """
    if not callable(sampler):
        raise ValueError("sampler must be callable as sampler(x, rng, size)")
    check_sampler_signature(sampler, x)
    eps, delta = _claim(claim)
    trials = check_count("trials", trials, minimum=10)
    confidence = check_confidence("confidence", confidence)
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    if scale is not None and not (math.isfinite(float(scale)) and float(scale) > 0):
        raise ValueError(f"scale must be a positive finite number, got {scale!r}")
    if model == "auto":
        model = "numpy-laplace" if scale is not None else "additive"
    if model == "numpy-laplace" and scale is None:
        raise ValueError("scale is required with model='numpy-laplace' (the Laplace scale b)")
    s_prec, s_reach, s_pre = spawn(pin_seed(seed), 3)
    # integer-valued outputs (discrete samplers) have no rounding for the precision attack to read: the
    # certified bound then comes from the output value and its empirical likelihood ratio (the Neyman-Pearson
    # tests for a discrete scalar output); a stream no attack uses decides
    p0, p1 = spawn(s_pre, 2)
    pre = [_outputs(sampler, x, make_rng(p0), 100), _outputs(sampler, x_prime, make_rng(p1), 100)]
    integer = all(a is not None and np.all(a[np.isfinite(a)] == np.round(a[np.isfinite(a)])) for a in pre)
    precision = _precision_attack(sampler, x, x_prime, eps=eps, delta=delta, trials=trials, confidence=confidence,
                                  families=["value", "empirical-lr"] if integer else "float-bits", seed=s_prec)
    precision = precision.with_details(floating_point={
        "precision_attack": "not applicable: integer-valued outputs (audit with the value and empirical-lr "
                            "statistics)" if integer
        else "float-bits (sign, exponent, significant mantissa bits)"})

    if model == "none":
        return FloatingPointResult(False, None, "none", "reachable-set attack not requested", precision, {})
    if values is None:
        v0, v1 = _scalar(x), _scalar(x_prime)
    else:
        if not isinstance(values, (tuple, list)) or len(values) != 2:
            raise ValueError("values must be a pair (v, v') of the exact query values of x and x_prime")
        v0, v1 = _scalar(values[0]), _scalar(values[1])
        if v0 is None or v1 is None:
            raise ValueError(f"values must be two finite real numbers, got {values!r}")
    if v0 is None or v1 is None:
        return FloatingPointResult(False, None, "none", "reachable-set attack not applicable: the inputs are not real "
                                   "numbers (pass values=(v, v') with their exact query values)", precision, {})
    r0, r1 = spawn(s_reach, 2)
    y0 = _outputs(sampler, x, make_rng(r0), trials)
    y1 = _outputs(sampler, x_prime, make_rng(r1), trials)
    if y0 is None or y1 is None:
        return FloatingPointResult(False, None, "none", "reachable-set attack not applicable: the outputs are not one "
                                   "real number per run", precision, {})

    if model == "additive":
        def reach(y, v):
            return additive_reachable(y, v)
    else:
        assert scale is not None  # model "numpy-laplace" requires it (checked above)

        def reach(y, v):
            return numpy_laplace_reachable(y, v, float(scale))
    self0, self1 = reach(y0, v0), reach(y1, v1)
    counts = {"outputs_per_input": trials, "x_outputs_unreachable_from_x": int((~self0).sum()),
              "x_prime_outputs_unreachable_from_x_prime": int((~self1).sum())}
    if not (self0.all() and self1.all()):
        note = (f"{model} model rejected: {counts['x_outputs_unreachable_from_x']} outputs under x and "
                f"{counts['x_prime_outputs_unreachable_from_x_prime']} under x' are not reachable from their own input "
                "under it, so it does not describe the sampler; nothing is concluded from it")
        return FloatingPointResult(False, None, model, note, precision, counts)
    cross0, cross1 = ~reach(y0, v1), ~reach(y1, v0)
    counts["x_outputs_impossible_under_x_prime"] = int(cross0.sum())
    counts["x_prime_outputs_impossible_under_x"] = int(cross1.sum())
    witness = None
    if cross0.any():
        witness = {"output": float(y0[np.argmax(cross0)]), "observed_under": "x", "impossible_under": "x_prime",
                   "share": float(cross0.mean())}
    elif cross1.any():
        witness = {"output": float(y1[np.argmax(cross1)]), "observed_under": "x_prime", "impossible_under": "x",
                   "share": float(cross1.mean())}
    note = (f"{model} model (checked: all {trials} outputs of each input reachable from it); "
            f"values {v0!r} and {v1!r}")
    return FloatingPointResult(witness is not None, witness, model, note, precision, counts)
