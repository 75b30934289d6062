"""Renyi divergence estimation from samples, with intervals and stated assumptions.

``renyi_divergence(samples_p, samples_q, alpha, method=...)`` returns an :class:`Estimate`
of D_alpha(P || Q) = 1/(alpha-1) log E_Q[(p/q)^alpha] (Renyi 1961; van Erven, Harremoes 2014).
Closed forms come from :mod:`dpaudit.core.gaussian_divergence` (Gil, Alajaji, Linder 2013;
Hendrikx, Mangold, Bellet 2024, Lemma 2), noncentral laws from :mod:`dpaudit.core.noncentral`.
Guide and measured coverage: docs/renyi-estimation.md.

``"gaussian"`` (parametric, equal isotropic covariance):
    D_alpha = alpha ||mu_P - mu_Q||^2 / (2 s^2). With m = mean_P - mean_Q,
    c = 1/n_P + 1/n_Q and the pooled variance s^2 (nu = d (n_P + n_Q - 2) degrees of freedom),
    F = ||m||^2 / (d c s^2) follows the noncentral F(d, nu, lambda) law with
    lambda = ||Delta||^2 / (sigma^2 c) (Johnson, Kotz, Balakrishnan 1995, ch. 30). Inverting its
    distribution function in lambda (monotone) gives an exact equal-tailed interval, and
    D_alpha = alpha c lambda / 2. With ``sigma`` given (known noise) the statistic
    ||m||^2 / (sigma^2 c) is noncentral chi-square(d, lambda) instead (JKB ch. 29). The point
    value is the median-unbiased lambda. Each end misses with probability exactly beta/2 for
    every lambda > 0; at lambda = 0 (P = Q) the lower end is 0 with probability 1 - beta/2 and
    the upper end cannot miss, so the coverage there is 1 - beta/2. When no lambda >= 0 is
    consistent with a small statistic (it lies below its beta/2 quantile at lambda = 0) the
    interval is reported as {0} (this happens with probability <= beta/2 and keeps coverage).
``"gaussian-unequal"`` (parametric, P = N(mu_P, s_P^2 I), Q = N(mu_Q, s_Q^2 I)):
    the divergence depends on theta = ||Delta||^2 / s_Q^2 and r = s_P^2 / s_Q^2 only:
    D = alpha theta / (2 q) + d [pm(r - 1) + pm(-(alpha-1)(r-1)) / (alpha-1)] / 2 with
    q = 1 - (alpha-1)(r-1) = s_alpha^2 / s_Q^2 and pm(u) = u - log1p(u); infinite when q <= 0,
    i.e. r >= alpha / (alpha - 1). Two exact pivots (Snedecor-Fisher and Lukacs' independence
    theorem): R = r_hat / r ~ F(k_P, k_Q) (k = d (n - 1)) and, given r,
    F_r = (||m||^2 / (d c_r)) / ((SS_P / r + SS_Q) / (k_P + k_Q)) ~ F'(d, k_P + k_Q, theta / c_r),
    c_r = r/n_P + 1/n_Q. R depends on SS_P/(SS_P + r SS_Q) only, F_r on m and SS_P/r + SS_Q,
    so the two are independent at the true r; each is inverted at level sqrt(confidence), and
    the joint region {r in I_r, theta / c_r in the noncentral-F interval of F_r} holds the
    truth with probability exactly ``confidence``. The interval reported is [min D, max D]
    over that region (coverage >= confidence; conservative). For fixed theta, D is convex in r,
    and on a piece [r_a, r_b] of I_r the theta limits are bounded by monotonicity (c_r is
    increasing, the F_r range follows from the convex function c_r (SS_P/r + SS_Q), the
    noncentral-F limits increase with the statistic); a branch-and-bound over pieces of I_r
    (at most ``_BB_MAX_PIECES`` pieces) therefore returns a lower end that is never above
    the exact minimum and an upper end never below the exact maximum, within 0.5 % of them.
    When the whole region lies at r >= alpha/(alpha-1) the data are consistent only with an
    infinite divergence: ``upper = value = inf`` and ``lower`` is the largest finite double
    (on the confidence event the divergence is infinite, so every finite number is a valid
    lower end; the largest one says most), flagged in ``details``.
``"nonparametric"`` (no family assumption):
    samples are reduced to one dimension (vectors: projection on the mean difference of a
    held-out half) and then to a binary threshold statistic chosen on the held-out half. By
    data processing, D_alpha(P || Q) >= D_alpha(Bern(p) || Bern(q)) with p = P[T > t],
    q = Q[T > t]; with one-sided Clopper-Pearson bounds p >= p-, q <= q+ (beta/2 each) the
    minimum of the binary divergence over the confidence box, D_alpha(Bern(p-) || Bern(q+)),
    is a lower confidence bound. There is no upper bound (``upper = inf``); the value is the
    plug-in binary divergence on the evaluation half.

Orders: ``alpha`` must be finite and > 1 here (D_inf of two Gaussian laws is infinite unless
they coincide, so no finite-sample interval for it can be informative); the closed form
:func:`gaussian_renyi` accepts ``alpha = inf``. Identical constant samples (every value of both
samples equal) give value 0 and the interval [0, inf] with ``details["degenerate"]`` for the
fits that estimate variances (pooled ``"gaussian"``, ``"gaussian-unequal"``): nothing separates P
from Q, but with no spread nothing bounds the divergence either. Other zero-variance samples
raise ValueError there (with a known ``sigma`` no variance is estimated).
"""

from __future__ import annotations

import heapq
import math
import sys

import numpy as np
from scipy import special as sc

from dpaudit.audit.stats.binomial import cp_lower, cp_upper
from dpaudit.audit.stats.estimate import Estimate
from dpaudit.audit.stats.thresholds import candidate_thresholds
from dpaudit.core.gaussian_divergence import renyi_gaussians_moments
from dpaudit.core.noncentral import invert_noncentrality, noncentrality_interval
from dpaudit.core.numeric import round_down, round_up
from dpaudit.core.seeds import as_seed_sequence
from dpaudit.core.threads import blas_limited
from dpaudit.core.validation import check_confidence, check_count, check_positive, check_real

__all__ = ["renyi_divergence", "gaussian_renyi", "bernoulli_renyi", "RENYI_METHODS", "equal_interval",
           "unequal_interval"]

RENYI_METHODS = ("gaussian", "gaussian-unequal", "nonparametric")

#: largest number of pieces of the variance-ratio interval in the unequal-variance branch-and-bound
_BB_MAX_PIECES = 48
#: relative gap at which the branch-and-bound stops
_BB_RTOL = 5e-3
_BIG = sys.float_info.max
_LOG_BIG = math.log(_BIG)


def _as_samples(x, name):
    try:
        a = np.asarray(x)
    except Exception as exc:  # ragged nested sequences and the like
        raise ValueError(f"{name} must be an array of numbers of shape (n,) or (n, d): {exc}") from None
    if a.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold real numbers, got dtype {a.dtype}")
    a = a.astype(float)
    if a.ndim == 0:
        raise ValueError(f"{name} must be an array of shape (n,) or (n, d), got a scalar")
    if a.ndim == 1:
        a = a[:, None]
    elif a.ndim != 2:
        a = a.reshape(a.shape[0], -1)
    if a.shape[0] < 2:
        raise ValueError(f"{name} must hold at least 2 samples, got {a.shape[0]}")
    if a.shape[1] < 1:
        raise ValueError(f"{name} must have dimension >= 1")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite (no inf or NaN)")
    return a


def gaussian_renyi(alpha, mean_p, mean_q, var_p, var_q, dim: int = 1):
    """D_alpha(N(mean_p, var_p I_d) || N(mean_q, var_q I_d)) (Gil et al. 2013; RGM Lemma 2).

    Thin wrapper of :func:`dpaudit.core.gaussian_divergence.renyi_gaussians_moments`: the
    squared mean distance is taken over the last axis of ``mean_p - mean_q``; vectorised over
    the means and the variances. ``alpha > 1``, ``inf`` allowed (then the divergence is
    infinite unless both laws coincide); ``inf`` where s_alpha^2 = alpha var_q + (1 - alpha)
    var_p <= 0.
    """
    alpha = check_real("alpha", alpha, allow_inf=True)
    if not alpha > 1.0:
        raise ValueError(f"alpha must be > 1, got {alpha}")
    dim = check_count("dim", dim, minimum=1)
    mp_, mq_ = np.asarray(mean_p, dtype=float), np.asarray(mean_q, dtype=float)
    vp, vq = np.asarray(var_p, dtype=float), np.asarray(var_q, dtype=float)
    for name, v in (("mean_p", mp_), ("mean_q", mq_), ("var_p", vp), ("var_q", vq)):
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{name} must be finite")
    if np.any(vp <= 0) or np.any(vq <= 0):
        raise ValueError("var_p and var_q must be > 0")
    dist2 = np.sum((mp_ - mq_) ** 2, axis=-1)
    return renyi_gaussians_moments(alpha, dist2, vp, vq, dim)


def bernoulli_renyi(alpha: float, p, q):
    """D_alpha(Bern(p) || Bern(q)) = log(p^a q^(1-a) + (1-p)^a (1-q)^(1-a)) / (a-1), in log space."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(p > 0, alpha * np.log(p) + (1 - alpha) * np.log(q), -np.inf)
        t0 = np.where(p < 1, alpha * np.log1p(-p) + (1 - alpha) * np.log1p(-q), -np.inf)
        val = np.logaddexp(t1, t0) / (alpha - 1.0)
    val = np.where(np.isnan(val), np.inf, val)
    val = np.maximum(val, 0.0)
    return float(val) if np.ndim(val) == 0 else val


# ------------------------------------------------------------------------ sufficient statistics
def _sufficient(P, Q):
    """Means, sums of squared deviations and ||m||^2 after an exact power-of-two rescaling.

    Every Gaussian estimator here is invariant under a common rescaling of the data (with
    ``sigma`` rescaled alike), so the data are scaled by 2^-k (exact) to max |x| < 1, which keeps
    sums of squares of extreme values from overflowing or underflowing.
    """
    top = max(float(np.max(np.abs(P))), float(np.max(np.abs(Q))))
    k = math.frexp(top)[1] if top > 0 else 0
    Ps, Qs = np.ldexp(P, -k), np.ldexp(Q, -k)
    mp_, mq_ = Ps.mean(axis=0), Qs.mean(axis=0)
    ss_p = float(np.sum((Ps - mp_) ** 2))
    ss_q = float(np.sum((Qs - mq_) ** 2))
    m = mp_ - mq_
    return {"k": k, "ss_p": ss_p, "ss_q": ss_q, "m2": float(m @ m),
            "constant_equal": bool(np.all(P == P[0, 0]) and np.all(Q == P[0, 0]))}


def _ldexp_or_none(x: float, e: int):
    """x 2^e when that is a normal double, else None."""
    try:
        v = math.ldexp(x, e)
    except OverflowError:
        return None
    return v if v >= sys.float_info.min else None


def _exp_or_inf(x: float) -> float:
    """exp(x), ``inf`` beyond the double range."""
    return math.exp(x) if x < _LOG_BIG else math.inf


def _unscale(x: float, e: int) -> float:
    """x 2^e, +-inf when that exceeds the double range (reporting only)."""
    try:
        return math.ldexp(x, e)
    except OverflowError:
        return math.copysign(math.inf, x)


def _degenerate(n_p, n_q, d, method, confidence, assumption):
    return Estimate(
        value=0.0, lower=0.0, upper=math.inf, method=method, assumption=assumption, confidence=confidence,
        details={"n_p": n_p, "n_q": n_q, "dim": d,
                 "degenerate": "every value of both samples is the same constant: nothing separates P from Q "
                               "(value 0) but with zero spread nothing bounds the divergence (upper = inf)"})


# ------------------------------------------------------------------------------ equal variances
def equal_interval(m2, ss, n_p, n_q, d, alpha, confidence=0.95, sigma=None, scale_exp=0):
    """Interval of the ``"gaussian"`` method from sufficient statistics.

    ``m2 = ||mean_P - mean_Q||^2``; ``ss`` the pooled sum of squared deviations (both samples,
    all n d entries; ignored when ``sigma`` is given); sample sizes, dimension, order; ``m2`` and
    ``ss`` may be given for the data divided by 2^scale_exp (``sigma`` is in the original units).
    Returns ``(lower, value, upper, details)`` for D_alpha = alpha c lambda / 2 (used by
    :func:`renyi_divergence` and by the coverage benchmark). ``ss`` must be > 0 without sigma.
    """
    c = 1.0 / n_p + 1.0 / n_q
    details: dict = {}
    if sigma is None:
        nu = d * (n_p + n_q - 2)
        s2 = ss / nu
        stat = m2 / (d * c * s2)
        lam_lo, lam_med, lam_hi = noncentrality_interval(stat, d, nu, confidence=confidence)
        details.update(nu=nu, statistic=stat)
        scale = alpha * c / 2.0
        lo, med, hi = scale * lam_lo, scale * lam_med, scale * lam_hi
    else:
        log_rs = math.log(sigma) - scale_exp * math.log(2.0)  # sigma in the units of m2
        log_stat = -math.inf if m2 == 0.0 else math.log(m2) - 2.0 * log_rs - math.log(c)
        if log_stat < 600.0:
            rs = _ldexp_or_none(sigma, -scale_exp)
            stat = m2 / (rs * rs * c) if rs is not None and math.isfinite(m2 / (rs * rs * c)) else math.exp(log_stat)
            lam_lo, lam_med, lam_hi = noncentrality_interval(stat, d, None, confidence=confidence)
            details.update(statistic=stat)
            scale = alpha * c / 2.0
            lo, med, hi = scale * lam_lo, scale * lam_med, scale * lam_hi
        else:
            # stat > e^600: sqrt(X) = sqrt(lambda) + Z_1 + O(d / sqrt(lambda)) to double precision, so
            # sqrt(lambda) lies in sqrt(stat) -+ z; D = alpha (sqrt(c lambda))^2 / 2 with
            # sqrt(c stat) = ||m|| / sigma computed in log space
            z = float(sc.ndtri(1.0 - 0.5 * (1.0 - confidence)))
            log_b = 0.5 * math.log(m2) - log_rs  # b = sqrt(c stat) >= sqrt(c) e^300
            shift = z * math.sqrt(c) * math.exp(-log_b)  # relative; below 1e-100 here
            log_half_a = math.log(0.5 * alpha)
            lo, med, hi = (_exp_or_inf(log_half_a + 2.0 * (log_b + math.log1p(s))) for s in (-shift, 0.0, shift))
            # exp of an argument ~700 known to a few ulps: widen the ends by 1e-12 relative
            lo, hi = lo * (1.0 - 1e-12), hi * (1.0 + 1e-12)
            details.update(statistic=math.inf, log_statistic=log_stat)
    # a lower end beyond the largest double: that double is still below it (valid)
    lower = max(0.0, float(round_down(lo))) if math.isfinite(lo) else _BIG
    upper = float(round_up(hi)) if hi > 0.0 else 0.0  # 0: the {0} convention, exact
    value = min(max(med, lower), upper)
    return lower, float(value), upper, details


def _gaussian_equal(P, Q, alpha, confidence, sigma):
    n_p, n_q, d = P.shape[0], Q.shape[0], P.shape[1]
    st = _sufficient(P, Q)
    kind = "known sigma" if sigma is not None else "pooled variance"
    method = f"gaussian (equal isotropic covariance, {kind}, exact noncentral " + \
             ("chi2(d, lambda)" if sigma is not None else "F(d, nu, lambda)") + " interval)"
    assumption = "P and Q are Gaussian with the same isotropic covariance" + \
                 (f" sigma^2 I, sigma = {sigma:g}" if sigma is not None else " (estimated by pooling)")
    details = {"n_p": n_p, "n_q": n_q, "dim": d, "mean_distance2": _unscale(st["m2"], 2 * st["k"])}
    ss = st["ss_p"] + st["ss_q"]
    if sigma is None:
        if ss <= 0.0:
            if st["constant_equal"]:
                return _degenerate(n_p, n_q, d, method, confidence, assumption)
            raise ValueError("samples_p and samples_q both have zero variance (each is constant, at different "
                             "values): the Gaussian model does not apply")
        details["pooled_variance"] = _unscale(ss / (d * (n_p + n_q - 2)), 2 * st["k"])
    else:
        details["sigma"] = sigma
    lower, value, upper, det = equal_interval(st["m2"], ss, n_p, n_q, d, alpha, confidence, sigma, st["k"])
    details.update(det)
    return Estimate(value=value, lower=lower, upper=upper, method=method, assumption=assumption,
                    confidence=confidence, details=details)


# ---------------------------------------------------------------------------- unequal variances
class _UnequalRegion:
    """The joint confidence region of (theta, r) = (||Delta||^2 / s_Q^2, s_P^2 / s_Q^2).

    See the module docstring; all quantities are in the rescaled units of :func:`_sufficient`
    (theta and r are scale free). Noncentral-F limits are cached per statistic value.
    """

    def __init__(self, m2, ss_p, ss_q, n_p, n_q, d, alpha, confidence):
        self.m2, self.ss_p, self.ss_q = m2, ss_p, ss_q
        self.n_p, self.n_q, self.d, self.alpha = n_p, n_q, d, alpha
        self.k_p, self.k_q = d * (n_p - 1), d * (n_q - 1)
        self.k = self.k_p + self.k_q
        self.level = math.sqrt(confidence)  # each pivot; independent, so jointly `confidence`
        self.g2 = 0.5 * (1.0 - self.level)
        self.r_hat = (ss_p / self.k_p) / (ss_q / self.k_q)
        f_hi = float(sc.fdtri(self.k_p, self.k_q, 1.0 - self.g2))
        f_lo = float(sc.fdtri(self.k_p, self.k_q, self.g2))
        self.r_lo, self.r_hi = self.r_hat / f_hi, self.r_hat / f_lo
        self.rho = alpha / (alpha - 1.0)  # D finite iff r < rho
        self.r_star = math.sqrt(ss_p * n_p / (ss_q * n_q))  # minimiser of pi
        self._lam = {}

    def c(self, r):
        return r / self.n_p + 1.0 / self.n_q

    def pi(self, r):
        """c_r (SS_P / r + SS_Q): convex in r, minimal at r_star."""
        return self.c(r) * (self.ss_p / r + self.ss_q)

    def stat(self, r):
        """F_r = (||m||^2 / (d c_r)) / ((SS_P / r + SS_Q) / k)."""
        return self.m2 * self.k / (self.d * self.pi(r))

    def lam(self, F, which):
        """Noncentral-F limits at level sqrt(confidence): 'lo' (sf = g/2, left bracket end),
        'hi' (cdf = g/2, right bracket end), 'med' (cdf = 1/2)."""
        key = (F, which)
        if key not in self._lam:
            if which == "lo":
                v = invert_noncentrality(F, self.d, self.k, sf=self.g2, side="lower", rtol=_INNER_RTOL)
            elif which == "hi":
                v = invert_noncentrality(F, self.d, self.k, cdf=self.g2, side="upper", rtol=_INNER_RTOL)
            else:
                v = invert_noncentrality(F, self.d, self.k, cdf=0.5, side="lower", rtol=_INNER_RTOL)
            self._lam[key] = v
        return self._lam[key]

    def theta(self, r, which):
        return self.c(r) * self.lam(self.stat(r), which)

    def D(self, theta, r):
        return float(renyi_gaussians_moments(self.alpha, theta, r, 1.0, self.d))

    def dD(self, theta, r):
        """dD/dr for fixed theta (r < rho)."""
        a = self.alpha
        q = 1.0 - (a - 1.0) * (r - 1.0)
        return a * theta * (a - 1.0) / (2.0 * q * q) + 0.5 * self.d * (1.0 / q - 1.0 / r)

    def convex_min(self, theta, ra, rb):
        """A lower bound on min over [ra, rb] (rb <= rho) of the convex r -> D(theta, r)."""
        if self.dD(theta, ra) >= 0.0:
            return self.D(theta, ra)
        if rb < self.rho and self.dD(theta, rb) <= 0.0:
            return self.D(theta, rb)
        lo, hi = ra, rb
        for _ in range(200):  # bisection on the increasing derivative
            mid = 0.5 * (lo + hi)
            if mid <= lo or mid >= hi:
                break
            if mid >= self.rho or self.dD(theta, mid) > 0.0:
                hi = mid
            else:
                lo = mid
        r0 = lo
        slope = self.dD(theta, r0)
        # the tangent of a convex function lies below it on [ra, rb]
        return max(self.D(theta, r0) + min(slope * (ra - r0), slope * (min(rb, self.rho) - r0)), 0.0)


#: relative precision of the noncentral-F limits inside the branch-and-bound (the bracket end on
#: the conservative side is used, so this only affects how tight the reported ends are)
_INNER_RTOL = 1e-7


def _pieces(lo, hi, extra, pieces=3):
    pts = set(np.geomspace(lo, hi, pieces + 1).tolist())
    pts.update(x for x in extra if lo < x < hi)
    ordered = sorted(pts)
    return list(zip(ordered[:-1], ordered[1:]))


def _unequal_lower(R: _UnequalRegion):
    """Branch and bound for min over the region of D; returns (lower bound, pieces used).

    On a piece [ra, rb] of the ratio interval: theta_lo(r) = c_r lam_lo(F_r) >= c(ra) lam_lo(F_min)
    with F_min = min(F_ra, F_rb) (pi is convex, so F_r is smallest at an end, and lam_lo is
    increasing in F); the minimum over the piece of the convex D(theta, .) is then a lower bound.
    The ends (theta_lo(r), r) are points of the region, whose D bound the minimum from above.
    """
    top = min(R.r_hi, R.rho)
    if R.r_lo <= 1.0 <= top and R.lam(R.stat(1.0), "lo") == 0.0:
        return 0.0, 0
    best = math.inf

    def piece(ra, rb):
        nonlocal best
        la, lb = R.lam(R.stat(ra), "lo"), R.lam(R.stat(rb), "lo")
        best = min(best, R.D(R.c(ra) * la, ra), R.D(R.c(rb) * lb, rb))  # inf at rb = rho
        return R.convex_min(R.c(ra) * min(la, lb), ra, rb)

    heap = [(piece(ra, rb), ra, rb) for ra, rb in _pieces(R.r_lo, top, (1.0, R.r_hat))]
    heapq.heapify(heap)
    used = len(heap)
    while used < _BB_MAX_PIECES:
        bound, ra, rb = heap[0]
        if bound >= best - _BB_RTOL * best:
            break
        heapq.heappop(heap)
        mid = math.sqrt(ra * rb)
        for a_, b_ in ((ra, mid), (mid, rb)):
            heapq.heappush(heap, (piece(a_, b_), a_, b_))
        used += 1
    return max(heap[0][0], 0.0), used


def _unequal_upper(R: _UnequalRegion):
    """Branch and bound for max over the region of D (requires r_hi < rho); (upper bound, pieces).

    On a piece: theta_hi(r) <= c(rb) lam_hi(F_max), F_max = F at the minimiser of pi on the piece
    (an end, or r_star inside it); D(theta, .) is convex, so its maximum over the piece is at an end.
    """
    best = 0.0

    def piece(ra, rb):
        nonlocal best
        ends = [ra, rb] + ([R.r_star] if ra < R.r_star < rb else [])
        lams = {r: R.lam(R.stat(r), "hi") for r in ends}
        best = max(best, R.D(R.c(ra) * lams[ra], ra), R.D(R.c(rb) * lams[rb], rb))
        theta = R.c(rb) * max(lams.values())
        return max(R.D(theta, ra), R.D(theta, rb))

    heap = [(-piece(ra, rb), ra, rb) for ra, rb in _pieces(R.r_lo, R.r_hi, (1.0, R.r_hat))]
    heapq.heapify(heap)
    used = len(heap)
    while used < _BB_MAX_PIECES:
        neg, ra, rb = heap[0]
        if -neg <= best + _BB_RTOL * best:
            break
        heapq.heappop(heap)
        mid = math.sqrt(ra * rb)
        for a_, b_ in ((ra, mid), (mid, rb)):
            heapq.heappush(heap, (-piece(a_, b_), a_, b_))
        used += 1
    return -heap[0][0], used


def unequal_interval(m2, ss_p, ss_q, n_p, n_q, d, alpha, confidence=0.95):
    """Interval of the ``"gaussian-unequal"`` method from sufficient statistics.

    ``m2 = ||mean_P - mean_Q||^2``, ``ss_p``, ``ss_q`` the sums of squared deviations (over all
    n d entries of each sample), sample sizes and dimension. Returns ``(lower, value, upper,
    details)`` as in :func:`renyi_divergence` (used by it and by the coverage benchmark).
    """
    R = _UnequalRegion(m2, ss_p, ss_q, n_p, n_q, d, alpha, confidence)
    details = {"variance_ratio": R.r_hat, "variance_ratio_interval": (R.r_lo, R.r_hi),
               "ratio_finite_below": R.rho, "pivot_level": R.level}
    if R.r_lo >= R.rho:
        details["consistent_only_with_infinite_divergence"] = True
        details["finite_orders_below"] = R.r_lo / (R.r_lo - 1.0)
        return _BIG, math.inf, math.inf, details
    # point value: median-unbiased r, then median-unbiased theta given r
    r_med = R.r_hat / float(sc.fdtri(R.k_p, R.k_q, 0.5))
    value = R.D(R.theta(r_med, "med"), r_med)
    lower, n_lo = _unequal_lower(R)
    if R.r_hi >= R.rho:
        upper, n_hi = math.inf, 0
    else:
        upper, n_hi = _unequal_upper(R)
    details["branch_and_bound_pieces"] = (n_lo, n_hi)
    details["upper_finite_for_orders_below"] = R.r_hi / (R.r_hi - 1.0) if R.r_hi > 1.0 else math.inf
    lower = max(0.0, round_down(lower))
    upper = round_up(upper)
    value = min(max(value, lower), upper)
    return lower, value, upper, details


def _gaussian_unequal(P, Q, alpha, confidence):
    n_p, n_q, d = P.shape[0], Q.shape[0], P.shape[1]
    st = _sufficient(P, Q)
    method = ("gaussian-unequal (exact pivots: F for the variance ratio, noncentral F for the mean difference "
              "given the ratio; min and max of the closed form over the joint region; conservative)")
    assumption = ("P = N(mu_P, s_P^2 I) and Q = N(mu_Q, s_Q^2 I) (isotropic, variances may differ); "
                  "coverage >= confidence")
    if st["ss_p"] <= 0.0 or st["ss_q"] <= 0.0:
        if st["constant_equal"]:
            return _degenerate(n_p, n_q, d, method, confidence, assumption)
        which = "samples_p" if st["ss_p"] <= 0.0 else "samples_q"
        raise ValueError(f"{which} has zero variance: the unequal-variance Gaussian model needs a positive "
                         "variance in each sample")
    lower, value, upper, det = unequal_interval(st["m2"], st["ss_p"], st["ss_q"], n_p, n_q, d, alpha, confidence)
    k = st["k"]
    vp = _unscale(st["ss_p"] / (d * (n_p - 1)), 2 * k)
    vq = _unscale(st["ss_q"] / (d * (n_q - 1)), 2 * k)
    details = {"n_p": n_p, "n_q": n_q, "dim": d, "var_p": vp, "var_q": vq,
               "mean_distance2": _unscale(st["m2"], 2 * k),
               "alpha_finite_below": det["variance_ratio"] / (det["variance_ratio"] - 1.0)
               if det["variance_ratio"] > 1.0 else math.inf, **det}
    return Estimate(value=float(value), lower=float(lower), upper=float(upper), method=method,
                    assumption=assumption, confidence=confidence, details=details)


# ---------------------------------------------------------------------------------- nonparametric
def _nonparametric(P, Q, alpha, beta, rng, selection_fraction):
    n_p, n_q = P.shape[0], Q.shape[0]
    ip, iq = rng.permutation(n_p), rng.permutation(n_q)
    kp = min(max(int(round(selection_fraction * n_p)), 1), n_p - 1)
    kq = min(max(int(round(selection_fraction * n_q)), 1), n_q - 1)
    Ps, Pe, Qs, Qe = P[ip[:kp]], P[ip[kp:]], Q[iq[:kq]], Q[iq[kq:]]
    if P.shape[1] > 1:
        u = Ps.mean(axis=0) - Qs.mean(axis=0)
        if np.linalg.norm(u) == 0.0:
            u = np.zeros(P.shape[1])
            u[0] = 1.0
        ts, te = (Ps @ u, Qs @ u), (Pe @ u, Qe @ u)
        reduction = "projection on the held-out mean difference, then a threshold"
    else:
        ts, te = (Ps[:, 0], Qs[:, 0]), (Pe[:, 0], Qe[:, 0])
        reduction = "threshold on the sample value"
    # selection: event {T > t} (or its complement) maximising the selection-half lower bound
    t = candidate_thresholds(ts[0], ts[1])
    k_p_le = np.searchsorted(np.sort(ts[0]), t, side="right")  # #{T_P <= t}
    k_q_le = np.searchsorted(np.sort(ts[1]), t, side="right")  # #{T_Q <= t}
    p_gt, q_gt = (kp - k_p_le), (kq - k_q_le)
    best, choice = -1.0, (float(t[0]), ">")
    for orient, kP, kQ in ((">", p_gt, q_gt), ("<=", k_p_le, k_q_le)):
        lb = bernoulli_renyi(alpha, cp_lower(kP, kp, beta / 2), np.asarray(cp_upper(kQ, kq, beta / 2)))
        lb = np.where(cp_lower(kP, kp, beta / 2) > cp_upper(kQ, kq, beta / 2), lb, 0.0)
        i = int(np.argmax(lb))
        if lb[i] > best:
            best, choice = float(lb[i]), (float(t[i]), orient)
    thr, orient = choice
    ep, eq = te
    kP = int(np.sum(ep > thr)) if orient == ">" else int(np.sum(ep <= thr))
    kQ = int(np.sum(eq > thr)) if orient == ">" else int(np.sum(eq <= thr))
    NP, NQ = ep.size, eq.size
    p_lo, q_hi = cp_lower(kP, NP, beta / 2.0), cp_upper(kQ, NQ, beta / 2.0)
    lower = bernoulli_renyi(alpha, p_lo, q_hi) if p_lo > q_hi else 0.0
    value = bernoulli_renyi(alpha, kP / NP, kQ / NQ)
    return Estimate(
        value=float(value), lower=max(0.0, round_down(float(lower))), upper=math.inf,
        method="nonparametric (binary threshold statistic, Clopper-Pearson, data processing)",
        assumption="none beyond i.i.d. samples; the lower bound is for D_alpha of the binary statistic, "
                   "hence of P, Q by data processing; no upper bound; value = plug-in binary divergence",
        confidence=1.0 - beta,
        details={"reduction": reduction, "threshold": thr, "event": f"T {orient} t", "k_p": kP, "n_p": NP,
                 "k_q": kQ, "n_q": NQ, "p_lower": p_lo, "q_upper": q_hi},
    )


@blas_limited
def renyi_divergence(samples_p, samples_q, alpha: float, *, method: str = "gaussian", confidence: float = 0.95,
                     seed=None, sigma: float | None = None, selection_fraction: float = 0.5) -> Estimate:
    """Estimate D_alpha(P || Q) from i.i.d. samples of P and Q, with a confidence interval.

    Parameters
    ----------
    samples_p, samples_q : array of shape (n,) or (n, d)
        Finite real values, n >= 2 rows each, the same d.
    alpha : float
        Renyi order, finite and > 1 (see the module docstring for alpha = inf).
    method : {"gaussian", "gaussian-unequal", "nonparametric"}
        See the module docstring; each result states its assumption in ``Estimate.assumption``.
    confidence : float in (0, 1)
    seed : None, int >= 0 or SeedSequence
        Randomness of the ``"nonparametric"`` held-out split (the Gaussian methods are
        deterministic; the seed is validated for every method).
    sigma : float > 0, optional
        Known common noise standard deviation, ``method="gaussian"`` only.
    selection_fraction : float in (0, 1)
        Held-out share for ``"nonparametric"``.
    """
    alpha = check_real("alpha", alpha)
    if not alpha > 1.0:
        raise ValueError(f"alpha must be > 1, got {alpha}")
    confidence = check_confidence("confidence", confidence)
    if method not in RENYI_METHODS:
        raise ValueError(f"method must be one of {RENYI_METHODS}, got {method!r}")
    seed_seq = as_seed_sequence(seed)
    selection_fraction = check_real("selection_fraction", selection_fraction)
    if not 0.0 < selection_fraction < 1.0:
        raise ValueError(f"selection_fraction must be in (0, 1), got {selection_fraction}")
    if sigma is not None:
        sigma = check_positive("sigma", sigma)
        if method != "gaussian":
            raise ValueError(f"sigma applies only to method='gaussian', got method={method!r}")
    P = _as_samples(samples_p, "samples_p")
    Q = _as_samples(samples_q, "samples_q")
    if P.shape[1] != Q.shape[1]:
        raise ValueError(f"samples_p and samples_q must have the same dimension, got {P.shape[1]} and {Q.shape[1]}")
    if method == "gaussian":
        return _gaussian_equal(P, Q, alpha, confidence, sigma)
    if method == "gaussian-unequal":
        return _gaussian_unequal(P, Q, alpha, confidence)
    rng = np.random.default_rng(seed_seq)
    # the threshold statistic is invariant under a common positive rescaling: rescale by a power of
    # two (exact) so that projections of extreme values cannot overflow
    top = max(float(np.max(np.abs(P))), float(np.max(np.abs(Q))))
    k = math.frexp(top)[1] if top > 0 else 0
    est = _nonparametric(np.ldexp(P, -k), np.ldexp(Q, -k), alpha, 1.0 - confidence, rng, selection_fraction)
    # report the threshold in the data's units (the projection scales by 2^(2k))
    est.details["threshold"] = _unscale(est.details["threshold"], k if P.shape[1] == 1 else 2 * k)
    return est
