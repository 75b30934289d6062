"""Ruling tests out by cheap brackets of Clopper-Pearson bounds changes no answer (issue 30 item 5): the bracket
holds, and the best test, the predicted bound and the trials needed are those of the exact bounds everywhere."""

import numpy as np
import pytest

from dpaudit.audit.attacks.selection import PREDICT_LEVEL, predict_bound
from dpaudit.audit.stats import power
from dpaudit.audit.stats.binomial import cp_upper, cp_upper_bracket
from dpaudit.audit.stats.error_rates import epsilon_lower_from_rates
from dpaudit.audit.stats.thresholds import candidate_thresholds, criterion, oriented_counts, winning_criterion


@pytest.mark.parametrize("n", [1, 2, 5, 100, 10 ** 4, 10 ** 6, 10 ** 9])
def test_bracket_holds(n):
    r = np.random.default_rng(n)
    k = np.unique(np.concatenate([[0, 1, n], r.integers(0, n + 1, 300)]))
    for beta in (0.5, 0.05, 2.5e-3, 1e-7, 1e-14):
        lo, hi = cp_upper_bracket(k, n, beta)
        exact = cp_upper(k, np.full(k.shape, n), beta)
        assert np.all(lo <= exact) and np.all(exact <= hi)


@pytest.mark.parametrize("kind", ["dp", "gdp"])
def test_winning_criterion_same_max_and_first_argmax(kind):
    r = np.random.default_rng(7 if kind == "dp" else 8)
    for trial in range(60):
        n0, n1 = int(r.integers(50, 10 ** 6)), int(r.integers(50, 10 ** 6))
        t = int(r.integers(64, 3000))
        le0 = np.sort(r.integers(0, n0 + 1, t))
        le1 = np.sort(r.integers(0, n1 + 1, t))
        if trial % 4 == 0:  # many ties: repeated counts
            le0, le1 = le0 // 1000 * 1000, le1 // 1000 * 1000
        k_fp, k_fn = np.stack([n0 - le0, le0]), np.stack([le1, n1 - le1])
        level, delta = float(r.choice([0.05 / 20, 0.025, 1e-6])), float(r.choice([0.0, 1e-5]))
        full = np.asarray(criterion(kind, cp_upper(k_fp, n0, level), cp_upper(k_fn, n1, level), delta))
        fast = winning_criterion(kind, k_fp, n0, k_fn, n1, level, delta)
        assert fast.max() == full.max() and int(np.argmax(fast)) == int(np.argmax(full))
        assert np.all((fast == full) | (fast == -np.inf))


def _predict_bound_exact(s0, s1, n_eval, delta, beta):
    t = candidate_thresholds(s0, s1)
    k_fp, k_fn = oriented_counts(s0, s1, t)
    n = max(int(n_eval), 1)
    e_fp = np.minimum(np.ceil(cp_upper(k_fp, s0.size, PREDICT_LEVEL) * n), n)
    e_fn = np.minimum(np.ceil(cp_upper(k_fn, s1.size, PREDICT_LEVEL) * n), n)
    return float(np.max(epsilon_lower_from_rates(cp_upper(e_fp, n, beta / 2.0), cp_upper(e_fn, n, beta / 2.0),
                                                 delta)))


def test_predict_bound_is_the_exact_one():
    r = np.random.default_rng(3)
    for trial in range(20):
        m = int(r.integers(100, 20_000))
        shift = float(r.choice([0.0, 0.3, 2.0, 6.0]))
        s0 = r.normal(size=m) if trial % 2 else np.round(r.normal(size=m), 1)
        s1 = r.normal(size=m) + shift
        n_eval, delta = int(r.choice([1000, 10 ** 6, 10 ** 8])), float(r.choice([0.0, 1e-5]))
        assert predict_bound(s0, s1, n_eval=n_eval, delta=delta, beta=0.05) == \
            _predict_bound_exact(s0, s1, n_eval, delta, 0.05)


def _trials_needed_exact(fpr, fnr, *, delta, stages, target=0.0, margin=power.POWER_Z):
    ok = np.ones(power._GRID.shape, dtype=bool)
    for share, level in stages:
        n = np.maximum(np.floor(share * power._GRID), 1).astype(np.int64)
        ok &= power._bound_at(fpr, fnr, n, level, delta, margin) > target
    if not ok[-1]:
        return None
    bad = np.flatnonzero(~ok)
    return int(power._GRID[bad[-1] + 1] if bad.size else power._GRID[0])


def test_trials_needed_is_the_exact_one():
    r = np.random.default_rng(4)
    for _ in range(60):
        fpr, fnr = float(r.uniform(0, 0.6)) * float(r.choice([1, 1e-3])), float(r.uniform(0, 0.6))
        stages = [(0.3, 0.05 / 20), (0.7, 0.05 / 2)] if r.random() < 0.5 else [(0.7, 0.05 / 400)]
        delta, target = float(r.choice([0.0, 1e-5])), float(r.choice([0.0, 0.5, 2.0]))
        margin = float(r.choice([0.0, power.POWER_Z]))
        assert power.trials_needed(fpr, fnr, delta=delta, stages=stages, target=target, margin=margin) == \
            _trials_needed_exact(fpr, fnr, delta=delta, stages=stages, target=target, margin=margin)
