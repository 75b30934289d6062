"""PLD benchmark rows: dpaudit's PLDAccountant against dp_accounting's PLD accountant and
microsoft's prv_accountant on the same events.

* ``pld_rows() -> list[dict]``: a few compositions, with keys name, ours_eps, ours_s, ref_eps,
  ref_s and ours_lower (the lower end of our certified interval); used by
  ``benchmarks/accounting.py``.
* ``scaling_rows(ts) -> list[dict]``: the Poisson-subsampled Gaussian sigma = 0.8, q = 0.001,
  delta = 1e-5 for T compositions (issue 19): our [lower, upper] with its width, prv_accountant's
  [lower, estimate, upper] (eps_error = 0.01, delta_error = delta/1000, as opacus uses it) with its
  width, dp_accounting's pessimistic PLD epsilon, and the seconds each took. prv_accountant and
  dp_accounting are optional: their columns are None (with a message) when not installed.
* ``fft_error_rows()``: the l1 error of the FFT power ``irfft(rfft(p)^k)`` in double precision
  measured against the same computation in long double, beside the charged bound.

Run standalone to print the tables: ``python benchmarks/_pld_rows.py``.
"""

from __future__ import annotations

import logging
import time
import warnings

SIGMA, Q, DELTA = 0.8, 0.001, 1e-5


def _cases():
    import dp_accounting as dpa

    from dpaudit import Gaussian, Laplace, PoissonSampled

    sg = lambda q, s: (PoissonSampled(Gaussian(s), q), dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s)))  # noqa: E731
    return [
        ("q=0.01 sigma=1.1 T=1000 delta=1e-5", [sg(0.01, 1.1) + (1000,)], 1e-5),
        ("q=0.001 sigma=0.8 T=10000 delta=1e-6", [sg(0.001, 0.8) + (10000,)], 1e-6),
        ("q=0.1 sigma=2 T=100 delta=1e-5", [sg(0.1, 2.0) + (100,)], 1e-5),
        ("Laplace b=1 x10 delta=1e-5", [(Laplace(1.0), dpa.LaplaceDpEvent(1.0), 10)], 1e-5),
        ("mixed: sampled Gauss x300 + Laplace(10) x5 + Gauss(30) x10 delta=1e-6",
         [sg(0.01, 1.1) + (300,), (Laplace(10.0), dpa.LaplaceDpEvent(10.0), 5),
          (Gaussian(30.0), dpa.GaussianDpEvent(30.0), 10)], 1e-6),
    ]


def pld_rows() -> list[dict]:
    from dp_accounting.pld import pld_privacy_accountant

    from dpaudit import PLDAccountant

    rows = []
    for name, events, delta in _cases():
        t0 = time.perf_counter()
        acc = PLDAccountant(discretization=1e-4, rdp_fallback=False)
        for mech, _, k in events:
            acc.compose(mech, k)
        ours = acc.epsilon(delta)
        ours_s = time.perf_counter() - t0
        lower = acc.epsilon_interval(delta)[0]
        t0 = time.perf_counter()
        ref = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
        for _, ev, k in events:
            ref.compose(ev, k)
        ref_eps = ref.get_epsilon(delta)
        ref_s = time.perf_counter() - t0
        rows.append({"name": name, "ours_eps": ours, "ours_s": ours_s, "ref_eps": ref_eps, "ref_s": ref_s,
                     "ours_lower": lower})
    return rows


def _ours(t):
    from dpaudit import Gaussian, PLDAccountant, PoissonSampled

    t0 = time.perf_counter()
    acc = PLDAccountant(rdp_fallback=False).compose(PoissonSampled(Gaussian(SIGMA), Q), t)
    lo, up = acc.epsilon_interval(DELTA)
    return lo, up, time.perf_counter() - t0, acc.effective_discretization


def _prv(t):
    try:
        from prv_accountant import PoissonSubsampledGaussianMechanism, PRVAccountant
    except ImportError:
        return None
    t0 = time.perf_counter()
    acc = PRVAccountant(prvs=[PoissonSubsampledGaussianMechanism(Q, SIGMA)], max_self_compositions=[t],
                        eps_error=0.01, delta_error=DELTA / 1000)
    lo, est, up = acc.compute_epsilon(DELTA, [t])
    return lo, est, up, time.perf_counter() - t0


def _dp_accounting(t):
    try:
        import dp_accounting as dpa
        from dp_accounting.pld import pld_privacy_accountant
    except ImportError:
        return None
    t0 = time.perf_counter()
    ref = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    ref.compose(dpa.PoissonSampledDpEvent(Q, dpa.GaussianDpEvent(SIGMA)), t)
    return ref.get_epsilon(DELTA), time.perf_counter() - t0


def scaling_rows(ts=(10**3, 10**4, 10**5, 10**6)) -> list[dict]:
    """One row per T (see the module docstring)."""
    logging.getLogger("absl").setLevel(logging.ERROR)
    rows = []
    for t in ts:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lo, up, s, d = _ours(t)
            prv = _prv(t)
            dpa = _dp_accounting(t)
        row = {"T": t, "ours_lower": lo, "ours_upper": up, "ours_width": up - lo, "ours_s": s, "ours_d": d}
        if prv is not None:
            row.update(prv_lower=prv[0], prv_estimate=prv[1], prv_upper=prv[2], prv_width=prv[2] - prv[0],
                       prv_s=prv[3])
        if dpa is not None:
            row.update(dpa_eps=dpa[0], dpa_s=dpa[1])
        rows.append(row)
    return rows


def fft_error_rows(ts=(10**3, 10**4, 10**5, 10**6)) -> list[dict]:
    """Measured l1 error of the double-precision FFT power against long double, and the bound
    charged for it, on the single-step PLD of the scaling case (REMOVE direction)."""
    import numpy as np
    from scipy import fft as sfft

    from dpaudit.accounting.pld import distribution as D
    from dpaudit.accounting.pld.discretisation import discretise
    from dpaudit.mechanisms.loss_pairs import GaussianPair, SubsampledPair

    pair = SubsampledPair(GaussianPair(1.0 / SIGMA), Q, "remove")
    pld = discretise(pair, 4.8545939466960074e-05, 1e-20, True)
    rows = []
    for k in ts:
        i_lo, i_hi, _, _ = D._chernoff_window(pld, k, 1e-15)
        n = sfft.next_fast_len(max(i_hi - i_lo + 1, pld.p.size), real=True)
        spec = sfft.rfft(pld.p, n)
        with np.errstate(all="ignore"):
            x64 = sfft.irfft(np.exp(k * np.log(np.abs(spec))) * np.exp(1j * np.mod(k * np.angle(spec), 2 * np.pi)), n)
            xld = sfft.irfft(sfft.rfft(pld.p.astype(np.longdouble), n) ** k, n)
        err = float(np.sum(np.abs(x64 - xld.astype(float))))
        bound64 = D._power_charge(np.abs(spec), float(k), n, pld.finite_mass, D._U)
        bound_ld = D._power_charge(np.abs(spec), float(k), n, pld.finite_mass, D._U_LD)
        rows.append({"T": k, "nfft": n, "measured_l1_double": err, "bound_double": bound64,
                     "bound_long_double": bound_ld})
    return rows


def _fmt(v, spec=".6f"):
    return "-" if v is None else format(v, spec)


def print_scaling(rows) -> None:
    have_prv = any("prv_lower" in r for r in rows)
    have_dpa = any("dpa_eps" in r for r in rows)
    print(f"Poisson-subsampled Gaussian sigma={SIGMA}, q={Q}, delta={DELTA:g}: certified intervals")
    if not have_prv:
        print("(prv_accountant is not installed: `pip install prv-accountant` to compare with it)")
    if not have_dpa:
        print("(dp_accounting is not installed: its column is empty)")
    print(f"{'T':>8} | {'ours lower':>10} {'ours upper':>10} {'width':>9} {'s':>6} | {'prv lower':>10} "
          f"{'prv est':>10} {'prv upper':>10} {'width':>9} {'s':>6} | {'dp_acc':>10} {'s':>6}")
    for r in rows:
        print(f"{r['T']:>8} | {r['ours_lower']:10.6f} {r['ours_upper']:10.6f} {r['ours_width']:9.2e} {r['ours_s']:6.2f} | "
              f"{_fmt(r.get('prv_lower')):>10} {_fmt(r.get('prv_estimate')):>10} {_fmt(r.get('prv_upper')):>10} "
              f"{_fmt(r.get('prv_width'), '.2e'):>9} {_fmt(r.get('prv_s'), '.2f'):>6} | "
              f"{_fmt(r.get('dpa_eps')):>10} {_fmt(r.get('dpa_s'), '.2f'):>6}")


def main() -> int:
    rows = pld_rows()
    print(f"{'case':70s} {'ours eps':>12s} {'ours s':>8s} {'dp_acc eps':>12s} {'dp_acc s':>9s} {'ours lower':>12s}")
    for r in rows:
        print(f"{r['name']:70s} {r['ours_eps']:12.7f} {r['ours_s']:8.2f} {r['ref_eps']:12.7f} {r['ref_s']:9.2f} "
              f"{r['ours_lower']:12.7f}")
    print()
    print_scaling(scaling_rows())
    print()
    print("FFT power error (l1) in double precision vs long double, and the charged bounds:")
    for r in fft_error_rows():
        print(f"T={r['T']:>8} nfft={r['nfft']:>8} measured={r['measured_l1_double']:.2e} "
              f"bound(double)={r['bound_double']:.2e} bound(long double)={r['bound_long_double']:.2e}")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
