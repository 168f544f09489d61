"""The layer rule at run time: importing a floor loads nothing from the floors above it.

`lint-imports` (pyproject.toml) checks the import statements; these tests check what an
import really loads, in a fresh interpreter, so that the package's ``__init__`` (which runs
before any ``terrarium.<x>`` import) cannot pull the upper floors in behind the contract's back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
LIMIT = 60  # seconds: a bound against hangs, never a measured figure


def loaded_after(*modules: str) -> set[str]:
    """The terrarium modules a fresh interpreter holds after importing ``modules``."""
    code = (
        "import importlib, json, sys\n"
        f"for name in {list(modules)!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('terrarium'))))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=ENV, capture_output=True,
                         text=True, timeout=LIMIT, check=False)
    assert res.returncode == 0, res.stderr
    return set(json.loads(res.stdout))


def under(loaded: set[str], *packages: str) -> list[str]:
    return sorted(m for m in loaded if any(m == p or m.startswith(p + ".") for p in packages))


def test_prompt_and_config_load_no_upper_floor() -> None:
    loaded = loaded_after("terrarium.prompt", "terrarium.config")
    assert "terrarium.prompt.templates" in loaded and "terrarium.config.team" in loaded
    assert under(loaded, "terrarium.controller", "terrarium.runtime", "terrarium.tui",
                 "terrarium.cli") == []


def test_controller_loads_no_runtime_or_above() -> None:
    loaded = loaded_after("terrarium.controller.loop", "terrarium.controller.assembly",
                          "terrarium.controller.incoming")
    assert under(loaded, "terrarium.runtime", "terrarium.tui", "terrarium.cli") == []


@pytest.mark.parametrize("ground", ["terrarium.errors", "terrarium.events", "terrarium.paths"])
def test_ground_loads_nothing_else(ground: str) -> None:
    loaded = loaded_after(ground)
    own = {"terrarium", "terrarium.lazy", "terrarium.errors", "terrarium.events",
           "terrarium.paths"}
    # the events package's own modules (core, speech, startup, codec) are ground too
    assert {m for m in loaded if not m.startswith("terrarium.events.")} <= own


def test_public_names_still_resolve() -> None:
    """The package's lazy names load on first use: each in ``__all__`` resolves."""
    import terrarium

    for name in terrarium.__all__:
        assert getattr(terrarium, name) is not None, name
    from terrarium import RuntimeOptions, TeamRuntime, load_team

    assert TeamRuntime.__name__ == "TeamRuntime" and callable(load_team) and RuntimeOptions
