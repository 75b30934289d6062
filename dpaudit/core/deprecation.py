"""Deprecated spellings: one message format, one warning, one keyword-renaming decorator.

dpaudit spells a Poisson sampling rate ``sample_rate`` and the noise standard deviation divided by
the sensitivity ``noise_multiplier`` (Opacus' names) in every Python keyword, CLI flag
(``--sample-rate``, ``--noise-multiplier``) and JSON key. Older spellings keep working for now:
in Python they emit a :class:`DeprecationWarning` whose message names the new spelling
(:func:`warn_deprecated_spelling`), on the command line a one-line notice on stderr.

Every message contains :data:`DEPRECATED_SPELLING` ("deprecated dpaudit spelling"), so a filter
can single them out: the project's pytest configuration turns exactly these warnings into errors
(``pyproject.toml``, ``filterwarnings``), which keeps dpaudit's own code, tests and docs on the
new spellings.
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
import warnings
from pathlib import Path

__all__ = ["DEPRECATED_SPELLING", "deprecated_spelling_message", "warn_deprecated_spelling", "renamed_keywords"]

#: words every deprecation message of a spelling contains (the pytest filter matches them)
DEPRECATED_SPELLING = "deprecated dpaudit spelling"

_PACKAGE_DIR = str(Path(__file__).resolve().parents[1])


def deprecated_spelling_message(old: str, new: str, where: str = "") -> str:
    """``"OLD is a deprecated dpaudit spelling[ in WHERE]; use NEW (same meaning)"``."""
    place = f" in {where}" if where else ""
    return f"{old} is a {DEPRECATED_SPELLING}{place}; use {new} (same meaning; the old spelling will be removed)"


def _caller_stacklevel() -> int:
    """The stack level of the first frame outside the dpaudit package (so the warning points at the
    user's line, however deep inside dpaudit it is raised)."""
    frame: types.FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR) or filename.startswith("<"):
            return level
        frame = frame.f_back
        level += 1
    return level


def warn_deprecated_spelling(old: str, new: str, where: str = "") -> None:
    """Emit the :class:`DeprecationWarning` for the old spelling ``old`` of ``new``, attributed to the
    caller's code."""
    warnings.warn(deprecated_spelling_message(old, new, where), DeprecationWarning, stacklevel=_caller_stacklevel())


def renamed_keywords(**renames: str):
    """Decorator: keyword ``old`` of the decorated function is a deprecated spelling of keyword ``new``
    (``@renamed_keywords(q="sample_rate")``). A call with ``old=`` warns and is passed on as ``new=``;
    giving both is a ``ValueError`` naming them. The signature (and ``help()``) shows the new names
    only."""

    def decorate(fn):
        params = inspect.signature(fn).parameters
        for old, new in renames.items():
            if new not in params:
                raise TypeError(f"{fn.__qualname__} has no keyword {new!r} to rename {old!r} to")

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise ValueError(f"give {new} only ({old} is its deprecated spelling), not both")
                    warn_deprecated_spelling(f"{old}=", f"{new}=", f"{fn.__name__}()")
                    kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        wrapper.deprecated_keywords = dict(renames)  # type: ignore[attr-defined]  # a function attribute: read by introspection
        return wrapper

    return decorate
