"""Gaussian-DP based epsilon *estimates* (labelled with their assumption).

Dong, Roth, Su, "Gaussian differential privacy", JRSS-B 2022 (arXiv:1905.02383):

* Def. 2.7 / eq. (2.4): a mu-GDP mechanism has trade-off curve G_mu(a) = Phi(Phi^{-1}(1-a) - mu),
  so every test satisfies FNR >= Phi(Phi^{-1}(1 - FPR) - mu), i.e.
  mu >= Phi^{-1}(1 - FPR) - Phi^{-1}(FNR).
* Cor. 2.13: mu-GDP is (epsilon, delta(epsilon))-DP with
  delta(epsilon) = Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2).

With Clopper-Pearson upper bounds on the rates, ``mu_lower`` is a lower confidence bound on
mu *if* the mechanism's trade-off curve is exactly G_mu (Dong, Roth, Su 2019; Nasr et al. 2023,
arXiv:2302.07956). Without that assumption the resulting epsilon can be too high or too low:
it is an estimate, labelled ``GDP_ASSUMPTION``, never a certified lower bound.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

from dpaudit.accounting.conversions import gdp_delta, gdp_epsilon
from dpaudit.audit.stats.binomial import cp_upper
from dpaudit.core.numeric import round_down
from dpaudit.core.validation import check_delta, check_nonnegative, check_rates

__all__ = ["GDP_ASSUMPTION", "mu_lower_from_rates", "mu_lower_from_counts", "gdp_delta_of", "gdp_epsilon_of"]

#: absolute/relative step below the accountant's (upper) GDP epsilon, see :func:`gdp_epsilon_of`
_MARGIN = 1e-12
#: label attached to every number derived from a GDP fit
GDP_ASSUMPTION = "estimate assuming mu-GDP (trade-off curve exactly Gaussian)"


def mu_lower_from_rates(fpr, fnr):
    """``max(0, Phi^{-1}(1 - FPR) - Phi^{-1}(FNR))`` (Dong, Roth, Su 2019, eq. 2.4), rounded down.

    Symmetric in (FPR, FNR). Vectorised; scalar in, float out.
    """
    fpr = check_rates("fpr", fpr)
    fnr = check_rates("fnr", fnr)
    with np.errstate(all="ignore"):
        mu = -ndtri(fpr) - ndtri(fnr)
    mu = np.where(np.isnan(mu), 0.0, mu)  # fpr = fnr = 0 cannot come from CP upper bounds
    out = np.maximum(round_down(np.maximum(mu, 0.0)), 0.0)
    return float(out) if np.ndim(out) == 0 else out


def mu_lower_from_counts(k_fp, n0, k_fn, n1, beta: float = 0.05):
    """mu lower bound from counts, CP upper bounds at ``beta/2`` per rate (valid under mu-GDP)."""
    fpr_u = cp_upper(k_fp, n0, beta / 2.0)
    fnr_u = cp_upper(k_fn, n1, beta / 2.0)
    return mu_lower_from_rates(fpr_u, fnr_u)


def gdp_delta_of(mu: float, epsilon: float) -> float:
    """delta(epsilon) of mu-GDP (Dong, Roth, Su 2019, Cor. 2.13).

    :func:`dpaudit.accounting.conversions.gdp_delta` (stable log-space evaluation, rounded up).
    """
    return gdp_delta(mu, epsilon)


def gdp_epsilon_of(mu: float, delta: float) -> float:
    """Smallest epsilon with delta_mu(epsilon) <= delta (Dong, Roth, Su 2019, Cor. 2.13), rounded down.

    Monotone in mu, so applied to a lower bound on mu it gives a lower estimate of epsilon.
    The root is that of :func:`dpaudit.accounting.conversions.gdp_epsilon` (an accountant's
    value: Brent's method on the stable log form, rounded up and verified against a rounded-up
    delta, so it lies above the exact root, by less than 3e-14 + 2e-13 epsilon against a
    50-digit mpmath root for mu in [1e-6, 30], delta in [1e-12, 0.4]). It is moved down by
    ``_MARGIN * (1 + epsilon)`` (``_MARGIN = 1e-12``), so that the estimate errs low, as an
    audit's numbers must. ``mu = 0`` gives 0.
    """
    mu = check_nonnegative("mu", mu)
    delta = check_delta("delta", delta)
    eps = gdp_epsilon(mu, delta)
    if eps == 0.0:
        return 0.0
    return max(0.0, round_down(eps - _MARGIN * (1.0 + eps)))
