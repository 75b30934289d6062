"""Errors for the commonest sampler mistakes (issue 26, item 10).

A scalar or one string instead of ``size`` outputs, a forgotten ``rng``, a wrong length, a wrong dtype
per run: the error quotes the contract "a sampler is `sampler(x, rng, size)` returning `size` outputs"
and shows what came back (type, length, a short repr). On b3a8540 a string "yes" gave "the sampler
returned 3 outputs, expected 2" with a suggestion to encode {'e': 0, 'y': 1}, and a forgotten rng a
ChunkTypeError from deep inside the first chunk.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from dpaudit import audit_mechanism
from dpaudit.audit import check_floating_point

CONTRACT = re.escape("a sampler is `sampler(x, rng, size)` returning `size` outputs")


def _audit(sampler, **kw):
    return audit_mechanism(sampler, 0.0, 1.0, epsilon=1.0, trials=100, seed=0, **kw)


def _scalar(x, rng, size):
    return float(rng.laplace(x))


def _yes(x, rng, size):
    return "yes"


def _no_rng(x, size):
    return np.zeros(size)


def _one_too_many(x, rng, size):
    return rng.laplace(x, 1.0, size + 1)


def _strings_on_one_input(x, rng, size):
    return ["a"] * size if x else rng.laplace(x, 1.0, size)


@pytest.mark.parametrize("sampler, shown", [
    (_scalar, r"it returned float \(no length\): -?\d"),
    (_yes, r"one str is one output.*it returned str of length 3: 'yes'"),
    (_one_too_many, r"returned 3 outputs, expected 2.*it returned array of shape \(3,\), dtype float64: \["),
    (lambda x, rng, size: None, r"it returned NoneType \(no length\): None"),
    (lambda x, rng, size: b"ab", r"one bytes is one output.*bytes of length 2: b'ab'"),
    (lambda x, rng, size: {"a": 1, "b": 2}, r"one dict is one output.*dict of length 2: \{'a': 1"),
    (lambda x, rng, size: np.array(1.0), r"array of shape \(\), dtype float64"),
])
def test_wrong_batch_names_the_contract_and_what_came_back(sampler, shown):
    with pytest.raises(ValueError, match=CONTRACT) as info:
        _audit(sampler)
    msg = str(info.value)
    assert re.search(shown, msg), msg
    assert "encode=lambda o" not in msg  # no mapping advice for a batch of the wrong form


def test_forgotten_rng_is_a_type_error_before_any_trial():
    with pytest.raises(TypeError, match=CONTRACT) as info:
        _audit(_no_rng)
    assert "_no_rng(x, size)" in str(info.value) and "rng" in str(info.value)
    assert "chunk" not in str(info.value)  # refused up front, not from inside the first chunk


def test_wrong_dtype_on_one_input_names_the_contract():
    with pytest.raises(ValueError, match=CONTRACT + " of one form") as info:
        _audit(_strings_on_one_input)
    assert "'a', 'a'" in str(info.value)


def test_check_floating_point_gets_the_same_errors():
    with pytest.raises(ValueError, match=CONTRACT):
        check_floating_point(_yes, 0.0, 1.0, claim=1.0, trials=100, seed=0)
    with pytest.raises(TypeError, match=CONTRACT):
        check_floating_point(_no_rng, 0.0, 1.0, claim=1.0, trials=100, seed=0)


def test_correct_samplers_still_pass():
    """A string per run, a scalar batch of size 1 and a generator of size outputs stay legal."""
    r = _audit(lambda x, rng, size: ["yes" if v > 0 else "no" for v in rng.laplace(x, 1.0, size)])
    assert 0.0 <= r.epsilon_lower <= np.inf
    r = _audit(lambda x, rng, size: (float(v) for v in rng.laplace(x, 1.0, size)))
    assert 0.0 <= r.epsilon_lower <= np.inf
