"""MMCC: a certified upper bound on the privacy of a matrix mechanism with Poisson sampling, for any
non-negative lower-triangular C (matrix mechanism conditional composition).

Reference: Choquette-Choo, Ganesh, Steinke, Thakurta, "Privacy amplification for matrix mechanisms",
ICLR 2024 (arXiv:2310.15526): the outputs y_i = (C x)_i + z_i are analysed one row at a time,
conditioned on the previous rows (conditional composition, their Thm. 3.1), each row being a
mixture of Gaussians (MoG) whose mixing probabilities are bounded with high probability. The
derivation below is the one implemented (written for this module; every step is stated so that it
can be checked).

Setting. n steps, C >= 0 entrywise, lower-triangular; noise z_i ~ N(0, sigma^2). The sensitive
record takes part in each step independently with probability q (x_j ~ Bernoulli(q)) and contributes
zeta_j u at step j, for a fixed unit direction u and zeta_j in [0, 1] chosen adaptively (the
one-dimensional setting of MMCC's analysis and of the white-box canaries of the audits). Neighbours:
add/remove of that record. P is the law of y with the record, Q = N(0, sigma^2 I) without it.

1. Chain rule: P(y) = prod_i P(y_i | y_{<i}); the conditional of row i is a mixture over the
   posterior of x given y_{<i} of N(sum_j C_ij zeta_j x_j, sigma^2). Its shift
   mu_i = sum_{j <= i} C_ij zeta_j x_j <= sum_j C_ij x_j is non-decreasing in x.
2. Posterior bound. For j < i, given y_{<i} and all other x_k, the odds of x_j = 1 are
   q/(1 - q) exp(L_j) with L_j = (zeta_j <c_j, y - sum_{k != j} zeta_k x_k c_k> - zeta_j^2 ||c_j||^2 / 2)
   / sigma^2 (c_j = C[:i, j]); the cross terms <c_j, c_k> >= 0 (C >= 0) only lower it, so
   L_j <= h(a_j) := max_{zeta in [0,1]} (zeta a_j - zeta^2 s_j^2/2), a_j = <c_j, y_{<i}>/sigma^2,
   s_j = ||c_j||/sigma (h(a) = 0 for a <= 0, a^2/(2 s^2) up to s^2, a - s^2/2 beyond). On the event
   a_j <= A_ij the conditional probability of x_j = 1 given everything else is at most
   p_ij = q e^{h(A_ij)} / (q e^{h(A_ij)} + 1 - q); then x_{<i} given y_{<i} is stochastically
   dominated by independent Bernoulli(p_ij) (the sequential coupling), and mu_i by
   M_i = sum_{j<i} C_ij B_j + C_ii B_i, B_j ~ Bernoulli(p_ij), B_i ~ Bernoulli(q).
3. Dominance of a row. A pair (N(0,1), E N(M, 1)) with shift M >= 0 is monotone in the stochastic
   order of M in both directions (the likelihood ratio is monotone, the optimal tests are half-lines
   and E Phi(t - M) is monotone in M), and a vector mixture is dominated by the scalar one with the
   shift norms (arXiv:2310.15526, Cor. 4.7). So on the good event row i is dominated by the MoG with
   shifts M_i, rounded up to a grid of step h_i = max_j C_ij / ``resolution`` (larger shifts: still a
   dominating pair), the mass beyond the 63rd grid point moved to sum_j C_ij (the largest shift
   possible): at most 64 components (:class:`~dpaudit.mechanisms.mixture_gaussian.MixtureOfGaussians`).
4. Good event. Under Q, a_ij ~ N(0, s^2); under P, a_ij = N(0, s^2) + m_ij/sigma^2 with
   m_ij <= sum_k G_jk x_k (G = C[:i]^T C[:i] >= 0), whose upper tail has the Chernoff bound
   exp(-lambda t) prod_k (1 - q + q e^{lambda G_jk}) (minimised over a grid of lambda; never above
   sum_k G_jk). A_ij = t_ij / sigma^2 + s z with P(m > t_ij) <= beta/2 and Phi(-z) = beta/2 makes
   P(a_ij > A_ij) <= beta under both P and Q; beta = ``slack`` / (number of pairs) so that the bad event
   E^c (some a_ij above its threshold) has probability at most ``slack`` under P and under Q.
5. Conditional composition. Let P~ use the dominating row conditionals on good histories and Q's on
   bad ones: P~ = P on E, so for every set S, P(S) - e^eps Q(S) <= (P~(S) - e^eps Q(S)) + P(E^c) and
   Q(S) - e^eps P(S) <= (Q(S) - e^eps P~(S)) + Q(E^c); (P~, Q) is an adaptive composition whose
   rows are dominated by the row MoGs, hence by their product (Zhu, Dong, Wang 2022, Thm. 10 and the
   adaptive composition of dominating pairs). Therefore delta(eps) <= delta_MoG-composition(eps) + slack.

The composition of the n row MoGs is done by any dpaudit accountant (PLD by default);
``epsilon(delta)`` is the composition's epsilon at delta - slack (``inf`` when delta <= slack). With
C = I every row is the Poisson-subsampled Gaussian exactly (no rounding, p_ij unused): MMCC equals
DP-SGD's accounting plus the slack. Cost: O(L n^3) for the Chernoff bounds (L lambda values), so n is
limited to :data:`MAX_STEPS`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from dpaudit.accounting.base import make_accountant
from dpaudit.core.numeric import round_up
from dpaudit.core.validation import check_count, check_delta, check_epsilon, check_positive, check_probability
from dpaudit.mechanisms.mf_strategies import Strategy
from dpaudit.mechanisms.mixture_gaussian import MAX_COMPONENTS, MixtureOfGaussians

__all__ = ["MMCCBound", "mmcc", "MAX_STEPS", "DEFAULT_SLACK"]

#: largest number of steps MMCC accepts (its Chernoff bounds cost O(n^3))
MAX_STEPS = 1024
#: default probability of the bad event (added to delta)
DEFAULT_SLACK = 1e-8
_LAMBDAS = np.geomspace(1e-3, 1e3, 25)


@dataclass
class MMCCBound:
    """The n row mixtures of a MMCC analysis (``rows``: (MixtureOfGaussians, count) pairs) and the
    bad-event probability ``slack`` added to delta (module docstring). An upper bound, never exact."""

    rows: list
    slack: float
    steps: int
    sample_rate: float
    details: dict = field(default_factory=dict)
    _cache: dict = field(default_factory=dict, repr=False)

    def accountant(self, name: str = "pld", **kwargs):
        """An accountant ``name`` with every row mixture composed (cached per name and options). The
        PLD default is ``discretization=1e-3, rdp_fallback=False``: the RDP quadrature of a many-component
        mixture costs far more than its PLD and rarely wins."""
        if name == "pld":
            kwargs = {"discretization": 1e-3, "rdp_fallback": False, **kwargs}
        key = (name, tuple(sorted(kwargs.items())))
        if key not in self._cache:
            acc = make_accountant(name, **kwargs)
            for mech, count in self.rows:
                acc.compose(mech, count=count)
            self._cache[key] = acc
        return self._cache[key]

    def epsilon(self, delta: float, accountant: str = "pld") -> float:
        """Upper bound on epsilon at ``delta``: the row composition at delta - slack."""
        delta = check_delta("delta", delta)
        if delta <= self.slack:
            return math.inf
        return self.accountant(accountant).epsilon(float(np.nextafter(delta - self.slack, 0.0)))

    def delta(self, epsilon: float, accountant: str = "pld") -> float:
        """Upper bound on delta at ``epsilon``: the row composition's delta plus slack."""
        epsilon = check_epsilon("epsilon", epsilon)
        return min(1.0, round_up(self.accountant(accountant).delta(epsilon) + self.slack))

    def describe(self) -> str:
        return (f"MMCC bound: {self.steps} row mixtures, Poisson rate {self.sample_rate:g}, bad-event slack "
                f"{self.slack:g} (Choquette-Choo, Ganesh, Steinke, Thakurta 2024)")


def _h(a: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """max_{zeta in [0,1]} (zeta a - zeta^2 s2 / 2)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mid = np.where(s2 > 0, a * a / (2.0 * s2), 0.0)
    return np.where(a <= 0, 0.0, np.where(a <= s2, mid, a - s2 / 2.0))


def _chernoff_quantiles(G: np.ndarray, q: float, log_inv: float) -> np.ndarray:
    """For each row j of G >= 0: the smallest t on the lambda grid with
    exp(-lambda t) prod_k (1 - q + q e^{lambda G_jk}) <= e^{-log_inv}, capped by sum_k G_jk."""
    total = G.sum(axis=1)
    gmax = np.max(G, axis=1)
    out = total.copy()
    pos = gmax > 0
    if not np.any(pos):
        return out
    Gp = G[pos] / gmax[pos, None]  # scale: lambda in units of 1/gmax
    best = np.full(Gp.shape[0], np.inf)
    for lam in _LAMBDAS:
        with np.errstate(over="ignore"):
            log_mgf = np.sum(np.log1p(q * np.expm1(np.minimum(lam * Gp, 700.0))), axis=1)
        best = np.minimum(best, (log_mgf + log_inv) / lam)
    out[pos] = np.minimum(total[pos], best * gmax[pos] * (1.0 + 1e-12))
    return out


def _row_mixture(coefs: np.ndarray, probs: np.ndarray, resolution: int):
    """Shifts and weights (<= MAX_COMPONENTS) dominating sum_j coefs_j B_j, B_j ~ Bernoulli(probs_j):
    coefficients rounded up to multiples of h = max / resolution, mass beyond the grid moved to the
    largest possible shift sum(coefs)."""
    keep = coefs > 0
    c, p = coefs[keep], probs[keep]
    if c.size == 0:
        return np.array([0.0]), np.array([1.0])
    h = float(np.max(c)) / resolution
    w = np.maximum(np.ceil(c / h).astype(int), 1)
    K = MAX_COMPONENTS - 1
    pmf = np.zeros(K)
    pmf[0] = 1.0
    over = 0.0
    for wj, pj in zip(w, p):
        shifted = np.zeros(K)
        if wj < K:
            shifted[wj:] = pmf[: K - wj]
        over += pj * float(np.sum(pmf[max(K - wj, 0):]))  # mass pushed past the grid stays past it
        pmf = (1.0 - pj) * pmf + pj * shifted
    # grid point k stands for k * h >= the rounded-up sum it collects (a relative 1e-13 covers the
    # float rounding of h and of the products)
    grid = np.arange(K) * h * (1.0 + 1e-13)
    nz = pmf > 0
    shift_list, weight_list = list(grid[nz]), list(pmf[nz])
    if over > 0:  # the true shift never exceeds sum(c): the spilled mass goes there
        shift_list.append(max(round_up(float(np.sum(c)) * (1.0 + 1e-13)), shift_list[-1]))
        weight_list.append(over)
    weights = np.asarray(weight_list)
    return np.asarray(shift_list), weights / np.sum(weights)


def mmcc(strategy, sigma: float, sample_rate: float, *, slack: float = DEFAULT_SLACK, sensitivity: float = 1.0,
         resolution: int = 16) -> MMCCBound:
    """The MMCC bound (module docstring) of the matrix mechanism with strategy C (a
    :class:`~dpaudit.mechanisms.mf_strategies.Strategy` or an n x n array, C >= 0, lower-triangular),
    noise ``sigma`` per step, Poisson rate ``sample_rate`` per step and per-step contribution bound
    ``sensitivity`` (add/remove); ``slack``: the bad-event probability added to delta; ``resolution``:
    grid steps per largest coefficient of a row."""
    C = strategy.matrix() if isinstance(strategy, Strategy) else np.asarray(strategy, dtype=float)
    if C.ndim != 2 or C.shape[0] != C.shape[1] or C.size == 0:
        raise ValueError(f"strategy must be a Strategy or a square matrix, got shape {C.shape}")
    n = C.shape[0]
    if n > MAX_STEPS:
        raise ValueError(f"steps must be at most {MAX_STEPS} for MMCC (its cost grows as n^3), got {n}")
    if not np.all(np.isfinite(C)) or np.any(C < 0) or np.any(np.triu(C, 1) != 0):
        raise ValueError("strategy must be a finite non-negative lower-triangular matrix for this MMCC analysis "
                         "(the posterior bound drops cross terms <C e_j, C e_k> >= 0)")
    sigma = check_positive("sigma", sigma)
    q = check_probability("sample_rate", sample_rate)
    slack = check_delta("slack", slack)
    sensitivity = check_positive("sensitivity", sensitivity)
    resolution = check_count("resolution", resolution, minimum=1)
    Cs = C * sensitivity
    pairs = int(np.count_nonzero(np.tril(Cs, -1)))
    beta = slack / max(pairs, 1)
    log_inv = math.log(2.0 / beta)
    # Phi(-z) = beta/2; scipy's ndtri is within 3e-16 relative of mpmath on [1e-300, 0.5] (checked), so a
    # relative 1e-12 more keeps z above the exact quantile (a larger threshold is always valid)
    z = float(-special.ndtri(beta / 2.0)) * (1.0 + 1e-12)
    s2_noise = sigma * sigma
    rows: dict = {}
    order = []
    max_p = 0.0
    G = np.zeros((0, 0))  # Gram matrix of the rows seen so far (columns 0..i-1)
    for i in range(n):
        coefs = Cs[i, : i + 1]
        probs = np.empty(i + 1)
        probs[i] = q
        if i > 0:  # G = Gram matrix of rows 0..i-1 over columns 0..i-1
            js = np.flatnonzero(coefs[:i] > 0)
            if js.size and q > 0:
                t = _chernoff_quantiles(G[js], q, log_inv)
                s2 = np.diag(G)[js] / s2_noise
                A = t / s2_noise + np.sqrt(s2) * z
                eps = _h(A, s2)
                # log-odds rounded up to a grid of 1e-6 (larger rates: still dominating) so rows repeat
                # (the 1e-9 before rounding covers the float error of the sum and of expit, a few ulps)
                odds = np.ceil((math.log(q) - math.log1p(-q) + eps + 1e-9) * 1e6) / 1e6 if q < 1 else None
                probs_j = special.expit(odds) if q < 1 else np.ones(js.size)
                probs[: i] = q
                probs[js] = np.maximum(probs_j, q)
                max_p = max(max_p, float(np.max(probs[js])))
            else:
                probs[: i] = q
            # next row's Gram matrix: add row i of C (restricted to columns 0..i)
            row = Cs[i, : i + 1]
            G_new = np.zeros((i + 1, i + 1))
            G_new[:i, :i] = G
            G_new += np.outer(row, row)
            G = G_new
        else:
            G = np.outer(Cs[0, :1], Cs[0, :1])
        shifts, weights = _row_mixture(coefs, probs, resolution)
        key = (tuple(shifts), tuple(weights))  # identical rows only (the same floats)
        if key not in rows:
            rows[key] = [shifts, weights, 0]
            order.append(key)
        rows[key][2] += 1
    mechs = []
    for key in order:
        shifts, weights, count = rows[key]
        if float(np.max(shifts)) == 0.0 or q == 0.0:
            continue
        mechs.append((MixtureOfGaussians(sigma, tuple(shifts), tuple(weights)), count))
    return MMCCBound(mechs, slack, n, q, details={"pairs": pairs, "distinct_rows": len(mechs),
                                                  "largest_conditional_rate": max(max_p, q),
                                                  "resolution": resolution})
