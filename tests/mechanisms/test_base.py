"""Every mechanism refuses bad RDP orders (dpaudit/mechanisms/base.py and core.validation.check_orders)."""

import math

import mpmath as mp
import pytest

from dpaudit.mechanisms.approx import ApproxDP
from dpaudit.mechanisms.laplace import Laplace
from dpaudit.mechanisms.pure import ExponentialMechanism, PureDP
from dpaudit.mechanisms.subsampled import PoissonSampled

mp.mp.dps = 40


@pytest.mark.parametrize("bad", [[1.0], [0.5], [math.nan], []])
def test_bad_orders(bad):
    for m in (Laplace(1.0), PureDP(1.0), ExponentialMechanism(1.0), ApproxDP(1.0, 1e-5),
              PoissonSampled(Laplace(1.0), 0.1)):
        with pytest.raises(ValueError, match="orders"):
            m.rdp(bad)
