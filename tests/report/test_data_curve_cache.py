"""The accountant curves of a report are memoised per (accountant, mechanism, steps, delta) (issue 26, item 8: a
dp-sgd report spends most of its time on the PLD curve). Same numbers as composing afresh; a second report on the
same mechanism reuses them; unhashable mechanisms still work."""

from __future__ import annotations

import dataclasses

import dpaudit
from dpaudit.accounting.base import accountant_class
from dpaudit.report import compare_accountants
from dpaudit.report import data as report_data


def _fresh(notion, mechanism, steps, delta):
    cls = accountant_class(notion)
    return [float(cls.quiet().compose(mechanism, t).epsilon(delta)) for t in steps]


def test_cached_curves_equal_fresh_compositions_and_are_reused():
    mech = dpaudit.PoissonSampled(dpaudit.Gaussian(1.3), 0.05)
    steps = [1, 4, 16]
    report_data._accountant_curve_cached.cache_clear()
    first = compare_accountants(mech, steps, delta=1e-5)
    pld = accountant_class("pld").label
    for notion in ("rdp", "zcdp", "pld"):
        assert first["curves"][accountant_class(notion).label] == _fresh(notion, mech, steps, 1e-5)
    misses = report_data._accountant_curve_cached.cache_info().misses
    first["curves"][pld][0] = -1.0  # a caller's change does not reach the cache
    second = compare_accountants(mech, steps, delta=1e-5)
    info = report_data._accountant_curve_cached.cache_info()
    assert info.misses == misses and info.hits >= 3
    assert second["curves"][pld] == _fresh("pld", mech, steps, 1e-5)
    other = compare_accountants(mech, steps, delta=1e-6)  # another delta is another curve
    assert other["curves"][pld] == _fresh("pld", mech, steps, 1e-6) != second["curves"][pld]


@dataclasses.dataclass(eq=True)
class _Unhashable:
    """A mechanism object without a hash: wraps a Gaussian (the accountants dispatch on the class)."""

    sigma: float


def test_an_unhashable_mechanism_is_composed_without_the_cache():
    mech = dpaudit.Gaussian(2.0)
    assert report_data.accountant_curve("rdp", mech, [1, 2], 1e-5) == _fresh("rdp", mech, [1, 2], 1e-5)
    unhashable = _Unhashable(2.0)
    try:
        hash(unhashable)
    except TypeError:
        pass
    else:  # pragma: no cover - dataclass(eq=True) sets __hash__ to None
        raise AssertionError("expected an unhashable object")
    calls = []

    def fake(notion, mechanism, steps, delta):
        calls.append(mechanism)
        return (1.0,) * len(steps)

    real = report_data._accountant_curve
    report_data._accountant_curve = fake  # type: ignore[assignment]
    try:
        assert report_data.accountant_curve("rdp", unhashable, [1, 2], 1e-5) == [1.0, 1.0]
    finally:
        report_data._accountant_curve = real  # type: ignore[assignment]
    assert calls == [unhashable]
