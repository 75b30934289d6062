"""Audit IBM's diffprivlib (Holohan et al. 2019): its mechanisms and tools as dpaudit samplers.

diffprivlib itself is optional: nothing here imports it (its objects are only called), so this
module imports without it.

* :func:`mechanism_sampler` turns a diffprivlib mechanism (``diffprivlib.mechanisms.Laplace``,
  ``GaussianAnalytic``, ``Geometric``, ...; anything with ``randomise(value)``) into
  ``sampler(x, rng, size)``: ``size`` calls of ``randomise(x)``;
* :func:`tool_sampler` does the same for a function of diffprivlib's ``tools`` (``histogram``,
  ``mean``, ...) called on a dataset: ``x`` is the dataset (a dict of keyword arguments such as
  ``{"sample": ..., "weights": ...}``, or the first argument);
* :func:`mechanism_claim` reads the mechanism's stated claim ``(epsilon, delta)``;
* :func:`audit_diffprivlib` audits a mechanism against that claim in one call.

Randomness. diffprivlib draws from its own generator: ``random_state=None`` (its default) is
``secrets.SystemRandom``, which no seed reproduces. Its mechanisms and tools also accept an
integer or a ``numpy.random.RandomState``, so the samplers here give every batch a fresh
``RandomState`` seeded from dpaudit's ``rng``: the audit is then reproducible from dpaudit's seed.
Both generators give uniform doubles, so the audited distribution is the library's. With
``seed_library_rng=False`` (or a mechanism that has no generator to replace) the library's own
generator is used and a :class:`LibraryRNGWarning` says that the result is not reproducible from
the seed (the bound stays valid: it never relies on the seed).

Each tool call gets a fresh ``diffprivlib.BudgetAccountant`` when the tool takes one, so the
library's default accountant does not accumulate one entry per trial.
"""

from __future__ import annotations

import copy
import inspect
import math
import warnings

import numpy as np

from dpaudit.audit.mechanism import audit_mechanism
from dpaudit.interop.library import LibraryRNGWarning, release

__all__ = ["LibraryRNGWarning", "mechanism_sampler", "tool_sampler", "mechanism_claim", "audit_diffprivlib"]


def _library_seed(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 2**32, dtype=np.uint64))


def _warn_unseeded(what: str) -> None:
    warnings.warn(f"{what} draws from diffprivlib's own random generator (secrets.SystemRandom unless a "
                  "random_state was given), which dpaudit's seed cannot set: the audit is not reproducible from "
                  "its seed (the bound stays valid)", LibraryRNGWarning, stacklevel=3)


def mechanism_claim(mechanism) -> tuple[float, float]:
    """The ``(epsilon, delta)`` a diffprivlib mechanism states (its ``epsilon`` and ``delta`` attributes)."""
    try:
        eps, delta = float(mechanism.epsilon), float(getattr(mechanism, "delta", 0.0))
    except (AttributeError, TypeError, ValueError):
        raise ValueError(f"mechanism must be a diffprivlib mechanism with numeric epsilon and delta, "
                         f"got {mechanism!r}") from None
    if not (eps >= 0.0) or math.isnan(eps):
        raise ValueError(f"mechanism.epsilon must be >= 0, got {eps}")
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"mechanism.delta must be in [0, 1), got {delta}")
    return eps, delta


class _MechanismSampler:
    """Picklable ``sampler(x, rng, size)`` of a diffprivlib mechanism (module docstring)."""

    def __init__(self, mechanism, seed_library_rng: bool):
        if not callable(getattr(mechanism, "randomise", None)):
            raise ValueError(f"mechanism must have a randomise(value) method (a diffprivlib mechanism), "
                             f"got {mechanism!r}")
        self.mechanism = mechanism
        self.seeded = bool(seed_library_rng) and hasattr(mechanism, "_rng")
        self.__name__ = f"diffprivlib[{type(mechanism).__name__}]"

    def __call__(self, x, rng, size):
        mech = self.mechanism
        if self.seeded:
            mech = copy.copy(mech)
            mech.random_state = np.random.RandomState(_library_seed(rng))
            mech._rng = mech.random_state  # what diffprivlib's DPMechanism.__init__ sets from random_state
        out = [release(self.__name__, mech.randomise, x) for _ in range(int(size))]
        try:
            return np.asarray(out, dtype=float)
        except (TypeError, ValueError):
            return out  # categorical outputs (Exponential, Binary): the audit reads them as objects


def mechanism_sampler(mechanism, *, seed_library_rng: bool = True):
    """``sampler(x, rng, size)``: ``size`` outputs of ``mechanism.randomise(x)`` (module docstring)."""
    s = _MechanismSampler(mechanism, seed_library_rng)
    if not s.seeded:
        _warn_unseeded(type(mechanism).__name__)
    return s


class _ToolSampler:
    def __init__(self, func, output, kwargs, seed_library_rng: bool):
        self.func, self.output, self.kwargs = func, output, kwargs
        try:
            params: set[str] = set(inspect.signature(func).parameters)
        except (TypeError, ValueError):
            params = set()
        self.seeded = bool(seed_library_rng) and "random_state" in params
        self.accountant = "accountant" in params
        self.__name__ = f"diffprivlib[{getattr(func, '__name__', 'tool')}]"

    def _call(self, x, rng):
        kw = dict(self.kwargs)
        if self.seeded:
            kw["random_state"] = np.random.RandomState(_library_seed(rng))
        if self.accountant:
            from diffprivlib import BudgetAccountant  # noqa: PLC0415 (optional dependency, imported when used)

            kw["accountant"] = BudgetAccountant()
        res = self.func(**x, **kw) if isinstance(x, dict) else self.func(x, **kw)
        return self.output(res) if self.output is not None else res

    def __call__(self, x, rng, size):
        out = [release(self.__name__, lambda v: self._call(v, rng), x) for _ in range(int(size))]
        try:
            return np.asarray(out, dtype=float)
        except (TypeError, ValueError):
            return out


def tool_sampler(func, *, output=None, seed_library_rng: bool = True, **kwargs):
    """``sampler(x, rng, size)`` of a diffprivlib tool (e.g. ``diffprivlib.tools.histogram``).

    ``x`` is the dataset: a dict of the tool's data arguments (``{"sample": s, "weights": w}``) or
    its first argument. ``kwargs`` are fixed arguments (``epsilon=1.0, bins=2, range=(0, 1)``).
    ``output`` maps the tool's return value to the released output (e.g. ``lambda r: r[0]`` for
    ``histogram``, which returns ``(counts, bin_edges)``).
    """
    if not callable(func):
        raise ValueError(f"func must be a diffprivlib tool (callable), got {func!r}")
    if output is not None and not callable(output):
        raise ValueError("output must be callable as output(return value) -> released output")
    s = _ToolSampler(func, output, kwargs, seed_library_rng)
    if not s.seeded:
        _warn_unseeded(getattr(func, "__name__", "the tool"))
    return s


def audit_diffprivlib(mechanism, x, x_prime, *, seed_library_rng: bool = True, **audit_options):
    """Audit a diffprivlib mechanism on the values ``x, x_prime`` against its own ``(epsilon, delta)``.

    ``audit_options`` go to :func:`dpaudit.audit.audit_mechanism` (``trials``, ``seed``,
    ``statistic``, ``neighbouring``, ...); ``epsilon``/``delta`` there override the mechanism's.
    The values must differ by at most the mechanism's ``sensitivity`` for the claim to apply.
    """
    eps, delta = mechanism_claim(mechanism)
    audit_options.setdefault("epsilon", eps)
    audit_options.setdefault("delta", delta)
    res = audit_mechanism(mechanism_sampler(mechanism, seed_library_rng=seed_library_rng), x, x_prime,
                          **audit_options)
    return res.with_details(library={"name": "diffprivlib", "mechanism": type(mechanism).__name__,
                                     "claim": {"epsilon": eps, "delta": delta},
                                     "library_rng_seeded": bool(seed_library_rng and hasattr(mechanism, "_rng"))})
