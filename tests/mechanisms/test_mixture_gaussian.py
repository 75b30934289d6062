"""MixtureOfGaussians (dpaudit/mechanisms/mixture_gaussian.py): the curve delta(e) and the Renyi
divergence of both directions against mpmath quadrature, the Poisson-subsampled Gaussian (the
two-component case, where the package has exact numbers), dp_accounting's MixtureOfGaussiansDpEvent,
properties, the sampler and audits."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpaudit import Gaussian, PLDAccountant, PoissonSampled, RDPAccountant
from dpaudit.audit import audit_mechanism
from dpaudit.mechanisms import MixtureOfGaussians
from dpaudit.mechanisms.mixture_gaussian import MixtureGaussianPair, mixture_gaussian_rdp
from dpaudit.testing import assert_accountant_sound, exact_epsilon

MU = (0.0, 0.7, 2.0)
W = (0.6, 0.3, 0.1)


def _densities(mu, w):
    mu = [mp.mpf(v) for v in mu]
    w = [mp.mpf(v) for v in w]
    p = lambda x: mp.npdf(x)  # noqa: E731
    q = lambda x: sum(wi * mp.npdf(x - mi) for wi, mi in zip(w, mu))  # noqa: E731
    return p, q


def _delta_mp(mu, w, e, direction):
    p, q = _densities(mu, w)
    if direction == "remove":
        p, q = q, p
    ee = mp.e ** mp.mpf(e)
    f = lambda x: max(p(x) - ee * q(x), 0)  # noqa: E731
    g = lambda x: p(x) - ee * q(x)  # noqa: E731
    pts = [mp.mpf(v) for v in (-40, -5, 0, 1, 2, 3, 5, 40)]
    # the kink where p = e^e q (one crossing: the loss is monotone), found by bisection
    grid = [mp.mpf(v) / 2 for v in range(-40, 41)]
    for a, b in zip(grid, grid[1:]):
        if g(a) * g(b) < 0:
            for _ in range(100):
                c = (a + b) / 2
                a, b = (c, b) if g(a) * g(c) > 0 else (a, c)
            pts.append((a + b) / 2)
    return mp.quad(f, sorted(pts))


def _rdp_mp(mu, w, alpha):
    p, q = _densities(mu, w)
    a = mp.mpf(alpha)
    out = []
    for pp, qq in ((p, q), (q, p)):
        f = lambda x: pp(x) ** a * qq(x) ** (1 - a)  # noqa: E731
        out.append(mp.log(mp.quad(f, [-80, -20, -5, 0, 2, 5, 20, 80, 400])) / (a - 1))
    return max(out)


@pytest.mark.parametrize("direction", ["add", "remove"])
def test_delta_matches_mpmath_quadrature(direction):
    mp.mp.dps = 30
    pair = MixtureGaussianPair(np.array(MU), np.array(W), direction)
    es = [-3.0, -0.5, 0.0, 0.5, 2.0, 4.0]
    val, err = pair.delta(es)
    for e, v, r in zip(es, val, err):
        ref = _delta_mp(MU, W, e, direction)
        assert abs(v - ref) <= r + 1e-13 * ref + 1e-300, (e, v, ref, r)
        assert r <= 1e-12 * max(ref, 1e-3)  # and the error bound is small
    # the ADD loss never exceeds -log w_0
    assert pair.reversed().reversed().direction == direction
    if direction == "add":
        assert float(pair.delta(-math.log(0.6) + 1e-9)[0][0]) == 0.0


@pytest.mark.parametrize("alpha", [1.01, 1.5, 2.0, 3.5, 10.0, 40.0])
def test_rdp_matches_mpmath_quadrature(alpha):
    mp.mp.dps = 30
    got = float(mixture_gaussian_rdp(MU, W, [alpha])[0])
    ref = _rdp_mp(MU, W, alpha)
    # the margin: a relative 1e-10 on the moment, i.e. 1e-10/(alpha - 1) on the divergence
    assert got >= ref and (got - ref) <= 1e-12 * ref + 1.1e-10 / (alpha - 1), (alpha, got, ref)


@pytest.mark.parametrize("q,sigma,pld", [(0.1, 1.0, True), (0.01, 0.8, False), (0.5, 2.0, False)])
def test_two_components_are_the_poisson_subsampled_gaussian(q, sigma, pld):
    m = MixtureOfGaussians(sigma, (0.0, 1.0), (1 - q, q))
    ps = PoissonSampled(Gaussian(sigma), q)
    orders = np.array([1.5, 2.0, 3.0, 8.0, 32.0])
    a, b = m.rdp(orders), ps.rdp(orders)
    assert np.all(a >= b * (1 - 1e-13)) and np.allclose(a, b, rtol=1e-8, atol=2e-10)
    es = np.array([-2.0, -0.3, 0.0, 0.1, 0.5, 1.5, 3.0])
    for mine, theirs in zip(m.privacy_loss().upper, ps.privacy_loss().upper):
        (v1, e1), (v2, e2) = mine.delta(es), theirs.delta(es)
        assert np.all(np.abs(v1 - v2) <= e1 + e2 + 1e-15)
    if not pld:
        return
    lo1, up1 = PLDAccountant().compose(m, 3).epsilon_interval(1e-5)
    lo2, up2 = PLDAccountant().compose(ps, 3).epsilon_interval(1e-5)
    assert lo1 <= up2 and lo2 <= up1 and abs(up1 - up2) < 1e-6


def test_one_component_is_the_gaussian():
    m = MixtureOfGaussians(1.3, (0.9,), (1.0,))
    ex = exact_epsilon(m, 1e-5)  # the exact pair of one step
    ref = float(exact_epsilon(Gaussian(1.3, 0.9), 1e-5))
    assert ex == pytest.approx(ref, rel=1e-9)


dpa = pytest.importorskip("dp_accounting")


@pytest.mark.slow  # dp_accounting's own PLD of the mixture takes 20-30 s on a loaded machine
@pytest.mark.parametrize("sigma,c,w,k", [(2.0, (0.0, 0.5, 1.0, 3.0), (0.7, 0.1, 0.1, 0.1), 2)])
def test_cross_check_dp_accounting_mixture_event(sigma, c, w, k):
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_event.SelfComposedDpEvent(dp_event.MixtureOfGaussiansDpEvent(sigma, c, w), k))
    theirs = acc.get_epsilon(1e-5)  # pessimistic: an upper bound
    lo, up = PLDAccountant(rdp_fallback=False).compose(MixtureOfGaussians(sigma, c, w), k).epsilon_interval(1e-5)
    assert lo <= theirs + 1e-12 and up <= theirs + 1e-3 and up - lo < 1e-5


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sigma=st.floats(0.5, 4.0), c=st.lists(st.floats(0.0, 2.0), min_size=1, max_size=4),
       raw=st.lists(st.floats(0.05, 1.0), min_size=4, max_size=4), scale=st.floats(1.0, 2.0))
def test_property_curves(sigma, c, raw, scale):
    w = np.array(raw[:len(c)]) / sum(raw[:len(c)])
    m = MixtureOfGaussians(sigma, c, tuple(w))
    orders = np.array([1.5, 2.0, 4.0, 16.0])
    r = m.rdp(orders)
    mu = np.array(c) / sigma
    convex = np.log(np.sum(w[None, :] * np.exp(orders[:, None] * (orders[:, None] - 1) * mu[None, :] ** 2 / 2),
                           axis=1)) / (orders - 1)
    # joint convexity over the components (up to our margin of 1e-10/(alpha - 1))
    assert np.all(r <= convex * (1 + 1e-12) + 1.1e-10 / (orders - 1))
    assert np.all(np.diff(r) >= -1e-12)  # non-decreasing in the order
    # larger shifts leak more (delta at a few epsilons, both directions)
    big = MixtureOfGaussians(sigma, tuple(scale * v for v in c), tuple(w))
    es = np.array([0.0, 0.3, 1.0])
    for small_pair, big_pair in zip(m.privacy_loss().upper, big.privacy_loss().upper) if max(c) > 0 else ():
        (v1, e1), (v2, e2) = small_pair.delta(es), big_pair.delta(es)
        assert np.all(v1 <= v2 + e1 + e2 + 1e-15)


def test_no_shift_releases_nothing():
    m = MixtureOfGaussians(1.0, (0.0, 0.0), (0.5, 0.5))
    assert np.all(m.rdp([2.0, 10.0]) == 0) and m.zcdp() == 0 and m.pure_epsilon() == 0
    assert PLDAccountant().compose(m, 5).epsilon(1e-6) == 0.0


def test_sampler_and_audits():
    m = MixtureOfGaussians(0.5, (0.0, 1.0), (0.5, 0.5))
    rng = np.random.default_rng(0)
    y1 = m.sample(1, rng, 50_000)
    assert abs(y1.mean() - 0.5) < 0.015 and abs(y1.var() - (0.25 + 0.25)) < 0.02
    y0 = m.sample(0, rng, 50_000)
    assert abs(y0.mean()) < 0.015 and abs(y0.var() - 0.25) < 0.01
    out = assert_accountant_sound(PLDAccountant().compose(m), m, delta=1e-5, trials=4000, seed=3)
    assert out["audit"] is not None


@pytest.mark.slow
def test_audit_flags_an_under_weighted_shift():
    m = MixtureOfGaussians(0.5, (0.0, 1.0), (0.5, 0.5))
    # an accountant that charges weight 0.2 on the shift instead of 0.5 is contradicted
    x, xp, llr = m.likelihood_ratio_test()
    sampler = lambda v, rng, size: llr(m.sample(v, rng, size))  # noqa: E731
    wrong = PLDAccountant().compose(MixtureOfGaussians(0.5, (0.0, 1.0), (0.8, 0.2))).epsilon(1e-2)
    res = audit_mechanism(sampler, x, xp, epsilon=wrong, delta=1e-2, trials=50_000, seed=1)
    assert res.violation and res.epsilon_lower > wrong  # measured 3.66 > 3.00


@pytest.mark.parametrize("kw,name", [({"sigma": -1.0}, "sigma"),
                                     ({"sigma": 1.0, "sensitivities": (-1.0,), "weights": (1.0,)}, "sensitivities"),
                                     ({"sigma": 1.0, "sensitivities": (1.0, 2.0), "weights": (1.0,)}, "weights"),
                                     ({"sigma": 1.0, "sensitivities": (1.0, 2.0), "weights": (0.5, 0.6)}, "weights"),
                                     ({"sigma": 1.0, "sensitivities": (math.nan,), "weights": (1.0,)}, "sensitivities"),
                                     ({"sigma": 1.0, "sensitivities": (), "weights": ()}, "sensitivities"),
                                     ({"sigma": 1.0, "neighbouring": "x"}, "neighbouring")])
def test_validation_names_the_argument(kw, name):
    with pytest.raises(ValueError, match=name):
        MixtureOfGaussians(**kw)


def test_rdp_accountant_uses_the_quadrature():
    m = MixtureOfGaussians(1.0, (0.0, 1.0), (0.9, 0.1))
    a = RDPAccountant().compose(m, 50).epsilon(1e-5)
    b = RDPAccountant().compose(PoissonSampled(Gaussian(1.0), 0.1), 50).epsilon(1e-5)
    assert b <= a <= b * (1 + 1e-7)
