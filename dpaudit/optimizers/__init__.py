"""Private optimizers of the seed papers, batched over trials, each stating its PrivacyClaim.

    make_optimizer(name, **hyperparameters) -> optimizer
    optimizer.run(X, y, *, trials=1, seed=None, canary_gradient=None) -> Run   (.params, .claim, .extra)
    optimizer.claim(n) -> PrivacyClaim

Names: "dp-gd", "dp-sgd", "noisy-gd", "dp-agd", "rgm-gd", "projection", "l1-recovery",
"output-perturbation", "bias-reduced-sgd", "dp-ftrl". Every hyper-parameter has a default
(``optimizer_defaults(name)`` lists them). Each optimizer declares its hyper-parameters (name, type,
range, default, help) once, on its class (``optimizer_class(name).hyperparameters``); the CLI's flags
(``dpaudit audit NAME --help``), ``help(make_optimizer)`` and ``optimizer_defaults`` come from that.

Adding an optimizer: one module with a subclass of ``dpaudit.optimizers.base.Optimizer`` (its
``name``, ``hyperparameters``, ``run`` and ``claim``, and its audit scenario) and one line in
``_REGISTRY`` below. See ``docs/architecture.md`` and ``docs/api.md``.
"""

from __future__ import annotations

import importlib

from dpaudit._lazy import lazy_exports

#: optimizer name -> (module, class)
_REGISTRY = {
    "dp-gd": ("dpaudit.optimizers.dp_gd", "DPGD"),
    "dp-sgd": ("dpaudit.optimizers.dp_gd", "DPSGD"),
    "noisy-gd": ("dpaudit.optimizers.noisy_gd", "NoisyGD"),
    "dp-agd": ("dpaudit.optimizers.dp_agd", "DPAGD"),
    "rgm-gd": ("dpaudit.optimizers.rgm_gd", "RGMGD"),
    "projection": ("dpaudit.optimizers.sparse", "Projection"),
    "l1-recovery": ("dpaudit.optimizers.sparse", "L1Recovery"),
    "output-perturbation": ("dpaudit.optimizers.sparse", "OutputPerturbation"),
    "bias-reduced-sgd": ("dpaudit.optimizers.sparse", "BiasReducedSGD"),
    "dp-ftrl": ("dpaudit.optimizers.dp_ftrl", "DPFTRL"),
}

#: the optimizer names of the public interface
names = tuple(_REGISTRY)


def optimizer_class(name: str):
    """The class implementing optimizer ``name``."""
    if name not in _REGISTRY:
        raise ValueError(f"name must be one of {names}, got {name!r}")
    module, cls = _REGISTRY[name]
    return getattr(importlib.import_module(module), cls)


_EXPORTS = {
    "make_optimizer": "dpaudit.optimizers.factory",
    "optimizer_defaults": "dpaudit.optimizers.factory",
    "HyperParameter": "dpaudit.optimizers.base",
    "Run": "dpaudit.optimizers.base",
    "Optimizer": "dpaudit.optimizers.base",
    "get_loss": "dpaudit.optimizers.losses",
    "load_dat": "dpaudit.optimizers.data",
    "bank_path": "dpaudit.optimizers.data",
    "make_dense": "dpaudit.optimizers.data",
    "make_sparse_gradient": "dpaudit.optimizers.data",
    "make_two_node_ridge": "dpaudit.optimizers.data",
    "add_remove_pair": "dpaudit.optimizers.data",
    "replace_one_pair": "dpaudit.optimizers.data",
    "NeighbouringPair": "dpaudit.optimizers.data",
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(),
                                           extra=("optimizer_class", "names"))
