"""The mixture-of-Gaussians mechanism: N(0, s^2) against sum_i w_i N(c_i, s^2).

References
----------
Choquette-Choo, Ganesh, Steinke, Thakurta, "Privacy amplification for matrix mechanisms", ICLR
2024 (arXiv:2310.15526): the mixture-of-Gaussians mechanism (on D the output is N(0, s^2), on the
neighbour D' it is c_I + N(0, s^2) with P(I = i) = w_i), Cor. 4.7 (a vector-valued mixture is
dominated by the scalar one with each shift replaced by its norm); the same pair arises in
balls-and-bins batching (Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha, Zhang, "Balls-and-bins
sampling for DP-SGD", AISTATS 2025) and is dp_accounting's ``MixtureOfGaussiansDpEvent``
(``MixtureGaussianPrivacyLoss``). Poisson subsampling of a Gaussian is the two-component case
shifts (0, c), weights (1 - q, q) (Mironov, Talwar, Zhang 2019).

Standardise x -> x/s and write mu_i = c_i/s >= 0 and

    log m(x) = logsumexp_i(log w_i + mu_i x - mu_i^2/2)   (= log of the density ratio Q/P),

convex and non-decreasing in x, ranging over (log w_0, inf) where w_0 is the weight of the zero
shifts (over R without one). The two directions (Zhu, Dong, Wang 2022, Thm. 10 for the two-point
case; dp_accounting's ADD/REMOVE):

* ADD: P = N(0, 1), Q = mixture, L = -log m(x), decreasing in x: L > e iff x < x(-e) with
  log m(x(t)) = t, so P(L > e) = Phi(x), Q(L > e) = sum_i w_i Phi(x - mu_i) (no such x when
  e >= -log w_0: L never exceeds e);
* REMOVE: P = mixture, Q = N(0, 1), L = log m(x), increasing: L > e iff x > x(e), P(L > e) =
  sum_i w_i Phi(mu_i - x), Q(L > e) = Phi(-x) (every x when e <= log w_0: delta = 1 - e^e),

and delta(e) = P(L > e) - e^e Q(L > e) (Balle, Barthe, Gaboardi 2018; Sommer, Meiser, Mohammadi
2019), evaluated as P(L > e) (1 - exp(log(e^e Q) - log P)) from log-normal-cdf values: the
derivative of the test's delta in its threshold vanishes at x(e), so the root's rounding enters
at second order only.

Renyi divergence (Mironov 2017, Def. 3). E_P[e^{(alpha - 1) L}] = int phi(x) m(x)^b dx with
b = alpha (REMOVE) or b = 1 - alpha (ADD): composite Gauss-Legendre on [a, b] (panels of width
1/8, 20 nodes; measured against mpmath to 1e-14 relative) plus *certified* tails: log m has slope
in [0, mu_max] and is convex, so beyond the interval m^b is below an exponential in x whose
Gaussian integral is closed form (see :func:`_tails`). D_alpha = log(I)/(alpha - 1), the larger
of the two directions, rounded up by a relative 1e-10 and an absolute 1e-14/(alpha - 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import special

from dpaudit.core.numeric import round_up
from dpaudit.core.validation import check_neighbouring, check_nonnegative, check_orders, check_real_array
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.float_safe import exact_choice, grid_gaussian
from dpaudit.mechanisms.loss_pairs import LossPair, PrivacyLoss, as_float_array, nonprivate_loss

__all__ = ["MixtureOfGaussians", "MixtureGaussianPair", "mixture_gaussian_rdp", "MAX_COMPONENTS"]

#: largest number of mixture components
MAX_COMPONENTS = 64
_U = float(np.finfo(float).eps)
#: Gauss-Legendre rule per panel of the RDP quadrature
_GL_X, _GL_W = np.polynomial.legendre.leggauss(20)
#: panel width (standardised units) of the RDP quadrature
_PANEL = 0.125
#: most panels of one quadrature (beyond: the convexity bound of mixture_gaussian_rdp)
_MAX_PANELS = 40_000
#: relative tolerance of the loss threshold x(t); the delta of the threshold test differs from the
#: optimal one by at most phi * mu_max * dx^2 (its derivative in the threshold vanishes at x(t))
_ROOT_TOL = 1e-15
#: relative margin on the RDP quadrature
_RDP_REL = 1e-10


class _Mixture:
    """log m(x) and the root x(t) of log m(x) = t for weights w and standardised shifts mu >= 0."""

    def __init__(self, mu: np.ndarray, w: np.ndarray):
        keep = w > 0
        self.mu, self.log_w = mu[keep], np.log(w[keep])
        zero = self.mu == 0.0
        self.log_w0 = float(special.logsumexp(self.log_w[zero])) if np.any(zero) else -math.inf
        self.mu_max = float(np.max(self.mu))
        pos = self.mu[self.mu > 0]
        self.mu_min_pos = float(np.min(pos)) if pos.size else 0.0
        self.trivial = self.mu_max == 0.0  # every shift 0: Q = P

    def log_m(self, x):
        x = np.asarray(x, dtype=float)
        with np.errstate(over="ignore", under="ignore"):
            z = self.log_w + self.mu * x[..., None] - self.mu ** 2 / 2.0
        return special.logsumexp(z, axis=-1)

    def slope(self, x):
        """d log m/dx (the mu-mean under the softmax weights), in [0, mu_max]."""
        x = np.asarray(x, dtype=float)
        with np.errstate(over="ignore", under="ignore"):
            z = self.log_w + self.mu * x[..., None] - self.mu ** 2 / 2.0
            z = z - np.max(z, axis=-1, keepdims=True)
            p = np.exp(z)
        return np.sum(p * self.mu, axis=-1) / np.sum(p, axis=-1)

    def _log_r(self, x):
        """log r(x) and its slope, r = the positive-shift part of m (m = w_0 + r)."""
        pos = self.mu > 0
        lw, mu = self.log_w[pos], self.mu[pos]
        with np.errstate(over="ignore", under="ignore"):
            z = lw + mu * x[..., None] - mu ** 2 / 2.0
            top = np.max(z, axis=-1, keepdims=True)
            p = np.exp(z - top)
            tot = np.sum(p, axis=-1)
        return top[..., 0] + np.log(tot), np.sum(p * mu, axis=-1) / tot

    def root(self, t):
        """x with log m(x) = t, for t > log w_0.

        Solved as log r(x) = t' = log(e^t - w_0) (m = w_0 + r): log r is convex with slope in
        [min positive mu, max mu], so Newton from the right of the root (where the largest
        component alone already exceeds t') decreases monotonically to it (the tangent of a
        convex function lies below it) and converges quadratically; stopped at a relative step
        of 1e-15 (at most 200 steps)."""
        t = np.asarray(t, dtype=float)
        if math.isfinite(self.log_w0):
            with np.errstate(divide="ignore", invalid="ignore"):
                t = t + np.log(-np.expm1(np.minimum(self.log_w0 - t, 0.0)))
        pos = self.mu > 0
        j = int(np.argmax(np.where(pos, self.mu, -1.0)))
        x = (t - self.log_w[j] + self.mu[j] ** 2 / 2.0) / self.mu[j]
        for _ in range(200):
            g, slope = self._log_r(x)
            x_new = x - np.maximum(g - t, 0.0) / slope
            if np.all(np.abs(x_new - x) <= _ROOT_TOL * (1.0 + np.abs(x))):
                return x_new
            x = x_new
        return x  # pragma: no cover - quadratic convergence from a start within log(K) / mu_min


class MixtureGaussianPair(LossPair):
    """The ADD pair (N(0, 1), sum_i w_i N(mu_i, 1)) or the REMOVE pair (reversed) of the module
    docstring; ``mu`` the standardised shifts (>= 0), ``w`` the weights (sum 1)."""

    continuous = True

    def __init__(self, mu, w, direction: str = "add"):
        if direction not in ("add", "remove"):
            raise ValueError("direction must be 'add' or 'remove'")
        self.mu_arr = np.asarray(mu, dtype=float)
        self.w_arr = np.asarray(w, dtype=float)
        self.direction = direction
        self.mix = _Mixture(self.mu_arr, self.w_arr)
        cap = -self.mix.log_w0  # sup of the ADD loss (inf without a zero shift)
        self.support = (-math.inf, cap) if direction == "add" else (-cap, math.inf)
        mean_shift = float(np.sum(self.w_arr * self.mu_arr))
        self.scale = max(mean_shift * max(1.0, mean_shift), 1e-300)

    # P(L > e), Q(L > e) in logs -----------------------------------------------------------------
    def _log_sf(self, e):
        """(log P(L > e), log Q(L > e)) at each e."""
        e = as_float_array(e)
        mix = self.mix
        t = -e if self.direction == "add" else e
        ok = t > mix.log_w0
        x = mix.root(np.where(ok, t, mix.log_w0 + 1.0))
        lw, mu = mix.log_w, mix.mu
        with np.errstate(under="ignore"):
            if self.direction == "add":
                lp = special.log_ndtr(x)
                lq = special.logsumexp(lw + special.log_ndtr(x[:, None] - mu), axis=1)
                lp = np.where(ok, lp, -np.inf)
                lq = np.where(ok, lq, -np.inf)
            else:
                lp = special.logsumexp(lw + special.log_ndtr(mu - x[:, None]), axis=1)
                lq = special.log_ndtr(-x)
                lp = np.where(ok, lp, 0.0)
                lq = np.where(ok, lq, 0.0)
        return lp, lq

    def delta(self, e):
        e = as_float_array(e)
        if self.mix.trivial:
            val = -np.expm1(np.minimum(e, 0.0))
            return val, 4 * _U * val + 1e-300
        lp, lq = self._log_sf(e)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            leq = e + lq
            p = np.exp(lp)
            # P(L > e) - e^e Q(L > e) = P(L > e) (1 - e^{log(e^e Q) - log P}), no cancellation
            val = np.where(np.isneginf(lp), 0.0, p * -np.expm1(np.minimum(leq - lp, 0.0)))
            size = 3.0 + np.abs(np.where(np.isfinite(lp), lp, 0.0)) + np.abs(np.where(np.isfinite(leq), leq, 0.0))
            err = np.where(p > 0, 64.0 * _U * size * p, 0.0) + self.mix.mu_max * (_ROOT_TOL * (1.0 + np.abs(e))) ** 2
        val = np.clip(np.nan_to_num(val, nan=0.0), 0.0, 1.0)
        return val, np.nan_to_num(err, nan=1.0) + 1e-300

    def q_sf(self, e):
        if self.mix.trivial:
            e = as_float_array(e)
            return np.where(e < 0.0, 1.0, 0.0)
        with np.errstate(under="ignore"):
            return np.minimum(np.exp(self._log_sf(e)[1]), 1.0)

    def log_q_sf(self, e):
        if self.mix.trivial:
            e = as_float_array(e)
            return np.where(e < 0.0, 0.0, -np.inf)
        return np.minimum(self._log_sf(e)[1], 0.0)

    def log_p_sf(self, e):
        if self.mix.trivial:
            e = as_float_array(e)
            return np.where(e < 0.0, 0.0, -np.inf)
        return np.minimum(self._log_sf(e)[0], 0.0)

    def reversed(self):
        return MixtureGaussianPair(self.mu_arr, self.w_arr, "remove" if self.direction == "add" else "add")

    def _loss_at(self, x: float) -> float:
        lm = float(self.mix.log_m(np.array(x)))
        return -lm if self.direction == "add" else lm

    def ranges(self, tail):
        if self.mix.trivial:
            return (0.0, 0.0), (0.0, 0.0)
        z = -float(special.ndtri(min(tail, 0.5)))  # P(N(0,1) > z) <= tail
        # x-quantiles of N(0, 1) and of the mixture (every component's tail <= tail)
        p_x = (-z, z)
        q_x = (-z, self.mix.mu_max + z)
        if self.direction == "add":  # P = N(0, 1), Q = mixture; L decreasing in x
            p_rng = (self._loss_at(p_x[1]), self._loss_at(p_x[0]))
            q_rng = (self._loss_at(q_x[1]), self._loss_at(q_x[0]))
        else:  # P = mixture, Q = N(0, 1); L increasing
            p_rng = (self._loss_at(q_x[0]), self._loss_at(q_x[1]))
            q_rng = (self._loss_at(p_x[0]), self._loss_at(p_x[1]))
        return p_rng, q_rng


# --- Renyi divergence by quadrature with certified tails ---------------------------------------

def _log_gauss_exp_tail(s: float, bound: float, upper: bool) -> float:
    """log int phi(x) e^{s x} dx over x > bound (``upper``) or x < bound: e^{s^2/2} Phi(-(bound - s))
    or e^{s^2/2} Phi(bound - s)."""
    z = (s - bound) if upper else (bound - s)
    return s * s / 2.0 + float(special.log_ndtr(z))


def _tails(mix: _Mixture, b: float, a: float, hi: float) -> float:
    """log of a certified upper bound on int phi(x) m(x)^b over x < a and x > hi."""
    la, lh = float(mix.log_m(np.array(a))), float(mix.log_m(np.array(hi)))
    parts = []
    if b > 0:
        # x > hi: log m(x) <= log m(hi) + mu_max (x - hi) (slope <= mu_max)
        s = b * mix.mu_max
        parts.append(b * lh - s * hi + _log_gauss_exp_tail(s, hi, True))
        # x < a: m(x) <= m(a) (non-decreasing)
        parts.append(b * la + float(special.log_ndtr(a)))
    else:
        # x > hi: m(x)^b <= m(hi)^b (b <= 0, m non-decreasing)
        parts.append(b * lh + float(special.log_ndtr(-hi)))
        # x < a: convexity, log m(x) >= log m(a) + s_a (x - a), times b <= 0 reverses it
        s = b * float(mix.slope(np.array(a)))
        parts.append(b * la - s * a + _log_gauss_exp_tail(s, a, False))
    return float(special.logsumexp(parts))


def _log_moment(mix: _Mixture, b: float) -> tuple[float, float]:
    """(log I, log of the tail bound) for I = int phi(x) m(x)^b dx (quadrature on the bulk)."""
    centre = b * mix.mu_max if b > 0 else b * mix.mu_max  # where phi(x) m(x)^b peaks, roughly
    a = min(centre, 0.0) - 14.0
    hi = max(centre, mix.mu_max) + 14.0
    n = int(math.ceil((hi - a) / _PANEL))
    edges = np.linspace(a, hi, n + 1)
    half = (edges[1:] - edges[:-1]) / 2.0
    mid = (edges[1:] + edges[:-1]) / 2.0
    x = (mid[:, None] + half[:, None] * _GL_X[None, :]).ravel()
    lw = (np.log(half)[:, None] + np.log(_GL_W)[None, :]).ravel()
    with np.errstate(over="ignore", under="ignore"):
        f = lw - x * x / 2.0 - 0.5 * math.log(2 * math.pi) + b * mix.log_m(x)
    return float(special.logsumexp(f)), _tails(mix, b, a, hi)


def mixture_gaussian_rdp(mu, w, orders) -> np.ndarray:
    """Upper bounds on max(D_alpha(ADD), D_alpha(REMOVE)) for standardised shifts ``mu`` and
    weights ``w`` (module docstring), rounded up; inf at alpha = inf unless the shifts are 0."""
    mix = _Mixture(np.asarray(mu, dtype=float), np.asarray(w, dtype=float))
    a = np.asarray(orders, dtype=float)
    out = np.empty(a.shape)
    for i, alpha in enumerate(a.ravel()):
        if mix.trivial:
            out.flat[i] = 0.0
            continue
        if not math.isfinite(alpha):
            out.flat[i] = math.inf
            continue
        lam = alpha - 1.0
        if (alpha * mix.mu_max + 28.0) / _PANEL > _MAX_PANELS:
            # joint convexity of P, Q -> int P^alpha Q^{1 - alpha} (alpha > 1) over the components:
            # both directions are at most log(sum_i w_i e^{alpha (alpha - 1) mu_i^2/2})/(alpha - 1)
            with np.errstate(over="ignore"):
                lse = float(special.logsumexp(mix.log_w + alpha * lam * mix.mu ** 2 / 2.0))
            out.flat[i] = round_up(lse / lam)
            continue
        best = 0.0
        for b in (alpha, -lam):  # REMOVE, ADD
            log_i, log_tail = _log_moment(mix, b)
            log_up = float(np.logaddexp(log_i + math.log1p(_RDP_REL), log_tail))
            best = max(best, log_up / lam)
        out.flat[i] = round_up(best + 1e-14 / lam)
    return out


def _check_mixture(sensitivities, weights) -> tuple[tuple[float, ...], tuple[float, ...]]:
    c = check_real_array("sensitivities", sensitivities)
    w = check_real_array("weights", weights)
    if c.ndim != 1 or c.size == 0 or c.size > MAX_COMPONENTS:
        raise ValueError(f"sensitivities must be a vector of 1 to {MAX_COMPONENTS} shifts, got shape {c.shape}")
    if w.shape != c.shape:
        raise ValueError(f"weights must have the shape of sensitivities {c.shape}, got {w.shape}")
    if np.any(c < 0):
        raise ValueError("sensitivities must be >= 0 (the shifts' norms; Choquette-Choo et al. 2024, Cor. 4.7)")
    if np.any(w < 0) or abs(float(np.sum(w)) - 1.0) > 1e-12:
        raise ValueError(f"weights must be probabilities summing to 1, got sum {float(np.sum(w))!r}")
    return tuple(float(v) for v in c), tuple(float(v) for v in w / np.sum(w))


@dataclass(frozen=True)
class MixtureOfGaussians(Mechanism):
    """On D: N(0, sigma^2); on the neighbour D': c_I + N(0, sigma^2) with P(I = i) = weights[i]
    (``sensitivities`` c_i >= 0). dp_accounting's ``MixtureOfGaussiansDpEvent(sigma,
    sensitivities, weights)``; ``sensitivities=(0, 1), weights=(1 - q, q)`` is the Poisson-
    subsampled Gaussian with rate q.

    Curves
    ------
    rdp(alpha)      quadrature of both directions with certified tails               [upper bound, tight to 1e-10]
    zcdp()          inf unless every shift is 0 (sup_alpha D_alpha/alpha may be finite, not derived here)
    pure_epsilon()  inf (0 when every shift is 0)
    privacy_loss()  the ADD and REMOVE pairs of the module docstring                  [exact]

    ``sigma = 0`` (no noise): the output is the shift itself, so D' is told apart from D
    exactly when a positive shift is drawn, with probability q = sum of the weights of the
    positive shifts: the curves are those of a non-private release Poisson-sampled at rate q
    (:mod:`dpaudit.mechanisms.nonprivate`): ``delta(eps) = q`` for eps >= 0, RDP and zCDP
    ``inf``, ``approx_dp() = (0, q)``; non-private when q = 1.
    """

    sigma: float
    sensitivities: tuple = (1.0,)
    weights: tuple = (1.0,)
    neighbouring: str = "add_remove"

    def __post_init__(self):
        object.__setattr__(self, "sigma", check_nonnegative("sigma", self.sigma))
        c, w = _check_mixture(self.sensitivities, self.weights)
        object.__setattr__(self, "sensitivities", c)
        object.__setattr__(self, "weights", w)
        check_neighbouring("neighbouring", self.neighbouring)

    @property
    def mu(self) -> np.ndarray:
        """The standardised shifts c_i/sigma (inf for sigma = 0 and c_i > 0)."""
        c = np.asarray(self.sensitivities)
        if self.sigma == 0.0:
            return np.where(c > 0, math.inf, 0.0)
        return c / self.sigma

    @property
    def _trivial(self) -> bool:
        return max(self.sensitivities) == 0.0

    @property
    def _revealed(self) -> float:
        """sigma = 0: the probability q of a positive shift (the record revealed), else 0."""
        if self.sigma > 0.0 or self._trivial:
            return 0.0
        return float(sum(w for c, w in zip(self.sensitivities, self.weights) if c > 0))

    def _revealed_bounds(self) -> tuple[float, float]:
        """Floats (q_up, q_lo) around the exact sum q of the weights of the positive shifts (equal
        when that sum is a float)."""
        parts = [Fraction(w) for c, w in zip(self.sensitivities, self.weights) if c > 0]
        exact = sum(parts, Fraction(0))
        q = float(exact)
        if Fraction(q) == exact:
            return q, q
        return (min(q if Fraction(q) > exact else math.nextafter(q, 2.0), 1.0),
                q if Fraction(q) < exact else math.nextafter(q, -1.0))

    def non_private(self) -> bool:
        """sigma = 0 and every shift positive: the output reveals the record."""
        return self.sigma == 0.0 and not self._trivial and min(self.sensitivities) > 0.0

    def subsampling(self):
        """sigma = 0 with some zero shifts: a non-private release sampled at rate q (above)."""
        q = self._revealed_bounds()[0] if self._revealed > 0.0 else 0.0
        if 0.0 < q < 1.0 and not self.non_private():
            from dpaudit.mechanisms.nonprivate import NonPrivate

            return (NonPrivate(self.neighbouring), q)
        return None

    def approx_dp(self):
        if self.sigma == 0.0 and not self._trivial:
            return (0.0, self._revealed_bounds()[0])
        return None

    def rdp(self, orders) -> np.ndarray:
        orders = check_orders("orders", orders)
        if self._trivial:
            return np.zeros(orders.shape)
        if self.sigma == 0.0:
            return np.full(orders.shape, math.inf)
        if float(np.max(self.mu)) > 1e3:
            return np.full(orders.shape, math.inf)  # beyond the quadrature's range: no bound stated
        out = mixture_gaussian_rdp(self.mu, np.asarray(self.weights), orders).ravel()
        # D_alpha is non-decreasing in alpha (Mironov 2017, Prop. 9): the bound at a larger order
        # also bounds a smaller one (this removes the margins' dips)
        idx = np.argsort(orders.ravel(), kind="stable")
        out[idx] = np.minimum.accumulate(out[idx][::-1])[::-1]
        return out.reshape(orders.shape)

    def zcdp(self) -> float:
        return 0.0 if self._trivial else math.inf

    def has_zcdp_guarantee(self) -> bool:
        return self._trivial

    def pure_epsilon(self) -> float:
        return 0.0 if self._trivial else math.inf

    def privacy_loss(self) -> PrivacyLoss:
        if self._trivial:
            return PrivacyLoss.nothing()
        if self.sigma == 0.0:
            loss = nonprivate_loss()
            if self.non_private():
                return loss
            return loss.subsampled(*self._revealed_bounds())
        add = MixtureGaussianPair(self.mu, np.asarray(self.weights), "add")
        rem = add.reversed()
        return PrivacyLoss((add, rem), ((add, rem),), "mixture-of-gaussians", exact=True)

    def likelihood_ratio_test(self):
        """On (0, 1) (record absent / present): log q(y)/p(y) = log m(y/sigma) (``None`` for
        sigma = 0)."""
        if self.sigma == 0.0:
            return None
        mix = _Mixture(self.mu, np.asarray(self.weights))
        s = self.sigma
        return 0, 1, lambda y: mix.log_m(np.asarray(y, dtype=float) / s)

    def sample(self, value, rng: np.random.Generator, size=None):
        """``value`` 0 (D) or 1 (D'): N(0, sigma^2), or c_I + N(0, sigma^2), I ~ weights.

        Float-safe: I is drawn with probabilities exactly ``weights[i] / sum(weights)``
        (:func:`dpaudit.mechanisms.float_safe.exact_choice`) and the exact real output is rounded to
        the grid of sigma, sampled exactly (:func:`dpaudit.mechanisms.float_safe.grid_gaussian`):
        post-processing of the mechanism."""
        v = np.asarray(value)
        if not np.all((v == 0) | (v == 1)):
            raise ValueError("value must be 0 (the record absent) or 1 (present)")
        shape = v.shape if size is None else tuple(np.atleast_1d(size)) + v.shape
        idx = exact_choice(self.weights, shape, rng)
        shift = np.asarray(self.sensitivities)[idx] * np.broadcast_to(v, shape)  # exact: v is 0 or 1
        return grid_gaussian(shift, self.sigma, rng)

    def describe(self) -> str:
        return (f"MixtureOfGaussians(sigma={self.sigma:g}, sensitivities={list(self.sensitivities)}, "
                f"weights={list(self.weights)}, {self.neighbouring})")
