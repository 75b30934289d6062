"""Mechanisms: immutable descriptions that know their privacy curves and can sample."""

from dpaudit._lazy import lazy_exports

_EXPORTS = {
    "Mechanism": "dpaudit.mechanisms.base",
    "Gaussian": "dpaudit.mechanisms.gaussian",
    "Laplace": "dpaudit.mechanisms.laplace",
    "DiscreteLaplace": "dpaudit.mechanisms.discrete_laplace",
    "DiscreteGaussian": "dpaudit.mechanisms.discrete_gaussian",
    "PureDP": "dpaudit.mechanisms.pure",
    "ExponentialMechanism": "dpaudit.mechanisms.pure",
    "PermuteAndFlip": "dpaudit.mechanisms.permute_and_flip",
    "TreeAggregation": "dpaudit.mechanisms.tree_aggregation",
    "RepeatAndSelect": "dpaudit.mechanisms.repeat_and_select",
    "MixtureOfGaussians": "dpaudit.mechanisms.mixture_gaussian",
    "TruncatedPoissonGaussian": "dpaudit.mechanisms.truncated_subsampled",
    "ApproxDP": "dpaudit.mechanisms.approx",
    "PoissonSampled": "dpaudit.mechanisms.subsampled",
    "SampledWithoutReplacement": "dpaudit.mechanisms.subsampled",
    "RelativeGaussian": "dpaudit.mechanisms.relative_gaussian",
    "SinhNormal": "dpaudit.mechanisms.sinh_normal",
    "ZCDPMechanism": "dpaudit.mechanisms.zcdp",
    "PrivacyLoss": "dpaudit.mechanisms.loss_pairs",
    "MatrixFactorization": "dpaudit.mechanisms.matrix_factorization",
    "Participation": "dpaudit.mechanisms.mf_sensitivity",
    "SensitivityBound": "dpaudit.mechanisms.mf_sensitivity",
    "mf_sensitivity": "dpaudit.mechanisms.mf_sensitivity",
    "Strategy": "dpaudit.mechanisms.mf_strategies",
    "IdentityStrategy": "dpaudit.mechanisms.mf_strategies",
    "PrefixSumStrategy": "dpaudit.mechanisms.mf_strategies",
    "DenseStrategy": "dpaudit.mechanisms.mf_strategies",
    "BandedToeplitz": "dpaudit.mechanisms.mf_strategies",
    "BLTStrategy": "dpaudit.mechanisms.mf_strategies",
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
