"""dpaudit: privacy accounting and empirical auditing of differentially private algorithms.

Layers (data flows one way, nothing low imports something high)::

    core -> mechanisms -> accounting (+ conversions) -> bounds -> optimizers -> audit -> cli, report

Public names are loaded lazily; see ``docs/architecture.md`` for the module map.
"""

from dpaudit._lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    # mechanisms
    "Mechanism": "dpaudit.mechanisms.base",
    "Gaussian": "dpaudit.mechanisms.gaussian",
    "Laplace": "dpaudit.mechanisms.laplace",
    "DiscreteLaplace": "dpaudit.mechanisms.discrete_laplace",
    "DiscreteGaussian": "dpaudit.mechanisms.discrete_gaussian",
    "PureDP": "dpaudit.mechanisms.pure",
    "ExponentialMechanism": "dpaudit.mechanisms.pure",
    "ApproxDP": "dpaudit.mechanisms.approx",
    "PoissonSampled": "dpaudit.mechanisms.subsampled",
    "SampledWithoutReplacement": "dpaudit.mechanisms.subsampled",
    "RelativeGaussian": "dpaudit.mechanisms.relative_gaussian",
    "SinhNormal": "dpaudit.mechanisms.sinh_normal",
    "MatrixFactorization": "dpaudit.mechanisms.matrix_factorization",
    "Participation": "dpaudit.mechanisms.mf_participation",
    # accounting
    "Accountant": "dpaudit.accounting.base",
    "make_accountant": "dpaudit.accounting.base",
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
    # Opacus / dp_accounting spellings
    "sampling_from_epochs": "dpaudit.accounting.convenience",
    "get_epsilon": "dpaudit.accounting.convenience",
    "get_noise_multiplier": "dpaudit.accounting.convenience",
    "OpacusStyleAccountant": "dpaudit.accounting.convenience",
    "UnsupportedMechanismError": "dpaudit.core.validation",
    # auditing (also in dpaudit.audit)
    "audit_mechanism": "dpaudit.audit",
    "audit_optimizer": "dpaudit.audit",
    "audit_scores": "dpaudit.audit",
    "check_floating_point": "dpaudit.audit.floating",
    "audit_training": "dpaudit.audit",
    "audit_one_run": "dpaudit.audit",
    "renyi_divergence": "dpaudit.audit",
    "AuditResult": "dpaudit.audit",
    "Estimate": "dpaudit.audit",
    "ChunkError": "dpaudit.audit",
    "Execution": "dpaudit.core.execution",
    "make_optimizer": "dpaudit.optimizers",
    # sub-modules named in the public interface
    "conversions": "dpaudit.conversions",
    "bounds": "dpaudit.bounds",
    "optimizers": "dpaudit.optimizers",
    "audit": "dpaudit.audit",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
