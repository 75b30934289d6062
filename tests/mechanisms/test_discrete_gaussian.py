"""DiscreteGaussian (dpaudit/mechanisms/discrete_gaussian.py): mpmath references for the
normaliser, the RDP curve and the PLD, accountant soundness, dp_accounting cross-check, the
exact sampler (its law, its independence from the value) and its audit."""

from __future__ import annotations

import math
import warnings

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from dpaudit import PLDAccountant, RDPAccountant, make_accountant
from dpaudit.accounting.base import ACCOUNTANTS
from dpaudit.audit import audit_mechanism
from dpaudit.core.validation import UnsupportedMechanismError
from dpaudit.mechanisms import DiscreteGaussian
from dpaudit.mechanisms.discrete_gaussian import (
    MAX_PAIR_ATOMS,
    MAX_SAMPLING_SIGMA,
    MAX_SENSITIVITY,
    discrete_gaussian_log_normaliser,
    discrete_gaussian_tail_bound,
)
from dpaudit.testing import assert_accountant_sound, assert_audit_consistent


def _support(sigma, d=0):
    n = int(math.ceil(14 * sigma)) + 3 + d
    return range(-n, n + d + 1)


def _log_pmf_mp(sigma, d=0):
    """{z: log P(z)} of N_Z(d, sigma^2) in mpmath (the mass outside the support is < e^{-98})."""
    s = mp.mpf(sigma)
    zs = list(_support(sigma, d))
    logs = {z: -((z - d) / s) ** 2 / 2 for z in zs}
    top = max(logs.values())
    norm = top + mp.log(sum(mp.e ** (v - top) for v in logs.values()))
    return {z: v - norm for z, v in logs.items()}


def _rdp_mp(sigma, d, alpha):
    """(1/lambda) log sum_z P(z)^alpha Q(z)^{1-alpha}, brute force over the integers around the
    tilted centre z = -lambda d (the summand is maximal there) and around 0."""
    lam = mp.mpf(alpha) - 1
    s = mp.mpf(sigma)
    lp = _log_pmf_mp(sigma)
    log_norm = -max(lp.values())  # log S(0): P(0) = 1/S(0)
    w = int(math.ceil(14 * sigma)) + 3
    centre = int(math.floor(-float(lam) * d))
    zs = set(range(centre - w, centre + w + 1)) | set(range(-w, w + d + 1))
    terms = [(-alpha * (z / s) ** 2 + lam * ((z - d) / s) ** 2) / 2 - log_norm for z in zs]
    top = max(terms)
    return (top + mp.log(sum(mp.e ** (x - top) for x in terms))) / lam


def _composed_delta_mp(sigma, d, k, e):
    """delta(e) of k independent releases, brute force over the distribution of the sum of the
    noises (the composed loss is d (k d - 2 sum z)/(2 sigma^2))."""
    lp = _log_pmf_mp(sigma)
    p = {z: mp.e ** v for z, v in lp.items()}
    dist = {0: mp.mpf(1)}
    for _ in range(k):
        new: dict[int, mp.mpf] = {}
        for s, ps in dist.items():
            for z, pz in p.items():
                new[s + z] = new.get(s + z, 0) + ps * pz
        dist = new
    s2 = mp.mpf(sigma) ** 2
    e = mp.mpf(e)
    out = mp.mpf(0)
    for s, ps in dist.items():
        loss = d * (k * d - 2 * s) / (2 * s2)
        if loss > e:
            out += ps * (1 - mp.e ** (e - loss))
    return out


@pytest.mark.parametrize("sigma", [1e-3, 0.05, 0.3, 0.7, 1.0, 2.5, 10.0, 1e3, 1e8])
def test_normaliser_matches_mpmath(sigma):
    mp.mp.dps = 40
    s = mp.mpf(sigma)
    if sigma < 50:
        ref = mp.log(mp.nsum(lambda z: mp.e ** (-(z / s) ** 2 / 2), [-mp.inf, mp.inf]))
    else:  # Poisson summation, exact: S(0) = sqrt(2 pi) s (1 + 2 sum q^{k^2}), q < e^{-49000}
        ref = mp.log(mp.sqrt(2 * mp.pi) * s)
    got = discrete_gaussian_log_normaliser(sigma)
    assert abs(got - ref) <= 4e-16 * max(1.0, abs(float(ref))), (got, ref)


def test_tail_bound_is_a_bound():
    mp.mp.dps = 40
    for sigma, n in [(0.5, 0), (1.0, 3), (3.0, 10), (3.0, 40), (20.0, 100)]:
        s = mp.mpf(sigma)
        norm = mp.nsum(lambda z: mp.e ** (-(z / s) ** 2 / 2), [-mp.inf, mp.inf])
        tail = mp.nsum(lambda z: mp.e ** (-(z / s) ** 2 / 2), [n + 1, mp.inf]) / norm
        assert tail <= discrete_gaussian_tail_bound(sigma, n) <= 5 * tail + 1e-300  # tight within the
        # factor 1/(1 - e^{-(n+1)/sigma^2})


_ORDERS = [1 + 1e-9, 1 + 1e-4, 1.01, 1.25, 1.5, 1.7, 2.0, 2.3, 3.5, 10.0, 10.5, 64.0, 1000.3]


@pytest.mark.parametrize("sigma", [2e-5, 0.01, 0.05, 0.2, 0.4, 0.7, 1.0, 1.7, 4.0])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_rdp_matches_mpmath_and_is_never_below(sigma, d):
    mp.mp.dps = 50
    got = DiscreteGaussian(sigma, d).rdp(_ORDERS + [math.inf])
    assert got[-1] == math.inf  # unbounded loss: no pure DP
    for a, g in zip(_ORDERS, got[:-1]):
        ref = _rdp_mp(sigma, d, a)
        assert g >= ref, (a, g, ref)  # an upper bound
        assert (mp.mpf(g) - ref) / ref < 1e-11, (a, g, ref)  # and tight
        assert g <= a * d * d / (2 * sigma * sigma) * (1 + 1e-14)  # below the zCDP line (rounded up)


def test_rdp_is_strictly_below_the_continuous_gaussian_at_small_sigma():
    # alpha - 1 = 1/2, Delta = 1: c = 1/2, the theta ratio is far from 1 at sigma = 0.3
    m = DiscreteGaussian(0.3)
    assert m.rdp([1.5])[0] < 0.9 * 1.5 * m.zcdp()
    # integer (alpha - 1) Delta: the curve meets the zCDP line exactly
    assert m.rdp([2.0])[0] == pytest.approx(2 * m.zcdp(), rel=1e-12)


def test_rho_is_cks_theorem_4():
    m = DiscreteGaussian(2.5, 3)
    assert 9 / 12.5 <= m.zcdp() <= 9 / 12.5 * (1 + 1e-14)
    assert m.pure_epsilon() == math.inf and m.has_zcdp_guarantee()
    assert DiscreteGaussian(1e-200).zcdp() == math.inf
    assert np.all(np.isinf(DiscreteGaussian(1e-200).rdp([2.0])))


@pytest.mark.parametrize("sigma,d,k", [(0.7, 1, 1), (1.0, 1, 3), (1.5, 2, 2), (3.0, 1, 2), (0.4, 3, 2)])
def test_pld_brackets_the_brute_force_composition(sigma, d, k):
    mp.mp.dps = 40
    acc = PLDAccountant().compose(DiscreteGaussian(sigma, d), k)
    for e in (0.0, 0.3, 1.0, 2.5):
        lo, up = acc.delta_interval(e)
        exact = float(_composed_delta_mp(sigma, d, k, e))
        assert lo <= exact * (1 + 1e-9) + 1e-15 and exact <= up * (1 + 1e-9) + 1e-15, (e, lo, exact, up)
    delta = 1e-5
    lo, up = acc.epsilon_interval(delta)
    assert _composed_delta_mp(sigma, d, k, up) <= delta * (1 + 1e-9)  # up is a valid epsilon
    if lo > 0:
        assert _composed_delta_mp(sigma, d, k, lo) >= delta * (1 - 1e-9)  # lo does not overshoot


def test_grouped_pair_for_large_sigma_is_sound():
    # sigma 200: about 3800 atoms > MAX_PAIR_ATOMS, grouped; the interval still brackets the
    # continuous-Gaussian value (the discrete Gaussian with sigma >> 1 is within 1e-300 of it)
    from dpaudit.accounting.conversions import gaussian_delta

    m = DiscreteGaussian(200.0, 100)
    loss = m.privacy_loss()
    assert loss.label == "discrete-gaussian-grouped"
    acc = PLDAccountant().compose(m, 2)
    for e in (0.0, 0.5, 1.0):
        lo, up = acc.delta_interval(e)
        ref = gaussian_delta(200.0 / math.sqrt(2), e, 100.0)
        assert lo * (1 - 1e-9) <= ref <= up * (1 + 1e-9), (e, lo, ref, up)
        assert up <= ref * 1.01  # grouping two atoms (loss step 0.0025) costs < 1%
    assert MAX_PAIR_ATOMS < 3800


_ACCS = sorted(ACCOUNTANTS)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(log_s=st.floats(-0.3, 1.0), d=st.integers(1, 3), k=st.integers(1, 2), f=st.floats(1.05, 3.0),
       orders=st.lists(st.floats(1.0001, 1e3), min_size=2, max_size=5))
def test_property_monotone_in_sigma_and_count_accountants_above_lower(log_s, d, k, f, orders):
    sigma = 10.0 ** log_s
    m, wider = DiscreteGaussian(sigma, d), DiscreteGaussian(sigma * f, d)
    a = np.asarray(orders)
    assert np.all(wider.rdp(a) <= m.rdp(a))  # more noise, less divergence (post-processing)
    delta = 1e-5
    lo_k, up_k = PLDAccountant().compose(m, k).epsilon_interval(delta)
    lo_k1, up_k1 = PLDAccountant().compose(m, k + 1).epsilon_interval(delta)
    lo_w, up_w = PLDAccountant().compose(wider, k).epsilon_interval(delta)
    assert up_k1 >= lo_k and up_k >= lo_w  # monotone in count and in sigma (up to the bracket)
    for name in _ACCS:
        try:
            acc = make_accountant(name).compose(m, k)
        except UnsupportedMechanismError:  # (the exact and pure-DP accountants refuse it)
            continue
        assert acc.epsilon(delta) >= lo_k * (1 - 1e-12) - 1e-12, name


dpa = pytest.importorskip("dp_accounting")


@pytest.mark.parametrize("sigma,d", [(0.8, 1), (1.0, 1), (2.0, 3), (5.0, 2)])
def test_cross_check_dp_accounting(sigma, d):
    # dp_accounting 0.6 has no DiscreteGaussianDpEvent (dp_event lists only the discrete Laplace);
    # its PLD module has DiscreteGaussianPrivacyLoss, which truncates the NOISE to [-T, T] with
    # mass outside <= 1e-30: its delta(e) differs from the untruncated one by at most ~1e-30
    from dp_accounting.pld import privacy_loss_mechanism

    pl = privacy_loss_mechanism.DiscreteGaussianPrivacyLoss(sigma, sensitivity=d)
    one = PLDAccountant().compose(DiscreteGaussian(sigma, d))
    for e in (0.0, 0.3, 1.0, 2.0):
        lo, up = one.delta_interval(e)
        ref = pl.get_delta_for_epsilon(e)
        assert lo * (1 - 1e-9) - 1e-24 <= ref <= up * (1 + 1e-9) + 1e-24, (e, lo, ref, up)
    # RDP accountant: at least the PLD lower end
    lo, _ = PLDAccountant().compose(DiscreteGaussian(sigma, d), 4).epsilon_interval(1e-5)
    assert RDPAccountant().compose(DiscreteGaussian(sigma, d), 4).epsilon(1e-5) >= lo


# --- sampler --------------------------------------------------------------------------------

@pytest.mark.parametrize("sigma", [0.3, 1.0, 3.7, 25.0])
def test_sampler_chi_square_against_the_pmf(sigma):
    n = 100_000
    z = DiscreteGaussian(sigma).sample(0, np.random.default_rng(int(sigma * 10)), n)
    assert z.dtype == np.int64
    mp.mp.dps = 30
    lp = _log_pmf_mp(sigma)
    zs = np.array(sorted(lp))
    p = np.array([float(mp.e ** lp[v]) for v in zs])
    # bins: the values with expected count >= 20, the two tails pooled
    keep = p * n >= 20
    inner = zs[keep]
    obs = [np.sum(z < inner[0])] + [np.sum(z == v) for v in inner] + [np.sum(z > inner[-1])]
    exp_ = [p[zs < inner[0]].sum()] + list(p[keep]) + [p[zs > inner[-1]].sum()]
    obs, exp_ = np.array(obs, dtype=float), np.array(exp_) * n
    ok = exp_ > 0
    stat = float(np.sum((obs[ok] - exp_[ok]) ** 2 / exp_[ok]))
    pval = stats.chi2.sf(stat, ok.sum() - 1)
    assert pval > 1e-4, (sigma, stat, pval)  # a false failure has probability 1e-4 per sigma


def test_sampler_noise_does_not_depend_on_the_value():
    # the float-bits attack (Mironov 2012) reads the value from the low bits of a float output;
    # here the outputs are integers and, draw for draw, value + (the draws for 0)
    m = DiscreteGaussian(1.3, 2)
    base = m.sample(0, np.random.default_rng(3), 5000)
    for v in (1, 2, -7, 10 ** 12):
        out = m.sample(v, np.random.default_rng(3), 5000)
        assert out.dtype == np.int64 and np.array_equal(out - v, base)
    assert m.sample(np.array([1.0, -4.0]), np.random.default_rng(0), 3).shape == (3, 2)
    assert m.sample(np.array([1, 2]), np.random.default_rng(0)).shape == (2,)


def test_float_bits_attack_does_not_apply():
    # the audit's float-bits family (Mironov 2012) needs float outputs with low bits to read;
    # the discrete Gaussian's outputs are int64, and the audit says so
    m = DiscreteGaussian(1.0)
    eps = PLDAccountant().compose(m).epsilon(1e-5)
    with pytest.raises(ValueError, match="float-bits: not applicable"):
        audit_mechanism(m.sample, 0, 1, epsilon=eps, delta=1e-5, trials=2000, seed=4, statistic="float-bits")


@pytest.mark.parametrize("value", [0.5, np.nan, "a", True, 2.0 ** 62])
def test_sampler_rejects_non_integer_values(value):
    with pytest.raises(ValueError, match="value"):
        DiscreteGaussian(1.0).sample(value, np.random.default_rng(0), 3)


def test_sampler_rejects_a_sigma_out_of_its_range():
    with pytest.raises(ValueError, match="sigma"):
        DiscreteGaussian(MAX_SAMPLING_SIGMA * 2).sample(0, np.random.default_rng(0), 3)


@pytest.mark.parametrize("kw,name", [({"sigma": -1.0}, "sigma"),
                                     ({"sigma": math.nan}, "sigma"), ({"sigma": math.inf}, "sigma"),
                                     ({"sigma": 1.0, "sensitivity": 1.5}, "sensitivity"),
                                     ({"sigma": 1.0, "sensitivity": 0}, "sensitivity"),
                                     ({"sigma": 1.0, "sensitivity": True}, "sensitivity"),
                                     ({"sigma": 1.0, "sensitivity": MAX_SENSITIVITY + 1}, "sensitivity"),
                                     ({"sigma": 1.0, "neighbouring": "swap"}, "neighbouring")])
def test_validation_names_the_argument(kw, name):
    with pytest.raises(ValueError, match=name):
        DiscreteGaussian(**kw)


# --- audits ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_audit_never_flags_the_true_epsilon():
    m = DiscreteGaussian(1.0)
    eps = PLDAccountant().compose(m).epsilon(1e-5)
    flagged = sum(audit_mechanism(m.sample, 0, 1, epsilon=eps, delta=1e-5, trials=4000, seed=s).violation
                  for s in range(50))
    assert flagged == 0  # P(any) <= 50 * 0.05 only in the worst case; measured 0 / 50


def test_audit_flags_half_the_claimed_sigma():
    # the sampler uses sigma 1 while the claim is that of sigma 2
    claim = PLDAccountant().compose(DiscreteGaussian(2.0)).epsilon(1e-5)
    bad = DiscreteGaussian(1.0)
    res = audit_mechanism(bad.sample, 0, 1, epsilon=claim, delta=1e-5, trials=100_000, seed=1)
    assert res.violation and res.epsilon_lower > claim


def test_testing_helpers_accept_it():
    m = DiscreteGaussian(1.25, 2)
    out = assert_accountant_sound(PLDAccountant().compose(m), m, delta=1e-5, trials=4000, seed=11)
    assert out["audit"] is not None
    eps = PLDAccountant().compose(m).epsilon(1e-5)
    res = assert_audit_consistent(m, 0, 2, epsilon=eps, delta=1e-5, trials=4000, seed=12)
    assert res.verdict in ("consistent", "inconclusive")


@pytest.mark.parametrize("sigma", [1e-80, 1e-200])
def test_tiny_sigma_gives_inf_not_an_exception(sigma):
    m = DiscreteGaussian(sigma)
    lo, up = PLDAccountant().compose(m, 2).epsilon_interval(1e-5)
    assert 0.0 <= lo <= up and up >= 2 * min(m.zcdp(), 1e300) * (1 - 1e-9)  # loss 2 rho w.p. ~1
    # RDP: finite (rho alpha is in the float range for sigma 1e-80) but at least rho (the
    # accountant warns that its best order is the grid's end: expected here)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert RDPAccountant().compose(m).epsilon(1e-5) >= min(m.zcdp(), 1e308)
