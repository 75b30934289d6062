"""PLD accountant after the speed work (issue 29): upper ends never above those of the code before
it (commit b3a8540, values stored below) nor above dp_accounting's pessimistic PLD, and the
certified interval still brackets the exact epsilon / delta: the Balle-Wang curve for unsampled
Gaussians composed through the PLD machinery, mpmath-evaluated deltas of the Poisson-subsampled
Gaussian at T = 1 and 2 (both neighbouring directions), and a regression for the discretisation
of composed optimistic PLDs (lower ends were above upper ends before it).

The default run checks a part of the stored grid; ``slow`` checks all of it.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
import pytest

from dpaudit import (
    ApproxDP,
    ExponentialMechanism,
    Gaussian,
    Laplace,
    PLDAccountant,
    PoissonSampled,
    PureDP,
)
from dpaudit.accounting import gaussian_profile as G
from dpaudit.accounting.pld import distribution as D
from dpaudit.mechanisms import DiscreteLaplace

INF = math.inf


def _mechs():
    return {
        "sg(0.8,1e-3)": [(PoissonSampled(Gaussian(0.8), 1e-3), 1)],
        "sg(1.1,1e-2)": [(PoissonSampled(Gaussian(1.1), 1e-2), 1)],
        "sg(2,0.1)": [(PoissonSampled(Gaussian(2.0), 0.1), 1)],
        "sg(0.5,0.3)": [(PoissonSampled(Gaussian(0.5), 0.3), 1)],
        "sg(5,0.5)": [(PoissonSampled(Gaussian(5.0), 0.5), 1)],
        "lap(1)": [(Laplace(1.0), 1)],
        "lap(10)": [(Laplace(10.0), 1)],
        "slap(1,0.01)": [(PoissonSampled(Laplace(1.0), 0.01), 1)],
        "pure(0.5)": [(PureDP(0.5), 1)],
        "spure(1,0.05)": [(PoissonSampled(PureDP(1.0), 0.05), 1)],
        "em(0.3)": [(ExponentialMechanism(0.3), 1)],
        "approx(0.2,1e-7)": [(ApproxDP(0.2, 1e-7), 1)],
        "gauss(3) no-exact": [(Gaussian(3.0), 1)],
        "mix": [(PoissonSampled(Gaussian(1.1), 0.01), 1), (Laplace(10.0), 0.01), (Gaussian(30.0), 0.01)],
        "dlap(2)": [(DiscreteLaplace(2.0), 1)],
    }


#: upper ends of PLDAccountant(rdp_fallback=False) before the speed work (commit b3a8540):
#: epsilon(1e-5), epsilon(1e-9), delta(1.0), delta(0.1); counts T (fractions of T for "mix")
OLD_UPPER = {
    'sg(0.8,1e-3)|1': (0.02170710594618, 0.438370609453941, 8.668481414239268e-12, 2.450116652121865e-07),
    'sg(0.8,1e-3)|10': (0.06144377188895783, 0.6833520541520857, 9.293933955104533e-11, 2.5114093933232293e-06),
    'sg(0.8,1e-3)|100': (0.14096664602966613, 0.9817985431290035, 8.775004148394734e-10, 3.310772972753101e-05),
    'sg(0.8,1e-3)|1000': (0.3035585410264834, 1.3323904443238437, 9.821884975072917e-09, 0.0020675137971265514),
    'sg(0.8,1e-3)|10000': (0.7824197724067448, 1.8253346833731516, 5.32129234572411e-07, 0.039558644200592075),
    'sg(0.8,1e-3)|100000': (2.5750995935913803, 3.7971647783566986, 0.021709236373025218, 0.20329665908361996),
    'sg(1.1,1e-2)|1': (0.14229070059428772, 0.7949414056468322, 1.3097453066814948e-10, 3.114751737974653e-05),
    'sg(1.1,1e-2)|10': (0.2717365301457808, 1.0362279520391677, 1.414647653740752e-09, 0.0005455486046704258),
    'sg(1.1,1e-2)|100': (0.5497650959232709, 1.3572575815559507, 3.27217360565734e-08, 0.013705362882368058),
    'sg(1.1,1e-2)|1000': (1.5153702486198348, 2.407969102265266, 0.000766946342743332, 0.10183999760359772),
    'sg(1.1,1e-2)|10000': (5.192620141751629, 7.384520602025546, 0.17328624512986557, 0.39579760747090775),
    'sg(1.1,1e-2)|100000': (21.08968810827744, 27.526610745127456, 0.8772317257877728, 0.9193124100784892),
    'sg(2,0.1)|1': (0.369036714206493, 0.8751913510208782, 1.1149710574231328e-10, 0.0023642097069192444),
    'sg(2,0.1)|10': (0.7984675149783937, 1.423811587202989, 5.724320978711531e-07, 0.031204295884355596),
    'sg(2,0.1)|100': (2.3374001924936554, 3.5618917489241895, 0.011497877563276708, 0.16893590332715464),
    'sg(2,0.1)|1000': (8.279293379098512, 11.502244580107607, 0.38299318343258704, 0.5706265601886933),
    'sg(2,0.1)|10000': (36.00369784823803, 45.52509564492152, 0.9853939990309972, 0.9905174944989622),
    'sg(2,0.1)|100000': (209.2387558747081, 238.6888503316973, 1.0, 1.0),
    'sg(0.5,0.3)|1': (8.225365883753701, 11.926373741315086, 0.10433888455678031, 0.19002573185714833),
    'sg(0.5,0.3)|10': (23.088680327145482, 34.39689289783869, 0.5782561605580533, 0.6813191438724949),
    'sg(0.5,0.3)|100': (83.27312626024789, 108.9246991897879, 0.9983506082231008, 0.9988444150858027),
    'sg(0.5,0.3)|1000': (461.34435257665706, 528.3666458145143, 1.0, 1.0),
    'sg(0.5,0.3)|10000': (3552.5581558492772, 3748.9185806364553, 1.0, 1.0),
    'sg(0.5,0.3)|100000': (32290.825148746968, 32895.876292072, 1.0, 1.0),
    'sg(5,0.5)|1': (0.40343257953034106, 0.6789967214778345, 1.2754546453719217e-15, 0.00995672454129436),
    'sg(5,0.5)|10': (1.2784794122938887, 1.95608749378931, 0.0001923236056871571, 0.08675024125464345),
    'sg(5,0.5)|100': (4.487844834863747, 6.383861340931965, 0.12867262147002084, 0.35250023229265215),
    'sg(5,0.5)|1000': (18.06374741219349, 23.743056723181656, 0.818793249568742, 0.8803720088207597),
    'sg(5,0.5)|10000': (92.46859855638566, 110.06521398852604, 0.9999990601796844, 0.9999993972771497),
    'sg(5,0.5)|100000': (637.508937700316, 692.8493805209391, 1.0, 1.0),
    'lap(1)|1': (0.9999800002999958, 0.9999999980000509, 1.0000000000010015e-300, 0.3623718483786514),
    'lap(1)|10': (9.98996231915535, 9.999998978513887, 0.7370348534610281, 0.8254297128590314),
    'lap(1)|100': (68.25295128163273, 79.42603506690627, 0.9999778321541206, 0.9999857830867444),
    'lap(1)|1000': (474.3024677631864, 516.5459942342708, 1.0, 1.0),
    'lap(1)|10000': (4021.708348752274, 4160.209193907726, 1.0, 1.0),
    'lap(1)|100000': (37878.66073389484, 38321.181639415634, 1.0, 1.0),
    'lap(10)|1': (0.09998000029999499, 0.0999999980000501, 1.0000000000010015e-300, 1.0000000000010015e-300),
    'lap(10)|10': (0.989962327249704, 0.999998986933579, 1.0430465651071017e-11, 0.08632381418613268),
    'lap(10)|100': (4.220347347245841, 5.853249610930639, 0.1212517890850838, 0.3466500502268203),
    'lap(10)|1000': (17.423652083963248, 22.81939112263332, 0.8091996306066661, 0.8741121804697731),
    'lap(10)|10000': (89.42895036771012, 106.47182071618958, 0.9999985731264246, 0.9999990858504385),
    'lap(10)|100000': (615.3281708355479, 669.1973926717912, 1.0, 1.0),
    'slap(1,0.01)|1': (0.016983454229451383, 0.01709998550666117, 1.0100000000010114e-300, 1.0100000000010114e-300),
    'slap(1,0.01)|10': (0.09938562634693426, 0.16182064438281096, 4.030897785163104e-13, 9.277227977045051e-06),
    'slap(1,0.01)|100': (0.33047713463796535, 0.5309003864543493, 4.650959400200191e-15, 0.007305018293924409),
    'slap(1,0.01)|1000': (1.1237829015540974, 1.6959033981952647, 4.8793474178978436e-05, 0.07689067948568631),
    'slap(1,0.01)|10000': (4.028867570482257, 5.72383176737269, 0.10147095494239687, 0.32399609645280414),
    'slap(1,0.01)|100000': (16.173013207749165, 21.34917266523833, 0.7712226627250345, 0.8484612835006289),
    'pure(0.5)|1': (0.49998393456435497, 0.4999999983934698, 4e-323, 0.20521236365554163),
    'pure(0.5)|10': (4.998854120412378, 4.99999988547767, 0.33167848292906754, 0.5432576734033475),
    'pure(0.5)|100': (31.17286349968611, 38.3691942806075, 0.9787433921707549, 0.9863987626036722),
    'pure(0.5)|1000': (186.12063219970176, 211.8581331286938, 1.0, 1.0),
    'pure(0.5)|10000': (1429.6893918164476, 1512.887762160285, 1.0, 1.0),
    'pure(0.5)|100000': (12898.731321484383, 13163.74186801415, 1.0, 1.0),
    'spure(1,0.05)|1': (0.08246575838256309, 0.0824999965758969, 4e-323, 4e-323),
    'spure(1,0.05)|10': (0.622132471708368, 0.8240784271893391, 4e-323, 0.030987911201345267),
    'spure(1,0.05)|100': (2.169558578192527, 3.2009228997622117, 0.009655217020666415, 0.16541862974949792),
    'spure(1,0.05)|1000': (7.984995728648119, 11.031542151921634, 0.37243291100419806, 0.563326255181178),
    'spure(1,0.05)|10000': (34.9580787335769, 44.182791612376754, 0.9836388203094866, 0.9893837859143041),
    'spure(1,0.05)|100000': (202.92230176749374, 231.6500040180506, 1.0, 1.0),
    'em(0.3)|1': (0.2967778484849197, 0.29998963267508616, 1.0000000000010015e-300, 0.03494040757761467),
    'em(0.3)|10': (2.007835636211272, 2.5815587089119916, 0.010914575214206109, 0.17924092751711493),
    'em(0.3)|100': (8.267279147137572, 11.169159341991449, 0.41116205300918507, 0.5940948141802239),
    'em(0.3)|1000': (37.48003702278946, 46.92513730690395, 0.9899398867516565, 0.9934971076047),
    'em(0.3)|10000': (222.52980722355073, 252.44919731785143, 1.0, 1.0),
    'em(0.3)|100000': (1729.925591303722, 1824.6202933485497, 1.0, 1.0),
    'approx(0.2,1e-7)|1': (0.19998199440164433, INF, 1.000000000001002e-07, 0.05232371760356042),
    'approx(0.2,1e-7)|10': (1.9964297213342403, INF, 0.02474020861672586, 0.21453196314447814),
    'approx(0.2,1e-7)|100': (13.73352940792611, INF, 0.5109065270864417, 0.6668597298623409),
    'approx(0.2,1e-7)|1000': (INF, INF, 0.9974307486901874, 0.9983420090778491),
    'approx(0.2,1e-7)|10000': (INF, INF, 1.0, 1.0),
    'approx(0.2,1e-7)|100000': (INF, INF, 1.0, 1.0),
    'gauss(3) no-exact|1': (1.2710877737169408, 1.890453157878186, 0.0002075122020530272, 0.09290217054498058),
    'gauss(3) no-exact|10': (4.652984534150313, 6.544357619365503, 0.14634283166755596, 0.3721144158284709),
    'gauss(3) no-exact|100': (19.130767836829413, 24.97772409034286, 0.8472359334064119, 0.8995500273113884),
    'gauss(3) no-exact|1000': (99.67291863898294, 117.98724004850548, 0.9999997765881815, 0.9999998569500064),
    'gauss(3) no-exact|10000': (696.7777918828549, 754.5630983420568, 1.0, 1.0),
    'gauss(3) no-exact|100000': (6004.134260638916, 6186.807387322748, 1.0, 1.0),
    'mix|1': (0.23687851583230413, 0.8498328156637713, 2.2071455539442012e-10, 0.007044832391396338),
    'mix|10': (0.35165236373022113, 1.08782623837814, 2.3547065161627218e-09, 0.009668132319022641),
    'mix|100': (0.6208823006244755, 1.4076067230540357, 6.010484397658809e-08, 0.0256569131633163),
    'mix|1000': (1.9767507240477578, 2.9521782713327553, 0.006033952042119604, 0.152980678965942),
    'mix|10000': (7.305924662584385, 10.09573446138295, 0.3322797912822871, 0.5325762108617335),
    'mix|100000': (31.78350856624664, 40.3388289656295, 0.9744840912438899, 0.9834337489651066),
    'dlap(2)|1': (0.49998393456435497, 0.4999999983934698, 4e-323, 0.20521236365554163),
    'dlap(2)|10': (4.998854120412378, 4.99999988547767, 0.33167848292906754, 0.5432576734033475),
    'dlap(2)|100': (31.17286349968611, 38.3691942806075, 0.9787433921707549, 0.9863987626036722),
    'dlap(2)|1000': (186.12063219970176, 211.8581331286938, 1.0, 1.0),
    'dlap(2)|10000': (1429.6893918164476, 1512.887762160285, 1.0, 1.0),
    'dlap(2)|100000': (12898.731321484383, 13163.74186801415, 1.0, 1.0),
}

#: checked in the default run (a few seconds); the slow run checks every entry
_QUICK = ["sg(0.8,1e-3)|1000", "sg(1.1,1e-2)|100", "sg(2,0.1)|10", "sg(5,0.5)|10", "lap(1)|10", "lap(10)|100",
          "slap(1,0.01)|1000", "pure(0.5)|100", "spure(1,0.05)|1000", "em(0.3)|100", "approx(0.2,1e-7)|100",
          "gauss(3) no-exact|10", "mix|100", "dlap(2)|10"]


def _accountant(key):
    name, t = key.split("|")
    t = int(t)
    acc = PLDAccountant(rdp_fallback=False, exact_gaussian=("no-exact" not in name))
    for mech, frac in _mechs()[name]:
        acc.compose(mech, max(1, int(round(t * frac))) if frac < 1 else t)
    return acc


#: the one allowance: the bound of the Gaussian pair's curve now covers scipy's erfc error of
#: 8 (1 + x^2) ulps at argument x and the rounding of mu/2 - e/mu (the former 64 ulps did not:
#: errors up to 4e-11 relative were found, tests/core/test_special.py); where that tail matters
#: an upper end moves up by 1e-14 to 6e-12 relative (delta(1) after 10^4 steps of sigma 2, q 0.1),
#: and never more than this
_VALIDITY_REL = 1e-10


def _check_not_above(key):
    acc = _accountant(key)
    new = (acc.epsilon(1e-5), acc.epsilon(1e-9), acc.delta(1.0), acc.delta(0.1))
    for name, old, val in zip(("epsilon(1e-5)", "epsilon(1e-9)", "delta(1)", "delta(0.1)"), OLD_UPPER[key], new):
        assert val <= old * (1.0 + _VALIDITY_REL), f"{key}: {name} moved up from {old!r} to {val!r}"
    lo, up = acc.epsilon_interval(1e-5)
    assert lo <= up


@pytest.mark.parametrize("key", _QUICK)
def test_upper_ends_never_above_the_previous_code(key):
    _check_not_above(key)


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(set(OLD_UPPER) - set(_QUICK)))
def test_upper_ends_never_above_the_previous_code_whole_grid(key):
    _check_not_above(key)


def test_the_stored_grid_is_the_one_composed():
    # (a typo in the table would make the comparison vacuous)
    assert set(OLD_UPPER) == {f"{m}|{t}" for m in _mechs() for t in (1, 10, 100, 1000, 10000, 100000)}
    assert set(_QUICK) <= set(OLD_UPPER)


@pytest.mark.parametrize("sigma,q,steps,delta,rel", [
    (0.8, 1e-3, 1000, 1e-5, 0.0), (0.8, 1e-3, 10000, 1e-5, 0.0), (2.0, 0.1, 100, 1e-6, 0.0),
    # where both use the same grid (the losses are wide enough for 1e-4) the certified end pays the
    # charges dp_accounting's estimate does not (truncated tails, floating point): 3e-10 relative
    (1.1, 0.01, 1000, 1e-5, 1e-9), (1.0, 0.05, 300, 1e-5, 1e-9)])
def test_upper_end_not_above_dp_accounting(sigma, q, steps, delta, rel):
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    ref = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    ref.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)
    theirs = ref.get_epsilon(delta)
    acc = PLDAccountant(rdp_fallback=False).compose(PoissonSampled(Gaussian(sigma), q), steps)
    lo, up = acc.epsilon_interval(delta)
    assert lo <= up <= theirs * (1.0 + rel)


# ------------------------------------------------------------------------------------------------
# validity: the interval brackets the exact value


@pytest.mark.parametrize("sigma,steps", [(0.7, 1), (1.0, 7), (3.0, 100), (10.0, 1000), (0.3, 30)])
@pytest.mark.parametrize("delta", [1e-3, 1e-7])
def test_unsampled_gaussian_through_the_pld_brackets_balle_wang(sigma, steps, delta):
    acc = PLDAccountant(rdp_fallback=False, exact_gaussian=False).compose(Gaussian(sigma), steps)
    lo, up = acc.epsilon_interval(delta)
    ex_lo, ex_up = G.epsilon_bounds(Fraction(steps) / Fraction(sigma) ** 2, delta)
    assert lo <= ex_up and ex_lo <= up
    assert up - lo < 1e-2 * max(ex_up, 1e-3)  # (and tight)
    for eps in (0.0, 0.5 * ex_up, ex_up, 2.0 * ex_up):
        d_lo, d_up = acc.delta_interval(eps)
        x_lo, x_up = G.delta_bounds(Fraction(steps) / Fraction(sigma) ** 2, eps)
        assert d_lo <= x_up and x_lo <= d_up


def _subsampled_delta1(mu, q, eps, direction):
    """delta(eps) of one Poisson-subsampled Gaussian step, A = N(0,1), B = N(mu,1) (mpmath):
    REMOVE (P, Q) = ((1-q)A + qB, A), ADD = (A, (1-q)A + qB); the likelihood ratio is monotone in x
    (one crossing), so delta = P(side) - e^eps Q(side) in closed form."""
    e = mp.exp(eps)
    if direction == "remove":
        # p/q = 1 - q + q exp(mu x - mu^2/2), increasing: delta = P(X > x*) - e^eps Q(X > x*)
        if e <= 1 - q:
            return 1 - e
        xs = (mp.log((e - (1 - q)) / q) + mu ** 2 / 2) / mu
        p_tail = (1 - q) * mp.ncdf(-xs) + q * mp.ncdf(mu - xs)
        return max(p_tail - e * mp.ncdf(-xs), mp.mpf(0))
    # ADD: p/q = 1 / (1 - q + q exp(mu x - mu^2/2)), decreasing: P(X < x*) - e^eps Q(X < x*)
    if e * (1 - q) >= 1:
        return mp.mpf(0)
    xs = (mp.log((1 / e - (1 - q)) / q) + mu ** 2 / 2) / mu
    q_tail = (1 - q) * mp.ncdf(xs) + q * mp.ncdf(xs - mu)
    return max(mp.ncdf(xs) - e * q_tail, mp.mpf(0))


def _subsampled_delta2(mu, q, eps, direction):
    """Two composed steps: delta_2(eps) = E_P[delta_1(eps - L)] over the first step's output."""
    def p_dens(x):
        a, b = mp.npdf(x), mp.npdf(x - mu)
        return (1 - q) * a + q * b if direction == "remove" else a

    def q_dens(x):
        a, b = mp.npdf(x), mp.npdf(x - mu)
        return a if direction == "remove" else (1 - q) * a + q * b

    def f(x):
        px = p_dens(x)
        return px * _subsampled_delta1(mu, q, eps - mp.log(px / q_dens(x)), direction)

    # (breakpoints every quarter: the integrand has kinks where eps - L crosses the ends of the
    # one-step loss range)
    return mp.quad(f, [-mp.inf] + [mp.mpf(k) / 4 for k in range(-60, 61)] + [mp.inf], maxdegree=10)


@pytest.mark.parametrize("sigma,q", [(0.8, 0.001), (1.1, 0.01), (0.5, 0.3), (3.0, 0.5)])
def test_subsampled_gaussian_one_step_brackets_mpmath(sigma, q):
    mu = mp.mpf(1) / mp.mpf(sigma)
    acc = PLDAccountant(rdp_fallback=False).compose(PoissonSampled(Gaussian(sigma), q), 1)
    with mp.workdps(30):
        for eps in (0.0, 0.001, 0.05, 0.3, 1.0, 3.0):
            exact = max(_subsampled_delta1(mu, q, mp.mpf(eps), d) for d in ("add", "remove"))
            lo, up = acc.delta_interval(eps)
            assert lo <= exact * (1 + mp.mpf(10) ** -20) and exact <= up * (1 + mp.mpf(10) ** -20), (eps, lo, float(exact), up)
            if eps <= 0.3:  # (and tight: one step on the coarse grid; its far tail is looser)
                assert up - lo <= 0.05 * float(exact)


@pytest.mark.slow
@pytest.mark.parametrize("sigma,q", [(0.8, 0.01), (1.0, 0.1)])
def test_subsampled_gaussian_two_steps_brackets_mpmath(sigma, q):
    mu = mp.mpf(1) / mp.mpf(sigma)
    acc = PLDAccountant(rdp_fallback=False).compose(PoissonSampled(Gaussian(sigma), q), 2)
    with mp.workdps(25):
        for eps in (0.01, 0.2, 1.0):
            exact = max(_subsampled_delta2(mu, q, mp.mpf(eps), d) for d in ("add", "remove"))
            lo, up = acc.delta_interval(eps)
            assert lo <= exact * (1 + mp.mpf(10) ** -12) and exact <= up * (1 + mp.mpf(10) ** -12), (eps, lo, float(exact), up)


def test_coarsened_optimistic_pld_counts_its_totals():
    # composed optimistic PLDs were coarsened as if their Q-mass were one; the moved-down mass of
    # an optimistic PLD makes it larger, so the curve at negative losses came out too high: with
    # this grid the lower end was 4021.83 above the upper end 4021.71
    acc = PLDAccountant(0.0012974115088582039, rdp_fallback=False, adaptive=False, max_bins=2**24)
    acc.compose(Laplace(1.0), 10**4)
    lo, up = acc.epsilon_interval(1e-5)
    assert lo <= up
    assert up - lo < 1.0


def test_spectral_queries_match_the_masses():
    # a composition kept as its spectrum answers as the masses it stands for would (here materialised
    # by the inverse transform), within both sides' charges
    from dpaudit.accounting.pld.discretisation import discretise
    from dpaudit.mechanisms.loss_pairs import GaussianPair, SubsampledPair

    pair = SubsampledPair(GaussianPair(1.25), 0.001, "remove")
    single = discretise(pair, 1e-4, 1e-20, True)
    sp = D.spectral_compose([(single, 500)], 1e-15, True)
    assert isinstance(sp, D.SpectralPLD)
    mat = D.self_compose(single, 500, 1e-15)
    for eps in (-0.5, 0.0, 0.1, 0.2, 0.5, 1.0, 2.0):
        a, b = D.delta_for_epsilon(sp, eps), D.delta_for_epsilon(mat, eps)
        assert abs(a - b) <= 1e-12 + 1e-9 * b
    for delta in (1e-3, 1e-6, 1e-9):
        # (the spectral answer is the smaller: no l1 charge of an inverse transform, no clipping)
        a, b = D.epsilon_for_delta(sp, delta), D.epsilon_for_delta(mat, delta)
        assert a <= b + 1e-12 and b - a < 1e-5 * b
