"""The one home of the log-space helpers (issue 16): dpaudit.core.numeric.softplus and
log_expm1, checked against 50-digit mpmath over the whole double range, on both of their
evaluation paths (numpy arrays and Python floats)."""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.core import numeric

EXTREMES = [-1e308, -745.2, -745.0, -709.0, -700.0, -40.0, -30.0, -1.0, -1e-10, -5e-324, 0.0, 5e-324,
            1e-300, 1e-10, 0.5, 1.0, 29.999999999999996, 30.0, 30.000000000000004, 36.7, 40.0, 700.0,
            709.7, 1e4, 1e308]


def mp_softplus(x):
    with mp.workdps(50):
        return mp.log1p(mp.exp(mp.mpf(x)))


def mp_log_expm1(x):
    with mp.workdps(50):
        return mp.log(mp.expm1(mp.mpf(x)))


def _close(ours, exact, ulps=4):
    exact = float(exact)
    if exact == 0.0:
        return abs(ours) <= 4 * math.ulp(0.0)
    return abs(ours - exact) <= ulps * math.ulp(exact)


@pytest.mark.parametrize("x", EXTREMES)
def test_softplus_matches_mpmath_at_extremes(x):
    exact = mp_softplus(x)
    assert _close(numeric.softplus(x), exact)
    assert _close(float(numeric.softplus(np.array([x]))[0]), exact)


@pytest.mark.parametrize("x", [e for e in EXTREMES if e > 0])
def test_log_expm1_matches_mpmath_at_extremes(x):
    exact = mp_log_expm1(x)
    assert _close(numeric.log_expm1(x), exact)
    assert _close(float(numeric.log_expm1(np.array([x]))[0]), exact)


def test_infinities():
    assert numeric.softplus(-math.inf) == 0.0
    assert numeric.softplus(math.inf) == math.inf
    assert numeric.log_expm1(math.inf) == math.inf
    with np.errstate(all="raise"):
        assert numeric.softplus(np.array([-math.inf, math.inf])).tolist() == [0.0, math.inf]


@settings(max_examples=300, deadline=None)
@given(st.floats(-1e300, 1e300, allow_nan=False))
def test_softplus_both_paths_within_ulps_of_mpmath(x):
    exact = mp_softplus(x)
    assert _close(numeric.softplus(x), exact)
    assert _close(float(numeric.softplus(np.array(x))), exact)


@settings(max_examples=300, deadline=None)
@given(st.floats(5e-324, 1e300, allow_nan=False))
def test_log_expm1_both_paths_within_ulps_of_mpmath(x):
    exact = mp_log_expm1(x)
    assert _close(numeric.log_expm1(x), exact)
    assert _close(float(numeric.log_expm1(np.array([x]))[0]), exact)


def test_no_private_copies_remain():
    """No module keeps its own softplus / log1p-exp / log-expm1 / log-sigmoid / logsubexp helper."""
    import pathlib
    import re

    import dpaudit

    pat = re.compile(r"^def _(softplus|log1p_exp|log_expm1|log_sigmoid|log1mexp|log_sub|logsubexp|log_add)\b", re.M)
    found = [str(p) for p in pathlib.Path(dpaudit.__file__).parent.rglob("*.py") if pat.search(p.read_text())]
    assert not found, found
