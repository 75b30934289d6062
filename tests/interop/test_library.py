"""LibraryClaim and audit_library_claim: a library's stated guarantee audited at several points (issue 18)."""

import math

import numpy as np
import pytest

from dpaudit.conversions import zcdp_to_dp
from dpaudit.interop.library import ZCDP_DELTAS, LibraryClaim, audit_library_claim


def gaussian(sigma):
    def s(x, rng, size):
        return x + sigma * rng.standard_normal(size)
    return s


def test_zcdp_claim_is_checked_at_several_deltas():
    c = LibraryClaim.zcdp(0.5)
    assert c.kind == "zcdp" and len(c.points) == len(ZCDP_DELTAS)
    for (eps, d), d0 in zip(c.points, ZCDP_DELTAS):
        assert d == d0 and eps == zcdp_to_dp(0.5, d0)
    assert LibraryClaim.pure(1.0).points == ((1.0, 0.0),)
    assert LibraryClaim.approx(1.0, 1e-5).points == ((1.0, 1e-5),)


@pytest.mark.parametrize("bad", [lambda: LibraryClaim.zcdp(-1.0), lambda: LibraryClaim.zcdp(0.5, deltas=[0.0]),
                                 lambda: LibraryClaim.zcdp(0.5, deltas=[]), lambda: LibraryClaim.pure(math.nan),
                                 lambda: LibraryClaim.approx(1.0, 1.0)])
def test_invalid_claims_are_refused(bad):
    with pytest.raises(ValueError):
        bad()


def test_a_zcdp_claim_violated_at_one_delta_only_fails_the_verdict():
    # noise for rho = 1/(2 sigma^2) with sigma 0.25 (rho 8), claimed as rho 0.02: eps(1e-3) = 0.77 is violated,
    # the verdict fails although the point at delta 1e-9 (eps 1.24) may not be
    claim = LibraryClaim.zcdp(0.02)
    r = audit_library_claim(gaussian(0.25), 0.0, 1.0, claim, trials=3000, seed=0, statistic="value")
    pts = r.details["claim_points"]
    assert len(pts) == 3 and any(p["violation"] for p in pts)
    assert r.violation and r.verdict == "violation"
    assert r.details["claim_confidence"]["each"] == pytest.approx(1 - 0.05 / 3)
    assert r.confidence == pytest.approx(1 - 0.05 / 3)


def test_a_true_zcdp_claim_is_consistent_at_every_delta():
    claim = LibraryClaim.zcdp(0.5)  # sigma 1, sensitivity 1: rho = 1/2 exactly
    r = audit_library_claim(gaussian(1.0), 0.0, 1.0, claim, trials=3000, seed=1, statistic="value")
    assert not r.violation and not any(p["violation"] for p in r.details["claim_points"])
    assert r.epsilon_lower > 0


def test_epsilon_and_delta_come_from_the_claim_only():
    with pytest.raises(ValueError, match="epsilon"):
        audit_library_claim(gaussian(1.0), 0.0, 1.0, LibraryClaim.pure(1.0), epsilon=2.0)
    with pytest.raises(ValueError, match="claim"):
        audit_library_claim(gaussian(1.0), 0.0, 1.0, (1.0, 0.0))


def test_reproducible_from_the_seed():
    a = audit_library_claim(gaussian(1.0), 0.0, 1.0, LibraryClaim.zcdp(0.5), trials=500, seed=3, statistic="value")
    b = audit_library_claim(gaussian(1.0), 0.0, 1.0, LibraryClaim.zcdp(0.5), trials=500, seed=3, statistic="value")
    assert [p["epsilon_lower"] for p in a.details["claim_points"]] == [p["epsilon_lower"] for p in b.details["claim_points"]]
    assert np.isfinite(a.epsilon_lower)
