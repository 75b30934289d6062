"""Re-check a ``dp_accounting`` ledger with dpaudit: DpEvent -> dpaudit mechanisms.

``dp_accounting`` (Google) describes what a training run released as a tree of ``DpEvent``
objects. :func:`from_dp_event` flattens such a tree into ``[(mechanism, count), ...]`` and
:func:`accountant_from_dp_event` composes them into a dpaudit accountant, so an existing ledger
can be re-checked with dpaudit's accountants (RDP with a richer order grid, zCDP, tCDP, PLD) and
audited.

``dp_accounting`` is **not** imported: events are recognised by their class name and read
through their attributes (duck typing), so dpaudit never requires the package.

Event mapping (``dp_accounting`` 0.6.0 attribute names):

=================================================  ============================================
``GaussianDpEvent(noise_multiplier)``              ``Gaussian(sigma=noise_multiplier, 1.0)``
``LaplaceDpEvent(noise_multiplier)``               ``Laplace(scale=noise_multiplier, 1.0)``
``PoissonSampledDpEvent(sampling_probability, e)``  ``PoissonSampled(m(e), q)`` (add/remove)
``SampledWithoutReplacementDpEvent(n, m, e)``      ``SampledWithoutReplacement(m(e), m/n)``
                                                   (replace-one)
``SelfComposedDpEvent(e, count)``                  counts multiplied
``ComposedDpEvent(events)``                        concatenated
``ZCDpEvent(rho, xi)``                             :class:`ZCDPMechanism` (RDP xi + rho*alpha)
``RandomizedResponseDpEvent(p, k)``                ``PureDP(log(1 + k(1-p)/p))``; nothing when
                                                   k = 1 or p = 1 (output independent of the
                                                   input), :class:`NonPrivate` when p = 0 < k - 1
``EpsilonDeltaDpEvent(epsilon, delta)``            ``ApproxDP(epsilon, delta)`` (RDP: delta carried
                                                   additively; PLD: exact pair; zCDP/tCDP refuse;
                                                   delta = 1: :class:`NonPrivate`)
``ExponentialMechanismDpEvent(epsilon)``           ``ExponentialMechanism(epsilon)`` (bounded range),
                                                   charged ``count`` times inside a
                                                   ``SelfComposedDpEvent``
``NoOpDpEvent()``                                  nothing
``NonPrivateDpEvent()``                            :class:`NonPrivate` (no guarantee: inf)
=================================================  ============================================

The last two events are not in dp_accounting 0.6.0 (they appear in later versions and are read
by class name and attributes like the others). A later dp_accounting's RDP accountant charges a
self-composed ``ExponentialMechanismDpEvent`` once whatever its count (count 10 and count 1 both
give 0.2483 at order 2); here ``SelfComposedDpEvent(e, count)`` multiplies the count for every
event, the exponential mechanism included, so a converted ledger is charged count times.

A sampled event needs a single base mechanism: a composition of Gaussians inside it is
collapsed exactly into one Gaussian with sigma = (sum sigma_i^-2)^(-1/2) (a composition of
Gaussian mechanisms on the same query is one Gaussian mechanism; Dong, Roth, Su 2019, Cor. 3.3); a
composition with a non-private step in it (``noise_multiplier == 0``, ``NonPrivateDpEvent``, ...) is
exactly that non-private step (its pair is mutually singular whatever else is released), so the sampled
event is the sampled non-private step, (0, q)-DP; other compositions inside a sampled event are refused.
``ZCDpEvent(0, 0)`` costs nothing. A Gaussian with ``noise_multiplier == 0`` is
non-private and one with ``noise_multiplier == inf`` costs nothing; degenerate events map to
zero cost (sampling probability 0, sample size 0, count 0). Out-of-range parameters raise
ValueError naming the event attribute. Anything else raises
:class:`~dpaudit.core.validation.UnsupportedMechanismError`.
"""

from __future__ import annotations

import math

from dpaudit.accounting.base import ACCOUNTANTS, make_accountant
from dpaudit.core.validation import (
    UnsupportedMechanismError,
    check_count,
    check_neighbouring,
    check_nonnegative,
    check_probability,
)
from dpaudit.mechanisms import Gaussian, PoissonSampled, SampledWithoutReplacement
from dpaudit.mechanisms.nonprivate import NonPrivate
from dpaudit.mechanisms.zcdp import ZCDPMechanism

__all__ = ["from_dp_event", "accountant_from_dp_event", "ZCDPMechanism", "NonPrivate", "ACCOUNTANTS"]



def _name(event) -> str:
    return type(event).__name__


def _attr(event, name):
    try:
        return getattr(event, name)
    except AttributeError:
        raise UnsupportedMechanismError(f"{_name(event)} has no attribute {name!r}; is it a dp_accounting DpEvent?") \
            from None


def _base(event, neighbouring: str):
    """The single dpaudit mechanism of an unsampled, uncomposed event (or None for NoOp)."""
    from dpaudit import mechanisms as M  # lazy package: each class is imported when used

    name = _name(event)
    if name in ("GaussianDpEvent", "LaplaceDpEvent"):
        nm = check_nonnegative("noise_multiplier", _attr(event, "noise_multiplier"), allow_inf=True)
        if nm == 0:
            return NonPrivate(neighbouring)  # no noise: no guarantee
        if math.isinf(nm):
            return _ZERO_COST  # infinite noise: the output carries no information
        cls = M.Gaussian if name == "GaussianDpEvent" else M.Laplace
        return cls(nm, 1.0, neighbouring)
    if name == "ZCDpEvent":
        rho = check_nonnegative("rho", _attr(event, "rho"), allow_inf=True)
        xi = getattr(event, "xi", 0.0)  # dp_accounting's default; None reads as 0 too
        xi = 0.0 if xi is None else check_nonnegative("xi", xi, allow_inf=True)
        if rho == 0.0 and xi == 0.0:
            return _ZERO_COST  # (0, 0)-zCDP: the output law does not depend on the record
        return ZCDPMechanism(rho, xi, neighbouring)
    if name == "RandomizedResponseDpEvent":
        p = check_probability("noise_parameter", _attr(event, "noise_parameter"))
        k = check_count("num_buckets", _attr(event, "num_buckets"), minimum=1)
        if k == 1 or p == 1:
            return _ZERO_COST  # one bucket, or always uniform: the output law is data-independent
        if p == 0:
            return NonPrivate(neighbouring)
        # P[report y | truth x] is 1 - p + p/k if y == x else p/k: ratio 1 + k(1 - p)/p
        return M.PureDP(math.log1p(k * (1.0 - p) / p), neighbouring)
    if name == "EpsilonDeltaDpEvent":
        eps = check_nonnegative("epsilon", _attr(event, "epsilon"), allow_inf=True)
        dl = check_probability("delta", _attr(event, "delta"))
        if math.isinf(eps) or dl == 1.0:
            return NonPrivate(neighbouring)  # (inf, delta)- or (eps, 1)-DP: no guarantee
        if eps == 0.0 and dl == 0.0:
            return _ZERO_COST
        return M.ApproxDP(eps, dl, neighbouring)
    if name == "ExponentialMechanismDpEvent":
        eps = check_nonnegative("epsilon", _attr(event, "epsilon"), allow_inf=True)
        if math.isinf(eps):
            return NonPrivate(neighbouring)
        if eps == 0.0:
            return _ZERO_COST
        return M.ExponentialMechanism(eps, neighbouring)
    if name == "NonPrivateDpEvent":
        return NonPrivate(neighbouring)
    return None


def _collapse_gaussians(pairs):
    """One Gaussian equivalent to the composition of Gaussian mechanisms (sensitivity 1 each); a composition
    with a non-private step in it is that non-private step (its pair is already mutually singular)."""

    if not pairs:
        return None
    if len(pairs) == 1 and pairs[0][1] == 1:
        return pairs[0][0]
    leaky = [m for m, _ in pairs if m.non_private()]
    if leaky:
        return leaky[0]
    if all(type(m).__name__ == "Gaussian" for m, _ in pairs):
        prec = sum(c * (m.sensitivity / m.sigma) ** 2 for m, c in pairs)
        return Gaussian(1.0 / math.sqrt(prec), 1.0, pairs[0][0].neighbouring)
    raise UnsupportedMechanismError(
        "a sampled event must contain a single mechanism (or a composition of Gaussians); got "
        + ", ".join(f"{c} x {m.describe()}" for m, c in pairs))


#: marker for events that cost nothing (not composed: like NoOpDpEvent)
_ZERO_COST = object()


def _walk(event, count: int, neighbouring: str, out: dict):
    name = _name(event)
    if name == "NoOpDpEvent" or count == 0:
        return
    if name == "SelfComposedDpEvent":
        _walk(_attr(event, "event"), count * check_count("count", _attr(event, "count")), neighbouring, out)
        return
    if name == "ComposedDpEvent":
        events = _attr(event, "events")
        if isinstance(events, (str, bytes)) or not hasattr(events, "__iter__"):
            raise TypeError(f"ComposedDpEvent.events must be a sequence of DpEvents, got {events!r}")
        for sub in events:
            _walk(sub, count, neighbouring, out)
        return
    if name == "PoissonSampledDpEvent":
        q = check_probability("sampling_probability", _attr(event, "sampling_probability"))
        inner = _collapse_gaussians(from_dp_event(_attr(event, "event"), neighbouring="add_remove"))
        if inner is None or q == 0:
            return
        if q == 1:
            mech = inner
        else:

            mech = PoissonSampled(inner, q)
        out[mech] = out.get(mech, 0) + count
        return
    if name == "SampledWithoutReplacementDpEvent":
        n = check_count("source_dataset_size", _attr(event, "source_dataset_size"), minimum=1)
        m = check_count("sample_size", _attr(event, "sample_size"))
        if not 0 <= m <= n or n <= 0:
            raise ValueError(f"sample_size must be in [0, source_dataset_size], got {m} of {n}")
        inner = _collapse_gaussians(from_dp_event(_attr(event, "event"), neighbouring="replace_one"))
        if inner is None or m == 0:
            return
        if m == n:
            mech = inner
        else:

            mech = SampledWithoutReplacement(inner, m / n)
        out[mech] = out.get(mech, 0) + count
        return
    mech = _base(event, neighbouring)
    if mech is _ZERO_COST:
        return
    if mech is None:
        raise UnsupportedMechanismError(
            f"{name} is not supported by dpaudit.interop (supported: Gaussian, Laplace, PoissonSampled, "
            "SampledWithoutReplacement, SelfComposed, Composed, ZCDp, RandomizedResponse, EpsilonDelta, "
            "ExponentialMechanism, NoOp, NonPrivate)")
    out[mech] = out.get(mech, 0) + count


def from_dp_event(event, *, neighbouring: str = "add_remove") -> list:
    """Flatten a ``dp_accounting`` DpEvent into ``[(mechanism, count), ...]``.

    Equal mechanisms are merged (their counts added); order of first appearance is kept.
    ``neighbouring`` labels unsampled base mechanisms (dp_accounting events carry no relation;
    its accountants take it as an argument). Sampled-without-replacement events are always
    replace-one and Poisson-sampled events add/remove.
    """
    check_neighbouring("neighbouring", neighbouring)
    out: dict = {}
    _walk(event, 1, neighbouring, out)
    return list(out.items())


def accountant_from_dp_event(event, accountant="rdp", *, neighbouring: str = "add_remove", **options):
    """A dpaudit accountant that has composed every mechanism of ``event``.

    ``accountant`` is a name in :data:`ACCOUNTANTS` (``"rdp"``, ``"zcdp"``, ``"tcdp"``,
    ``"pld"``; ``options`` go to its constructor) or an accountant instance to compose into.
    Raises ``UnsupportedMechanismError`` when the accountant has no guarantee in its notion for
    one of the mechanisms (e.g. a non-private release in a zCDP accountant).
    """
    if isinstance(accountant, str):
        if accountant.lower() not in ACCOUNTANTS:
            raise ValueError(f"accountant must be one of {ACCOUNTANTS} or an accountant object, got {accountant!r}")
        acc = make_accountant(accountant.lower(), **options)
    else:
        if options:
            raise ValueError("options are only accepted with an accountant name")
        acc = accountant
    for mech, count in from_dp_event(event, neighbouring=neighbouring):
        acc.compose(mech, count)
    return acc
