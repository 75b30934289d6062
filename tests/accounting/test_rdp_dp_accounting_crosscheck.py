"""Cross-checks against dp-accounting 0.6.0 (used here only as an oracle).

On a grid of 54 (q, sigma, steps, delta) cases of the Poisson-subsampled Gaussian (add/remove):

* at integer orders our per-step RDP equals dp_accounting's to 1e-10 relative (at fractional
  orders dp_accounting sums absolute values of the series terms and is conservative, so the
  comparison is one-sided: ours <= theirs, Mironov, Talwar, Zhang 2019);
* our final epsilon (RDPAccountant, default orders) is never above dp_accounting's RDP epsilon
  by more than 1e-9 relative (ours is at least as tight);
* and never below dp_accounting's pessimistic PLD epsilon (d = 1e-4) minus 1e-3 (soundness).

The PLD epsilons take ~40 s to compute, so they are cached below (generated with
``dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)`` composing
``PoissonSampledDpEvent(q, GaussianDpEvent(sigma))`` ``steps`` times, then ``get_epsilon``);
the slow test recomputes a sample of them with the installed dp_accounting and compares at the
library's own resolution (its grid spacing, 1e-4), not at digits it does not promise.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

dpa = pytest.importorskip("dp_accounting")
from dp_accounting.rdp import rdp_privacy_accountant as dpa_rdp  # noqa: E402

from dpaudit.accounting.rdp import DPA_DEFAULT_ORDERS, RDPAccountant  # noqa: E402
from dpaudit.mechanisms.gaussian import Gaussian  # noqa: E402

subsampled = pytest.importorskip("dpaudit.mechanisms.subsampled")
PoissonSampled = subsampled.PoissonSampled

QS = (0.001, 0.01, 0.1)
SIGMAS = (0.7, 1.1, 3.0)
STEPS = (1, 100, 1000)
DELTAS = (1e-05, 1e-08)
GRID = list(itertools.product(QS, SIGMAS, STEPS, DELTAS))

#: dp-accounting 0.6.0 pessimistic PLD epsilon, keyed by (q, sigma, steps, delta)
PLD_EPSILON = {
    (0.001, 0.7, 1, 1e-05): 0.041059331063873376,
    (0.001, 0.7, 1, 1e-08): 0.5730730369905976,
    (0.001, 0.7, 100, 1e-05): 0.3013605941114818,
    (0.001, 0.7, 100, 1e-08): 1.404442270032007,
    (0.001, 0.7, 1000, 1e-05): 0.6089572494482087,
    (0.001, 0.7, 1000, 1e-08): 1.9098196591487542,
    (0.001, 1.1, 1, 1e-05): 0.006666212585500298,
    (0.001, 1.1, 1, 1e-08): 0.04827917387525539,
    (0.001, 1.1, 100, 1e-05): 0.04205976378593386,
    (0.001, 1.1, 100, 1e-08): 0.11914548674570653,
    (0.001, 1.1, 1000, 1e-05): 0.12239918038752892,
    (0.001, 1.1, 1000, 1e-08): 0.20737792955058865,
    (0.001, 3.0, 1, 1e-05): 0.0007055652838165397,
    (0.001, 3.0, 1, 1e-08): 0.0025655846453101613,
    (0.001, 3.0, 100, 1e-05): 0.008618223714842544,
    (0.001, 3.0, 100, 1e-08): 0.01568618402811363,
    (0.001, 3.0, 1000, 1e-05): 0.030518850154769284,
    (0.001, 3.0, 1000, 1e-08): 0.04982669103568201,
    (0.01, 0.7, 1, 1e-05): 0.851644370853921,
    (0.01, 0.7, 1, 1e-08): 2.827807616358373,
    (0.01, 0.7, 100, 1e-05): 2.367335490738684,
    (0.01, 0.7, 100, 1e-08): 4.356775278727119,
    (0.01, 0.7, 1000, 1e-05): 4.618291445333158,
    (0.01, 0.7, 1000, 1e-08): 7.055449212465715,
    (0.01, 1.1, 1, 1e-05): 0.14229070059724075,
    (0.01, 1.1, 1, 1e-08): 0.5838728789180239,
    (0.01, 1.1, 100, 1e-05): 0.5497650958602305,
    (0.01, 1.1, 100, 1e-08): 1.1162981608279798,
    (0.01, 1.1, 1000, 1e-05): 1.5153702481094293,
    (0.01, 1.1, 1000, 1e-08): 2.193709878340639,
    (0.01, 3.0, 1, 1e-05): 0.012930699182906284,
    (0.01, 3.0, 1, 1e-08): 0.03202741253882879,
    (0.01, 3.0, 100, 1e-05): 0.11239608835127868,
    (0.01, 3.0, 100, 1e-08): 0.1753842939299956,
    (0.01, 3.0, 1000, 1e-05): 0.3794686488020512,
    (0.01, 3.0, 1000, 1e-08): 0.5516779039022681,
    (0.1, 0.7, 1, 1e-05): 3.567518148461702,
    (0.1, 0.7, 1, 1e-08): 5.728220212034912,
    (0.1, 0.7, 100, 1e-05): 14.592362367203107,
    (0.1, 0.7, 100, 1e-08): 20.37350826371408,
    (0.1, 0.7, 1000, 1e-05): 54.02418585974916,
    (0.1, 0.7, 1000, 1e-08): 66.58046042850846,
    (0.1, 1.1, 1, 1e-05): 1.3590290068510136,
    (0.1, 1.1, 1, 1e-08): 2.5758978488589195,
    (0.1, 1.1, 100, 1e-05): 5.912652063265949,
    (0.1, 1.1, 100, 1e-08): 8.342054729900797,
    (0.1, 1.1, 1000, 1e-05): 21.092192519398022,
    (0.1, 1.1, 1000, 1e-08): 26.714096303237433,
    (0.1, 3.0, 1, 1e-05): 0.1753272862064125,
    (0.1, 3.0, 1, 1e-08): 0.3358494734776873,
    (0.1, 3.0, 100, 1e-05): 1.3878430090116176,
    (0.1, 3.0, 100, 1e-08): 1.9568692870946658,
    (0.1, 3.0, 1000, 1e-05): 4.883732843767487,
    (0.1, 3.0, 1000, 1e-08): 6.466968104977303,
}


def test_grid_size():
    assert len(GRID) >= 50
    assert set(PLD_EPSILON) == set(GRID)


@pytest.mark.parametrize("q,sigma", list(itertools.product(QS, SIGMAS)))
def test_per_step_rdp_matches_dp_accounting(q, sigma):
    orders = np.asarray(DPA_DEFAULT_ORDERS)
    ours = PoissonSampled(Gaussian(sigma), q).rdp(orders)
    theirs = np.asarray(dpa_rdp._compute_rdp_poisson_subsampled_gaussian(q, sigma, orders), dtype=float)
    integer = orders == np.round(orders)
    np.testing.assert_allclose(ours[integer], theirs[integer], rtol=1e-10)
    frac = ~integer
    # one-sided, with 1e-9 slack: dp_accounting's own series has ~1e-10 relative rounding error
    # (q=0.001, sigma=1.1, alpha=10.5: theirs 6.85533817292e-06 is 1.5e-10 BELOW the mpmath
    # quadrature value 6.85533817394e-06, which ours matches; see test below)
    assert np.all(ours[frac] <= theirs[frac] * (1 + 1e-9))


@pytest.mark.parametrize("q,sigma,alpha", [(0.001, 1.1, 10.5), (0.01, 0.7, 1.1), (0.1, 3.0, 2.5)])
def test_fractional_order_against_quadrature(q, sigma, alpha):
    # independent oracle: (0.001, 1.1, 10.5) is where dp_accounting is (slightly) below the exact
    # value; (0.01, 0.7, 1.1) is where its absolute-value series is ~20 % conservative
    import mpmath as mp

    with mp.workdps(40):
        def integrand(z):
            return mp.npdf(z, 0, sigma) * ((1 - q) + q * mp.exp((2 * z - 1) / (2 * sigma**2))) ** alpha

        a = mp.quad(integrand, [-mp.inf, -20, 0, 0.5, 20, mp.inf])
        exact = float(mp.log(a) / (alpha - 1))
    ours = float(PoissonSampled(Gaussian(sigma), q).rdp([alpha])[0])
    assert exact * (1 - 1e-12) <= ours <= exact * (1 + 1e-9)


_RDP_CACHE: dict = {}


def _dpa_rdp_epsilon(q, sigma, steps, delta):
    key = (q, sigma, steps, delta)
    if key not in _RDP_CACHE:
        acc = dpa.rdp.RdpAccountant()
        acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)
        _RDP_CACHE[key] = acc.get_epsilon(delta)
    return _RDP_CACHE[key]


@pytest.mark.parametrize("q,sigma,steps,delta", GRID)
def test_final_epsilon_between_pld_and_dp_accounting_rdp(q, sigma, steps, delta):
    ours = RDPAccountant(warn_at_grid_end=False).compose(PoissonSampled(Gaussian(sigma), q), steps).epsilon(delta)
    rdp_ref = _dpa_rdp_epsilon(q, sigma, steps, delta)
    assert ours <= rdp_ref * (1 + 1e-9)
    assert ours >= PLD_EPSILON[(q, sigma, steps, delta)] - 1e-3


@pytest.mark.parametrize("q,sigma,steps", [(0.01, 1.1, 1000), (0.001, 3.0, 100), (0.1, 3.0, 1), (0.01, 0.7, 1)])
def test_dp_accounting_delta_agrees(q, sigma, steps):
    # delta(epsilon) on dp_accounting's own grid: identical conversion -> same number
    acc = dpa.rdp.RdpAccountant()
    acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)
    ours = RDPAccountant(orders=DPA_DEFAULT_ORDERS, warn_at_grid_end=False)
    ours.compose(PoissonSampled(Gaussian(sigma), q), steps)
    for eps in (0.5, 1.0, 3.0):
        assert ours.delta(eps) <= acc.get_delta(eps) * (1 + 1e-9)
        assert RDPAccountant(warn_at_grid_end=False).compose(
            PoissonSampled(Gaussian(sigma), q), steps).delta(eps) <= ours.delta(eps)


def test_unsampled_gaussian_matches_dp_accounting_closed_forms():
    # dp-accounting's get_epsilon_gaussian / get_sigma_gaussian are the Balle-Wang closed form
    from dpaudit import conversions as C
    from dpaudit.accounting.calibration import calibrate_sigma

    for sigma in (0.5, 1.0, 3.0, 20.0):
        for delta in (1e-3, 1e-5, 1e-10):
            assert C.gaussian_epsilon(sigma, delta) == pytest.approx(dpa.get_epsilon_gaussian(sigma, delta), rel=1e-8)
    for eps in (0.5, 1.0, 4.0):
        ours = calibrate_sigma(eps, 1e-5, accountant="exact")
        assert ours == pytest.approx(dpa.get_sigma_gaussian(eps, 1e-5), rel=1e-8)


#: accuracy at which dp_accounting's PLD epsilon is reproducible across its versions: its own
#: resolution of the privacy loss, the grid spacing value_discretization_interval (1e-4). The
#: library promises nothing finer (the last digits depend on its FFT sizes and tail truncation,
#: which change between releases: 2-6e-9 relative between 0.4.x/0.6.0 builds). The cache is used
#: above only with a 1e-3 margin, so a drift within this tolerance cannot change any verdict.
PEER_PLD_RESOLUTION = 1e-4


def peer_pld_agrees(live: float, cached: float) -> bool:
    """Whether a recomputed dp_accounting PLD epsilon matches the cached one at the library's
    resolution (see PEER_PLD_RESOLUTION)."""
    return abs(live - cached) <= PEER_PLD_RESOLUTION


def test_cache_comparison_tolerates_peer_version_drift():
    # the drift seen between dp_accounting builds (2-6e-9 relative) must not fail the check
    # (it did at rel=1e-9); a change of a whole grid step must
    for v in PLD_EPSILON.values():
        assert peer_pld_agrees(v * (1 + 6e-9), v) and peer_pld_agrees(v * (1 - 6e-9), v)
        assert not peer_pld_agrees(v + 2 * PEER_PLD_RESOLUTION, v)


@pytest.mark.slow
@pytest.mark.parametrize("q,sigma,steps", [(0.001, 3.0, 1000), (0.01, 3.0, 100), (0.1, 3.0, 1), (0.01, 1.1, 1000)])
def test_pld_cache_is_current(q, sigma, steps):
    acc = dpa.pld.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)
    for delta in DELTAS:
        assert peer_pld_agrees(acc.get_epsilon(delta), PLD_EPSILON[(q, sigma, steps, delta)])
