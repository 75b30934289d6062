"""Scale-out benchmark (issue 8): throughput of chunked audits on 1 and 2 workers and a Dask cluster.

    python benchmarks/scaling.py [--quick]

Prints, for each workload, the wall time, the throughput in trials/s and the speed-up over one
process, on: the default in-process executor, a process pool of 2 workers (``workers=2``, started
beforehand, so the pool's start-up is reported apart), and a Dask ``LocalCluster`` with 2 worker
processes (through ``client.get_executor()``), and checks that every executor gives the same
result (``AuditResult.to_dict()`` / arrays, bit for bit). Then the overhead per chunk: the time
per chunk of a job whose chunks do nothing (one trial each, ``np.zeros(1)``).

Workloads: ``audit_mechanism`` on the scalar Gaussian mechanism (cheap trials: bound by the
per-chunk overhead and the transfer of scores), ``simulate_noisy_gd`` with 200 steps (the
trials of ``dpaudit renyi``; compute-bound) and ``audit_optimizer("dp-gd")`` (compute-bound).
A speed-up needs free cores: on a loaded machine the numbers say more about the load.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from dpaudit.audit import audit_mechanism, audit_optimizer
from dpaudit.audit.linear_instance import simulate_noisy_gd
from dpaudit.core.execution import Execution
from dpaudit.core.runner import InProcessExecutor, ProcessPool, run_chunks
from dpaudit.mechanisms import Gaussian


def empty_chunk(size, seed_seq):
    """A chunk that does no work (measures the per-chunk overhead of an executor)."""
    return np.zeros(size)


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _key(out):
    if isinstance(out, np.ndarray):
        return out.tobytes()
    return json.dumps(out.to_dict(), sort_keys=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller workloads")
    args = parser.parse_args(argv)
    scale = 0.2 if args.quick else 1.0

    t0 = time.perf_counter()
    pool = ProcessPool(2)
    run_chunks(empty_chunk, 2, 0, 1, executor=pool)  # start the workers
    pool_start = time.perf_counter() - t0
    executors = {"in-process (1)": InProcessExecutor(), "process pool (2)": pool}
    cluster = client = None
    try:
        import distributed

        t0 = time.perf_counter()
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=":0", silence_logs=50)
        client = distributed.Client(cluster)
        dask_ex = client.get_executor()
        run_chunks(empty_chunk, 2, 0, 1, executor=dask_ex)
        dask_start = time.perf_counter() - t0
        executors["dask LocalCluster (2)"] = dask_ex
    except ImportError:
        dask_start = None

    n_mech = int(2_000_000 * scale)
    n_gd = int(1_000_000 * scale)
    n_opt = int(20_000 * scale)
    g = Gaussian(1.0)
    workloads = [
        (f"audit_mechanism, Gaussian, {n_mech:,} trials/input, chunk 10,000", 2 * n_mech,
         lambda ex: audit_mechanism(g.sample, 0.0, 1.0, epsilon=5.0, delta=1e-5, trials=n_mech, seed=1, execution=Execution(executor=ex))),
        (f"simulate_noisy_gd, 200 steps, {n_gd:,} trials, chunk 10,000", n_gd,
         lambda ex: simulate_noisy_gd(np.zeros((1, 1)), steps=200, step_size=0.1, sigma=1.0, trials=n_gd, seed=1,
                                      execution=Execution(executor=ex))),
        (f"audit_optimizer dp-gd, {n_opt:,} trials/dataset, chunk 2,000", 2 * n_opt,
         lambda ex: audit_optimizer("dp-gd", trials=n_opt, seed=1, execution=Execution(executor=ex))),
    ]
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; "
          f"process pool start-up {pool_start:.2f} s"
          + (f", Dask LocalCluster start-up {dask_start:.2f} s" if dask_start is not None else ", Dask not installed"))
    print()
    print("| workload | executor | seconds | trials/s | speed-up | same result |")
    print("|---|---|---:|---:|---:|---|")
    ok = True
    for name, total, run in workloads:
        base_t = base_key = None
        for ex_name, ex in executors.items():
            out, dt = _timed(lambda: run(ex))
            key = _key(out)
            if base_key is None:
                base_t, base_key = dt, key
            same = key == base_key
            ok &= same
            print(f"| {name} | {ex_name} | {dt:.2f} | {total / dt:,.0f} | {base_t / dt:.2f} | {'yes' if same else 'NO'} |")

    print()
    print("| per-chunk overhead (empty chunks of 1 trial) | chunks | seconds | ms per chunk |")
    print("|---|---:|---:|---:|")
    for ex_name, ex in executors.items():
        n = 20_000 if ex_name.startswith("in-process") else (2_000 if "pool" in ex_name else 500)
        n = max(int(n * scale), 50)
        _, dt = _timed(lambda: run_chunks(empty_chunk, n, 0, 1, executor=ex))
        print(f"| {ex_name} | {n:,} | {dt:.2f} | {1000 * dt / n:.3f} |")

    pool.shutdown()
    if client is not None:
        client.close()
        cluster.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
