"""pytest plugin: audit settings for :mod:`dpaudit.testing` checks.

Registered through the ``pytest11`` entry point ``dpaudit``, so installing dpaudit enables it.
It adds

* options ``--dpaudit-trials N``, ``--dpaudit-seed S``, ``--dpaudit-confidence C`` (also as ini
  keys ``dpaudit_trials``, ``dpaudit_seed``, ``dpaudit_confidence``);
* the marker ``@pytest.mark.dpaudit(trials=..., seed=..., confidence=...)`` (overrides the
  options for one test);
* the fixture ``dpaudit_config`` (the :class:`~dpaudit.testing._config.AuditConfig` in force);
* short failure output: when a failure comes out of a dpaudit helper (``assert_audit_consistent``,
  ``assert_accountant_sound``), dpaudit's own frames are cut from the traceback, so the report
  shows the line of *your* test and the helper's message (``--fulltrace`` shows everything).

While a test runs, its settings are *active*: ``assert_audit_consistent`` and
``assert_accountant_sound`` read them when their own arguments are ``None``. Unless a seed is
given, each test gets a stable seed derived from its node id, so failures reproduce.

Start-up cost: this module imports only the standard library and ``dpaudit.testing._config``;
numpy, hypothesis and the auditors are imported when a check actually runs.
"""

from __future__ import annotations

import pytest

from dpaudit.testing._config import ACTIVE_CONFIG, DEFAULT_CONFIDENCE, DEFAULT_TRIALS, AuditConfig, seed_from_name

_KEYS = ("trials", "seed", "confidence")


def _positive_int(text):
    try:
        v = int(text)
    except (TypeError, ValueError):
        raise ValueError(f"--dpaudit-trials must be an integer >= 1, got {text!r}") from None
    if v < 1:
        raise ValueError(f"--dpaudit-trials must be an integer >= 1, got {v}")
    return v


def _seed(text):
    try:
        v = int(text)
    except (TypeError, ValueError):
        raise ValueError(f"--dpaudit-seed must be an integer >= 0, got {text!r}") from None
    if v < 0:
        raise ValueError(f"--dpaudit-seed must be an integer >= 0, got {v}")
    return v


def _confidence(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        raise ValueError(f"--dpaudit-confidence must be in (0, 1), got {text!r}") from None
    if not 0.0 < v < 1.0:
        raise ValueError(f"--dpaudit-confidence must be in (0, 1), got {v}")
    return v


_PARSERS = {"trials": _positive_int, "seed": _seed, "confidence": _confidence}


def pytest_addoption(parser):
    group = parser.getgroup("dpaudit", "dpaudit privacy checks (dpaudit.testing)")
    group.addoption("--dpaudit-trials", action="store", default=None, metavar="N",
                    help=f"trials per neighbouring dataset for dpaudit audits (default {DEFAULT_TRIALS}).")
    group.addoption("--dpaudit-seed", action="store", default=None, metavar="S",
                    help="seed of every dpaudit audit (default: a stable hash of each test's node id).")
    group.addoption("--dpaudit-confidence", action="store", default=None, metavar="C",
                    help=f"confidence of dpaudit audits, in (0, 1) (default {DEFAULT_CONFIDENCE}).")
    for key in _KEYS:
        parser.addini(f"dpaudit_{key}", help=f"default dpaudit audit {key} (see --dpaudit-{key})", default=None)


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "dpaudit(trials=None, seed=None, confidence=None): audit settings for dpaudit.testing checks in this test",
    )
    values, sources = {}, []
    for key in _KEYS:
        opt = config.getoption(f"--dpaudit-{key}", default=None)
        where = f"--dpaudit-{key}"
        if opt is None:
            opt = config.getini(f"dpaudit_{key}") or None
            where = f"ini dpaudit_{key}"
        if opt is not None:
            try:
                values[key] = _PARSERS[key](opt)
            except ValueError as exc:
                raise pytest.UsageError(str(exc)) from None
            sources.append(where)
    config._dpaudit_base = AuditConfig(under_pytest=True).merged(**values, source=", ".join(sources) or "defaults")


def _config_for(item) -> AuditConfig:
    base = getattr(item.config, "_dpaudit_base", None) or AuditConfig(under_pytest=True)
    marker = item.get_closest_marker("dpaudit")
    kwargs, sources = {}, [base.source] if base.source != "defaults" else []
    if marker is not None:
        if marker.args:
            raise pytest.UsageError(f"{item.nodeid}: use keywords in @pytest.mark.dpaudit(trials=..., seed=..., "
                                    f"confidence=...), got positional {marker.args!r}")
        unknown = set(marker.kwargs) - set(_KEYS)
        if unknown:
            raise pytest.UsageError(f"{item.nodeid}: unknown @pytest.mark.dpaudit argument(s) {sorted(unknown)}; "
                                    f"allowed: {list(_KEYS)}")
        for key, val in marker.kwargs.items():
            if val is not None:
                try:
                    kwargs[key] = _PARSERS[key](val)
                except ValueError as exc:
                    raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.dpaudit: "
                                            + str(exc).replace(f"--dpaudit-{key}", key)) from None
        if kwargs:
            sources.insert(0, "@pytest.mark.dpaudit")
    cfg = base.merged(**kwargs)
    if cfg.seed is None:
        cfg = cfg.merged(seed=seed_from_name(item.nodeid))
        sources.append("seed from the test id")
    return cfg.merged(source=", ".join(sources) or "defaults")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    token = ACTIVE_CONFIG.set(_config_for(item))
    try:
        yield
    finally:
        ACTIVE_CONFIG.reset(token)


_PACKAGE_DIR = None


def _package_dir():
    global _PACKAGE_DIR
    if _PACKAGE_DIR is None:
        from pathlib import Path

        _PACKAGE_DIR = Path(__file__).resolve().parents[1]
    return _PACKAGE_DIR


def _in_dpaudit(entry, sub: str = "") -> bool:
    try:
        from pathlib import Path

        return Path(str(entry.path)).resolve().is_relative_to(_package_dir() / sub if sub else _package_dir())
    except (OSError, ValueError, TypeError):
        return False


def _cut(traceback):
    """``traceback`` without dpaudit's frames (unchanged if nothing else would remain)."""
    kept = traceback.filter(lambda e: not _in_dpaudit(e))
    return kept if len(kept) else traceback


def hide_dpaudit_frames(item, excinfo) -> bool:
    """When ``excinfo`` went through a ``dpaudit.testing`` helper, make ``item``'s failure report
    leave out dpaudit's frames (pytest's own traceback filter runs first). True if it will."""
    if not any(_in_dpaudit(e, "testing") for e in excinfo.traceback):
        return False
    base = item._traceback_filter  # pytest's filter (cuts at the test function, honours __tracebackhide__)
    item._traceback_filter = lambda exc: _cut(base(exc))
    return True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    if call.excinfo is not None and not item.config.getoption("fulltrace", False) \
            and hasattr(item, "_traceback_filter"):
        try:
            hide_dpaudit_frames(item, call.excinfo)
        except Exception:  # noqa: BLE001 - never let the filter break a report
            pass
    yield


@pytest.fixture
def dpaudit_config(request) -> AuditConfig:
    """The audit settings (trials, seed, confidence) in force for this test."""
    return _config_for(request.node)
