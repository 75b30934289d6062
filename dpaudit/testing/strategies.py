"""Hypothesis strategies for privacy parameters, mechanisms and neighbouring datasets.

Every strategy draws values inside the legal range of the public dpaudit interface (docs/api.md):
epsilon >= 0, delta in (0, 1), orders alpha > 1, sampling rate q in [0, 1], sigma > 0.
Parameters that span decades (delta, sigma, q) are drawn log-uniformly, so small values are
exercised as often as large ones. Use them in your own property tests::

    from hypothesis import given
    from dpaudit.testing import strategies as dst

    @given(dst.gaussian_mechanisms(), dst.deltas())
    def test_rdp_is_at_least_zcdp(mech, delta): ...

Requires ``hypothesis`` (``pip install "dpaudit[test]"``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from hypothesis import strategies as st

from dpaudit.accounting.claim import PrivacyClaim
from dpaudit.core.describe import describe_value
from dpaudit.mechanisms import (
    ExponentialMechanism,
    Gaussian,
    Laplace,
    PoissonSampled,
    PureDP,
    SampledWithoutReplacement,
)

__all__ = [
    "log_uniform", "epsilons", "deltas", "orders", "order_lists", "sampling_rates", "sigmas", "sensitivities",
    "neighbouring_relations", "gaussian_mechanisms", "laplace_mechanisms", "pure_dp_mechanisms",
    "exponential_mechanisms", "poisson_sampled_mechanisms", "sampled_without_replacement_mechanisms",
    "base_mechanisms", "mechanisms", "NeighbouringPair", "neighbouring_datasets", "privacy_claims",
]


def _check_range(name, lo, hi, *, strict_lo=False):
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"{name} bounds must be finite, got [{lo}, {hi}]")
    if lo > hi or (strict_lo and lo <= 0):
        raise ValueError(f"{name} bounds must satisfy {'0 < ' if strict_lo else ''}min <= max, got [{lo}, {hi}]")


def log_uniform(min_value: float, max_value: float):
    """Floats in [min_value, max_value] (both > 0) whose logarithm is uniform."""
    _check_range("log_uniform", min_value, max_value, strict_lo=True)
    lo, hi = math.log(min_value), math.log(max_value)
    if lo == hi:
        return st.just(float(min_value))
    return st.floats(lo, hi).map(lambda t: float(min(max(math.exp(t), min_value), max_value)))


def epsilons(min_value: float = 0.01, max_value: float = 10.0):
    """epsilon >= 0 (log-uniform between the bounds; ``min_value=0`` adds exactly 0)."""
    if min_value < 0:
        raise ValueError(f"epsilon min_value must be >= 0, got {min_value}")
    if min_value == 0:
        return st.one_of(st.just(0.0), log_uniform(1e-3, max_value))
    return log_uniform(min_value, max_value)


def deltas(min_value: float = 1e-12, max_value: float = 0.1):
    """delta in the open interval (0, 1), log-uniform."""
    if not (0 < min_value <= max_value < 1):
        raise ValueError(f"delta bounds must satisfy 0 < min <= max < 1, got [{min_value}, {max_value}]")
    return log_uniform(min_value, max_value)


def orders(min_value: float = 1.01, max_value: float = 256.0):
    """A Renyi order alpha > 1 (log-uniform in alpha - 1)."""
    if not 1 < min_value <= max_value:
        raise ValueError(f"order bounds must satisfy 1 < min <= max, got [{min_value}, {max_value}]")
    return log_uniform(min_value - 1, max_value - 1).map(lambda t: 1.0 + t)


def order_lists(min_size: int = 1, max_size: int = 8, **kw):
    """Sorted arrays of distinct orders > 1."""
    return st.lists(orders(**kw), min_size=min_size, max_size=max_size, unique=True).map(
        lambda xs: np.array(sorted(xs)))


def sampling_rates(min_value: float = 1e-4, max_value: float = 1.0):
    """A sampling probability q in (0, 1], log-uniform."""
    if not 0 < min_value <= max_value <= 1:
        raise ValueError(f"q bounds must satisfy 0 < min <= max <= 1, got [{min_value}, {max_value}]")
    return log_uniform(min_value, max_value)


def sigmas(min_value: float = 0.3, max_value: float = 50.0):
    """A noise scale sigma > 0, log-uniform."""
    return log_uniform(min_value, max_value)


def sensitivities(min_value: float = 0.1, max_value: float = 10.0):
    """A sensitivity > 0, log-uniform."""
    return log_uniform(min_value, max_value)


def neighbouring_relations():
    """``"add_remove"`` or ``"replace_one"``."""
    return st.sampled_from(("add_remove", "replace_one"))


def gaussian_mechanisms(sigma=None, sensitivity=None, neighbouring=None):
    """``Gaussian(sigma, sensitivity, neighbouring)``."""

    return st.builds(Gaussian, sigma if sigma is not None else sigmas(),
                     sensitivity if sensitivity is not None else sensitivities(),
                     neighbouring if neighbouring is not None else neighbouring_relations())


def laplace_mechanisms(scale=None, sensitivity=None, neighbouring=None):
    """``Laplace(scale, sensitivity, neighbouring)``."""

    return st.builds(Laplace, scale if scale is not None else sigmas(0.1, 20.0),
                     sensitivity if sensitivity is not None else sensitivities(),
                     neighbouring if neighbouring is not None else neighbouring_relations())


def pure_dp_mechanisms(epsilon=None):
    """``PureDP(epsilon)``."""

    return st.builds(PureDP, epsilon if epsilon is not None else epsilons(0.01, 5.0))


def exponential_mechanisms(epsilon=None):
    """``ExponentialMechanism(epsilon)``."""

    return st.builds(ExponentialMechanism, epsilon if epsilon is not None else epsilons(0.01, 5.0))


def base_mechanisms(neighbouring="add_remove"):
    """One of the unsampled mechanisms (Gaussian, Laplace, PureDP, exponential) for a relation.

    PureDP and the exponential mechanism are add/remove only, so they are drawn only when
    ``neighbouring`` is ``"add_remove"``; ``None`` draws the relation too.
    """
    choices = [gaussian_mechanisms(neighbouring=_rel(neighbouring)), laplace_mechanisms(neighbouring=_rel(neighbouring))]
    if neighbouring in ("add_remove", None):
        choices += [pure_dp_mechanisms(), exponential_mechanisms()]
    return st.one_of(choices)


def _rel(neighbouring):
    return None if neighbouring is None else st.just(neighbouring)


def poisson_sampled_mechanisms(base=None, q=None):
    """``PoissonSampled(base, q)`` with an add/remove Gaussian or Laplace base by default."""

    if base is None:
        base = st.one_of(gaussian_mechanisms(neighbouring=st.just("add_remove")),
                         laplace_mechanisms(neighbouring=st.just("add_remove")))
    return st.builds(PoissonSampled, base, q if q is not None else sampling_rates())


def sampled_without_replacement_mechanisms(base=None, q=None):
    """``SampledWithoutReplacement(base, q)`` (replace-one) with a Gaussian base by default."""

    if base is None:
        base = gaussian_mechanisms(neighbouring=st.just("replace_one"))
    return st.builds(SampledWithoutReplacement, base, q if q is not None else sampling_rates(1e-3, 0.5))


def mechanisms(include_sampled: bool = True):
    """Any of the shipped mechanisms with legal random parameters."""
    choices = [base_mechanisms(None)]
    if include_sampled:
        choices.append(poisson_sampled_mechanisms())
    return st.one_of(choices)


class NeighbouringPair(NamedTuple):
    """Two neighbouring datasets: ``x`` and ``x_prime`` differ in the record at ``index``.

    ``add_remove``: ``x_prime`` is ``x`` with one extra record inserted at ``index``
    (``len(x_prime) == len(x) + 1``). ``replace_one``: same length, row ``index`` differs.
    """

    x: np.ndarray
    x_prime: np.ndarray
    relation: str
    index: int  # type: ignore[assignment]  # shadows tuple.index; the field name is public


def neighbouring_datasets(relation=None, *, min_size: int = 1, max_size: int = 8, dim: int = 1, elements=None):
    """Pairs of small neighbouring datasets (rows are records, shape ``(n, dim)``).

    ``relation``: ``"add_remove"``, ``"replace_one"`` or ``None`` (either). ``elements``: a
    strategy for the entries (default floats in [-1, 1]). For ``replace_one`` the replaced
    record always differs from the original. Draws :class:`NeighbouringPair`.
    """
    if not (relation is None or (isinstance(relation, str) and relation in ("add_remove", "replace_one"))):
        raise ValueError(f"relation must be 'add_remove', 'replace_one' or None, got {describe_value(relation)}")
    if not 0 <= min_size <= max_size or (relation == "replace_one" and max_size < 1):
        raise ValueError(f"sizes must satisfy 0 <= min_size <= max_size (>= 1 for replace_one), "
                         f"got {min_size}, {max_size}")
    if dim < 1:
        raise ValueError(f"dim must be >= 1, got {dim}")
    if elements is None:
        elements = st.floats(-1.0, 1.0, allow_nan=False, allow_subnormal=False)
    return _neighbouring_datasets(relation, min_size, max_size, dim, elements)


@st.composite
def _neighbouring_datasets(draw, relation, min_size, max_size, dim, elements):
    if relation is None:
        relation = draw(neighbouring_relations()) if max_size >= 1 else "add_remove"
    lo = max(min_size, 1) if relation == "replace_one" else min_size
    n = draw(st.integers(lo, max_size))
    row = st.lists(elements, min_size=dim, max_size=dim)
    x = np.array(draw(st.lists(row, min_size=n, max_size=n)), dtype=float).reshape(n, dim)
    new = np.array(draw(row), dtype=float)
    if relation == "add_remove":
        i = draw(st.integers(0, n))
        return NeighbouringPair(x, np.insert(x, i, new, axis=0), relation, i)
    i = draw(st.integers(0, n - 1))
    if np.array_equal(new, x[i]):
        new = new + 1.0
    xp = x.copy()
    xp[i] = new
    return NeighbouringPair(x, xp, relation, i)


def privacy_claims(epsilon=None, delta=None, neighbouring=None):
    """``PrivacyClaim.approx_dp(epsilon, delta)`` single-statement claims."""

    def make(e, d, rel):
        return PrivacyClaim.approx_dp(e, d, neighbouring=rel, description=f"({e:g}, {d:g})-DP")

    return st.builds(make, epsilon if epsilon is not None else epsilons(),
                     delta if delta is not None else deltas(),
                     neighbouring if neighbouring is not None else neighbouring_relations())
