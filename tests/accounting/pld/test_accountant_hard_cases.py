"""PLDAccountant on the hard configurations of users' reports: bounded memory, completion."""

from __future__ import annotations

import math
import tracemalloc

import pytest

from dpaudit import Gaussian, PLDAccountant, PoissonSampled, RDPAccountant


def _peak_mb(fn) -> tuple:
    """(fn(), peak MB allocated while it ran). numpy reports its array buffers to tracemalloc, so this is
    the computation's own peak -- not the process-wide peak RSS (ru_maxrss), which under pytest-xdist
    also counts whatever earlier tests ran in the same worker (it read 2970 MB there)."""
    tracemalloc.start()
    try:
        out = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return out, peak / 2.0**20


@pytest.mark.slow
def test_million_steps_small_q():
    def run():
        a = PLDAccountant().compose(PoissonSampled(Gaussian(1.0), 1e-4), 10**6)
        return a, a.epsilon_interval(1e-5)

    (acc, (lo, up)), peak = _peak_mb(run)
    rdp = RDPAccountant(warn_at_grid_end=False).compose(PoissonSampled(Gaussian(1.0), 1e-4), 10**6).epsilon(1e-5)
    assert 0 < lo <= up < rdp
    assert up - lo < 0.05
    # the grid was refined for the narrow single-step loss, within the memory budget
    assert acc.effective_discretization < 1e-4
    assert peak < 1024, peak


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
    (lo, up), peak = _peak_mb(lambda: acc.compose(PoissonSampled(Gaussian(1.0), 0.001), 10).epsilon_interval(1e-5))
    assert lo <= up < 1.0
    assert peak < 1024, peak
