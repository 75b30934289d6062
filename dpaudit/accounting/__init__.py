"""Accounting: accountants that compose mechanisms and convert to (epsilon, delta)."""

from dpaudit._lazy import lazy_exports

_EXPORTS = {
    "Accountant": "dpaudit.accounting.base",
    "make_accountant": "dpaudit.accounting.base",
    "ACCOUNTANTS": "dpaudit.accounting.base",
    "RDPAccountant": "dpaudit.accounting.rdp",
    "ZCDPAccountant": "dpaudit.accounting.zcdp",
    "TCDPAccountant": "dpaudit.accounting.tcdp",
    "PLDAccountant": "dpaudit.accounting.pld",
    "PrivacyClaim": "dpaudit.accounting.claim",
    "calibrate_sigma": "dpaudit.accounting.calibration",
    "calibrate_laplace": "dpaudit.accounting.calibration",
    "CentralLimitGDP": "dpaudit.accounting.gdp_clt",
    "unequal_gaussian_delta": "dpaudit.accounting.unequal_gaussians",
    "unequal_gaussian_delta_lower": "dpaudit.accounting.unequal_gaussians",
    "unequal_gaussian_epsilon": "dpaudit.accounting.unequal_gaussians",
    "calibrate_discrete_laplace": "dpaudit.accounting.calibration",
    "DEFAULT_ORDERS": "dpaudit.accounting.rdp",
    "OrderGridWarning": "dpaudit.accounting.rdp",
    "banded_cyclic_poisson": "dpaudit.accounting.matrix_mechanism",
    "AmplifiedBanded": "dpaudit.accounting.matrix_mechanism",
    "compare_strategies": "dpaudit.accounting.matrix_mechanism",
    "mmcc": "dpaudit.accounting.mmcc_bound",
    "MMCCBound": "dpaudit.accounting.mmcc_bound",
    "monte_carlo_epsilon": "dpaudit.accounting.monte_carlo",
    "monte_carlo_delta": "dpaudit.accounting.monte_carlo",
    "MonteCarloEpsilon": "dpaudit.accounting.monte_carlo",
    "MonteCarloDelta": "dpaudit.accounting.monte_carlo",
    "GaussianLosses": "dpaudit.accounting.monte_carlo",
    "PoissonGaussianLosses": "dpaudit.accounting.monte_carlo",
    "BandedMinSepLosses": "dpaudit.accounting.monte_carlo",
    "loss_samples": "dpaudit.accounting.monte_carlo",
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
