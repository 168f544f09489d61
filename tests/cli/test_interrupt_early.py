"""Ctrl-C before the team is ready (MCP servers starting, the model loading, creatures
warming): exit 130 still, and a last line that says what was cut short, whether a run was
recorded and how to start again (before: a bare 130, and a run whose start was cut off
was recorded ``failed``)."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from terrarium.channels.log import DurableLog
from terrarium.cli.console import ConsolePrinter
from terrarium.cli.run import interrupted_line
from terrarium.config import load_team
from terrarium.events import CreatureWarming
from terrarium.runtime import startup
from terrarium.runtime.runtime import LOG_FILE, RuntimeOptions, TeamRuntime

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 120  # seconds: a bound against hangs, never a measured figure


def _team_with_a_mute_mcp_server(tmp_path: Path) -> Path:
    """A creature whose MCP server never answers: its start waits until stopped."""
    folder = tmp_path / "mute"
    folder.mkdir()
    (folder / "config.yaml").write_text(
        "name: mute\ncontroller: {provider: scripted, script: script.yaml}\n"
        f"mcp_servers:\n  slow:\n    command: {sys.executable}\n    args: [server.py]\n")
    (folder / "script.yaml").write_text("default_reply: ok\n")
    (folder / "server.py").write_text("import time\ntime.sleep(600)\n")
    return folder


def test_ctrl_c_while_starting_ends_130_and_says_what_and_how_to_start_again(
        tmp_path: Path) -> None:
    folder = _team_with_a_mute_mcp_server(tmp_path)
    runs = tmp_path / "runs"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "terrarium", "run", str(folder), "--runs-dir", str(runs),
         "--audio", "none", "--input", "hi"], stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    assert proc.stdout is not None
    try:
        for line in proc.stdout:  # the start is under way, and waits on the server
            if line.startswith("starting MCP servers"):
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=LIMIT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in out + err
    [last] = [ln for ln in err.splitlines() if ln.startswith("interrupted (Ctrl-C)")]
    assert last == (
        "interrupted (Ctrl-C) while starting MCP servers mute/slow, before the team was "
        f"ready: no run was recorded; the same command starts again (terrarium run {folder} "
        f"--runs-dir {runs} ...)")


class _Run:
    """What the line reads of a TeamRuntime: its run id and status."""

    def __init__(self, run_id: str, status: str) -> None:
        self.run_id, self.status = run_id, status


def _args(**kw: object) -> argparse.Namespace:
    return argparse.Namespace(path="my_team", runs_dir="runs", **kw)


def test_the_line_names_a_recorded_run_cut_off_while_warming() -> None:
    printer = ConsolePrinter()
    printer.progress(CreatureWarming(creature="router", prefix_tokens=1200))
    line = interrupted_line(_args(runtime=_Run("r1", "interrupted"), printer=printer))
    assert line == (
        "interrupted (Ctrl-C) while warming router: evaluating its prompt prefix (~1,200 "
        "tokens, estimated), before the team was ready: run r1 is recorded as interrupted, "
        "before it took any input; the same command starts again (terrarium run my_team ...)")


def test_the_line_before_anything_loaded() -> None:
    assert interrupted_line(_args()).startswith(
        "interrupted (Ctrl-C) while loading the configuration, before the team was ready: "
        "no run was recorded;")


def test_the_line_after_ready_still_names_the_resume() -> None:
    printer = ConsolePrinter()
    printer.ready.set()
    assert interrupted_line(_args(runtime=_Run("r2", "interrupted"), printer=printer)) == (
        "interrupted (Ctrl-C): run r2 is recorded as interrupted; `terrarium run my_team "
        "--resume r2` delivers what it had not taken")


def test_a_start_cut_off_is_recorded_interrupted_not_failed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entered = anyio.Event()

    async def wire_for_ever(*_: object, **__: object) -> None:  # a model that never loads
        entered.set()
        await anyio.sleep_forever()

    monkeypatch.setattr(startup.Wiring, "wire", wire_for_ever)
    rt = TeamRuntime(load_team(ROOT / "tests" / "runtime_fixtures" / "trio"),
                     RuntimeOptions(runs_dir=tmp_path, audio="none"))

    async def go() -> None:
        async with anyio.create_task_group() as tg:
            async def start() -> None:
                async with rt:
                    pytest.fail("the start was to be cut off")

            tg.start_soon(start)
            await entered.wait()
            tg.cancel_scope.cancel()

    anyio.run(go)
    assert rt.status == "interrupted"
    with DurableLog(tmp_path / LOG_FILE) as log:
        [run] = log.runs()
    assert run.status == "interrupted"


def test_the_line_after_the_run_ended_does_not_call_it_interrupted() -> None:
    printer = ConsolePrinter()
    printer.ready.set()  # Ctrl-C while the ended run still saves a prompt prefix
    assert interrupted_line(_args(runtime=_Run("r3", "completed"), printer=printer)) == (
        "interrupted (Ctrl-C) after run r3 ended (completed), before the prompt prefix was "
        "saved; `terrarium log r3` shows it")
