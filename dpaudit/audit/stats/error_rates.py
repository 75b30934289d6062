"""Epsilon lower bounds from the error rates of a distinguishing test.

Kairouz, Oh, Viswanath, "The composition theorem for differential privacy", ICML 2015
(arXiv:1311.0776), Thm. 2.1: if M is (epsilon, delta)-DP, every test between M(D) and M(D')
with false-positive rate FPR and false-negative rate FNR satisfies

    FPR + e^epsilon * FNR >= 1 - delta   and   FNR + e^epsilon * FPR >= 1 - delta,

hence epsilon >= max{ log((1 - delta - FNR) / FPR), log((1 - delta - FPR) / FNR) }.
The sound version (Kairouz, Oh, Viswanath 2015, Thm. 2.1; Jagielski, Ullman, Oprea 2020; Nasr et al. 2021)
replaces both rates by Clopper-Pearson upper bounds, each at level beta/2 (union bound over
the two rates, so that both hold at once with probability >= 1 - beta).
"""

from __future__ import annotations

import numpy as np

from dpaudit.audit.stats.binomial import cp_upper
from dpaudit.core.numeric import round_down
from dpaudit.core.validation import check_confidence, check_rates, check_real

__all__ = ["epsilon_lower_from_rates", "epsilon_lower_from_counts", "check_audit_delta", "check_beta"]


def check_audit_delta(name: str, delta) -> float:
    """delta of an audited claim: a number in [0, 1) (0 for pure-DP claims)."""
    delta = check_real(name, delta)
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {delta}")
    return delta


def check_beta(name: str, beta) -> float:
    """Failure probability beta = 1 - confidence, in the open interval (0, 1)."""
    return check_confidence(name, beta)


def epsilon_lower_from_rates(fpr, fnr, delta: float = 0.0):
    """``max{0, log((1-delta-FNR)/FPR), log((1-delta-FPR)/FNR)}`` (Kairouz et al. 2015, Thm. 2.1).

    With *upper bounds* on FPR and FNR this is a lower bound on epsilon; the result is
    rounded down. Vectorised; returns a float for scalar input.
    """
    delta = check_audit_delta("delta", delta)
    fpr = check_rates("fpr", fpr)
    fnr = check_rates("fnr", fnr)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.log(1.0 - delta - fnr) - np.log(fpr)
        b = np.log(1.0 - delta - fpr) - np.log(fnr)
    a = np.where(1.0 - delta - fnr > 0, a, -np.inf)
    b = np.where(1.0 - delta - fpr > 0, b, -np.inf)
    a = np.where(np.isnan(a), -np.inf, a)
    b = np.where(np.isnan(b), -np.inf, b)
    eps = np.maximum(0.0, np.maximum(a, b))
    out = np.maximum(round_down(eps), 0.0)
    return float(out) if np.ndim(out) == 0 else out


def epsilon_lower_from_counts(k_fp, n0, k_fn, n1, delta: float = 0.0, beta: float = 0.05):
    """Sound epsilon lower bound from test counts (Kairouz, Oh, Viswanath 2015, Thm. 2.1; Jagielski, Ullman, Oprea 2020).

    ``k_fp`` false positives among ``n0`` runs on D, ``k_fn`` false negatives among ``n1`` runs
    on D'. FPR+ and FNR+ are Clopper-Pearson upper bounds at ``beta/2`` each, so the bound holds
    with probability >= 1 - beta for a test fixed before the counts were drawn.
    """
    beta = check_beta("beta", beta)
    fpr_u = cp_upper(k_fp, n0, beta / 2.0)
    fnr_u = cp_upper(k_fn, n1, beta / 2.0)
    return epsilon_lower_from_rates(fpr_u, fnr_u, delta)
