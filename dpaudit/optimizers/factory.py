"""``make_optimizer`` and ``optimizer_defaults``, documented from the optimizers' own declarations.

The docstring of :func:`make_optimizer` (what ``help(make_optimizer)`` shows) lists every
optimizer's hyper-parameters; it is generated here, when this module is imported, from each
class's ``hyperparameters`` (:class:`dpaudit.optimizers.base.HyperParameter`), so it cannot drift
from what the constructors accept. (Generating it imports every optimizer module, which is why it
lives apart from the light registry in ``dpaudit/optimizers/__init__.py`` that the CLI reads to
build its parser.)
"""

from __future__ import annotations

from dpaudit.optimizers import names, optimizer_class
from dpaudit.optimizers.base import hyperparameter_doc

__all__ = ["make_optimizer", "optimizer_defaults"]


def make_optimizer(name: str, **hyperparameters):
    """Build optimizer ``name`` with ``hyperparameters`` (keywords; every one has a default)."""
    return optimizer_class(name)(**hyperparameters)


def optimizer_defaults(name: str) -> dict:
    """The hyper-parameters of optimizer ``name`` with their defaults (from its declarations)."""
    return {p.name: p.default for p in optimizer_class(name).hyperparameters}


_HEAD = """Build optimizer ``name`` with ``hyperparameters`` (keywords; every one has a default).

Every optimizer declares its hyper-parameters once: ``optimizer_class(name).hyperparameters``, a
tuple of ``HyperParameter`` (name, type, range, default, help). This list, ``optimizer_defaults(name)``,
``help(optimizer_class(name))`` and the flags of ``dpaudit audit NAME`` (``noise_multiplier`` is
``--noise-multiplier``) are generated from those declarations. A value outside its range raises
``ValueError`` naming the hyper-parameter and the range; an unknown keyword raises ``ValueError``
listing the allowed ones; an older spelling (``sampling_rate``) is accepted with a
``DeprecationWarning`` naming the new one (``sample_rate``).

Example: ``make_optimizer("dp-sgd", noise_multiplier=1.0, sample_rate=0.01, steps=200)``.

Hyper-parameters by optimizer
-----------------------------
"""


def _document() -> str:
    parts = [_HEAD]
    for name in names:
        parts.append(f"{name}\n{hyperparameter_doc(optimizer_class(name).hyperparameters, indent='    ')}\n")
    return "\n".join(parts)


make_optimizer.__doc__ = _document()
