"""What the ``terrarium`` command loads before it runs anything: only what every run needs.

The second start of the voice assistant is about 2 s, half of it imports; each module
below loads where it is used (the monitor, MCP servers, speech, the model server, a broker,
a schedule, a gitignore) or never (httpx's own command line); each command's module loads
when that command runs, each built-in tool when a creature lists it. Checked in a fresh
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


# the built-in tools a team does not list, the commands other than the one that runs, a
# scripted model's module and MCP's (the voice team has neither)
NOT_FOR_THE_VOICE_TEAM = ("terrarium.tools.shell", "terrarium.tools.web", "terrarium.tools.grep",
                          "terrarium.tools.edits", "terrarium.tools.files",
                          "terrarium.tools.find", "terrarium.tools.tree",
                          "terrarium.cli.inspect", "terrarium.cli.migrate",
                          "terrarium.cli.tools", "terrarium.llm.scripted",
                          "terrarium.controller.mcp", "terrarium.tools.mcp.connections")


def loaded(code: str, names: tuple[str, ...]) -> set[str]:
    probe = (f"{code}\nimport json, sys\n"
             f"print(json.dumps([m for m in {list(names)!r} if m in sys.modules]))\n")
    res = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=ENV,
                         capture_output=True, text=True, timeout=LIMIT, check=False)
    assert res.returncode == 0, res.stderr
    return set(json.loads(res.stdout.splitlines()[-1]))


def test_the_command_loads_no_command_before_it_is_chosen() -> None:
    commands = ("terrarium.cli.run", "terrarium.cli.inspect", "terrarium.cli.migrate",
                "terrarium.cli.tools", "terrarium.config", "terrarium.runtime.runtime")
    assert loaded("import terrarium.cli", commands) == set()


def test_a_run_of_the_voice_team_loads_only_its_own_tools_and_command() -> None:
    code = ("from pathlib import Path\nfrom terrarium.cli.run import load_runnable\n"
            "from terrarium.controller.assembly import assemble\n"
            "team = load_runnable(Path('examples/voice_assistant'))\n"
            "[assemble(team, name) for name in team.creatures]")
    assert loaded(code, NOT_FOR_THE_VOICE_TEAM) == set()


def test_the_run_s_sandbox_note_loads_the_shell_tool_only_for_a_shell() -> None:
    code = ("from pathlib import Path\nfrom terrarium.cli.run import load_runnable, "
            "unsandboxed_note\nteam = load_runnable(Path('examples/voice_assistant'))\n"
            "assert unsandboxed_note(team) is None")
    assert loaded(code, ("terrarium.tools.shell", "terrarium.tools.sandbox")) == set()


def test_a_builtin_tool_loads_when_it_is_looked_up() -> None:
    code = ("from terrarium.tools.registry import BUILTIN_TOOLS, resolve_tool\n"
            "assert 'shell' in BUILTIN_TOOLS and len(BUILTIN_TOOLS) == 14\n"
            "assert resolve_tool('glob').name == 'glob'")
    assert loaded(code, ("terrarium.tools.shell", "terrarium.tools.find")) == {
        "terrarium.tools.find"}
