"""Command-line flags generated from an optimizer's hyper-parameter declarations.

Each :class:`~dpaudit.optimizers.base.HyperParameter` of ``optimizer_class(name).hyperparameters``
becomes one flag of ``dpaudit audit NAME``: the Python keyword with dashes (``noise_multiplier`` is
``--noise-multiplier``), ``--X/--no-X`` for a bool. A value is parsed and checked by the
declaration itself while the arguments are parsed, so a bad one exits 2 with one line naming the
flag and the allowed range before any trial. A flag not given leaves the library's default.

The flags are added when the optimizer's parser is first used (parsing or ``--help``): building
``dpaudit --help`` imports no optimizer module.
"""

from __future__ import annotations

import argparse
import math
import re

__all__ = ["HP_PREFIX", "add_hyperparameter_arguments", "given_hyperparameters", "flag_message"]

#: namespace prefix of the hyper-parameter flags' destinations (no clash with the audit's own options)
HP_PREFIX = "hp_"


def _default_text(value) -> str:
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return str(value)


def flag_type(hp):
    """argparse ``type=``: the text parsed and validated by the declaration."""

    def parse(text: str):
        try:
            return hp.parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {hp.allowed}, got {text!r}") from None

    parse.__name__ = hp.type_name
    return parse


def _metavar(hp) -> str:
    if hp.choices is not None:
        return "{" + ",".join(map(str, hp.choices)) + "}"
    return {int: "N", float: "X"}.get(hp.type, "VALUE")


def add_hyperparameter_arguments(parser: argparse.ArgumentParser, cls, *, skip=()) -> None:
    """One flag per declared hyper-parameter of optimizer class ``cls`` (except the names in ``skip``),
    in an argument group of ``parser``."""
    group = parser.add_argument_group(
        f"hyper-parameters of {cls.name} (declared once in dpaudit; default: the library's; Python keyword = "
        "flag without -- and with _ for -)")
    for hp in cls.hyperparameters:
        if hp.name in skip:
            continue
        dest = HP_PREFIX + hp.name
        text = f"{hp.help}; " if hp.help else ""
        if hp.type is bool:
            group.add_argument(hp.flag, action=argparse.BooleanOptionalAction, default=None, dest=dest,
                               help=f"{text}default {'on' if hp.default else 'off'}")
        elif hp.type is None:
            continue  # an undeclared (legacy) hyper-parameter: Python only
        else:
            spec = "" if hp.choices is not None else f"{hp.spec}; "  # (the metavar lists the choices)
            group.add_argument(hp.flag, type=flag_type(hp), default=None, dest=dest, metavar=_metavar(hp),
                               help=f"{text}{spec}default {_default_text(hp.default)}")


def given_hyperparameters(args) -> dict:
    """The hyper-parameters given on the command line, by Python keyword."""
    return {k[len(HP_PREFIX):]: v for k, v in vars(args).items() if k.startswith(HP_PREFIX) and v is not None}


def flag_message(message: str, cls) -> str:
    """An optimizer's ``ValueError`` message with hyper-parameter names written as flags: the name
    that starts the message (the argument it is about) and every name containing an underscore."""
    names = sorted((hp.name for hp in cls.hyperparameters), key=len, reverse=True)
    for name in names:
        flag = "--" + name.replace("_", "-")
        if message.startswith(name + " ") or message.startswith(name + ":"):
            message = flag + message[len(name):]
        if "_" in name:
            message = re.sub(rf"(?<![\w-]){re.escape(name)}(?!\w)", flag, message)
    return message
