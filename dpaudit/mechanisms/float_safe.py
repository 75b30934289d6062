"""Float-safe sampling of continuous noise: the exact mechanism's output, rounded once onto a grid.

The problem (Mironov, "On significance of the least significant bits for differential privacy", CCS
2012): ``value + rng.laplace(0, b)`` computed in doubles is not the Laplace mechanism. The set of doubles
it can output, and their probabilities, depend on ``value`` in the low-order bits, so one output can
reveal the input (dpaudit's ``check_floating_point`` and the ``float-bits`` attack certify epsilon >= 7.3
against a claim of 1 on that textbook sampler at 20,000 runs).

What is sampled here. For the exact real output ``Y = v + N`` of the mechanism (``v`` the query value,
the double as given, read as the real number it is; ``N`` the noise of the mechanism's proof, e.g. Lap(b)
or N(0, sigma^2) as a real random variable), the samplers release ``R(Y)`` for a fixed rounding ``R``:

* fixed grid (Laplace, Gaussian, sinh-normal, mixture of Gaussians, tree-aggregation nodes):
  ``R(y) = g round(y / g)`` with ``g = 2^(floor(log2 scale) - 20)`` (:func:`noise_grid`), a power of
  two fixed by the noise scale alone, between 2^-21 and 2^-20 times the scale;
* floating grid (the relative Gaussian mechanism, whose noise scale depends on the value):
  ``R(y) = q round(y / q)`` with ``q = max(g, 2^(floor(log2 |y|) - 28))`` (nearest point of a
  floating-point system with 29-bit significands and spacing at least ``g``; a monotone function).

``R`` is a deterministic function of ``Y`` and the output is computed exactly (below), so the released
value is *post-processing of the exact mechanism*: every Renyi divergence and every hockey-stick
divergence of the outputs is at most the exact mechanism's (data-processing inequality; Mironov 2017,
Prop. 2 for RDP), so every curve the mechanism states (``rdp``, ``zcdp``, ``privacy_loss``,
``pure_epsilon``) bounds what the sampler releases, at every input pair, on the grid or not, with no
correction term. The grid depends on public parameters only, never on ``v``. With ``k = trunc(v/g)``
and ``f = v/g - k`` (both exact: ``f = fmod(v, g)/g``), ``Y/g = k + f + N/g`` and the fixed-grid output
is ``g (k + j)`` with the integer ``j = round(f + N/g)``, returned as ``g k + g j`` (two exact doubles,
one IEEE rounding): a deterministic function of the integer ``k + j`` again.

How ``j`` is sampled exactly. The noise is a fixed real function of uniform random reals: Lap(1) =
S log(1/U) (S a fair sign, U uniform on (0, 1)); a pair of independent N(0, 1) is V1 G(S'), V2 G(S'),
G(s) = sqrt(-2 log(s)/s), for (V1, V2) uniform on the unit disc and S' = V1^2 + V2^2 (Marsaglia and
Bray's polar method, 1964: (V1, V2) uniform on the square [-1, 1)^2, kept when 0 < S' < 1). Each
uniform is first known to 53 bits (``rng.random``): it lies in ``[u, u + 2^-53)``. The fast path
evaluates the noise at that ``u`` in doubles with a certified half-width covering (i) the rest of the
uniform's interval (derivative bounds) and (ii) every floating-point error: each operation is correctly
rounded (unit roundoff 2^-53) except ``log`` and ``arcsinh``, taken to be within 4 ulps (glibc's and
numpy's SIMD versions are; ``proofs_checks/float_safe_sampling.py`` measures them against mpmath), so
the total relative error is below 2^-49; the allowance used, :data:`RELATIVE_ALLOWANCE` = 2^-44, is 32
times that. When the whole interval rounds to one integer, that integer *is* the rounding for every
point of the uniform's interval, hence for the uniform itself. The polar method's acceptance test is
decided the same way (S' < 1 certified; S' > 0 up to the null event S' = 0). Otherwise (about 2^-20 of the draws) the draw goes to the exact path: more random
bits of the uniforms (64 at a time, from the same ``rng``) and mpmath interval arithmetic (outward
rounding, precision growing with the bits) until the interval decides. Refining a uniform's bits keeps
it inside its earlier interval, so no decision already made is contradicted. Hence the released values
have exactly the law of ``R(Y)``: no floating-point value decides a probability.

Why not the alternatives (numbers in docs/floating-point.md, ``proofs_checks/float_safe_sampling.py``):

* Mironov's snapping mechanism (2012, Thm. 1): clamp to [-B, B], snap to the power of two Lambda >=
  lambda; it is (1/lambda + 2^-49 B/lambda)-DP, an accounted epsilon *above* the Laplace mechanism's,
  with a grid as coarse as the noise scale and a clamp.
* The discrete Laplace / discrete Gaussian (Canonne, Kamath, Steinke 2020) on the grid g at integer
  sensitivity Delta/g: the same pure epsilon and zCDP rho, but a different privacy-loss law: the discrete
  Laplace puts its maximal loss on probability 1/(1 + e^{-1/t}) > 1/2, so its RDP and delta(epsilon) lie
  above the continuous Laplace's, and the discrete Gaussian's delta(epsilon) exceeds the continuous one
  at some epsilon, so the mechanisms' stated ``privacy_loss`` would not bound those samplers.

Cost: about one uniform per draw and two dozen vector operations: at 10^6 draws 1.8 times numpy's
``laplace`` and 2.4 times numpy's ``normal`` (``benchmarks/samplers.py --draws 1000000``, docs/
floating-point.md); the exact path runs for about one draw in 10^6.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from mpmath import iv as _mp_iv
from mpmath import libmp

from dpaudit.core.numeric import l2_norm

__all__ = ["GRID_BITS", "FLOATING_GRID_BITS", "RELATIVE_ALLOWANCE", "noise_grid", "split_on_grid",
           "grid_laplace", "grid_gaussian", "grid_sinh_normal", "grid_relative_gaussian", "grid_node_sums",
           "rounded_noise", "exact_bernoulli", "exact_choice"]

#: the fixed grid is 2^-GRID_BITS times the largest power of two not above the noise scale
GRID_BITS = 20
#: the floating grid (value-dependent noise scales) keeps this many bits below the leading one
FLOATING_GRID_BITS = 28
#: certified allowance for the relative floating-point error of the fast path (analysis: < 2^-49)
RELATIVE_ALLOWANCE = 2.0 ** -44
#: random bits added to a uniform per refinement of the exact path
_REFINE_BITS = 64
#: refinements of one draw before giving up (past the first each is undecided with probability far
#: below 2^-30, so the bound is exceeded with probability below 2^-1000)
_MAX_REFINE = 40
#: rounds of the polar method's rejection loop (each keeps a fraction pi/4 of 4/3 of what is missing)
_MAX_ROUNDS = 1000
#: |S' - s| on a candidate's box: 2 (|v1| + |v2|) 2^-52 + 2^-103 + the roundings of s (< 2^-48.5)
_DS = 2.0 ** -48


def noise_grid(scale: float) -> float:
    """The grid ``g = 2^(floor(log2 scale) - GRID_BITS)`` of a noise scale (at least 2^-1074):
    a power of two between 2^-21 and 2^-20 times ``scale``."""
    scale = float(scale)
    if not (math.isfinite(scale) and scale > 0.0):
        raise ValueError(f"scale must be a positive finite number, got {scale!r}")
    _, e = math.frexp(scale)  # scale = m 2^e, 1/2 <= m < 1: floor(log2 scale) = e - 1
    return math.ldexp(1.0, max(e - 1 - GRID_BITS, -1074))


def split_on_grid(value, grid: float):
    """``(base, frac)`` with ``value = base + grid * frac``, ``base = grid * trunc(value / grid)`` and
    ``|frac| < 1``, both exact (``fmod`` is exact); non-finite values give ``(value, 0)``."""
    v = np.asarray(value, dtype=float)
    fin = np.isfinite(v)
    vf = np.where(fin, v, 0.0)
    r = np.fmod(vf, grid)
    with np.errstate(under="ignore"):
        frac = r / grid  # a power-of-two scaling: exact unless it underflows (then below 2^-1074)
    base = np.where(fin, vf - r, v)  # exact: v with its bits below the grid cleared
    return base, np.where(fin, frac, 0.0)


def _frac_fraction(x: float, grid: float) -> Fraction:
    """fmod(x, grid)/grid as an exact Fraction (0 for a non-finite x)."""
    return Fraction(math.fmod(x, grid)) / Fraction(grid) if math.isfinite(x) else Fraction(0)


# --- the fast path: enclosures (mid, half-width) of scaled standard noise ----------------------
#
# Each returns ``(mid, hw, state)`` for n draws of c X (X standard Laplace or normal, c > 0): the exact
# c X lies within ``hw`` of ``mid``, where ``hw`` includes the relative allowance for the errors of
# ``mid`` and of adding a fraction |f| < 1 to it (RELATIVE_ALLOWANCE (1 + |mid| + hw)); ``state`` lets
# the exact path recover each draw's uniforms.

_A = RELATIVE_ALLOWANCE


def _laplace_fast(rng: np.random.Generator, n: int, c: float):
    u53 = rng.random(n)  # (next_uint64 >> 11) 2^-53: an exact multiple of 2^-53
    neg = u53 >= 0.5  # the first bit is the sign, the other 52 bits are U
    u = u53 * 2.0
    u -= neg  # exact multiple of 2^-52 in [0, 1): U in [u, u + 2^-52)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.log(u)  # log U in [e, e + 2^-52/u] (e <= 0); u = 0: -inf, left to the exact path
        # hw = c 2^-52/u (1 + A) + A (1 + c |e|) (+ A^2 terms, inside the 32x margin of A)
        hw = np.divide(c * 2.0 ** -52 * (1.0 + _A), u)
        hw -= (_A * c) * e
        hw += _A
        e *= c
        mid = np.negative(e, out=e, where=~neg)
    return mid, hw, ("laplace", u, neg)


def _polar_points(rng: np.random.Generator, m: int):
    """m points (V1, V2) uniform on the unit disc (Marsaglia-Bray): ``v1, v2`` with V in
    [v, v + 2^-52) (v = 2u - 1, exact), ``s = v1^2 + v2^2`` and the refined uniforms of the few
    accepted on the exact path."""
    got = 0
    vs1, vs2, ss, refined = [], [], [], {}
    ctx = None
    for _ in range(_MAX_ROUNDS):
        need = m - got
        if need <= 0:
            break
        k = need + need // 3 + 16
        v1 = rng.uniform(-1.0, 1.0, k)  # -1 + 2u: exact
        v2 = rng.uniform(-1.0, 1.0, k)
        s = v1 * v1
        s += v2 * v2
        acc = s < 1.0 - _DS  # S' < 1 for sure; S' > 0 except on a null event (s tiny: exact path)
        rej = np.flatnonzero(~acc)
        unsure = rej[s[rej] < 1.0 + _DS]  # S' may be either side of 1
        exact_acc = {}
        for i in unsure:  # probability about 2^-47 per candidate
            ctx = ctx or _iv_context()
            pair = tuple(_Uniform(int((float(v[i]) + 1.0) * 2.0 ** 52), 53) for v in (v1, v2))
            if _polar_accept_exact(ctx, pair[0], pair[1], rng):
                acc[i] = True
                exact_acc[int(i)] = pair
        if exact_acc or int(np.count_nonzero(acc)) < need:
            idx = np.flatnonzero(acc)[:need]
            for i, pair in exact_acc.items():
                pos = int(np.searchsorted(idx, i))
                if pos < idx.size and idx[pos] == i:
                    refined[got + pos] = pair
            vs1.append(v1[idx])
            vs2.append(v2[idx])
            ss.append(s[idx])
            got += idx.size
        else:
            vs1.append(v1[acc][:need])
            vs2.append(v2[acc][:need])
            ss.append(s[acc][:need])
            got += need
    else:  # pragma: no cover
        raise RuntimeError("float-safe Gaussian sampler exceeded its iteration bound")
    if len(ss) == 1:
        return vs1[0], vs2[0], ss[0], refined
    return np.concatenate(vs1), np.concatenate(vs2), np.concatenate(ss), refined


def _normal_fast(rng: np.random.Generator, n: int, c: float):
    """Pair i of the polar method gives draw i (c V1 G) and draw m + i (c V2 G), m = ceil(n/2),
    G = sqrt(h(S')), h(x) = -2 log(x)/x.

    Width: |S' - s| <= _DS, and for s >= 2^-30, |h'(x)| = 2 (1 - log x)/x^2 <= 2.0001 (1.00001 -
    log s)/s^2 on [s - _DS, s + _DS]; with |sqrt(a) - sqrt(b)| <= |a - b|/sqrt(b), G is within
    r g of g = sqrt(h(s)), r = 1.00005 _DS (1.00001 - log s)/(-s log s) + 2^-49 (the error of g
    itself), and (1 + L)(1 - e^{-L}) <= 2 L (L = -log s) gives r <= 2.01 _DS/(s (1 - s)) + 2^-49.
    V is in [v, v + 2^-52) and |v| <= sqrt(s) (up to 2^-52), so |c V G - c v g| <= c g (sqrt(s) r +
    2^-52 (1 + r)) <= c g (2.01 _DS/(sqrt(s) (1 - s)) + 2^-49 + 2^-51) (the r 2^-52 term is below
    2^-37 of the first for s >= 2^-30); with the allowance A (1 + c |v| g + hw) <= A (1 + c g) + A hw
    (hw < 1 where it matters) and a factor 1.0001 for the roundings of the width itself:
    hw = c g 1.0001 (2.01 _DS/(sqrt(s) (1 - s)) + 2^-49 + 2^-51 + A) + 2A."""
    m = (n + 1) // 2
    v1, v2, s, refined = _polar_points(rng, m)
    mid = np.empty(2 * m)
    hw = np.empty(2 * m)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        g = np.log(s)
        g *= -2.0
        g /= s
        np.sqrt(g, out=g)  # relative error < 2^-50 (log within 4 ulps)
        g *= c
        np.multiply(v1, g, out=mid[:m])
        np.multiply(v2, g, out=mid[m:])
        t = hw[:m]
        np.sqrt(s, out=t)
        t *= 1.0 - s
        np.divide(1.0001 * 2.01 * _DS, t, out=t)
        t += 1.0001 * (2.0 ** -49 + 2.0 ** -51 + _A)
        t *= g  # g already times c
        t += 2.0 * _A
        hw[m:] = t
    small = np.flatnonzero(s < 2.0 ** -30)  # (probability 3e-10 per pair: the exact path)
    for i in list(refined) + [int(q) for q in small]:
        hw[i] = hw[m + i] = math.inf
    return mid[:n], hw[:n], ("normal", v1, v2, m, refined)


def _fast(kind: str, rng: np.random.Generator, n: int, c: float = 1.0):
    return _laplace_fast(rng, n, c) if kind == "laplace" else _normal_fast(rng, n, c)


def _round_decided(w, hw):
    """``(j, decided)``: j = the integer nearest to w, decided where the whole ``[w - hw, w + hw]``
    lies strictly within 1/2 of j (then floor(x + 1/2) = j on it). ``w - rint(w)`` is exact; the
    rounding of ``w`` itself is inside the allowance in ``hw``."""
    with np.errstate(invalid="ignore", over="ignore"):
        j = np.rint(w)
        d = w - j
        np.abs(d, out=d)
        d += hw
        ok = d < 0.5  # False for nan and inf
    return j, ok


# --- the exact path: interval arithmetic on lazily refined uniforms -----------------------------

def _iv_context():
    """A private mpmath interval context (outward rounding; mpmath.iv's global precision untouched)."""
    return type(_mp_iv)()


class _Uniform:
    """A uniform real on [0, 1) known to lie in ``[num / 2^bits, (num + 1) / 2^bits)``."""

    __slots__ = ("num", "bits")

    def __init__(self, num: int, bits: int):
        self.num, self.bits = int(num), int(bits)

    def refine(self, rng: np.random.Generator) -> None:
        """Draw its next 64 bits (the interval shrinks inside itself)."""
        self.num = (self.num << _REFINE_BITS) | int(rng.integers(0, 2 ** 64, dtype=np.uint64))
        self.bits += _REFINE_BITS

    def interval(self, ctx):
        return ctx.make_mpf((libmp.from_man_exp(self.num, -self.bits),
                             libmp.from_man_exp(self.num + 1, -self.bits)))


def _iv_exact(ctx, x):
    """An exact number (float, int or Fraction) as an interval of the context."""
    if isinstance(x, Fraction):
        return ctx.mpf(x.numerator) / ctx.mpf(x.denominator)
    return ctx.mpf(x)


def _iv_asinh(ctx, x):
    """asinh of an interval (increasing, odd): log(t + sqrt(t^2 + 1)) at |each end|."""
    ends = []
    for k, e in enumerate(x._mpi_):
        t = ctx.make_mpf((libmp.mpf_abs(e), libmp.mpf_abs(e)))
        s = ctx.log(t + ctx.sqrt(t * t + 1))
        if libmp.mpf_sign(e) < 0:
            s = -s
        ends.append(s._mpi_[k])
    return ctx.make_mpf((ends[0], ends[1]))


def _finite_end(end) -> bool:
    return end not in (libmp.finf, libmp.fninf, libmp.fnan)


def _end_round(end) -> int | None:
    """floor(e + 1/2) of an interval end (an mpf tuple); None for an infinite or NaN end."""
    if not _finite_end(end):
        return None
    return int(libmp.to_int(libmp.mpf_floor(libmp.mpf_add(end, libmp.fhalf))))


def _polar_accept_exact(ctx, a: _Uniform, b: _Uniform, rng) -> bool:
    """Whether 0 < (2A - 1)^2 + (2B - 1)^2 < 1, refining A and B until decided."""
    for _ in range(_MAX_REFINE):
        ctx.prec = max(a.bits, b.bits) + 64
        s = (2 * a.interval(ctx) - 1) ** 2 + (2 * b.interval(ctx) - 1) ** 2
        lo, hi = s._mpi_
        if libmp.mpf_lt(hi, libmp.fone) and libmp.mpf_gt(lo, libmp.fzero):
            return True
        if libmp.mpf_ge(lo, libmp.fone):
            return False
        a.refine(rng)
        b.refine(rng)
    raise RuntimeError("float-safe Gaussian sampler exceeded its refinement bound")  # pragma: no cover


def _exact_laplace(ctx, u: float, neg: bool, rng):
    """A generator of refining enclosures of S log(1/U), U in [u, u + 2^-52)."""
    uni = _Uniform(int(u * 2.0 ** 52), 52)
    for _ in range(_MAX_REFINE):
        ctx.prec = uni.bits + 96
        x = -ctx.log(uni.interval(ctx))
        yield -x if neg else x
        uni.refine(rng)
    raise RuntimeError("float-safe Laplace sampler exceeded its refinement bound")  # pragma: no cover


def _exact_normal_pair(ctx, a: _Uniform, b: _Uniform, rng):
    """A generator of refining enclosures ``(V1 G, V2 G)`` of one polar pair (accepted)."""
    for _ in range(_MAX_REFINE):
        ctx.prec = max(a.bits, b.bits) + 96
        v1 = 2 * a.interval(ctx) - 1
        v2 = 2 * b.interval(ctx) - 1
        s = v1 ** 2 + v2 ** 2
        g = ctx.sqrt(-2 * ctx.log(s) / s)
        yield v1 * g, v2 * g
        a.refine(rng)
        b.refine(rng)
    raise RuntimeError("float-safe Gaussian sampler exceeded its refinement bound")  # pragma: no cover


def _decide_exact(state, undecided: np.ndarray, decide, rng, out) -> None:
    """The exact path for the draws ``undecided`` (flat indices): ``decide(ctx, i, x)`` returns the
    output of draw i from an enclosure ``x`` of its standard noise, or None while undecided."""
    if undecided.size == 0:
        return
    ctx = _iv_context()
    if state[0] == "laplace":
        _, u, neg = state
        for i in undecided:
            for x in _exact_laplace(ctx, float(u[i]), bool(neg[i]), rng):
                r = decide(ctx, int(i), x)
                if r is not None:
                    out[i] = r
                    break
        return
    _, v1, v2, m, refined = state  # U = (V + 1)/2 in [u, u + 2^-53), u = (v + 1)/2
    pairs: dict[int, list[int]] = {}
    for i in undecided:
        pairs.setdefault(int(i) % m, []).append(int(i))
    for p in sorted(pairs):
        a, b = refined.get(p) or tuple(_Uniform(int((float(v[p]) + 1.0) * 2.0 ** 52), 53) for v in (v1, v2))
        todo = list(pairs[p])
        for x1, x2 in _exact_normal_pair(ctx, a, b, rng):
            for i in list(todo):
                r = decide(ctx, i, x1 if i < m else x2)
                if r is not None:
                    out[i] = r
                    todo.remove(i)
            if not todo:
                break


class _NoiseMap:
    """The noise in grid units as a function of the standard noise X: ``c X``, or ``a asinh(r X)``
    (the sinh-normal); increasing in X."""

    def __init__(self, c: float = 1.0, asinh=None):
        self.c, self.asinh = float(c), asinh  # asinh: (a, r), r a float or an exact Fraction

    def fast(self, kind: str, rng: np.random.Generator, n: int):
        """``(mid, hw, state)`` of n mapped noises (``a asinh(r x)`` is (a r)-Lipschitz; the
        allowance is added again for the errors of the map itself)."""
        if self.asinh is None:
            return _fast(kind, rng, n, self.c)
        mid, hw, state = _fast(kind, rng, n, 1.0)
        a, r = float(self.asinh[0]), float(self.asinh[1])  # r rounded: a relative 2^-53, in the allowance
        with np.errstate(invalid="ignore", over="ignore"):
            mid = a * np.arcsinh(r * mid)
            hw = (a * r) * hw + _A * (1.0 + np.abs(mid))
        return mid, hw, state

    def exact(self, ctx, x):
        if self.asinh is None:
            return ctx.mpf(self.c) * x
        a, r = self.asinh
        return _iv_exact(ctx, a) * _iv_asinh(ctx, _iv_exact(ctx, r) * x)


def _rounded_noise(frac, kind: str, rng: np.random.Generator, shape: tuple, scale: float, asinh,
                   frac_exact) -> np.ndarray:
    """:func:`rounded_noise` as float64 (exact integers below 2^53)."""
    n = int(np.prod(shape)) if shape else 1
    if n == 0:
        return np.zeros(shape)
    frac = np.asarray(frac, dtype=float)
    nmap = _NoiseMap(scale, asinh)
    mid, hw, state = nmap.fast(kind, rng, n)
    w = mid
    if np.any(frac != 0.0):
        w = (mid.reshape(shape) + frac).reshape(-1)
    j, ok = _round_decided(w, hw)
    undecided = np.zeros(0, dtype=np.int64) if ok.all() else np.flatnonzero(~ok)
    if undecided.size:
        if frac_exact is None:
            fb = np.broadcast_to(frac, shape).reshape(-1)

            def frac_exact(i):
                return float(fb[i])

        def decide(ctx, i, x):
            w_iv = _iv_exact(ctx, frac_exact(i)) + nmap.exact(ctx, x)
            lo, hi = _end_round(w_iv._mpi_[0]), _end_round(w_iv._mpi_[1])
            return lo if lo is not None and lo == hi else None
        _decide_exact(state, undecided, decide, rng, j)
    return j.reshape(shape)


def rounded_noise(frac, kind: str, rng: np.random.Generator, *, shape, scale: float = 1.0, asinh=None,
                  frac_exact=None) -> np.ndarray:
    """The integers ``j = round(frac + noise)`` (int64, shape ``shape``) for independent exact real
    noises ``scale * X`` (``asinh=(a, r)``: ``a * asinh(r * X)``, r a float or an exact Fraction), X standard Laplace
    (``kind="laplace"``) or standard normal (``"normal"``); ``frac`` broadcasts to ``shape``.
    ``frac_exact(i)`` gives entry i of the flattened broadcast ``frac`` exactly (a Fraction or a
    float; default the float itself). Module docstring: the fast certified path, then the exact path
    for the draws it does not decide."""
    if kind not in ("laplace", "normal"):
        raise ValueError(f"kind must be 'laplace' or 'normal', got {kind!r}")
    shape = tuple(shape)
    return _rounded_noise(frac, kind, rng, shape, float(scale), asinh, frac_exact).astype(np.int64)


def _shape(value: np.ndarray, size) -> tuple:
    return value.shape if size is None else tuple(np.atleast_1d(size)) + value.shape


def _fixed_grid(value, rng, size, kind: str, scale: float, asinh=None):
    """``value + noise`` rounded to the grid of ``scale`` (module docstring), shape ``size + value.shape``."""
    v = np.asarray(value, dtype=float)
    shape = _shape(v, size)
    if scale == 0.0:  # no noise: a non-private release of the value itself
        out = np.array(np.broadcast_to(v, shape), dtype=float)
        return out[()] if shape == () else out
    g = noise_grid(scale)
    base, frac = split_on_grid(v, g)  # on the value itself, broadcast afterwards
    vflat = v.ravel()

    def frac_exact(i: int):  # value.shape is the trailing part of shape
        return _frac_fraction(float(vflat[i % vflat.size]), g)
    c = scale / g if asinh is None else 1.0  # exact: a power-of-two scaling
    amap = None if asinh is None else (asinh[0] / g, asinh[1])
    out = _rounded_noise(frac, kind, rng, shape, c, amap, frac_exact)
    with np.errstate(over="ignore", invalid="ignore"):
        out *= g  # g j: exact (|j| < 2^53, g a power of two)
        if np.any(base != 0.0):
            out += base  # the exact g (k + j), rounded once
    if not np.all(np.isfinite(v)):
        out = np.where(np.isfinite(v), out, v)
    return out[()] if shape == () else out


def grid_laplace(value, scale: float, rng: np.random.Generator, size=None):
    """``value + Lap(scale)``: the exact real output rounded to the grid :func:`noise_grid` (scale),
    sampled exactly (module docstring); shape ``size + value.shape``. Post-processing of the Laplace
    mechanism, so its curves bound this sampler."""
    return _fixed_grid(value, rng, size, "laplace", float(scale))


def grid_gaussian(value, sigma: float, rng: np.random.Generator, size=None):
    """``value + N(0, sigma^2)``: the exact real output rounded to the grid :func:`noise_grid` (sigma),
    sampled exactly (module docstring); shape ``size + value.shape``."""
    return _fixed_grid(value, rng, size, "normal", float(sigma))


def grid_sinh_normal(value, sigma: float, a: float, rng: np.random.Generator, size=None):
    """``value + a asinh(Z / a)``, Z ~ N(0, sigma^2) (the sinh-normal noise of Bun, Dwork, Rothblum,
    Steinke 2018): the exact real output rounded to the grid of ``min(sigma, a)``, sampled exactly."""
    sigma, a = float(sigma), float(a)
    return _fixed_grid(value, rng, size, "normal", min(sigma, a), asinh=(a, Fraction(sigma) / Fraction(a)))


# --- value-dependent scale: the floating grid ---------------------------------------------------

def _floating_round(y, floor_exp: int):
    """R(y) = q round(y/q), q = 2^max(floor(log2|y|) - FLOATING_GRID_BITS, floor_exp) (exact)."""
    with np.errstate(invalid="ignore", over="ignore"):
        _, ex = np.frexp(y)  # |y| = m 2^ex, 1/2 <= m < 1: floor(log2 |y|) = ex - 1
        qe = np.maximum(ex - 1 - FLOATING_GRID_BITS, floor_exp)
        return np.ldexp(np.floor(np.ldexp(y, -qe) + 0.5), qe)


def _floating_round_end(end, floor_exp: int) -> float | None:
    """R at an interval end (an mpf tuple), exactly; None for an infinite or NaN end."""
    if not _finite_end(end):
        return None
    if end == libmp.fzero:
        return 0.0
    _, man, exp, bc = end
    qe = max(exp + bc - 1 - FLOATING_GRID_BITS, floor_exp)
    k = int(libmp.to_int(libmp.mpf_floor(libmp.mpf_add(libmp.mpf_shift(end, -qe), libmp.fhalf))))
    try:
        return math.ldexp(float(k), qe)  # k has at most 30 bits: exact unless it overflows
    except OverflowError:  # pragma: no cover - beyond the double range
        return math.copysign(math.inf, k)


def grid_relative_gaussian(value, sigma: float, gamma: float, rng: np.random.Generator, size=None):
    """``value + (sigma + gamma ||value||) xi``, xi ~ N(0, I) (last axis of ``value``; the Relative
    Gaussian Mechanism of Hendrikx, Mangold, Bellet 2024), the exact real output (exact norm) rounded to
    the floating grid with spacing at least the fixed grid of ``sigma`` (2^-1074 when sigma = 0),
    sampled exactly; shape ``size + value.shape``."""
    v = np.asarray(value, dtype=float)
    shape = _shape(v, size)
    dim = v.shape[-1]
    floor_exp = -1074 if sigma == 0.0 else int(math.log2(noise_grid(sigma)))
    scale = float(sigma) + float(gamma) * l2_norm(v, axis=-1, keepdims=True)
    # l2_norm, gamma * . and sigma + . round at most (dim/2 + 6) times relative 2^-53 (scaled squares
    # summed, sqrt, products): the true scale is within s_rel of the computed one
    s_rel = (dim + 16) * 2.0 ** -50
    n = int(np.prod(shape)) if shape else 1
    if n == 0:
        return np.zeros(shape)
    mid, hw, state = _normal_fast(rng, n, 1.0)  # hw includes the allowance of the standard noise
    mid = mid.reshape(shape)
    hw = hw.reshape(shape)
    with np.errstate(invalid="ignore", over="ignore"):
        noise = scale * mid
        hw_y = scale * hw + s_rel * scale * (np.abs(mid) + hw)
        y = v + noise
        # relative allowance only (absolute units here), and 2^-1070 for subnormal roundings
        hw_y = hw_y + RELATIVE_ALLOWANCE * (np.abs(noise) + hw_y + np.abs(v)) + 2.0 ** -1070
        lo = _floating_round(y - hw_y, floor_exp)
        hi = _floating_round(y + hw_y, floor_exp)
    ok = (lo == hi) & np.isfinite(lo)
    out = np.where(ok, lo, 0.0).ravel()
    undecided = np.flatnonzero(~ok.ravel())
    if undecided.size:
        vb = np.broadcast_to(v, shape).reshape(-1, dim)
        rows: dict = {}

        def decide(ctx, i, x):
            row = i // dim
            if row not in rows:
                vals = [float(t) for t in vb[row]]
                rows[row] = vals
            vals = rows[row]
            ctx.prec = max(ctx.prec, 120)
            norm = ctx.sqrt(sum(ctx.mpf(t) ** 2 for t in vals)) if vals else ctx.mpf(0)
            yv = ctx.mpf(vals[i % dim]) + (ctx.mpf(float(sigma)) + ctx.mpf(float(gamma)) * norm) * x
            a, b = (_floating_round_end(e, floor_exp) for e in yv._mpi_)
            return a if a is not None and a == b else None
        _decide_exact(state, undecided, decide, rng, out)
    out = out.reshape(shape)
    return out[()] if shape == () else out


# --- exact sums on the grid (tree aggregation) --------------------------------------------------

def _exact_ints(values: np.ndarray) -> tuple[list, int]:
    """``(ints, e)`` with values[i] = ints[i] 2^e exactly (Python ints; e the smallest exponent)."""
    ratios = [float(x).as_integer_ratio() for x in values.ravel()]
    e = 0
    for _, den in ratios:
        e = min(e, -(den.bit_length() - 1))  # den is a power of two
    return [num << ((-e) - (den.bit_length() - 1)) for num, den in ratios], e


def grid_node_sums(values, groups, sigma: float, rng: np.random.Generator, lead=()):
    """Noisy exact sums on the grid of ``sigma``: for each ``(a, b)`` in ``groups``, the exact sum of
    ``values[a:b]`` (first axis; ``values`` real, finite) plus N(0, sigma^2) per remaining coordinate,
    the exact real result rounded to the grid :func:`noise_grid` (sigma); shape ``lead + (len(groups),)
    + values.shape[1:]``. (Tree aggregation's nodes: the sums are computed exactly, so the released nodes
    are post-processing of the exact Gaussian mechanism on them.)"""
    v = np.asarray(values, dtype=float)
    inner = v.shape[1:]
    if sigma == 0.0:  # no noise: the exact sums themselves, each rounded once (a non-private release)
        sums = np.array([[math.fsum(col) for col in v[a:b].reshape(b - a, -1).T] for a, b in groups], dtype=float)
        out = sums.reshape((len(groups),) + inner)
        return np.array(np.broadcast_to(out, tuple(lead) + out.shape), dtype=float)
    g = noise_grid(sigma)
    lg = int(math.log2(g))
    flat = v.reshape(v.shape[0], -1)
    ints, e = _exact_ints(flat)
    width = flat.shape[1]
    rows = [ints[t * width:(t + 1) * width] for t in range(flat.shape[0])]
    prefix = [[0] * width]
    for row in rows:
        prefix.append([p + x for p, x in zip(prefix[-1], row)])
    ks, fracs, fexact = [], [], []
    for a, b in groups:
        for c in range(width):
            s = prefix[b][c] - prefix[a][c]  # the exact sum is s 2^e
            if e >= lg:
                ks.append(s << (e - lg))
                fracs.append(0.0)
                fexact.append(Fraction(0))
            else:
                d = lg - e
                k = -((-s) >> d) if s < 0 else s >> d  # trunc(s / 2^d)
                r = s - (k << d)
                ks.append(k)
                fexact.append(Fraction(r, 1 << d))
                fracs.append(r / (1 << d))
    node_shape = (len(groups),) + inner
    frac = np.asarray(fracs, dtype=float).reshape(node_shape)
    shape = tuple(lead) + node_shape
    nf = len(fexact)
    j = rounded_noise(frac, "normal", rng, shape=shape, scale=sigma / g, frac_exact=lambda i: fexact[i % nf])
    if all(abs(k) < 2 ** 62 for k in ks):
        tot = np.asarray(ks, dtype=np.int64).reshape(node_shape) + j  # |j| < 2^40
        with np.errstate(over="ignore"):
            return tot.astype(float) * g  # the exact integer rounded once, then an exact scaling
    kb = np.broadcast_to(np.asarray(ks, dtype=object).reshape(node_shape), shape)
    out = np.empty(shape)
    for idx in np.ndindex(shape):  # pragma: no cover - sums beyond 2^62 grid steps
        out[idx] = _int_on_grid(int(kb[idx]) + int(j[idx]), lg)
    return out


def _int_on_grid(k: int, lg: int) -> float:
    try:
        return math.ldexp(float(k), lg)
    except OverflowError:
        return math.copysign(math.inf, k)


# --- exact discrete choices ---------------------------------------------------------------------

def exact_bernoulli(q: float, shape, rng: np.random.Generator) -> np.ndarray:
    """Booleans, True with probability exactly ``q`` (the float in [0, 1] read as the binary fraction
    it is): ``U < q`` for a uniform U known to 53 bits, refined where ``q`` lies inside its interval."""
    shape = tuple(np.atleast_1d(shape)) if shape is not None else ()
    q = float(q)
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must be in [0, 1], got {q!r}")
    u = rng.random(shape)
    out = u < q
    unsure = np.flatnonzero(((u < q) & (q < u + 2.0 ** -53)).ravel())
    if unsure.size:
        qf = Fraction(q)
        flat = out.ravel()
        for i in unsure:
            uni = _Uniform(int(float(u.ravel()[i]) * 2.0 ** 53), 53)
            for _ in range(_MAX_REFINE):  # q has at most 1074 fraction bits: decided by then
                lo = Fraction(uni.num, 1 << uni.bits)
                hi = Fraction(uni.num + 1, 1 << uni.bits)
                if hi <= qf or lo >= qf:
                    flat[i] = hi <= qf
                    break
                uni.refine(rng)
        out = flat.reshape(shape)
    return out


def exact_choice(weights, shape, rng: np.random.Generator) -> np.ndarray:
    """Indices drawn with probabilities exactly ``weights[i] / sum(weights)`` (the floats read as the
    binary fractions they are): the index is the number of cumulative thresholds at or below a uniform U,
    decided on U's 53-bit interval and refined where a threshold lies inside it; int64."""
    w = [Fraction(float(x)) for x in np.asarray(weights, dtype=float).ravel()]
    total = sum(w)
    if any(x < 0 for x in w) or total <= 0:
        raise ValueError("weights must be non-negative with a positive sum")
    cum, acc = [], Fraction(0)
    for x in w[:-1]:
        acc += x
        cum.append(acc / total)
    t_lo = np.array([_float_down(c) for c in cum])
    t_hi = np.array([_float_up(c) for c in cum])
    u = rng.random(shape)
    a = np.searchsorted(t_hi, u, side="right")  # thresholds certainly <= U
    b = np.searchsorted(t_lo, u + 2.0 ** -53, side="left")  # thresholds possibly <= U
    out = a.astype(np.int64).ravel()
    unsure = np.flatnonzero((a != b).ravel())
    uf = u.ravel()
    for i in unsure:
        uni = _Uniform(int(float(uf[i]) * 2.0 ** 53), 53)
        for _ in range(_MAX_REFINE):
            lo = Fraction(uni.num, 1 << uni.bits)
            hi = Fraction(uni.num + 1, 1 << uni.bits)
            below = sum(1 for c in cum if c <= lo)
            maybe = sum(1 for c in cum if c < hi)
            if below == maybe:
                out[i] = below
                break
            uni.refine(rng)
    return out.reshape(np.shape(u))


def _float_down(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) <= x else float(np.nextafter(f, -math.inf))


def _float_up(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) >= x else float(np.nextafter(f, math.inf))
