"""The empirical likelihood ratio's vectorised encoders give the dictionary lookups they replace (issue 30 item 5):
observed cells as sorted integer codes in the order of numpy.unique(cells, axis=0), and exact keys of numeric rows
searched among the fitted ones."""

import numpy as np
import pytest

from dpaudit.audit.attacks.families import _binned_encoder, _Encoder
from dpaudit.audit.attacks.outputs import row_keys


@pytest.mark.parametrize("k", [1, 2, 3])
def test_binned_cells_ids_and_lookups_are_the_dictionary_ones(k):
    r = np.random.default_rng(k)
    a, b = r.normal(size=(3000, k)), r.normal(size=(3000, k)) + 0.5
    a[:5, 0], b[:3, 0] = np.nan, np.inf  # special values keep their own bins
    for per in (2, 8, 64):
        enc = _binned_encoder(a, b, per, 4096)[0]
        if enc is None:
            continue
        cells = _Encoder("binned", edges=enc.edges, specials=enc.specials).bins(np.concatenate([a, b]))
        rows = [row.tobytes() for row in np.ascontiguousarray(np.unique(cells, axis=0))]
        assert sorted(enc.key_ids, key=enc.key_ids.get) == rows  # ids in the lexicographic order of the cells
        x = np.concatenate([r.normal(size=(500, k)) * 3.0, np.full((2, k), np.nan)])
        expected = np.fromiter((enc.key_ids.get(row.tobytes(), -1) for row in np.ascontiguousarray(enc.bins(x))),
                               dtype=np.int64)
        assert np.array_equal(enc(x), expected)


@pytest.mark.parametrize("k", [1, 2])
def test_exact_keys_of_numeric_rows_are_the_dictionary_ones(k):
    r = np.random.default_rng(10 + k)
    train = np.round(r.normal(size=(500, k)), 1)
    train[0, 0], train[1, 0] = np.nan, -0.0
    ids: dict = {}
    for key in row_keys(train).tolist():
        ids.setdefault(key, len(ids))
    enc = _Encoder("exact", key_ids=ids)
    x = np.round(r.normal(size=(2000, k)), 1)
    x[:5, 0] = [np.nan, 0.0, -0.0, np.inf, 9.9]
    expected = np.fromiter((ids.get(key, -1) for key in row_keys(x).tolist()), dtype=np.int64)
    assert np.array_equal(enc(x), expected)
    if k > 1:  # rows of another width: none is a fitted key
        assert np.array_equal(enc(x[:, :1]), np.full(x.shape[0], -1))


def test_float_bit_codes_from_the_bits_are_the_frexp_ones():
    from dpaudit.audit.attacks.floating import _float_bit_codes_of_any, float_bit_codes

    r = np.random.default_rng(20)
    x = r.normal(size=60_000) * 10.0 ** r.integers(-307, 308, 60_000)  # normal numbers, blocks read off the bits
    x = np.concatenate([x, 2.0 ** r.integers(-1022, 1024, 500), -(2.0 ** r.integers(-1022, 1024, 500)),
                        np.round(r.normal(size=5000), 2), [2.2250738585072014e-308, 1.7976931348623157e308]])
    x = x[x != 0.0]
    assert np.array_equal(float_bit_codes(x), _float_bit_codes_of_any(x))
    y = np.concatenate([x[:40_000], [0.0, -0.0, 5e-324, -5e-324, np.nan, np.inf, -np.inf]])  # a block with them
    assert np.array_equal(float_bit_codes(y), _float_bit_codes_of_any(y))


def test_tiebreak_codes_are_the_masked_ones():
    from dpaudit.audit.attacks.selection import TieBreak

    r = np.random.default_rng(21)
    values = np.round(r.normal(size=300), 2)
    s = np.concatenate([r.choice(values, 30_000), r.normal(size=30_000), [np.inf, -np.inf, 99.0]])
    tb = TieBreak(values)
    i = np.searchsorted(tb.values, s, side="left")
    exact = np.zeros(s.shape, bool)
    inside = i < tb.values.size
    exact[inside] = tb.values[i[inside]] == s[inside]
    assert np.array_equal(tb.codes(s), 2 * i + exact)
