"""The active audit settings (trials, seed, confidence) read by the assertion helpers.

Precedence, highest first: an explicit argument of the helper; the ``@pytest.mark.dpaudit``
marker of the running test; the ``--dpaudit-*`` command-line options; the defaults below.
The pytest plugin installs a per-test :class:`AuditConfig` with :func:`use_config`; outside
pytest the defaults apply. Standard library and :mod:`dpaudit.core.defaults` (constants) only:
the plugin imports this at start-up.
"""

from __future__ import annotations

import contextlib
import contextvars
import zlib
from dataclasses import dataclass, replace

__all__ = ["AuditConfig", "active_config", "use_config", "DEFAULT_TRIALS", "DEFAULT_CONFIDENCE",
           "seed_from_name"]

from dpaudit.core.defaults import TESTING_CONFIDENCE as DEFAULT_CONFIDENCE  # noqa: E402 - constants only
from dpaudit.core.defaults import TESTING_TRIALS as DEFAULT_TRIALS  # noqa: E402

# DEFAULT_TRIALS (20,000) and DEFAULT_CONFIDENCE (0.99) differ from an audit's 10,000 / 0.95 on purpose:
# a correct mechanism fails a check with probability <= 1%, and twice the trials buy back the power
# (dpaudit.core.defaults gives the numbers).


@dataclass(frozen=True)
class AuditConfig:
    """Settings of the audits run by :mod:`dpaudit.testing.assertions`.

    ``seed=None`` means fresh randomness on each call; under the pytest plugin the seed
    defaults to a stable hash of the test's node id, so a CI failure reproduces exactly.
    ``source`` records where each value came from (shown in failure messages); ``under_pytest`` is set by the
    plugin, so that a failure says how to re-run it in the words of its context (``--dpaudit-seed N`` under
    pytest, ``seed=N`` outside).
    """

    trials: int = DEFAULT_TRIALS
    seed: int | None = None
    confidence: float = DEFAULT_CONFIDENCE
    source: str = "defaults"
    under_pytest: bool = False

    def merged(self, *, trials=None, seed=None, confidence=None, source=None) -> AuditConfig:
        """A copy with the given (non-None) values replaced."""
        changes = {k: v for k, v in (("trials", trials), ("seed", seed), ("confidence", confidence))
                   if v is not None}
        if source is not None:
            changes["source"] = source
        return replace(self, **changes)


ACTIVE_CONFIG: contextvars.ContextVar[AuditConfig] = contextvars.ContextVar("dpaudit_config", default=AuditConfig())  # noqa: B039 - frozen


def active_config() -> AuditConfig:
    """The settings in force (the plugin's per-test settings, or the defaults)."""
    return ACTIVE_CONFIG.get()


@contextlib.contextmanager
def use_config(config: AuditConfig | None = None, **overrides):
    """Make ``config`` (updated with ``overrides``) the active settings inside the block."""
    base = active_config() if config is None else config
    token = ACTIVE_CONFIG.set(base.merged(**overrides) if overrides else base)
    try:
        yield ACTIVE_CONFIG.get()
    finally:
        ACTIVE_CONFIG.reset(token)


def seed_from_name(name: str) -> int:
    """A stable 32-bit seed derived from a string (e.g. a pytest node id)."""
    return zlib.crc32(name.encode("utf-8"))
