"""Audits of the mechanism libraries people run, and floating-point checks (issue 18).

Run from the repository root: ``nice -n 10 python benchmarks/real_code.py [--trials N] [--fp-trials N]``.
Each library is audited where it is installed (diffprivlib, OpenDP and PyDP come with the ``test``
extra; Tumult Core needs an environment of its own, docs/tumult.md) and listed as skipped otherwise.

Table 1: one row per library mechanism, audited with ``statistic="auto"`` (the attack families of
``dpaudit.audit.attacks.families``, the bit-level precision attack included) against the claim the
library states (a zCDP claim at three deltas, Bonferroni; the row shows the point with the largest
excess). Table 2: :func:`dpaudit.check_floating_point` on every real-valued sampler (library and
textbook numpy) and on dpaudit's discrete samplers.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

import dpaudit
from dpaudit.audit.floating import check_floating_point
from dpaudit.interop.library import LibraryRNGWarning


def _claim_text(claim) -> str:
    if claim.kind == "zcdp":
        return f"rho {claim.parameter:g} (zCDP)"
    if claim.kind == "pure":
        return f"eps {claim.parameter:g}"
    return ", ".join(f"({e:.3g}, {d:g})" for e, d in claim.points)


def library_cases():
    """(library, mechanism, audit(trials, seed) -> AuditResult, fp sampler or None, x, x', fp claim) or a skip."""
    cases, skipped = [], []
    try:
        import diffprivlib as dpl

        from dpaudit.interop.diffprivlib import audit_diffprivlib, mechanism_claim, mechanism_sampler

        for name, mech, x, xp in [
            ("Laplace(eps 1)", dpl.mechanisms.Laplace(epsilon=1.0, sensitivity=1.0), 0.0, 1.0),
            ("GaussianAnalytic(eps 1, delta 1e-5)", dpl.mechanisms.GaussianAnalytic(epsilon=1.0, delta=1e-5,
                                                                                    sensitivity=1.0), 0.0, 1.0),
            ("Geometric(eps 1)", dpl.mechanisms.Geometric(epsilon=1.0, sensitivity=1), 0, 1)]:
            eps, delta = mechanism_claim(mech)
            cases.append(("diffprivlib 0.6.6", name, f"({eps:g}, {delta:g})" if delta else f"eps {eps:g}",
                          lambda t, s, m=mech, a=x, b=xp: audit_diffprivlib(m, a, b, trials=t, seed=s),
                          mechanism_sampler(mech) if isinstance(x, float) else None, x, xp, (eps, delta)))
    except ImportError as exc:
        skipped.append(("diffprivlib", str(exc)))
    try:
        import opendp.prelude as dp

        from dpaudit.interop.opendp import audit_opendp, measurement_claim, measurement_sampler

        dp.enable_features("contrib")
        fl = dict(input_domain=dp.atom_domain(T=float, nan=False), input_metric=dp.absolute_distance(T=float))
        it = dict(input_domain=dp.atom_domain(T=int), input_metric=dp.absolute_distance(T=int))
        for name, meas, x, xp in [("make_laplace(scale 1)", dp.m.make_laplace(scale=1.0, **fl), 0.0, 1.0),
                                  ("make_gaussian(scale 1)", dp.m.make_gaussian(scale=1.0, **fl), 0.0, 1.0),
                                  ("make_geometric(scale 1)", dp.m.make_geometric(scale=1.0, **it), 0, 1),
                                  ("make_randomized_response_bool(0.75)",
                                   dp.m.make_randomized_response_bool(prob=0.75), False, True)]:
            c = measurement_claim(meas, 1.0 if isinstance(x, float) else 1)
            fp = measurement_sampler(meas) if isinstance(x, float) else None
            cases.append((f"OpenDP {dp.__version__ if hasattr(dp, '__version__') else ''}".strip(), name,
                          _claim_text(c), lambda t, s, m=meas, a=x, b=xp: audit_opendp(m, a, b, trials=t, seed=s),
                          fp, x, xp, c.points[1] if len(c.points) > 1 else c.points[0]))
    except ImportError as exc:
        skipped.append(("OpenDP", str(exc)))
    try:
        from pydp.algorithms.laplacian import Count
        from pydp.algorithms.numerical_mechanisms import GaussianMechanism, LaplaceMechanism

        from dpaudit.interop.pydp import audit_pydp, mechanism_sampler

        for name, obj, x, xp, claim in [
            ("LaplaceMechanism(eps 1), float", LaplaceMechanism(epsilon=1.0, sensitivity=1.0), 0.0, 1.0, (1.0, 0.0)),
            ("LaplaceMechanism(eps 1), int", LaplaceMechanism(epsilon=1.0, sensitivity=1.0), 0, 1, (1.0, 0.0)),
            ("GaussianMechanism(eps 1, delta 1e-5)", GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=1.0),
             0.0, 1.0, (1.0, 1e-5)),
            ("Count(eps 1), 5 vs 6 records", lambda: Count(epsilon=1.0, dtype="int"), [1] * 5, [1] * 6, (1.0, 0.0))]:
            fp = mechanism_sampler(obj) if isinstance(x, float) else None
            cases.append(("PyDP 1.1.5", name, f"({claim[0]:g}, {claim[1]:g})" if claim[1] else f"eps {claim[0]:g}",
                          lambda t, s, o=obj, a=x, b=xp: audit_pydp(o, a, b, trials=t, seed=s), fp, x, xp, claim))
    except ImportError as exc:
        skipped.append(("PyDP", str(exc)))
    try:
        from tmlt.core.domains.numpy_domains import NumpyFloatDomain
        from tmlt.core.measurements.noise_mechanisms import (
            AddDiscreteGaussianNoise,
            AddGaussianNoise,
            AddGeometricNoise,
            AddLaplaceNoise,
        )

        from dpaudit.interop.tumult import audit_tumult, measurement_claim, measurement_sampler

        for name, meas, x, xp in [("AddLaplaceNoise(scale 1)", AddLaplaceNoise(NumpyFloatDomain(), scale=1), 0.0, 1.0),
                                  ("AddGaussianNoise(sigma^2 1)", AddGaussianNoise(NumpyFloatDomain(), sigma_squared=1),
                                   0.0, 1.0),
                                  ("AddGeometricNoise(alpha 1)", AddGeometricNoise(alpha=1), 0, 1),
                                  ("AddDiscreteGaussianNoise(sigma^2 1)", AddDiscreteGaussianNoise(sigma_squared=1),
                                   0, 1)]:
            c = measurement_claim(meas)
            fp = measurement_sampler(meas) if isinstance(x, float) else None
            cases.append(("Tumult Core 0.20", name, _claim_text(c),
                          lambda t, s, m=meas, a=x, b=xp: audit_tumult(m, a, b, trials=t, seed=s), fp, x, xp,
                          c.points[1] if len(c.points) > 1 else c.points[0]))
    except ImportError as exc:
        skipped.append(("Tumult Core", f"{exc} (needs numpy<2: docs/tumult.md)"))
    return cases, skipped


def textbook_cases():
    dl, dg = dpaudit.DiscreteLaplace(1.0), dpaudit.DiscreteGaussian(1.0)
    eps_dg = dpaudit.conversions.zcdp_to_dp(dg.rho, 1e-6)
    return [
        ("numpy: x + rng.laplace(0, 1)", lambda x, r, n: x + r.laplace(0.0, 1.0, n), 0.0, 1.0, (1.0, 0.0), None),
        ("numpy: x + rng.laplace(0, 1), 10 vs 11", lambda x, r, n: x + r.laplace(0.0, 1.0, n), 10.0, 11.0,
         (1.0, 0.0), None),
        ("same, numpy-laplace model (scale 1)", lambda x, r, n: x + r.laplace(0.0, 1.0, n), 10.0, 11.0, (1.0, 0.0),
         1.0),
        ("numpy: x + rng.normal(0, 1)", lambda x, r, n: x + r.normal(0.0, 1.0, n), 0.0, 1.0,
         (dpaudit.conversions.zcdp_to_dp(0.5, 1e-6), 1e-6), None),
        ("numpy Laplace snapped to 2^-10", lambda x, r, n: np.round((x + r.laplace(0.0, 1.0, n)) * 1024.0) / 1024.0,
         0.0, 1.0, (1.0, 0.0), None),
        ("dpaudit DiscreteLaplace(1)", lambda x, r, n: dl.sample(x, r, n), 0, 1, (1.0, 0.0), None),
        ("dpaudit DiscreteGaussian(1)", lambda x, r, n: dg.sample(x, r, n), 0, 1, (eps_dg, 1e-6), None),
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=10_000, help="runs per input of each library audit")
    ap.add_argument("--fp-trials", type=int, default=10_000, help="runs per input of each floating-point check")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", LibraryRNGWarning)
    cases, skipped = library_cases()

    print("Library mechanisms, audited against their stated claims (statistic auto; 95% confidence)\n")
    print("| library | mechanism | claim | attack won | certified epsilon >= (at delta) | verdict | trials | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for lib, name, claim, audit, *_ in cases:
        t0 = time.perf_counter()
        r = audit(args.trials, args.seed)
        dt = time.perf_counter() - t0
        fam = (r.details.get("attack") or {}).get("family", "")
        print(f"| {lib} | {name} | {claim} | {fam} | {r.epsilon_lower:.3f} (claim {r.epsilon_claimed:.3g} at "
              f"{r.delta:g}) | {r.verdict} | {args.trials} | {dt:.1f} |")
    for lib, why in skipped:
        print(f"| {lib} | - | - | - | - | skipped: {why} | - | - |")

    print("\nFloating-point checks (dpaudit.check_floating_point: precision attack + reachable-set attack)\n")
    print("| sampler | claim (eps, delta) | output of probability 0 observed | model | certified epsilon >= (precision attack; general audit for integer outputs) "
          "| verdict (certified) | trials | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    rows = [(f"{lib} {name}", fp, x, xp, cl, None) for lib, name, _c, _a, fp, x, xp, cl in cases if fp is not None]
    rows += textbook_cases()
    for name, sampler, x, xp, claim, scale in rows:
        t0 = time.perf_counter()
        r = check_floating_point(sampler, x, xp, claim=claim, trials=args.fp_trials, seed=args.seed, scale=scale)
        dt = time.perf_counter() - t0
        imp = "yes" if r.impossible else "no"
        if r.impossible:
            key = "x_outputs_impossible_under_x_prime" if r.witness["observed_under"] == "x" else \
                "x_prime_outputs_impossible_under_x"
            imp += f" ({r.counts[key]} of the {args.fp_trials} outputs of {r.witness['observed_under']})"
        model = r.model + (" (rejected)" if "rejected" in r.model_note else "")
        pe = r.precision.epsilon_lower
        print(f"| {name} | ({claim[0]:.3g}, {claim[1]:g}) | {imp} | {model} | "
              f"{pe:.3f} | {r.verdict} | {args.fp_trials} "
              f"| {dt:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
