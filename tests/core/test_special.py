"""dpaudit.core.special, the one home of the Gaussian curve: against mpmath over the whole legal
domain (mean differences from 1e-12 to 1e149, epsilons from -1e3 to far beyond mu^2/2), the
scalar and array paths of the certified bracket agree, and the curve used by the PLD
discretisation is never wider than its closed form alone.

Default selection: a few hundred points; ``slow``: thousands.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from dpaudit.accounting import gaussian_profile as G
from dpaudit.core import special as S


def _exact(mu: float, eps: float):
    """delta(eps) of the Gaussian with mean difference mu, 25+ digits (mpmath)."""
    return G._delta_mp(Fraction(mu) ** 2, eps)


def _points(n, seed):
    rng = np.random.default_rng(seed)
    mus = 10.0 ** rng.uniform(-12, 12, n)
    mus = np.concatenate([mus, [1e-12, 1e-6, 1e-3, 0.1, 1.0, 1.25, 10.0, 1e4, 1e8, 1e149]])
    pts = []
    for mu in mus:
        c = 0.5 * mu * mu
        cand = [0.0, -1e-9, -1.0, -700.0, 1e-9, 1.0, 30.0, c, c * (1 + 1e-9), c + 5 * mu, c + 40 * mu,
                rng.uniform(-5, 5) * mu + c]
        pts.extend((float(mu), float(e)) for e in cand if math.isfinite(e) and abs(e) < 1e300)
    return pts


def _check_curve(pts):
    worst = 0.0
    by_mu = {}
    for mu, e in pts:
        by_mu.setdefault(mu, []).append(e)
    for mu, es in by_mu.items():
        es = np.array(es)
        val, err = S.gaussian_delta(mu, es)
        for e, v, r in zip(es, val, err):
            ex = _exact(mu, float(e)) if e >= 0 else None
            if e < 0:
                # delta(e) for e < 0: 1 - e^e + e^e delta(-e) (the symmetric pair)
                with mp.workdps(40):
                    ex = 1 - mp.exp(e) + mp.exp(e) * _exact(mu, float(-e))
            with mp.workdps(40):
                gap = abs(mp.mpf(float(v)) - ex)
            assert gap <= mp.mpf(float(r)), (mu, float(e), float(v), float(r), float(ex))
            if ex > 1e-250:
                worst = max(worst, float(r) / float(ex))
    return worst


def test_curve_brackets_mpmath():
    _check_curve(_points(30, 3))


@pytest.mark.slow
def test_curve_brackets_mpmath_many():
    _check_curve(_points(400, 4))


def test_curve_never_wider_than_its_closed_form():
    rng = np.random.default_rng(7)
    for mu in 10.0 ** rng.uniform(-8, 8, 40):
        c = 0.5 * mu * mu
        es = np.concatenate([np.linspace(-3, 3, 50) * max(mu, 1.0), c + np.linspace(-10, 40, 50) * mu])
        v0, e0 = S._closed_form(float(mu), es)
        v1, e1 = S.gaussian_delta(float(mu), es)
        assert np.all(v1 - e1 >= v0 - e0) and np.all(v1 + e1 <= v0 + e0)


def _enclose(mu: float, eps: float):
    return G._inputs(Fraction(mu) ** 2, eps)


@pytest.mark.parametrize("seed", [0, 1])
def test_bracket_scalar_and_array_paths_agree_and_contain_mpmath(seed):
    pts = _points(12, 10 + seed)
    ins = [_enclose(mu, e) for mu, e in pts if e >= 0]
    arrays = [np.array([x[i] for x in ins]) for i in range(6)]
    lo_v, hi_v = S.gaussian_log_delta_bracket(*arrays)
    for k, (x, (mu, e)) in enumerate(zip(ins, [p for p in pts if p[1] >= 0])):
        lo_s, hi_s = S.gaussian_log_delta_bracket(*x)
        # the two paths: the same formulas with math's and numpy's elementary functions (a few
        # ulps apart); each is a bracket, so they overlap
        assert lo_s <= hi_v[k] and lo_v[k] <= hi_s
        ex = _exact(mu, e)
        if ex > 0:
            with mp.workdps(40):
                le = mp.log(ex)
            assert mp.mpf(lo_s) <= le <= mp.mpf(hi_s)
            assert mp.mpf(float(lo_v[k])) <= le <= mp.mpf(float(hi_v[k]))


def test_tails_against_mpmath():
    xs = np.concatenate([-np.geomspace(1e-8, 38.0, 60), [0.0], np.geomspace(1e-8, 1e10, 80)])
    lv, le = S.log_phi_tail(xs)
    mv, me = S.log_mills(xs)
    for x, a, ea, b, eb in zip(xs, lv, le, mv, me):
        with mp.workdps(60):
            xm = mp.mpf(float(x))
            lp = mp.log(mp.ncdf(-xm)) if xm >= 0 else mp.log1p(-mp.ncdf(xm))
            lm = lp - mp.log(mp.npdf(xm))
            assert abs(mp.mpf(float(a)) - lp) <= mp.mpf(float(ea)), float(x)
            assert abs(mp.mpf(float(b)) - lm) <= mp.mpf(float(eb)), float(x)
        # the float path gives the same numbers
        assert S.log_phi_tail(float(x)) == pytest.approx((float(a), float(ea)), rel=1e-12, abs=1e-300)


#: dpaudit.conversions before core.special took the curve (commit b3a8540): the same numbers
_OLD_EPSILON = [
    (0.3, 1e-05, 19.130767834361926),
    (1.0, 1e-10, 6.547924066864952),
    (1e-06, 1e-05, 500004264889.794),
    (1000000.0, 0.1, 0.0),
    (0.005, 1e-300, 27408.50183040024),
    (2.0, 0.5, 0.0),
    (1e+150, 1e-05, 0.0),
    (1e-150, 1e-05, 5e+299),
]
_OLD_DELTA = [
    (0.3, 1.0, 0.8472359334052191),
    (1.0, 0.0, 0.38292492254802624),
    (1e-06, 1000000.0, 1.0),
    (1000000.0, 1e-12, 3.98941780401815e-07),
    (5.0, 50.0, 5e-324),
    (0.001, 500000.0, 0.4996010581185314),
    (1e+150, 1.0, 5e-324),
]


def test_conversions_give_the_same_numbers_as_before():
    from dpaudit import conversions as C

    for sigma, delta, eps in _OLD_EPSILON:
        assert C.gaussian_epsilon(sigma, delta) == eps
    for sigma, eps, delta in _OLD_DELTA:
        assert C.gaussian_delta(sigma, eps) == delta
