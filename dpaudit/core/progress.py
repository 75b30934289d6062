"""Progress reporting for long audits: trials done, rate and time left, on stderr.

A :class:`Progress` prints a single self-overwriting status line such as::

    audit: 40,000/100,000 trials (40%)  52,310 trials/s  1.2 s left

It is deliberately quiet unless a person is watching:

* it prints only when its stream (stderr by default) is a terminal, or when forced with
  ``enabled=True`` or the environment variable ``DPAUDIT_PROGRESS=1``;
* ``DPAUDIT_PROGRESS=0``, :func:`disabled` (used by every ``--json`` command) or
  ``enabled=False`` silence it whatever the stream;
* it waits ``delay`` seconds (default 1 s) before the first line, so short runs print nothing,
  and redraws at most every ``interval`` seconds (default 0.5 s).

Usage (library code that runs trials in chunks)::

    with Progress(total=trials, label="audit") as p:
        for chunk in chunks:
            ...
            p.update(len(chunk))

From Python, without a terminal: :func:`reporting` installs a callback ``progress(done, total)``
that every :class:`Progress` created inside the block feeds (``audit_mechanism(...,
progress=f)`` and ``audit_optimizer(..., progress=f)`` use it), and every :class:`Progress` logs
to the standard ``logging`` logger ``"dpaudit.core.progress"`` (a child of ``"dpaudit"``): its
start and end at INFO, and the status line at INFO at most every :data:`LOG_INTERVAL` seconds.
``logging.basicConfig(level=logging.INFO)`` is enough to see a long audit advance in a log file.

Only the standard library is used; nothing here draws random numbers.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import sys
import time

__all__ = ["Progress", "disabled", "set_default", "progress_enabled", "format_duration", "reporting",
           "LOG_INTERVAL"]

logger = logging.getLogger(__name__)
#: seconds between two INFO status lines of one Progress in the log
LOG_INTERVAL = 10.0

_ENV = "DPAUDIT_PROGRESS"
#: process-wide override (None: decide from the environment and the stream)
_DEFAULT: bool | None = None


def set_default(enabled: bool | None) -> bool | None:
    """Set the process-wide default (``None`` restores auto-detection); returns the old value."""
    global _DEFAULT
    old, _DEFAULT = _DEFAULT, enabled
    return old


@contextlib.contextmanager
def disabled():
    """Silence every :class:`Progress` created inside the block (used in ``--json`` mode)."""
    old = set_default(False)
    try:
        yield
    finally:
        set_default(old)


def progress_enabled(stream=None, enabled: bool | None = None) -> bool:
    """Whether progress would be shown on ``stream``.

    Precedence: an explicit ``enabled``; then :func:`set_default` / :func:`disabled`; then the
    ``DPAUDIT_PROGRESS`` environment variable (``0``/``1``); then ``stream.isatty()``.
    """
    if enabled is not None:
        return bool(enabled)
    if _DEFAULT is not None:
        return _DEFAULT
    env = os.environ.get(_ENV, "").strip().lower()
    if env in ("0", "false", "no", "off"):
        return False
    if env in ("1", "true", "yes", "on"):
        return True
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or file-like without isatty
        return False


class _Listener:
    """Sums the units of every Progress created inside :func:`reporting` and calls back."""

    def __init__(self, callback, total):
        self.callback = callback
        self.planned = 0 if total is None else int(total)
        self.registered = 0
        self.done = 0
        self.last = None

    def total(self) -> int:
        return max(self.planned, self.registered, self.done)

    def add(self, n: int) -> None:
        self.done += int(n)
        self.last = (self.done, self.total())
        self.callback(*self.last)


_LISTENER: contextvars.ContextVar = contextvars.ContextVar("dpaudit_progress_listener", default=None)


@contextlib.contextmanager
def reporting(callback, total: int | None = None):
    """Feed ``callback(done, total)`` from every :class:`Progress` created inside the block.

    ``done`` counts the units (trials) finished so far across every phase of the block; ``total``
    is ``max(total, the units announced so far, done)``, so it can grow when a later phase is
    announced. When the block ends normally the last call has ``done == total`` (a planned total
    that was slightly off is corrected there). ``None`` as
    ``callback`` does nothing. An exception raised by the callback stops the work (it propagates).
    """
    if callback is None:
        yield None
        return
    if not callable(callback):
        raise ValueError(f"progress must be callable as progress(done, total), got {callback!r}")
    if total is not None and int(total) < 0:
        raise ValueError(f"total must be an integer >= 0 or None, got {total}")
    listener = _Listener(callback, total)
    token = _LISTENER.set(listener)
    try:
        yield listener
    finally:
        _LISTENER.reset(token)
    if listener.last is None or listener.last[0] != listener.last[1]:
        listener.last = (listener.done, listener.done)
        callback(*listener.last)


def format_duration(seconds: float) -> str:
    """Human duration: ``0.4 s``, ``12 s``, ``3 min 05 s``, ``2 h 01 min``."""
    if seconds != seconds or seconds == float("inf"):
        return "?"
    seconds = max(0.0, float(seconds))
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, sec = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {sec:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class Progress:
    """Throttled progress line on a stream (stderr by default).

    Parameters
    ----------
    total : int or None
        Number of units expected (``None``: unknown, no percentage or time left).
    enabled : bool or None
        ``None`` (default) decides with :func:`progress_enabled`.
    label : str
        Prefix of the line (e.g. ``"audit"``).
    unit : str
        Name of the units counted (``"trials"``).
    stream : file-like, optional
        Where to write (default ``sys.stderr``, looked up when the object is created).
    interval : float
        Minimum seconds between two redraws.
    delay : float
        Seconds to wait before the first line (short jobs stay silent).
    clock : callable
        Monotonic clock (``time.monotonic``); injectable for tests.
    """

    def __init__(self, total=None, *, enabled: bool | None = None, label: str = "audit",
                 unit: str = "trials", stream=None, interval: float = 0.5, delay: float = 1.0,
                 clock=time.monotonic):
        if total is not None:
            total = int(total)
            if total < 0:
                raise ValueError(f"total must be an integer >= 0 or None, got {total}")
        if not interval >= 0:
            raise ValueError(f"interval must be >= 0, got {interval}")
        if not delay >= 0:
            raise ValueError(f"delay must be >= 0, got {delay}")
        self.total = total
        self.label = label
        self.unit = unit
        self.stream = sys.stderr if stream is None else stream
        self.enabled = progress_enabled(self.stream, enabled)
        self.interval = float(interval)
        self.delay = float(delay)
        self._clock = clock
        self.done = 0
        self._start = clock()
        self._last_draw: float | None = None
        self._width = 0
        self._drawn_done = -1
        self.lines_written = 0
        self._listener = _LISTENER.get()
        if self._listener is not None and total is not None:
            self._listener.registered += total
        self._last_log = self._start
        if total:
            logger.info("%s: %s %s to run", label, f"{total:,}", unit)

    # -- context manager -------------------------------------------------------------------
    def __enter__(self) -> Progress:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()

    # -- public API ------------------------------------------------------------------------
    def update(self, n: int = 1) -> None:
        """Record ``n`` more units done; redraw if enabled and the throttle allows it."""
        self.done += int(n)
        if self._listener is not None:
            self._listener.add(n)
        if logger.isEnabledFor(logging.INFO):
            now = self._clock()
            if now - self._last_log >= LOG_INTERVAL:
                self._last_log = now
                logger.info("%s", self.message(now))
        if not self.enabled:
            return
        now = self._clock()
        if now - self._start < self.delay:
            return
        if self._last_draw is not None and now - self._last_draw < self.interval:
            return
        self._draw(now)

    def close(self) -> None:
        """Finish the line (only if something was drawn)."""
        if self.total and self.done >= self.total:
            logger.info("%s", self.message())
        if self.enabled and self._last_draw is not None:
            if self._drawn_done != self.done:
                self._draw(self._clock(), final=True)
            self.stream.write("\n")
            self.stream.flush()

    def message(self, now: float | None = None) -> str:
        """The status text for the current state (also used by the tests)."""
        now = self._clock() if now is None else now
        elapsed = max(now - self._start, 1e-9)
        rate = self.done / elapsed
        if self.total:
            pct = 100.0 * self.done / self.total
            head = f"{self.label}: {self.done:,}/{self.total:,} {self.unit} ({pct:.0f}%)"
        else:
            head = f"{self.label}: {self.done:,} {self.unit}"
        parts = [head, f"{rate:,.0f} {self.unit}/s"]
        if self.total:
            left = (self.total - self.done) / rate if rate > 0 else float("inf")
            parts.append(f"{format_duration(left)} left" if self.done < self.total
                         else f"done in {format_duration(elapsed)}")
        return "  ".join(parts)

    # -- internals -------------------------------------------------------------------------
    def _draw(self, now: float, final: bool = False) -> None:
        text = self.message(now)
        pad = " " * max(0, self._width - len(text))
        self._width = len(text)
        try:
            self.stream.write("\r" + text + pad)
            self.stream.flush()
        except (ValueError, OSError):  # stream closed under us: progress is best effort
            self.enabled = False
            return
        self._last_draw = now
        self._drawn_done = self.done
        self.lines_written += 1
