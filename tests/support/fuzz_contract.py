"""The contract every library adapter's fuzz checks (issue 27, item 6: the adapters' own wrapping).

The fuzz files ``tests/interop/test_<adapter>_fuzz.py`` import :func:`check_call` from here. A call to an
adapter either

* returns a valid value: an ``AuditResult`` (``epsilon_lower`` in [0, inf], never NaN; ``violation`` is
  ``epsilon_lower > epsilon_claimed``; the verdict agrees; ``to_dict`` works), a ``LibraryClaim`` (every point's
  epsilon in [0, inf], delta in [0, 1)), a ``PrivacyClaim`` (``epsilon(d)`` in [0, inf] and ``delta(e)`` in
  [0, 1] at a spread of arguments), an accountant (the same queries), an ``(epsilon, delta)`` pair, a
  ``[(mechanism, count), ...]`` ledger with positive integer counts, or an array of finite floats (scores);
* or raises ``ValueError`` / ``TypeError`` whose message names one of the call's arguments (or the library
  object's attribute it read) -- never a bare ``'float' object is not iterable``; a library's own exception
  raised inside a sampler reaches the caller as a ``ChunkError`` that names the sampler.

No warning escapes: every warning is an error inside the call, except the classes a test names as documented
(``LibraryRNGWarning`` where the library's generator cannot be seeded, the accountants' documented notes).
Each test file keeps its default profile fast (:data:`FAST`) and has a deeper one under ``-m slow``
(:data:`DEEP`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from dpaudit.accounting.claim import PrivacyClaim
from dpaudit.audit import AuditResult
from dpaudit.core.runner import ChunkError
from dpaudit.interop.library import LibraryClaim

FAST = settings(max_examples=15, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
DEEP = settings(max_examples=200, deadline=None, derandomize=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

#: values of every legal and illegal form for a numeric parameter
ODD_VALUES = (None, "a", "1.0", b"x", -1.0, -0.0, 0.0, 1e-300, 0.5, 1.0, 2, True, math.nan, math.inf, -math.inf, 1e308,
              [1.0], (), 1 + 1j)
DELTAS = (1e-12, 1e-6, 0.1, 0.5, 0.9, 1 - 1e-12)
EPSILONS = (0.0, 1e-9, 0.5, 1.0, 10.0, 1e3, 1e300)


#: an audit's own options: legal values, and values of every illegal form
LEGAL_OPTIONS = {"trials": (2, 20, 40, 40, 100), "confidence": (1e-12, 0.5, 0.95, 1 - 1e-12),
                 "statistic": ("auto", "value", "empirical-lr")}
ODD_OPTIONS = {"trials": (0, 1, -1, 2.5, None, "10", math.inf), "confidence": (0.0, 1.0, math.nan, "x", None, -0.5),
               "statistic": ("nonsense", None, 3, ())}


def options(legal=None, odd=None):
    """Keyword options for a call: all legal, or all legal but one of an illegal form (half the examples each),
    so that the fuzz reaches real audits as often as refusals (independent odd draws would refuse nearly all)."""
    legal = {**LEGAL_OPTIONS, **(legal or {})}
    odd = {**ODD_OPTIONS, **(odd or {})}
    base = st.fixed_dictionaries({k: st.sampled_from(v) for k, v in legal.items()})
    one_odd = st.sampled_from(sorted(odd)).flatmap(lambda k: st.tuples(st.just(k), st.sampled_from(odd[k])))
    return st.one_of(base, st.builds(lambda d, kv: {**d, kv[0]: kv[1]}, base, one_odd))


def check_audit_result(r) -> None:
    assert isinstance(r, AuditResult), type(r)
    lo = r.epsilon_lower
    assert isinstance(lo, float) and not math.isnan(lo) and 0.0 <= lo <= math.inf, lo
    assert r.violation == (lo > r.epsilon_claimed), (lo, r.epsilon_claimed, r.violation)
    assert r.verdict == ("violation" if r.violation else "consistent" if lo > 0 else "inconclusive"), r.verdict
    r.to_dict()


def check_library_claim(c) -> None:
    assert isinstance(c, LibraryClaim), type(c)
    assert c.points, c
    for eps, d in c.points:
        assert isinstance(eps, float) and not math.isnan(eps) and 0.0 <= eps <= math.inf, c
        assert isinstance(d, float) and 0.0 <= d < 1.0, c
    c.to_dict()


def _query(fn, arg, name):
    """``fn(arg)``, or None when it refuses with a ValueError naming ``name`` (a claim that cannot answer there)."""
    try:
        return fn(arg)
    except ValueError as err:
        assert name in str(err), err
        return None


def check_curve(obj, deltas=DELTAS) -> None:
    """``epsilon(delta)`` in [0, inf] and ``delta(epsilon)`` in [0, 1], each non-increasing (a query may also
    refuse with a ValueError naming its argument)."""
    eps = [e for e in (_query(obj.epsilon, d, "delta") for d in deltas) if e is not None]
    for e in eps:
        assert isinstance(e, float) and not math.isnan(e) and 0.0 <= e <= math.inf, eps
    dls = [obj.delta(e) for e in EPSILONS]
    for d in dls:
        assert isinstance(d, float) and not math.isnan(d) and 0.0 <= d <= 1.0, dls
    assert all(a >= b for a, b in zip(dls, dls[1:])), dls


def check_value(r, deltas=DELTAS) -> None:
    """Whatever an adapter returns, valid for its kind (module docstring)."""
    if isinstance(r, AuditResult):
        check_audit_result(r)
    elif isinstance(r, LibraryClaim):
        check_library_claim(r)
    elif isinstance(r, PrivacyClaim) or (hasattr(r, "epsilon") and hasattr(r, "delta") and callable(r.epsilon)):
        check_curve(r, deltas)
    elif isinstance(r, tuple) and len(r) == 2 and all(isinstance(v, float) for v in r):
        eps, d = r
        assert not math.isnan(eps) and 0.0 <= eps <= math.inf and 0.0 <= d < 1.0, r
    elif callable(r) and str(getattr(r, "__name__", "")).endswith("]"):  # a library's sampler, "lib[mechanism]"
        pass
    elif callable(r) and hasattr(r, "canary_norm"):  # a canary training (OpacusCanaries, JaxCanaries): validated
        assert isinstance(r.m, int) and r.m >= 1 and r.noise_multiplier >= 0.0, vars(r)
        assert math.isfinite(r.max_grad_norm) and r.canary_norm >= r.max_grad_norm > 0.0, vars(r)
    elif isinstance(r, np.ndarray):  # a training's scores, a sampler's outputs of numbers
        assert r.dtype.kind == "f" and np.isfinite(r).all(), r
    elif isinstance(r, list):  # a ledger from from_dp_event
        for mech, count in r:
            assert isinstance(count, int) and count > 0 and hasattr(mech, "describe"), (mech, count)
    else:
        raise AssertionError(f"unexpected return value {r!r}")


def names_one_of(msg: str, names) -> bool:
    return any(n in msg for n in names) and "Traceback" not in msg


def check_call(call, names, *, allowed_warnings: tuple = (), library_errors: tuple = (), deltas=DELTAS):
    """Run ``call()`` with every warning an error (but ``allowed_warnings``); return its value or the error.

    A ``ValueError``/``TypeError`` must name one of ``names``. A ``ChunkError`` (a sampler failed inside the
    audit) must name the sampler, and its cause be a ``ValueError``/``TypeError`` or one of ``library_errors``
    (the library's own refusal of an input it does not take). A claim's curve is queried at ``deltas``."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for w in allowed_warnings:
            warnings.simplefilter("ignore", w)
        try:
            r = call()
        except ChunkError as err:
            cause = err.__cause__
            assert isinstance(cause, (ValueError, TypeError, *library_errors)), (err, cause)
            assert "sampler" in str(err) or "sample" in str(err), err
            return err
        except (ValueError, TypeError) as err:
            assert names_one_of(str(err), names), f"{type(err).__name__}: {err}"
            return err
        check_value(r, deltas)  # the value's own queries (a claim's epsilon(delta), ...) under the same rule
    return r
