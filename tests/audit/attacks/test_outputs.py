"""Outputs of any form (issue 15): variable-length transcripts, tuples, None/NaN, strings, dicts, encode hook."""

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from dpaudit.audit import audit_mechanism
from dpaudit.audit.attacks.outputs import NAN_KEY, as_output_batch, canonical_key, conform, object_features, row_keys
from dpaudit.core.execution import Execution


def svt_transcript(x, rng, size, eps=1.0):
    """Correct SVT (Lyu et al. 2017, Alg. 1, c = 1) returning the answer list up to the cutoff: a
    variable-length tuple per run (the form a user's code really returns)."""
    a = np.asarray(x, dtype=float)
    rho = rng.laplace(0.0, 2.0 / eps, size)
    nu = rng.laplace(0.0, 4.0 / eps, (size, a.size))
    out = []
    for i in range(size):
        ans = []
        for j in range(a.size):
            above = a[j] + nu[i, j] >= rho[i] + 1.0
            ans.append("T" if above else "F")
            if above:
                break
        out.append(tuple(ans))
    return out


def aborting(x, rng, size):
    """None ("aborted") or a (label, count) tuple."""
    u = rng.random(size)
    return [None if v < 0.2 else ("ok", int(v * 10) + int(x)) for v in u]


def test_variable_length_transcripts_are_accepted_regression():
    """Before issue 15: 'the sampler returned N outputs, expected M' from numpy for ragged outputs."""
    res = audit_mechanism(svt_transcript, [0, 0, 0], [1, 1, 1], epsilon=1.0, trials=2_000, seed=1)
    assert res.details["outputs"].startswith("objects")
    assert res.details["attack"]["family"] in ("empirical-lr", "logistic", "mlp")
    assert not res.violation


def test_none_and_tuples_and_strings():
    res = audit_mechanism(aborting, 0, 3, epsilon=0.5, trials=2_000, seed=2)
    assert res.violation  # counts shifted by 3: many outputs only possible from one input


def test_numeric_nan_is_an_output_not_an_error():
    def nan_sometimes(x, rng, size):
        out = x + rng.laplace(0.0, 1.0, size).round()
        out[rng.random(size) < (0.5 if x else 0.1)] = np.nan  # "aborted" far more often on x'
        return out

    res = audit_mechanism(nan_sometimes, 0, 1, epsilon=0.5, trials=4_000, seed=3)
    assert res.violation and res.details["outputs"].startswith("numeric")


def test_encode_hook_and_clear_error_for_incomparable_outputs():
    class Opaque:  # compared by identity: two runs never give "equal" outputs
        pass

    def opaque(x, rng, size):
        return [Opaque() for _ in range(size)]

    with pytest.raises(ValueError, match="cannot be compared across runs.*encode"):
        audit_mechanism(opaque, 0, 1, epsilon=1.0, trials=200, seed=0)

    class Box:
        def __init__(self, v):
            self.v = v

    def boxed(x, rng, size):
        return [Box(int(rng.random() < (0.8 if x else 0.2))) for _ in range(size)]

    res = audit_mechanism(boxed, 0, 1, epsilon=0.5, trials=2_000, seed=0, encode=lambda b: b.v)
    assert res.violation


def test_canonical_keys():
    assert canonical_key(np.float32(1.5)) == 1.5 and canonical_key(float("nan")) == NAN_KEY
    assert canonical_key([1, (2, None), "a"]) == (1.0, (2.0, None), "a")
    assert canonical_key({"b": 1, "a": [2]}) == canonical_key({"a": [2], "b": 1})
    assert canonical_key(np.array([[1, 2]])) == ((1.0, 2.0),)
    assert hash(canonical_key({1, 2})) == hash(canonical_key({2, 1}))


def test_batch_representations_and_conform():
    num = as_output_batch(np.arange(6.0).reshape(3, 2), 3)
    assert num.shape == (3, 2) and num.dtype == float
    obj = as_output_batch([(1,), (1, 2), None], 3)
    assert obj.dtype == object and obj[2] is None
    with pytest.raises(ValueError, match="returned 2 outputs, expected 3"):
        as_output_batch([(1,), (2, 3)], 3)
    # a chunk whose variable-length outputs happen to be equal in length converts to keys
    back = conform(as_output_batch([np.array([1.0, 2.0]), np.array([3.0, 4.0])], 2), ("objects", None))
    assert list(back) == [(1.0, 2.0), (3.0, 4.0)]
    with pytest.raises(ValueError, match="values per run"):
        conform(np.zeros((2, 3)), ("numeric", 2))
    # NaN rows are equal keys
    k = row_keys(np.array([[np.nan, 1.0], [np.nan, 1.0]]))
    assert k[0] == k[1]
    f = object_features(obj)
    assert f.shape[0] == 3 and np.all(np.isfinite(f))


def test_same_result_on_a_thread_pool_with_object_outputs():
    kw = dict(epsilon=1.0, trials=1_500, seed=4)
    a = audit_mechanism(svt_transcript, [0, 0, 0], [1, 1, 1], execution=Execution(chunk_size=200), **kw)
    with ThreadPoolExecutor(2) as ex:
        b = audit_mechanism(svt_transcript, [0, 0, 0], [1, 1, 1], execution=Execution(executor=ex, chunk_size=200),
                            **kw)
    assert a.to_dict() == b.to_dict()
    assert math.isfinite(a.epsilon_lower)
