"""One set of audit defaults, and the reason for each difference.

| setting | audits (``audit_mechanism``, ``audit_optimizer``, ``dpaudit audit``, ``dpaudit report``) | pytest helpers (``dpaudit.testing``) |
|---|---|---|
| trials per input | :data:`DEFAULT_TRIALS` = 10,000 | :data:`TESTING_TRIALS` = 20,000 |
| confidence | :data:`DEFAULT_CONFIDENCE` = 0.95 | :data:`TESTING_CONFIDENCE` = 0.99 |
| delta | see below | as for audits |

Why the helpers differ: a test suite runs many checks on every commit, and a check of a correct
mechanism fails with probability up to 1 - confidence; at 0.95 one check in twenty would make CI
flaky, at 0.99 one in a hundred (and the pytest plugin fixes each test's seed, so a failure
reproduces). The stricter confidence costs power, which twice the trials buys back: the most a
threshold audit can certify against a mechanism exactly at an (epsilon, 1e-5) claim is 0.947 at
10,000 trials / 0.95 and 0.951 at 20,000 / 0.99 for epsilon = 1 (3.830 and 3.841 for epsilon = 4;
:func:`dpaudit.audit.protocol.verdict.threshold_ceiling` with 70% of the trials certifying).

delta: ``audit_mechanism(..., delta=0.0)`` audits a *pure*-DP claim: that default is part of the
public interface, and a black-box sampler carries no claim to take a delta from. It never
passes silently for a Gaussian: when the sampler is a dpaudit mechanism without a pure-DP
guarantee (``mechanism.sample``, or the mechanism itself in the helpers), ``audit_mechanism``
warns and the helpers refuse. Optimizer audits take the optimizer's own ``delta`` when it has one,
else :data:`DEFAULT_DELTA` (their claims are (epsilon, delta) statements); ``dpaudit report`` and
``dpaudit account --target-epsilon`` use :data:`DEFAULT_DELTA` too, and say so.

Not audits: ``dpaudit renyi --trials`` and ``dpaudit report --renyi-trials`` (default 20,000) are
simulations per step count for a Renyi-divergence *estimate* with its interval, a different
quantity with its own default.
"""

from __future__ import annotations

import math

__all__ = ["DEFAULT_TRIALS", "DEFAULT_CONFIDENCE", "DEFAULT_DELTA", "TESTING_TRIALS", "TESTING_CONFIDENCE",
           "PureDPClaimWarning", "mechanism_of_sampler", "no_pure_dp"]

#: runs per neighbouring input of an audit
DEFAULT_TRIALS = 10_000
#: confidence of an audit's lower bound
DEFAULT_CONFIDENCE = 0.95
#: delta of an optimizer audit whose optimizer has none, of the report and of sigma calibration
DEFAULT_DELTA = 1e-5
#: runs per neighbouring input of the pytest helpers' audits
TESTING_TRIALS = 20_000
#: confidence of the pytest helpers' audits
TESTING_CONFIDENCE = 0.99


class PureDPClaimWarning(UserWarning):
    """A pure-DP audit (delta = 0) of a mechanism that has no pure-DP guarantee (e.g. a Gaussian)."""


def mechanism_of_sampler(sampler):
    """The dpaudit mechanism behind ``sampler``: itself (anything with ``sample`` and ``pure_epsilon``),
    the object of a bound ``.sample`` method, or the ``mechanism`` attribute the testing helpers'
    samplers carry. None for any other callable (a black box)."""
    for cand in (sampler, getattr(sampler, "__self__", None), getattr(sampler, "mechanism", None)):
        if cand is not None and callable(getattr(cand, "pure_epsilon", None)) and callable(getattr(cand, "sample", None)):
            return cand
    return None


def no_pure_dp(sampler) -> str | None:
    """A description of ``sampler``'s mechanism when it is a dpaudit mechanism with no pure-DP
    guarantee (``pure_epsilon()`` infinite), else None."""
    mech = mechanism_of_sampler(sampler)
    if mech is None:
        return None
    try:
        eps = float(mech.pure_epsilon())
    except (TypeError, ValueError, AttributeError, ArithmeticError):
        return None
    if math.isfinite(eps):
        return None
    describe = getattr(mech, "describe", None)
    return describe() if callable(describe) else repr(mech)
