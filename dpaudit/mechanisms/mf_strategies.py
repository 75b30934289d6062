"""Strategy matrices C of the matrix-factorization (MF) mechanism, and their noise streams.

The MF mechanism releases the prefix sums A x of a stream x_1..x_n (one record's contribution to
step t has L2 norm at most the clip bound) as ``A x + B z`` with ``A = B C``, i.e. as
``A (x + C^{-1} z)``: each step's gradient gets the correlated noise ``(C^{-1} z)_t`` and the
release is post-processing of ``C x + z`` (Denisov, McMahan, Rush, Smith, Thakurta 2022, Sec. 2;
Choquette-Choo, McMahan, Rush, Thakurta 2023, arXiv:2211.06530, Sec. 2). ``z`` has i.i.d.
N(0, sigma^2) entries, so the privacy is that of the Gaussian mechanism ``C x + z`` at sensitivity
sens(C) (``dpaudit.mechanisms.mf_participation``).

Strategies here are lower-triangular n x n (n = ``steps``), so that ``(C^{-1} z)_t`` depends on
z_1..z_t only and can be generated as a stream while training:

* :class:`IdentityStrategy` -- C = I, B = A: independent noise on every gradient (DP-SGD);
* :class:`PrefixSumStrategy` -- C = A, B = I: independent noise on every prefix sum (the other
  end of the factorisations of A);
* :class:`DenseStrategy` -- any lower-triangular C with a non-zero diagonal, given by the user;
* :class:`BandedToeplitz` -- lower-triangular Toeplitz with b bands, first column
  (c_0, ..., c_{b-1}, 0, ...) (Choquette-Choo, Ganesh, McKenna, McMahan, Rush, Thakurta, Xu 2023,
  arXiv:2306.08153; McKenna 2024, arXiv:2405.15913). The noise stream solves
  c_0 x_t = z_t - sum_{k=1}^{b-1} c_k x_{t-k}: b - 1 past noise vectors of memory
  (arXiv:2306.08153, Alg. 9, for the Toeplitz case);
* :class:`BLTStrategy` -- buffered linear Toeplitz (Dvijotham, McMahan, Pillutla, Steinke, Thakurta
  2024, arXiv:2404.16706): c_0 = 1, c_t = sum_k omega_k theta_k^{t-1} (t >= 1) for m buffers with
  decays theta_k and output scales omega_k. C maps x to y by y_t = x_t + sum_k omega_k s_{k,t},
  s_{k,t+1} = theta_k s_{k,t} + x_t, so C^{-1} z is the stream x_t = z_t - sum_k omega_k s_{k,t}
  with the same buffer update (McMahan, Pillutla, et al., arXiv:2408.08868, Alg. 3): O(m) memory per
  step. The inverse is itself a BLT (:meth:`BLTStrategy.inverse`): with Theta = diag(theta) the
  buffers of the inverse stream evolve by M = Theta - 1 omega^T (s_{t+1} = M s_t + 1 z_t), and an
  eigen-decomposition M = V diag(lambda) V^{-1} gives C^{-1} = BLT(lambda, -(V^T omega) * (V^{-1} 1))
  (arXiv:2404.16706, Lemma 5.2).

Every strategy knows its first column when it is Toeplitz (:meth:`Strategy.toeplitz`), its number of
bands when it is banded, its dense matrix (up to :data:`MAX_DENSE_STEPS` steps), and applies C and
C^{-1} along the first axis of an array (batched over trailing axes).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import linalg, signal

from dpaudit.core.validation import check_count, check_real_array

__all__ = ["Strategy", "IdentityStrategy", "PrefixSumStrategy", "DenseStrategy", "BandedToeplitz",
           "BLTStrategy", "NoiseStream", "geometric_bands", "MAX_DENSE_STEPS", "MAX_STEPS", "toeplitz_solve",
           "toeplitz_multiply", "blt_coefficients"]

#: largest number of steps whose dense n x n strategy matrix is built (128 MiB of float64)
MAX_DENSE_STEPS = 4096
#: largest number of steps of a structured (Toeplitz / BLT) strategy
MAX_STEPS = 10 ** 7


def _steps(steps) -> int:
    n = check_count("steps", steps, minimum=1)
    if n > MAX_STEPS:
        raise ValueError(f"steps must be at most {MAX_STEPS}, got {n}")
    return n


def toeplitz_multiply(c, x) -> np.ndarray:
    """C x along axis 0 for the lower-triangular Toeplitz C with first column ``c`` (zero beyond
    its length): an FIR filter."""
    c = np.asarray(c, dtype=float)
    return signal.lfilter(c, [1.0], np.asarray(x, dtype=float), axis=0)


def toeplitz_solve(c, y) -> np.ndarray:
    """C^{-1} y along axis 0 for the lower-triangular Toeplitz C with first column ``c`` (c_0 != 0):
    the recursion c_0 x_t = y_t - sum_{k>=1} c_k x_{t-k}, as an IIR filter with denominator c."""
    c = np.asarray(c, dtype=float)
    return signal.lfilter([1.0], c, np.asarray(y, dtype=float), axis=0)


def blt_coefficients(buf_decay, output_scale, steps: int) -> np.ndarray:
    """The first column (c_0, ..., c_{steps-1}) of a BLT: c_0 = 1, c_t = sum_k omega_k theta_k^{t-1}."""
    theta = np.asarray(buf_decay, dtype=float)
    omega = np.asarray(output_scale, dtype=float)
    c = np.zeros(steps)
    c[0] = 1.0
    if steps > 1 and theta.size:
        t = np.arange(steps - 1, dtype=float)
        with np.errstate(under="ignore"):
            c[1:] = np.power(theta[None, :], t[:, None]) @ omega  # 0^0 = 1
    return c


class NoiseStream(abc.ABC):
    """Rows of C^{-1} z generated one step at a time: ``next()`` draws z_t ~ N(0, sigma^2) of
    ``shape`` and returns (C^{-1} z)_t of that shape. Subclasses keep only the state they need."""

    def __init__(self, shape, sigma: float, rng: np.random.Generator):
        self.shape = tuple(shape)
        self.sigma = float(sigma)
        self.rng = rng
        self.t = 0

    def _draw(self) -> np.ndarray:
        return self.rng.normal(0.0, self.sigma, self.shape) if self.sigma > 0 else np.zeros(self.shape)

    @abc.abstractmethod
    def next(self) -> np.ndarray:
        """The noise vector of the next step (each strategy's stream says how it is formed)."""

    @property
    def memory(self) -> int:
        """Number of noise vectors of ``shape`` held between steps."""
        return 0


class _IdentityStream(NoiseStream):
    def next(self):
        self.t += 1
        return self._draw()


class _FIRInverseStream(NoiseStream):
    """c_0 x_t = z_t - sum_{k=1}^{b-1} c_k x_{t-k}: a ring buffer of the b - 1 last outputs."""

    def __init__(self, shape, sigma, rng, coefs):
        super().__init__(shape, sigma, rng)
        self.c = np.asarray(coefs, dtype=float)
        self.past: np.ndarray = np.zeros((max(self.c.size - 1, 0),) + self.shape)  # past[0] = x_{t-1}

    def next(self):
        z = self._draw()
        if self.past.shape[0]:
            z = z - np.tensordot(self.c[1:], self.past, axes=(0, 0))
        x = z / self.c[0]
        if self.past.shape[0]:
            self.past = np.roll(self.past, 1, axis=0)
            self.past[0] = x
        self.t += 1
        return x

    @property
    def memory(self) -> int:
        return self.past.shape[0]


class _BufferStream(NoiseStream):
    """x_t = z_t + sum_k a_k s_k, s_k <- theta_k s_k + u_t with u_t = x_t (``feed="output"``: the
    inverse of C = BLT(theta, -a)) or u_t = z_t (``feed="input"``: C^{-1} given as BLT(theta, a))."""

    def __init__(self, shape, sigma, rng, theta, scale, feed):
        super().__init__(shape, sigma, rng)
        self.theta = np.asarray(theta, dtype=float)
        self.scale = np.asarray(scale, dtype=float)
        self.feed = feed
        self.buf = np.zeros((self.theta.size,) + self.shape)

    def next(self):
        z = self._draw()
        x = z + np.tensordot(self.scale, self.buf, axes=(0, 0)) if self.theta.size else z
        u = x if self.feed == "output" else z
        self.buf = self.theta.reshape((-1,) + (1,) * len(self.shape)) * self.buf + u
        self.t += 1
        return x

    @property
    def memory(self) -> int:
        return self.theta.size


class _DenseStream(NoiseStream):
    """Forward substitution C_tt x_t = z_t - sum_{j<t} C_tj x_j (all past outputs kept)."""

    def __init__(self, shape, sigma, rng, matrix):
        super().__init__(shape, sigma, rng)
        self.C = matrix
        self.past = np.zeros((matrix.shape[0],) + self.shape)

    def next(self):
        t = self.t
        z = self._draw()
        if t:
            z = z - np.tensordot(self.C[t, :t], self.past[:t], axes=(0, 0))
        x = z / self.C[t, t]
        self.past[t] = x
        self.t += 1
        return x

    @property
    def memory(self) -> int:
        return self.t


#: the error of a strategy that is neither Toeplitz nor defines the operations itself
_NOT_TOEPLITZ = ("{} is not Toeplitz (toeplitz() is None): a strategy that is not Toeplitz defines matrix(), "
                 "multiply(), solve(), column_norms() and noise_stream() itself, as DenseStrategy does")


class Strategy:
    """A lower-triangular strategy C (``steps`` x ``steps``) of the factorisation A = B C.

    Subclasses are frozen dataclasses; they give ``steps``, ``kind`` and the methods below.
    """

    steps: int
    kind: str = "strategy"

    def toeplitz(self) -> np.ndarray | None:
        """The first column (c_0, ..., c_{steps-1}) when C is Toeplitz, else ``None``."""
        return None

    def _coefs(self) -> np.ndarray:
        c = self.toeplitz()
        if c is None:
            raise TypeError(_NOT_TOEPLITZ.format(type(self).__name__))
        return c

    @property
    def bands(self) -> int | None:
        """b when every entry C_ij with i - j >= b is zero (b-banded), else ``None``."""
        return None

    def matrix(self) -> np.ndarray:
        """The dense matrix C (refused beyond :data:`MAX_DENSE_STEPS` steps)."""
        c = self._coefs()
        check_dense(self.steps)
        return linalg.toeplitz(c, np.zeros(self.steps))

    def multiply(self, x) -> np.ndarray:
        """C x along axis 0 (x of shape (steps,) + any)."""
        x = _check_stream("x", x, self.steps)
        return toeplitz_multiply(self._coefs(), x)

    def solve(self, y) -> np.ndarray:
        """C^{-1} y along axis 0 (y of shape (steps,) + any)."""
        y = _check_stream("y", y, self.steps)
        c = self._coefs()
        b = self.bands
        return toeplitz_solve(c[:b] if b is not None else c, y)

    def noise_stream(self, shape, sigma: float, rng: np.random.Generator) -> NoiseStream:
        """A stream whose t-th ``next()`` is (C^{-1} z)_t, z_t ~ N(0, sigma^2) of ``shape``."""
        c = self._coefs()
        b = self.bands if self.bands is not None else self.steps
        return _FIRInverseStream(shape, sigma, rng, c[:b])

    def column_norms(self) -> np.ndarray:
        """The L2 norm of each column of C."""
        c = self.toeplitz()
        if c is not None:  # column j holds c_0..c_{n-1-j}
            return np.sqrt(np.cumsum(c * c))[::-1]
        return np.linalg.norm(self.matrix(), axis=0)

    def describe(self) -> str:
        return f"{type(self).__name__}(steps={self.steps})"


def check_dense(steps: int) -> None:
    if steps > MAX_DENSE_STEPS:
        raise ValueError(f"steps must be at most {MAX_DENSE_STEPS} to build the dense strategy matrix, got {steps}")


def _check_stream(name: str, x, steps: int) -> np.ndarray:
    arr = check_real_array(name, x)
    if arr.ndim == 0 or arr.shape[0] != steps:
        raise ValueError(f"{name} must have {steps} steps along its first axis, got shape {arr.shape}")
    return arr


@dataclass(frozen=True)
class IdentityStrategy(Strategy):
    """C = I: independent N(0, sigma^2) noise on every step's gradient (DP-SGD's noise; B = A)."""

    steps: int = 1
    kind = "identity"

    def __post_init__(self):
        object.__setattr__(self, "steps", _steps(self.steps))

    def toeplitz(self):
        c = np.zeros(self.steps)
        c[0] = 1.0
        return c

    @property
    def bands(self) -> int:
        return 1

    def noise_stream(self, shape, sigma, rng):
        return _IdentityStream(shape, sigma, rng)

    def describe(self) -> str:
        return f"identity (DP-SGD noise), {self.steps} steps"


@dataclass(frozen=True)
class PrefixSumStrategy(Strategy):
    """C = A (lower-triangular ones): independent noise on every released prefix sum (B = I);
    the noise on step t's gradient is z_t - z_{t-1}."""

    steps: int = 1
    kind = "prefix"

    def __post_init__(self):
        object.__setattr__(self, "steps", _steps(self.steps))

    def toeplitz(self):
        return np.ones(self.steps)

    def solve(self, y):
        y = _check_stream("y", y, self.steps)
        return np.diff(y, axis=0, prepend=np.zeros((1,) + y.shape[1:]))

    def noise_stream(self, shape, sigma, rng):
        return _BufferStream(shape, sigma, rng, [0.0], [-1.0], "input")  # x_t = z_t - z_{t-1}

    def describe(self) -> str:
        return f"prefix sum (independent noise per prefix sum), {self.steps} steps"


def _as_coefs(name: str, coefs) -> tuple:
    c = check_real_array(name, coefs)
    if c.ndim != 1 or c.size == 0:
        raise ValueError(f"{name} must be a non-empty vector, got shape {c.shape}")
    if c[0] == 0.0:
        raise ValueError(f"{name}[0] must be non-zero (C must be invertible)")
    return tuple(float(v) for v in c)


@dataclass(frozen=True)
class BandedToeplitz(Strategy):
    """Lower-triangular Toeplitz C with first column (c_0, ..., c_{b-1}, 0, ..., 0), b = len(coefs)
    bands (clipped to ``steps``). ``normalize=True`` (default) scales the coefficients to unit L2
    norm, so the largest column norm (single-participation sensitivity) is 1."""

    coefs: tuple = (1.0,)
    steps: int = 1
    normalize: bool = True
    kind = "banded"

    def __post_init__(self):
        object.__setattr__(self, "steps", _steps(self.steps))
        c = np.asarray(_as_coefs("coefs", self.coefs))[: self.steps]
        if self.normalize:
            c = c / float(np.linalg.norm(c))
        object.__setattr__(self, "coefs", tuple(float(v) for v in c))

    @property
    def bands(self) -> int:
        return len(self.coefs)

    def toeplitz(self):
        c = np.zeros(self.steps)
        c[: self.bands] = self.coefs
        return c

    def describe(self) -> str:
        return f"banded Toeplitz, {self.bands} bands, {self.steps} steps"


@dataclass(frozen=True)
class BLTStrategy(Strategy):
    """Buffered linear Toeplitz C: c_0 = 1, c_t = sum_k output_scale_k buf_decay_k^(t-1) (module
    docstring). Memory of the noise stream: one vector per buffer."""

    buf_decay: tuple = ()
    output_scale: tuple = ()
    steps: int = 1
    kind = "blt"

    def __post_init__(self):
        object.__setattr__(self, "steps", _steps(self.steps))
        th = check_real_array("buf_decay", self.buf_decay).ravel()
        om = check_real_array("output_scale", self.output_scale).ravel()
        if th.shape != om.shape:
            raise ValueError(f"buf_decay and output_scale must have the same length, got {th.size} and {om.size}")
        if np.any(np.abs(th) >= 1.0):
            raise ValueError("buf_decay must lie in (-1, 1) (a decay of magnitude >= 1 never forgets)")
        object.__setattr__(self, "buf_decay", tuple(float(v) for v in th))
        object.__setattr__(self, "output_scale", tuple(float(v) for v in om))

    @property
    def buffers(self) -> int:
        return len(self.buf_decay)

    def toeplitz(self):
        return blt_coefficients(self.buf_decay, self.output_scale, self.steps)

    def multiply(self, x):
        x = _check_stream("x", x, self.steps)
        num, den = self.rational()
        return signal.lfilter(num, den, x, axis=0)

    def solve(self, y):
        y = _check_stream("y", y, self.steps)
        out = np.empty_like(y)
        theta = np.asarray(self.buf_decay).reshape((-1,) + (1,) * (y.ndim - 1))
        omega = np.asarray(self.output_scale)
        buf = np.zeros((self.buffers,) + y.shape[1:])
        for t in range(self.steps):
            x = y[t] - np.tensordot(omega, buf, axes=(0, 0)) if self.buffers else y[t]
            out[t] = x
            buf = theta * buf + x
        return out

    def rational(self) -> tuple[np.ndarray, np.ndarray]:
        """(P, Q): polynomial coefficients (increasing powers of the delay) with C(x) = P(x)/Q(x),
        Q = prod_k (1 - theta_k x), P = Q + sum_k omega_k x prod_{l != k} (1 - theta_l x)."""
        th, om = np.asarray(self.buf_decay), np.asarray(self.output_scale)
        q = np.array([1.0])
        for t in th:
            q = np.convolve(q, [1.0, -t])
        p = np.concatenate([q, [0.0]])
        for k in range(th.size):
            rest = np.array([0.0, om[k]])
            for ell, t in enumerate(th):
                if ell != k:
                    rest = np.convolve(rest, [1.0, -t])
            p[: rest.size] += rest
        return p[: q.size], q

    def noise_stream(self, shape, sigma, rng):
        return _BufferStream(shape, sigma, rng, self.buf_decay, -np.asarray(self.output_scale), "output")

    def inverse(self) -> tuple[np.ndarray, np.ndarray]:
        """``(buf_decay, output_scale)`` of the BLT equal to C^{-1} (module docstring; Dvijotham et al.
        2024, Lemma 5.2): the noise stream of C written as a BLT fed by z."""
        th, om = np.asarray(self.buf_decay), np.asarray(self.output_scale)
        if th.size == 0:
            return np.zeros(0), np.zeros(0)
        M = np.diag(th) - np.outer(np.ones(th.size), om)
        lam, V = np.linalg.eig(M)
        if np.max(np.abs(lam.imag)) > 1e-10 * max(1.0, float(np.max(np.abs(lam)))):
            raise ValueError("the inverse of this BLT has complex buffer decays (not a real BLT)")
        lam, V = lam.real, V.real
        scale = -(V.T @ om) * np.linalg.solve(V, np.ones(th.size))
        order = np.argsort(lam)[::-1]
        return lam[order], scale[order]

    def describe(self) -> str:
        return f"BLT, {self.buffers} buffers, {self.steps} steps"


@dataclass(frozen=True, eq=False)
class DenseStrategy(Strategy):
    """A user-given lower-triangular C (``steps`` x ``steps``, non-zero diagonal), stored read-only."""

    C: Any = None
    steps: int = field(init=False, default=0)
    kind = "dense"

    def __post_init__(self):
        if self.C is None:
            raise ValueError("C must be given (a lower-triangular square matrix)")
        C = check_real_array("C", self.C)
        if C.ndim != 2 or C.shape[0] != C.shape[1] or C.shape[0] == 0:
            raise ValueError(f"C must be a non-empty square matrix, got shape {C.shape}")
        check_dense(C.shape[0])
        if np.any(np.triu(C, 1) != 0.0):
            raise ValueError("C must be lower-triangular (the noise of step t may use z_1..z_t only)")
        if np.any(np.diag(C) == 0.0):
            raise ValueError("C must have a non-zero diagonal (invertible)")
        C = C.copy()
        C.setflags(write=False)
        object.__setattr__(self, "C", C)
        object.__setattr__(self, "steps", int(C.shape[0]))

    @property
    def bands(self) -> int | None:
        n = self.steps
        rows, cols = np.nonzero(self.C)
        b = int(np.max(rows - cols)) + 1
        return b if b < n else None

    def toeplitz(self):
        c = self.C[:, 0]
        n = self.steps
        for k in range(1, n):
            if not np.array_equal(np.diagonal(self.C, -k), np.full(n - k, c[k])):
                return None
        if not np.array_equal(np.diagonal(self.C), np.full(n, c[0])):
            return None
        return c.copy()

    def matrix(self):
        return np.array(self.C)

    def multiply(self, x):
        x = _check_stream("x", x, self.steps)
        return np.tensordot(self.C, x, axes=(1, 0))

    def solve(self, y):
        y = _check_stream("y", y, self.steps)
        flat = y.reshape(self.steps, -1)
        return linalg.solve_triangular(self.C, flat, lower=True).reshape(y.shape)

    def column_norms(self):
        return np.linalg.norm(self.C, axis=0)

    def noise_stream(self, shape, sigma, rng):
        return _DenseStream(shape, sigma, rng, self.C)

    def describe(self) -> str:
        return f"dense lower-triangular C, {self.steps} steps"


def geometric_bands(bands: int, steps: int) -> BandedToeplitz:
    """The banded Toeplitz strategy whose coefficients are those of (1 - x)^{-1/2} (the optimal
    Toeplitz factor of the prefix sums for max error: Fichtenberger, Henzinger, Upadhyay 2023;
    Dvijotham et al. 2024), truncated to ``bands`` and normalised: a good default and the
    initial point of :func:`~dpaudit.mechanisms.mf_optimize.optimize_banded_toeplitz`."""
    b = check_count("bands", bands, minimum=1)
    k = np.arange(1, b)
    c = np.concatenate([[1.0], np.cumprod((2 * k - 1) / (2 * k))])
    return BandedToeplitz(tuple(c), steps, True)

