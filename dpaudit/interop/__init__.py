"""Interoperability with other privacy libraries (optional imports only)."""

from dpaudit._lazy import make_getattr

_EXPORTS = {
    "from_dp_event": "dpaudit.interop.dp_accounting",
    "accountant_from_dp_event": "dpaudit.interop.dp_accounting",
    "ZCDPMechanism": "dpaudit.mechanisms.zcdp",
    "NonPrivate": "dpaudit.interop.dp_accounting",
    "OpacusCanaries": "dpaudit.interop.opacus",
    "opacus_claim": "dpaudit.interop.opacus",
    "JaxCanaries": "dpaudit.interop.jax",
}
__all__ = sorted(_EXPORTS)
__getattr__ = make_getattr(__name__, _EXPORTS)
