"""dpaudit.audit.stats.one_run: the one-run ceilings, p-value (brute force) and soundness under the null."""

import math

import numpy as np
import pytest

from dpaudit.audit.stats.one_run import one_run_audit, one_run_epsilon_lower, one_run_p_value


# ------------------------------------------------------------------ one run
@pytest.mark.parametrize("m,r,v,expected", [(1000, 10, 10, 1.01), (1000, 100, 100, 3.47), (1000, 1000, 1000, 5.78),
                                            (10_000, 1000, 900, 2.02), (10_000, 1000, 750, 0.97),
                                            (10_000, 1000, 600, 0.30)])
def test_one_run_ceilings_reference(m, r, v, expected):
    """Steinke, Nasr, Jagielski 2023 ceilings (delta = 1e-5, beta = 0.05)."""
    assert one_run_epsilon_lower(m=m, r=r, v=v, delta=1e-5, confidence=0.95) == pytest.approx(expected, abs=0.006)


def test_one_run_p_value_brute_force():
    """delta = 0: p(eps) is the binomial tail; compare with an explicit sum."""
    eps, r, v = 0.7, 20, 15
    q = math.exp(eps) / (1 + math.exp(eps))
    tail = sum(math.comb(r, i) * q**i * (1 - q) ** (r - i) for i in range(v, r + 1))
    assert one_run_p_value(eps, m=50, r=r, v=v) == pytest.approx(tail, rel=1e-10)
    assert one_run_p_value(eps, m=50, r=r, v=v, delta=1e-3) > tail


def test_one_run_null_soundness():
    rng = np.random.default_rng(3)
    hits = 0
    for _ in range(200):
        coins = rng.random(1000) < 0.5
        scores = rng.standard_normal(1000)  # independent of the coins: epsilon = 0
        hits += one_run_audit(scores, coins, k_in=50, k_out=50, delta=1e-5)["epsilon_lower"] > 0
    assert hits <= 200 * 0.05 + 3 * math.sqrt(200 * 0.05 * 0.95)


def test_one_run_bad_inputs():
    with pytest.raises(ValueError, match="r must be <= m"):
        one_run_epsilon_lower(m=5, r=6, v=1)
    with pytest.raises(ValueError, match="v must be <= r"):
        one_run_epsilon_lower(m=10, r=5, v=6)
