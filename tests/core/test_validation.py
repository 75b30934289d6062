import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.core import numeric
from dpaudit.core import validation as v


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, "1", None, True])
def test_check_real_rejects_and_names_argument(bad):
    with pytest.raises(ValueError, match="sigma"):
        v.check_positive("sigma", bad)


@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-3, 2.0, math.nan])
def test_check_delta(delta):
    with pytest.raises(ValueError, match="delta"):
        v.check_delta("delta", delta)


def test_check_orders():
    assert v.check_orders("orders", [2, 3.5]).tolist() == [2.0, 3.5]
    for bad in ([1.0], [0.5, 2], [math.nan], []):
        with pytest.raises(ValueError, match="orders"):
            v.check_orders("orders", bad)


def test_check_count_and_neighbouring():
    assert v.check_count("count", 3.0) == 3
    with pytest.raises(ValueError, match="count"):
        v.check_count("count", 2.5)
    with pytest.raises(ValueError, match="neighbouring"):
        v.check_neighbouring("neighbouring", "swap")


def test_unsupported_error_is_type_and_value_error():
    assert issubclass(v.UnsupportedMechanismError, TypeError)
    assert issubclass(v.UnsupportedMechanismError, ValueError)


@given(st.floats(min_value=-1e300, max_value=1e300, allow_nan=False))
def test_round_directions(x):
    assert numeric.round_up(x) > x
    assert numeric.round_down(x) < x


def test_round_keeps_infinities():
    assert numeric.round_up(math.inf) == math.inf
    assert numeric.round_down(-math.inf) == -math.inf
    assert np.all(numeric.round_up(np.array([0.0, 1.0])) > [0.0, 1.0])


