"""Where terrarium's own data (creatures, channels, examples, kohaku.yaml) lives.

An installed wheel carries them under ``terrarium/_data``; a source checkout keeps them at
the repository root. Callers never need to know which.
"""

from __future__ import annotations

import os
import sys
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


def cache_dir() -> Path:
    """The user's cache folder for terrarium (saved prompt prefixes): ``TERRARIUM_CACHE_DIR``
    if set, else the platform's cache dir (``$XDG_CACHE_HOME`` or ``~/.cache`` on Linux).
    Anything in it may be deleted at any time; it is only ever a speed-up."""
    explicit = os.environ.get("TERRARIUM_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    elif os.name == "nt":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "terrarium"


__all__ = [
    "cache_dir",
    "channels_dir",
    "creatures_dir",
    "data_root",
    "examples_dir",
    "package_manifest",
]
