"""A release with no privacy guarantee.

``NonPrivate`` describes a step whose output can reveal the record (a query answered without
noise, a noise-adding mechanism with noise 0, randomized response that always tells the truth).
Its privacy loss is the non-private pair (P, Q mutually singular): ``delta(eps) = 1`` for every
eps, epsilon = inf at every delta < 1. Every accountant composes it and answers ``inf`` (never an
exception: the answer is known, and no notion can do better), as ``dp_accounting``'s
``NonPrivateDpEvent`` (its RDP accountant adds inf to every order, its PLD accountant answers
epsilon = inf and delta = 1).

Subsampling still helps: a non-private step run on a Poisson subsample of rate q (add/remove
neighbours) is exactly (0, q)-DP, ``delta(eps) = q`` for every eps >= 0, and so is one run on a
uniform subsample of m = q n of n records (replace-one neighbours); see
:class:`~dpaudit.mechanisms.subsampled.PoissonSampled` and
:class:`~dpaudit.mechanisms.subsampled.SampledWithoutReplacement`. In detail, with (A, B) the
non-private pair:

* Poisson, REMOVE: P = (1-q)A + qB, Q = A: P(L = +inf) = q and the rest has loss log(1 - q) < 0,
  so ``delta(eps) = q`` for eps >= log(1 - q) (Zhu, Dong, Wang 2022, Thm. 10);
* Poisson, ADD: P = A, Q = (1-q)A + qB: L = -log(1 - q) with P-mass 1, so
  ``delta(eps) = (1 - (1-q) e^eps)_+ <= q`` for eps >= 0, with equality at 0;
* without replacement (replace-one): with probability q the differing record is in the sample
  and the two outputs are told apart, otherwise the laws coincide: P = (1-q)C + qA,
  Q = (1-q)C + qB with A, B, C mutually singular, the (0, q)-DP pair itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.core.validation import check_neighbouring, check_orders
from dpaudit.mechanisms.base import Mechanism

__all__ = ["NonPrivate", "nonprivate_rdp"]


def nonprivate_rdp(orders) -> np.ndarray:
    """The RDP curve of a non-private release: ``inf`` at every order (validated)."""
    return np.full(check_orders("orders", orders).shape, math.inf)


@dataclass(frozen=True)
class NonPrivate(Mechanism):
    """A release with no privacy guarantee (see the module docstring).

    Curves: ``rdp`` inf everywhere, ``zcdp()`` inf, ``pure_epsilon()`` inf, ``approx_dp()``
    ``(0, 1)`` (the trivial statement, which samplers amplify), ``privacy_loss()`` the
    non-private pair (exact). ``sample`` returns the query value itself.
    """

    neighbouring: str = "add_remove"

    def __post_init__(self):
        check_neighbouring("neighbouring", self.neighbouring)

    def non_private(self) -> bool:
        return True

    def rdp(self, orders) -> np.ndarray:
        return nonprivate_rdp(orders)

    def sample(self, value, rng: np.random.Generator, size=None):
        """The query value itself (no noise), shape ``size + value.shape``."""
        value = np.asarray(value)
        if size is None:
            return value.copy()
        return np.broadcast_to(value, tuple(np.atleast_1d(size)) + value.shape).copy()

    def describe(self) -> str:
        return "non-private release"
