"""dpaudit's own numerical work runs with one BLAS thread.

Why. A multi-threaded BLAS (OpenBLAS, MKL) splits a reduction such as ``np.dot(a, b)`` or
``X.T @ v`` between its threads and adds the partial sums in a thread-dependent order, so the same
seed gives a different last digit on a machine with another core count (measured: ``np.dot`` of two
10^6-vectors differs between 1 and 2 OpenBLAS threads). And dpaudit's products are tall and thin
(trials x a few coordinates, quadrature nodes, PLD moments): memory-bound, no faster on two threads,
while OpenBLAS's idle threads spin after every call. Measured on 2 cores: the PLD accountant's curve
at 9 step counts took 1.13 s of CPU for 0.63 s of wall time with OpenBLAS's default threads, 0.62 s
of both with one thread; a report's CPU time dropped from 1.75 s to 0.98 s at the same wall time.
dpaudit's parallelism is processes (``Execution(workers=N)``), each then one BLAS thread.

What. :func:`one_blas_thread` limits every BLAS library loaded in the process to one thread (with
threadpoolctl, the maintained library for it: scikit-learn's and joblib's) for the duration of a
call, and restores the libraries' own setting afterwards; nested and concurrent uses share one
limit (the setting is process-wide), lifted when the outermost ends. :func:`blas_limited` is the
decorator form. They wrap the auditors' entry points, every trial chunk (in whichever process or
Dask worker runs it), the PLD accountant's queries, the report writer and the command line. A
sampler the user passes runs inside an audit, so it too sees one BLAS thread, and its BLAS
reductions give the same value on every machine.

The environment variable ``DPAUDIT_BLAS_THREADS`` changes the limit: a positive integer N (N
threads), or ``native`` (leave the libraries' own setting: a sampler that needs BLAS threads keeps
them, and results may then depend on the core count). Anything else is a ``ValueError`` naming it.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

__all__ = ["one_blas_thread", "blas_limited", "blas_thread_limit", "ENV_VAR"]

#: the environment variable that sets the limit (module docstring)
ENV_VAR = "DPAUDIT_BLAS_THREADS"

_F = TypeVar("_F", bound=Callable)

_lock = threading.RLock()
_depth = 0
_active = None  # threadpoolctl's limiter of the outermost use (restores the setting on exit)
_controller = None
_controller_modules = -1  # len(sys.modules) when the controller was built


def blas_thread_limit() -> int | None:
    """The limit in force: ``DPAUDIT_BLAS_THREADS`` as a positive integer, 1 when it is unset,
    ``None`` for ``native``."""
    raw = os.environ.get(ENV_VAR)
    if raw is None or raw.strip() == "":
        return 1
    text = raw.strip()
    if text.lower() == "native":
        return None
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"{ENV_VAR} must be a positive integer or 'native', got {raw!r}")
    return n


def _get_controller():
    """threadpoolctl's view of the loaded libraries, rebuilt when modules were imported since
    (a library loaded later, e.g. torch's, is then limited too)."""
    global _controller, _controller_modules
    n = len(sys.modules)
    if _controller is None or n != _controller_modules:
        from threadpoolctl import ThreadpoolController

        _controller, _controller_modules = ThreadpoolController(), n
    return _controller


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the body with BLAS limited to :func:`blas_thread_limit` threads (module docstring)."""
    global _depth, _active
    limit = blas_thread_limit()
    if limit is None:
        yield
        return
    with _lock:
        if _depth == 0:
            _active = _get_controller().limit(limits=limit, user_api="blas")
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _active is not None:
                _active.restore_original_limits()
                _active = None


def blas_limited(fn: _F) -> _F:
    """Decorator: ``fn`` runs inside :func:`one_blas_thread`."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with one_blas_thread():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
