"""Checks every subcommand runs BEFORE its work starts (issue 11).

An error found after minutes of trials wastes them and, worse, used to surface as a traceback
with the exit status of a violation. Each subcommand therefore validates, in this order: its
argument values (through the library's own validation: build the optimizer, the mechanism, the
claim), every output path (:func:`check_output_path`: the parent directory exists and is
writable, the file type is supported, matplotlib is there when a plot is drawn), and
connections (:func:`check_scheduler`: the Dask scheduler answers within a short timeout).
Every failure raises :class:`UsageError` (a ``ValueError``): exit status 2, one line.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["UsageError", "check_output_path", "check_plot_path", "check_report_path", "check_scheduler",
           "REPORT_SUFFIXES", "SCHEDULER_TIMEOUT"]

#: report file suffixes (``dpaudit.report.writer``)
REPORT_SUFFIXES = (".html", ".htm", ".md", ".markdown")
#: seconds to wait for a Dask scheduler before giving up
SCHEDULER_TIMEOUT = 5.0


class UsageError(ValueError):
    """The request cannot be carried out as given (exit status 2, one line)."""


def check_output_path(path, option: str, suffixes=None, what: str = "file") -> Path:
    """``path`` can be written: its parent directory exists and is writable, it is not a directory,
    an existing file there is writable, and (when ``suffixes`` is given) it ends in one of them.
    Nothing is created."""
    text = os.fspath(path)
    if not str(text).strip():
        raise UsageError(f"{option} must be a file name, got {text!r}")
    p = Path(text).expanduser()
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.exists():
        raise UsageError(f"{option} {text}: directory {str(parent)!r} does not exist (dpaudit does not create it)")
    if not parent.is_dir():
        raise UsageError(f"{option} {text}: {str(parent)!r} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {text}: directory {str(parent)!r} is not writable")
    if p.is_dir():
        raise UsageError(f"{option} {text}: is a directory, expected a {what} name")
    if p.exists() and not os.access(p, os.W_OK):
        raise UsageError(f"{option} {text}: the existing file is not writable")
    if suffixes is not None and p.suffix.lower() not in suffixes:
        raise UsageError(f"{option} {text}: unsupported {what} type {p.suffix or '(none)'!r}; use one of "
                         + ", ".join(suffixes))
    return p


def _matplotlib_formats() -> tuple[str, ...]:
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        raise UsageError("plots need matplotlib, which is not installed: pip install 'dpaudit[plot]'") from None
    return tuple(sorted("." + ext for ext in FigureCanvasBase.get_supported_filetypes()))


def check_plot_path(path, option: str = "--plot") -> Path:
    """A writable path whose suffix matplotlib can save (matplotlib must be installed)."""
    return check_output_path(path, option, _matplotlib_formats(), "image")


def check_report_path(path, option: str = "--report") -> Path:
    """A writable ``.html``/``.md`` path; the report's plots need matplotlib."""
    p = check_output_path(path, option, REPORT_SUFFIXES, "report")
    _matplotlib_formats()
    return p


def check_scheduler(address: str, timeout: float = SCHEDULER_TIMEOUT) -> None:
    """The Dask extra is installed and something accepts TCP connections at ``address``."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise UsageError("--scheduler needs the 'dask' extra: pip install 'dpaudit[dask]'") from None
    text = str(address).strip()
    if not text:
        raise UsageError("--scheduler must be an address such as tcp://host:8786")
    parts = urlsplit(text if "://" in text else "tcp://" + text)
    if parts.scheme not in ("tcp", "tls"):
        return  # other transports (inproc://, ucx://) are left to Dask itself
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        raise UsageError(f"--scheduler {text}: not a valid address (expected tcp://host:port)") from None
    if not host or port is None:
        raise UsageError(f"--scheduler {text}: not a valid address (expected tcp://host:port)")
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as exc:
        reason = "timed out" if isinstance(exc, (socket.timeout, TimeoutError)) else (exc.strerror or str(exc))
        raise UsageError(f"--scheduler {text}: no scheduler answers there ({reason} after at most {timeout:g} s)") from None
