"""Benchmark: dpaudit's RDPAccountant against dp_accounting's RdpAccountant.

Both accountants compose the same Poisson-subsampled Gaussian steps and convert to epsilon at
the same delta; each row reports epsilon and the best-of-N wall time of the whole job (building
the accountant, composing, converting). dpaudit's per-mechanism curve cache is cleared before
every timed run, so repeated runs do not profit from it.

Cases
-----
* homogeneous: q = 0.01, sigma = 1.1, 1000 steps, delta = 1e-5 (Mironov, Talwar, Zhang 2019 binomial sum; dp_accounting 0.6.0);
* heterogeneous: 500 steps (q=0.01, sigma=1.1) + 500 steps (q=0.02, sigma=2.0)
  + 10 full-batch Gaussian steps (sigma=5.0), delta = 1e-5.

Rows are produced by functions in :data:`ROWS`; a PLD row-provider (``benchmarks/_pld_rows.py``
exposing ``pld_rows() -> list[dict]``) is appended when present, followed by the PLD scaling
table of issue 19: dpaudit's certified [lower, upper] beside prv_accountant's [lower, estimate,
upper] (skipped with a message when prv_accountant is not installed) and dp_accounting's PLD
epsilon for the Poisson-subsampled Gaussian sigma = 0.8, q = 0.001, delta = 1e-5 and
T = 10^3 .. 10^6 compositions, with the seconds each took.

Run from the repository root: ``python benchmarks/accounting.py``.
"""

from __future__ import annotations

import os
import sys
import time
import warnings

REPEATS = 5
DELTA = 1e-5

HOMOGENEOUS = [(0.01, 1.1, 1000)]
HETEROGENEOUS = [(0.01, 1.1, 500), (0.02, 2.0, 500), (1.0, 5.0, 10)]


def _best_time(fn, repeats: int = REPEATS):
    best, value = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t0)
    return value, best


def _ours(steps):
    from dpaudit.accounting import rdp as rdp_mod
    from dpaudit.mechanisms.gaussian import Gaussian
    from dpaudit.mechanisms.subsampled import PoissonSampled

    def job():
        rdp_mod._CURVE_CACHE.clear()
        acc = rdp_mod.RDPAccountant(warn_at_grid_end=False)
        for q, sigma, count in steps:
            mech = Gaussian(sigma) if q == 1.0 else PoissonSampled(Gaussian(sigma), q)
            acc.compose(mech, count=count)
        return acc.epsilon(DELTA)

    return job


def _dp_accounting(steps):
    import dp_accounting as dpa

    def job():
        acc = dpa.rdp.RdpAccountant()
        for q, sigma, count in steps:
            event = dpa.GaussianDpEvent(sigma)
            if q != 1.0:
                event = dpa.PoissonSampledDpEvent(q, event)
            acc.compose(event, count)
        return acc.get_epsilon(DELTA)

    return job


def _pair(case: str, steps):
    """Two rows (ours, dp_accounting) for one composition."""
    eps_ours, t_ours = _best_time(_ours(steps))
    eps_ref, t_ref = _best_time(_dp_accounting(steps))
    return [
        {"case": case, "accountant": "dpaudit RDPAccountant", "epsilon": eps_ours, "seconds": t_ours,
         "ratio": t_ours / t_ref},
        {"case": case, "accountant": "dp_accounting RdpAccountant", "epsilon": eps_ref, "seconds": t_ref,
         "ratio": 1.0},
    ]


def homogeneous_rows():
    return _pair("q=0.01 sigma=1.1 T=1000", HOMOGENEOUS)


def heterogeneous_rows():
    return _pair("500x(0.01,1.1)+500x(0.02,2.0)+10xG(5)", HETEROGENEOUS)


ROWS = [homogeneous_rows, heterogeneous_rows]


def _pld_provider():
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    try:
        from _pld_rows import pld_rows
    except ImportError:
        return None
    return pld_rows


def collect_rows() -> list[dict]:
    rows: list[dict] = []
    for fn in ROWS:
        rows.extend(fn())
    provider = _pld_provider()
    if provider is not None:
        for r in provider():
            rows.extend(_normalise_pld_row(r))
    return rows


def _normalise_pld_row(r: dict) -> list[dict]:
    """Map a ``pld_rows()`` entry (name, ours_eps, ours_s, ref_eps, ref_s[, ours_lower]) to table rows;
    entries already in this table's format pass through."""
    if "ours_eps" not in r:
        return [r]
    ratio = r["ours_s"] / r["ref_s"] if r.get("ref_s") else None
    ours = {"case": r["name"], "accountant": "dpaudit PLDAccountant", "epsilon": r["ours_eps"],
            "seconds": r["ours_s"], "ratio": ratio}
    if "ours_lower" in r:
        ours["accountant"] += f" [lower {r['ours_lower']:.6g}]"
    ref = {"case": r["name"], "accountant": "dp_accounting PLDAccountant", "epsilon": r.get("ref_eps"),
           "seconds": r.get("ref_s"), "ratio": 1.0}
    return [ours, ref]


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return "" if v is None else str(v)


def main() -> int:
    warnings.filterwarnings("ignore")
    import logging

    logging.getLogger("absl").setLevel(logging.ERROR)
    rows = collect_rows()
    header = ["case", "accountant", "epsilon", "seconds", "ratio"]
    table = [[_fmt(r.get(h)) for h in header] for r in rows]
    widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(header)]
    print(f"delta = {DELTA:g}; best of {REPEATS} runs; ratio = time / dp_accounting time (same case)")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    print("  ".join("-" * w for w in widths))
    for t in table:
        print("  ".join(c.ljust(w) for c, w in zip(t, widths)).rstrip())
    scaling = _pld_scaling()
    if scaling is not None:
        print()
        scaling()
    return 0


def _pld_scaling():
    """The PLD interval against prv_accountant for T = 10^3 .. 10^6 (benchmarks/_pld_rows.py)."""
    if _pld_provider() is None:
        return None
    from _pld_rows import fft_error_rows, print_scaling, scaling_rows

    def run():
        print_scaling(scaling_rows())
        print()
        print("FFT power: measured l1 error in double precision (vs long double) and the charged bounds")
        for r in fft_error_rows():
            print(f"T={r['T']:>8} nfft={r['nfft']:>8} measured={r['measured_l1_double']:.2e} "
                  f"bound(double)={r['bound_double']:.2e} bound(long double)={r['bound_long_double']:.2e}")

    return run


if __name__ == "__main__":
    sys.exit(main())
