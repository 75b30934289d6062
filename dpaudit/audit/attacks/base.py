"""The attack-family protocol: :class:`AttackFamily` strategy objects and the :class:`FittedStatistic` they fit.

Every family is a small strategy object (as in jax_privacy's auditing): a ``name``, a ``description``,
``applicable(train0, train1) -> (bool, reason)`` and ``fit(train0, train1, seed, features) -> statistic``. The
fitted statistic is a picklable callable ``statistic(batch) -> scores`` on a batch in the representation of
:mod:`dpaudit.audit.attacks.outputs` (numeric ``(size, k)`` float array or object keys), with a ``description``
and, for statistics that take few distinct values, a ``tie_values`` table. By post-processing, any statistic fitted
on draws independent of the evaluation draws gives a valid test; the families differ only in power.

A new family is one class in its own module (or in :mod:`dpaudit.audit.attacks.families`) plus one line in
:data:`dpaudit.audit.attacks.registry.ATTACK_FAMILIES` (docs/architecture.md).
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.audit.attacks.outputs import is_numeric_batch

__all__ = ["FittedStatistic", "AttackFamily", "CategoryTable", "numeric_or_raise", "finite_values", "BIG",
           "MAX_TABLE_COLUMNS"]

#: widest outputs (values per run) a family with one table per coordinate fits (naive-Bayes, float-bits):
#: bounded time on 10^5-wide vectors, whose coordinates the projection and learned families still read
MAX_TABLE_COLUMNS = 4096
#: stand-in for +-inf in features and scores
BIG = 1e6


class FittedStatistic:
    """Base of fitted statistics: picklable, with a settable ``description`` and ``tie_values``."""

    description = "fitted statistic"
    family = ""
    #: sorted finite set of the values the statistic can take (None: not known to be discrete)
    tie_values: np.ndarray | None = None
    #: True when the statistic reads the binary representation of floats
    bit_level = False

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.description}>"



class AttackFamily:
    """Strategy object of one attack family (module docstring)."""

    name = ""
    description = ""
    requires: str | None = None
    #: False for families that learn nothing from the training half (then, alone and with a single
    #: candidate pair, the whole selection sample chooses the threshold)
    needs_fit = True
    #: tried by ``statistic="auto"`` / ``"auto-real"``; False for a family that depends on an optional extra, so that
    #: the default contest -- and every default result -- is the same whatever extras are installed (it is then
    #: used when named)
    in_auto = True

    def applicable(self, train0, train1) -> tuple[bool, str]:
        return True, ""

    def fit(self, train0, train1, seed=0, features=None):
        raise ValueError(f"{type(self).__name__} does not implement fit")

    def __repr__(self):
        return f"<attack family {self.name}>"



def numeric_or_raise(batch, what: str):
    """``batch`` itself when it is a numeric batch of fixed length; else a ValueError saying ``what`` needs one."""
    if not is_numeric_batch(batch):
        raise ValueError(f"{what} needs numeric outputs of a fixed length")
    return batch


def finite_values(b):
    """``b`` with NaN as 0 and +-inf as +-:data:`BIG` (features and scores stay finite)."""
    return np.nan_to_num(b, nan=0.0, posinf=BIG, neginf=-BIG)



class CategoryTable:
    """Smoothed log-likelihood ratios of integer category codes (unseen codes score 0)."""

    def __init__(self, codes0, codes1, alpha: float = 0.5):
        c0 = np.asarray(codes0, dtype=np.int64)
        c1 = np.asarray(codes1, dtype=np.int64)
        both = np.concatenate([c0, c1])
        lo, hi = (int(both.min()), int(both.max())) if both.size else (0, -1)
        if both.size and hi - lo <= 8 * both.size + 4096:  # a short range of codes: counted by position, no sort
            h0 = np.bincount(c0 - lo, minlength=hi - lo + 1)
            h1 = np.bincount(c1 - lo, minlength=hi - lo + 1)
            present = np.flatnonzero(h0 + h1)
            keys, n0, n1 = present + lo, h0[present].astype(float), h1[present].astype(float)
        else:
            keys, inv = np.unique(both, return_inverse=True)
            n0 = np.bincount(inv[:c0.size], minlength=keys.size).astype(float)
            n1 = np.bincount(inv[c0.size:], minlength=keys.size).astype(float)
        k = keys.size
        self.keys = keys
        self.llr = (np.log(n1 + alpha) - math.log(c1.size + alpha * (k + 1))
                    - np.log(n0 + alpha) + math.log(c0.size + alpha * (k + 1)))
        self.unseen = float(math.log(c0.size + alpha * (k + 1)) - math.log(c1.size + alpha * (k + 1)))

    def __call__(self, codes):
        codes = np.asarray(codes, dtype=np.int64)
        k = self.keys.size
        if k and int(self.keys[-1]) - int(self.keys[0]) <= 8 * k + 4096:  # a direct table over the keys' range
            dense = getattr(self, "dense", None)
            if dense is None:
                dense = self.dense = np.full(int(self.keys[-1]) - int(self.keys[0]) + 1, self.unseen)
                dense[self.keys - self.keys[0]] = self.llr
            inside = (codes >= self.keys[0]) & (codes <= self.keys[-1])
            return np.where(inside, dense[np.where(inside, codes - self.keys[0], 0)], self.unseen)
        i = np.clip(np.searchsorted(self.keys, codes), 0, max(self.keys.size - 1, 0))
        hit = self.keys.size > 0
        found = (self.keys[i] == codes) if hit else np.zeros(codes.shape, bool)
        return np.where(found, self.llr[i] if hit else 0.0, self.unseen)

    def values(self):
        return np.unique(np.concatenate([self.llr, [self.unseen]]))

