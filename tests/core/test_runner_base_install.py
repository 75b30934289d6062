"""Process pools on the base install (issue 26, item 12): loky is a core dependency, so ``workers=N`` takes lambdas
and closures without any extra, and gives the result of one process."""

from __future__ import annotations

import re

import dpaudit
from dpaudit.core.runner import ProcessPool
from tests.support import REPO

ROOT = REPO


def _core_dependencies() -> list[str]:
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"^dependencies = \[(.*?)\]", text, re.S | re.M).group(1)
    return [re.split(r"[<>=!~ ]", d.strip().strip('"'))[0] for d in block.split(",") if d.strip()]


def test_loky_is_a_core_dependency():
    assert "loky" in _core_dependencies()


def test_dpaudit_pool_is_loky_with_cloudpickle():
    assert ProcessPool(2).uses_cloudpickle


def test_a_lambda_with_two_workers_audits_and_matches_one_process():
    scale = 1.0
    sampler = lambda x, rng, size: x + scale * rng.laplace(size=size)  # noqa: E731 - the point: a lambda
    kwargs = dict(epsilon=1.0, trials=4000, seed=11, statistic="auto-real")
    one = dpaudit.audit_mechanism(sampler, 0.0, 1.0, execution=dpaudit.Execution(workers=1), **kwargs)
    two = dpaudit.audit_mechanism(sampler, 0.0, 1.0, execution=dpaudit.Execution(workers=2), **kwargs)
    assert two.epsilon_lower == one.epsilon_lower > 0
    assert two.details["threshold_test"] == one.details["threshold_test"]
    assert two.verdict == one.verdict == "consistent"
