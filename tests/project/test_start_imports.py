"""What the ``terrarium`` command loads before it runs anything: only what every run needs.

The second start of the voice assistant is about 1.5 s, a third of it imports; each module
below loads where it is used (the monitor, MCP servers, speech, the model server, a broker,
a schedule, a gitignore) or never (httpx's own command line). Checked in a fresh
interpreter by what it holds, never by timing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
LIMIT = 60  # seconds: a bound against hangs, never a measured figure
NOT_AT_START = ("textual", "rich", "click", "pygments", "mcp", "numpy", "onnxruntime",
                "piper", "xllamacpp", "nats", "croniter", "pathspec", "httpx._main")


def held_after(code: str) -> set[str]:
    probe = (f"{code}\nimport json, sys\n"
             f"print(json.dumps([m for m in {list(NOT_AT_START)!r} if sys.modules.get(m)]))\n")
    res = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=ENV,
                         capture_output=True, text=True, timeout=LIMIT, check=False)
    assert res.returncode == 0, res.stderr
    return set(json.loads(res.stdout.splitlines()[-1]))


def test_the_command_loads_none_of_the_heavy_modules() -> None:
    assert held_after("import terrarium.cli") == set()


def test_nor_does_loading_and_checking_the_voice_team() -> None:
    code = ("from pathlib import Path\nfrom terrarium.cli.run import load_runnable\n"
            "load_runnable(Path('examples/voice_assistant'))")
    assert held_after(code) == set()


def test_httpx_works_without_its_command_line() -> None:
    code = "import terrarium.cli\nimport httpx\nhttpx.Client(verify=False).close()"
    assert held_after(code) == set()
