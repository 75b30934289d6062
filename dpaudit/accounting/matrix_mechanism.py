"""Accounting for matrix-factorization (DP-FTRL) runs: amplified banded strategies, and the error of
strategies compared at the same (epsilon, delta).

Amplification of b-banded strategies (Choquette-Choo, Ganesh, McKenna, McMahan, Rush, Thakurta, Xu
2023, "(Amplified) banded matrix factorization", arXiv:2306.08153, Thm. 4 with Alg. 2, cyclic Poisson
sampling). The records are split into ``groups`` >= b fixed groups; step t uses group t mod groups,
each of its records included independently with probability q. A record's participations are then
at least ``groups`` steps apart, so with a b-banded C its contributions at steps j and j + groups
occupy disjoint rows of C x (rows j .. j + b - 1), the outputs of different participations are
independent given the sampling, and the run is dominated by k = ceil(n / groups) compositions of
the Poisson-subsampled Gaussian with rate q and mu = max_j ||C e_j|| * sensitivity / sigma -- the
DP-SGD accounting of ``PoissonSampled(Gaussian(sigma, sensitivity * max column norm), q)`` composed k
times, exact in the PLD accountant. The reduction is exact (the run's privacy profile equals the
composition) when every participation of the worst group has a column of the largest norm: then the
sufficient statistic of participation m is <C e_j, y>, distributed as the subsampled Gaussian's
output; ``AmplifiedBanded.exact`` says whether this holds (otherwise the shorter columns make the
composition an upper bound). b = 1 (C = I) is DP-SGD itself.

Comparison at the same privacy (:func:`compare_strategies`): for a target (epsilon, delta) the
Gaussian mechanism needs mu = gdp_mu(epsilon, delta) (Dong, Roth, Su 2019, Cor. 2.13; Balle & Wang
2018, Thm. 8), so a strategy needs noise sigma = sens(C) / mu and its prefix sums have squared error
sigma^2 ||B_t||^2 (:mod:`dpaudit.mechanisms.mf_optimize`). No amplification is assumed there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.accounting.base import make_accountant
from dpaudit.accounting.conversions import gdp_mu
from dpaudit.core.numeric import round_up
from dpaudit.core.validation import check_count, check_delta, check_epsilon, check_positive, check_probability
from dpaudit.mechanisms.gaussian import Gaussian
from dpaudit.mechanisms.mf_optimize import StrategyError, strategy_error, tree_error
from dpaudit.mechanisms.mf_participation import Participation
from dpaudit.mechanisms.mf_strategies import IdentityStrategy, Strategy
from dpaudit.mechanisms.subsampled import PoissonSampled

__all__ = ["AmplifiedBanded", "banded_cyclic_poisson", "compare_strategies", "StrategyRow"]


@dataclass(frozen=True)
class AmplifiedBanded:
    """A banded MF run under cyclic Poisson sampling as ``count`` compositions of ``mechanism``
    (arXiv:2306.08153, Thm. 4; module docstring). ``exact``: the composition is the run's privacy
    profile (not only an upper bound)."""

    mechanism: PoissonSampled
    count: int
    groups: int
    bands: int
    exact: bool
    description: str

    def accountant(self, name: str = "pld", **kwargs):
        """A fresh accountant ``name`` with the run composed."""
        return make_accountant(name, **kwargs).compose(self.mechanism, count=self.count)

    def epsilon(self, delta: float, accountant: str = "pld", **kwargs) -> float:
        return self.accountant(accountant, **kwargs).epsilon(delta)

    def delta(self, epsilon: float, accountant: str = "pld", **kwargs) -> float:
        return self.accountant(accountant, **kwargs).delta(epsilon)


def banded_cyclic_poisson(strategy: Strategy, sigma: float, sample_rate: float, *, groups: int | None = None,
                          sensitivity: float = 1.0) -> AmplifiedBanded:
    """The amplified accounting of a b-banded ``strategy`` run with cyclic Poisson sampling: ``groups``
    (default b) groups, rate ``sample_rate`` within the group of the step, noise ``sigma`` per step and
    coordinate, per-step contribution bound ``sensitivity`` (add/remove). Refused (ValueError) when
    C is not banded or groups < bands (the theorem does not apply: use the unamplified
    :class:`~dpaudit.mechanisms.matrix_factorization.MatrixFactorization` or :mod:`dpaudit.accounting.mmcc_bound`)."""
    if not isinstance(strategy, Strategy):
        raise ValueError(f"strategy must be a Strategy, got {type(strategy).__name__}")
    sigma = check_positive("sigma", sigma)
    q = check_probability("sample_rate", sample_rate)
    sensitivity = check_positive("sensitivity", sensitivity)
    b = strategy.bands
    n = strategy.steps
    if b is None:
        raise ValueError("strategy must be banded (C_ij = 0 for i - j >= b) for the amplification of "
                         "arXiv:2306.08153, Thm. 4; this strategy has no band structure")
    g = b if groups is None else check_count("groups", groups, minimum=1)
    if g < b:
        raise ValueError(f"groups must be >= the number of bands {b} (participations closer than the bands "
                         f"overlap in C x and the reduction to DP-SGD fails), got {g}")
    norms = strategy.column_norms()
    top = float(np.max(norms))
    count = -(-n // g)
    worst = norms[np.arange(count) * g]  # group 0 participates at 0, g, 2g, ... (the most participations)
    exact = bool(np.all(worst >= top * (1 - 1e-15)))
    mech = PoissonSampled(Gaussian(sigma, round_up(top * sensitivity, ulps=2)), q)
    desc = (f"{count} x PoissonSampled(Gaussian(sigma={sigma:g}, sensitivity={top * sensitivity:.6g}), q={q:g}): "
            f"{b}-banded C, cyclic Poisson sampling over {g} groups (arXiv:2306.08153, Thm. 4)")
    return AmplifiedBanded(mech, count, g, b, exact, desc)


@dataclass(frozen=True)
class StrategyRow:
    """One strategy at the target (epsilon, delta): its sensitivity, the noise it needs (per unit
    clip), and the root-mean-squared and largest root-squared prefix-sum errors that noise gives."""

    name: str
    sensitivity: float
    sensitivity_exact: bool
    sigma: float
    rmse: float
    max_error: float
    ratio_to_identity: float

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def compare_strategies(strategies, participation: Participation | None, epsilon: float, delta: float, *,
                       include_identity: bool = True, include_tree: bool = True) -> list[StrategyRow]:
    """Each strategy (a dict name -> Strategy, or a list) at the same (``epsilon``, ``delta``) under
    ``participation`` (module docstring), beside DP-SGD's identity strategy and the binary tree (the
    tree needs a dense node matrix for multi-participation schemas: steps <= 4096)."""
    epsilon = check_epsilon("epsilon", epsilon)
    delta = check_delta("delta", delta)
    items = list(strategies.items()) if isinstance(strategies, dict) else [(s.describe(), s) for s in strategies]
    if not items and not include_identity:
        raise ValueError("strategies must name at least one strategy")
    n = items[0][1].steps if items else None
    errors: list[StrategyError] = []
    if include_identity:
        steps = n if n is not None else 1
        errors.append(strategy_error(IdentityStrategy(steps), participation, "identity (DP-SGD)"))
    for name, s in items:
        if s.steps != (n if n is not None else s.steps):
            raise ValueError("strategies must all have the same number of steps")
        errors.append(strategy_error(s, participation, name))
    if include_tree and n is not None:
        errors.append(tree_error(n, participation))
    mu = gdp_mu(epsilon, delta)
    ref = None
    rows = []
    for e in errors:
        sigma = e.sensitivity / mu
        rmse = math.sqrt(e.mean) / mu
        row = StrategyRow(e.name, e.sensitivity, e.sensitivity_exact, sigma, rmse, math.sqrt(e.max) / mu, 1.0)
        if ref is None and e.name.startswith("identity"):
            ref = rmse
        rows.append(row)
    if ref is not None:
        rows = [StrategyRow(r.name, r.sensitivity, r.sensitivity_exact, r.sigma, r.rmse, r.max_error, r.rmse / ref)
                for r in rows]
    else:
        rows = [StrategyRow(r.name, r.sensitivity, r.sensitivity_exact, r.sigma, r.rmse, r.max_error, math.nan)
                for r in rows]
    return rows
