"""Audit OpenDP (the OpenDP Library, Gaboardi et al.; measured with 0.16): measurements as dpaudit samplers.

OpenDP itself is optional: nothing here imports it at module level (a measurement is only called
and its privacy map read), so this module imports without it.

* :func:`measurement_sampler` turns a measurement (``opendp.measurements.make_laplace``,
  ``make_gaussian``, ``make_geometric``, ``make_randomized_response_bool``, ...; anything
  callable on one input) into ``sampler(x, rng, size)``: ``size`` calls of ``meas(x)``;
* :func:`measurement_claim` reads the measurement's privacy map at ``d_in`` into a
  :class:`~dpaudit.interop.library.LibraryClaim`: ``MaxDivergence`` -> epsilon,
  ``Approximate(MaxDivergence)`` -> (epsilon, delta), ``ZeroConcentratedDivergence`` -> rho
  (checked at several deltas), ``SmoothedMaxDivergence`` -> its privacy profile at those deltas;
* :func:`audit_opendp` audits a measurement on ``x, x_prime`` (at distance at most ``d_in``
  under its input metric) against that claim in one call.

Randomness. OpenDP samples from the operating system's cryptographic generator, which no seed
sets: every sampler warns with :class:`~dpaudit.interop.library.LibraryRNGWarning` and the result
records ``library_rng_seeded: False`` (the certified bound stays valid; the run is not reproducible
from dpaudit's seed). OpenDP's noise is sampled exactly and rounded once (its float Laplace and
Gaussian have no floating-point leak of the textbook kind; docs/opendp.md has the measured bounds).
"""

from __future__ import annotations

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

__all__ = ["LibraryRNGWarning", "measurement_sampler", "measurement_claim", "audit_opendp"]


def _measure_name(meas) -> str:
    try:
        return str(meas.output_measure)
    except AttributeError:
        raise ValueError(f"meas must be an OpenDP Measurement (with an output_measure and a privacy map), "
                         f"got {meas!r}") from None


def measurement_claim(meas, d_in=1, *, deltas=ZCDP_DELTAS) -> LibraryClaim:
    """The guarantee a measurement states at input distance ``d_in`` (its privacy map; module docstring)."""
    name = _measure_name(meas)
    deltas = check_deltas(deltas)
    try:
        d_out = meas.map(d_in)
    except Exception as exc:  # OpenDP raises its own OpenDPException for a d_in of the wrong type
        raise ValueError(f"d_in={d_in!r} is not a distance of the measurement's input metric "
                         f"({getattr(meas, 'input_metric', '?')}): {exc}") from None
    desc = f"OpenDP {name} at d_in={d_in!r}"
    if name == "MaxDivergence":
        return LibraryClaim.pure(float(d_out), f"{desc}: epsilon {float(d_out):g}")
    if name == "Approximate(MaxDivergence)":
        eps, delta = d_out
        return LibraryClaim.approx(float(eps), float(delta), f"{desc}: ({float(eps):g}, {float(delta):g})")
    if name == "ZeroConcentratedDivergence":
        return LibraryClaim.zcdp(float(d_out), deltas, f"{desc}: rho {float(d_out):g}")
    if name == "SmoothedMaxDivergence":
        pts = tuple((float(d_out.epsilon(float(d))), float(d)) for d in deltas)
        return LibraryClaim("approx", pts, pts, f"{desc}: privacy profile at delta in {list(deltas)}")
    raise ValueError(f"the output measure {name} is not read by dpaudit (supported: MaxDivergence, "
                     "Approximate(MaxDivergence), ZeroConcentratedDivergence, SmoothedMaxDivergence); give the "
                     "claim yourself to dpaudit.audit_mechanism")


class _MeasurementSampler:
    """Picklable ``sampler(x, rng, size)`` of an OpenDP measurement (module docstring)."""

    def __init__(self, meas, output):
        if not callable(meas):
            raise ValueError(f"meas must be an OpenDP Measurement (callable), got {meas!r}")
        self.meas, self.output = meas, output
        self.__name__ = f"opendp[{_measure_name(meas)}]"

    def __call__(self, x, rng, size):
        out = [release(self.__name__, self.meas, x) for _ in range(int(size))]
        if self.output is not None:
            out = [self.output(o) for o in out]
        try:
            return np.asarray(out, dtype=float)
        except (TypeError, ValueError):
            return out  # categorical outputs: the audit reads them as objects


def measurement_sampler(meas, *, output=None):
    """``sampler(x, rng, size)``: ``size`` outputs of ``meas(x)`` (``output`` maps each; module docstring).

    Warns :class:`LibraryRNGWarning`: OpenDP's generator cannot be seeded.
    """
    if output is not None and not callable(output):
        raise ValueError("output must be callable as output(release) -> released output")
    s = _MeasurementSampler(meas, output)
    warn_unseeded("OpenDP", s.__name__)
    return s


def audit_opendp(meas, x, x_prime, *, d_in=1, deltas=ZCDP_DELTAS, output=None, **audit_options):
    """Audit an OpenDP measurement on ``x, x_prime`` against its own privacy map at ``d_in``.

    ``x`` and ``x_prime`` must be at distance at most ``d_in`` under the measurement's input
    metric for the claim to apply. ``audit_options`` go to :func:`dpaudit.audit.audit_mechanism`
    (``trials``, ``seed``, ``statistic``, ``confidence``, ...). A zCDP claim is checked at every
    delta of ``deltas`` (Bonferroni; :func:`dpaudit.interop.library.audit_library_claim`).
    """
    claim = measurement_claim(meas, d_in, deltas=deltas)
    sampler = measurement_sampler(meas, output=output)
    res = audit_library_claim(sampler, x, x_prime, claim, **audit_options)
    return res.with_details(library={"name": "opendp", "mechanism": sampler.__name__, "claim": claim.to_dict(),
                                     "d_in": d_in, "library_rng_seeded": False,
                                     "warning": unseeded_message("OpenDP", sampler.__name__)})
