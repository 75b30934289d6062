"""The ceilings printed by benchmarks/dp_testing_suite.py (issue 15): checked against the package's own
limit of a threshold audit where the pair is one it knows, and against the exact epsilon of each pair."""

import math
import sys

import numpy as np
import pytest

from tests.support import BENCHMARKS  # noqa: E402

sys.path.insert(0, str(BENCHMARKS))

import dp_testing_suite as S  # noqa: E402

from dpaudit.audit.stats.threshold_limit import threshold_audit_limit  # noqa: E402


@pytest.mark.parametrize("n", [1_000, 70_000, 700_000])
def test_randomized_response_ceiling_matches_the_threshold_audit_limit(n):
    p, q, how = S.exact_atoms("tight: randomized response (eps 1)")
    ours = S.ceiling(p, q, n)
    ref = threshold_audit_limit("randomized-response", n, epsilon=1.0)["epsilon"]
    assert ours == pytest.approx(ref, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("name,eps", [
    ("RAPPOR", 6 * math.log(0.5125 / 0.4875)),
    ("One-time RAPPOR", 6 * math.log((1 - 0.95 / 2) / (0.95 / 2))),
    ("tight: discrete Laplace (eps 0.5)", 0.5),
    ("ReportNoisyMax3 (Lap, value)", 0.25),
    ("PrefixSum (incorrect, Lap(1/eps))", 1.0),
])
def test_pair_epsilon_is_the_known_exact_value(name, eps):
    p, q, _ = S.exact_atoms(name)
    assert p.sum() == pytest.approx(1.0, abs=1e-6) and q.sum() == pytest.approx(1.0, abs=1e-6)
    assert S.pair_epsilon(p, q) == pytest.approx(eps, rel=1e-6)


@pytest.mark.parametrize("name", ["SVT3 (Alg. 3, value)", "SVT4 (Alg. 4)", "RAPPOR",
                                  "PrefixSum (incorrect, Lap(1/eps))"])
def test_ceiling_grows_with_n_and_stays_below_the_pair_epsilon(name):
    p, q, _ = S.exact_atoms(name)
    c = [S.ceiling(p, q, n) for n in (10_000, 100_000, 1_000_000, 10_000_000)]
    assert all(a < b for a, b in zip(c, c[1:])), c
    assert c[-1] < S.pair_epsilon(p, q)


def test_svt4_quadrature_against_simulation():
    """The quadrature's category probabilities against 400,000 runs of the benchmark's own sampler
    (each within 5 standard errors)."""
    x = np.ones(10)
    p = S._svt_first_above(x, S.EPS / 4, 3 * S.EPS / 4)
    out = S.svt4(x, np.random.default_rng(0), 400_000)
    above = out == 1.0
    idx = np.where(above.any(axis=1), np.argmax(above, axis=1), 10)
    freq = np.bincount(idx, minlength=11) / idx.size
    se = np.sqrt(p * (1 - p) / idx.size)
    assert np.all(np.abs(freq - p) < 5 * se + 1e-9), (freq, p)


def test_svt3_quadrature_against_simulation():
    """SVT3's (first above, value cell) quadrature summed over values against the sampler's index frequencies."""
    x = np.ones(10)
    cells = S._svt_first_above(x, S.EPS / 2, S.EPS / 2, values=True)
    p = np.concatenate([cells[:-1].reshape(10, -1).sum(axis=1), cells[-1:]])
    out = S.svt3(x, np.random.default_rng(1), 400_000)
    above = out > -999.0
    idx = np.where(above.any(axis=1), np.argmax(above, axis=1), 10)
    freq = np.bincount(idx, minlength=11) / idx.size
    se = np.sqrt(p * (1 - p) / idx.size)
    assert np.all(np.abs(freq - p) < 5 * se + 1e-4), (freq, p)


def test_svt3_oracle_score_is_the_exact_log_likelihood_ratio():
    # the oracle subcommand's score maps each SVT3 output to its atom's log-ratio: its mean under each input is
    # the KL divergence of the atoms (D(p||q) under a = 1s, -D(q||p) under a'), within 5 standard errors of
    # 200,000 runs; a wrong index or cell map shifts the means by far more
    score = S._svt3_oracle_score()
    a, ap = np.ones(10), np.array([2.0] * 5 + [0.0] * 5)
    p = S._svt_first_above(a, S.EPS / 2, S.EPS / 2, values=True)
    q = S._svt_first_above(ap, S.EPS / 2, S.EPS / 2, values=True)
    m = (p > 1e-300) & (q > 1e-300)
    kl_pq = float(np.sum(p[m] * (np.log(p[m]) - np.log(q[m]))))
    kl_qp = float(np.sum(q[m] * (np.log(q[m]) - np.log(p[m]))))
    rng = np.random.default_rng(0)
    s0, s1 = score(S.svt3(a, rng, 200_000)), score(S.svt3(ap, rng, 200_000))
    assert abs(s0.mean() - kl_pq) <= 5 * s0.std() / math.sqrt(s0.size)
    assert abs(s1.mean() + kl_qp) <= 5 * s1.std() / math.sqrt(s1.size)
    assert s0.max() <= 0.3 + 1e-3 and s1.min() >= -0.3 - 1e-3  # the pair's exact epsilon is 0.300
