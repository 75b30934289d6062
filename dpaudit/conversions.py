"""Conversions between privacy notions (facade of :mod:`dpaudit.accounting.conversions`).

The public interface names this module ``dpaudit.conversions``; the implementation lives in the
accounting layer. See that module for the papers and equations behind each function.
"""

from dpaudit.accounting.conversions import (  # noqa: F401
    TCDP_METHODS,
    ZCDP_METHODS,
    dp_to_zcdp,
    gaussian_delta,
    gaussian_epsilon,
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
    rdp_to_delta,
    rdp_to_dp,
    tcdp_delta,
    tcdp_to_dp,
    zcdp_delta,
    zcdp_to_dp,
)

__all__ = [
    "zcdp_to_dp",
    "zcdp_delta",
    "dp_to_zcdp",
    "rdp_to_dp",
    "rdp_to_delta",
    "tcdp_to_dp",
    "tcdp_delta",
    "gaussian_delta",
    "gaussian_epsilon",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu",
    "ZCDP_METHODS",
    "TCDP_METHODS",
]
