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
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import fft as sfft

__all__ = [
    "DiscretePLD",
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
    """A discrete PLD would need more than :data:`MAX_BINS` bins."""


class PLDPowerRangeError(PLDTooLargeError):
    """An optimistic k-fold power with k beyond the range of its error bound (compose fewer steps)."""


def check_size(n: int, what: str, d: float, limit: int | None = None) -> None:
    if limit is not None and n > limit:
        raise PLDTooLargeError(f"{what} needs {n} bins at discretization {d:g} (the accountant's "
                               f"max_bins is {limit})")
    if n > MAX_BINS:
        raise PLDTooLargeError(
            f"{what} needs {n} bins at discretization {d:g} (limit {MAX_BINS} bins, about 1 GB of "
            f"working memory); use a coarser discretization, e.g. PLDAccountant(discretization="
            f"{d * 2 ** math.ceil(math.log2(n / MAX_BINS)):g})"
        )


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


def chernoff_window(pld: DiscretePLD, k: float, tail_mass: float) -> tuple[int, int, float, float]:
    """Index window [i_lo, i_hi] of the k-fold composition outside of which the finite mass is
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


def self_compose(pld: DiscretePLD, k, tail_mass: float, extended: bool | None = None,
                 max_bins: int | None = None) -> DiscretePLD:
    """k-fold composition of ``pld`` with itself: ``irfft(rfft(p)^k)`` on a Chernoff window.

    ``k`` is a non-negative integer-valued number (a float above 2^53 is an integer too). The
    cyclic FFT of length N >= window folds the mass outside the window (at most
    ``B_left + B_right`` by the Chernoff bounds) somewhere into the buffer; that amount and the
    floating-point error of the power (:func:`_power_charge`) are charged to ``inf``
    (pessimistic) or ``slack`` (optimistic), so the result stays valid. The charge grows like
    k times the effective number of frequencies, so for very many compositions it becomes
    large and the answers vacuous (never wrong).
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
    spec = sfft.rfft(pld.p.astype(_LD) if ext else pld.p, nfft)
    sabs = np.abs(spec)
    with np.errstate(divide="ignore", under="ignore", over="ignore", invalid="ignore"):
        logr = np.log(sabs)
        ang = np.angle(spec)
        # (sin/cos reduce the argument k arg(S) accurately in the working precision)
        spec = np.exp(kf * logr) * np.exp(1j * ((_LD(kf) if ext else kf) * ang))
    charge = _power_charge(sabs.astype(float), kf, nfft, fin, _U_LD if ext else _U)
    del sabs
    x = sfft.irfft(spec, nfft)
    del spec
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
# queries


def delta_for_epsilon(pld: DiscretePLD, epsilon: float) -> float:
    """Equation (1) at ``epsilon`` (any real), with the summation allowance and the slack.

    Pessimistic: an upper bound, inflated by ``1e-12`` relative. Optimistic: a lower bound,
    deflated by the same factor minus ``slack`` (never below 0).
    """
    losses = pld.losses
    sel = losses > epsilon
    with np.errstate(over="ignore"):
        terms = pld.p[sel] * -np.expm1(epsilon - losses[sel])
    val = pld.inf + float(np.sum(terms))
    if pld.pessimistic:
        return val * (1.0 + _SUM_REL)
    return max(val * (1.0 - _SUM_REL) - pld.slack, 0.0)


def epsilon_for_delta(pld: DiscretePLD, delta: float) -> float:
    """Smallest epsilon >= 0 with (1) (adjusted as in :func:`delta_for_epsilon`) <= ``delta``.

    Equation (1) is continuous and non-increasing in epsilon; on ``(L_{j-1}, L_j]`` it equals
    ``inf + U_j - e^epsilon W_j`` with ``U_j = sum_{i>=j} p_i`` and
    ``W_j = sum_{i>=j} p_i e^{-L_i}``, so the crossing is found by one reverse cumulative sum
    (``W`` in log space) and solved in closed form. ``inf`` when the curve never reaches
    ``delta``.
    """
    if pld.pessimistic:
        target = delta / (1.0 + _SUM_REL)
    else:
        target = (delta + pld.slack) / (1.0 - _SUM_REL)
    if pld.inf >= target:
        return math.inf
    losses = pld.losses
    pos = losses > 0
    p = pld.p[pos]
    lpos = losses[pos]
    if p.size == 0:
        return 0.0
    # reverse cumulative sums over i >= j
    U = np.cumsum(p[::-1])[::-1]
    with np.errstate(divide="ignore"):
        logw_terms = np.log(p) - lpos
    logW = np.logaddexp.accumulate(logw_terms[::-1])[::-1]
    # value of (1) at epsilon = 0 and at each positive loss L_j (sum over i > j)
    d0 = pld.inf + U[0] - math.exp(logW[0]) if np.isfinite(logW[0]) else pld.inf + U[0]
    if d0 <= target:
        return 0.0
    U_next = np.append(U[1:], 0.0)
    logW_next = np.append(logW[1:], -np.inf)
    # exp(L_j) W_{j+1} = sum_{i>j} p_i e^{L_j - L_i} <= U_{j+1}, formed in log space
    with np.errstate(over="ignore", invalid="ignore"):
        at_loss = pld.inf + U_next - np.where(np.isfinite(logW_next), np.exp(np.minimum(lpos + logW_next, 700.0)), 0.0)
    j = int(np.argmax(at_loss <= target))  # first bin whose loss already gives delta <= target
    # the crossing lies in (L_{j-1}, L_j] (or (0, L_0]); there (1) = inf + U_j - e^eps W_j
    num = pld.inf + U[j] - target
    if not num > 0 or not np.isfinite(logW[j]):
        return float(lpos[j])
    eps = math.log(num) - float(logW[j])
    lower_edge = float(lpos[j - 1]) if j > 0 else 0.0
    return float(min(max(eps, lower_edge), float(lpos[j])))
