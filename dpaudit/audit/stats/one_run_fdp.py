"""The one-run f-DP bound (Mahloujifar, Melis, Chaudhuri, "Auditing f-Differential Privacy in One Run",
ICML 2025, arXiv:2410.22235).

Protocol (the same as Steinke, Nasr, Jagielski 2023, :mod:`dpaudit.audit.stats.one_run`): m canaries, each
included by an independent fair coin of the auditor; after one run the auditor makes r guesses
(abstaining on the rest) of which v are correct. For a mechanism that is f-DP with respect to
every canary, the paper bounds the probability of v or more correct guesses by a recursion over the
correct-guess levels that uses the trade-off curve f itself instead of its (epsilon, delta) summary
(their Theorem for reconstruction/membership games and the numerical procedure they call
"audit with cap"). In our notation, with tau the test level (beta = 1 - confidence) and the
*inverse blow-up* g(x) = f(1 - x):

    a <- tau v / m,   b <- tau (r - v) / m
    for i = v - 1, ..., 0:
        b' <- max(b, g(a));  stop when b' = b (nothing changes afterwards)
        a  <- min(1, a + i / (r - i) * (b' - b));  b <- b'
    "P[>= v correct] <= tau is certified"   iff   a + b > r / m.

If the observed count is certified implausible at level tau, the f-DP claim is rejected with
probability of a false rejection at most tau. For a family f_theta that gets weaker as theta grows
(theta = mu of Gaussian DP, or epsilon of (epsilon, delta)-DP at a fixed delta), the empirical privacy
is sup{theta : f_theta rejected}; it holds with probability >= 1 - tau by the usual argument (the
true theta is rejected with probability <= tau, and rejection is monotone in theta).

Two families are offered:

* ``family="dp"``: the trade-off curve of (epsilon, delta)-DP itself (Kairouz, Oh, Viswanath 2015),
  f(x) = max(0, 1 - delta - e^eps x, e^-eps (1 - delta - x)). The result is a CERTIFIED lower bound on
  the epsilon of the mechanism at ``delta`` (nothing is assumed beyond (epsilon, delta)-DP).
* ``family="gdp"``: the Gaussian curves G_mu (Dong, Roth, Su 2019). The certified statement is "the
  mechanism is not mu-GDP for mu <= mu_lower"; converting mu_lower to epsilon at delta (what
  jax_privacy's ``epsilon_one_run_fdp`` reports) assumes that the mechanism's curve IS Gaussian, so that
  epsilon is an *estimate assuming mu-GDP*: it never sets a verdict.
"""

from __future__ import annotations

import math

from scipy.special import ndtr, ndtri

from dpaudit.audit.stats.error_rates import check_audit_delta, check_beta
from dpaudit.audit.stats.gdp import gdp_epsilon_of
from dpaudit.core.numeric import round_down
from dpaudit.core.validation import check_count

__all__ = ["fdp_rejects", "one_run_fdp_epsilon_lower", "one_run_fdp_mu_lower", "one_run_fdp_gdp_epsilon",
           "gaussian_inverse_blowup", "dp_inverse_blowup", "check_guess_counts", "FAMILIES"]

FAMILIES = ("dp", "gdp")
#: bisection steps on the family parameter (interval halvings; 2^-60 of the bracket)
_BISECTION_STEPS = 60
#: relative margin by which the final inequality must hold (floating-point error never rejects a curve)
_MARGIN = 1e-12


def gaussian_inverse_blowup(mu: float):
    """g(x) = G_mu(1 - x) = Phi(Phi^{-1}(x) - mu) (Dong, Roth, Su 2019, the Gaussian trade-off curve)."""

    def g(x: float) -> float:
        if x <= 0.0:
            return 0.0
        if x >= 1.0:
            return 1.0
        return float(ndtr(ndtri(x) - mu))

    return g


def dp_inverse_blowup(epsilon: float, delta: float):
    """g(x) = f_{eps,delta}(1 - x) = max(0, 1 - delta - e^eps (1 - x), e^-eps (x - delta))
    (the (epsilon, delta)-DP trade-off curve, Kairouz, Oh, Viswanath 2015)."""
    e_pos = math.exp(min(epsilon, 700.0))
    e_neg = math.exp(-epsilon)

    def g(x: float) -> float:
        return max(0.0, 1.0 - delta - e_pos * (1.0 - x), e_neg * (x - delta))

    return g


def check_guess_counts(m, r, v):
    """Validated (m canaries, r guesses, v correct) of a one-run audit: 0 <= v <= r <= m, m >= 1."""
    m = check_count("m", m, minimum=1)
    r = check_count("r", r, minimum=0)
    v = check_count("v", v, minimum=0)
    if r > m:
        raise ValueError(f"r must be <= m, got r={r}, m={m}")
    if v > r:
        raise ValueError(f"v must be <= r, got v={v}, r={r}")
    return m, r, v


def fdp_rejects(g, *, m: int, r: int, v: int, beta: float) -> bool:
    """True when v correct guesses out of r (m canaries) are certified implausible at level ``beta`` for
    every mechanism whose inverse blow-up is ``g`` (the recursion of the module docstring; at most v steps)."""
    m, r, v = check_guess_counts(m, r, v)
    beta = check_beta("beta", beta)
    if v == 0:
        return False
    a = beta * v / m
    b = beta * (r - v) / m
    for i in range(v - 1, -1, -1):
        b_new = max(b, g(a))
        if b_new == b:
            break
        a = min(1.0, a + (i / (r - i)) * (b_new - b))
        b = b_new
    return a + b > (r / m) * (1.0 + _MARGIN)


def _sup_rejected(rejects, hi0: float, cap: float) -> float:
    """sup{theta >= 0 : rejects(theta)} for a rejection monotone in theta (bracket doubling, then bisection)."""
    if not rejects(0.0):
        return 0.0
    lo, hi = 0.0, hi0
    while rejects(hi):
        lo, hi = hi, 2.0 * hi
        if hi > cap:
            return math.inf
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if rejects(mid):
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-10 * max(1.0, hi):
            break
    return max(0.0, round_down(lo))


def one_run_fdp_epsilon_lower(*, m: int, r: int, v: int, delta: float = 0.0, confidence: float = 0.95) -> float:
    """Certified lower bound on epsilon at ``delta`` from the f-DP one-run test with the (epsilon, delta)-DP
    trade-off curve (Mahloujifar, Melis, Chaudhuri 2024): sup{eps : f_{eps,delta} rejected at 1 - confidence}.

    Holds with probability >= confidence for every mechanism (no assumption on its trade-off curve)."""
    beta = check_beta("1 - confidence", 1.0 - confidence)
    delta = check_audit_delta("delta", delta)
    m, r, v = check_guess_counts(m, r, v)
    return _sup_rejected(lambda e: fdp_rejects(dp_inverse_blowup(e, delta), m=m, r=r, v=v, beta=beta), 1.0, 1e3)


def one_run_fdp_mu_lower(*, m: int, r: int, v: int, confidence: float = 0.95) -> float:
    """sup{mu : G_mu rejected}: with probability >= confidence the mechanism is not mu-GDP for any smaller mu
    (Mahloujifar, Melis, Chaudhuri 2024 with the Gaussian curves of Dong, Roth, Su 2019)."""
    beta = check_beta("1 - confidence", 1.0 - confidence)
    m, r, v = check_guess_counts(m, r, v)
    return _sup_rejected(lambda mu: fdp_rejects(gaussian_inverse_blowup(mu), m=m, r=r, v=v, beta=beta), 1.0, 80.0)


def one_run_fdp_gdp_epsilon(*, m: int, r: int, v: int, delta: float, confidence: float = 0.95) -> dict:
    """The Gaussian-family f-DP one-run number: ``mu_lower`` (certified non-membership in mu-GDP) and its
    epsilon at ``delta`` -- an *estimate assuming mu-GDP* (the number jax_privacy's one-run f-DP reports)."""
    delta = check_audit_delta("delta", delta)
    if delta <= 0.0:
        raise ValueError("delta must be in (0, 1) for the Gaussian family (a mu-GDP mechanism is never pure DP)")
    mu = one_run_fdp_mu_lower(m=m, r=r, v=v, confidence=confidence)
    eps = 0.0 if mu <= 0.0 else (math.inf if not math.isfinite(mu) else float(gdp_epsilon_of(mu, delta)))
    return {"mu_lower": mu, "epsilon": eps, "role": "estimate assuming mu-GDP: never sets the verdict"}
