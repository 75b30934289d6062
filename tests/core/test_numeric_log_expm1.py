"""core.numeric.log_expm1 near x = log 2, where log(expm1(x)) is near 0 and lost its relative
accuracy (9e-16 at x = 0.75, 7 ulps; surfaced by Hypothesis in tests/core/test_numeric_logspace.py once
new modules' constants entered its example pool)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from dpaudit.core import numeric

LN2 = math.log(2.0)
POINTS = [0.75, 0.7, 0.69, 0.6931, LN2, math.nextafter(LN2, 1.0), math.nextafter(LN2, 0.0),
          math.nextafter(math.nextafter(LN2, 1.0), 1.0), 0.35, 0.5, 1.0, 1.38, 1.3800000000000001]


@pytest.mark.parametrize("x", POINTS)
def test_log_expm1_within_four_ulps_near_log_2(x):
    with mp.workdps(60):
        exact = float(mp.log(mp.expm1(mp.mpf(x))))
    for got in (numeric.log_expm1(x), float(numeric.log_expm1(np.array([x]))[0])):
        assert abs(got - exact) <= 4 * math.ulp(exact), (x, got, exact)


def test_log_expm1_band_is_continuous_with_the_rest():
    xs = np.linspace(0.2, 2.0, 2001)
    with mp.workdps(40):
        ref = np.array([float(mp.log(mp.expm1(mp.mpf(float(v))))) for v in xs])
    got = numeric.log_expm1(xs)
    assert np.all(np.abs(got - ref) <= 4 * np.array([math.ulp(r) for r in ref]))
