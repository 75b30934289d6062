"""dpaudit's own work runs with one BLAS thread (dpaudit/core/threads.py).

Each test first sets the BLAS libraries to two threads itself (the test runner's xdist workers run
with one), so a missing limit shows as a thread count of 2.
"""

from __future__ import annotations

import concurrent.futures as cf

import numpy as np
import pytest

threadpoolctl = pytest.importorskip("threadpoolctl")

import dpaudit  # noqa: E402
from dpaudit.core import threads  # noqa: E402
from dpaudit.core.runner import _call_chunk  # noqa: E402


def blas_threads() -> set[int]:
    return {lib["num_threads"] for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas"}


def by_library() -> dict:
    return {lib["filepath"]: lib["num_threads"] for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas"}


def restored(before: dict) -> bool:
    """Every BLAS library loaded before is back at its thread count (one loaded since keeps its own)."""
    now = by_library()
    return all(now[k] == v for k, v in before.items())


@pytest.fixture
def two_threads(monkeypatch):
    """BLAS at two threads outside dpaudit (skipped where the library cannot run two)."""
    monkeypatch.delenv(threads.ENV_VAR, raising=False)
    if not blas_threads():
        pytest.skip("no BLAS library loaded that threadpoolctl can see")
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        if blas_threads() != {2}:
            pytest.skip(f"this BLAS cannot run two threads here ({blas_threads()})")
        yield


def test_one_thread_inside_and_restored_after(two_threads):
    with threads.one_blas_thread():
        assert blas_threads() == {1}
        with threads.one_blas_thread():  # nested: the inner end does not lift the limit
            assert blas_threads() == {1}
        assert blas_threads() == {1}
    assert blas_threads() == {2}


def test_restored_after_an_exception(two_threads):
    with pytest.raises(RuntimeError), threads.one_blas_thread():
        raise RuntimeError("boom")
    assert blas_threads() == {2}


def test_decorator_keeps_the_signature_and_limits(two_threads):
    @threads.blas_limited
    def f(a, *, b=2):
        """doc"""
        return blas_threads(), a + b

    assert f.__doc__ == "doc" and f.__name__ == "f"
    assert f(1) == ({1}, 3)
    assert blas_threads() == {2}


def test_environment_sets_the_limit(two_threads, monkeypatch):
    monkeypatch.setenv(threads.ENV_VAR, "native")
    assert threads.blas_thread_limit() is None
    with threads.one_blas_thread():
        assert blas_threads() == {2}
    monkeypatch.setenv(threads.ENV_VAR, " 1 ")
    with threads.one_blas_thread():
        assert blas_threads() == {1}
    monkeypatch.setenv(threads.ENV_VAR, "")
    assert threads.blas_thread_limit() == 1


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5", "nan"])
def test_environment_rejects_bad_values_by_name(value, monkeypatch):
    monkeypatch.setenv(threads.ENV_VAR, value)
    with pytest.raises(ValueError, match=threads.ENV_VAR):
        threads.blas_thread_limit()
    with pytest.raises(ValueError, match=threads.ENV_VAR), threads.one_blas_thread():
        pass


def test_a_chunk_runs_with_one_thread_wherever_it_runs(two_threads):
    # (_call_chunk is what every executor runs: this process, the pool, Dask workers)
    assert _call_chunk(lambda size, seed: blas_threads(), 1, None, 0) == {1}


def test_audit_mechanism_and_its_sampler_see_one_thread(two_threads):
    seen, before = [], by_library()

    def sampler(x, rng, size):
        seen.append(blas_threads())
        return x + rng.laplace(0.0, 1.0, size)

    with cf.ThreadPoolExecutor(2) as pool:
        for execution in (None, dpaudit.Execution(executor=pool)):
            seen.clear()
            dpaudit.audit_mechanism(sampler, 0.0, 1.0, epsilon=1.0, trials=400, seed=1, statistic="value",
                                    execution=execution)
            assert seen and all(s == {1} for s in seen), seen
    assert restored(before)


def test_pld_queries_run_with_one_thread(two_threads, monkeypatch):
    import dpaudit.accounting.pld.accountant as acc_mod

    seen = []
    real = acc_mod.spectral_compose

    def recording(*args, **kwargs):
        seen.append(blas_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(acc_mod, "spectral_compose", recording)
    acc = dpaudit.PLDAccountant().compose(dpaudit.PoissonSampled(dpaudit.Gaussian(1.0), 0.1), 3)
    acc.epsilon(1e-5)
    assert seen and all(s == {1} for s in seen), seen


def test_report_and_cli_run_with_one_thread(two_threads, monkeypatch, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    import dpaudit.report.plots as plots
    from dpaudit.cli import main
    from dpaudit.report.writer import write_report

    seen, before = [], by_library()
    real = plots._png

    def recording(fig, fmt="png"):
        seen.append(blas_threads())
        return real(fig, fmt)

    monkeypatch.setattr(plots, "_png", recording)
    result = dpaudit.audit_mechanism(dpaudit.Laplace(1.0).sample, 0.0, 1.0, epsilon=1.0, trials=400, seed=1)
    write_report(tmp_path / "r.html", audit=result)
    assert seen and all(s == {1} for s in seen), seen
    seen.clear()
    monkeypatch.setenv("DPAUDIT_PROGRESS", "0")
    assert main(["audit", "dp-gd", "--trials", "1000", "--seed", "1", "--plot", str(tmp_path / "p.png")]) == 0
    assert seen and all(s == {1} for s in seen), seen
    assert restored(before)


def test_a_samplers_blas_sums_do_not_depend_on_the_thread_count(monkeypatch):
    """The point of the limit: a BLAS reduction inside an audit gives the same value however many
    threads the machine's BLAS would use (outside dpaudit the two sums differ, checked first)."""
    monkeypatch.delenv(threads.ENV_VAR, raising=False)
    rng = np.random.default_rng(0)
    a, b = rng.random(1_000_003), rng.random(1_000_003)
    raw = {}
    for n in (1, 2):
        with threadpoolctl.threadpool_limits(n, user_api="blas"):
            if blas_threads() != {n}:
                pytest.skip(f"this BLAS cannot run {n} threads here")
            raw[n] = float(np.dot(a, b))
    if raw[1] == raw[2]:
        pytest.skip("this BLAS sums these vectors alike on 1 and 2 threads")
    inside = {}
    for n in (1, 2):
        got = []

        def sampler(x, rng, size):
            got.append(float(np.dot(a, b)))
            return x + rng.laplace(0.0, 1.0, size)

        with threadpoolctl.threadpool_limits(n, user_api="blas"):
            dpaudit.audit_mechanism(sampler, 0.0, 1.0, epsilon=1.0, trials=200, seed=1, statistic="value")
        inside[n] = set(got)
    assert inside[1] == inside[2] == {raw[1]}
