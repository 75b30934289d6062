"""Privacy-loss-distribution accounting (``PLDAccountant``).

Modules: ``distribution`` (discrete PLDs, FFT composition, queries), ``discretisation``
(pessimistic/optimistic discretisation of the mechanisms' loss pairs,
:mod:`dpaudit.mechanisms.loss_pairs`), ``accountant``.
"""

from dpaudit.accounting.pld.accountant import PLDAccountant

__all__ = ["PLDAccountant"]
