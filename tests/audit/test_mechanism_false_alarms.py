"""False alarms of the default audit on correct mechanisms (issue 27, item 7); the full table is
``benchmarks/false_alarms.py`` (docs/audit-statistics.md).

Each ``slow`` test audits a mechanism that satisfies its claim exactly (claimed at its true epsilon) on 200
seeds at confidence 0.95 with the default contest, and asserts violations <= 21, the 0.999 quantile of
Bin(200, 0.05). Why this assertion: a sound audit has a false-alarm rate p <= 0.05, so its count is
stochastically below Bin(200, 0.05) and the test fails with probability at most P[Bin(200, 0.05) > 21] =
0.0012 (seeds are fixed: the test is deterministic, and passes or fails for good). A broken audit -- one
that reuses selection runs for certification, ignores the confidence level or rounds the bound the wrong
way -- raises the rate: at 15 % the count exceeds 21 with probability 0.97. ``test_the_count_can_fail``
shows the assertion failing on an audit run against a claim below the truth (the same count a broken audit
would give).
"""

from __future__ import annotations

import math
import sys

import pytest
from scipy import stats

from tests.support import BENCHMARKS  # noqa: E402

sys.path.insert(0, str(BENCHMARKS))

import false_alarms  # noqa: E402

SEEDS = 200
TRIALS = 2000
#: the 0.999 quantile of Bin(200, 0.05)
LIMIT = int(stats.binom.ppf(0.999, SEEDS, 0.05))


def _case(name):
    return next(c for c in false_alarms.cases() if c[0].startswith(name))


def test_limit_is_the_binomial_quantile():
    assert LIMIT == 21 and stats.binom.sf(LIMIT, SEEDS, 0.05) < 0.0013


def test_benchmark_help_does_not_run(capsys):
    with pytest.raises(SystemExit) as info:
        false_alarms.main(["--help"])
    assert info.value.code == 0 and "--seeds" in capsys.readouterr().out


def test_benchmark_smoke(capsys):
    assert false_alarms.main(["--seeds", "2", "--trials", "200", "--only", "randomized response"]) == 0
    out = capsys.readouterr().out
    assert "| randomized response (ln 3) |" in out and "/ 2 |" in out


def test_exact_epsilons_of_the_categorical_cases():
    a = math.exp(0.5)
    assert false_alarms.exponential_epsilon() == pytest.approx(math.log(3 * a / (a + 2)), rel=1e-15)
    assert false_alarms.exponential_epsilon() >= math.log(3 * a / (a + 2))
    # the mixture's sup is at the kink y = 0: log(0.75 / (0.5 e^-1 + 0.25 e^-1/2))
    at0 = math.log(0.75 / (0.5 * math.exp(-1.0) + 0.25 * math.exp(-0.5)))
    assert false_alarms.mixture_epsilon() == pytest.approx(at0, rel=1e-12) and false_alarms.mixture_epsilon() >= at0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["Laplace(1).sample", "randomized response", "k-RR"])
def test_false_alarms_at_most_nominal(name):
    k, _ = false_alarms.count_violations(_case(name), SEEDS, TRIALS)
    assert k <= LIMIT, f"{name}: {k} violations in {SEEDS} seeds (limit {LIMIT})"


@pytest.mark.slow
def test_the_count_can_fail():
    """Randomized response (true epsilon ln 3) audited against a claim of 0.7: the count is far above the limit,
    as it would be for a broken audit of a correct mechanism."""
    case = list(_case("randomized response"))
    case[5] = 0.7
    k, _ = false_alarms.count_violations(tuple(case), SEEDS, TRIALS)
    assert k > LIMIT
