"""One JSON convention for every subcommand's ``--json`` output.

Every object starts with ``"command"`` (the subcommand) and ``"dpaudit_version"``; numbers are
JSON numbers, except the non-finite ones, which strict JSON cannot hold: ``inf``/``-inf`` become
the strings ``"inf"``/``"-inf"`` (an epsilon of ``"inf"`` means *no guarantee*) and NaN becomes
``null`` (no value). :func:`dpaudit.audit.protocol.result.to_jsonable` applies the rule, and
``json.dumps(..., allow_nan=False)`` guarantees that nothing else slips through.
"""

from __future__ import annotations

import json

__all__ = ["emit_json", "json_text"]


def json_text(command: str, payload: dict) -> str:
    """The JSON text of ``payload`` under the shared keys (see the module docstring)."""
    import dpaudit
    from dpaudit.core.jsonable import to_jsonable

    body = {"command": command, "dpaudit_version": dpaudit.__version__}
    body.update({k: v for k, v in payload.items() if k not in body})
    return json.dumps(to_jsonable(body), allow_nan=False)


def emit_json(command: str, payload: dict) -> None:
    """Print :func:`json_text` of ``payload`` on stdout (one line)."""
    print(json_text(command, payload))
