"""Issue 18: diffprivlib mechanisms and tools as dpaudit samplers; the weighted-histogram leak.

Skipped (with the reason) where diffprivlib is not installed: ``pip install diffprivlib``.
"""

import warnings

import numpy as np
import pytest

import dpaudit
from dpaudit.interop.diffprivlib import (
    LibraryRNGWarning,
    audit_diffprivlib,
    mechanism_claim,
    mechanism_sampler,
    tool_sampler,
)

dpl = pytest.importorskip("diffprivlib", reason="diffprivlib is not installed (pip install diffprivlib)")
from diffprivlib.tools import histogram  # noqa: E402


def _hist_sampler():
    return tool_sampler(histogram, output=lambda r: r[0], epsilon=1.0, bins=2, range=(0.0, 1.0))


def test_claim_is_read_from_the_mechanism():
    assert mechanism_claim(dpl.mechanisms.Laplace(epsilon=0.5, sensitivity=1.0)) == (0.5, 0.0)
    assert mechanism_claim(dpl.mechanisms.GaussianAnalytic(epsilon=1.0, delta=1e-5, sensitivity=1.0)) == (1.0, 1e-5)
    with pytest.raises(ValueError, match="mechanism"):
        mechanism_claim(object())


def test_sampler_shape_and_reproducible_from_our_seed():
    s = mechanism_sampler(dpl.mechanisms.Laplace(epsilon=1.0, sensitivity=1.0))
    a = s(0.0, np.random.default_rng(3), 5)
    b = s(0.0, np.random.default_rng(3), 5)
    assert a.shape == (5,) and np.array_equal(a, b)
    assert not np.array_equal(a, s(0.0, np.random.default_rng(4), 5))


def test_unseeded_library_rng_warns():
    with pytest.warns(LibraryRNGWarning, match="not reproducible"):
        s = mechanism_sampler(dpl.mechanisms.Laplace(epsilon=1.0, sensitivity=1.0), seed_library_rng=False)
    assert s(0.0, np.random.default_rng(0), 3).shape == (3,)


def test_correct_laplace_is_consistent_as_a_mathematical_mechanism():
    r = audit_diffprivlib(dpl.mechanisms.Laplace(epsilon=1.0, sensitivity=1.0), 0.0, 1.0, trials=4000, seed=0,
                          statistic="auto-real")
    assert not r.violation and 0.0 < r.epsilon_lower <= 1.0
    assert r.details["library"]["library_rng_seeded"] is True
    again = audit_diffprivlib(dpl.mechanisms.Laplace(epsilon=1.0, sensitivity=1.0), 0.0, 1.0, trials=4000, seed=0,
                              statistic="auto-real")
    assert again.epsilon_lower == r.epsilon_lower  # reproducible from dpaudit's seed


def test_unweighted_histogram_is_consistent():
    d0 = {"sample": [0.2, 0.6], "weights": [1, 1]}
    d1 = {"sample": [0.2, 0.6, 0.7], "weights": [1, 1, 1]}
    r = dpaudit.audit_mechanism(_hist_sampler(), d0, d1, epsilon=1.0, trials=2000, seed=0)
    assert not r.violation


def test_weighted_histogram_leak():
    # diffprivlib 0.6.6 tools.histogram adds noise of sensitivity 1 whatever the weights: with records of
    # weight 10 a bin moves by 10 between add/remove neighbours, so the release is only 10-DP, not 1-DP.
    # This test asserts the leak; when diffprivlib scales the noise to the weights it fails and shows the fix.
    d0 = {"sample": [0.2, 0.6], "weights": [10, 10]}
    d1 = {"sample": [0.2, 0.6, 0.7], "weights": [10, 10, 10]}
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpaudit.audit.NeighbouringRelationWarning)  # same relation: no warning
        r = dpaudit.audit_mechanism(_hist_sampler(), d0, d1, epsilon=1.0, trials=2000, seed=0,
                                    neighbouring="add_remove", claim_neighbouring="add_remove")
    assert r.violation and r.epsilon_lower > 3.0


def test_float_laplace_leak_is_found_by_the_bit_level_attack():
    # diffprivlib's Laplace returns value - scale * noise in doubles: some outputs can only come from one of
    # two neighbouring inputs (Mironov 2012); the bit-level attack certifies it against the claim of 1.
    r = audit_diffprivlib(dpl.mechanisms.Laplace(epsilon=1.0, sensitivity=1.0), 0.0, 1.0, trials=10_000, seed=0)
    assert r.violation and r.details["attack"]["leak"] == "floating-point"


def test_replace_one_histogram_violation_comes_with_the_relation_warning():
    # issue 18: the histogram "violates" 1-DP under replace-one only because the relation differs
    d0, d1 = {"sample": [0.2], "weights": [1]}, {"sample": [0.7], "weights": [1]}
    with pytest.warns(dpaudit.audit.NeighbouringRelationWarning):
        r = dpaudit.audit_mechanism(_hist_sampler(), d0, d1, epsilon=1.0, trials=4000, seed=0,
                                    neighbouring="replace_one", claim_neighbouring="add_remove")
    assert r.violation and r.epsilon_lower <= 2.0 and r.details["relation"]["warning"]
