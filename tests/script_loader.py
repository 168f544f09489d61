"""Import a script of the project (bench/, scripts/) as a module, as running it would."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_script(path: Path, name: str) -> ModuleType:
    """``path`` imported as module ``name``, its folder on ``sys.path`` (its sibling modules
    import as they do when it runs) and the module in ``sys.modules`` (dataclasses look it
    up)."""
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
