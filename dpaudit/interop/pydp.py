"""Audit PyDP (OpenMined's Python wrapper of Google's differential-privacy library; measured with 1.1.5).

PyDP itself is optional: nothing here imports it at module level, so this module imports without it.

* :func:`mechanism_sampler` turns a numerical mechanism
  (``pydp.algorithms.numerical_mechanisms.LaplaceMechanism``, ``GaussianMechanism``) into
  ``sampler(x, rng, size)``: ``size`` calls of ``mech.add_noise(x)``. On an ``int`` input Google's
  Laplace mechanism adds integer noise (a discrete, geometric-type sampler); on a ``float`` input
  real noise on a granularity grid (Google's "secure noise" rounding);
* :func:`algorithm_sampler` does the same for an aggregation algorithm (``pydp.algorithms.laplacian.
  Count``, ``BoundedSum``, ...; anything with ``quick_result(data)``) on a dataset ``x`` (a list);
  a fresh algorithm object is made for each release (``factory()``) so that no budget accumulates;
* :func:`mechanism_claim` reads the stated ``epsilon`` (and ``delta``) into a
  :class:`~dpaudit.interop.library.LibraryClaim`;
* :func:`audit_pydp` audits a mechanism or algorithm against that claim in one call.

Randomness. PyDP draws from Google's C++ generator (absl's bit generator seeded by the operating
system), which no seed sets: every sampler warns with
:class:`~dpaudit.interop.library.LibraryRNGWarning` and the result records
``library_rng_seeded: False`` (the bound stays valid; the run is not reproducible from the seed).
"""

from __future__ import annotations

import numpy as np

from dpaudit.interop.library import (
    LibraryClaim,
    LibraryRNGWarning,
    audit_library_claim,
    release,
    unseeded_message,
    warn_unseeded,
)

__all__ = ["LibraryRNGWarning", "mechanism_sampler", "algorithm_sampler", "mechanism_claim", "audit_pydp"]


def mechanism_claim(obj) -> LibraryClaim:
    """The ``epsilon`` (and ``delta``) a PyDP mechanism or algorithm states."""
    try:
        eps = float(obj.epsilon)
        delta = float(getattr(obj, "delta", 0.0) or 0.0)
    except (AttributeError, TypeError, ValueError):
        raise ValueError(f"obj must be a PyDP mechanism or algorithm with numeric epsilon (and delta), "
                         f"got {obj!r}") from None
    name = type(obj).__name__
    if delta == 0.0:
        return LibraryClaim.pure(eps, f"PyDP {name}: epsilon {eps:g}")
    return LibraryClaim.approx(eps, delta, f"PyDP {name}: ({eps:g}, {delta:g})")


def _as_array(out):
    try:
        return np.asarray(out, dtype=float)
    except (TypeError, ValueError):
        return out


class _MechanismSampler:
    """Picklable-by-recipe ``sampler(x, rng, size)`` of a PyDP numerical mechanism."""

    def __init__(self, mech):
        if not callable(getattr(mech, "add_noise", None)):
            raise ValueError(f"mech must have an add_noise(value) method (a PyDP numerical mechanism), got {mech!r}")
        self.mech = mech
        self.__name__ = f"pydp[{type(mech).__name__}]"

    def __call__(self, x, rng, size):
        return _as_array([release(self.__name__, self.mech.add_noise, x) for _ in range(int(size))])


def mechanism_sampler(mech):
    """``sampler(x, rng, size)``: ``size`` outputs of ``mech.add_noise(x)`` (warns :class:`LibraryRNGWarning`)."""
    s = _MechanismSampler(mech)
    warn_unseeded("PyDP", s.__name__)
    return s


class _AlgorithmSampler:
    def __init__(self, factory):
        if not callable(factory):
            raise ValueError("factory must be callable as factory() -> a PyDP algorithm (e.g. "
                             "lambda: Count(epsilon=1.0, dtype='int'))")
        probe = factory()
        if not callable(getattr(probe, "quick_result", None)):
            raise ValueError(f"factory() must return a PyDP algorithm with quick_result(data), got {probe!r}")
        self.factory, self.probe = factory, probe
        self.__name__ = f"pydp[{type(probe).__name__}]"

    def __call__(self, x, rng, size):
        return _as_array([release(self.__name__, lambda v: self.factory().quick_result(list(v)), x)
                          for _ in range(int(size))])


def algorithm_sampler(factory):
    """``sampler(x, rng, size)``: ``size`` releases ``factory().quick_result(x)`` on the dataset ``x``."""
    s = _AlgorithmSampler(factory)
    warn_unseeded("PyDP", s.__name__)
    return s


def audit_pydp(mech_or_factory, x, x_prime, **audit_options):
    """Audit a PyDP numerical mechanism (values ``x, x_prime``) or an algorithm factory (datasets ``x, x_prime``)
    against its own stated epsilon (and delta). ``audit_options`` go to :func:`dpaudit.audit.audit_mechanism`.

    The inputs must be neighbours for the claim to apply: values at most the mechanism's
    sensitivity apart, or datasets differing in one record (add/remove: pass
    ``neighbouring="add_remove", claim_neighbouring="add_remove"`` to record it).
    """
    if callable(getattr(mech_or_factory, "add_noise", None)):
        sampler = mechanism_sampler(mech_or_factory)
        claim = mechanism_claim(mech_or_factory)
    else:
        sampler = algorithm_sampler(mech_or_factory)
        claim = mechanism_claim(sampler.probe)
    res = audit_library_claim(sampler, x, x_prime, claim, **audit_options)
    return res.with_details(library={"name": "pydp", "mechanism": sampler.__name__, "claim": claim.to_dict(),
                                     "library_rng_seeded": False,
                                     "warning": unseeded_message("PyDP", sampler.__name__)})
