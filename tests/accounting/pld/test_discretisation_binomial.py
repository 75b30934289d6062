"""Exact composition of two-atom privacy-loss pairs (randomized response, (eps, delta), ...):
the binomial masses must carry a certified error at every count.

Regressions: scipy's ``binom.logpmf`` summed to 0.344 over a +-40 sd window at k = 2^49 (p = 1 -
6.9e-13), so ``PLDAccountant().compose(PureDP(28), 2**49).delta_interval(0)`` gave the upper end
0.344 where the exact value is 1 - 1e-300 or so; at k = 2^16 its masses were off by 1.2e-10, more
than the 1e-10 margin the composition allowed. Counts near 10^20 crashed with an int64 cast.
"""

from __future__ import annotations

import math
import warnings

import mpmath as mp
import numpy as np
import pytest

from dpaudit import ApproxDP, PLDAccountant, PureDP
from dpaudit.accounting.pld.discretisation import _binomial_window


def _mp_pmf(j, k, p, q=None):
    """Exact Binomial(k, p / (p + q)) mass at j for the floats p and q (q = 1 - p exactly when
    not given): the composition uses the two atom masses as given, so 1 - p is not re-rounded."""
    with mp.workdps(80):
        p = mp.mpf(p)
        q = 1 - p if q is None else mp.mpf(q)
        return mp.binomial(k, j) * (p / (p + q)) ** j * (q / (p + q)) ** (k - j)


@pytest.mark.parametrize("k,eps", [(2**16, 1e-3), (2**16, 3.0), (2**20, 0.5), (10**9, 28.0), (2**49, 28.0)])
def test_binomial_window_within_its_certified_error(k, eps):
    p = math.exp(eps) / (1 + math.exp(eps))
    q = 1 / (1 + math.exp(eps))
    mean, sd = k * p, math.sqrt(k * p * q)
    j_lo, j_hi = max(int(mean - 40 * sd - 2), 0), min(int(mean + 40 * sd + 2), k)
    jj, pmf, rel, left, right = _binomial_window(k, p, q, j_lo, j_hi)
    assert abs(math.fsum(pmf.tolist()) - 1.0) <= rel + left + right
    # spot checks against mpmath at the mode and +-1, 3, 10 sd (the exact binomial of the same
    # float p; a k this large is feasible in mpmath only through its binomial function)
    mode = int(np.argmax(pmf))
    for off in (0, 1, -1, 3, -3, 10, -10):
        i = mode + int(round(off * sd))
        if 0 <= i < jj.size:
            exact = _mp_pmf(int(jj[i]), k, p, q)
            assert abs(pmf[i] - exact) <= (rel + left + right) * exact + mp.mpf(1e-300)


def test_binomial_window_tail_bounds_are_upper_bounds():
    k, p = 1000, 0.3
    jj, pmf, rel, left, right = _binomial_window(k, p, 1 - p, 200, 400)
    exact_left = mp.fsum(_mp_pmf(j, k, p) for j in range(0, 200))
    exact_right = mp.fsum(_mp_pmf(j, k, p) for j in range(401, k + 1))
    assert exact_left <= left and exact_right <= right


def test_pure_dp_huge_count_upper_end_is_valid():
    # exact delta(0) of 2^49-fold randomized response at eps = 28 is 1 - 2 P(Bin(k, q) >= k/2) with
    # k q = 389: indistinguishable from 1 in doubles
    acc = PLDAccountant().compose(PureDP(28.0), 2**49)
    lo, up = acc.delta_interval(0.0)
    assert 0.0 <= lo <= up and up >= 1.0 - 1e-12


@pytest.mark.parametrize("event", [ApproxDP(116.0, 0.0), PureDP(28.0)])
def test_counts_beyond_int64_grid_do_not_crash(event):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        acc = PLDAccountant().compose(event, 10**20)
        lo, up = acc.epsilon_interval(0.1)
        dlo, dup = acc.delta_interval(0.0)
    assert 0.0 <= lo <= up and 0.0 <= dlo <= dup <= 1.0


def test_optimistic_two_atom_mass_never_exceeds_one():
    # found by the property suite: atom masses summing to 1 + 1 ulp, raised to the 80142nd power,
    # gave an optimistic PLD of total mass 1 + 1e-11 and a delta "lower end" of 1.0000000000069
    from dpaudit.mechanisms import ExponentialMechanism

    acc = PLDAccountant(max_bins=2**15)
    acc.compose(ExponentialMechanism(3.6798165898855224), 80142)
    acc.compose(ExponentialMechanism(796.7026523355804), 10**20)
    acc.compose(PureDP(3.6798165898855224), 110)
    lo, up = acc.delta_interval(997.6969373297544)
    assert 0.0 <= lo <= up <= 1.0


def test_max_bins_bounds_the_fft_too():
    # the accountant's max_bins was checked on the grid but not on the FFT buffer of a k-fold
    # composition (only the global cap was): the lower end of this composition took 57 s
    from dpaudit.accounting.pld.distribution import DiscretePLD, PLDTooLargeError, self_compose
    from dpaudit.mechanisms import ExponentialMechanism

    pld = DiscretePLD(0.01, -50, np.full(101, 1 / 101), 0.0, True)
    with pytest.raises(PLDTooLargeError, match="max_bins"):
        self_compose(pld, 10**6, 1e-15, max_bins=2**12)
    acc = PLDAccountant(max_bins=2**15).compose(ExponentialMechanism(2.2250738585e-313), 10**20)
    lo, up = acc.epsilon_interval(1e-200)
    assert 0.0 <= lo <= up


def test_optimistic_power_beyond_its_error_model_is_refused():
    # found by the property suite: a 2^35-fold optimistic FFT power whose first-order error charge
    # (1.31e-6) was below its actual error gave delta lower ends of 1.0000009 (> 1)
    from dpaudit import Gaussian

    acc = PLDAccountant()
    acc.compose(Gaussian(0.2199358642716416), 17).compose(PureDP(2.97093512534449), 10**20)
    lo, up = acc.delta_interval(3.4314398256334047e-125)
    assert 0.0 <= lo <= up <= 1.0
