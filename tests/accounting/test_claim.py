import math
import pickle

import numpy as np
import pytest

from dpaudit import Gaussian, PoissonSampled, RDPAccountant, ZCDPAccountant
from dpaudit.accounting.claim import PrivacyClaim


def _rdp_claim(sigma, steps=10):
    acc = RDPAccountant().compose(Gaussian(sigma), steps)
    return PrivacyClaim.from_accountant(acc, neighbouring="add_remove", description=f"rdp {sigma}", source=f"rdp{sigma}")


def test_approx_dp_semantics():
    c = PrivacyClaim.approx_dp(1.0, 1e-6, neighbouring="replace_one", description="x")
    assert c.epsilon(1e-6) == 1.0 and c.epsilon(1e-3) == 1.0
    assert c.epsilon(1e-7) == math.inf  # no guarantee below the stated delta
    assert c.delta(1.0) == 1e-6 and c.delta(0.5) == 1.0
    assert not c.has_rdp and np.all(np.isinf(c.rdp([2, 3])))
    with pytest.raises(ValueError, match="delta"):
        PrivacyClaim.approx_dp(1.0, 1.0, neighbouring="add_remove", description="x")
    with pytest.raises(ValueError, match="neighbouring"):
        PrivacyClaim.approx_dp(1.0, 0.1, neighbouring="swap", description="x")


def test_best_of_is_pointwise_minimum_and_records_choice():
    loose, tight = _rdp_claim(1.0), _rdp_claim(2.0)
    best = PrivacyClaim.best_of([loose, tight])
    assert best.epsilon(1e-5) == tight.epsilon(1e-5) < loose.epsilon(1e-5)
    assert best.details["chosen"] == "rdp2.0"
    assert best.delta(1.0) == min(loose.delta(1.0), tight.delta(1.0))
    orders = np.array([2.0, 5.0])
    assert np.array_equal(best.rdp(orders), np.minimum(loose.rdp(orders), tight.rdp(orders)))
    # with an (eps, delta) statement that wins at large delta
    point = PrivacyClaim.approx_dp(0.01, 0.5, neighbouring="add_remove", description="p", source="point")
    mixed = PrivacyClaim.best_of([loose, point])
    assert mixed.epsilon(0.6) == 0.01 and mixed.details["chosen"] == "point"
    assert mixed.epsilon(1e-5) == loose.epsilon(1e-5) and mixed.details["chosen"] == "rdp1.0"


def test_best_of_rejects_mixed_relations_and_empty():
    a = _rdp_claim(1.0)
    b = PrivacyClaim.approx_dp(1.0, 1e-5, neighbouring="replace_one", description="x")
    with pytest.raises(ValueError, match="neighbouring"):
        PrivacyClaim.best_of([a, b])
    with pytest.raises(ValueError, match="empty"):
        PrivacyClaim.best_of([])


def test_claims_pickle_round_trip():
    """Claims travel to worker processes (issue 8): every constructor must pickle."""
    zc = PrivacyClaim.from_accountant(ZCDPAccountant().compose(Gaussian(3.0), 5), neighbouring="add_remove",
                                      description="z")
    sub = PrivacyClaim.from_accountant(RDPAccountant().compose(PoissonSampled(Gaussian(1.1), 0.01), 100),
                                       neighbouring="add_remove", description="s")
    point = PrivacyClaim.approx_dp(0.5, 1e-6, neighbouring="replace_one", description="p")
    for c in (zc, sub, point, PrivacyClaim.best_of([zc, sub])):
        c2 = pickle.loads(pickle.dumps(c))
        assert c2.epsilon(1e-5) == c.epsilon(1e-5)
        assert c2.delta(2.0) == c.delta(2.0)
    assert zc.rho == pytest.approx(5 / 18)
