"""The optional root creature operates the team with team tools (status, send, stop, start)."""

from __future__ import annotations

from pathlib import Path

import anyio

from terrarium.config import load_team
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime

FIXTURE = Path(__file__).parents[1] / "runtime_fixtures" / "operated"


def test_root_stops_sends_starts_and_reads_status(tmp_path: Path) -> None:
    team = load_team(FIXTURE)

    async def go() -> None:
        async with TeamRuntime(team, RuntimeOptions(runs_dir=tmp_path)) as rt:
            await rt.send_user("please stop the worker")  # no input channel: the root hears it
            assert rt.statuses["worker"].state == "stopped"
            await rt.send_user("queue a job")
            await rt.wait_idle()
            assert rt.statuses["worker"].turns == 0  # stopped: the job waits in its inbox
            await rt.send_user("start it again")
            await rt.wait_idle()
            assert rt.statuses["worker"].turns == 1  # the waiting job was done
            await rt.send_user("status please")
            status_result = [e for e in rt.transcript("root") if e.kind == "tool_result"][-1]
            assert "worker: idle, 1 turns" in status_result.text
            root_calls = [e.name for e in rt.transcript("root") if e.kind == "tool_call"]
            assert root_calls == ["stop_creature", "team_send", "start_creature",
                                  "team_status"]

    anyio.run(go)


def test_team_tools_exist_only_for_the_root() -> None:
    from terrarium.controller.assembly import assemble

    team = load_team(FIXTURE)
    assert "team_status" in assemble(team, "root").registry.names()
    assert "team_status" not in assemble(team, "worker").registry.names()


def test_terrarium_run_prints_the_roots_replies_and_each_creatures_model(tmp_path: Path) -> None:
    """The root answers the user: its replies are printed, and at start the console says
    which model and endpoint each creature uses."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-m", "terrarium", "run", str(FIXTURE), "--runs-dir", str(tmp_path),
         "--input", "please stop the worker"],
        cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True,
        text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "root> Worker stopped." in proc.stdout
    assert "  worker: scripted (" in proc.stdout and "  root: scripted (" in proc.stdout


def test_prompt_command_shows_the_root_creature(capsys: object) -> None:
    from terrarium.cli.command import main

    assert main(["prompt", str(FIXTURE), "root"]) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "team_status" in out
