"""TruncatedPoissonGaussian (dpaudit/mechanisms/truncated_subsampled.py): branch weights against
mpmath, the untruncated case equals the Poisson-subsampled Gaussian, the bound lies above the exact
curve of a concrete worst-looking configuration of the real mechanism (a small dataset, computed by
enumeration), and it is close to dp_accounting's TruncatedSubsampledGaussianDpEvent."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from dpaudit import Gaussian, NoAmplificationWarning, PLDAccountant, PoissonSampled, RDPAccountant, ZCDPAccountant
from dpaudit.mechanisms import TruncatedPoissonGaussian
from dpaudit.testing import assert_accountant_sound


@pytest.mark.parametrize("n,q,b", [(10_000, 0.01, 110), (1000, 0.05, 50), (50, 0.3, 10), (10 ** 6, 1e-3, 1100)])
def test_branch_weights_match_mpmath(n, q, b):
    m = TruncatedPoissonGaussian(1.0, q, n, b)
    br = m.branches()
    mp.mp.dps = 40
    mq = mp.mpf(q)
    pm = lambda k: mp.binomial(n - 1, k) * mq ** k * (1 - mq) ** (n - 1 - k)  # noqa: E731
    lo_mass = mp.fsum(pm(k) for k in range(0, b))
    assert abs(br[0][0] - lo_mass) <= 1e-12 * lo_mass
    assert br[0][1] == q and br[0][2] == 1.0
    assert abs(sum(w for w, _, _ in br) - 1) < 1e-12
    for _w, r, f in br[1:]:
        assert f == 2.0 and r <= q * b / (b + 1) * (1 + 1e-15)


def test_no_truncation_is_the_poisson_subsampled_gaussian():
    m = TruncatedPoissonGaussian(0.9, 0.02, 500, 500, sensitivity=1.5)
    ps = PoissonSampled(Gaussian(0.9, 1.5), 0.02)
    assert len(m.branches()) == 1
    orders = [1.5, 2.0, 8.0, 64.0]
    assert np.allclose(m.rdp(orders), ps.rdp(orders), rtol=1e-12)
    a = PLDAccountant().compose(m, 20).epsilon(1e-6)
    b = PLDAccountant().compose(ps, 20).epsilon(1e-6)
    assert a == pytest.approx(b, rel=1e-9)


def _exact_delta(n, q, b, sigma, e):
    """delta(e), both directions, of the real mechanism on one configuration: the n - 1 other
    records have gradient -1, x* has +1 (1-D), the batch sum plus N(0, sigma^2); the laws of the
    sum on D and D' are finite mixtures (enumerating M ~ Bin(n - 1, q) and the truncation)."""
    pm = stats.binom.pmf(np.arange(n), n - 1, q)
    law_d: dict[int, float] = {}
    law_dp: dict[int, float] = {}
    for m_, p in enumerate(pm):
        s = -min(m_, b)
        law_d[s] = law_d.get(s, 0.0) + p
        # D': x* not sampled
        law_dp[s] = law_dp.get(s, 0.0) + p * (1 - q)
        if m_ + 1 <= b:
            law_dp[-m_ + 1] = law_dp.get(-m_ + 1, 0.0) + p * q
        else:
            keep = b / (m_ + 1)
            law_dp[-(b - 1) + 1] = law_dp.get(-(b - 1) + 1, 0.0) + p * q * keep
            law_dp[-b] = law_dp.get(-b, 0.0) + p * q * (1 - keep)
    x = np.linspace(-b - 12 * sigma, 2 + 12 * sigma, 400_001)
    dx = x[1] - x[0]
    f = lambda law: sum(w * stats.norm.pdf(x, loc=s, scale=sigma) for s, w in law.items())  # noqa: E731
    p, pp = f(law_d), f(law_dp)
    ee = math.exp(e)
    return max(float(np.sum(np.maximum(p - ee * pp, 0)) * dx), float(np.sum(np.maximum(pp - ee * p, 0)) * dx))


@pytest.mark.parametrize("n,q,b,sigma", [(8, 0.5, 2, 0.7), (12, 0.4, 3, 1.0), (6, 0.9, 4, 0.5)])
def test_bound_is_above_the_exact_curve_of_a_concrete_configuration(n, q, b, sigma):
    m = TruncatedPoissonGaussian(sigma, q, n, b)
    add, rem = m.privacy_loss().upper
    for e in (0.0, 0.5, 1.0, 2.0):
        exact = _exact_delta(n, q, b, sigma, e)
        bound = max(float(add.delta(e)[0][0]), float(rem.delta(e)[0][0]))
        assert bound >= exact - 1e-9, (e, bound, exact)
    # and the untruncated analysis (the Poisson-subsampled Gaussian) is NOT enough here
    ps = PoissonSampled(Gaussian(sigma), q).privacy_loss().upper
    gap = [_exact_delta(n, q, b, sigma, e) - max(float(p.delta(e)[0][0]) for p in ps) for e in (0.5, 1.0)]
    assert max(gap) > 1e-3


dpa = pytest.importorskip("dp_accounting")


@pytest.mark.parametrize("n,q,b,nm,k", [(10_000, 0.01, 110, 1.0, 100), (10_000, 0.01, 130, 1.0, 100)])
def test_close_to_dp_accounting_truncated_event(n, q, b, nm, k):
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-3)
    acc.compose(dp_event.SelfComposedDpEvent(dp_event.TruncatedSubsampledGaussianDpEvent(n, q, b, nm), k))
    theirs = acc.get_epsilon(1e-6)
    ours = PLDAccountant(discretization=1e-3).compose(TruncatedPoissonGaussian(nm, q, n, b), k).epsilon(1e-6)
    # measured: 5.8672 vs 5.8520 (b = 110) and 3.4780 vs 3.4596 (b = 130): within 1 %
    assert abs(ours - theirs) <= 0.01 * theirs


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 10 ** 6), q=st.floats(1e-4, 1.0), frac=st.floats(0.01, 2.0), sigma=st.floats(0.5, 5.0))
def test_property_weights_and_curves(n, q, frac, sigma):
    b = max(1, int(frac * n * q))
    m = TruncatedPoissonGaussian(sigma, q, n, b)
    br = m.branches()
    assert abs(sum(w for w, _, _ in br) - 1) < 1e-9
    orders = np.array([1.5, 4.0, 32.0])
    r = m.rdp(orders)
    worst = PoissonSampled(Gaussian(sigma, 2.0), q).rdp(orders)
    assert np.all(r >= 0) and np.all(r <= np.maximum(worst, PoissonSampled(Gaussian(sigma), q).rdp(orders)) * (1 + 1e-12))


def test_accountants_and_helpers():
    m = TruncatedPoissonGaussian(1.0, 0.05, 200, 12)
    with pytest.warns(NoAmplificationWarning):  # zCDP gives the sampling no amplification, and says so
        z = ZCDPAccountant().compose(m, 3)
    assert z.epsilon(1e-6) >= RDPAccountant().compose(m, 3).epsilon(1e-6) * 0.5
    out = assert_accountant_sound(PLDAccountant().compose(m, 3), m, delta=1e-6, count=3, audit=False)
    assert out["epsilon"] > PLDAccountant().compose(PoissonSampled(Gaussian(1.0), 0.05), 3).epsilon(1e-6)


@pytest.mark.parametrize("kw,name", [({"sigma": -1.0}, "sigma"), ({"q": 1.5}, "q"), ({"dataset_size": 0}, "dataset_size"),
                                     ({"dataset_size": 2.5}, "dataset_size"), ({"max_batch_size": 0}, "max_batch_size"),
                                     ({"max_batch_size": True}, "max_batch_size"), ({"neighbouring": "replace_one"}, "neighbouring")])
def test_validation_names_the_argument(kw, name):
    args = {"sigma": 1.0, "q": 0.1, "dataset_size": 100, "max_batch_size": 10}
    args.update(kw)
    with pytest.raises(ValueError, match=name):
        TruncatedPoissonGaussian(**args)
