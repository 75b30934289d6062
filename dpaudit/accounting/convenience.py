"""What users of Opacus and dp_accounting reach for, in their spelling.

* :func:`sampling_from_epochs`: epochs, batch size and dataset size to (q, steps) of DP-SGD:
  q = batch_size / dataset_size and steps = ceil(epochs * dataset_size / batch_size), the
  convention of TensorFlow Privacy's ``compute_dp_sgd_privacy`` (Abadi et al. 2016, Sec. 3.1:
  "lot" sampling with probability q; an epoch is 1/q steps). Rounding the steps up can only add
  privacy loss, so the result stays an upper bound. (Opacus' Poisson data loader runs
  ceil(N/B) steps per epoch at q = 1/ceil(N/B); pass those to :func:`get_epsilon` directly to
  match it.)
* :func:`get_epsilon` / :func:`get_noise_multiplier`: Opacus-style one-liners
  (``opacus.accountants.utils.get_noise_multiplier`` has the same keyword names) on dpaudit's
  accountants. The epsilon is an upper bound (RDP: Mironov 2017 and the subsampled-Gaussian
  RDP of Mironov, Talwar, Zhang 2019; PLD: pessimistic discretisation); the noise multiplier is
  the smallest one, rounded up, that meets the target (:func:`dpaudit.calibrate_sigma`, exact
  to a relative 1e-12 for RDP), so ``epsilon_tolerance`` is accepted for compatibility only.
* :class:`OpacusStyleAccountant`: ``acc.step(noise_multiplier=..., sample_rate=...)`` once per
  training step, then ``acc.get_epsilon(delta)``, as with ``opacus.accountants.RDPAccountant``.

``noise_multiplier`` is the noise standard deviation divided by the clipping norm (the L2
sensitivity of a clipped sum under add/remove neighbours), as in Opacus and dp_accounting;
``dpaudit.Gaussian(sigma, sensitivity).noise_multiplier`` is the same ratio. The neighbouring
relation is add/remove (Poisson subsampling). For interoperability with dp_accounting's
``DpEvent`` objects see :mod:`dpaudit.interop.dp_accounting`.
"""

from __future__ import annotations

import math

from dpaudit.accounting.base import make_accountant
from dpaudit.accounting.calibration import calibrate_sigma
from dpaudit.core.validation import check_count, check_delta, check_epsilon, check_positive, check_probability
from dpaudit.mechanisms.gaussian import Gaussian
from dpaudit.mechanisms.subsampled import PoissonSampled

__all__ = ["sampling_from_epochs", "get_epsilon", "get_noise_multiplier", "OpacusStyleAccountant",
           "ACCOUNTANT_NAMES"]

#: accountant names accepted here ("prv", Opacus' numerical accountant, maps to dpaudit's PLD accountant)
ACCOUNTANT_NAMES = ("rdp", "pld", "prv")


def _accountant_key(accountant: str) -> str:
    if accountant == "gdp":
        raise ValueError("accountant='gdp' (Opacus' Gaussian-DP approximation) is not an upper bound for subsampled "
                         "mechanisms and is not offered; use 'rdp' or 'pld'")
    if accountant not in ACCOUNTANT_NAMES:
        raise ValueError(f"accountant must be one of {ACCOUNTANT_NAMES}, got {accountant!r}")
    return "pld" if accountant == "prv" else accountant


def sampling_from_epochs(epochs: float, batch_size: int, dataset_size: int) -> tuple[float, int]:
    """``(q, steps)`` of DP-SGD trained ``epochs`` epochs with expected batch ``batch_size`` on
    ``dataset_size`` records: q = batch_size / dataset_size, steps = ceil(epochs / q).

    Raises ``ValueError`` (naming the argument) when batch_size > dataset_size or epochs <= 0.
    """
    epochs = check_positive("epochs", epochs)
    batch_size = check_count("batch_size", batch_size, minimum=1)
    dataset_size = check_count("dataset_size", dataset_size, minimum=1)
    if batch_size > dataset_size:
        raise ValueError(f"batch_size must be <= dataset_size ({dataset_size}), got {batch_size}")
    q = batch_size / dataset_size
    exact = epochs * dataset_size / batch_size
    steps = math.ceil(exact - 1e-9 * exact)  # 10 epochs of 1/q steps is 10/q, not one more from rounding noise
    return q, max(1, int(steps))


def _steps(steps, epochs, sample_rate) -> int:
    if (steps is None) == (epochs is None):
        raise ValueError("give exactly one of steps and epochs")
    if steps is not None:
        return check_count("steps", steps, minimum=1)
    epochs = check_positive("epochs", epochs)
    exact = epochs / sample_rate
    return max(1, int(math.ceil(exact - 1e-9 * exact)))


def _step_mechanism(noise_multiplier: float, sample_rate: float):
    base = Gaussian(check_positive("noise_multiplier", noise_multiplier), 1.0)
    if sample_rate == 1.0:
        return base
    return PoissonSampled(base, sample_rate)


def get_epsilon(*, noise_multiplier: float, sample_rate: float, delta: float, steps: int | None = None,
                epochs: float | None = None, accountant: str = "rdp") -> float:
    """Upper bound on epsilon at ``delta`` after ``steps`` (or ``epochs / sample_rate``, rounded up)
    steps of DP-SGD: Poisson sampling at ``sample_rate``, Gaussian noise of ``noise_multiplier``
    times the clipping norm. ``accountant``: "rdp" (default), "pld" ("prv" is accepted as PLD)."""
    key = _accountant_key(accountant)
    q = check_probability("sample_rate", sample_rate)
    delta = check_delta("delta", delta)
    if q == 0.0:
        return 0.0
    t = _steps(steps, epochs, q)
    return float(make_accountant(key).compose(_step_mechanism(noise_multiplier, q), t).epsilon(delta))


def get_noise_multiplier(*, target_epsilon: float, target_delta: float, sample_rate: float,
                         epochs: float | None = None, steps: int | None = None, accountant: str = "rdp",
                         epsilon_tolerance: float = 0.01, **kwargs) -> float:
    """Smallest noise multiplier (rounded up) such that ``steps`` (or ``epochs / sample_rate``)
    steps of DP-SGD at ``sample_rate`` are (target_epsilon, target_delta)-DP under ``accountant``.

    Same keywords as Opacus' ``get_noise_multiplier``; ``epsilon_tolerance`` is accepted and
    ignored (:func:`~dpaudit.accounting.calibration.calibrate_sigma`: the epsilon achieved at the
    returned noise is within 1e-10 below the target wherever the accountant's epsilon is continuous
    in the noise, and always on the safe side). Unknown extra keywords raise ``ValueError``.
    """
    if kwargs:
        raise ValueError(f"unknown arguments {sorted(kwargs)}")
    key = _accountant_key(accountant)
    target_epsilon = check_epsilon("target_epsilon", target_epsilon)
    target_delta = check_delta("target_delta", target_delta)
    q = check_probability("sample_rate", sample_rate)
    if q == 0.0:
        raise ValueError("sample_rate must be in (0, 1] (with sample_rate = 0 nothing is released)")
    check_positive("epsilon_tolerance", epsilon_tolerance)
    t = _steps(steps, epochs, q)
    return float(calibrate_sigma(target_epsilon, target_delta, sample_rate=q, steps=t, accountant=key, sensitivity=1.0))


class OpacusStyleAccountant:
    """``step(noise_multiplier=..., sample_rate=...)`` per training step, then ``get_epsilon(delta)``.

    The history is kept as (noise_multiplier, sample_rate, count) like Opacus' accountants, and
    composed in dpaudit's RDP (default) or PLD accountant each time epsilon is asked for.
    """

    def __init__(self, accountant: str = "rdp"):
        self.mechanism = _accountant_key(accountant)
        self.history: list[tuple[float, float, int]] = []

    def step(self, *, noise_multiplier: float, sample_rate: float, count: int = 1) -> OpacusStyleAccountant:
        """Record ``count`` steps (default 1) with these parameters; returns the accountant."""
        nm = check_positive("noise_multiplier", noise_multiplier)
        q = check_probability("sample_rate", sample_rate)
        count = check_count("count", count, minimum=1)
        if self.history and self.history[-1][:2] == (nm, q):
            self.history[-1] = (nm, q, self.history[-1][2] + count)
        else:
            self.history.append((nm, q, count))
        return self

    def __len__(self) -> int:
        return sum(c for _, _, c in self.history)

    def get_epsilon(self, delta: float) -> float:
        """Upper bound on epsilon at ``delta`` for every step recorded so far (0 before any step)."""
        delta = check_delta("delta", delta)
        acc = make_accountant(self.mechanism)
        steps = [(nm, q, c) for nm, q, c in self.history if q > 0.0]
        if not steps:
            return 0.0
        for nm, q, c in steps:
            acc.compose(_step_mechanism(nm, q), c)
        return float(acc.epsilon(delta))

    def __repr__(self) -> str:
        return f"OpacusStyleAccountant(accountant={self.mechanism!r}, steps={len(self)})"
