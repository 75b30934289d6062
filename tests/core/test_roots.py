"""dpaudit.core.roots: the one bracketed bisection (issue 25, item 3).

The invariant pred(lo) False, pred(hi) True is kept whatever pred does in between; every search
ends (iteration bounds); the directed helpers return the end on the safe side; and no module
outside the audit package writes its own bisection any more.
"""

from __future__ import annotations

import math
import pathlib
import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpaudit
from dpaudit.core.roots import (
    bisect,
    bracket_down,
    bracket_up,
    float_midpoint,
    largest_false,
    smallest_true,
)

FINITE = st.floats(-1e300, 1e300, allow_nan=False, allow_infinity=False)


def _adjacent(lo, hi):
    return math.nextafter(lo, math.inf) == hi


@settings(max_examples=300, deadline=None)
@given(a=FINITE, b=FINITE, root=FINITE)
def test_float_midpoints_reach_adjacent_floats_within_64_halvings(a, b, root):
    lo, hi = min(a, b), max(a, b)
    if not lo < hi:
        return
    root = min(max(root, lo), hi)
    calls = []

    def pred(x):
        calls.append(x)
        return x >= root

    if pred(lo) or not pred(hi):
        return
    calls.clear()
    br = bisect(pred, lo, hi)
    assert not pred(br.lo) and pred(br.hi) and _adjacent(br.lo, br.hi)
    assert len(calls) <= 66  # (plus the two checks above)
    assert br.lo < root <= br.hi


@settings(max_examples=200, deadline=None)
@given(a=FINITE, b=FINITE, seed=st.integers(0, 2**32 - 1), midpoint=st.sampled_from(["float", "arithmetic"]))
def test_invariant_holds_for_any_predicate(a, b, seed, midpoint):
    lo, hi = min(a, b), max(a, b)
    if not lo < hi:
        return
    import random

    rnd = random.Random(seed)
    seen = {}

    def pred(x):  # not monotone at all: a coin per point, remembered
        return seen.setdefault(x, rnd.random() < 0.5)

    seen[lo], seen[hi] = False, True
    br = bisect(pred, lo, hi, max_iter=200)
    assert seen[br.lo] is False and seen[br.hi] is True and br.lo < br.hi


def test_tolerances_and_stop():
    f = lambda x: x * x >= 2.0  # noqa: E731
    br = bisect(f, 0.0, 2.0, midpoint="arithmetic", rtol=1e-6)
    assert br.hi - br.lo <= 1e-6 * br.hi and br.lo < math.sqrt(2.0) <= br.hi
    br = bisect(f, 0.0, 2.0, atol=1e-3)
    assert br.hi - br.lo <= 1e-3
    br = bisect(f, 1.0, 2.0, midpoint="geometric", stop=lambda lo, hi: hi * hi - 2.0 < 1e-9)
    assert 0 <= br.hi * br.hi - 2.0 < 1e-9
    assert smallest_true(f, 0.0, 2.0) == math.nextafter(math.sqrt(2.0), 3.0) or \
        smallest_true(f, 0.0, 2.0) == math.sqrt(2.0)
    assert largest_false(f, 0.0, 2.0) < math.sqrt(2.0)
    # negative brackets and brackets through 0
    assert bisect(lambda x: x >= -3.5, -1e300, 1e300).hi == -3.5
    assert bisect(lambda x: x > 0.0, -1.0, 1.0).hi == 5e-324


def test_max_iter_bounds_the_loop():
    calls = []
    bisect(lambda x: calls.append(x) or x > 0.3, 0.0, 1.0, midpoint="arithmetic", max_iter=7)
    assert len(calls) == 7


@pytest.mark.parametrize("lo, hi, midpoint", [(1.0, 1.0, "float"), (2.0, 1.0, "float"), (0.0, math.inf, "float"),
                                              (math.nan, 1.0, "float"), (0.0, 1.0, "geometric"), (0.0, 1.0, "x")])
def test_bad_brackets_are_refused(lo, hi, midpoint):
    with pytest.raises(ValueError):
        bisect(lambda x: True, lo, hi, midpoint=midpoint)


def test_float_midpoint_is_the_middle_float():
    assert float_midpoint(1.0, 2.0) == 1.5
    assert float_midpoint(-1.0, 1.0) == 0.0
    assert 0.0 < float_midpoint(0.0, 1.0) < 1e-150  # half of the floats in [0, 1] lie below 1e-154


def test_brackets():
    f = lambda x: x >= 1000.0  # noqa: E731
    br = bracket_up(f, 0.0, 1.0)
    assert br.lo == 512.0 and br.hi == 1024.0
    assert bracket_up(f, 0.0, 1.0, limit=100.0) is None
    assert bracket_up(f, 0.0, 1.0, max_steps=5) is None
    assert bracket_up(lambda x: x > 1e308, 0.0, 1.0).hi == sys.float_info.max  # capped at the limit
    assert bracket_down(lambda x: x >= 1e-3, 1.0) == (2.0**-10, 2.0**-9)
    assert bracket_down(lambda x: True, 1.0, limit=1e-6)[0] is None
    assert bracket_down(lambda x: True, 1.0) == (None, 5e-324)  # every positive float passes: the smallest tried
    with pytest.raises(ValueError):
        bracket_up(f, 0.0, 0.0)
    with pytest.raises(ValueError):
        bracket_down(f, -1.0)


# -- one home: no hand-written bisection outside the audit package ----------------------------------------------
_PATTERNS = [
    r"mid\s*=\s*0\.5\s*\*\s*\(\s*lo\s*\+\s*hi\s*\)",
    r"mid\s*=\s*\(\s*lo\s*\+\s*hi\s*\)\s*/\s*2",
    r"mid\s*=\s*math\.sqrt\(\s*lo\s*\)\s*\*\s*math\.sqrt\(\s*hi\s*\)",
    r"mid\s*=\s*math\.sqrt\(\s*lo\s*\*\s*hi\s*\)",
    r"bisect_float",
    r"while not .*<=.*:\n\s+hi \*= 2",
]


def test_no_hand_written_bisection_outside_audit():
    root = pathlib.Path(dpaudit.__file__).parent
    found = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("audit/") or rel == "core/roots.py":
            continue
        text = path.read_text()
        for pat in _PATTERNS:
            for m in re.finditer(pat, text):
                found.append(f"{rel}:{text[:m.start()].count(chr(10)) + 1}: {m.group(0)!r}")
    assert not found, "bisections written by hand (use dpaudit.core.roots):\n" + "\n".join(found)


def test_the_rule_can_fail():
    assert any(re.search(p, "        mid = 0.5 * (lo + hi)\n") for p in _PATTERNS)
    assert any(re.search(p, "    mid = math.sqrt(lo * hi)\n") for p in _PATTERNS)
