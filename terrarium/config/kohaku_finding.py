"""One decision about a KohakuTerrarium form, and the plain line that refuses one.

Shared by :mod:`terrarium.config.kohaku_compat` and :mod:`terrarium.config.kohaku_events`
(which re-export nothing else of each other), so neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from terrarium.config.yamlio import KeyPath

__all__ = ["Finding", "not_supported"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One KohakuTerrarium form met in a file: translated (``changed``) or dropped."""

    kind: Literal["unsupported", "changed"]
    key_path: KeyPath
    text: str


def not_supported(feature: str, instead: str) -> str:
    """The one plain line for a KohakuTerrarium form that terrarium does not have."""
    return f"KohakuTerrarium's {feature} is not supported here; use {instead}"
