"""L2 sensitivity of a matrix-factorization strategy C under a participation schema.

One record contributes vectors g_j (||g_j|| <= 1, scaled by the clip bound) to the steps j of a
participation pattern pi; the mechanism releases C x + z, so its L2 sensitivity is

    sens(C, Pi) = sup_{pi in Pi} sup_{||g_j|| <= 1} || sum_{j in pi} C e_j g_j^T ||_F,
    sens^2 = sup_pi sup_g sum_{j, l in pi} X_jl <g_j, g_l>,       X = C^T C,

(Denisov et al. 2022, Sec. 2; Choquette-Choo, McMahan, Rush, Thakurta 2023, arXiv:2211.06530,
Sec. 2). Hence sens^2 <= sup_pi sum_{j,l in pi} |X_jl| (Choquette-Choo et al. 2023,
arXiv:2306.08153, Eq. (5)), with equality when X restricted to the maximising pattern is
entrywise >= 0 (all g_j equal attains it) or diagonal. Schemas (n steps, 0-based):

* ``single``: pi = {j}: sens = the largest column norm of C (exact);
* ``fixed_epoch(k)``: n = k b and pi = {i, i + b, ..., i + (k - 1) b} for some i < b ((k, b)-fixed
  epoch order, arXiv:2211.06530, Sec. 2): max over the b blocks of sum |X_block| (exact when the
  maximising block is >= 0);
* ``min_sep(b, k)``: any pi with consecutive steps at least b apart and |pi| <= k ((k, b)-
  participation, arXiv:2306.08153, Def. 2). When X_jl = 0 for |j - l| >= b (C has at most b bands)
  every pattern's block is diagonal and sens^2 = max_pi sum_{j in pi} X_jj: a dynamic programme over
  the diagonal (arXiv:2306.08153, Alg. 3, VecSens) -- exact. Otherwise the efficient upper bound of
  arXiv:2306.08153, Alg. 4: v_j = max_pi sum_{l in pi} |X_jl| for each row, then max_pi
  sum_{j in pi} v_j (it enlarges the set of patterns: rows and columns may choose differently).

Toeplitz fast paths (first column c, O(n) time):

* ``single``: ||c|| (column 0 holds every coefficient);
* ``fixed_epoch`` with c >= 0: the block of i is the block of 0 shifted down by i and truncated
  (v_i[t] = v_0[t - i]), so ||v_i|| <= ||v_0||: pattern {0, b, ..., (k-1) b} is the worst (exact);
* ``min_sep`` with at most b bands, or ``fixed_epoch`` with at most n/k bands: the diagonal
  X_jj = ||column j||^2 is non-increasing in j, so the earliest pattern {0, b, 2b, ...} maximises
  the diagonal sum (the m-th step of any pattern is >= m b) -- exact;
* ``min_sep`` with c >= 0 and non-increasing: the worst pattern is {0, b, ..., (k - 1) b} (McMahan,
  Pillutla, et al. 2024, arXiv:2405.13763, Thm. 2; checked against enumeration in
  proofs_checks/mf_sensitivity.py) -- exact.

Every returned value is an upper bound rounded up (floating-point sums inflated by their error
bound); :class:`SensitivityBound` also states the value attained by an explicit pattern (a lower
bound) and whether the two coincide by a theorem (``exact``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.core.numeric import round_down, round_up
from dpaudit.core.validation import check_count, check_real_array

__all__ = ["Participation", "SensitivityBound", "mf_sensitivity", "max_participation_sum",
           "participation_pattern_sum", "MAX_DP_WORK"]

_U = float(np.finfo(float).eps) / 2.0
#: largest n^2 k of the general (dense, Alg. 4) min-separation bound; beyond it a cruder bound is used
MAX_DP_WORK = 4 * 10 ** 9
_KINDS = ("single", "fixed_epoch", "min_sep")


@dataclass(frozen=True)
class Participation:
    """How often, and how far apart, one record takes part in the steps of a run.

    Build with :meth:`single`, :meth:`fixed_epoch` (``epochs`` passes over the data in a fixed
    order: steps i, i + b, ..., i + (epochs - 1) b with b = steps / epochs) or :meth:`min_sep`
    (consecutive participations at least ``separation`` steps apart, at most
    ``max_participations`` of them; ``None``: as many as fit).
    """

    kind: str = "single"
    epochs: int = 1
    separation: int = 1
    max_participations: int | None = None

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {self.kind!r}")
        object.__setattr__(self, "epochs", check_count("epochs", self.epochs, minimum=1))
        object.__setattr__(self, "separation", check_count("separation", self.separation, minimum=1))
        if self.max_participations is not None:
            object.__setattr__(self, "max_participations",
                               check_count("max_participations", self.max_participations, minimum=1))

    @classmethod
    def single(cls) -> Participation:
        return cls("single")

    @classmethod
    def fixed_epoch(cls, epochs: int) -> Participation:
        return cls("fixed_epoch", epochs=epochs)

    @classmethod
    def min_sep(cls, separation: int, max_participations: int | None = None) -> Participation:
        return cls("min_sep", separation=separation, max_participations=max_participations)

    def check(self, steps: int) -> int:
        """Validate against a run of ``steps`` steps; returns steps."""
        steps = check_count("steps", steps, minimum=1)
        if self.kind == "fixed_epoch" and steps % self.epochs:
            raise ValueError(f"epochs must divide steps for fixed-epoch participation, got epochs={self.epochs}, "
                             f"steps={steps}")
        return steps

    def separation_in(self, steps: int) -> int:
        """The smallest gap between two participations (b; ``steps`` for a single one)."""
        if self.kind == "single":
            return steps
        if self.kind == "fixed_epoch":
            return steps // self.epochs
        return self.separation

    def count(self, steps: int) -> int:
        """The most participations of one record in ``steps`` steps."""
        steps = self.check(steps)
        if self.kind == "single":
            return 1
        if self.kind == "fixed_epoch":
            return self.epochs
        fit = -(-steps // self.separation)
        return fit if self.max_participations is None else min(fit, self.max_participations)

    def earliest(self, steps: int) -> tuple[int, ...]:
        """The pattern {0, b, 2b, ...} with :meth:`count` steps."""
        b = self.separation_in(steps)
        return tuple(int(m * b) for m in range(self.count(steps)))

    def describe(self) -> str:
        if self.kind == "single":
            return "single participation"
        if self.kind == "fixed_epoch":
            return f"{self.epochs}-epoch fixed order"
        k = "as many as fit" if self.max_participations is None else f"at most {self.max_participations}"
        return f"min separation {self.separation}, {k}"


@dataclass(frozen=True)
class SensitivityBound:
    """sens(C, schema): ``value`` (a certified upper bound, rounded up), ``attained`` (||C u|| of the
    explicit ``pattern`` with equal contributions, a lower bound rounded down), ``exact`` (a theorem
    says ``value`` is the sensitivity; then ``attained`` equals it up to rounding) and ``method``."""

    value: float
    attained: float
    exact: bool
    method: str
    pattern: tuple | None = None

    def describe(self) -> str:
        kind = "exact" if self.exact else "upper bound"
        return f"sensitivity {self.value:.6g} ({kind}; {self.method})"


def _rev_cummax(a: np.ndarray) -> np.ndarray:
    return np.maximum.accumulate(a[..., ::-1], axis=-1)[..., ::-1]


def max_participation_sum(x, separation: int, max_participations: int) -> np.ndarray:
    """max over patterns (steps >= ``separation`` apart, at most ``max_participations``) of
    sum_{j in pi} x_j, for each row of ``x`` (last axis = steps); entries should be >= 0
    (arXiv:2306.08153, Alg. 3). F_t[i] = the best sum over steps >= i with at most t participations:
    F_t[i] = max(x_i + F_{t-1}[i + b], F_t[i + 1]), O(n k)."""
    x = np.asarray(x, dtype=float)
    n = x.shape[-1]
    f = np.zeros(x.shape[:-1] + (n + separation,))
    for _ in range(max_participations):
        g = x + f[..., separation:separation + n]
        f[..., :n] = _rev_cummax(g)
    return f[..., 0]


def _best_pattern(x: np.ndarray, separation: int, k: int) -> tuple[int, ...]:
    """The pattern attaining :func:`max_participation_sum` of a vector (backtracking the programme)."""
    n = x.size
    F = np.zeros((k + 1, n + separation))
    for t in range(1, k + 1):
        F[t, :n] = _rev_cummax(x + F[t - 1, separation:separation + n])
    out, i = [], 0
    for t in range(k, 0, -1):
        if i >= n or F[t, i] <= 0.0:
            break
        g = x[i:] + F[t - 1, i + separation:n + separation]
        j = i + int(np.argmax(g))
        out.append(j)
        i = j + separation
    return tuple(out)


def participation_pattern_sum(C, pattern) -> float:
    """||C u||^2 for the 0/1 indicator u of ``pattern`` (equal contributions)."""
    C = np.asarray(C, dtype=float)
    if not pattern:
        return 0.0
    v = C[:, list(pattern)].sum(axis=1)
    return float(v @ v)


def _up(s2: float, err: float) -> float:
    """sqrt of s2 + err, rounded up."""
    return round_up(math.sqrt(max(s2 + err, 0.0)), ulps=2)


def _down(s2: float) -> float:
    return round_down(math.sqrt(max(s2, 0.0)), ulps=2)


def _toeplitz_block(c: np.ndarray, b: int, k: int) -> np.ndarray:
    """v = sum_{m < k} c shifted down by m b (length n): the column sum of pattern {0, b, ..., (k-1)b},
    as cumulative sums over the residues mod b minus the same sums k b earlier (O(n))."""
    n = c.size
    pad = (-n) % b
    w = np.concatenate([c, np.zeros(pad)]).reshape(-1, b).cumsum(axis=0).ravel()[:n]
    v = w.copy()
    if k * b < n:
        v[k * b:] -= w[: n - k * b]
    return v


def _toeplitz_sensitivity(c: np.ndarray, bands: int | None, part: Participation, n: int) -> SensitivityBound | None:
    c = np.asarray(c, dtype=float)[:n]
    nonneg = bool(np.all(c >= 0))
    k = part.count(n)
    rel = 4.0 * (n + k + 2) * _U
    if part.kind == "single":
        s2 = float(c @ c)
        return SensitivityBound(_up(s2, rel * s2), _down(s2), True, "largest column norm (column 0)", (0,))
    b = part.separation_in(n)
    nb = bands if bands is not None else n
    pattern = part.earliest(n)
    if nb <= b:  # banded within the separation: diagonal blocks, earliest pattern
        col2 = np.cumsum(c * c)[::-1]  # ||column j||^2, non-increasing in j
        s2 = float(np.sum(col2[list(pattern)]))
        return SensitivityBound(_up(s2, rel * s2), _down(s2), True,
                                f"{nb} bands <= separation {b}: orthogonal participations, sum of column norms^2 "
                                "(arXiv:2306.08153, Alg. 3)", pattern)
    monotone = nonneg and bool(np.all(np.diff(c) <= 0))
    if (part.kind == "fixed_epoch" and nonneg) or (part.kind == "min_sep" and monotone):
        v = _toeplitz_block(c, b, k)
        s2 = float(v @ v)
        why = ("c >= 0: the pattern starting at step 0 dominates its shifts" if part.kind == "fixed_epoch" else
               "c >= 0 non-increasing: pattern {0, b, 2b, ...} is the worst (arXiv:2405.13763, Thm. 2)")
        return SensitivityBound(_up(s2, rel * s2), _down(s2), True, why, pattern)
    return None


def _dense_sensitivity(M: np.ndarray, part: Participation) -> SensitivityBound:
    n = M.shape[1]
    k = part.count(n)
    absM = np.abs(M)
    nonneg = bool(np.all(M >= 0))
    X = M.T @ M
    Xa = np.abs(X)
    col2 = np.diag(X).copy()
    # float error of |X| entries: n u (|M|^T |M|)_jl <= n u max ||col||^2; k^2 entries in a block
    err_abs = 0.0 if nonneg else 4.0 * (M.shape[0] + 2) * _U * k * k * float(np.max(col2))
    rel = 4.0 * (M.shape[0] + k * k + 2) * _U
    if part.kind == "single":
        j = int(np.argmax(col2))
        s2 = float(col2[j])
        return SensitivityBound(_up(s2, rel * s2), _down(s2), True, "largest column norm", (j,))
    b = part.separation_in(n)
    if part.kind == "fixed_epoch":
        blocks = Xa.reshape(k, b, k, b)
        sums = np.einsum("aibi->i", blocks)
        i = int(np.argmax(sums))
        pattern = tuple(i + m * b for m in range(k))
        s2 = float(sums[i])
        att = participation_pattern_sum(M, pattern)
        exact = bool(np.all(X[np.ix_(pattern, pattern)] >= 0))
        return SensitivityBound(_up(s2, rel * s2 + err_abs), _down(att), exact,
                                "max over the b fixed-epoch blocks of sum |X_block| (arXiv:2306.08153, Eq. (5))"
                                + ("" if exact else "; the block has negative entries: upper bound"), pattern)
    # min separation
    rows, cols = np.nonzero(absM.T @ absM > 0)
    far = np.abs(rows - cols) >= b
    if not np.any(far):  # every two participations are orthogonal: the diagonal programme is exact
        s2 = float(max_participation_sum(col2, b, k))
        found: tuple | None = _best_pattern(col2, b, k) if k * n <= 2 * 10 ** 7 else None
        att = participation_pattern_sum(M, found) if found is not None else 0.0
        return SensitivityBound(_up(s2, rel * s2), _down(att), True,
                                "columns >= separation apart are orthogonal: diagonal programme "
                                "(arXiv:2306.08153, Alg. 3)", found)
    if n * n * k <= MAX_DP_WORK:
        v = max_participation_sum(Xa, b, k)
        s2 = float(max_participation_sum(v, b, k))
        found = _best_pattern(v, b, k) if k * n <= 2 * 10 ** 7 else None
        att = participation_pattern_sum(M, found) if found is not None else 0.0
        exact = bool(nonneg and att >= s2 * (1.0 - rel))
        method = "row-wise then outer participation programme on |C^T C| (arXiv:2306.08153, Alg. 4)"
        if exact:
            method += "; attained by the pattern found (C >= 0)"
        return SensitivityBound(_up(s2, rel * s2 + err_abs), _down(att), exact, method, found)
    # too large for Alg. 4: sum of the k largest row sums of |X| (ignores the separation)
    top = np.sort(Xa.sum(axis=1))[::-1][:k]
    s2 = float(np.sum(top))
    return SensitivityBound(_up(s2, rel * s2 + err_abs), 0.0, False,
                            "sum of the k largest row sums of |C^T C| (crude; Alg. 4 beyond its work bound)", None)


def mf_sensitivity(strategy, participation: Participation | None = None) -> SensitivityBound:
    """sens(C, participation) (module docstring) for a :class:`~dpaudit.mechanisms.mf_strategies.Strategy`
    or a matrix (rows x steps, any real entries). Default participation: single."""
    part = Participation.single() if participation is None else participation
    if not isinstance(part, Participation):
        raise ValueError(f"participation must be a Participation, got {type(participation).__name__}")
    if hasattr(strategy, "toeplitz") and hasattr(strategy, "steps"):
        n = part.check(strategy.steps)
        c = strategy.toeplitz()
        if c is not None:
            out = _toeplitz_sensitivity(c, strategy.bands, part, n)
            if out is not None:
                return out
        return _dense_sensitivity(strategy.matrix(), part)
    M = check_real_array("strategy", strategy)
    if M.ndim != 2 or M.size == 0:
        raise ValueError(f"strategy must be a Strategy or a non-empty 2-D matrix, got shape {M.shape}")
    part.check(M.shape[1])
    return _dense_sensitivity(M, part)
