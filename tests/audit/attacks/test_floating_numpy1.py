"""``float_bit_codes`` on numpy 1.x (no ``numpy.bitwise_count``; Tumult's environment pins numpy < 2): the
fallback for the trailing zero bits gives the same codes as numpy 2's bit count and as the frexp path."""

import numpy as np
import pytest

from dpaudit.audit.attacks import floating


def _values():
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(size=40_000), rng.laplace(size=1_000) * 1e300, [1.0, 0.5, 3.0, -2.0**-1000],
                        np.ldexp(1.0, rng.integers(-1000, 1000, 500)), np.round(rng.normal(size=500) * 64) / 64 + 7])
    return x[x != 0]


def test_trailing_zeros_fallback_equals_the_bit_count(monkeypatch):
    x = _values()
    with_count = floating.float_bit_codes(x)
    monkeypatch.setattr(floating, "_BITWISE_COUNT", None)
    without = floating.float_bit_codes(x)
    np.testing.assert_array_equal(with_count, without)
    np.testing.assert_array_equal(without, floating._float_bit_codes_of_any(x))  # the frexp path, independent


@pytest.mark.parametrize("k", [0, 1, 17, 52])
def test_trailing_zeros_of_powers_of_two(monkeypatch, k):
    sig = np.array([(1 << 52) | (1 << k)], dtype=np.uint64)
    expect = k if k < 52 else 52
    monkeypatch.setattr(floating, "_BITWISE_COUNT", None)
    assert int(floating._trailing_zeros(sig)[0]) == expect
