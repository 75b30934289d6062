"""Issue 13: process pools take what users write -- lambdas, closures, scripts without a main guard.

``workers=N`` runs on loky (cloudpickle; workers never re-run the caller's script). The results
are the in-process ones (seed determinism), and a standard-pickle pool of the caller's still gets a
clear refusal (tests/core/test_runner.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from dpaudit.audit import audit_mechanism
from dpaudit.core.execution import Execution
from dpaudit.core.runner import ProcessPool, check_picklable


def dumps(result) -> str:
    return json.dumps(result.to_dict(), sort_keys=True)


def test_lambdas_and_closures_run_on_workers_with_the_in_process_result():
    scale = 1.0

    def sampler(x, rng, size):  # a closure over `scale`
        return x + rng.laplace(0.0, scale, size)

    kw = dict(epsilon=1.0, trials=3000, seed=5, statistic=lambda o: o)
    here = audit_mechanism(sampler, 0.0, 1.0, execution=Execution(chunk_size=500), **kw)
    there = audit_mechanism(sampler, 0.0, 1.0, execution=Execution(workers=2, chunk_size=500), **kw)
    assert dumps(here) == dumps(there)


def test_dpaudit_pool_serialises_with_cloudpickle():
    pool = ProcessPool(2)
    assert pool.uses_cloudpickle
    check_picklable(pool, lambda x, rng, size: x, "sampler")
    with pytest.raises(ValueError, match="cannot be serialised"):
        check_picklable(pool, (lambda: (yield)) (), "sampler")  # a generator never serialises


SCRIPT = """
import os
print("script body runs in", os.getpid(), flush=True)
import dpaudit

# no `if __name__ == "__main__":` guard, a lambda sampler, two worker processes
res = dpaudit.audit_mechanism(lambda x, rng, size: x + rng.laplace(0.0, 1.0, size), 0.0, 1.0,
                              epsilon=1.0, trials=2000, seed=3,
                              execution=dpaudit.Execution(chunk_size=500, workers=2))
print("RESULT", repr(res.epsilon_lower), flush=True)
"""


@pytest.mark.slow
def test_a_script_without_main_guard_runs_once_on_workers(tmp_path):
    script = tmp_path / "audit_script.py"
    script.write_text(textwrap.dedent(SCRIPT))
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                       cwd=tmp_path, env={**os.environ, "DPAUDIT_PROGRESS": "0"})
    assert p.returncode == 0, p.stderr[-3000:]
    body = [line for line in p.stdout.splitlines() if line.startswith("script body runs")]
    assert len(body) == 1, p.stdout  # the workers did not re-run the script
    result = [line for line in p.stdout.splitlines() if line.startswith("RESULT")]
    expected = audit_mechanism(lambda x, rng, size: x + rng.laplace(0.0, 1.0, size), 0.0, 1.0, epsilon=1.0, trials=2000, seed=3,
                               execution=Execution(chunk_size=500))
    assert result == [f"RESULT {expected.epsilon_lower!r}"]


@pytest.mark.slow
def test_vector_outputs_and_default_statistic_on_workers():
    def sampler(x, rng, size):
        return rng.normal(np.broadcast_to(x, (size, 2)), 1.0)

    kw = dict(epsilon=5.0, delta=1e-5, trials=2000, seed=9)
    assert dumps(audit_mechanism(sampler, [0.0, 0.0], [1.0, 0.0], execution=Execution(chunk_size=500), **kw)) == \
        dumps(audit_mechanism(sampler, [0.0, 0.0], [1.0, 0.0], execution=Execution(workers=2, chunk_size=500), **kw))
