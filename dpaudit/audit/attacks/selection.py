"""Choosing the attack, the neighbouring pair and the threshold rule on the SELECTION sample.

Validity (held-out or Bonferroni threshold selection; Bichsel et al., "DP-Sniper", S&P 2021, sec. IV): everything chosen
here -- the attack family and its fitted parameters, the features, the neighbouring pair, the
tie-breaking table, the threshold rule -- depends only on selection draws, which are independent
of the evaluation draws that certify the bound. The selection sample of each candidate pair is
split again: a *training* half fits each applicable family, the *validation* half scores it; the
(pair, family) with the largest predicted bound on the validation half wins, and the validation
scores of the winner are the "selection scores" from which the threshold is chosen (held-out
rule) or from which a fixed grid is made (Bonferroni rule). The evaluation sample is never seen
before the final Clopper-Pearson bounds.

Statistics with few distinct values (an empirical likelihood ratio over categories, a classifier
on discrete outputs) are coded by ``code(s)``, a monotone integer coding of the value (2i+1 for
the i-th value of a table fixed at fit time, 2i for the gap below it); the thresholds that matter
are then the category boundaries. Randomised tie-breaking (DP-Sniper's threshold rule;
``randomize_ties=True``) turns this into the score ``code(s) + u``, where ``code`` is a monotone integer coding of the value (2i+1 for the i-th
value of a table fixed at fit time, 2i for the gap below it) and ``u`` is a uniform draw from the
auditor's own random stream, independent of everything else. A threshold ``t = c + 1 - gamma``
then accepts the outputs with code > c fully and those with code = c with probability gamma: the
randomised test of DP-Sniper. Its error counts are still binomial, because the coins are
independent of the outputs; the coins come from a stream derived from the audit's seed
(:func:`tiebreak_seed`), so the result does not depend on the number of workers. It is off by
default: for the Kairouz-Oh-Viswanath bound a randomised test is never better in expectation than
the deterministic test at the category boundary next to it (accepting a fraction gamma of a
category scales its true and false positives alike, and the delta term and the Clopper-Pearson
margin only get worse), and measured on randomized response (eps = 0.15, 3,000 trials, 100 seeds)
the randomised held-out rule certified nothing in 71% of runs against 2% for the deterministic one.

The threshold rules that certify from the winner's scores are in :mod:`dpaudit.audit.stats.rules`; what to try
(a fixed statistic or a contest of families) is an :class:`AttackChoice`, built from a user's ``statistic=`` by
:func:`attack_choice`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from dpaudit.audit.attacks.base import AttackFamily
from dpaudit.audit.attacks.outputs import is_numeric_batch
from dpaudit.audit.attacks.registry import leak_kind, resolve_families
from dpaudit.audit.stats.binomial import cp_upper, cp_upper_bracket
from dpaudit.audit.stats.counting import SortedSearch
from dpaudit.audit.stats.error_rates import epsilon_lower_from_rates
from dpaudit.audit.stats.thresholds import candidate_thresholds, oriented_counts
from dpaudit.core.validation import check_count

__all__ = ["score_batch", "TieBreak", "tiebreak_seed", "choose_attack", "ChosenAttack", "statdp_pairs",
           "boundary_grid", "split_train_validation", "AttackChoice", "FixedStatistic", "Contest", "attack_choice",
           "describe_input", "predict_bound", "numeric_or_objects"]
#: a fitted statistic whose training scores take at most this many distinct values is tie-broken
MAX_TIE_VALUES = 4096
#: one-sided level of the validation rates in :func:`predict_bound`
PREDICT_LEVEL = 0.05
#: spawn-key word of the tie-break stream of a chunk (distinct from the numbered children)
TIEBREAK_KEY = 0xFFFF_FFF1


def tiebreak_seed(seed_seq: np.random.SeedSequence) -> np.random.SeedSequence:
    """The tie-break stream of a chunk: a fixed, distinct node of the seed's spawn tree.

    Deterministic (a retried chunk gets the same coins) and independent of the sampler's stream.
    """
    return np.random.SeedSequence(entropy=seed_seq.entropy, spawn_key=tuple(seed_seq.spawn_key) + (TIEBREAK_KEY,),
                                  pool_size=seed_seq.pool_size)


class TieBreak:
    """Monotone integer coding of a statistic's values, plus (``randomize=True``) the auditor's
    uniform coins (module docstring)."""

    def __init__(self, values, randomize: bool = False):
        v = np.unique(np.asarray(values, dtype=float))
        self.values = v[~np.isnan(v)]
        self.randomize = bool(randomize)

    def codes(self, scores) -> np.ndarray:
        s = np.asarray(scores, dtype=float)
        if getattr(self, "search", None) is None:  # the values' search table, built once
            self.search = SortedSearch(self.values)
        i = self.search(s, side="left")
        if self.values.size == 0:
            return 2 * i
        # s equals values[i] (i inside): read at min(i, last), which is values[i] wherever i is inside
        exact = (self.values[np.minimum(i, self.values.size - 1)] == s) & (i < self.values.size)
        return 2 * i + exact

    def __call__(self, scores, u) -> np.ndarray:
        c = self.codes(scores).astype(float)
        return c + np.asarray(u, dtype=float) if self.randomize else c

    @property
    def size(self) -> int:
        return int(self.values.size)


def boundary_grid(tb: TieBreak) -> np.ndarray:
    """Thresholds at every category boundary, deterministic tests only, fixed by the fitted table:
    "accept s > values[i]" for each i and "accept everything" (codes are 2i+1 on values[i])."""
    if tb.randomize:  # code + u > 2i + 1 accepts codes >= 2i + 1 (u > 0 almost surely): s >= values[i]
        return np.concatenate([2.0 * np.arange(tb.size) + 1.0, [2.0 * tb.size]])
    return np.concatenate([[0.5], 2.0 * np.arange(tb.size) + 1.5])


def split_train_validation(batch):
    """First half (training) and second half (validation) of a selection batch (independent draws)."""
    n = len(batch)
    h = max(1, n // 2)
    return batch[:h], batch[h:]


@dataclass
class ChosenAttack:
    """The winner of :func:`choose_attack` and the record of the contest."""

    statistic: object
    family: str
    description: str
    tiebreak: TieBreak | None
    val0: np.ndarray
    val1: np.ndarray
    predicted: float
    candidates: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    #: which selection runs choose the threshold: "validation half", or all of them when the winner fits nothing
    threshold_on: str = "validation half"
    #: the best family of the same contest that reads the outputs as real numbers (not their bits), when the
    #: winner is a bit-level family: the attack on the mathematical mechanism (None otherwise)
    real: ChosenAttack | None = None

    @property
    def bit_level(self) -> bool:
        """True when the attack reads the binary representation of floats."""
        return leak_kind(self.family, self.statistic) == "floating-point"


def predict_bound(s0, s1, *, n_eval: int, delta: float, beta: float) -> float:
    """The bound the evaluation would certify, predicted from validation scores: the best (threshold,
    orientation) of the validation sample with its rates taken as the evaluation's expected rates
    (counts ``rate * n_eval``, rounded up) and Clopper-Pearson at beta/2 per rate. Used only to
    compare attacks and pairs on the selection sample (a heuristic: validity does not depend on it);
    unlike a bound on the validation counts themselves, it does not lose small effects to the
    smaller validation size."""
    s0 = np.asarray(s0, dtype=float)
    s1 = np.asarray(s1, dtype=float)
    t = candidate_thresholds(s0, s1)
    k_fp, k_fn = oriented_counts(s0, s1, t)
    n = max(int(n_eval), 1)
    # validation rates taken at an upper confidence level (PREDICT_LEVEL): a tail threshold with no
    # validation error is not assumed error-free on the evaluation sample (winner's curse)
    return float(np.max(_predicted(k_fp, s0.size, k_fn, s1.size, n, delta, beta)))


def _predicted(k_fp, m0: int, k_fn, m1: int, n: int, delta: float, beta: float) -> np.ndarray:
    """Each test's predicted bound where it could be the largest, ``-inf`` where it certainly is not (the same
    maximum, exact Clopper-Pearson bounds only where needed: brackets of both stages' bounds rule the others out, as
    :func:`dpaudit.audit.stats.thresholds.winning_criterion` does for one stage)."""
    def expected(k, m, idx=None):
        k = k if idx is None else k[idx]
        return np.minimum(np.ceil(cp_upper(k, m, PREDICT_LEVEL) * n), n)

    def crit(e_fp, e_fn):
        return np.asarray(epsilon_lower_from_rates(cp_upper(e_fp, n, beta / 2.0), cp_upper(e_fn, n, beta / 2.0),
                                                   delta), dtype=float)

    if np.size(k_fp) < 64 or beta / 2.0 > 0.5:
        return crit(expected(k_fp, m0), expected(k_fn, m1))
    # expected counts bracketed through their bounds (ceil and min are non-decreasing), then the bounds on them
    (a0, b0), (a1, b1) = cp_upper_bracket(k_fp, m0, PREDICT_LEVEL), cp_upper_bracket(k_fn, m1, PREDICT_LEVEL)
    e_lo = [np.minimum(np.ceil(a * n), n) for a in (a0, a1)]
    e_hi = [np.minimum(np.ceil(b * n), n) for b in (b0, b1)]
    top = np.asarray(epsilon_lower_from_rates(cp_upper_bracket(e_lo[0], n, beta / 2.0)[0],
                                              cp_upper_bracket(e_lo[1], n, beta / 2.0)[0], delta), dtype=float)
    bottom = np.asarray(epsilon_lower_from_rates(cp_upper_bracket(e_hi[0], n, beta / 2.0)[1],
                                                 cp_upper_bracket(e_hi[1], n, beta / 2.0)[1], delta), dtype=float)
    best = float(np.max(bottom))
    maybe = top >= best - 1e-9 * (1.0 + abs(best)) if np.isfinite(best) else np.ones(top.shape, bool)
    out = np.full(top.shape, -np.inf)
    out[maybe] = crit(expected(k_fp, m0, maybe), expected(k_fn, m1, maybe))
    return out


def score_batch(stat, batch):
    """``stat(batch)`` as a flat float array, checked: one score per output, no NaN."""
    s = np.asarray(stat(batch), dtype=float).ravel()
    if s.size != len(batch):
        raise ValueError(f"statistic returned {s.size} scores for {len(batch)} outputs")
    if np.any(np.isnan(s)):
        raise ValueError("statistic returned NaN scores")
    return s


def _tiebreak_for(stat, train0, train1, randomize):
    values = getattr(stat, "tie_values", None)
    if values is None:
        s = np.concatenate([score_batch(stat, train0), score_batch(stat, train1)])
        values = np.unique(s)
        if values.size > MAX_TIE_VALUES or values.size > max(2, s.size // 10):
            return None
    return TieBreak(values, randomize)


def choose_attack(train0, train1, val0, val1, *, families, delta: float, beta: float, seed, u0=None, u1=None,
                  features=None, label: str = "", n_eval: int | None = None,
                  randomize_ties: bool = False) -> ChosenAttack | None:
    """Fit every applicable family on (train0, train1), score (val0, val1), keep the best by
    :func:`predict_bound` at the evaluation size ``n_eval`` (default: the validation size). When the winner reads
    the bits of floats, ``winner.real`` is the best family that reads the outputs as real numbers.

    ``u0, u1`` are the auditor's tie-break coins for the validation outputs (uniform [0, 1)).
    Returns None when no family is applicable (the reasons are raised by the caller).
    """
    rng = np.random.default_rng(seed)
    best, best_real, candidates, skipped = None, None, [], []
    if u0 is None:
        u0 = rng.random(len(val0))
    if u1 is None:
        u1 = rng.random(len(val1))
    for fam in families:
        ok, why = fam.applicable(train0, train1)
        if not ok:
            skipped.append({"family": fam.name, "reason": why, "pair": label})
            continue
        fit_seed = int(rng.integers(2**31 - 1))
        stat = fam.fit(train0, train1, seed=fit_seed, features=features)
        tb = _tiebreak_for(stat, train0, train1, randomize_ties)
        s0, s1 = score_batch(stat, val0), score_batch(stat, val1)
        if tb is not None:
            s0, s1 = tb(s0, u0), tb(s1, u1)
        pred = predict_bound(s0, s1, n_eval=n_eval or len(val0), delta=delta, beta=beta)
        candidates.append({"family": fam.name, "description": stat.description, "predicted": pred,
                           "tie_break": tb is not None, "pair": label})
        chosen = ChosenAttack(stat, fam.name, stat.description, tb, s0, s1, pred)
        if best is None or pred > best.predicted:
            best = chosen
        if not chosen.bit_level and (best_real is None or pred > best_real.predicted):
            best_real = chosen
    if best is not None:
        best.candidates, best.skipped = candidates, skipped
        if best.bit_level:
            best.real = best_real
    return best


def statdp_pairs(n: int, base: float = 1.0):
    """The standard counterexample patterns of query-answer vectors (Ding et al., CCS 2018, Table 2;
    also the patterns of DP-Sniper's input generator), each a (name, x, x') with ``||x - x'||_inf <= 1``.

    one above / one below / one above rest below / one below rest above / half half /
    all above / all below / x shape.
    """

    n = check_count("n", n, minimum=1)
    b = float(base)
    one = np.full(n, b)
    h = n // 2
    pats = [
        ("one above", one, np.concatenate([[b + 1], np.full(n - 1, b)])),
        ("one below", one, np.concatenate([[b - 1], np.full(n - 1, b)])),
        ("one above rest below", one, np.concatenate([[b + 1], np.full(n - 1, b - 1)])),
        ("one below rest above", one, np.concatenate([[b - 1], np.full(n - 1, b + 1)])),
        ("half half", one, np.concatenate([np.full(h, b - 1), np.full(n - h, b + 1)])),
        ("all above", one, np.full(n, b + 1)),
        ("all below", one, np.full(n, b - 1)),
    ]
    if n >= 2:
        pats.append(("x shape", np.concatenate([np.full(h, b), np.full(n - h, b - 1)]),
                     np.concatenate([np.full(h, b - 1), np.full(n - h, b)])))
    return pats


def describe_input(x) -> str:
    """A short repr of an input for results."""
    try:
        a = np.asarray(x)
        if a.dtype != object and a.size <= 20:
            return np.array2string(a, separator=", ", threshold=20)
        if a.dtype != object:
            return np.array2string(a, separator=", ", threshold=8)
    except (ValueError, TypeError):
        pass
    r = repr(x)
    return r if len(r) <= 200 else r[:197] + "..."


def numeric_or_objects(batch) -> str:
    return "numeric" if is_numeric_batch(batch) else "objects"



# ------------------------------------------------------------------ what to try: the attack choice
class AttackChoice:
    """Base of the attack choices (value objects; :func:`attack_choice` builds one from ``statistic=``)."""


@dataclass(frozen=True)
class FixedStatistic(AttackChoice):
    """A score function fixed in advance by the user: ``statistic(batch) -> scores`` (nothing is fitted)."""

    statistic: Callable

    def __post_init__(self):
        if not callable(self.statistic):
            raise ValueError("statistic must be callable as statistic(outputs) -> scores")


@dataclass(frozen=True)
class Contest(AttackChoice):
    """Fit every applicable family of ``families`` on half of the selection runs and keep the best on the other
    half (:func:`choose_attack`). ``features``: the learned families' feature map (default: DP-Sniper-style
    features); ``randomize_ties``: DP-Sniper's randomised tie-breaking (off: measured worse, module docstring)."""

    families: tuple
    features: Callable | None = None
    randomize_ties: bool = False

    def __post_init__(self):
        fams = tuple(self.families)
        if not fams or not all(isinstance(f, AttackFamily) for f in fams):
            raise ValueError(f"families must be a non-empty sequence of AttackFamily objects, got {self.families!r}")
        object.__setattr__(self, "families", fams)
        if self.features is not None and not callable(self.features):
            raise ValueError("features must be callable as features(batch) -> array of shape (n, d)")
        object.__setattr__(self, "randomize_ties", bool(self.randomize_ties))

    @property
    def fit_free(self) -> bool:
        """True when no family of the contest learns anything from the training half."""
        return not any(f.needs_fit for f in self.families)


def attack_choice(statistic="auto", *, features=None, randomize_ties: bool = False) -> AttackChoice:
    """The one dispatcher from a user's ``statistic=`` to an :class:`AttackChoice`: an AttackChoice as is; a
    callable -> :class:`FixedStatistic`; ``None`` / ``"auto"`` (every family), ``"auto-real"`` (every family but
    the bit-level ones), a family name or a list of names/families -> :class:`Contest`."""
    if isinstance(statistic, AttackChoice):
        if features is not None or randomize_ties:
            raise ValueError("give features / randomize_ties inside the AttackChoice (Contest(..., features=...)), "
                             "not beside it")
        return statistic
    if callable(statistic) and not isinstance(statistic, AttackFamily):
        if features is not None:
            raise ValueError("features applies to the learned attack families, not to a fixed statistic")
        return FixedStatistic(statistic)
    return Contest(tuple(resolve_families("auto" if statistic is None else statistic)), features, randomize_ties)
