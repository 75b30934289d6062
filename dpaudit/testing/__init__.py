"""Helpers for checking privacy properties inside your own test suite.

* :mod:`dpaudit.testing.assertions`: :func:`assert_audit_consistent` (an audit must not
  contradict a claimed (epsilon, delta)) and :func:`assert_accountant_sound` (an accountant's
  epsilon(delta) must be consistent, at least the exact value where known, and at least an
  audit's lower bound);
* :mod:`dpaudit.testing.strategies`: Hypothesis strategies for mechanisms, privacy parameters
  and neighbouring datasets (needs ``hypothesis``);
* :mod:`dpaudit.testing.plugin`: a pytest plugin (registered automatically through the
  ``pytest11`` entry point) adding the ``@pytest.mark.dpaudit(trials=..., seed=...,
  confidence=...)`` marker, the ``--dpaudit-trials/--dpaudit-seed/--dpaudit-confidence``
  options and the ``dpaudit_config`` fixture.

Names are loaded lazily: ``import dpaudit.testing`` imports neither hypothesis nor numpy.
"""

from dpaudit._lazy import lazy_exports

_EXPORTS = {
    "assert_audit_consistent": "dpaudit.testing.assertions",
    "assert_accountant_sound": "dpaudit.testing.assertions",
    "exact_epsilon": "dpaudit.testing.assertions",
    "AuditConfig": "dpaudit.testing._config",
    "active_config": "dpaudit.testing._config",
    "use_config": "dpaudit.testing._config",
    "strategies": "dpaudit.testing.strategies",
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
