"""dpaudit.audit.stats.error_rates: epsilon lower bounds from (FPR, FNR) and their counts."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.audit.stats.binomial import cp_upper
from dpaudit.audit.stats.error_rates import epsilon_lower_from_counts, epsilon_lower_from_rates


# ------------------------------------------------------------------ epsilon bounds
def test_epsilon_from_rates_formula():
    # Laplace(1) between 0 and 1, test s > 1: FPR = e^-1/2, FNR = 1/2 -> epsilon = 1 exactly
    fpr, fnr = 0.5 * math.exp(-1), 0.5
    assert epsilon_lower_from_rates(fpr, fnr, 0.0) == pytest.approx(1.0, abs=1e-12)
    assert epsilon_lower_from_rates(fpr, fnr, 0.0) <= 1.0
    assert epsilon_lower_from_rates(0.5, 0.5, 0.0) == 0.0
    assert epsilon_lower_from_rates(0.01, 0.5, 0.6) == 0.0  # 1 - delta - FNR < 0 on both sides


def test_epsilon_ceiling_reference():
    """Kairouz, Oh, Viswanath 2015, Thm. 2.1; Jagielski, Ullman, Oprea 2020: k_FP = 0, N0 = 1e4, beta' = 0.025: about log(N0 (1 - delta - FNR+) / log(1/beta'))."""
    fpr_u = cp_upper(0, 10_000, 0.025)
    assert epsilon_lower_from_rates(fpr_u, 0.0, 0.0) == math.inf  # FNR = 0 known exactly: no finite bound
    assert epsilon_lower_from_rates(fpr_u, 0.5, 0.0) == pytest.approx(math.log(5_000 / math.log(40)), rel=1e-3)


@given(st.integers(0, 200), st.integers(0, 200), st.floats(0, 0.5), st.floats(0, 0.5))
def test_epsilon_bound_non_increasing_in_delta(kfp, kfn, d1, d2):
    lo, hi = sorted((d1, d2))
    a = epsilon_lower_from_counts(kfp, 200, kfn, 200, lo, 0.05)
    b = epsilon_lower_from_counts(kfp, 200, kfn, 200, hi, 0.05)
    assert b <= a


@given(st.integers(0, 100), st.integers(0, 100), st.floats(0.001, 0.4), st.floats(0.001, 0.4))
def test_epsilon_bound_non_decreasing_in_beta_and_symmetric(kfp, kfn, b1, b2):
    lo, hi = sorted((b1, b2))
    assert epsilon_lower_from_counts(kfp, 100, kfn, 100, 1e-5, lo) <= epsilon_lower_from_counts(kfp, 100, kfn, 100, 1e-5, hi)
    assert epsilon_lower_from_counts(kfp, 100, kfn, 100, 0.0, lo) == epsilon_lower_from_counts(kfn, 100, kfp, 100, 0.0, lo)


def test_epsilon_rates_bad_inputs():
    with pytest.raises(ValueError, match="delta"):
        epsilon_lower_from_rates(0.1, 0.1, 1.0)
    with pytest.raises(ValueError, match="fpr"):
        epsilon_lower_from_rates(-0.1, 0.1, 0.0)
    with pytest.raises(ValueError, match="fnr"):
        epsilon_lower_from_rates(0.1, float("nan"), 0.0)
