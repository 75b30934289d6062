"""Audit Tumult Core (Tumult Labs' ``tmlt.core``; measured with 0.20): measurements as dpaudit samplers.

Tumult Core itself is optional: nothing here imports it at module level, so this module imports
without it. Tumult Core 0.20 pins ``numpy<2`` and ``pandas<2`` (and needs pyspark), so it cannot be
installed beside dpaudit's ``test`` extra (numpy 2); it is audited from its own environment
(docs/tumult.md).

* :func:`measurement_sampler` turns a measurement (``tmlt.core.measurements.noise_mechanisms.
  AddLaplaceNoise``, ``AddGeometricNoise``, ``AddGaussianNoise``, ``AddDiscreteGaussianNoise``, ...;
  anything callable on one input) into ``sampler(x, rng, size)``: ``size`` calls of ``meas(x)``;
* :func:`measurement_claim` reads the measurement's ``privacy_function(d_in)`` and its
  ``output_measure`` into a :class:`~dpaudit.interop.library.LibraryClaim`: ``PureDP`` -> epsilon,
  ``ApproxDP`` -> (epsilon, delta), ``RhoZCDP`` -> rho (checked at several deltas);
* :func:`audit_tumult` audits a measurement on ``x, x_prime`` (at distance at most ``d_in``)
  against that claim in one call.

Randomness. Tumult Core draws every random bit from one module-level generator
(``tmlt.core.random.rng``, backed by RDRAND or ``os.urandom``). With ``seed_library_rng=True`` (the
default) the sampler replaces it, for the duration of each batch, by a
``numpy.random.Generator(PCG64)`` seeded from dpaudit's ``rng`` (and restores it afterwards): the
audit is then reproducible from dpaudit's seed, and the noise is the library's own (its exact
inverse-CDF samplers read uniform random bits, which PCG64 provides). If that generator cannot be
found (another version of Tumult Core), or with ``seed_library_rng=False``, a
:class:`~dpaudit.interop.library.LibraryRNGWarning` says the result is not reproducible from the
seed (the bound stays valid).
"""

from __future__ import annotations

import importlib
import os

import numpy as np

from dpaudit.interop.library import (
    ZCDP_DELTAS,
    LibraryClaim,
    LibraryRNGWarning,
    audit_library_claim,
    check_deltas,
    release,
    unseeded_message,
    warn_unseeded,
)

__all__ = ["LibraryRNGWarning", "measurement_sampler", "measurement_claim", "audit_tumult"]

_RNG_MODULE = "tmlt.core.random.rng"


def _rng_module():
    try:
        mod = importlib.import_module(_RNG_MODULE)
    except ImportError:
        return None
    return mod if hasattr(mod, "_core_privacy_prng") and hasattr(mod, "_core_privacy_prng_pid") else None


def measurement_claim(meas, d_in=1, *, deltas=ZCDP_DELTAS) -> LibraryClaim:
    """The guarantee a Tumult measurement states at input distance ``d_in`` (module docstring)."""
    deltas = check_deltas(deltas)
    try:
        name = type(meas.output_measure).__name__
        d_out = meas.privacy_function(d_in)
    except AttributeError:
        raise ValueError(f"meas must be a Tumult Core Measurement (output_measure, privacy_function), "
                         f"got {meas!r}") from None
    except Exception as exc:  # Tumult's typeguard raises its own errors for a d_in of the wrong type
        raise ValueError(f"d_in={d_in!r} is not a distance of the measurement's input metric: {exc}") from None

    def num(v):
        return float(v.to_float(round_up=True)) if hasattr(v, "to_float") else float(v)

    desc = f"Tumult Core {name} at d_in={d_in!r}"
    if name == "PureDP":
        return LibraryClaim.pure(num(d_out), f"{desc}: epsilon {num(d_out):g}")
    if name == "ApproxDP":
        eps, delta = num(d_out[0]), num(d_out[1])
        return LibraryClaim.approx(eps, delta, f"{desc}: ({eps:g}, {delta:g})")
    if name == "RhoZCDP":
        return LibraryClaim.zcdp(num(d_out), deltas, f"{desc}: rho {num(d_out):g}")
    raise ValueError(f"the output measure {name} is not read by dpaudit (supported: PureDP, ApproxDP, RhoZCDP); give "
                     "the claim yourself to dpaudit.audit_mechanism")


class _MeasurementSampler:
    """Picklable ``sampler(x, rng, size)`` of a Tumult measurement (module docstring)."""

    def __init__(self, meas, output, seed_library_rng: bool):
        if not callable(meas):
            raise ValueError(f"meas must be a Tumult Core Measurement (callable), got {meas!r}")
        self.meas, self.output = meas, output
        self.seeded = bool(seed_library_rng) and _rng_module() is not None
        self.__name__ = f"tumult[{type(meas).__name__}]"

    def _draw(self, x, size):
        out = [release(self.__name__, self.meas, x) for _ in range(int(size))]
        return [self.output(o) for o in out] if self.output is not None else out

    def __call__(self, x, rng, size):
        if self.seeded:
            mod = _rng_module()
            old = (mod._core_privacy_prng, mod._core_privacy_prng_pid)
            mod._core_privacy_prng = np.random.Generator(np.random.PCG64(int(rng.integers(0, 2**63))))
            mod._core_privacy_prng_pid = os.getpid()
            try:
                out = self._draw(x, size)
            finally:
                mod._core_privacy_prng, mod._core_privacy_prng_pid = old
        else:
            out = self._draw(x, size)
        try:
            return np.asarray(out, dtype=float)
        except (TypeError, ValueError):
            return out


def measurement_sampler(meas, *, output=None, seed_library_rng: bool = True):
    """``sampler(x, rng, size)``: ``size`` outputs of ``meas(x)`` (module docstring)."""
    if output is not None and not callable(output):
        raise ValueError("output must be callable as output(release) -> released output")
    s = _MeasurementSampler(meas, output, seed_library_rng)
    if not s.seeded:
        warn_unseeded("Tumult Core", s.__name__)
    return s


def audit_tumult(meas, x, x_prime, *, d_in=1, deltas=ZCDP_DELTAS, output=None, seed_library_rng: bool = True,
                 **audit_options):
    """Audit a Tumult Core measurement on ``x, x_prime`` against its own privacy function at ``d_in``.

    ``audit_options`` go to :func:`dpaudit.audit.audit_mechanism`; a zCDP claim is checked at every
    delta of ``deltas`` (Bonferroni; :func:`dpaudit.interop.library.audit_library_claim`).
    """
    claim = measurement_claim(meas, d_in, deltas=deltas)
    sampler = measurement_sampler(meas, output=output, seed_library_rng=seed_library_rng)
    res = audit_library_claim(sampler, x, x_prime, claim, **audit_options)
    return res.with_details(library={"name": "tumult", "mechanism": sampler.__name__, "claim": claim.to_dict(),
                                     "d_in": d_in, "library_rng_seeded": sampler.seeded,
                                     "warning": None if sampler.seeded else unseeded_message("Tumult Core", sampler.__name__)})
