"""Issue 18: every helper of dpaudit.testing describes any input it was given.

Before the fix, the failure path of ``assert_audit_consistent`` called ``np.asarray`` on the
inputs, so a ragged tuple such as ``(X, y)`` raised numpy's "setting an array element with a
sequence" ValueError instead of the diagnostic AssertionError.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.core.describe import describe_object, describe_value
from dpaudit.testing import assert_audit_consistent


def _len_sampler(d, rng, size):
    return np.full(size, float(len(d[0])))


def test_ragged_tuple_inputs_give_the_diagnostic_assertion_error():
    # the reproduction of issue 18
    with pytest.raises(AssertionError) as info:
        assert_audit_consistent(_len_sampler, ([1, 2], [0]), ([1, 2, 3], [0]),
                                epsilon=1.0, trials=2000, seed=0)
    text = str(info.value)
    assert "contradicts the claimed privacy budget" in text
    assert "x = ([1, 2], [0]), x_prime = ([1, 2, 3], [0])" in text


def test_inconclusive_message_with_ragged_inputs():
    # require_power path: a constant sampler certifies nothing
    def const(d, rng, size):
        return np.zeros(size)

    with pytest.raises(AssertionError, match="inconclusive"):
        assert_audit_consistent(const, ([1, 2], [0]), ([1, 2, 3], [0]), epsilon=1.0, trials=500, seed=0,
                                require_power=True)


class _BadRepr:
    def __repr__(self):
        raise RuntimeError("no repr")

    def __array__(self, dtype=None, copy=None):
        raise TypeError("no array")


class _BadDescribe:
    def describe(self):
        raise RuntimeError("broken describe")

    def __repr__(self):
        return "BadDescribe()"


def test_objects_whose_repr_and_array_raise_are_described():
    assert "_BadRepr" in describe_value(_BadRepr())
    assert describe_object(_BadDescribe()) == "BadDescribe()"
    assert describe_object(None) == "the mechanism"


def test_numeric_inputs_keep_numpys_format():
    assert describe_value([1.0, 2.0]) == "[1., 2.]"
    assert describe_value(3) == "3"
    assert describe_value(np.arange(100)) == "[ 0, 1, 2, ..., 97, 98, 99]"


_leaf = st.one_of(st.integers(), st.floats(allow_nan=True), st.text(max_size=5), st.none(), st.binary(max_size=4),
                  st.builds(_BadRepr))
_values = st.recursive(_leaf, lambda c: st.one_of(st.lists(c, max_size=5), st.tuples(c, c),
                                                  st.dictionaries(st.text(max_size=3), c, max_size=3)),
                       max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(_values, st.integers(10, 200))
def test_describe_value_never_raises_and_respects_width(value, width):
    text = describe_value(value, width=width)
    assert isinstance(text, str)
    assert 0 < len(text) <= width
    assert "\n" not in text


def test_bad_sampler_and_relation_are_described_not_crashed_on():
    from dpaudit.testing.strategies import neighbouring_datasets

    with pytest.raises(ValueError, match="sampler must be"):
        assert_audit_consistent(_BadRepr(), 0, 1, epsilon=1.0, trials=100, seed=0)
    with pytest.raises(ValueError, match="relation must be"):
        neighbouring_datasets(np.array(["add_remove", "replace_one"]))
