"""Deterministic sweeps against mpmath behind the numerical constants of the accounting layer:

* the relative error bounds assumed for scipy's ``erfcx`` / ``erfc``
  (``dpaudit.accounting.gaussian_profile._ERFCX_POS_ULPS`` etc., 4x the largest error measured);
* the exact Gaussian delta (an upper bound everywhere, within 2e-12 of the exact value where the
  value is representable) and its epsilon / mu inverses (exact delta at the root <= target, and
  the root within 1e-11 of the exact one; the internal lower root below it);
* the Poisson-subsampled randomized-response kernel (its 64-eps inflation covers its error).

Default selection: a few hundred points each (a few seconds); ``slow``: thousands.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import special

from dpaudit import conversions as C
from dpaudit.accounting import conversions as K
from dpaudit.accounting import gaussian_profile as G
from dpaudit.mechanisms import _subsampled_rdp as SR
from tests.support.mpmath_oracles import mp_gauss_delta, mp_mu, mp_subsampled_rr_rdp

pytestmark = pytest.mark.filterwarnings("error")
EPS = 2.0**-52


def _erfcx_ref(x):
    if x > 1e6:  # mpmath's erfc fails for huge arguments: asymptotic series
        s, t = mp.mpf(1), mp.mpf(1)
        for k in range(1, 8):
            t *= -(2 * k - 1) / (2 * x * x)
            s += t
        return s / (x * mp.sqrt(mp.pi))
    return mp.exp(x * x) * mp.erfc(x)


def _max_rel_err(fun, ref, xs, model):
    worst = 0.0
    for x in xs:
        with mp.workdps(40 + int(2 * math.log10(abs(x) + 1))):
            r = ref(mp.mpf(float(x)))
            err = float(abs((mp.mpf(float(fun(x))) - r) / r)) / (EPS * model(x))
        worst = max(worst, err)
    return worst


def _special_function_constants(n):
    rng = np.random.default_rng(1)
    pos = np.concatenate([rng.uniform(0, 30, n), 10 ** rng.uniform(-300, 300, n)])
    neg = np.concatenate([rng.uniform(-26.6, 0, n), -(10 ** rng.uniform(-300, 1.42, n))])
    erfc_pos = np.concatenate([rng.uniform(0, 26.5, n), 10 ** rng.uniform(-300, 1.42, n)])
    assert _max_rel_err(special.erfcx, _erfcx_ref, pos, lambda x: 1.0) <= G._ERFCX_POS_ULPS
    assert _max_rel_err(special.erfcx, _erfcx_ref, neg, lambda x: 1 + 2 * x * x) <= G._ERFCX_NEG_ULPS
    assert _max_rel_err(special.erfc, mp.erfc, erfc_pos, lambda x: 1 + 2 * x * x) <= G._ERFC_POS_ULPS


def test_special_function_error_bounds():
    _special_function_constants(150)


@pytest.mark.slow
def test_special_function_error_bounds_many():
    _special_function_constants(2000)


def _gaussian_points(n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        k = rng.integers(3)
        sigma = float(10 ** (rng.uniform(-300, 300) if k == 0 else rng.uniform(-3, 7) if k == 1 else rng.uniform(-20, 20)))
        sens = 1.0 if rng.random() < 0.6 else float(10 ** rng.uniform(-3, 3))
        mu = sens / sigma
        z = rng.uniform(-6, 39)
        with np.errstate(over="ignore"):
            eps = float(mu * (mu / 2 + z))
        if not (eps >= 0 and math.isfinite(eps)):
            eps = float(10 ** rng.uniform(-10, 10))
        yield sigma, sens, eps


def _gaussian_delta_sweep(n, seed):
    for sigma, sens, eps in _gaussian_points(n, seed):
        ours = C.gaussian_delta(sigma, eps, sensitivity=sens)
        ex = mp_gauss_delta(mp_mu(sigma, sens), eps)
        assert mp.mpf(ours) >= ex, (sigma, sens, eps)
        if ex > 1e-300:
            assert mp.mpf(ours) <= ex * (1 + 2e-12), (sigma, sens, eps)


def test_gaussian_delta_sweep():
    _gaussian_delta_sweep(300, 0)


@pytest.mark.slow
def test_gaussian_delta_sweep_many():
    _gaussian_delta_sweep(2500, 1)


def _gaussian_roots_sweep(n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        mu = float(10 ** rng.uniform(-6, 2))
        delta = float(10 ** rng.uniform(-300, -0.3))
        hi = C.gdp_epsilon(mu, delta)
        lo = K.gaussian_epsilon_lower(mu, 1.0, delta)
        assert 0.0 <= lo <= hi
        if hi == 0.0:
            assert mp_gauss_delta(mu, 0.0) <= delta
            continue
        assert mp_gauss_delta(mu, hi) <= delta  # the upper root is feasible
        if lo > 0:
            assert mp_gauss_delta(mu, lo) > delta  # the lower root is infeasible: below the exact root
        assert hi - lo <= 1e-11 * (1.0 + hi)  # and the bracket around the exact root is tight
        m = C.gdp_mu(hi, delta)
        assert mp_gauss_delta(m, hi) <= delta and m >= mu * (1 - 1e-11)


def test_gaussian_roots_sweep():
    _gaussian_roots_sweep(60, 2)


@pytest.mark.slow
def test_gaussian_roots_sweep_many():
    _gaussian_roots_sweep(300, 3)


def _rr_kernel_sweep(n, seed):
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(n):
        q = min(float(10 ** rng.uniform(-8, 0)) if rng.random() < 0.8 else float(rng.uniform(0.5, 1.0)), 1 - 1e-12)
        eps = float(10 ** rng.uniform(-6, 2))
        a = 1 + float(10 ** rng.uniform(-6, 4)) if rng.random() < 0.8 else float(rng.integers(2, 200))
        raw = float(SR.poisson_pure_dp_rdp(q, eps, np.array([a]))[0]) / (1 + 64 * EPS)  # without the inflation
        ex = min(mp_subsampled_rr_rdp(q, eps, a), mp.log1p(q * mp.expm1(eps)))
        if ex > 0:
            worst = max(worst, float((ex - mp.mpf(raw)) / ex) / EPS)
    assert worst < 64.0  # covered by the 64 eps inflation (largest error measured: 16 eps)


def test_subsampled_rr_kernel_error():
    _rr_kernel_sweep(300, 4)


@pytest.mark.slow
def test_subsampled_rr_kernel_error_many():
    _rr_kernel_sweep(2000, 5)
