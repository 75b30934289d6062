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
    "NonPrivate": "dpaudit.mechanisms.nonprivate",
    "PoissonSampled": "dpaudit.mechanisms.subsampled",
    "SampledWithoutReplacement": "dpaudit.mechanisms.subsampled",
    "RelativeGaussian": "dpaudit.mechanisms.relative_gaussian",
    "SinhNormal": "dpaudit.mechanisms.sinh_normal",
    "ZCDPMechanism": "dpaudit.mechanisms.zcdp",
    "PrivacyLoss": "dpaudit.mechanisms.loss_pairs",
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
