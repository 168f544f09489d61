"""Where terrarium's own data (creatures, channels, examples, kohaku.yaml) lives.

An installed wheel carries them under ``terrarium/_data``; a source checkout keeps them at
the repository root. Callers never need to know which.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PKG = Path(__file__).resolve().parent


@cache
def data_root() -> Path:
    """The folder that holds ``kohaku.yaml``, ``creatures/``, ``channels/`` and ``examples/``."""
    installed = _PKG / "_data"
    if (installed / "kohaku.yaml").is_file():
        return installed
    return _PKG.parent


def creatures_dir() -> Path:
    return data_root() / "creatures"


def channels_dir() -> Path:
    return data_root() / "channels"


def examples_dir() -> Path:
    return data_root() / "examples"


def package_manifest() -> Path:
    return data_root() / "kohaku.yaml"


__all__ = [
    "channels_dir",
    "creatures_dir",
    "data_root",
    "examples_dir",
    "package_manifest",
]
