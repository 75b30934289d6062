"""PLDAccountant: privacy-loss-distribution accounting with a certified [lower, upper] interval.

What the interval brackets. Each composed mechanism describes a *class* (``Gaussian(sigma)``
is one mechanism, ``PureDP(eps)`` is every eps-DP mechanism, ``ExponentialMechanism(eps)``
every eps-bounded-range one); the accountant's guarantee for a composition is the worst case
over the class and over adaptive choices. ``upper`` is an upper bound on it (a valid privacy
guarantee); ``lower`` is the value of a composition that some members of the classes attain, so
no accountant can certify less than ``lower``. For the Gaussian, Laplace, pure / approximate DP
and their Poisson-subsampled versions the two ends bracket the exact optimal composition.

How (Koskela, Jalko, Honkela 2020; Doroshenko et al. 2022). On the first query the accountant builds, for each direction
(ADD and REMOVE neighbours; one suffices when every pair is symmetric),

* a *pessimistic* discrete PLD from each step's dominating pair (connect-the-dots; curve above
  the exact one everywhere) and composes them, all events at once, as one product of spectra
  (:class:`~dpaudit.accounting.pld.distribution.SpectralPLD`); every truncation, aliasing and
  floating-point charge is added at +inf or bounded at the query;
* *optimistic* discrete PLDs from attained pairs (chords through lowered values; curve below the
  exact one everywhere, see :mod:`dpaudit.accounting.pld.discretisation`), composed the same way
  with every charge collected in a ``slack`` subtracted from each delta -- only when a lower end
  is asked for, and only in the directions whose upper end is above the best lower end found.

Then ``delta(eps)`` is the maximum over directions of the hockey-stick divergence (1) of the
composed PLD and ``epsilon(delta)`` the smallest eps >= 0 with ``delta(eps) <= delta``.

Why the lower end stays tight for many compositions. Rounding every loss down (privacy
buckets, Meiser & Mohammadi 2018; dp_accounting's optimistic PLD) shifts the composed loss by up
to ``T d`` after T steps. The optimistic discretisation used here is second order in ``d`` where
the loss density is smooth on the grid scale; where it is not (support edges of a subsampled
mechanism, steep parts), a grid-based lower curve must pay about (mass of the cell) x d per step.
So steps are composed in blocks of about 32 (a divisor of the count where one lies in 24..48):
one step is discretised on a grid 8 times finer over the core of its loss (the cells where it
has mass) and on the grid ``d`` elsewhere (:func:`~dpaudit.accounting.pld.discretisation.hybrid_split`:
A + B), the block is the binomial sum of A's powers (small compositions on the fine grid,
coarsened to ``d``: the r-fold density is smooth, second order again) times B's powers, and the
blocks are composed by the FFT power. Two repairs keep the mean loss from drifting: the left part
of each block is lifted onto the line 1 - x (1 - Q(L = -inf)) below the exact curve (the lowered
chords near the left support edge dip below it), and composed PLDs are coarsened with their own
P and Q totals (they differ from one). Every stage keeps the curve below the true one (module
docstrings of ``discretisation`` and ``distribution``), so the result is a valid lower end; its
width against the upper end at sigma 0.8, q 0.001, delta 1e-5 is 7.6e-6 at T = 10^3 and 6.9e-4 at
T = 10^6 (prv_accountant's interval: 0.02), see ``benchmarks/accounting.py``.

Speed (issue 29; measured in ``benchmarks/accounting.py`` against dp_accounting and
prv_accountant in the same run). The composed PLD is kept as a spectrum, never as masses:

* *what is composed*: the product over events of (spectrum of the event's discrete step)^count on
  one window chosen by a joint Chernoff bound (the tilt located on at most 2048 blocked masses,
  the bound evaluated on the exact ones). A composed PLD of many steps is smooth on the grid
  scale, so only a few of its frequencies exceed 1e-40 (about 400 of 76,000 at T = 10^3, 35 of
  350,000 at T = 10^6): the powers are taken there only, the others are charged at their bound;
* *queries*: by Parseval, ``U(t0) = sum_{t >= t0} x_t`` and ``V(t0) = sum x_t e^{-(L_t - L_t0)}``
  are sums over the kept frequencies with geometric-series coefficients, so delta(eps) and the
  bin of epsilon(delta) (bisection over the window) cost O(kept frequencies) each, with an error
  bound sum_j err_j (|u_j| + |v_j|)/N (no inverse transform, no clipping, and a smaller charge than
  the l1 bound of a materialised power);
* *long double* (80-bit on x86) where the error of a power is amplified by its exponent: the
  forward FFT of a factor composed 100 times or more, the powers themselves (log, angle,
  exponential on the kept frequencies), the query sums, and the blocks of the lower end when 64
  or more of them are composed (their forward and inverse transforms: their slack is multiplied
  by the number of blocks);
* *double with a certified charge* (Higham 2002, Sec. 24.1: c u log2 N |p|_1 per frequency,
  c = 7) where it is not amplified: factors composed fewer than 100 times, blocks composed fewer
  than 64 times, the masses' totals and the lift's sums (their error bounds charged);
* *cached*: the curve values of each step on each grid (shared by both ends), the discretised
  factors of each (pair, count, grid, end), and the composed spectra of each end until the next
  ``compose``: further queries at any delta or epsilon reuse them;
* *grid*: the spacing is chosen as before (from the same coarse Chernoff estimate), so the
  discretised steps are those of earlier versions and the upper ends can only come down.

(prv_accountant, Gopi, Lee, Wutschitz 2021, composes a discretised privacy random variable by the
same FFT power in double precision and widens its estimate by an a-priori error term; its
interval is about 0.02 wide for this mechanism at every T.)

Composition is monotone (``delta_{A x B} >= delta_A``: dropping B is post-processing), so the
lower end is also at least that of any sub-composition; the accountant uses this for the exact
Gaussian part, for each Poisson-subsampled Gaussian step (whose REMOVE curve is at least
``q delta_G(e - log q)``) and to cap counts too large for the FFT (a lower bound from fewer
steps is valid).

Unsampled Gaussian mechanisms compose exactly into one Gaussian with
``mu^2 = sum_i count_i (sensitivity_i / sigma_i)^2`` (Dong, Roth, Su 2019, Cor. 3.3); when
nothing else is composed the answer is the exact Balle-Wang curve (Balle & Wang 2018, Thm. 8)
certified to about an ulp (:mod:`dpaudit.accounting.gaussian_profile`; the curve itself and its
double-precision bounds live in :mod:`dpaudit.core.special`, shared with the Gaussian pair of the
discretisation; mu^2 is summed exactly), for any count (also above 1e308).

Grid. The spacing is the requested ``discretization`` unless (with ``adaptive``) a composed
step has a per-step loss so narrow that the grid would distort it (then it is refined, within
``max_bins``), or the composed PLD would need more than ``max_bins`` bins (then it is
coarsened: the answer stays valid, only looser). :attr:`effective_discretization` reports the
spacing used. Without ``adaptive`` an oversized PLD raises :class:`PLDTooLargeError` (a
``ValueError``) with a suggestion.

Fallback. When ``rdp_fallback`` is on (default), the upper end is the smaller of the PLD bound
and the RDP bound of the same events (both are upper bounds); this matters where the PLD cannot
certify (delta below its truncated mass, ~1e-15; counts beyond the float range). An RDP value
below the certified lower end would be a contradiction; it is then ignored and recorded in
``details["rdp_inconsistent"]``. ``details`` records which source gave the upper end.
"""

from __future__ import annotations

import math
import sys
import warnings
from fractions import Fraction

import numpy as np

from dpaudit.accounting import gaussian_profile
from dpaudit.accounting.base import Accountant
from dpaudit.accounting.pld.discretisation import (
    coarsen,
    coarsen_part,
    compose_atomic,
    discretise,
    grid_for,
    hybrid_split,
    lift_left,
    loss_range,
)
from dpaudit.accounting.pld.distribution import (
    MAX_BINS,
    DiscretePLD,
    PLDPowerRangeError,
    PLDTooLargeError,
    chernoff_window,
    delta_for_epsilon,
    epsilon_for_delta,
    grid_window,
    poly_compose,
    self_compose,
    spectral_compose,
)
from dpaudit.accounting.rdp import RDPAccountant
from dpaudit.core.numeric import round_down, round_up
from dpaudit.core.threads import blas_limited
from dpaudit.core.validation import (
    UnsupportedMechanismError,
    check_count,
    check_delta,
    check_epsilon,
    check_positive,
)
from dpaudit.mechanisms.loss_pairs import PrivacyLoss, gaussian_pairs

__all__ = ["PLDAccountant", "PLDTooLargeError"]

#: the grid is refined until the narrowest per-step loss spans this many bins ...
_BINS_PER_SCALE = 40.0
#: default size budget of a composed PLD (bins); beyond it the grid is coarsened
DEFAULT_MAX_BINS = 2**20
#: counts above this are not composed by the FFT for the upper end (its floating-point charge
#: would make the answer vacuous anyway); the lower end composes at most this many steps
_MAX_FFT_COUNT = 2**53
_FMAX = sys.float_info.max
#: largest grid spacing used (coarser grids are not attempted: the answer would be vacuous)
_D_MAX = 8.0
#: finest grid spacing used (losses narrower than this are not resolved further)
_D_MIN = 1e-12
#: two-level optimistic composition: steps composed on the fine grid, refinement factor
_TWO_LEVEL_STEPS = 16
_TWO_LEVEL_REFINE = 8
#: block sizes of the split two-level composition: a divisor of the count in this range (closest
#: to the preferred size), else the preferred size and a block for the rest
_BLOCK_RANGE = (24, 48)
_BLOCK_PREFERRED = 32
#: terms of the binomial block weighing more than this get their own coarsened power of A
_EXACT_TERM = 1e-6
_U = float(np.finfo(float).eps)


def _block_size(k: int) -> int:
    """Steps per block of the split two-level composition: all of them up to the top of
    :data:`_BLOCK_RANGE`, else the divisor of k in the range closest to :data:`_BLOCK_PREFERRED`
    (no block for a rest), else the preferred size."""
    lo, hi = _BLOCK_RANGE
    if k <= hi:
        return k
    divs = [r for r in range(lo, hi + 1) if k % r == 0]
    if divs:
        return min(divs, key=lambda r: (abs(r - _BLOCK_PREFERRED), -r))
    return _BLOCK_PREFERRED


def _retry_factor(exc: PLDTooLargeError) -> float:
    """How much coarser the grid must get after ``exc``: in proportion to the bins it needed (a
    composed window scales like 1/d), with a margin; 4 when unknown."""
    if exc.needed and exc.limit:
        return min(max(1.0005 * exc.needed / exc.limit, 1.0005), 4.0)
    return 4.0


class _Lazy:
    """A value computed on first call (the lower end is needed only sometimes)."""

    def __init__(self, fn):
        self._fn, self._done, self._val = fn, False, None

    def __call__(self):
        if not self._done:
            self._val, self._done = self._fn(), True
        return self._val



class _LowerSet:
    """The optimistic PLDs of an accountant's composition, one per (lower candidate, direction),
    each composed on first use on the grid ``d`` with the (possibly capped) ``counts``."""

    def __init__(self, acc, steps, counts, d, ncand, dirs):
        self.acc, self.steps, self.counts, self.d = acc, steps, counts, d
        self.ncand, self.dirs = ncand, list(dirs)
        self._built: dict = {}

    def build(self, c: int, direction: str):
        """The composed optimistic PLD (``None`` when it does not fit; the other ones still give
        a valid lower end). The first build of an accountant settles the grid and raises."""
        key = (c, direction)
        if key not in self._built:
            items = []
            for (ev, _), k in zip(self.steps, self.counts):
                if ev.lower:
                    pr = ev.lower[min(c, len(ev.lower) - 1)]
                    items.append((pr[0 if direction == "add" else 1], k))
            if not self._built:
                self._built[key] = self.acc._compose_steps(items, self.d, False)
            else:
                try:
                    self._built[key] = self.acc._compose_steps(items, self.d, False)
                except PLDTooLargeError:
                    self._built[key] = None
        return self._built[key]


def _privacy_loss(mechanism) -> PrivacyLoss:
    """The mechanism's own description of one step (:meth:`Mechanism.privacy_loss`)."""
    method = getattr(mechanism, "privacy_loss", None)
    loss = method() if callable(method) else None
    if loss is None:
        raise UnsupportedMechanismError(
            f"PLDAccountant has no privacy loss distribution for {type(mechanism).__name__}: its privacy_loss() "
            "gives no dominating pair (supported: Gaussian, Laplace, PureDP, ExponentialMechanism, ApproxDP, "
            "mechanisms stating pure or (epsilon, delta)-DP or their own pairs, and PoissonSampled of these)")
    return loss

class PLDAccountant(Accountant):
    """Privacy-loss-distribution accountant with a certified interval.

    Parameters
    ----------
    discretization : float in (0, 1]
        Grid spacing of the privacy loss (default 1e-4, as dp_accounting's
        ``value_discretization_interval``). Smaller is tighter and slower.
    tail_mass : float in (0, 1e-3)
        Mass truncated at each FFT composition (charged to delta; default 1e-15).
    rdp_fallback : bool
        Also compute the RDP bound of the same events and report the smaller upper bound.
    exact_gaussian : bool
        Answer pure Gaussian compositions from the exact Balle-Wang curve (default). With
        ``False`` they go through the discretised machinery like everything else.
    adaptive : bool
        Refine the grid for very narrow per-step losses and coarsen it when the composed PLD
        would exceed ``max_bins`` (see the module docstring). Without it an oversized PLD
        raises :class:`PLDTooLargeError`.
    max_bins : int
        Size budget (bins) of a composed PLD, at most
        :data:`~dpaudit.accounting.pld.distribution.MAX_BINS` (default 2**20: a query takes at
        most a second or two).

    Supported mechanisms: ``Gaussian``, ``Laplace``, ``PureDP``, ``ExponentialMechanism``
    (bounded range), ``ApproxDP``, any mechanism stating a finite ``pure_epsilon()`` or an
    ``approx_dp()`` (upper end only), and ``PoissonSampled`` of these (add/remove, both
    directions). Others raise :class:`~dpaudit.core.validation.UnsupportedMechanismError`.

    Example
    -------
    >>> from dpaudit import Gaussian, PLDAccountant, PoissonSampled
    >>> pld = PLDAccountant().compose(PoissonSampled(Gaussian(1.1), 0.01), 1000)
    >>> lo, up = pld.epsilon_interval(1e-5)    # certified: the exact epsilon(1e-5) lies in [lo, up]
    >>> print(f"[{lo:.5f}, {up:.5f}]")
    [1.51536, 1.51537]
    """

    name = "pld"
    label = "PLD (pessimistic)"

    def __init__(self, discretization=1e-4, *, tail_mass=1e-15, rdp_fallback: bool = True,
                 exact_gaussian: bool = True, adaptive: bool = True, max_bins=DEFAULT_MAX_BINS):
        super().__init__()
        self.discretization = check_positive("discretization", discretization)
        if not self.discretization <= 1.0:
            raise ValueError(f"discretization must be in (0, 1], got {self.discretization}")
        tail_mass = check_positive("tail_mass", tail_mass)
        if not tail_mass < 1e-3:
            raise ValueError(f"tail_mass must be in (0, 1e-3), got {tail_mass}")
        max_bins = check_count("max_bins", max_bins, minimum=1024)
        if max_bins > MAX_BINS:
            raise ValueError(f"max_bins must be an integer in [1024, {MAX_BINS}], got {max_bins}")
        self.tail_mass = tail_mass
        self.max_bins = max_bins
        self.rdp_fallback = bool(rdp_fallback)
        self.exact_gaussian = bool(exact_gaussian)
        self.adaptive = bool(adaptive)
        self._pairs: list[tuple[PrivacyLoss, int]] = []
        self._gauss: list[tuple[float, float, int]] = []  # (sensitivity, sigma, count)
        self._rdp: RDPAccountant | None = None
        self._rdp_ok = True
        self._cache: dict = {}
        #: how the last query was answered (method, effective discretization, sources)
        self.details: dict = {}

    # -- composition ---------------------------------------------------------------------------
    def _step(self, mechanism) -> PrivacyLoss:
        return _privacy_loss(mechanism)

    def _add(self, mechanism, loss: PrivacyLoss, count: int) -> bool:
        if loss.releases_nothing:
            return False
        if loss.gaussian is not None:
            self._gauss.append((*loss.gaussian, count))
        else:
            self._pairs.append((loss, count))
        self._cache = {}
        self._add_rdp(mechanism, count)
        return True

    def _add_rdp(self, mechanism, count):
        if not self.rdp_fallback or not self._rdp_ok:
            return
        try:
            if self._rdp is None:
                self._rdp = RDPAccountant.quiet()
            # (floating-point warnings of the RDP curves at extreme parameters are not the PLD's
            # business: a non-finite or inconsistent RDP bound is simply not used)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                self._rdp.compose(mechanism, count)
        except (UnsupportedMechanismError, ValueError, OverflowError, ArithmeticError):
            self._rdp_ok = False
            self._rdp = None

    # -- the exact Gaussian part -----------------------------------------------------------------
    def _mu2(self):
        if "mu2" not in self._cache:
            self._cache["mu2"] = gaussian_profile.mu_squared(self._gauss)
        return self._cache["mu2"]

    def _exact_path(self) -> bool:
        return not self._pairs and (self.exact_gaussian or not self._gauss)

    # -- construction of the composed PLDs -------------------------------------------------------
    def _steps(self):
        """[(PrivacyLoss, count)] including the composed Gaussian part as one step."""
        steps = list(self._pairs)
        if self._gauss:
            mu2 = self._mu2()
            mu = float(mu2 ** 0.5) if mu2 < 1e300 else math.inf
            up, lo = gaussian_pairs(mu)
            steps.append((PrivacyLoss.symmetric_pair(up, [lo], "gaussian"), 1))
        return steps

    def _tail(self, counts) -> float:
        return max(self.tail_mass / (10.0 * sum(counts)), 1e-300)

    def _choose_d(self, steps, counts, lower: bool = False) -> float:
        """Grid spacing: requested, refined for narrow per-step losses, coarsened to the budget
        (from the upper pairs, or with ``lower`` from the lower candidates)."""
        d = self.discretization
        if not self.adaptive:
            return d
        tail = self._tail(counts)
        scales, width = [], 0.0
        for (ev, _), k in zip(steps, counts):
            groups = ev.lower if lower else [ev.upper]
            w = 0.0
            for grp in groups:
                for pair in grp:  # (pairs of two atoms are composed exactly: nothing to refine)
                    if pair.has_finite and pair.continuous and math.isfinite(pair.scale) and pair.scale > 0:
                        scales.append(pair.scale)
                w = max(w, self._window_width(grp, k, tail))
            width += w
        want = min([d] + [s / _BINS_PER_SCALE for s in scales])
        floor = width / self.max_bins
        return max(min(d, want), floor, _D_MIN)

    def _window_width(self, pairs, k: int, tail: float) -> float:
        """Width (loss units) of the Chernoff window of the k-fold composition of the pairs,
        estimated on a coarse pessimistic discretisation (wider than a fine one)."""
        best = 0.0
        for pair in pairs:
            if not pair.has_finite:
                continue
            key = ("coarse", id(pair), tail)
            if key not in self._cache:
                lo, hi = loss_range(pair, tail)
                r = max(hi - lo, 1e-300)
                d0 = r / 2048.0
                self._cache[key] = (r, d0, discretise(pair, d0, tail, True) if d0 <= _D_MAX else None)
            r, d0, pld = self._cache[key]
            if k == 1 or pld is None:
                w = k * r
            else:
                i_lo, i_hi, _, _ = grid_window(pld, k, self.tail_mass)
                w = (i_hi - i_lo + 2) * d0
            best = max(best, w + 2.0 * d0)
        return best

    def _compose_steps(self, items, d, pessimistic: bool):
        """Compose [(pair, count)] on the grid d (one direction): every step becomes one or two
        factors (a discretised step and its count, a two-level block and its count, or an exact
        composition of a two-atom pair), all composed at once as one spectrum
        (:func:`~dpaudit.accounting.pld.distribution.spectral_compose`)."""
        tail = self._tail([k for _, k in items]) if items else 1.0
        factors = []
        for pair, k in items:
            factors.extend(self._factors(pair, k, d, tail, pessimistic))
        factors = [(f, n) for f, n in factors if n > 0]
        if not factors:
            return DiscretePLD.identity(d, pessimistic)
        return spectral_compose(factors, self.tail_mass, pessimistic, max_bins=self.max_bins)

    def _factors(self, pair, k: int, d: float, tail: float, pessimistic: bool):
        """[(discrete PLD, count)] whose composition stands for k steps of ``pair`` (cached: the
        lower candidates share most of their steps)."""
        cache = self._cache.setdefault("factors", {})
        key = (id(pair), k, d, tail, pessimistic)
        if key in cache:
            return cache[key][1]
        out = None
        if not pair.continuous:  # two atoms: the binomial composition, rounded once
            comp = compose_atomic(pair, k, d, tail, pessimistic, self.max_bins)
            if comp is not None:
                out = [(comp, 1)]
        if out is None and not pessimistic and pair.continuous:
            out = self._two_level_split(pair, k, d, tail)
        if out is None and not pessimistic and k >= 2 * _TWO_LEVEL_STEPS and pair.continuous:
            out = self._two_level(pair, k, d, tail)
        if out is None:
            out = [(discretise(pair, d, tail, pessimistic, self._cache.setdefault("cvals", {})), k)]
        cache[key] = (pair, out)  # (the pair is kept alive: its id stays unique)
        return out

    def _two_level(self, pair, k: int, d: float, tail: float):
        """Optimistic k-fold composition in two levels: the first r steps on a grid m times
        finer, coarsened to d (:func:`~dpaudit.accounting.pld.discretisation.coarsen`), then the
        FFT power of that r-fold PLD. A grid-based optimistic PLD of one step loses about
        (mass of each cell) x d x (cell width)/4 where the density varies within a cell (support
        edges, steep parts), which would add up over k steps; after r steps the density is smooth
        on the grid, so the coarse stage only pays second-order chord gaps. Returns the factors
        [(r-fold block, k // r), (one step, k % r)], or ``None`` when the fine grid does not fit
        the budget (the caller then uses one level)."""
        m = _TWO_LEVEL_REFINE
        d_f = d / m
        if d_f < _D_MIN:
            return None
        # the fine grid only needs to resolve the bulk: its range leaves out a tail of 1e-12
        # (optimistically that mass is moved down to the last grid point, not dropped)
        tail_f = max(tail, 1e-12)
        i1, i_n = grid_for(pair, d_f, tail_f)
        if i_n - i1 + 1 > self.max_bins // 2:
            return None
        r = _TWO_LEVEL_STEPS
        try:
            fine = discretise(pair, d_f, tail_f, False)
            i_lo, i_hi, _, _ = chernoff_window(fine, r, self.tail_mass)
            if i_hi - i_lo + 1 > self.max_bins:  # the r-fold fine PLD must fit the budget too
                return None
            # (its charges are multiplied by k/r below: extended precision for the power then)
            block = coarsen(self_compose(fine, r, self.tail_mass, extended=k // r >= 64, max_bins=self.max_bins), m)
        except PLDTooLargeError:
            return None
        out = [(block, k // r)]
        rest = k % r
        if rest:  # at most r - 1 steps: one level is good enough for them
            out.append((discretise(pair, d, tail, False, self._cache.setdefault("cvals", {})), rest))
        return out

    def _two_level_split(self, pair, k: int, d: float, tail: float):
        """The first level of :meth:`_two_level` with the fine grid on the core of the loss only
        (:func:`~dpaudit.accounting.pld.discretisation.hybrid_split`: one step = A + B, A on the
        fine grid, B on the coarse one). The r-fold composition of A + B is the binomial sum
        sum_j C(r, j) A^(r-j) B^j; each A^(r-j) (a small composition on the fine grid) is
        coarsened (:func:`~dpaudit.accounting.pld.discretisation.coarsen_part`), for j >= 3 the
        coarsened A is composed r - j times instead (those terms weigh C(r, j) |B|^j), terms whose
        total mass is below 1e-18 are left out (a lower end may drop mass), and the sum is
        composed as one block (:func:`~dpaudit.accounting.pld.distribution.poly_compose`).
        ``None`` when the split does not apply (the full fine grid is used then)."""
        m = _TWO_LEVEL_REFINE
        r = _block_size(k)
        cv = self._cache.setdefault("cvals", {})
        try:
            hs = hybrid_split(pair, d, m, tail, cv, max_fine=min(self.max_bins // 16, 2**17))
            if hs is None:
                return None
            A, B, s_h = hs
            ext = k // r >= 64
            mA = A.finite_mass
            mB = B.finite_mass + B.inf
            if not mB > 0.0:  # the core is the whole loss: the full fine grid costs the same
                return None
            coarse = {}

            def coarse_power(a: int):
                if a not in coarse:
                    # (A^a is composed k/r times inside its block when it is A^r: extended
                    # precision then; the lighter terms' errors enter scaled by their weights)
                    ext_a = ext and a >= r - 1
                    coarse[a] = coarsen_part(self_compose(A, a, self.tail_mass, extended=ext_a, max_bins=self.max_bins), m)
                return coarse[a]

            q_def = pair.q_deficit()

            def block_of(rr: int):
                terms = []
                for j in range(rr + 1):
                    w = float(math.comb(rr, j))
                    weight = w * mA ** (rr - j) * mB ** j
                    if j > 0 and weight < 1e-18:
                        break
                    fs = []
                    if rr - j > 0:
                        # the coarsened A^(r-j) where the term weighs (its coarsening is second
                        # order); the coarsened A composed r - j times where it does not
                        exact = j == 0 or weight > _EXACT_TERM
                        fs.append((coarse_power(rr - j), 1) if exact else (coarse_power(1), rr - j))
                    if j > 0:
                        fs.append((B, j))
                    terms.append((w, fs))
                blk = poly_compose(terms, self.tail_mass, max_bins=self.max_bins, extended=ext)
                # the split step's own slack: H'_{A+B} <= H + s_h, composed rr times (hybrid argument)
                blk.slack += rr * s_h
                # the block stands for rr steps of the pair: lift it onto the line below their curve
                q_r = -math.expm1(rr * math.log1p(-q_def)) * (1.0 - 4.0 * _U) if 0.0 < q_def < 1.0 else 0.0
                return lift_left(blk, q_r)

            out = [(block_of(r), k // r)]
            rest = k % r
            if rest:
                out.append((block_of(rest), 1))
        except PLDTooLargeError:
            return None
        return out

    def _directions(self, steps):
        return ["add"] if all(ev.symmetric for ev, _ in steps) else ["add", "remove"]

    def _min_scale(self, steps) -> float:
        scales = [pair.scale for ev, _ in steps for grp in ev.lower for pair in grp
                  if pair.has_finite and pair.continuous and math.isfinite(pair.scale) and pair.scale > 0]
        return min(scales) if scales else math.inf

    def _build(self, pessimistic: bool):
        """Composed PLDs: {direction: PLD} (pessimistic; ``None`` when the composition is beyond
        the PLD's reach) or [{direction: PLD}, ...] (optimistic, one per candidate); built on
        first use, cached until the next compose."""
        key = "pess" if pessimistic else "opt"
        if key in self._cache:
            return self._cache[key]
        steps = self._steps()
        dirs = self._directions(steps)
        if pessimistic:
            out = self._build_upper(steps, dirs)
        else:
            out = self._build_lower(steps, dirs)
        self._cache[key] = out
        return out

    def _build_upper(self, steps, dirs):
        counts = [k for _, k in steps]
        if max(counts) > _MAX_FFT_COUNT:
            return None
        d = self._choose_d(steps, counts)
        while d <= _D_MAX:
            try:
                res = {}
                for direction in dirs:
                    items = [(ev.upper[0 if direction == "add" else 1], k) for ev, k in steps]
                    res[direction] = self._compose_steps(items, d, True)
                self._cache["d"] = d
                return res
            except PLDTooLargeError as exc:
                if not self.adaptive:
                    raise
                d *= _retry_factor(exc)
        if not self.adaptive:
            raise PLDTooLargeError(f"the composed PLD needs a grid spacing above {_D_MAX:g}")
        return None

    def _build_lower(self, steps, dirs):
        """Optimistic PLDs, as a :class:`_LowerSet` composing each (candidate, direction) on first
        use (a lower end is a maximum over them: a direction whose upper end is already below the
        lower end found needs none). A lower bound from fewer steps is valid (composition is
        monotone), so when the full counts would need a grid much coarser than the losses (where
        rounding makes the optimistic PLD vacuous) the counts are capped until the grid resolves
        them; grid and counts are settled by composing the first candidate in the direction asked
        for first."""
        good = max(self.discretization, self._min_scale(steps) / 4.0)
        cap = min(max([k for _, k in steps] + [1]), _MAX_FFT_COUNT)
        ncand = max([len(ev.lower) for ev, _ in steps] + [0])
        order = [x for x in self._cache.get("dir_order", dirs) if x in dirs] or list(dirs)
        widen = 1.0  # grid made coarser than the budget estimate after a composition did not fit
        for _ in range(200):
            counts = [min(k, cap) for _, k in steps]
            d = self._choose_d(steps, counts, lower=True) * widen
            if (d > good or d > _D_MAX) and cap > 1:
                cap = max(cap // 2, 1)
                continue
            if d > _D_MAX:
                return _LowerSet(self, steps, [], d, 0, dirs)
            lower = _LowerSet(self, steps, counts, d, ncand, dirs)
            try:
                if ncand:
                    lower.build(0, order[0])
            except PLDTooLargeError as exc:
                # fewer steps always give a valid lower end; without `adaptive` only the power's
                # own range (not the grid budget) may cap the counts
                if cap == 1 or not (self.adaptive or isinstance(exc, PLDPowerRangeError)):
                    raise
                f = _retry_factor(exc)
                if (self.adaptive and not isinstance(exc, PLDPowerRangeError) and f < 4.0
                        and d * f <= min(good, _D_MAX) and widen < 2.0):
                    widen *= f  # just over the budget: a slightly coarser grid first
                    continue
                cap = max(cap // 2, 1)
                widen = 1.0
                continue
            self._cache["d_lower"] = d
            self._cache["lower_counts_capped"] = any(c < k for c, (_, k) in zip(counts, steps))
            return lower
        return _LowerSet(self, steps, [], 1.0, 0, dirs)  # pragma: no cover - the cap reaches 1 well within the loop

    @property
    @blas_limited
    def effective_discretization(self) -> float | None:
        """Grid spacing actually used (``None`` when the answer is exact: pure Gaussian or empty)."""
        if self._exact_path():
            return None
        if self._build(True) is None:
            self._build(False)
            return self._cache.get("d_lower")
        return self._cache.get("d")

    # -- queries ---------------------------------------------------------------------------------
    def _nonprivate(self) -> bool:
        """An unsampled step whose pair is the non-private one: delta(eps) = 1 for every eps."""
        return any(ev.upper is not None and ev.upper[0].inf_mass >= 1.0 and ev.upper[1].inf_mass >= 1.0
                   for ev, _ in self._pairs)

    def _nonprivate_attained(self) -> bool:
        """A non-private step whose non-private pair is attained (``exact``, e.g. zero noise): the
        lower end is then the trivial curve too (delta = 1, epsilon = inf), exactly."""
        return any(ev.exact and ev.upper is not None and all(p.inf_mass >= 1.0 for p in ev.upper)
                   for ev, _ in self._pairs)

    def epsilon_details(self, delta) -> dict:
        lo, up = self.epsilon_interval(delta)
        return {"epsilon": up, "lower": lo, "upper": up}

    def epsilon_interval(self, delta) -> tuple[float, float]:
        """(lower, upper) bracketing the epsilon at ``delta`` of the composition: ``upper`` is a
        certified upper bound, ``lower`` is attained by some composition of the classes."""
        return self._epsilon_interval(check_delta("delta", delta), True)

    def delta_interval(self, epsilon) -> tuple[float, float]:
        """(lower, upper) bracketing the delta at ``epsilon`` of the composition."""
        return self._delta_interval(check_epsilon("epsilon", epsilon), True)

    def epsilon(self, delta) -> float:
        """Certified upper bound on epsilon at ``delta`` (``inf`` when none)."""
        return self._epsilon_interval(check_delta("delta", delta), False)[1]

    def delta(self, epsilon) -> float:
        """Certified upper bound on delta at ``epsilon`` (at most 1)."""
        return self._delta_interval(check_epsilon("epsilon", epsilon), False)[1]

    def _gaussian_lower_eps(self, delta: float) -> float:
        """Lower ends from closed forms of sub-compositions (composition is monotone): the
        unsampled Gaussian part, and each Poisson-subsampled Gaussian step, whose REMOVE curve is
        at least q delta_G(e - log q) (so its epsilon at delta < q is at least
        eps_G(delta/q) + log q)."""
        out = 0.0
        if self._gauss:
            out = gaussian_profile.epsilon_bounds(self._mu2(), delta)[0]
        for ev, _ in self._pairs:
            if ev.gaussian_sub is not None:
                sens, sigma, q = ev.gaussian_sub
                if delta < q:
                    v = gaussian_profile.epsilon_bounds(gaussian_profile.mu_squared([(sens, sigma, 1)]), delta / q)[0]
                    out = max(out, round_down(v + math.log(q)))
        return out

    def _gaussian_lower_delta(self, epsilon: float) -> float:
        out = 0.0
        if self._gauss:
            out = gaussian_profile.delta_bounds(self._mu2(), epsilon)[0]
        for ev, _ in self._pairs:
            if ev.gaussian_sub is not None:
                sens, sigma, q = ev.gaussian_sub
                v = gaussian_profile.delta_bounds(gaussian_profile.mu_squared([(sens, sigma, 1)]), epsilon - math.log(q))[0]
                out = max(out, round_down(q * v))
        return out

    @blas_limited
    def _epsilon_interval(self, delta: float, want_lower: bool) -> tuple[float, float]:
        if self._exact_path():
            if not self._gauss:
                self.details = {"method": "empty"}
                return 0.0, 0.0
            self.details = {"method": "exact-gaussian", "mu2": float(min(self._mu2(), Fraction(_FMAX)))}
            return gaussian_profile.epsilon_bounds(self._mu2(), delta)
        self.details = {"method": "pld", "upper_source": "pld"}
        ups = None
        if self._nonprivate():
            up = math.inf
            self.details["upper_source"] = "non-private"
        else:
            built = self._build(True)
            if built is None:
                up = math.inf
                self.details["upper_source"] = "none (count beyond the FFT range)"
            else:
                ups = {k: epsilon_for_delta(v, delta) for k, v in built.items()}
                up = max(ups.values())
                up = round_up(up) if up != 0.0 else 0.0  # (a 0 is certified exactly: delta is met at epsilon 0)
                self.details["directions"] = sorted(built)
                self._cache["dir_order"] = sorted(ups, key=lambda x: -ups[x])
            self.details["pld_upper"] = up
        self.details["effective_discretization"] = self._cache.get("d")
        lower = _Lazy(lambda: self._lower_eps(delta, ups))
        up = self._apply_rdp(up, lower, lambda r: r.epsilon(delta))
        if not want_lower:
            return math.nan, up
        lo = lower()
        self.details["lower"] = lo
        return lo, up

    def _lower_eps(self, delta: float, uppers: dict | None = None) -> float:
        """Largest certified lower end over the closed forms and the (candidate, direction)
        optimistic PLDs; ``uppers``: each direction's upper end, a direction whose upper end is
        not above the best lower end found is not composed."""
        if self._nonprivate_attained():
            return math.inf
        best = self._gaussian_lower_eps(delta)
        lower = self._build(False)
        order = sorted(lower.dirs, key=lambda x: -(uppers or {}).get(x, math.inf))
        for c in range(lower.ncand):
            for direction in order:
                if uppers is not None and direction in uppers and not uppers[direction] > best:
                    continue
                v = lower.build(c, direction)
                if v is not None:
                    best = max(best, epsilon_for_delta(v, delta))
        if best == math.inf:
            return math.inf
        return max(round_down(min(best, _FMAX)), 0.0)

    def _lower_delta(self, epsilon: float, uppers: dict | None = None) -> float:
        if self._nonprivate_attained():
            return 1.0
        best = self._gaussian_lower_delta(epsilon)
        lower = self._build(False)
        order = sorted(lower.dirs, key=lambda x: -(uppers or {}).get(x, math.inf))
        for c in range(lower.ncand):
            for direction in order:
                if uppers is not None and direction in uppers and not uppers[direction] > best:
                    continue
                v = lower.build(c, direction)
                if v is not None:
                    best = max(best, delta_for_epsilon(v, epsilon))
        return max(round_down(best), 0.0)

    def _apply_rdp(self, up: float, lower, query) -> float:
        if not (self.rdp_fallback and self._rdp is not None):
            return up
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                r = float(query(self._rdp))
        except (ValueError, OverflowError, ArithmeticError):
            return up
        self.details["rdp_upper"] = r
        if math.isnan(r) or not r < up:
            return up
        if r < lower():
            # an upper bound below a certified lower end: one of them is wrong; keep the PLD's
            self.details["rdp_inconsistent"] = True
            return up
        self.details["upper_source"] = "rdp"
        return r

    @blas_limited
    def _delta_interval(self, epsilon: float, want_lower: bool) -> tuple[float, float]:
        if self._exact_path():
            if not self._gauss:
                self.details = {"method": "empty"}
                return 0.0, 0.0
            self.details = {"method": "exact-gaussian", "mu2": float(min(self._mu2(), Fraction(_FMAX)))}
            return gaussian_profile.delta_bounds(self._mu2(), epsilon)
        self.details = {"method": "pld", "upper_source": "pld"}
        ups = None
        if self._nonprivate():
            up = 1.0
            self.details["upper_source"] = "non-private"
        else:
            built = self._build(True)
            if built is None:
                up = 1.0
                self.details["upper_source"] = "none (count beyond the FFT range)"
            else:
                ups = {k: delta_for_epsilon(v, epsilon) for k, v in built.items()}
                up = min(round_up(max(ups.values())), 1.0)
                self.details["directions"] = sorted(built)
                self._cache["dir_order"] = sorted(ups, key=lambda x: -ups[x])
            self.details["pld_upper"] = up
        self.details["effective_discretization"] = self._cache.get("d")
        lower = _Lazy(lambda: self._lower_delta(epsilon, ups))
        up = self._apply_rdp(up, lower, lambda r: r.delta(epsilon))
        if not want_lower:
            return math.nan, up
        lo = lower()
        self.details["lower"] = lo
        return lo, up

    def __repr__(self) -> str:
        return f"PLDAccountant(discretization={self.discretization:g}, {len(self._events)} events)"
