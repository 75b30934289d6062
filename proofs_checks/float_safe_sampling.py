"""Float-safe samplers (``dpaudit.mechanisms.float_safe``): the assumption of the fast path, the
post-processing claim, and the numbers behind the choice against the alternatives.

1. The fast path's error analysis takes numpy's ``log`` and ``arcsinh`` to be within 4 ulps (the
   allowance RELATIVE_ALLOWANCE = 2^-44 is 32 times the resulting 2^-49): measured against mpmath
   (60 digits, correctly rounded reference) on the arguments the samplers use.
2. The released value R(v + N) is post-processing of v + N, so its hockey-stick curve lies below the
   exact mechanism's (data processing; Mironov 2017, Prop. 2 for RDP). Checked on coarse grids (noise
   scale about one grid step, shifts and offsets off the grid), where the rounding is visible: the pmf
   of round(f + N) against its shift, summed exactly, against the closed forms (Laplace: delta(e) =
   1 - e^{(e - eps)/2}; Gaussian: Balle & Wang 2018, Thm. 8).
3. The alternatives (docs/floating-point.md):
   * the discrete Laplace DLap(t) at integer shift Delta (Canonne, Kamath, Steinke 2020), the grid
     version of Laplace(1) being t = Delta = 2^20: same pure epsilon, but delta(e) and the RDP lie
     *above* the continuous Laplace's (its maximal loss has probability 1/(1 + e^{-1/t}) > 1/2);
   * the discrete Gaussian N_Z(0, s^2) at integer shift Delta = s (mu = 1; CKS 2020, delta(e) =
     P[Z > A] - e^e P[Z > A + Delta], A = e s^2/Delta - Delta/2): its delta(e) crosses the continuous
     Gaussian's, above it at some e (the excess scales as 1/s^2, the Euler-Maclaurin term of a lattice
     sum with a kink);
   * Mironov's snapping mechanism (2012, Thm. 1, sensitivity 1): (1/lambda + 2^-49 B/lambda)-DP.
"""

from __future__ import annotations

import math
import os
import sys

import mpmath as mp
import numpy as np
from scipy import special, stats

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402

from dpaudit.mechanisms.discrete_laplace import discrete_laplace_rdp  # noqa: E402
from dpaudit.mechanisms.laplace import laplace_rdp  # noqa: E402

mp.mp.dps = 60


def _ulps(computed: np.ndarray, exact) -> float:
    """Largest |computed - exact| in ulps of the exact value (the reference correctly rounded)."""
    worst = 0.0
    for c, e in zip(computed, exact):
        ref = float(e)
        ulp = math.ulp(ref) if ref != 0.0 else 5e-324
        worst = max(worst, float(abs(mp.mpf(float(c)) - e) / ulp))
    return worst


def libm_rows(rows, margins):
    rng = np.random.default_rng(0)
    # log at multiples of 2^-53 over (0, 1) (uniforms), near 1, and tiny; and s in (2^-30, 1)
    u = np.concatenate([np.floor(rng.random(1500) * 2.0 ** 53) * 2.0 ** -53,
                        1.0 - np.arange(1, 300) * 2.0 ** -53, 2.0 ** -rng.uniform(1, 52, 300)])
    u = u[u > 0]
    worst = _ulps(np.log(u), [mp.log(mp.mpf(float(x))) for x in u])
    rows.append(["numpy log on the samplers' arguments (ulps)", 4.0, worst, f"{4.0 - worst:.3g}"])
    margins.append(4.0 - worst)
    x = np.concatenate([rng.normal(size=800) * 10.0 ** rng.uniform(-10, 6, 800), np.geomspace(1e-12, 1e8, 200)])
    worst = _ulps(np.arcsinh(x), [mp.asinh(mp.mpf(float(t))) for t in x])
    rows.append(["numpy arcsinh (ulps)", 4.0, worst, f"{4.0 - worst:.3g}"])
    margins.append(4.0 - worst)


def _delta_pmfs(p, q, e):
    return float(np.sum(np.maximum(p - math.exp(e) * q, 0.0)))


def postprocessing_rows(rows, margins):
    ks = np.arange(-400, 401)
    for name, cdf, delta_exact in (
            ("laplace", lambda x, t: stats.laplace.cdf(x, scale=t),
             lambda e, d, t: max(0.0, 1.0 - math.exp((e - d / t) / 2.0))),
            ("gaussian", lambda x, t: stats.norm.cdf(x, scale=t),
             lambda e, d, t: float(special.ndtr(-e * t / d + d / (2 * t))
                                   - math.exp(e) * special.ndtr(-e * t / d - d / (2 * t))))):
        for t, shift, f in ((1.5, 1.0, 0.0), (0.7, 0.6, 0.3), (2.0, 2.3, 0.8), (1.0, 0.25, 0.5)):
            p = cdf(ks + 0.5 - f, t) - cdf(ks - 0.5 - f, t)
            q = cdf(ks + 0.5 - f - shift, t) - cdf(ks - 0.5 - f - shift, t)
            for e in (0.0, 0.2 * shift / t, 0.6 * shift / t):
                rd = max(_delta_pmfs(p, q, e), _delta_pmfs(q, p, e))
                ex = delta_exact(e, shift, t)
                rows.append([f"{name} t={t} shift={shift} f={f} e={e:.3g}", ex, rd, f"{ex - rd:.3g}"])
                margins.append(ex - rd + 1e-14)  # rounded <= exact (float sums: 1e-14)


def _dlap_delta(t: int, e) -> mp.mpf:
    """delta(e) of DLap(t) against its shift by Delta = t (epsilon = 1), closed-form geometric sums:
    the loss atoms L_k = 1 - 2k/Delta with P-masses 1/(1 + r), c r^k (0 < k < Delta), r^Delta/(1 + r)."""
    d = t
    r = mp.exp(-mp.mpf(1) / t)
    c = (1 - r) / (1 + r)
    kk = min(int(mp.ceil(d * (1 - mp.mpf(e)) / 2)) - 1, d - 1)  # atoms k = 0..kk have L_k > e
    sp, sq = 1 / (1 + r), mp.exp(-1) / (1 + r)  # sum of p_k and of p_k e^{-L_k}
    if kk >= 1:
        rho = r * mp.exp(mp.mpf(2) / d)
        sp += c * r * (1 - r ** kk) / (1 - r)
        sq += c * mp.exp(-1) * rho * (rho ** kk - 1) / (rho - 1)
    return sp - mp.exp(e) * sq


def _dlap_rdp(t: int, a) -> mp.mpf:
    """D_a of DLap(t) at shift t (module docstring of dpaudit.mechanisms.discrete_laplace), in mpmath."""
    eps = 1 / mp.mpf(t)
    r, s = mp.exp(-eps), mp.exp(-(2 * a - 1) * eps)
    geo = s * (1 - s ** (t - 1)) / (1 - s)
    return t * eps + mp.log((1 + s ** t + (1 - r) * geo) / (1 + r)) / (a - 1)


def dlap_rows(rows, margins):
    for t in (16, 2 ** 20):
        grid = [mp.mpf(i) / 200 for i in range(200)]
        diff = [_dlap_delta(t, e) - (1 - mp.exp((e - 1) / 2)) for e in grid]
        hi, lo = max(diff), min(diff)
        rows.append([f"DLap t=Delta={t}: max, min of delta_DLap - delta_Laplace (e in [0, 1))",
                     float(hi), float(lo), f"{float(hi):.3e}"])
        margins += [float(hi), float(lo) + 1e-40]  # above somewhere, never below
        for a in (2, 10):
            a = mp.mpf(a)
            lap = mp.log(a / (2 * a - 1) * mp.exp(a - 1) + (a - 1) / (2 * a - 1) * mp.exp(-a)) / (a - 1)
            margins.append(1e-13 - abs(float(laplace_rdp(1.0, [float(a)])[0]) / float(lap) - 1.0))
            ex = _dlap_rdp(t, a) - lap
            rows.append([f"DLap t=Delta={t}: RDP({float(a):g}) - Laplace's", float(lap), float(lap + ex),
                         f"{float(ex):.3e}"])
            margins.append(float(ex))
        # the float closed form of dpaudit agrees with the mpmath one (both orders)
        fl = discrete_laplace_rdp(1.0 / t, t, np.array([2.0, 10.0]))
        ref = [float(_dlap_rdp(t, mp.mpf(a))) for a in (2, 10)]
        margins.append(1e-12 - max(abs(x - y) / y for x, y in zip(fl, ref)))


def dgauss_rows(rows, margins):
    es = np.linspace(0.02, 3.0, 150)
    for s in (4, 16, 64, 256):
        d = s
        z = np.arange(-60 * s, 60 * s + d + 1, dtype=float)
        logw = -(z / s) ** 2 / 2.0
        logp = logw - special.logsumexp(logw)
        p = np.exp(logp)
        q = np.exp(-((z - d) / s) ** 2 / 2.0 - special.logsumexp(logw))
        diff = []
        for e in es:
            dg = float(np.sum(np.maximum(p - math.exp(e) * q, 0.0)))
            gc = float(special.ndtr(-e + 0.5) - math.exp(e) * special.ndtr(-e - 0.5))
            diff.append(dg - gc)
        hi, lo = max(diff), min(diff)
        rows.append([f"DG sigma=Delta={s}: max, min of delta_DG - delta_G; max * sigma^2",
                     hi, lo, f"{hi * s * s:.3g}"])
        margins.append(hi)  # positive: the discrete Gaussian's delta exceeds the continuous at some e


def snapping_rows(rows, margins):
    for b in (2.0 ** 10, 2.0 ** 20, 2.0 ** 30, 2.0 ** 40):
        eps = 1.0 + 2.0 ** -49 * b
        rows.append([f"snapping lambda=1 B=2^{int(math.log2(b))}: epsilon", 1.0, eps, f"{eps - 1.0:.3g}"])
        margins.append(eps - 1.0)


def main() -> int:
    rows: list = []
    margins: list = []
    libm_rows(rows, margins)
    postprocessing_rows(rows, margins)
    dlap_rows(rows, margins)
    dgauss_rows(rows, margins)
    snapping_rows(rows, margins)
    return report("float-safe samplers: libm assumption, post-processing, alternatives",
                  ["case", "bound / continuous", "measured / alternative", "margin"], rows, margins, tol=0.0)


if __name__ == "__main__":
    sys.exit(main())
