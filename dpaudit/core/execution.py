"""Where and how an audit's trials run: one :class:`Execution` value shared by every auditor.

    from dpaudit import Execution, audit_mechanism
    audit_mechanism(sampler, 0, 1, epsilon=1.0, execution=Execution(workers=4))
    audit_optimizer("dp-sgd", execution=Execution(executor=client.get_executor(), progress=print_progress))

``workers`` (N >= 2: this process and a shared pool of N - 1 processes, started only when a call needs it;
:class:`dpaudit.core.runner.Workers`), ``executor`` (any
``concurrent.futures.Executor``: a thread or process pool, a Dask client's ``get_executor()``), ``chunk_size``
(trials per chunk: part of the random-stream layout, so a result depends on ``seed``, ``trials`` and
``chunk_size`` only, never on where the chunks ran; ``None`` is the auditor's default), ``retries``
(resubmissions of a failed chunk) and ``progress`` (``progress(done, total)`` after every finished chunk;
:mod:`dpaudit.core.progress`). None of them changes a result (docs/scaling.md).

The auditors used to take these as five keywords each; those keywords still work and emit a
``DeprecationWarning`` naming ``execution=Execution(...)`` (:func:`resolve_execution`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from dpaudit.core.deprecation import warn_deprecated_spelling
from dpaudit.core.runner import DEFAULT_RETRIES
from dpaudit.core.validation import check_count

__all__ = ["Execution", "resolve_execution", "EXECUTION_KEYWORDS"]

#: the keywords an :class:`Execution` replaces
EXECUTION_KEYWORDS = ("workers", "executor", "chunk_size", "retries", "progress")


@dataclass(frozen=True)
class Execution:
    """Execution options of an audit (module docstring). Immutable; ``replace(execution, workers=2)`` copies."""

    workers: int | None = None
    executor: object = None
    chunk_size: int | None = None
    retries: int = DEFAULT_RETRIES
    progress: Callable | None = None

    def __post_init__(self):
        if self.workers is not None:
            object.__setattr__(self, "workers", check_count("workers", self.workers, minimum=1))
        if self.executor is not None:
            if not callable(getattr(self.executor, "submit", None)):
                raise ValueError("executor must be a concurrent.futures.Executor (an object with submit(fn, *args))")
            if self.workers is not None:
                raise ValueError("give either executor= or workers=, not both")
        if self.chunk_size is not None:
            object.__setattr__(self, "chunk_size", check_count("chunk_size", self.chunk_size, minimum=1))
        object.__setattr__(self, "retries", check_count("retries", self.retries))
        if self.progress is not None and not callable(self.progress):
            raise ValueError(f"progress must be callable as progress(done, total), got {self.progress!r}")

    def chunk(self, default: int) -> int:
        """Trials per chunk: ``chunk_size``, or the auditor's ``default``."""
        return self.chunk_size if self.chunk_size is not None else default


def resolve_execution(execution: Execution | None, legacy: dict, *, where: str) -> Execution:
    """The :class:`Execution` of a call: ``execution``, or one built from the deprecated keywords in ``legacy``
    (``workers``, ``executor``, ``chunk_size``, ``retries``, ``progress``; each pops out of ``legacy`` and warns
    once with the new spelling). Both at once is a ``ValueError``."""
    old = {k: legacy.pop(k) for k in EXECUTION_KEYWORDS if k in legacy}
    given = {k: v for k, v in old.items() if v is not None}
    if execution is not None and not isinstance(execution, Execution):
        raise ValueError(f"execution must be a dpaudit.Execution, got {execution!r}")
    if not given:
        return execution if execution is not None else Execution()
    if execution is not None:
        raise ValueError(f"give execution=Execution(...) or the keywords {sorted(given)}, not both")
    built = replace(Execution(), **given)  # invalid values fail first, naming the keyword
    spelled = ", ".join(f"{k}={v!r}" if not callable(v) and k != "executor" else f"{k}=..." for k, v in given.items())
    warn_deprecated_spelling(", ".join(f"{k}=" for k in given), f"execution=dpaudit.Execution({spelled})", f"{where}()")
    return built
