"""PLD benchmark rows: ours vs dp_accounting's PLD accountant on the same events.

``pld_rows() -> list[dict]`` with keys name, ours_eps, ours_s, ref_eps, ref_s (and ours_lower,
the lower end of our certified interval). Run standalone to print a table:
``python benchmarks/_pld_rows.py``.
"""

from __future__ import annotations

import time


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


def main() -> int:
    rows = pld_rows()
    print(f"{'case':70s} {'ours eps':>12s} {'ours s':>8s} {'dp_acc eps':>12s} {'dp_acc s':>9s} {'ours lower':>12s}")
    for r in rows:
        print(f"{r['name']:70s} {r['ours_eps']:12.7f} {r['ours_s']:8.2f} {r['ref_eps']:12.7f} {r['ref_s']:9.2f} "
              f"{r['ours_lower']:12.7f}")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
