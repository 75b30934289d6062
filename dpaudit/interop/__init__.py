"""Interoperability with other privacy libraries (optional imports only)."""

from dpaudit._lazy import lazy_exports

_EXPORTS = {
    "from_dp_event": "dpaudit.interop.dp_accounting",
    "accountant_from_dp_event": "dpaudit.interop.dp_accounting",
    "ZCDPMechanism": "dpaudit.mechanisms.zcdp",
    "NonPrivate": "dpaudit.interop.dp_accounting",
    "OpacusCanaries": "dpaudit.interop.opacus",
    "opacus_claim": "dpaudit.interop.opacus",
    "JaxCanaries": "dpaudit.interop.jax",
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
