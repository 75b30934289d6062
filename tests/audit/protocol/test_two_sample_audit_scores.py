"""Issue 18: ``audit_scores`` is the documented entry point for users' own scores."""

import math

import numpy as np
import pytest

import dpaudit
from dpaudit.audit.protocol.two_sample import audit_scores


def _laplace_scores(n=4000, shift=1.0, seed=0):
    rng = np.random.default_rng(seed)
    return rng.laplace(0.0, 1.0, n), rng.laplace(shift, 1.0, n)


def test_exported_from_the_top_level_package():
    assert dpaudit.audit_scores is audit_scores
    assert "audit_scores" in dpaudit.__all__


def test_defaults_confidence_delta_selection():
    s0, s1 = _laplace_scores()
    res = dpaudit.audit_scores(s0[:2000], s1[:2000], s0[2000:], s1[2000:], epsilon=1.0)
    assert res.confidence == 0.95
    assert res.delta == 0.0
    assert res.details["selection"] == "heldout"
    explicit = audit_scores(s0[:2000], s1[:2000], s0[2000:], s1[2000:], epsilon=1.0, delta=0.0, confidence=0.95, threshold="heldout")
    assert res.epsilon_lower == explicit.epsilon_lower


def test_two_arrays_are_split_in_half_in_order():
    s0, s1 = _laplace_scores(n=3001)
    halves = audit_scores(s0, s1, epsilon=1.0)
    explicit = audit_scores(s0[:1500], s1[:1500], s0[1500:], s1[1500:], epsilon=1.0)
    assert halves.epsilon_lower == explicit.epsilon_lower
    assert halves.details["n_selection"] == [1500, 1500]
    assert halves.details["n_evaluation"] == [1501, 1501]
    # Laplace(0,1) vs Laplace(1,1) is exactly 1-DP: the lower bound sits below 1 and above 0
    assert 0.0 < halves.epsilon_lower <= 1.0
    assert not halves.violation


def test_only_one_evaluation_array_is_rejected():
    s0, s1 = _laplace_scores(n=100)
    with pytest.raises(ValueError, match="eval0 and eval1"):
        audit_scores(s0, s1, s0, epsilon=1.0)


def test_epsilon_inf_gives_the_bound_without_a_verdict_of_violation():
    s0, s1 = _laplace_scores(shift=3.0)
    res = audit_scores(s0, s1, epsilon=math.inf)
    assert res.epsilon_lower > 1.0 and not res.violation


def test_docstring_documents_arguments_certificate_and_example():
    doc = audit_scores.__doc__
    for word in ("sel0, sel1", "eval0, eval1", "epsilon", "delta", "confidence", "selection",
                 "What it certifies", "Example", ">>> res = audit_scores"):
        assert word in doc, word
