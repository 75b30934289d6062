"""Representative numbers of dpaudit, as JSON, and the difference between two snapshots.

    python benchmarks/numbers_snapshot.py > new.json                # the numbers of this checkout
    python benchmarks/numbers_snapshot.py --diff old.json new.json  # what changed, and which way

The snapshot covers the accountants (RDP, zCDP, tCDP, PLD and the exact closed form) on a dozen
mechanisms and compositions, the conversions, calibration (calibrate_sigma / calibrate_laplace /
calibrate_discrete_laplace under each accountant) and the seed-paper bounds (langevin_rdp,
rgm_epsilon, ptr_distance, dp_agd_budget, the sparse-gradient calibrations) at fixed arguments.
It runs on older checkouts too (PYTHONPATH=old): a number an older version cannot compute is
recorded as null (``"error: ..."`` when it raised).

Every entry records which way is tighter: ``"down"`` for upper bounds and calibrated noise (a
smaller epsilon, delta or sigma is tighter), ``"up"`` for lower bounds and budgets (a larger rho, a
larger lower end), ``"none"`` for values without a direction. ``--diff`` prints every changed
value with its relative change and whether it moved towards "tighter" (which must be justified:
still valid) or "looser" (the safe direction for a bound).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings


def _compute():
    import numpy as np

    import dpaudit as d
    from dpaudit import conversions as C
    from dpaudit.bounds import (
        dp_agd_budget,
        langevin_rdp,
        output_perturbation_calibration,
        projection_mechanism_calibration,
        ptr_distance,
        rgm_epsilon,
    )
    from dpaudit.mechanisms import (
        ApproxDP,
        DiscreteGaussian,
        DiscreteLaplace,
        ExponentialMechanism,
        Gaussian,
        Laplace,
        PoissonSampled,
        PureDP,
        SampledWithoutReplacement,
    )

    out = {}

    def put(key, fn, tighter):
        t0 = time.time()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = fn()
            value = None if value is None else float(value)
        except Exception as exc:  # noqa: BLE001 - an old checkout may not have the feature
            value = f"error: {type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}"
        out[key] = {"value": value, "tighter": tighter, "seconds": round(time.time() - t0, 3)}
        print(f"{key}: {value}", file=sys.stderr)

    def exact(mech, count, delta):
        try:
            acc = d.make_accountant("exact", quiet=True)
        except ValueError:  # an older checkout: the testing helper
            from dpaudit.testing import exact_epsilon

            return exact_epsilon(mech, delta, count)
        return acc.compose(mech, count).epsilon(delta)

    compositions = {
        "gaussian(1)x1": [(Gaussian(1.0), 1)],
        "gaussian(20)x1000": [(Gaussian(20.0), 1000)],
        "gaussian(0.8,sens2)x7": [(Gaussian(0.8, 2.0), 7)],
        "poisson(gaussian(1.1),0.01)x1000": [(PoissonSampled(Gaussian(1.1), 0.01), 1000)],
        "laplace(1)x10": [(Laplace(1.0), 10)],
        "laplace(2)x1": [(Laplace(2.0), 1)],
        "poisson(laplace(0.5),0.1)x20": [(PoissonSampled(Laplace(0.5), 0.1), 20)],
        "pure(0.8)x5": [(PureDP(0.8), 5)],
        "em(1)+em(2)": [(ExponentialMechanism(1.0), 1), (ExponentialMechanism(2.0), 1)],
        "approx(0.5,1e-7)x3+gaussian(2)x10": [(ApproxDP(0.5, 1e-7), 3), (Gaussian(2.0), 10)],
        "gaussian(1)+approx(0,0.01)": [(Gaussian(1.0), 1), (ApproxDP(0.0, 0.01), 1)],
        "wor(gaussian(1.1,sens2),0.01)x100": [(SampledWithoutReplacement(Gaussian(1.1, 2.0, "replace_one"), 0.01), 100)],
        "dlaplace(2)x5": [(DiscreteLaplace(2.0), 5)],
        "dgaussian(1.5)x3": [(DiscreteGaussian(1.5), 3)],
    }
    deltas = {"gaussian(1)+approx(0,0.01)": 0.02, "em(1)+em(2)": 1e-12}
    for name, steps in compositions.items():
        delta = deltas.get(name, 1e-5)
        for acc_name in ("rdp", "zcdp", "tcdp", "pld"):
            def run(acc_name=acc_name, steps=steps, delta=delta):
                acc = d.make_accountant(acc_name, quiet=True)
                for mech, count in steps:
                    acc.compose(mech, count)
                return acc.epsilon(delta)

            put(f"accountant/{acc_name}/{name}/epsilon({delta:g})", run, "down")
        if len(steps) == 1:
            put(f"accountant/exact/{name}/epsilon({delta:g})", lambda s=steps, dl=delta: exact(s[0][0], s[0][1], dl),
                "none")
        put(f"accountant/pld-lower/{name}/epsilon({delta:g})",
            lambda s=steps, dl=delta: _pld_lower(d, s, dl), "up")
        put(f"accountant/rdp/{name}/delta(1)", lambda s=steps: _acc(d, "rdp", s).delta(1.0), "down")

    # conversions
    put("conversions/zcdp_to_dp(0.5,1e-5,cks)", lambda: C.zcdp_to_dp(0.5, 1e-5), "down")
    put("conversions/zcdp_to_dp(0.5,1e-5,bs)", lambda: C.zcdp_to_dp(0.5, 1e-5, "bs"), "down")
    put("conversions/zcdp_delta(0.5,3)", lambda: C.zcdp_delta(0.5, 3.0), "down")
    put("conversions/dp_to_zcdp(1,1e-5,cks)", lambda: C.dp_to_zcdp(1.0, 1e-5), "up")
    put("conversions/dp_to_zcdp(1,1e-5,bs)", lambda: C.dp_to_zcdp(1.0, 1e-5, "bs"), "up")
    put("conversions/dp_to_zcdp(0.01,1e-10,cks)", lambda: C.dp_to_zcdp(0.01, 1e-10), "up")
    orders = np.array([1.5, 2.0, 4.0, 16.0, 64.0])
    put("conversions/rdp_to_dp(gaussian-curve,1e-5)", lambda: C.rdp_to_dp(orders, orders / 2.0, 1e-5)[0], "down")
    put("conversions/tcdp_to_dp(0.1,5,1e-6)", lambda: C.tcdp_to_dp(0.1, 5.0, 1e-6), "down")
    put("conversions/gaussian_delta(1,1)", lambda: C.gaussian_delta(1.0, 1.0), "down")
    put("conversions/gaussian_epsilon(1,1e-5)", lambda: C.gaussian_epsilon(1.0, 1e-5), "down")
    put("conversions/gaussian_epsilon(0.30398,0.9)", lambda: C.gaussian_epsilon(0.30398, 0.9), "down")
    put("conversions/gdp_mu(1,1e-5)", lambda: C.gdp_mu(1.0, 1e-5), "up")
    put("conversions/gdp_epsilon(0.5,1e-6)", lambda: C.gdp_epsilon(0.5, 1e-6), "down")
    put("accounting/unequal_gaussian_epsilon(1e-5;0,1,1,1.3)",
        lambda: d.unequal_gaussian_epsilon(1e-5, 0.0, 1.0, 1.0, 1.3), "down")

    # calibration
    for acc_name in ("rdp", "zcdp", "tcdp", "pld", "exact"):
        put(f"calibration/sigma/{acc_name}/(1,1e-5,steps=10)",
            lambda a=acc_name: d.calibrate_sigma(1.0, 1e-5, steps=10, accountant=a), "down")
        put(f"calibration/sigma/{acc_name}/(1e-5,0.9)", lambda a=acc_name: d.calibrate_sigma(1e-5, 0.9, accountant=a),
            "down")
    put("calibration/sigma/rdp/(1,1e-5,q=0.01,steps=1000)",
        lambda: d.calibrate_sigma(1.0, 1e-5, sample_rate=0.01, steps=1000, accountant="rdp"), "down")
    for acc_name in ("rdp", "zcdp", "tcdp", "pld", "pure"):
        put(f"calibration/laplace/{acc_name}/(1,1e-5,steps=10)",
            lambda a=acc_name: d.calibrate_laplace(1.0, 1e-5, steps=10, accountant=a), "down")
        if acc_name != "pld":
            put(f"calibration/discrete_laplace/{acc_name}/(1,1e-5,steps=10)",
                lambda a=acc_name: d.calibrate_discrete_laplace(1.0, 1e-5, steps=10, accountant=a), "down")

    # seed-paper bounds
    put("bounds/langevin_rdp(2;S=1,lam=0.1,eta=0.1,sigma=1,n=100,K=200)",
        lambda: langevin_rdp(2.0, sensitivity=1.0, strong_convexity=0.1, step_size=0.1, sigma=1.0, n=100, steps=200),
        "down")
    put("bounds/rgm_epsilon(1e-5;A=1,B=0.1,gamma=10,dim=10,steps=20)",
        lambda: rgm_epsilon(1e-5, A=1.0, B=0.1, gamma=10.0, dim=10, steps=20), "down")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    put("bounds/ptr_distance(200x5,threshold=0.1)", lambda: ptr_distance(X, 0.1), "up")
    put("bounds/dp_agd_budget(1,1e-5)", lambda: dp_agd_budget(1.0, 1e-5), "up")
    put("bounds/dp_agd_budget(0.1,1e-8)", lambda: dp_agd_budget(0.1, 1e-8), "up")
    put("bounds/projection_mechanism_calibration(analytic).sigma",
        lambda: projection_mechanism_calibration(1.0, 5, 1000, 2.0, 1e-5, calibration="analytic").scale, "down")
    put("bounds/output_perturbation_calibration(analytic).sigma",
        lambda: output_perturbation_calibration(1.0, 1000, 0.1, 1.0, 1e-6, calibration="analytic").scale, "down")
    put("mechanisms/repeat_and_select.tnb_gamma(5,1)", lambda: _tnb_gamma(5.0, 1.0), "none")
    put("optimizers/rgm_gd.calibrate_gamma(5;alpha=2,steps=40,A=1,B=0.01,dim=10)",
        lambda: _rgm_gamma(), "down")
    return out


def _acc(d, name, steps):
    acc = d.make_accountant(name, quiet=True)
    for mech, count in steps:
        acc.compose(mech, count)
    return acc


def _pld_lower(d, steps, delta):
    return _acc(d, "pld", steps).epsilon_interval(delta)[0]


def _tnb_gamma(mean, shape):
    from dpaudit.mechanisms.repeat_and_select import tnb_gamma

    return tnb_gamma(mean, shape)


def _rgm_gamma():
    from dpaudit.optimizers.rgm_gd import calibrate_gamma

    return calibrate_gamma(5.0, alpha=2.0, steps=40, A=1.0, B=0.01, dim=10)


def _diff(old_path: str, new_path: str) -> int:
    with open(old_path) as fh:
        old = json.load(fh)
    with open(new_path) as fh:
        new = json.load(fh)
    changed = tighter = looser = 0
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key, {}).get("value"), new.get(key, {}).get("value")
        way = (new.get(key) or old.get(key))["tighter"]
        if a == b:
            continue
        changed += 1
        if not isinstance(a, float) or not isinstance(b, float):
            print(f"{key}\n    {a!r} -> {b!r}")
            continue
        if a == b or (math.isnan(a) and math.isnan(b)):
            continue
        rel = (b - a) / abs(a) if a not in (0.0,) and math.isfinite(a) else math.inf
        if way == "none":
            verdict = "(no direction)"
        elif (b < a) == (way == "down"):
            verdict = "TIGHTER (must be still valid)"
            tighter += 1
        else:
            verdict = "looser (the safe direction)"
            looser += 1
        print(f"{key}\n    {a!r} -> {b!r}   relative change {rel:+.3e}   {verdict}")
    print(f"\n{changed} of {len(set(old) | set(new))} values changed: {tighter} tighter, {looser} looser")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="Without --diff: print the snapshot of this checkout as JSON on stdout "
                                            "(progress on stderr).")
    parser.add_argument("--diff", nargs=2, metavar=("OLD", "NEW"), help="compare two snapshots (JSON files)")
    args = parser.parse_args(argv)
    if args.diff:
        return _diff(*args.diff)
    json.dump(_compute(), sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
