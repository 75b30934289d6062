"""The neighbouring relation an accountant composes under (shared by every accountant)."""

from __future__ import annotations

__all__ = ["join_relation"]


def join_relation(current: str | None, mechanism) -> str:
    """The accountant's relation after composing ``mechanism``.

    The first mechanism fixes it; a later mechanism under another relation raises ValueError:
    guarantees under add/remove and replace-one neighbours do not compose into either.
    """
    relation = getattr(mechanism, "neighbouring", "add_remove")
    if current is not None and relation != current:
        raise ValueError(
            f"mechanism neighbouring relation {relation!r} differs from the accountant's {current!r}; "
            "guarantees under different neighbouring relations cannot be composed"
        )
    return relation
