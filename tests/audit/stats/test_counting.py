"""audit/stats/counting.py: the fast searches and counts give numpy's own answers, bit for bit (issue 30 item 5)."""

import numpy as np
import pytest

from dpaudit.audit.attacks.base import CategoryTable
from dpaudit.audit.stats.attack_stats import auroc
from dpaudit.audit.stats.counting import PooledScores, SortedSearch, inverted_cdf_index


def _grid(r, i):
    m = int(r.integers(1, 300))
    kind = i % 5
    if kind == 0:
        g = r.normal(size=m)
    elif kind == 1:
        g = np.round(r.normal(size=m), 1)  # ties with the values searched
    elif kind == 2:
        g = np.concatenate([r.normal(size=m), [np.inf, -np.inf, 1e308, -1e308, 5e-324]])
    elif kind == 3:
        g = r.integers(0, 5, m).astype(float)
    else:
        g = np.concatenate([r.standard_cauchy(size=m) ** 3, [0.0]])  # crowded cells
    return np.unique(g)


def _values(r, g):
    n = int(r.integers(1, 3000))
    return np.concatenate([r.choice(g, n // 2), r.normal(size=n // 3) * r.choice([1.0, 1e-9, 1e9]),
                           [np.inf, -np.inf, 0.0, np.nextafter(g[0], np.inf), np.nextafter(g[0], -np.inf),
                            np.nextafter(g[-1], np.inf)]])


@pytest.mark.parametrize("side", ["left", "right"])
def test_sorted_search_is_numpy_searchsorted(side):
    r = np.random.default_rng(0)
    for i in range(300):
        g = _grid(r, i)
        x = np.concatenate([_values(r, g), [np.nan]])
        assert np.array_equal(SortedSearch(g)(x, side), np.searchsorted(g, x, side)), i


def test_pooled_scores_read_what_sorting_again_gives():
    r = np.random.default_rng(2)
    for i in range(200):
        n0, n1 = r.integers(1, 500, 2)
        if i % 3 == 0:
            a, b = r.normal(size=n0), r.normal(size=n1) + 0.5
        elif i % 3 == 1:
            a, b = r.integers(-3, 3, n0).astype(float), r.integers(-2, 4, n1).astype(float)
        else:
            a = np.concatenate([r.normal(size=n0), [np.inf, -np.inf]])
            b = np.concatenate([r.normal(size=n1), [0.0, np.inf]])
        p = PooledScores.of(a, b)
        ref = np.sort(np.concatenate([a, b]))
        u = np.unique(ref)
        assert np.array_equal(p.pooled, ref) and np.array_equal(p.values, u)
        assert np.array_equal(p.le0, np.searchsorted(np.sort(a), u, "right"))
        assert np.array_equal(p.le1, np.searchsorted(np.sort(b), u, "right"))
        assert p.auroc() == auroc(a, b)
        levels = r.random(30)
        assert np.array_equal(p.quantiles(levels), np.quantile(np.concatenate([a, b]), levels, method="inverted_cdf"))
        assert np.array_equal(ref[inverted_cdf_index(ref.size, levels)], p.quantiles(levels))


def test_pooled_scores_refused_where_they_could_differ():
    assert PooledScores.of([-0.0, 1.0], [0.0, 2.0]) is None  # both signed zeros: numpy.unique's pick depends on sorting
    assert PooledScores.of([np.nan, 1.0], [0.0]) is None
    assert PooledScores.of([], [0.0]) is None
    assert PooledScores.of([-0.0, 1.0], [-0.0]) is not None


def test_category_table_direct_lookup_is_the_searched_one():
    r = np.random.default_rng(3)
    for spread in (10, 10 ** 9):  # a short key range (direct table) and a long one (search)
        c0, c1 = r.integers(0, 50, 400) * spread, r.integers(10, 60, 300) * spread
        t = CategoryTable(c0, c1)
        codes = np.concatenate([r.integers(-5, 70, 1000) * spread, [-(2 ** 63), 2 ** 63 - 1]])
        i = np.clip(np.searchsorted(t.keys, codes), 0, t.keys.size - 1)
        expected = np.where(t.keys[i] == codes, t.llr[i], t.unseen)
        assert np.array_equal(t(codes), expected)


def test_category_table_counted_by_position_is_the_sorted_one():
    r = np.random.default_rng(5)
    for spread in (1, 3, 10 ** 12):  # short ranges (counted by position) and a long one (sorted)
        for _ in range(20):
            c0 = r.integers(-40, 40, int(r.integers(0, 300))) * spread
            c1 = r.integers(-20, 60, int(r.integers(1, 300))) * spread
            t = CategoryTable(c0, c1)
            keys, inv = np.unique(np.concatenate([c0, c1]), return_inverse=True)
            n0 = np.bincount(inv[:c0.size], minlength=keys.size).astype(float)
            n1 = np.bincount(inv[c0.size:], minlength=keys.size).astype(float)
            k, a = keys.size, 0.5
            llr = (np.log(n1 + a) - np.log(c1.size + a * (k + 1)) - np.log(n0 + a) + np.log(c0.size + a * (k + 1)))
            assert t.keys.dtype == keys.dtype and np.array_equal(t.keys, keys)
            assert np.array_equal(t.llr, llr)


def test_sorted_search_in_blocks_is_numpy_searchsorted():
    r = np.random.default_rng(6)
    g = np.unique(np.concatenate([np.quantile(r.normal(size=10 ** 4), np.linspace(0, 1, 300)), [np.inf]]))
    x = np.concatenate([r.normal(size=100_000), r.choice(g, 20_000), [np.nan, -np.inf]])
    for side in ("left", "right"):
        assert np.array_equal(SortedSearch(g)(x, side), np.searchsorted(g, x, side))
