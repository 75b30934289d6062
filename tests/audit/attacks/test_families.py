"""Each attack family: sound (false alarms at most at the nominal rate on correct mechanisms, discrete
ones with many ties included) and powerful (flags a deliberately broken mechanism). Small cases here;
200-seed versions are marked slow."""

import math

import numpy as np
import pytest

from dpaudit.audit import audit_mechanism
from dpaudit.audit.attacks.families import empirical_lr_statistic, logistic_statistic, sklearn_available
from dpaudit.audit.attacks.floating import float_bit_codes, float_bits_statistic, float_reachability_statistic
from dpaudit.audit.attacks.outputs import as_output_batch
from dpaudit.testing import assert_audit_consistent


def _limit(R, beta=0.05):
    return R * beta + 3 * math.sqrt(R * beta * (1 - beta))


# ---------------------------------------------------------------- mechanisms (module level: picklable)
def randomized_response(x, rng, size, eps=1.0):
    keep = rng.random(size) < math.exp(eps) / (1 + math.exp(eps))
    return np.where(keep, x, 1 - x).astype(int)


def rr_claiming_half(x, rng, size):
    return randomized_response(x, rng, size, eps=2.0)


def discrete_laplace(x, rng, size, eps=0.5, dim=None):
    """x + two-sided geometric noise: exactly eps-DP for sensitivity-1 integer queries (many ties)."""
    p = 1.0 - math.exp(-eps)
    shape = (size,) if dim is None else (size, dim)
    return np.asarray(x) + rng.geometric(p, shape) - rng.geometric(p, shape)


def discrete_laplace_hist_wrong_scale(x, rng, size):
    return discrete_laplace(x, rng, size, eps=2.0, dim=3)  # noise for eps = 2, claimed 0.5


def snapped_laplace(x, rng, size, eps=0.5, B=50.0):
    """Mironov's snapping mechanism (correct in floating point): outputs on a power-of-two grid."""
    scale = (1 + B * 2.0**-49) / eps
    lam = 2.0 ** math.ceil(math.log2(scale))
    raw = np.clip(x, -B, B) + np.where(rng.random(size) < 0.5, -1.0, 1.0) * scale * np.log(1.0 - rng.random(size))
    return np.clip(np.round(raw / lam) * lam, -B, B)


def snapped_laplace_fine(x, rng, size):
    return snapped_laplace(x, rng, size, eps=4.0)  # grid 0.25: real-valued outputs, no bit-level leak


def textbook_laplace(x, rng, size, eps=0.5):
    return x + rng.laplace(0.0, 1.0 / eps, size)


def xor_mechanism(x, rng, size):
    """2-D output whose sign product leaks x (invisible to a linear score)."""
    a = rng.normal(size=size)
    b = np.abs(rng.normal(size=size)) * np.where(rng.random(size) < (0.9 if x else 0.5), np.sign(a), -np.sign(a))
    return np.stack([a, b], axis=1)


# ---------------------------------------------------------------- soundness (default selection: small)
@pytest.mark.parametrize("family,sampler,claim,R", [
    ("empirical-lr", randomized_response, 1.0, 60),
    ("empirical-lr", discrete_laplace, 0.5, 60),
    ("logistic", discrete_laplace, 0.5, 40),
    ("float-bits", snapped_laplace_fine, 4.0, 40),
])
def test_family_sound_on_correct_discrete_mechanisms(family, sampler, claim, R):
    hits = sum(audit_mechanism(sampler, 0, 1, epsilon=claim, trials=1_000, seed=500 + s, statistic=family).violation
               for s in range(R))
    assert hits <= _limit(R), (family, hits)


def test_auto_sound_on_identical_inputs():
    """epsilon = 0 claim and x = x': any positive bound is a false alarm."""
    R = 30
    hits = sum(audit_mechanism(discrete_laplace, 3, 3, epsilon=0.0, trials=800, seed=s).epsilon_lower > 0
               for s in range(R))
    assert hits <= _limit(R)


# ---------------------------------------------------------------- power
def test_empirical_lr_power():
    r = audit_mechanism(rr_claiming_half, 0, 1, epsilon=1.0, trials=3_000, seed=1, statistic="empirical-lr")
    assert r.violation and r.epsilon_lower <= 2.0
    assert r.details["attack"]["family"] == "empirical-lr" and "exact" in r.details["attack"]["description"]


def test_logistic_power_on_vector_counts():
    r = audit_mechanism(discrete_laplace_hist_wrong_scale, np.array([1, 1, 1]), np.array([2, 1, 1]), epsilon=0.5,
                        trials=4_000, seed=2, statistic="logistic")
    assert r.violation and r.epsilon_lower <= 2.0


@pytest.mark.skipif(not sklearn_available(), reason="needs scikit-learn (dpaudit[learn])")
def test_mlp_power_where_linear_fails():
    m = audit_mechanism(xor_mechanism, 0, 1, epsilon=0.3, trials=6_000, seed=3, statistic="mlp")
    lin = audit_mechanism(xor_mechanism, 0, 1, epsilon=0.3, trials=6_000, seed=3, statistic="logistic")
    assert m.violation and m.epsilon_lower > lin.epsilon_lower


def test_named_mlp_skipped_and_recorded_without_sklearn(monkeypatch):
    import dpaudit.audit.attacks.families as fam

    monkeypatch.setattr(fam, "sklearn_available", lambda: False)
    r = audit_mechanism(randomized_response, 0, 1, epsilon=1.0, trials=600, seed=0, statistic=["auto", "mlp"])
    assert any(s["family"] == "mlp" and "scikit-learn" in s["reason"] for s in r.details["attack"]["skipped"])


def test_default_contest_is_the_same_on_every_install(monkeypatch):
    """The default contest must not depend on the installed extras (b3a8540: without scikit-learn the mlp family was
    skipped, so the same seed gave another answer on another machine)."""
    import dpaudit.audit.attacks.families as fam

    def vector(x, rng, size):  # a vector output on which the learned families compete
        return rng.laplace(0.0, 1.0, (size, 3)) + np.array([x, 0.0, x])

    kw = dict(epsilon=5.0, trials=3000, seed=4)
    with_sklearn = audit_mechanism(vector, 0.0, 1.0, **kw)
    tried = {c["family"] for c in with_sklearn.details["attack"]["candidates"]}
    assert "mlp" not in tried and {"logistic", "projection"} <= tried
    monkeypatch.setattr(fam, "sklearn_available", lambda: False)
    without = audit_mechanism(vector, 0.0, 1.0, **kw)
    assert without.epsilon_lower == with_sklearn.epsilon_lower
    assert without.details["attack"] == with_sklearn.details["attack"]


def test_textbook_float_laplace_caught_by_default_regression():
    """Before issue 15 the default statistic never caught a textbook floating-point Laplace (Mironov 2012)."""
    r = audit_mechanism(textbook_laplace, 0.0, 1.0, epsilon=0.5, trials=5_000, seed=4)
    assert r.violation and r.epsilon_lower > 2.0
    assert r.details["attack"]["family"] == "float-bits" and r.details["attack"]["leak"] == "floating-point"
    # the same sampler read as real numbers is consistent with its mathematical claim
    ok = audit_mechanism(textbook_laplace, 0.0, 1.0, epsilon=0.5, trials=5_000, seed=4, statistic="auto-real")
    assert not ok.violation


def test_verdict_names_floating_point_regression():
    """Before issue 15 the message of a bit-level violation blamed the noise scale / sensitivity."""
    with pytest.raises(AssertionError) as info:
        assert_audit_consistent(textbook_laplace, 0.0, 1.0, epsilon=0.5, trials=5_000, seed=4)
    msg = str(info.value)
    assert "FLOATING-POINT" in msg and "snap" in msg and "float-bits" in msg
    assert "wrong sensitivity" not in msg


def test_snapped_laplace_passes_the_default_audit():
    res = assert_audit_consistent(snapped_laplace, 0.0, 1.0, epsilon=0.5, trials=5_000, seed=5)
    assert not res.violation


# ---------------------------------------------------------------- the statistics as public helpers
def test_bit_codes_and_reachability():
    c = float_bit_codes(np.array([1.0, 0.75, 0.5 + 2.0**-53]))
    assert ((c // 2) % 64).tolist() == [1, 2, 53]
    stat = float_reachability_statistic(0.0, 1.0)
    y = np.array([[0.3], [1.5]])  # 0.3 is an odd multiple of 2^-54: 1 + n (n in (-1, -1/2], exact) never gives it
    s = stat(y)
    assert s[0] == -1.0 and s[1] == 0.0


def test_helpers_fit_on_raw_outputs():
    rng = np.random.default_rng(0)
    a = as_output_batch(randomized_response(0, rng, 500))
    b = as_output_batch(randomized_response(1, rng, 500))
    st = empirical_lr_statistic(a, b)
    assert st.tie_values.size == 3 and st(b).mean() > st(a).mean()
    lg = logistic_statistic(a, b)
    assert lg(b).mean() > lg(a).mean()
    fb = float_bits_statistic(as_output_batch(textbook_laplace(0.0, rng, 500)),
                              as_output_batch(textbook_laplace(1.0, rng, 500)))
    assert fb.bit_level


# ---------------------------------------------------------------- slow: 200 seeds
@pytest.mark.slow
@pytest.mark.parametrize("statistic,sampler,claim", [
    ("auto", randomized_response, 1.0),
    ("auto", discrete_laplace, 0.5),
    ("auto", snapped_laplace, 0.5),
])
def test_auto_sound_200_seeds(statistic, sampler, claim):
    R = 200
    hits = sum(audit_mechanism(sampler, 0, 1, epsilon=claim, trials=600, seed=9_000 + s,
                               statistic=statistic).violation for s in range(R))
    assert hits <= _limit(R), hits


def test_laplace_lr_statistic_does_not_read_low_bits_regression():
    """Before issue 15 laplace_lr_statistic returned +-1/b only up to a few ulps outside [l0, l1], by an
    amount set by the low bits of the output: on a textbook floating-point histogram the threshold test
    then read the last bits and blamed the noise scale. Its saturated values are now exact."""
    from dpaudit.audit import laplace_lr_statistic

    st = laplace_lr_statistic([1.0, 1.0, 1.0], [2.0, 1.0, 1.0], 0.5)
    rng = np.random.default_rng(0)
    o = np.array([1.0, 1.0, 1.0]) + rng.laplace(0.0, 200.0, (2_000, 3))
    s = st(o)
    outside = (o[:, 0] < 1.0) | (o[:, 0] > 2.0)
    assert set(np.unique(s[outside]).tolist()) == {-2.0, 2.0}
