"""PLDAccountant on the hard configurations of users' reports: bounded memory, completion."""

from __future__ import annotations

import math
import resource

import pytest

from dpaudit import Gaussian, PLDAccountant, PoissonSampled, RDPAccountant


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


@pytest.mark.slow
def test_million_steps_small_q():
    acc = PLDAccountant().compose(PoissonSampled(Gaussian(1.0), 1e-4), 10**6)
    lo, up = acc.epsilon_interval(1e-5)
    rdp = RDPAccountant(warn_at_grid_end=False).compose(PoissonSampled(Gaussian(1.0), 1e-4), 10**6).epsilon(1e-5)
    assert 0 < lo <= up < rdp
    assert up - lo < 0.05
    # the grid was refined for the narrow single-step loss, within the memory budget
    assert acc.effective_discretization < 1e-4
    assert _peak_mb() < 1024


def test_delta_1e18_completes():
    acc = PLDAccountant().compose(PoissonSampled(Gaussian(1.1), 0.01), 1000)
    lo, up = acc.epsilon_interval(1e-18)
    assert 0 < lo <= up < math.inf
    exact = PLDAccountant().compose(Gaussian(1.0), 50)
    lo, up = exact.epsilon_interval(1e-18)
    assert 0 < lo <= up < math.inf and up - lo < 1e-8 * up


def test_gaussian_epsilon_around_001():
    sigma = 220.0  # epsilon ~ 0.01 at delta = 1e-5
    exact = PLDAccountant().compose(Gaussian(sigma)).epsilon(1e-5)
    assert 0.005 < exact < 0.02
    acc = PLDAccountant(exact_gaussian=False).compose(Gaussian(sigma))
    lo, up = acc.epsilon_interval(1e-5)
    assert lo <= exact <= up and up - exact < 1e-3
    # mixed with a subsampled step it still goes through the PLD machinery quickly
    acc.compose(PoissonSampled(Gaussian(1.0), 0.001), 10)
    lo, up = acc.epsilon_interval(1e-5)
    assert lo <= up < 1.0
    assert _peak_mb() < 1024
