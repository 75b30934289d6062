"""Privacy-loss-distribution accounting (``PLDAccountant``).

Modules: ``distribution`` (discrete PLDs, FFT composition, queries), ``mechanisms`` (loss pairs
of the supported mechanisms, pessimistic/optimistic discretisation), ``accountant``.
"""

from dpaudit.accounting.pld.accountant import PLDAccountant

__all__ = ["PLDAccountant"]
