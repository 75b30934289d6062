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

Only the standard library is used; nothing here draws random numbers.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

__all__ = ["Progress", "disabled", "set_default", "progress_enabled", "format_duration"]

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

    # -- context manager -------------------------------------------------------------------
    def __enter__(self) -> Progress:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()

    # -- public API ------------------------------------------------------------------------
    def update(self, n: int = 1) -> None:
        """Record ``n`` more units done; redraw if enabled and the throttle allows it."""
        self.done += int(n)
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
