"""The integer-mechanism checks shared by DiscreteLaplace and DiscreteGaussian (one home, core.validation)."""

import numpy as np
import pytest

from dpaudit.core.validation import check_integer_sensitivity, check_integer_values
from dpaudit.mechanisms import DiscreteGaussian, DiscreteLaplace


@pytest.mark.parametrize("bad", [0, -1, 1.5, float("nan"), float("inf"), True, "2", None])
def test_sensitivity_refused_naming_the_argument(bad):
    with pytest.raises(ValueError, match="^delta_q must be a positive integer"):
        check_integer_sensitivity("delta_q", bad, maximum=10)


def test_sensitivity_accepted_and_capped():
    assert check_integer_sensitivity("s", 3.0, maximum=10) == 3 and check_integer_sensitivity("s", 10, maximum=10) == 10
    with pytest.raises(ValueError, match="s must be at most 10"):
        check_integer_sensitivity("s", 11, maximum=10)


@pytest.mark.parametrize("bad,msg", [(np.array([1.5]), "integer-valued"), (np.array([np.nan]), "integer-valued"),
                                     (np.array(["a"]), "got dtype"), (np.array([True]), "got dtype"),
                                     (np.array([2.0 ** 62]), r"\|v\| <= 2\^61")])
def test_values_refused_naming_the_argument(bad, msg):
    with pytest.raises(ValueError, match=f"^v must .*{msg}"):
        check_integer_values("v", bad)


def test_values_as_int64_and_both_mechanisms_use_the_same_check():
    out = check_integer_values("v", [1.0, -2.0, 3])
    assert out.dtype == np.int64 and out.tolist() == [1, -2, 3]
    rng = np.random.default_rng(0)
    for m in (DiscreteLaplace(2.0), DiscreteGaussian(2.0)):
        with pytest.raises(ValueError, match="^value must be integer-valued"):
            m.sample(np.array([0.5]), rng)
        with pytest.raises(ValueError, match="^sensitivity must be at most 10000"):
            type(m)(2.0, sensitivity=10_001)
