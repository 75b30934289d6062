"""The mechanism protocol: immutable descriptions that know their privacy curves.

A mechanism (the public interface, docs/api.md) is a frozen description. It states

* ``neighbouring``: the neighbouring relation its curves refer to (``"add_remove"`` or
  ``"replace_one"``);
* ``rdp(orders)``: an upper bound on the Renyi divergence at each order (``inf`` where none
  is known or where the divergence is unbounded);
* ``zcdp()``: the smallest rho it is known to satisfy (``inf`` if it is not zCDP);
* ``tcdp()``: a ``(rho, omega)`` truncated-CDP pair (``(zcdp(), inf)`` by default);
* ``pure_epsilon()``: epsilon of pure DP (``inf`` if not pure DP);
* ``non_private()``: True for a release with no guarantee at all (``delta(eps) = 1`` for every
  eps: :class:`~dpaudit.mechanisms.nonprivate.NonPrivate`, or a noise-adding mechanism with zero
  noise); every accountant composes it and answers ``epsilon = inf``, ``delta = 1``;
* ``subsampling()``: ``(base, q)`` for a mechanism that runs ``base`` on a random subsample with
  rate ``q`` (``None`` otherwise), so that accountants without an amplification theorem can say
  when their number ignores the sampling;
* ``sample(value, rng, size=None)``: draws of the output for query value ``value``;
* ``privacy_loss()``: the dominating pairs of one step (add and remove directions) for the
  privacy-loss-distribution accountant (:class:`~dpaudit.mechanisms.loss_pairs.PrivacyLoss`),
  or ``None`` when none is known;
* ``likelihood_ratio_test()``: worst-case neighbouring query values and the log-likelihood
  ratio of one output between them, for audits of compositions (``None`` by default).

Accountants read these methods and nothing else (the way ``dp_accounting`` keeps its
``DpEvent`` descriptions apart from the accountants that interpret them), so a new
mechanism plugs into every accountant by implementing them.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.core.validation import check_orders
from dpaudit.mechanisms.loss_pairs import PrivacyLoss, nonprivate_loss, statement_loss

__all__ = ["Mechanism", "rdp_from_zcdp"]


def rdp_from_zcdp(rho: float, orders: np.ndarray) -> np.ndarray:
    """The RDP curve ``rho * alpha`` implied by rho-zCDP (Bun & Steinke 2016, Def. 1.1)."""
    orders = check_orders("orders", orders)
    if math.isinf(rho):
        return np.full(orders.shape, math.inf)
    with np.errstate(invalid="ignore", over="ignore"):  # overflow: inf, an upper bound
        out = rho * orders
    out[np.isinf(orders)] = math.inf if rho > 0 else 0.0
    return out


class Mechanism:
    """Base class of mechanism descriptions.

    Subclasses are frozen dataclasses; they override :meth:`rdp` and whichever of the other
    curves they know. The defaults below are the weakest correct statements: no guarantee
    (``inf``) unless a subclass says otherwise.
    """

    #: neighbouring relation the curves refer to
    neighbouring: str = "add_remove"

    def rdp(self, orders) -> np.ndarray:
        """RDP epsilon at each order (upper bound; ``inf`` where none is known)."""
        orders = check_orders("orders", orders)
        rho = self.zcdp()
        if math.isfinite(rho):
            return rdp_from_zcdp(rho, orders)
        eps = self.pure_epsilon()
        if math.isfinite(eps):
            return np.full(orders.shape, eps)
        return np.full(orders.shape, math.inf)

    def zcdp(self) -> float:
        """rho such that the mechanism is rho-zCDP (``inf`` if it is not zCDP)."""
        return math.inf

    def tcdp(self) -> tuple[float, float]:
        """A pair ``(rho, omega)`` such that the mechanism is (rho, omega)-tCDP."""
        return (self.zcdp(), math.inf)

    def has_zcdp_guarantee(self) -> bool:
        """Whether the mechanism is rho-zCDP for some finite rho, even when that rho lies beyond
        the float range (``zcdp()`` then returns ``inf``, e.g. a Gaussian with sigma = 1e-300).

        Accountants use it to tell "no guarantee in this notion" (refused) from "a guarantee too
        large to represent" (composed as inf: epsilon = inf). Default: a finite ``zcdp()`` or a
        finite ``pure_epsilon()`` (eps-DP implies eps^2/2-zCDP, Bun & Steinke 2016, Prop. 1.4).
        """
        return math.isfinite(self.zcdp()) or math.isfinite(self.pure_epsilon())

    def pure_epsilon(self) -> float:
        """epsilon such that the mechanism is epsilon-DP (``inf`` if not pure DP)."""
        return math.inf

    def non_private(self) -> bool:
        """True when the mechanism, as described, gives no guarantee at all: the output can
        reveal the record (``delta(eps) = 1`` for every eps >= 0), e.g. a noise-adding mechanism
        with zero noise. Accountants compose it (``epsilon = inf``, ``delta = 1``) instead of
        refusing it: no notion can do better. Default False."""
        return False

    def subsampling(self) -> tuple[Mechanism, float] | None:
        """``(base, q)`` when the mechanism runs ``base`` on a random subsample of rate ``q``
        (Poisson or without replacement), else ``None`` (default). Read by accountants that have
        no amplification-by-subsampling theorem, to say when their number ignores the sampling."""
        return None

    def approx_dp(self) -> tuple[float, float] | None:
        """A single ``(epsilon, delta)`` guarantee for mechanisms described only that way.

        Default: ``(0, 1)`` for a :meth:`non_private` mechanism (the trivial statement, which a
        sampler amplifies: Poisson sampling at rate q gives exactly (0, q)-DP), else ``None``."""
        return (0.0, 1.0) if self.non_private() else None

    def privacy_loss(self) -> PrivacyLoss | None:
        """The dominating pairs of one step (add and remove directions), or ``None``.

        Default: the pair of the mechanism's own pure-DP statement (randomized response, the
        dominating pair of every eps-DP mechanism: Kairouz, Oh, Viswanath 2015, Thm. 2.1) or of
        its (epsilon, delta) statement (ibid.), upper end only; ``None`` without either.
        Mechanisms with a tighter pair (Gaussian, Laplace, ...) override it. A
        :meth:`non_private` mechanism: the non-private pair (mutually singular laws), exact.
        """
        if self.non_private():
            return nonprivate_loss()
        return statement_loss(self.pure_epsilon(), self.approx_dp())

    def likelihood_ratio_test(self):
        """``(x, x_prime, llr)``: neighbouring query values at the worst case and a function
        ``llr(outputs)`` giving (an increasing function of) the log-likelihood ratio
        log p(y | x_prime)/p(y | x) of each output; a sum of it over independent releases is
        post-processing of their composition (Neyman-Pearson). ``None`` when not known."""
        return None

    def sample(self, value, rng: np.random.Generator, size=None):
        """Draws of the output for query value ``value`` (subclasses that can sample override)."""
        raise TypeError(f"{type(self).__name__} describes a guarantee only and cannot sample outputs")

    def describe(self) -> str:
        """One-line human description (used in reports and the CLI)."""
        return repr(self)
