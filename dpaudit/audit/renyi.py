"""Renyi divergence estimation from samples, with intervals and stated assumptions.

``renyi_divergence(samples_p, samples_q, alpha, method=...)`` returns an :class:`Estimate`
of D_alpha(P || Q) = 1/(alpha-1) log E_Q[(p/q)^alpha] (auditing.md sec. 6-7):

``"gaussian"`` (parametric, equal isotropic covariance; Gil, Alajaji, Linder 2013):
    D_alpha = alpha ||mu_P - mu_Q||^2 / (2 s^2). With m = mean_P - mean_Q,
    c = 1/n_P + 1/n_Q and the pooled variance s^2 (nu = d (n_P + n_Q - 2) degrees of freedom),
    F = ||m||^2 / (d c s^2) follows the noncentral F(d, nu, lambda) law with
    lambda = ||Delta||^2 / (sigma^2 c); inverting its CDF in lambda (monotone) gives an exact
    interval, and D_alpha = alpha c lambda / 2. With ``sigma`` given (known noise) the statistic
    ||m||^2 / (sigma^2 c) is noncentral chi-square(d, lambda) instead. The point value is the
    median-unbiased lambda.
``"gaussian-unequal"`` (parametric, P = N(mu_P, s_P^2 I), Q = N(mu_Q, s_Q^2 I)):
    plug-in of the closed form (accounting.md sec. 1) with s_alpha^2 = alpha s_Q^2 + (1-alpha) s_P^2,
    infinite when s_alpha^2 <= 0; interval by a parametric bootstrap of the sufficient
    statistics (bias-corrected percentile; approximate).
``"nonparametric"`` (no family assumption):
    samples are reduced to one dimension (vectors: projection on the mean difference of a
    held-out half) and then to a binary threshold statistic chosen on the held-out half. By
    data processing, D_alpha(P || Q) >= D_alpha(Bern(p) || Bern(q)) with p = P[T > t],
    q = Q[T > t]; with one-sided Clopper-Pearson bounds p >= p-, q <= q+ (beta/2 each) the
    minimum of the binary divergence over the confidence box, D_alpha(Bern(p-) || Bern(q+)),
    is a lower confidence bound. There is no upper bound (``upper = inf``); the value is the
    plug-in binary divergence on the evaluation half.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats
from scipy.optimize import brentq

from dpaudit.audit.binomial import cp_lower, cp_upper
from dpaudit.audit.result import Estimate
from dpaudit.audit.runner import as_seed_sequence
from dpaudit.audit.thresholds import candidate_thresholds
from dpaudit.core.numeric import round_down, round_up
from dpaudit.core.validation import check_confidence, check_positive, check_real

__all__ = ["renyi_divergence", "gaussian_renyi", "bernoulli_renyi", "RENYI_METHODS"]

RENYI_METHODS = ("gaussian", "gaussian-unequal", "nonparametric")


def _as_samples(x, name):
    a = np.asarray(x, dtype=float)
    if a.ndim == 1:
        a = a[:, None]
    elif a.ndim != 2:
        a = a.reshape(a.shape[0], -1)
    if a.shape[0] < 2:
        raise ValueError(f"{name} must hold at least 2 samples")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite")
    return a


def gaussian_renyi(alpha, mean_p, mean_q, var_p, var_q, dim: int = 1):
    """D_alpha(N(mean_p, var_p I_d) || N(mean_q, var_q I_d)) (Gil et al. 2013; accounting.md sec. 1).

    ``mean_p - mean_q`` may be given through its squared norm by passing vectors; inf when
    s_alpha^2 = alpha var_q + (1 - alpha) var_p <= 0. Vectorised over the variances and the
    squared mean distance (``mean_*`` as arrays of shape (..., d)).
    """
    alpha = check_real("alpha", alpha)
    if not alpha > 1.0:
        raise ValueError(f"alpha must be > 1, got {alpha}")
    dist2 = np.sum((np.asarray(mean_p, dtype=float) - np.asarray(mean_q, dtype=float)) ** 2, axis=-1)
    vp = np.asarray(var_p, dtype=float)
    vq = np.asarray(var_q, dtype=float)
    s_a = alpha * vq + (1.0 - alpha) * vp
    with np.errstate(divide="ignore", invalid="ignore"):
        val = alpha * dist2 / (2.0 * s_a) + dim / (2.0 * (alpha - 1.0)) * (
            (1.0 - alpha) * np.log(vp) + alpha * np.log(vq) - np.log(s_a))
    val = np.where(s_a > 0, val, np.inf)
    return float(val) if np.ndim(val) == 0 else val


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


def _invert_decreasing(cdf, target, start):
    """Largest-root search of cdf(lam) = target for cdf decreasing in lam >= 0 (0 if cdf(0) <= target)."""
    if cdf(0.0) <= target:
        return 0.0
    hi = max(start, 1.0)
    while cdf(hi) > target:
        hi *= 2.0
        if hi > 1e15:
            return math.inf
    return brentq(lambda lam: cdf(lam) - target, 0.0, hi, xtol=1e-12, rtol=1e-12, maxiter=500)


def _gaussian_equal(P, Q, alpha, beta, sigma):
    n_p, n_q, d = P.shape[0], Q.shape[0], P.shape[1]
    c = 1.0 / n_p + 1.0 / n_q
    m = P.mean(axis=0) - Q.mean(axis=0)
    m2 = float(m @ m)
    if sigma is None:
        nu = d * (n_p + n_q - 2)
        ss = float(np.sum((P - P.mean(axis=0)) ** 2) + np.sum((Q - Q.mean(axis=0)) ** 2))
        s2 = ss / nu
        if s2 <= 0.0:
            raise ValueError("samples have zero variance: the Gaussian model does not apply")
        stat = m2 / (d * c * s2)
        cdf = lambda lam: float(stats.ncf.cdf(stat, d, nu, lam)) if lam > 0 else float(stats.f.cdf(stat, d, nu))  # noqa: E731
        start = stat * d
        model = "F(d, nu, lambda)"
        fitted = {"pooled_variance": s2, "nu": nu}
    else:
        stat = m2 / (sigma**2 * c)
        cdf = lambda lam: float(stats.ncx2.cdf(stat, d, lam)) if lam > 0 else float(stats.chi2.cdf(stat, d))  # noqa: E731
        start = stat
        model = "chi2(d, lambda)"
        fitted = {"sigma": sigma}
    lam_lo = _invert_decreasing(cdf, 1.0 - beta / 2.0, start)
    lam_hi = _invert_decreasing(cdf, beta / 2.0, start)
    lam_med = _invert_decreasing(cdf, 0.5, start)
    scale = alpha * c / 2.0
    return Estimate(
        value=float(scale * lam_med), lower=max(0.0, round_down(scale * lam_lo)), upper=round_up(scale * lam_hi),
        method="gaussian (equal isotropic covariance, " + ("known sigma" if sigma is not None else "pooled variance")
               + ", noncentral " + model + " interval)",
        assumption="P and Q are Gaussian with the same isotropic covariance"
                   + (f" sigma^2 I, sigma = {sigma:g}" if sigma is not None else " (estimated by pooling)"),
        confidence=1.0 - beta,
        details={"n_p": n_p, "n_q": n_q, "dim": d, "mean_distance2": m2, "statistic": stat, **fitted},
    )


def _gaussian_unequal(P, Q, alpha, beta, rng, n_bootstrap):
    n_p, n_q, d = P.shape[0], Q.shape[0], P.shape[1]
    mp, mq = P.mean(axis=0), Q.mean(axis=0)
    vp = float(np.sum((P - mp) ** 2) / (d * (n_p - 1)))
    vq = float(np.sum((Q - mq) ** 2) / (d * (n_q - 1)))
    if vp <= 0.0 or vq <= 0.0:
        raise ValueError("samples have zero variance: the Gaussian model does not apply")
    value = gaussian_renyi(alpha, mp, mq, vp, vq, d)
    B = n_bootstrap
    mp_b = mp + rng.normal(size=(B, d)) * math.sqrt(vp / n_p)
    mq_b = mq + rng.normal(size=(B, d)) * math.sqrt(vq / n_q)
    vp_b = vp * rng.chisquare(d * (n_p - 1), size=B) / (d * (n_p - 1))
    vq_b = vq * rng.chisquare(d * (n_q - 1), size=B) / (d * (n_q - 1))
    boot = np.sort(np.asarray(gaussian_renyi(alpha, mp_b, mq_b, vp_b, vq_b, d)))
    # bias-corrected percentile interval (Efron 1987): the plug-in is biased upwards near the
    # finiteness limit, which plain percentiles would double
    frac = float(np.mean(boot < value)) if math.isfinite(value) else 1.0
    z0 = float(stats.norm.ppf(min(max(frac, 0.5 / B), 1.0 - 0.5 / B)))
    z = float(stats.norm.ppf(1.0 - beta / 2.0))
    q_lo, q_hi = stats.norm.cdf(2 * z0 - z), stats.norm.cdf(2 * z0 + z)
    lo = boot[min(int(math.floor(q_lo * (B - 1))), B - 1)]
    hi = boot[min(int(math.ceil(q_hi * (B - 1))), B - 1)]
    finite_limit = vp / (vp - vq) if vp > vq else math.inf
    return Estimate(
        value=float(value), lower=max(0.0, round_down(float(lo))), upper=round_up(float(hi)),
        method="gaussian-unequal (plug-in, bias-corrected parametric bootstrap interval; approximate)",
        assumption="P = N(mu_P, s_P^2 I) and Q = N(mu_Q, s_Q^2 I); interval approximate (bootstrap)",
        confidence=1.0 - beta,
        details={"n_p": n_p, "n_q": n_q, "dim": d, "var_p": vp, "var_q": vq,
                 "alpha_finite_below": finite_limit, "bootstrap_replicates": B,
                 "bootstrap_infinite_fraction": float(np.mean(~np.isfinite(boot)))},
    )


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


def renyi_divergence(samples_p, samples_q, alpha: float, *, method: str = "gaussian", confidence: float = 0.95,
                     seed=None, sigma: float | None = None, n_bootstrap: int = 2000,
                     selection_fraction: float = 0.5) -> Estimate:
    """Estimate D_alpha(P || Q) from i.i.d. samples of P and Q, with a confidence interval.

    Parameters
    ----------
    samples_p, samples_q : array of shape (n,) or (n, d)
    alpha : float > 1
    method : {"gaussian", "gaussian-unequal", "nonparametric"}
        See the module docstring; each result states its assumption in ``Estimate.assumption``.
    confidence : float in (0, 1)
    seed : None, int or SeedSequence
        Randomness of the bootstrap / the held-out split.
    sigma : float, optional
        Known common noise standard deviation for ``method="gaussian"``.
    n_bootstrap : int
        Bootstrap replicates for ``"gaussian-unequal"``.
    selection_fraction : float
        Held-out share for ``"nonparametric"``.
    """
    alpha = check_real("alpha", alpha)
    if not alpha > 1.0:
        raise ValueError(f"alpha must be > 1, got {alpha}")
    confidence = check_confidence(confidence)
    if method not in RENYI_METHODS:
        raise ValueError(f"method must be one of {RENYI_METHODS}, got {method!r}")
    P = _as_samples(samples_p, "samples_p")
    Q = _as_samples(samples_q, "samples_q")
    if P.shape[1] != Q.shape[1]:
        raise ValueError("samples_p and samples_q must have the same dimension")
    beta = 1.0 - confidence
    if method == "gaussian":
        if sigma is not None:
            sigma = check_positive("sigma", sigma)
        return _gaussian_equal(P, Q, alpha, beta, sigma)
    rng = np.random.default_rng(as_seed_sequence(seed))
    if method == "gaussian-unequal":
        if isinstance(n_bootstrap, bool) or int(n_bootstrap) != n_bootstrap or n_bootstrap < 100:
            raise ValueError(f"n_bootstrap must be an integer >= 100, got {n_bootstrap!r}")
        return _gaussian_unequal(P, Q, alpha, beta, rng, int(n_bootstrap))
    selection_fraction = check_real("selection_fraction", selection_fraction)
    if not 0.0 < selection_fraction < 1.0:
        raise ValueError(f"selection_fraction must be in (0, 1), got {selection_fraction}")
    return _nonparametric(P, Q, alpha, beta, rng, selection_fraction)
