"""Discrete privacy loss distributions (PLDs): composition and hockey-stick queries.

A discrete PLD on the grid ``{k * d}`` is a vector of masses ``p[i]`` at losses
``(lo + i) * d`` plus a mass ``inf`` at loss ``+inf``. For a pair (P, Q) with privacy loss
``L = log(dP/dQ)`` distributed as ``omega`` under P, the hockey-stick divergence is

    delta(epsilon) = inf + sum_{L_i > epsilon} p_i (1 - exp(epsilon - L_i))         (1)

(Sommer, Meiser, Mohammadi 2019, "Privacy loss classes", Lemma 5). The composition of mechanisms is the convolution of their PLDs
(ibid., Thm. 1), computed here by FFT.

Two kinds of discrete PLD are carried and every approximation is charged in the direction that
keeps them valid:

* **pessimistic** (``pessimistic=True``): its curve (1) is >= the true one at every epsilon.
  Mass dropped at the right tail, mass the FFT may have aliased (Chernoff bounds) and the
  floating-point error bounds of the FFTs are added to ``inf`` (a constant added to the curve);
  mass dropped at the left tail is moved up to the first kept bin. Total mass may exceed one;
  (1) is monotone in each mass, so the bound survives further convolutions.
* **optimistic** (``pessimistic=False``): its curve minus ``slack`` is <= the true one at every
  epsilon. Left-tail mass is dropped, right-tail mass is moved down to the last kept bin (both
  only lower the curve), and the aliasing and floating-point charges go to ``slack``, which is
  subtracted from every delta. Composition keeps this: with the identity
  ``H_{A x B}(x) = E_A[H_B(x e^{-L_A})]`` (any non-negative measures) a hybrid argument gives
  ``H'_{A x B} <= H_{A x B} + s_A + s_B * total(A')``, so slacks add (totals are kept <= 1).

Floating point. The FFT's errors are bounded with the standard componentwise model
``|fl(F p)_j - (F p)_j| <= c u log2(N) |p|_1`` (Higham 2002, Sec. 24.1) and Parseval (the l1
norm of an output error is at most the l2 norm of the spectrum error): :func:`_conv_charge`
for a convolution and :func:`_power_charge` for a k-th power, whose error grows like k u.
These rest on that model (not on a proof for the particular FFT library) and are charged, not
ignored; for many compositions the power is taken in extended precision (80-bit long double on
x86), which makes the charge ~2000 times smaller. Measured errors are 50-700 times below the
charges (``benchmarks/_pld_rows.py``).

k-fold self-composition uses one FFT power with the output window chosen by Chernoff bounds on
the discrete masses (Koskela, Jaelkoe, Honkela 2020, "Computing tight differential privacy
guarantees using FFT", AISTATS 2020, Sec. 5), and every allocation is sized
before it is made and refused above :data:`MAX_BINS`.

The accountant's compositions are kept as spectra (:func:`spectral_compose`,
:class:`SpectralPLD`): the product over events of the factors' DFT powers on one Chernoff window,
taken only on the frequencies where its certified bound exceeds 1e-40 (a composition of many
steps is smooth, so they are few; the others are charged at their bound), and queried by
Parseval in O(kept frequencies). Sums of products (the binomial blocks of the optimistic side)
are materialised by :func:`poly_compose`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import fft as sfft

__all__ = [
    "DiscretePLD",
    "SpectralPLD",
    "spectral_compose",
    "MAX_BINS",
    "PLDTooLargeError",
    "compose",
    "self_compose",
    "delta_for_epsilon",
    "epsilon_for_delta",
]

#: largest number of bins of any array (FFT buffers included): 2**24 float64 = 128 MiB, and the
#: peak of one FFT composition (input, spectrum, output) stays well under 1 GB
MAX_BINS = 2**24

_U = np.finfo(float).eps
#: relative allowance for the summation error of (1) (pairwise summation of nonnegative terms)
_SUM_REL = 1e-12
#: constant of the componentwise FFT error model c u log2(N) (Higham, "Accuracy and stability of
#: numerical algorithms", 2nd ed., Sec. 24.1, with a margin for the twiddle factors)
_FFT_C = 7.0
#: extended precision used for the k-th power of a spectrum (80-bit on x86; double elsewhere)
_LD = np.longdouble
_U_LD = float(np.finfo(np.longdouble).eps)
#: compositions from which the power is taken in extended precision
_EXT_STEPS = 100
#: largest k * unit roundoff of an optimistic FFT power (k <= 8.4e6 in long double)
_OPT_POWER_KU = 2.0**-40



class PLDTooLargeError(ValueError):
    """A discrete PLD would need more than :data:`MAX_BINS` bins (``needed`` and ``limit``: the
    bins it needed and the budget it exceeded, when known)."""

    needed: int | None = None
    limit: int | None = None


class PLDPowerRangeError(PLDTooLargeError):
    """An optimistic k-fold power with k beyond the range of its error bound (compose fewer steps)."""


def check_size(n: int, what: str, d: float, limit: int | None = None) -> None:
    if limit is not None and n > limit:
        exc = PLDTooLargeError(f"{what} needs {n} bins at discretization {d:g} (the accountant's "
                               f"max_bins is {limit})")
        exc.needed, exc.limit = int(n), int(limit)
        raise exc
    if n > MAX_BINS:
        exc = PLDTooLargeError(
            f"{what} needs {n} bins at discretization {d:g} (limit {MAX_BINS} bins, about 1 GB of "
            f"working memory); use a coarser discretization, e.g. PLDAccountant(discretization="
            f"{d * 2 ** math.ceil(math.log2(n / MAX_BINS)):g})"
        )
        exc.needed, exc.limit = int(n), MAX_BINS
        raise exc


@dataclass
class DiscretePLD:
    """Masses ``p`` at losses ``(lo + i) * d``, ``inf`` at ``+inf``; see the module docstring."""

    d: float
    lo: int
    p: np.ndarray
    inf: float
    pessimistic: bool
    slack: float = 0.0
    #: optimistic PLDs: a lower bound on the Q-mass at loss -inf of the pair they stand for
    #: (1 - the slope of its curve at 0; used when a composed PLD is coarsened)
    minf: float = 0.0
    #: (cache of :func:`_mgf_data`: the masses it was formed from and its result)
    _mgf: tuple | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        # grid indices are int64 in numpy: a composition whose losses leave that range (counts
        # near 2^53 of a step with a wide loss range) is beyond the PLD's reach, like too many bins
        if abs(int(self.lo)) + int(np.size(self.p)) >= 2**62:
            raise PLDTooLargeError(f"grid indices near {int(self.lo):.3g} exceed the int64 range at "
                                   f"discretization {self.d:g}")

    @property
    def losses(self) -> np.ndarray:
        return (self.lo + np.arange(self.p.size)) * self.d

    @property
    def finite_mass(self) -> float:
        return float(np.sum(self.p))

    @property
    def total_mass(self) -> float:
        return self.finite_mass + self.inf

    @classmethod
    def identity(cls, d: float, pessimistic: bool) -> DiscretePLD:
        """The PLD of a mechanism that releases nothing: all mass at loss 0."""
        return cls(d=d, lo=0, p=np.ones(1), inf=0.0, pessimistic=pessimistic)


# ------------------------------------------------------------------------------------------------
# clean-up after an FFT: clip the noise floor (its size is within the charged error)


def _clip_negative(x: np.ndarray) -> np.ndarray:
    """Set the negative entries left by FFT round-off to 0 (their size is part of the l1
    error bound charged by the caller, since the exact values are non-negative)."""
    np.maximum(x, 0.0, out=x)
    return x


def _conv_charge(a: np.ndarray, b: np.ndarray, nfft: int) -> float:
    """Bound on the l1 error of ``irfft(rfft(a) rfft(b))`` (an *estimate* resting on the standard
    componentwise FFT error model |fl(F a)_j - (F a)_j| <= c u log2(N) |a|_1, Higham 2002,
    Sec. 24.1). By Parseval the l1 norm of the output error is at most the l2 norm of the
    spectrum error: |dA B|_2 + |A dB|_2 <= c u log2 N (|a|_1 |B|_2 + |b|_1 |A|_2), with
    |A|_2 = sqrt(N) |a|_2; the product and the inverse transform add c u log2 N |AB|_2."""
    lg = math.log2(max(nfft, 2))
    a1, b1 = float(np.sum(np.abs(a))), float(np.sum(np.abs(b)))
    a2 = math.sqrt(nfft) * float(np.sqrt(np.dot(a, a)))
    b2 = math.sqrt(nfft) * float(np.sqrt(np.dot(b, b)))
    return _U * _FFT_C * lg * (a1 * b2 + b1 * a2 + min(a1 * b2, b1 * a2)) * 1.01


def _trim_tails(pld: DiscretePLD, tau: float) -> DiscretePLD:
    """Drop leading/trailing masses of total at most ``tau/2`` each, charged the safe way."""
    p = pld.p
    if p.size <= 1 or tau <= 0:
        return pld
    half = 0.5 * tau
    c = np.cumsum(p)
    i0 = int(np.searchsorted(c, half, side="right"))  # p[:i0] has mass <= half
    rc = np.cumsum(p[::-1])
    j0 = int(np.searchsorted(rc, half, side="right"))  # last j0 entries have mass <= half
    i0 = min(i0, p.size - 1)
    j0 = min(j0, p.size - 1 - i0)
    if i0 == 0 and j0 == 0:
        return pld
    left = float(c[i0 - 1]) if i0 > 0 else 0.0
    right = float(rc[j0 - 1]) if j0 > 0 else 0.0
    q = p[i0 : p.size - j0].copy()
    inf = pld.inf
    if pld.pessimistic:
        q[0] += left  # left tail moved up: losses only increase
        inf += right  # right tail to +inf
    else:
        q[-1] += right  # right tail moved down: losses only decrease
        # left tail dropped (moved to -inf): delta only decreases
    return DiscretePLD(pld.d, pld.lo + i0, q, inf, pld.pessimistic, pld.slack, pld.minf)


# ------------------------------------------------------------------------------------------------
# composition


def compose(a: DiscretePLD, b: DiscretePLD, tail_mass: float) -> DiscretePLD:
    """Convolution of two discrete PLDs on the same grid, then tail truncation.

    Masses of the product pair: finite part ``a.p * b.p`` (linear convolution by FFT);
    infinite part ``tot_a * tot_b - fin_a * fin_b`` (any factor at +inf). Slack adds up
    (``slack_a * tot_b + slack_b * tot_a``).
    """
    if a.d != b.d or a.pessimistic != b.pessimistic:
        raise ValueError("compose: PLDs must share the discretization and the estimate type")
    n = a.p.size + b.p.size - 1
    check_size(n, "the composed PLD", a.d)
    if min(a.p.size, b.p.size) <= 64:
        out = np.convolve(a.p, b.p)
        np.maximum(out, 0.0, out=out)
        # direct sums of non-negative products: relative error at most min(n_a, n_b) u
        rel = (min(a.p.size, b.p.size) + 2) * _U
        out *= (1.0 + rel) if a.pessimistic else (1.0 - rel)
        charge = 0.0
    else:
        nfft = sfft.next_fast_len(n, real=True)
        check_size(nfft, "the FFT buffer of a composition", a.d)
        out = _clip_negative(sfft.irfft(sfft.rfft(a.p, nfft) * sfft.rfft(b.p, nfft), nfft)[:n])
        charge = _conv_charge(a.p, b.p, nfft)
    fa, fb = a.finite_mass, b.finite_mass
    ta = fa + a.inf
    # mass at +inf: any factor at +inf (no cancellation: inf_a tot_b + fin_a inf_b)
    inf = a.inf * (fb + b.inf) + fa * b.inf
    # hybrid argument (module docstring): H'_ab <= H_ab + s_a + s_b * total(a')
    slack = a.slack + b.slack * max(ta, 1.0)
    if a.pessimistic:
        inf = inf * (1.0 + 4.0 * _U) + charge
    else:
        inf = inf * (1.0 - 4.0 * _U)
        slack += charge
    minf = (1.0 - (1.0 - a.minf) * (1.0 - b.minf)) * (1.0 - 4.0 * _U)
    res = DiscretePLD(a.d, a.lo + b.lo, out, inf, a.pessimistic, slack, minf)
    return _trim_tails(res, tail_mass)


#: a factor's masses are grouped into at most this many blocks to find the tilt of a Chernoff
#: bound (the bound itself is then evaluated on the exact masses)
_TILT_BLOCKS = 2048


def _mgf_data(pld: DiscretePLD):
    """(losses, log masses) of the nonzero finite masses of ``pld`` and a blocked summary (block
    masses at their mean loss) used to locate the best tilt; cached on the object."""
    cached = getattr(pld, "_mgf", None)
    if cached is not None and cached[0] is pld.p:
        return cached[1]
    p = pld.p
    nz = p > 0
    losses = pld.losses[nz]
    with np.errstate(divide="ignore"):
        logp = np.log(p[nz])
    if losses.size:
        pv = p[nz]
        nb = min(_TILT_BLOCKS, losses.size)
        edges = np.linspace(0, losses.size, nb + 1).astype(np.int64)
        bm = np.add.reduceat(pv, edges[:-1])
        bl = np.add.reduceat(pv * losses, edges[:-1]) / bm
        center = float(np.dot(pv, losses) / np.sum(pv))
        block = (bl - center, np.log(bm), center)
    else:
        block = None
    data = (losses, logp, block)
    pld._mgf = (pld.p, data)
    return data


def _log_mgf_exact(losses: np.ndarray, logp: np.ndarray, t: float) -> float:
    """log sum_i p_i exp(t L_i) (log space, no overflow)."""
    x = logp + t * losses
    m = float(np.max(x))
    return m + math.log(float(np.sum(np.exp(x - m))))


def _tilt_terms(block, t: float):
    """(m, m', m'') of the blocked log-MGF at t (losses centred)."""
    bl, lbm, _ = block
    x = lbm + t * bl
    m = float(np.max(x))
    w = np.exp(x - m)
    s0 = float(np.sum(w))
    mean = float(np.dot(w, bl)) / s0
    var = max(float(np.dot(w, (bl - mean) ** 2)) / s0, 0.0)
    return m + math.log(s0), mean, var


def _best_tilt(factors, log_t: float, sign: float) -> float | None:
    """Approximate minimiser t > 0 of (sum_e n_e m_e(sign t) + log_t)/t on the blocked masses
    (``None``: the minimum is at t = inf, i.e. the bound is the support's end). Newton steps on
    h(t) = t sum n m' - sum n m - log_t (increasing in t) inside a bisection bracket; any t gives
    a valid bound, so this only affects how tight the window is."""
    blocks = [(blk[0] * sign, blk[1], blk[2] * sign, n) for blk, n in factors]

    def h(t):
        val, dh = -log_t, 0.0
        for bl, lbm, c, n in blocks:
            m, mp, var = _tilt_terms((bl, lbm, c), t)
            val += n * (t * mp - m)
            dh += n * t * var
        return val, dh

    var0 = sum(n * _tilt_terms((bl, lbm, c), 0.0)[2] for bl, lbm, c, n in blocks)
    t = math.sqrt(2.0 * log_t / var0) if var0 > 0 else 1.0
    lo, hi = 0.0, math.inf
    for _ in range(60):
        v, dv = h(t)
        if v > 0:
            hi = t
            break
        lo = t
        t *= 4.0
        if t > 1e300:
            return None
    else:
        return None
    for _ in range(40):
        v, dv = h(t)
        if abs(v) <= 1e-3 * log_t:
            break
        if v > 0:
            hi = t
        else:
            lo = t
        nt = t - v / dv if dv > 0 else math.nan
        t = nt if lo < nt < hi else 0.5 * (lo + hi)
        if hi - lo <= 1e-6 * hi:
            break
    return t


def _joint_window(factors, tail_mass: float) -> tuple[int, int, float, float]:
    """Index window [i_lo, i_hi] of the composition of ``n_e`` copies of each PLD in ``factors``
    ([(pld, n_e)]) outside of which the finite mass is at most ``tail_mass/2`` on each side
    (Chernoff: mass{S > a} <= exp(sum_e n_e m_e(t) - t a) for t > 0, m_e the log-MGF of the
    finite masses of factor e (Koskela, Jaelkoe, Honkela 2020, Sec. 5), and symmetrically),
    clipped to the support; returns bounds on the mass outside the window actually achieved
    (0 on a side where the window is the whole support). The tilt t is located on a blocked
    summary of the masses and the bound evaluated on the exact ones."""
    full_lo = full_hi = 0
    data = []
    for pld, n in factors:
        full_lo += int(n) * pld.lo
        full_hi += int(n) * (pld.lo + pld.p.size - 1)
        losses, logp, block = _mgf_data(pld)
        if losses.size == 0:
            continue
        data.append((losses, logp, block, float(n)))
    if not data:
        return full_lo, full_lo, 0.0, 0.0
    d = factors[0][0].d
    log_t = math.log(2.0 / tail_mass)
    bounds = []
    for sign in (1.0, -1.0):
        t = _best_tilt([(blk, n) for _, _, blk, n in data], log_t, sign)
        if t is None or not t > 0:
            bounds.append(math.inf)
            continue
        tot = log_t
        for losses, logp, _, n in data:
            tot += n * _log_mgf_exact(sign * losses, logp, t)
        bounds.append(tot / t)
    a_hi, a_lo = bounds[0], -bounds[1]
    i_hi = min(full_hi, int(math.ceil(a_hi / d))) if math.isfinite(a_hi) else full_hi
    i_lo = max(full_lo, int(math.floor(a_lo / d))) if math.isfinite(a_lo) else full_lo
    if i_lo > i_hi:  # pragma: no cover - the Chernoff thresholds bracket the mean
        i_lo, i_hi = full_lo, full_hi
    # mass{S >= a} <= tail_mass/2 for a >= a_hi, and S > i_hi d means S >= a_hi
    b_right = 0.0 if i_hi >= full_hi else 0.5 * tail_mass
    b_left = 0.0 if i_lo <= full_lo else 0.5 * tail_mass
    return i_lo, i_hi, b_left, b_right


def chernoff_window(pld: DiscretePLD, k: float, tail_mass: float) -> tuple[int, int, float, float]:
    """:func:`_joint_window` of the k-fold composition of one PLD."""
    return _joint_window([(pld, k)], tail_mass)


def _log_mgf(logp: np.ndarray, losses: np.ndarray, t) -> np.ndarray:
    """log sum_i p_i exp(t L_i) for each t (log-space, no overflow; vectorised over t)."""
    t = np.atleast_1d(np.asarray(t, dtype=float))
    out = np.empty(t.size)
    step = max(1, (1 << 21) // max(losses.size, 1))  # (at most 16 MB per temporary)
    for j in range(0, t.size, step):
        x = logp[None, :] + t[j:j + step, None] * losses[None, :]
        m = np.max(x, axis=1)
        out[j:j + step] = m + np.log(np.sum(np.exp(x - m[:, None]), axis=1))
    return out


def _best_bound(logp, losses, k: float, log_t: float, sign: float, scale: float) -> float:
    """Chernoff threshold min_{t>0} (k m(sign t) + log_t)/t (sign=+1: right tail, the threshold
    a with mass{S > a} <= exp(-log_t)); sign=-1 gives -max over the left tail. A coarse
    log-grid of t followed by a local refinement; any t gives a valid bound."""
    def vals(ts):
        return (k * _log_mgf(logp, losses, sign * ts) + log_t) / ts

    grid = np.logspace(-2.0, 3.0, 11) / scale
    v = vals(grid)
    j = int(np.argmin(v))
    fine = np.geomspace(grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)], 7)
    return float(min(np.min(v), np.min(vals(fine))))


def grid_window(pld: DiscretePLD, k: float, tail_mass: float) -> tuple[int, int, float, float]:
    """The Chernoff window of :func:`chernoff_window` with the tilt taken as the best of a fixed
    log-grid (18 tilts per side): used only to estimate the width of a composition when the
    grid spacing is chosen (the grid spacings chosen stay those of earlier versions).

    Index window [i_lo, i_hi] of the k-fold composition outside of which the finite mass is
    at most ``tail_mass/2`` on each side (Chernoff: mass{S > a} <= exp(k m(t) - t a) for
    t > 0, m the log-MGF of the finite masses, and symmetrically), clipped to the support.
    Returns the bounds on the mass outside the window actually achieved (0 when the window is
    the whole support)."""
    p = pld.p
    ki = int(k)
    nz = p > 0
    losses = pld.losses[nz]
    logp = np.log(p[nz])
    full_lo, full_hi = ki * pld.lo, ki * (pld.lo + p.size - 1)
    if losses.size == 0:
        return full_lo, full_lo, 0.0, 0.0
    fin = float(np.sum(p))
    mean = float(np.dot(p[nz], losses)) / fin
    var = float(np.dot(p[nz], (losses - mean) ** 2)) / fin
    scale = math.sqrt(k * var) + pld.d
    log_t = math.log(2.0 / tail_mass)
    # masses below e^-40 of the largest are lumped (at the largest loss for the right tail, at
    # the smallest for the left one): the moment generating functions only grow, so the
    # thresholds stay valid, and far fewer terms are summed
    small = logp < float(np.max(logp)) - 40.0
    if np.count_nonzero(small) > 4096:
        lump = float(np.logaddexp.reduce(logp[small]))
        keep_l, keep_p = losses[~small], logp[~small]
        lp2 = np.append(keep_p, lump)
        a_hi = _best_bound(lp2, np.append(keep_l, losses[-1]), k, log_t, 1.0, scale)
        a_lo = -_best_bound(lp2, -np.append(keep_l, losses[0]), k, log_t, 1.0, scale)
    else:
        a_hi = _best_bound(logp, losses, k, log_t, 1.0, scale)
        a_lo = -_best_bound(logp, -losses, k, log_t, 1.0, scale)
    i_hi = min(full_hi, int(math.ceil(a_hi / pld.d)) if math.isfinite(a_hi) else full_hi)
    i_lo = max(full_lo, int(math.floor(a_lo / pld.d)) if math.isfinite(a_lo) else full_lo)
    if i_lo > i_hi:  # pragma: no cover - the Chernoff thresholds bracket the mean
        i_lo, i_hi = full_lo, full_hi
    # mass{S >= a} <= tail_mass/2 for a >= a_hi, and S > i_hi d means S >= a_hi
    b_right = 0.0 if i_hi >= full_hi else 0.5 * tail_mass
    b_left = 0.0 if i_lo <= full_lo else 0.5 * tail_mass
    return i_lo, i_hi, b_left, b_right


def _inf_power(fin: float, inf: float, k: float) -> float:
    """(fin + inf)^k - fin^k (mass with at least one factor at +inf), without cancellation."""
    if inf <= 0.0:
        return 0.0
    if fin <= 0.0:
        return (fin + inf) ** k if inf < 1.0 or k < 1e300 else (1.0 if inf == 1.0 else math.inf)
    a = k * math.log(fin + inf)
    r = -k * math.log1p(inf / fin)  # log(fin^k / tot^k) <= 0
    if a > 700.0:
        return math.inf
    return math.exp(a) * -math.expm1(r)


def _power_charge(spec_abs: np.ndarray, k: float, nfft: int, mass: float, unit: float = _U) -> float:
    """Bound on the l1 error of ``irfft(rfft(p)^k)`` from floating point (an *estimate*: it rests
    on the standard componentwise error model of the FFT, |fl(F p)_j - (F p)_j| <=
    c u log2(N) |p|_1, Higham 2002, Sec. 24.1).

    A relative error eta_j of spectrum component j becomes k eta_j after the k-th power (plus
    the errors of the power itself, log and angle: k u (|log|S_j|| + 8)), an absolute error
    E_j = k |S_j|^(k-1) u (c log2 N |p|_1 + |log|S_j|| + 8). By Parseval the inverse transform
    maps a spectrum error E to an output error of l2 norm |E|_2 / sqrt(N) (full Hermitian
    spectrum: twice the half stored by rfft), so its l1 norm is at most |E|_2; the inverse
    transform adds its own c u log2 N |S^k|_2 in the same way. Measured against a long-double
    computation the actual l1 error is 50-700 times smaller (benchmarks/_pld_rows.py).
    """
    lg = math.log2(max(nfft, 2))
    with np.errstate(divide="ignore", under="ignore", invalid="ignore", over="ignore"):
        la = np.log(spec_abs)
        pk1 = np.exp(np.where(np.isfinite(la), (k - 1.0) * la, -np.inf))
        pk = pk1 * spec_abs
        err = k * pk1 * (_FFT_C * lg * max(mass, 1.0) + np.abs(np.nan_to_num(la, neginf=0.0)) + 8.0)
    e2 = math.sqrt(2.0 * float(np.sum(err * err)))
    own = _FFT_C * lg * math.sqrt(2.0 * float(np.sum(pk * pk)))
    return unit * (e2 + own) * 1.01


# ------------------------------------------------------------------------------------------------
# powers of spectra on the significant frequencies only

#: a frequency whose certified bound |X_j| <= B_j on the composed spectrum is below this is not
#: computed (X_j is taken as 0 and B_j charged)
_DROP = 1e-40
_LOG_DROP = math.log(_DROP)


def _powered(factors, nfft: int, exts):
    """The product over ``factors`` ([(pld, n_e)]) of rfft(p_e, nfft)^(n_e) on the frequencies
    where it can matter.

    Returns ``(idx, X, err, dropped)``: the kept frequencies j (0 <= j <= nfft/2), the computed
    product there (long double complex), a bound on its absolute error there, and for the other
    frequencies a bound B_j on the modulus of the exact product (all below :data:`_DROP`).

    Error model (Higham 2002, Sec. 24.1): each forward FFT (extended precision where ``exts``
    says so) is within E_e = c u log2(N) |p_e|_1 of the exact DFT at every frequency; the DC term
    is replaced by the mass summed in extended precision. With a the computed modulus,
    |S^n - S'^n| <= (a + E)^n - a^n; the power itself (log, angle, exponential, in extended
    precision) adds n u_ld (|log a| + 8) relative; a product adds the two errors crosswise. The
    bounds are formed in double precision with a margin. Factors are folded in one at a time and
    a frequency is dropped as soon as its bound times the largest possible modulus of the
    remaining factors (their masses to their powers) is below :data:`_DROP`.
    """
    nh = nfft // 2 + 1
    lg = math.log2(max(nfft, 2))
    idx = np.arange(nh, dtype=np.int64)
    X = None
    err = None
    dropped_j: list[np.ndarray] = []
    dropped_b: list[np.ndarray] = []
    masses = []
    for pld, n in factors:
        s_ld = np.sum(pld.p.astype(_LD))
        m = float(s_ld) * (1.0 + (math.log2(max(pld.p.size, 2)) + 2.0) * _U_LD + _U)
        masses.append((m, float(n), s_ld))
    log_b = np.zeros(idx.size)
    for pos, ((pld, n), ext) in enumerate(zip(factors, exts)):
        nf = float(n)
        unit = _U_LD if ext else _U
        mass = masses[pos][0]
        spec = sfft.rfft(pld.p.astype(_LD) if ext else pld.p, nfft)
        if idx.size == spec.size:
            s = spec
        else:
            s = spec[idx]
        del spec
        e_fft = np.full(idx.size, _FFT_C * lg * mass * unit + 1e-300)
        if idx.size and idx[0] == 0:
            s[0] = masses[pos][2]  # the mass, summed pairwise in extended precision
            e_fft[0] = (math.log2(max(pld.p.size, 2)) + 2.0) * _U_LD * mass + 1e-300
        a = np.hypot(s.real.astype(float), s.imag.astype(float)) * (1.0 + 4.0 * _U)
        with np.errstate(divide="ignore", under="ignore", over="ignore", invalid="ignore"):
            log_bound_f = nf * np.log(a + e_fft)  # |S_exact|^n <= (a + E)^n
        log_b = log_b + log_bound_f
        # drop what cannot matter: bound times the largest moduli of the factors still to come
        rest = sum(nf2 * math.log(max(m2, 1e-300)) for m2, nf2, _ in masses[pos + 1:])
        with np.errstate(invalid="ignore"):
            keep = ~(log_b + rest < _LOG_DROP)
        if not np.all(keep):
            gone = ~keep
            dropped_j.append(idx[gone])
            with np.errstate(under="ignore"):
                dropped_b.append(np.exp(np.minimum(log_b[gone] + rest, 0.0)))
            idx, log_b, s, a, e_fft = idx[keep], log_b[keep], s[keep], a[keep], e_fft[keep]
            if X is not None and err is not None:
                X, err = X[keep], err[keep]
        with np.errstate(divide="ignore", under="ignore", over="ignore", invalid="ignore"):
            if nf == 1.0:
                f = s.astype(np.clongdouble)
                f_err = e_fft
            else:
                sl = s.astype(np.clongdouble)
                la = np.log(a)
                lmag = nf * np.log(np.abs(sl))
                ang = _LD(nf) * np.angle(sl)
                f = np.exp(lmag) * (np.cos(ang) + 1j * np.sin(ang))
                fa = np.exp(nf * la)
                # (a + E)^n - a^n, and the power's own rounding
                grow = np.where(a > 0, np.expm1(nf * np.log1p(e_fft / np.where(a > 0, a, 1.0))), np.inf)
                f_err = np.where(a > 0, fa * grow, np.exp(nf * np.log(a + e_fft)))
                f_err = f_err + fa * (nf * _U_LD * (np.abs(np.nan_to_num(la, neginf=0.0)) + 8.0))
                f_err = f_err * (1.0 + 1e-9) + 1e-300
        if X is None:
            X, err = f, f_err
        else:
            xa = np.abs(X.astype(np.complex128))
            fa2 = np.abs(f.astype(np.complex128))
            err = (err * (fa2 + f_err) + xa * f_err + 8.0 * _U_LD * xa * fa2) * (1.0 + 1e-9) + 1e-300
            X = X * f
    dj = np.concatenate(dropped_j) if dropped_j else np.zeros(0, dtype=np.int64)
    db = np.concatenate(dropped_b) if dropped_b else np.zeros(0)
    return idx, X, err, (dj, db)


def _phase(j: np.ndarray, t, nfft: int) -> np.ndarray:
    """2 pi ((j t) mod N) / N in extended precision (the integer product reduced exactly)."""
    r = (j.astype(object) * int(t) % nfft).astype(np.int64) if abs(int(t)) * nfft >= 2**62 else (j * int(t)) % nfft
    return (_LD(2.0) * _LD(np.pi)) * r.astype(_LD) / _LD(nfft)


def _rotated(X: np.ndarray, idx: np.ndarray, shift: int, nfft: int) -> np.ndarray:
    """X_j e^{2 pi i j shift / N}: the spectrum of the sequence rolled left by ``shift``."""
    th = _phase(idx, shift, nfft)
    return X * (np.cos(th) + 1j * np.sin(th))


def self_compose(pld: DiscretePLD, k, tail_mass: float, extended: bool | None = None,
                 max_bins: int | None = None) -> DiscretePLD:
    """k-fold composition of ``pld`` with itself: ``irfft(rfft(p)^k)`` on a Chernoff window.

    ``k`` is a non-negative integer-valued number (a float above 2^53 is an integer too). The
    cyclic FFT of length N >= window folds the mass outside the window (at most
    ``B_left + B_right`` by the Chernoff bounds) somewhere into the buffer; that amount and the
    floating-point error of the power are charged to ``inf`` (pessimistic) or ``slack``
    (optimistic), so the result stays valid. The power is taken only on the frequencies where
    it can exceed :data:`_DROP` (:func:`_powered`); the others are charged at their bound.
    By Parseval the l1 norm of the output error is at most the l2 norm of the spectrum error
    over the full (Hermitian) spectrum; the inverse transform adds c u log2 N |X|_2 (Higham 2002,
    Sec. 24.1).
    """
    if k == 1:
        return DiscretePLD(pld.d, pld.lo, pld.p.copy(), pld.inf, pld.pessimistic, pld.slack, pld.minf)
    if k == 0:
        return DiscretePLD.identity(pld.d, pld.pessimistic)
    kf = float(k)
    n1 = pld.p.size
    fin = pld.finite_mass
    tot = fin + pld.inf
    # hybrid argument: s_k <= s_{k-1} + s * total^(k-1) (optimistic totals are <= 1)
    slack = pld.slack * kf * (tot ** kf if tot > 1.0 else 1.0) if pld.slack else 0.0
    inf = _inf_power(fin, pld.inf, kf)
    minf = -math.expm1(kf * math.log1p(-pld.minf)) * (1.0 - 4.0 * _U) if 0 < pld.minf < 1 else pld.minf
    nz = np.nonzero(pld.p > 0)[0]
    if nz.size <= 1:  # all finite mass on one loss (or none): the composition is exact
        j = int(nz[0]) if nz.size else 0
        with np.errstate(under="ignore", over="ignore"):
            m = float(pld.p[j]) ** kf if nz.size else 0.0
        inf = inf * (1.0 + 4.0 * _U) if pld.pessimistic else inf * (1.0 - 4.0 * _U)
        return DiscretePLD(pld.d, int(k) * (pld.lo + j), np.array([m]), min(inf, math.inf), pld.pessimistic, slack, minf)
    i_lo, i_hi, b_left, b_right = chernoff_window(pld, kf, tail_mass)
    n_out = i_hi - i_lo + 1
    check_size(n_out, f"the {k}-fold composed PLD", pld.d, max_bins)
    nfft = sfft.next_fast_len(max(n_out, n1), real=True)
    check_size(nfft, f"the FFT buffer of a {k}-fold composition", pld.d, max_bins)
    # many steps: the power is taken in extended precision where the platform has it (the error
    # of the k-th power grows like k times the unit roundoff)
    ext = kf >= _EXT_STEPS if extended is None else bool(extended)
    if not pld.pessimistic and kf * (_U_LD if ext else _U) > _OPT_POWER_KU:
        # the charge of the power rests on a first-order error model (k u small); a lower end
        # must not rest on it where it was seen to fail (k = 2^35: a delta lower end above 1),
        # so the optimistic power is refused there and the caller composes fewer steps
        raise PLDPowerRangeError(f"an optimistic {k}-fold power is beyond the range of its error bound")
    idx, X, err, (_, dropped) = _powered([(pld, kf)], nfft, [ext])
    full = np.zeros(nfft // 2 + 1, dtype=np.clongdouble if ext else np.complex128)
    full[idx] = X
    del X
    x = sfft.irfft(full, nfft)
    lg = math.log2(max(nfft, 2))
    xa = np.abs(full[idx].astype(np.complex128))
    del full
    unit = _U_LD if ext else _U
    charge = (math.sqrt(2.0 * float(np.sum(err * err))) + math.sqrt(2.0 * float(np.sum(dropped * dropped)))
              + unit * _FFT_C * lg * math.sqrt(2.0 * float(np.sum(xa * xa)))) * 1.01
    shift = (i_lo - int(k) * pld.lo) % nfft
    out = np.roll(x, -shift)[:n_out].astype(float)
    del x
    out = _clip_negative(out)
    charge += 2.0 * _U * float(np.sum(out))  # rounding to double
    if pld.pessimistic:
        inf = inf * (1.0 + 4.0 * _U) + charge + b_left + b_right
    else:
        inf = inf * (1.0 - 4.0 * _U)
        slack += charge + b_left + b_right
    res = DiscretePLD(pld.d, i_lo, out, inf, pld.pessimistic, slack, minf)
    return _trim_tails(res, tail_mass)


# ------------------------------------------------------------------------------------------------
# sums of products of PLDs (the binomial expansion of a composition of a split step)


def _terms_window(terms, tail_mass: float) -> tuple[int, int, float, float]:
    """Chernoff window of the measure sum_t w_t conv_e pld_e^(n_e) (``terms`` = [(w_t, [(pld, n)])],
    all on one grid): mass{S > a} <= e^{-t a} sum_t w_t prod_e M_e(t)^n_e for t > 0 (and
    symmetrically). The tilt is the best of a log-grid evaluated on the blocked masses of each PLD
    (vectorised over the grid), the bound evaluated on the exact masses at that tilt. As
    :func:`_joint_window`."""
    full_lo = min(sum(int(n) * f.lo for f, n in fs) for _, fs in terms)
    full_hi = max(sum(int(n) * (f.lo + f.p.size - 1) for f, n in fs) for _, fs in terms)
    d = terms[0][1][0][0].d
    log_t = math.log(2.0 / tail_mass)
    data = {}
    for _, fs in terms:
        for f, _ in fs:
            if id(f) not in data:
                data[id(f)] = _mgf_data(f)
    var = 0.0
    for _, fs in terms:
        v = sum(n * _tilt_terms(data[id(f)][2], 0.0)[2] for f, n in fs if data[id(f)][2] is not None)
        var = max(var, v)
    scale = math.sqrt(max(var, 1e-300)) + d
    ts = np.geomspace(1e-3, 1e4, 40) / scale
    bounds = []
    for sign in (1.0, -1.0):
        # blocked log-MGF of each PLD on the whole grid of tilts at once
        blocked = {}
        for key, (_losses, _logp, blk) in data.items():
            if blk is None:
                blocked[key] = np.full(ts.size, -np.inf)
                continue
            bl, lbm, c = blk
            x = lbm[None, :] + ts[:, None] * (sign * bl)[None, :]
            mx = np.max(x, axis=1)
            blocked[key] = mx + np.log(np.sum(np.exp(x - mx[:, None]), axis=1)) + ts * sign * c
        per_term = np.array([math.log(w) + sum(n * blocked[id(f)] for f, n in fs) for w, fs in terms])
        a = (np.logaddexp.reduce(per_term, axis=0) + log_t) / ts
        t = float(ts[int(np.argmin(a))])
        vals = []
        for w, fs in terms:
            s = math.log(w)
            for f, n in fs:
                losses, logp, _ = data[id(f)]
                s = s + n * _log_mgf_exact(sign * losses, logp, t) if losses.size else -math.inf
            vals.append(s)
        bounds.append((float(np.logaddexp.reduce(np.array(vals))) + log_t) / t)
    a_hi, a_lo = bounds[0], -bounds[1]
    i_hi = min(full_hi, int(math.ceil(a_hi / d))) if math.isfinite(a_hi) else full_hi
    i_lo = max(full_lo, int(math.floor(a_lo / d))) if math.isfinite(a_lo) else full_lo
    if i_lo > i_hi:  # pragma: no cover - the Chernoff thresholds bracket the mean
        i_lo, i_hi = full_lo, full_hi
    b_right = 0.0 if i_hi >= full_hi else 0.5 * tail_mass
    b_left = 0.0 if i_lo <= full_lo else 0.5 * tail_mass
    return i_lo, i_hi, b_left, b_right


def _terms_inf_and_slack(terms) -> tuple[float, float]:
    """(mass at +inf, slack) of the optimistic sum of products ``terms`` (see :func:`poly_compose`);
    the Q-mass at -inf is not tracked (0 is safe). The slack by the hybrid argument:
    s_{XY} <= s_X tot(Y) + s_Y tot(X) for any non-negative measures, so each factor's slack counts
    times the totals of the other factors of its term (the totals of the exact parts and of their
    computed versions differ by far less than the margin 1e-6)."""
    inf = 0.0
    slack = 0.0
    for w, fs in terms:
        tot_p = fin_p = 1.0
        for f, n in fs:
            tot_p *= (f.finite_mass + f.inf) ** n
            fin_p *= f.finite_mass ** n
        inf += w * max(tot_p - fin_p, 0.0)
        for f, n in fs:
            if f.slack:
                tot_f = f.finite_mass + f.inf
                others = tot_p / tot_f if tot_f > 0 else 1.0
                slack += w * n * f.slack * others * (1.0 + 1e-6)
    return inf * (1.0 - 16.0 * _U), slack


def _term_spectra(terms, nfft: int, extended: bool, lg: float) -> dict:
    """The transform of every distinct PLD of ``terms`` placed at its absolute grid indices modulo
    ``nfft``: id -> (spectrum, bound on its modulus, error bound, cache of powers {1: spectrum}).
    A PLD that only appears in light terms (total weight below 1e-3) is transformed in double even
    with ``extended``: its error enters scaled by that weight."""
    cdt = np.clongdouble if extended else np.complex128
    heavy: dict = {}
    for w, fs in terms:
        tw = w
        for f, n in fs:
            tw *= (f.finite_mass + f.inf) ** n
        for f, _ in fs:
            heavy[id(f)] = heavy.get(id(f), 0.0) + tw
    specs = {}
    for _, fs in terms:
        for f, _ in fs:
            if id(f) not in specs:
                ext_f = extended and heavy[id(f)] >= 1e-3
                buf = np.zeros(nfft, dtype=_LD if ext_f else float)
                pos = (f.lo + np.arange(f.p.size)) % nfft  # absolute indices modulo N
                buf[pos] = f.p
                s = sfft.rfft(buf, nfft).astype(cdt)
                mass = float(np.sum(f.p.astype(_LD)))
                e_f = _FFT_C * lg * mass * (_U_LD if ext_f else _U) + 1e-300
                a = np.hypot(s.real.astype(float), s.imag.astype(float)) * (1.0 + 4.0 * _U)
                specs[id(f)] = (s, a, e_f, {1: s})
    return specs


def poly_compose(terms, tail_mass: float, max_bins: int | None = None, extended: bool = True) -> DiscretePLD:
    """The optimistic discrete PLD sum_t w_t conv_e pld_e^(n_e) (``terms`` = [(w_t, [(pld_e, n_e)])],
    weights > 0, small powers, one grid) on its Chernoff window (:func:`_terms_window`), by one
    forward transform per distinct PLD and one inverse transform (extended precision with
    ``extended``). Each PLD is placed at its absolute grid indices modulo N, so every term's
    product lands at its own indices and the terms add up without phase factors. Error bounds as
    in :func:`_powered` per term (|S^n - S'^n| <= (a + E)^n - a^n, products crosswise, a few
    roundings), summed over the terms; l1 of the output error by Parseval as in
    :func:`self_compose`; the mass outside the window and all charges go to the slack (the curve
    of the result minus its slack is below the curve of the measure)."""
    terms = [(float(w), [(f, int(n)) for f, n in fs if int(n) > 0]) for w, fs in terms]
    terms = [(w, fs) for w, fs in terms if w > 0 and fs]
    d = terms[0][1][0][0].d
    for _, fs in terms:
        for f, _ in fs:
            if f.d != d or f.pessimistic:
                raise ValueError("poly_compose: optimistic PLDs on one grid only")
    inf, slack = _terms_inf_and_slack(terms)
    i_lo, i_hi, b_left, b_right = _terms_window(terms, tail_mass)
    n_out = i_hi - i_lo + 1
    check_size(n_out, "the composed block", d, max_bins)
    sizes = [f.p.size for _, fs in terms for f, _ in fs]
    nfft = sfft.next_fast_len(max([n_out] + sizes), real=True)
    check_size(nfft, "the FFT buffer of a composed block", d, max_bins)
    lg = math.log2(max(nfft, 2))
    unit = _U_LD if extended else _U
    cdt = np.clongdouble if extended else np.complex128
    specs = _term_spectra(terms, nfft, extended, lg)
    nh = nfft // 2 + 1

    def power(key, n):  # (cached powers by repeated squaring)
        s, _, _, cache = specs[key]
        if n not in cache:
            h = n // 2
            ph = power(key, h)
            cache[n] = ph * ph if n % 2 == 0 else ph * ph * s
        return cache[n]

    X = np.zeros(nh, dtype=cdt)
    err = np.zeros(nh)
    for w, fs in terms:
        t = None
        a_exact = np.full(nh, w)
        a_bound = np.full(nh, w)
        steps = 0
        for f, n in fs:
            _, a, e_f, _ = specs[id(f)]
            pw = power(id(f), n)
            t = pw if t is None else t * pw
            steps += 2 * n
            with np.errstate(over="ignore", under="ignore"):
                a_exact = a_exact * a ** n
                a_bound = a_bound * (a + e_f) ** n
        X += w * t
        err += (a_bound - a_exact) + a_exact * (steps + 8) * 4.0 * unit
    x = sfft.irfft(X, nfft)
    xa = np.abs(X.astype(np.complex128))
    charge = (math.sqrt(2.0 * float(np.sum(err * err)))
              + unit * _FFT_C * lg * math.sqrt(2.0 * float(np.sum(xa * xa)))) * 1.01
    out = np.asarray(np.roll(x, -(i_lo % nfft))[:n_out], dtype=float)
    out = _clip_negative(out.copy())
    charge += 2.0 * _U * float(np.sum(out))
    slack += charge + b_left + b_right
    return _trim_tails(DiscretePLD(d, i_lo, out, inf, False, slack, 0.0), tail_mass)


# ------------------------------------------------------------------------------------------------
# a composed PLD kept as its spectrum (evaluated by Parseval)

#: at most this many kept frequencies in a :class:`SpectralPLD` (else the composition is
#: materialised: a query costs O(kept frequencies) extended-precision operations)
_SPECTRAL_MAX = 8192


@dataclass
class SpectralPLD:
    """A composed discrete PLD kept as the DFT of its cyclic window instead of its masses.

    Window position t in [0, nfft) stands for the loss (lo + t) d; the masses on the window are
    x_t = (1/N) sum_j Y_j e^{2 pi i j t/N} (N = ``nfft``, Y Hermitian), of which only the
    frequencies ``idx`` (0 <= j <= N/2) are kept: |Y'_j - Y_j| <= ``err`` there, and the
    others are bounded by ``dropped`` = (frequencies, bounds on |Y_j|). Mass outside the window
    (Chernoff bound) has folded into it and is charged to ``inf`` (pessimistic) or ``slack``
    (optimistic), exactly as for :class:`DiscretePLD`, whose ``inf`` / ``slack`` semantics it
    shares.

    Queries use two tail sums over the window, for t0 in [0, N] (Parseval with the geometric
    sums of the DFT kernel, w = e^{2 pi i/N}, C = e^{-d(N - t0)}):

        U(t0) = sum_{t >= t0} x_t = (1/N) sum_j Y_j (w^{j t0} - 1)/(1 - w^j)     (j = 0: N - t0)
        V(t0) = sum_{t >= t0} x_t e^{-(L_t - L_t0)} = (1/N) sum_j Y_j (w^{j t0} - C)/(1 - e^{-d} w^j)

    so that for epsilon in [L_{t0-1}, L_{t0}) equation (1) is ``inf + U(t0) - e^{eps - L_t0}
    V(t0)``. Each query costs O(kept frequencies) in extended precision; its error bound is
    sum_j err_j (|u_j| + |v_j|)/N over the kept frequencies (the coefficients at the queried
    t0), the dropped bounds times the largest coefficients, and the rounding of the sums. The
    masses themselves are never formed (no inverse transform, no clipping of round-off).
    """

    d: float
    lo: int
    nfft: int
    idx: np.ndarray
    y: np.ndarray
    err: np.ndarray
    dropped: tuple
    inf: float
    pessimistic: bool
    slack: float = 0.0
    minf: float = 0.0

    def __post_init__(self):
        n = self.nfft
        j = self.idx
        self._dc = j == 0
        self._nyq = (2 * j == n)
        inner = ~(self._dc | self._nyq)
        self._inner = inner
        ji = j[inner]
        half = _LD(np.pi) * ji.astype(_LD) / _LD(n)  # phi/2
        sh, ch = np.sin(half), np.cos(half)
        ed = np.exp(_LD(-self.d))
        omd = -np.expm1(_LD(-self.d))  # 1 - e^{-d}
        # 1/(1 - w^j), 1 - w^j = 2 sh^2 - 2i sh ch
        self._inv1 = 1.0 / (2.0 * sh * sh - 2j * sh * ch)
        # 1/(1 - e^{-d} w^j), 1 - e^{-d} w^j = (1 - e^{-d}) + 2 e^{-d} sh^2 - 2i e^{-d} sh ch
        self._inv2 = 1.0 / (omd + 2.0 * ed * sh * sh - 2j * ed * sh * ch)
        self._ed, self._omd = ed, omd
        self._y_in = self.y[inner]
        self._err_in = self.err[inner]
        self._ya_in = np.abs(self._y_in.astype(np.complex128))
        self._a1 = np.abs(self._inv1.astype(np.complex128))
        self._a2 = np.abs(self._inv2.astype(np.complex128))
        self._y0 = _LD(np.real(self.y[self._dc][0])) if np.any(self._dc) else _LD(0.0)
        self._e0 = float(self.err[self._dc][0]) if np.any(self._dc) else 0.0
        self._yn = _LD(np.real(self.y[self._nyq][0])) if np.any(self._nyq) else _LD(0.0)
        self._en = float(self.err[self._nyq][0]) if np.any(self._nyq) else 0.0
        # dropped frequencies: |Y_j| <= B_j <= max B; with sin(pi j/N) >= 2j/N (j <= N/2) the
        # coefficients of j >= 1 are |u_j| / N <= 1/(2j) and |v_j| / N <= e^{d/2}/(2j), so over
        # all j the dropped part is at most max B (1 + 1/(N (1 - e^{-d})) + (1 + e^{d/2}) (ln N + 1))
        dj, db = self.dropped
        tot = 0.0
        if dj.size:
            bmax = float(np.max(db))
            tot = bmax * (1.0 + 1.0 / (n * float(omd)) + (1.0 + math.exp(0.5 * self.d)) * (math.log(n) + 1.0)) * 1.01
        self._drop = tot
        self._nk = max(j.size, 1)

    @property
    def losses_range(self) -> tuple[float, float]:
        return self.lo * self.d, (self.lo + self.nfft - 1) * self.d

    def _uv(self, t0: int):
        """(U(t0), V(t0), error bound on U and on V (together)) in extended precision."""
        n = self.nfft
        if t0 >= n:
            return _LD(0.0), _LD(0.0), self._drop
        c = np.exp(_LD(-self.d) * _LD(n - t0))
        omc = -np.expm1(_LD(-self.d) * _LD(n - t0))  # 1 - C
        th = _phase(self.idx[self._inner], t0, n) / 2.0
        sh, ch = np.sin(th), np.cos(th)
        em1 = -2.0 * sh * sh + 2j * sh * ch  # w^{j t0} - 1
        tu = self._y_in * em1 * self._inv1
        tv = self._y_in * (omc + em1) * self._inv2
        u = 2.0 * np.sum(tu.real) / n
        v = 2.0 * np.sum(tv.real) / n
        au = 2.0 * np.abs(sh.astype(float)) * self._a1
        av = np.abs((omc + em1).astype(np.complex128)) * self._a2
        e = 2.0 * float(np.sum(self._err_in * (au + av))) / n
        r = 2.0 * float(np.sum(self._ya_in * (au + av))) / n
        # DC term
        y0 = self._y0
        u += y0 * _LD(n - t0) / n
        v += y0 * omc / self._omd / n
        a0u, a0v = float(n - t0) / n, float(omc / self._omd) / n
        e += self._e0 * (a0u + a0v)
        r += abs(float(y0)) * (a0u + a0v)
        # Nyquist term
        if self._yn != 0 or self._en:
            sgn = 1.0 if t0 % 2 == 0 else -1.0
            yn = self._yn
            u += yn * _LD((sgn - 1.0) / 2.0) / n
            v += yn * (_LD(sgn) - c) / (1.0 + self._ed) / n
            anu, anv = abs(sgn - 1.0) / 2.0 / n, float(abs(_LD(sgn) - c) / (1.0 + self._ed)) / n
            e += self._en * (anu + anv)
            r += abs(float(yn)) * (anu + anv)
        # rounding of the terms (two products and the coefficients: a few u_ld each) and sums
        e += r * (48.0 + math.log2(self._nk)) * _U_LD + self._drop
        return u, v, e

    def _position(self, epsilon: float) -> int:
        """First window position whose loss (lo + t) d exceeds ``epsilon``, in [0, nfft]."""
        t = int(math.floor(epsilon / self.d)) - self.lo + 1 if math.isfinite(epsilon) else (
            self.nfft if epsilon > 0 else 0)
        t = min(max(t, 0), self.nfft)
        for _ in range(4):
            if t > 0 and (self.lo + t - 1) * self.d > epsilon:
                t -= 1
            elif t < self.nfft and (self.lo + t) * self.d <= epsilon:
                t += 1
            else:
                break
        return t

    def _value(self, epsilon: float, t0: int | None = None) -> tuple[float, float]:
        """(computed value of (1) at epsilon without inf, error bound), epsilon in
        [L_{t0-1}, L_{t0})."""
        if t0 is None:
            t0 = self._position(epsilon)
        u, v, e = self._uv(t0)
        if t0 >= self.nfft:
            return 0.0, e
        f = np.exp(_LD(epsilon) - _LD((self.lo + t0) * self.d))
        val = u - f * v
        e += 4.0 * _U_LD * (abs(float(u)) + abs(float(f * v)))
        fv = float(val)
        return fv, e + 2.0 * _U * abs(fv)

    def upper(self, epsilon: float, t0: int | None = None) -> float:
        """Certified upper bound on (1) at epsilon (pessimistic PLDs)."""
        val, e = self._value(epsilon, t0)
        return max((self.inf + val + e) * (1.0 + 4.0 * _U), 0.0)

    def lower(self, epsilon: float, t0: int | None = None) -> float:
        """Certified lower bound on (1) at epsilon minus the slack (optimistic PLDs)."""
        val, e = self._value(epsilon, t0)
        return max((self.inf + val - e) * (1.0 - 4.0 * _U) - self.slack, 0.0)


def _factors_inf_slack_minf(factors) -> tuple[float, float, float]:
    """(mass at +inf, slack, Q-mass at -inf) of the composition of ``factors`` ([(pld, n)]): mass at
    +inf when any factor is at +inf (formed in log space, without the rounding of fin + inf), the
    slack by the hybrid argument (each factor's slack times the totals of the others), and
    1 - prod (1 - minf)^n rounded down."""
    log_tot = 0.0
    log_ratio = 0.0  # log(prod fin^n / prod tot^n)
    slack = 0.0
    one_minus_minf = 1.0
    tot_all = 1.0
    for f, n in factors:
        fin = f.finite_mass
        tot = fin + f.inf
        if fin > 0:
            r = math.log1p(f.inf / fin)
            log_tot += n * (math.log(fin) + r)
            log_ratio -= n * r
        else:
            log_tot += n * math.log(tot) if tot > 0 else -math.inf
            log_ratio = -math.inf
        with np.errstate(over="ignore"):
            tot_all *= max(tot, 1.0) ** n if tot > 1.0 else 1.0
        slack += f.slack * n
        one_minus_minf *= math.exp(n * math.log1p(-f.minf)) if f.minf < 1 else 0.0
    slack *= max(tot_all, 1.0)
    if log_tot == -math.inf:
        inf = 0.0
    elif log_tot > 700.0:
        inf = math.inf
    else:
        inf = math.exp(log_tot) * -math.expm1(min(log_ratio, 0.0))
    return inf, slack, (1.0 - one_minus_minf) * (1.0 - 4.0 * _U)


def _single_loss_compose(factors, inf: float, slack: float, minf: float, pessimistic: bool) -> DiscretePLD:
    """The exact composition when all finite mass of every factor sits on one loss."""
    lo, m = 0, 1.0
    for f, n in factors:
        nz = np.nonzero(f.p > 0)[0]
        j = int(nz[0]) if nz.size else 0
        lo += n * (f.lo + j)
        with np.errstate(under="ignore", over="ignore"):
            m *= float(f.p[j]) ** n if nz.size else 0.0
    inf = inf * (1.0 + 4.0 * _U) if pessimistic else inf * (1.0 - 4.0 * _U)
    return DiscretePLD(factors[0][0].d, lo, np.array([m]), inf, pessimistic, slack, minf)


def spectral_compose(factors, tail_mass: float, pessimistic: bool, max_bins: int | None = None,
                     extended=None):
    """Composition of ``n_e`` copies of each discrete PLD in ``factors`` ([(pld, n_e)], one grid)
    as one spectrum: the product of the factors' DFT powers on a common window chosen by a joint
    Chernoff bound (:func:`_joint_window`), taken only on the frequencies where it can matter
    (:func:`_powered`). Returns a :class:`SpectralPLD`, or -- when too many frequencies matter
    for cheap queries, or all finite mass sits on one loss -- the masses themselves
    (:class:`DiscretePLD`, inverse transform charged as in :func:`self_compose`).

    ``extended`` (per factor, or None): forward transform and power in extended precision; by
    default from :data:`_EXT_STEPS` compositions of a factor on (the error of a power grows like
    its exponent times the unit roundoff).
    """
    factors = [(f, int(n)) for f, n in factors if int(n) > 0]
    if not factors:
        raise ValueError("spectral_compose: nothing to compose")
    d = factors[0][0].d
    for f, _ in factors:
        if f.d != d or f.pessimistic != pessimistic:
            raise ValueError("spectral_compose: PLDs must share the discretization and the estimate type")
    if len(factors) == 1 and factors[0][1] == 1:
        f = factors[0][0]
        return DiscretePLD(f.d, f.lo, f.p.copy(), f.inf, f.pessimistic, f.slack, f.minf)
    if extended is None:
        exts = [float(n) >= _EXT_STEPS for _, n in factors]
    else:
        exts = [bool(x) for x in extended]
    inf, slack, minf = _factors_inf_slack_minf(factors)
    for f, n in factors:
        if not f.pessimistic and float(n) * (_U_LD if float(n) >= _EXT_STEPS else _U) > _OPT_POWER_KU:
            raise PLDPowerRangeError(f"an optimistic {n}-fold power is beyond the range of its error bound")
    if all(np.count_nonzero(f.p > 0) <= 1 for f, _ in factors):
        return _single_loss_compose(factors, inf, slack, minf, pessimistic)
    i_lo, i_hi, b_left, b_right = _joint_window(factors, tail_mass)
    n_out = i_hi - i_lo + 1
    check_size(n_out, "the composed PLD", d, max_bins)
    nfft = sfft.next_fast_len(max([n_out] + [f.p.size for f, _ in factors]), real=True)
    check_size(nfft, "the FFT buffer of a composition", d, max_bins)
    idx, X, err, dropped = _powered(factors, nfft, exts)
    shift = (i_lo - sum(n * f.lo for f, n in factors)) % nfft
    if pessimistic:
        inf = inf * (1.0 + 4.0 * _U) + b_left + b_right
    else:
        inf = inf * (1.0 - 4.0 * _U)
        slack += b_left + b_right
    if idx.size <= _SPECTRAL_MAX:
        Y = _rotated(X, idx, shift, nfft)
        err = err + 8.0 * _U_LD * np.abs(X.astype(np.complex128))
        return SpectralPLD(d, i_lo, nfft, idx, Y, err, dropped, inf, pessimistic, slack, minf)
    # materialise (the inverse transform in the precision of the power)
    ext = any(exts)
    full = np.zeros(nfft // 2 + 1, dtype=np.clongdouble if ext else np.complex128)
    full[idx] = X
    x = sfft.irfft(full, nfft)
    xa = np.abs(X.astype(np.complex128))
    del full, X
    lg = math.log2(max(nfft, 2))
    db = dropped[1]
    charge = (math.sqrt(2.0 * float(np.sum(err * err))) + math.sqrt(2.0 * float(np.sum(db * db)))
              + (_U_LD if ext else _U) * _FFT_C * lg * math.sqrt(2.0 * float(np.sum(xa * xa)))) * 1.01
    out = np.roll(x, -shift)[:n_out].astype(float)
    del x
    out = _clip_negative(out)
    charge += 2.0 * _U * float(np.sum(out))
    if pessimistic:
        inf += charge
    else:
        slack += charge
    return _trim_tails(DiscretePLD(d, i_lo, out, inf, pessimistic, slack, minf), tail_mass)


# ------------------------------------------------------------------------------------------------
# queries


def delta_for_epsilon(pld, epsilon: float) -> float:
    """Equation (1) at ``epsilon`` (any real), with the summation allowance and the slack.

    Pessimistic: an upper bound, the sum of the finite terms inflated by ``1e-12`` relative (the
    mass at +inf is an upper value of its own). Optimistic: a lower bound, deflated by the same
    factor minus ``slack`` (never below 0). A :class:`SpectralPLD` is
    evaluated by Parseval with its certified error bound.
    """
    if isinstance(pld, SpectralPLD):
        return pld.upper(epsilon) if pld.pessimistic else pld.lower(epsilon)
    losses = pld.losses
    sel = losses > epsilon
    with np.errstate(over="ignore"):
        terms = pld.p[sel] * -np.expm1(epsilon - losses[sel])
    fin = float(np.sum(terms))
    if pld.pessimistic:
        # the allowance covers the summation of the finite terms; the mass at +inf is a certified
        # upper value of its own (exact for one (epsilon, delta) step), and the one addition is
        # rounded up by an ulp: with nothing finite above epsilon the curve is the mass at +inf
        if not fin > 0.0:
            return pld.inf
        if pld.inf == 0.0:
            return fin * (1.0 + _SUM_REL)
        # (never above the former (inf + sum)(1 + allowance), itself a valid upper value)
        return min(math.nextafter(pld.inf + fin * (1.0 + _SUM_REL), math.inf), (pld.inf + fin) * (1.0 + _SUM_REL))
    val = pld.inf + fin
    return max(val * (1.0 - _SUM_REL) - pld.slack, 0.0)


def epsilon_for_delta(pld, delta: float) -> float:
    """Smallest epsilon >= 0 with (1) (adjusted as in :func:`delta_for_epsilon`) <= ``delta``.

    Equation (1) is continuous and non-increasing in epsilon; on ``(L_{j-1}, L_j]`` it equals
    ``inf + U_j - e^epsilon W_j`` with ``U_j = sum_{i>=j} p_i`` and
    ``W_j = sum_{i>=j} p_i e^{-L_i}``, so the crossing is found by one reverse cumulative sum
    (``W`` in log space) and solved in closed form. ``inf`` when the curve never reaches
    ``delta``. A :class:`SpectralPLD` is searched the same way (:func:`_spectral_epsilon`).
    """
    if isinstance(pld, SpectralPLD):
        return _spectral_epsilon(pld, delta)
    return _certified_crossing(pld, delta, _crossing(pld, delta))


#: bisection steps of :func:`_certified_crossing` inside one grid bin (2^-60 of the bin)
_CROSSING_STEPS = 60
#: its gallop: first step (relative to the crossing's scale), steps (x4 each: up to 2^-2 of the scale),
#: and the halvings of the bracket found
_GALLOP_START = 2.0**-50
_GALLOP_STEPS = 24
_REFINE_STEPS = 12


def _meets(pld, epsilon: float, delta: float) -> bool:
    """Whether the estimate's own query (:func:`delta_for_epsilon`, a sum of non-negative terms: no
    cancellation) puts epsilon on the right side: pessimistic, the upper curve at epsilon is <= delta;
    optimistic, the lower curve there is >= delta."""
    val = delta_for_epsilon(pld, epsilon)
    return val <= delta if pld.pessimistic else val >= delta


def _certified_crossing(pld, delta: float, eps: float) -> float:
    """``eps`` from the closed form of :func:`_crossing`, checked by the direct sum and moved when it
    fails: the closed form subtracts sums of nearly equal size (the mass above a loss and its
    discounted value) when ``delta`` is far below the mass just above the crossing, and can land a
    few of that mass's ulps on the wrong side (pessimistically below the crossing: an upper end too
    small). Then it gallops outwards from 2^-50 of the crossing's scale (x4 a step) and halves the
    bracket found :data:`_REFINE_STEPS` times; if no step within :data:`_GALLOP_STEPS` passes, the first
    grid loss on the right side is found by bisection over the losses and the crossing inside its bin by
    :data:`_CROSSING_STEPS` halvings. The end that passed the check is kept: pessimistic ends move up,
    optimistic ones down; 0 and inf stay (proofs_checks/pld_crossing.py)."""
    if not math.isfinite(eps) or (eps == 0.0 and not pld.pessimistic):
        return eps
    if _meets(pld, eps, delta):
        return eps
    # the miss is a few ulps of the crossing's scale: gallop outwards from 2^-50 of it (x4 a step),
    # then bisect the last bracket a few times; the search over the losses is the fallback
    sign = 1.0 if pld.pessimistic else -1.0
    step = max(abs(eps), pld.d) * _GALLOP_START
    bad = eps
    for _ in range(_GALLOP_STEPS):
        trial = eps + sign * step
        if not pld.pessimistic and trial <= 0.0:
            break
        if _meets(pld, trial, delta):
            return _bisect_crossing(pld, delta, trial, bad, _REFINE_STEPS)
        bad = trial
        step *= 4.0
    losses = pld.losses
    if pld.pessimistic:
        cand = losses[losses > eps]
        if cand.size == 0 or not _meets(pld, float(cand[-1]), delta):
            return math.inf  # (not reached: beyond the last loss only the mass at +inf, checked before)
        lo_i, hi_i = 0, cand.size - 1  # the first candidate loss meeting delta
        while lo_i < hi_i:
            mid = (lo_i + hi_i) // 2
            if _meets(pld, float(cand[mid]), delta):
                hi_i = mid
            else:
                lo_i = mid + 1
        good, bad = float(cand[hi_i]), (float(cand[hi_i - 1]) if hi_i > 0 else eps)
    else:
        cand = losses[(losses < eps) & (losses > 0)]
        if cand.size == 0 or not _meets(pld, float(cand[0]), delta):
            return 0.0
        lo_i, hi_i = 0, cand.size - 1  # the last candidate loss (below eps) meeting delta
        while lo_i < hi_i:
            mid = (lo_i + hi_i + 1) // 2
            if _meets(pld, float(cand[mid]), delta):
                lo_i = mid
            else:
                hi_i = mid - 1
        good, bad = float(cand[lo_i]), (float(cand[lo_i + 1]) if lo_i + 1 < cand.size else eps)
    return _bisect_crossing(pld, delta, good, bad, _CROSSING_STEPS)


def _bisect_crossing(pld, delta: float, good: float, bad: float, steps: int) -> float:
    """Bisection between a point that meets delta (:func:`_meets`) and one that does not, at most
    ``steps`` halvings; returns the end that meets it."""
    for _ in range(steps):
        mid = 0.5 * (good + bad)
        if mid == good or mid == bad:
            break
        if _meets(pld, mid, delta):
            good = mid
        else:
            bad = mid
    return good


def _crossing(pld, delta: float) -> float:
    """The crossing of :func:`epsilon_for_delta` in closed form (before its check)."""
    losses = pld.losses
    pos = losses > 0
    p = pld.p[pos]
    lpos = losses[pos]
    if pld.pessimistic:
        # (as in delta_for_epsilon) the finite part F(epsilon) must satisfy
        # inf + F (1 + allowance) <= delta: the search below runs on F alone, with room for the
        # rounding of delta - inf; at no room, F must vanish, i.e. epsilon is the largest finite loss
        if pld.inf > delta:
            return math.inf
        if pld.inf == delta:
            nz = lpos[p > 0]
            return float(nz.max()) if nz.size else 0.0
        base, target = 0.0, (delta - pld.inf) * (1.0 - 4.0 * _U) / (1.0 + _SUM_REL)
    else:
        base, target = pld.inf, (delta + pld.slack) / (1.0 - _SUM_REL)
        if pld.inf >= target:
            return math.inf
    if p.size == 0:
        return 0.0
    # reverse cumulative sums over i >= j
    U = np.cumsum(p[::-1])[::-1]
    with np.errstate(divide="ignore"):
        logw_terms = np.log(p) - lpos
    logW = np.logaddexp.accumulate(logw_terms[::-1])[::-1]
    # value of (1) at epsilon = 0 and at each positive loss L_j (sum over i > j)
    d0 = base + U[0] - math.exp(logW[0]) if np.isfinite(logW[0]) else base + U[0]
    if d0 <= target:
        return 0.0
    U_next = np.append(U[1:], 0.0)
    logW_next = np.append(logW[1:], -np.inf)
    # exp(L_j) W_{j+1} = sum_{i>j} p_i e^{L_j - L_i} <= U_{j+1}, formed in log space
    with np.errstate(over="ignore", invalid="ignore"):
        at_loss = base + U_next - np.where(np.isfinite(logW_next), np.exp(np.minimum(lpos + logW_next, 700.0)), 0.0)
    j = int(np.argmax(at_loss <= target))  # first bin whose loss already gives delta <= target
    # the crossing lies in (L_{j-1}, L_j] (or (0, L_0]); there (1) = inf + U_j - e^eps W_j
    num = base + U[j] - target
    if not num > 0 or not np.isfinite(logW[j]):
        return float(lpos[j])
    eps = math.log(num) - float(logW[j])
    lower_edge = float(lpos[j - 1]) if j > 0 else 0.0
    return float(min(max(eps, lower_edge), float(lpos[j])))


def _spectral_epsilon(sp: SpectralPLD, delta: float) -> float:
    """epsilon_for_delta of a :class:`SpectralPLD`.

    Pessimistic: the smallest epsilon >= 0 found at which the certified upper bound on (1) is
    <= ``delta`` (bisection over the window positions for the bin of the crossing, then the
    closed form inside the bin, then the bound evaluated at the returned point: that point is
    always one where the bound was checked). Optimistic: the largest epsilon found at which the
    certified lower bound (minus the slack) is > ``delta`` (0 when there is none): the exact
    curve is above ``delta`` there, so the exact epsilon is at least that.
    """
    n = sp.nfft
    d, lo = sp.d, sp.lo

    def L(t: int) -> float:
        return (lo + t) * d

    t_start = min(max(0, 1 - lo), n)  # first position with a positive loss
    if sp.pessimistic:
        if sp.inf >= delta:
            return math.inf

        def ok_at(t: int) -> bool:  # bound at epsilon = L_t (its bin is t + 1) <= delta
            return sp.upper(L(t), t + 1) <= delta

        if sp.upper(0.0, t_start) <= delta:
            return 0.0
        if not ok_at(n - 1):
            return math.inf
        a, b = t_start - 1, n - 1  # ok_at(a) taken false (epsilon 0 fails), ok_at(b) true
        while b - a > 1:
            m = (a + b) // 2
            if ok_at(m):
                b = m
            else:
                a = m
        # the crossing lies in (max(L_{b-1}, 0), L_b]: (1) = inf + U(b) - e^{eps - L_b} V(b)
        lower_edge = max(L(b - 1), 0.0) if b > 0 else 0.0
        u, v, e = sp._uv(b)
        num = float(sp.inf + u) + e - delta
        vf = float(v)
        if vf > 0 and num > 0:
            eps = L(b) + math.log(num / vf)
            eps = min(max(eps, lower_edge), L(b))
        else:
            eps = lower_edge
        for _ in range(8):
            if eps >= L(b):
                return L(b)
            if sp.upper(eps, b) <= delta:
                return eps
            eps = eps + max(abs(eps), d) * 1e-12
        return L(b)
    # optimistic
    target = delta
    if sp.lower(L(n - 1), n) > target:  # above delta beyond the window: no finite epsilon
        return math.inf

    def above_at(t: int) -> bool:  # certified (1) at epsilon = L_t is > delta
        return sp.lower(L(t), t + 1) > target

    if sp.lower(0.0, t_start) <= target:
        return 0.0
    a, b = t_start - 1, n - 1  # above_at(a) true (epsilon 0 holds), above_at(b) false
    while b - a > 1:
        m = (a + b) // 2
        if above_at(m):
            a = m
        else:
            b = m
    # the crossing lies in [L_a, L_b) (bin b): certified value inf + U(b) - e^{eps - L_b} V(b) - e - slack
    u, v, e = sp._uv(b)
    start = max(L(a), 0.0) if a >= t_start else 0.0
    num = float(sp.inf + u) - e - sp.slack - target
    vf = float(v)
    if vf > 0 and num > 0:
        eps = L(b) + math.log(num / vf)
        eps = min(max(eps, start), L(b))
    else:
        eps = start
    for _ in range(8):
        if eps <= start:
            return start
        if sp.lower(eps, b) > target:
            return eps
        eps = eps - max(abs(eps), d) * 1e-12
    return start
