"""Approval of tool calls that act, and ``ask_user`` answered inside the turn.

In process (a TeamRuntime with an approver), then through ``terrarium run`` in a
subprocess: approved, denied and nobody-to-ask each, with every decision in the log.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from terrarium.channels.log import DurableLog
from terrarium.cli.human import StdinRouter, parse_decision
from terrarium.config import load_any
from terrarium.errors import ConfigErrors
from terrarium.events import ApprovalDecided, ApprovalRequested
from terrarium.runtime.runtime import LOG_FILE, RuntimeOptions, TeamRuntime
from terrarium.tools.approval import Approval, approve_all, needs_approval
from terrarium.tools.ask import NOBODY

ROOT = Path(__file__).resolve().parents[2]
GUARDED = ROOT / "tests" / "runtime_fixtures" / "guarded"
LIMIT = 60  # seconds: a bound against hangs, never a measured figure

pytestmark = pytest.mark.anyio


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setenv("GUARDED_WORKSPACE", str(ws))
    return ws


def approval_events(runs: Path) -> list[Any]:
    with DurableLog(runs / LOG_FILE) as log:
        [run] = log.runs()
        return [e for e in log.typed_events(run.run_id)
                if isinstance(e, (ApprovalRequested, ApprovalDecided))]


async def run_guarded(runs: Path, text: str, **options: Any) -> Any:
    team = load_any(GUARDED)
    opts = RuntimeOptions(runs_dir=runs, audio="none", **options)
    async with TeamRuntime(team, opts) as rt:  # type: ignore[arg-type]
        return await rt.ask("guarded", text)


# -- in process ----------------------------------------------------------------------------

async def test_an_approved_call_runs_and_both_events_are_logged(
    workspace: Path, tmp_path: Path
) -> None:
    asked: list[tuple[str, str, dict[str, Any]]] = []

    async def approver(creature: str, tool: str, args: Mapping[str, Any]) -> Approval:
        asked.append((creature, tool, dict(args)))
        return Approval(True, "fine by me", by="test")

    result = await run_guarded(tmp_path / "runs", "make a file", approver=approver)
    [call] = result.calls
    assert call.ok and "the-command-ran" in call.result
    assert (workspace / "made.txt").read_text().strip() == "made"
    assert asked == [("guarded", "shell", {"command": asked[0][2]["command"], "timeout": None})]
    assert "echo made" in asked[0][2]["command"]
    req, dec = approval_events(tmp_path / "runs")
    assert isinstance(req, ApprovalRequested) and req.tool == "shell"
    assert "echo made" in req.args["command"]
    assert isinstance(dec, ApprovalDecided) and dec.request_id == req.request_id
    assert (dec.approved, dec.reason, dec.by) == (True, "fine by me", "test")


async def test_a_denied_call_does_not_run_and_the_model_reads_the_reason(
    workspace: Path, tmp_path: Path
) -> None:
    async def approver(creature: str, tool: str, args: Mapping[str, Any]) -> Approval:
        return Approval(False, "not on a Friday", by="test")

    result = await run_guarded(tmp_path / "runs", "make a file", approver=approver)
    [call] = result.calls
    assert not call.ok
    assert call.result == "Not run: the call to shell was not approved (not on a Friday)."
    assert not (workspace / "made.txt").exists()
    assert result.text == "Finished."  # the model read the refusal and went on
    _, dec = approval_events(tmp_path / "runs")
    assert (dec.approved, dec.reason, dec.by) == (False, "not on a Friday", "test")


async def test_nobody_to_ask_refuses_at_once(workspace: Path, tmp_path: Path) -> None:
    result = await run_guarded(tmp_path / "runs", "make a file")
    [call] = result.calls
    assert not call.ok and "nobody is there to approve it" in call.result
    assert "--yes" in call.result
    assert not (workspace / "made.txt").exists()
    _, dec = approval_events(tmp_path / "runs")
    assert (dec.approved, dec.by) == (False, "nobody")


async def test_approve_all_approves_without_asking(workspace: Path, tmp_path: Path) -> None:
    result = await run_guarded(tmp_path / "runs", "make a file", approver=approve_all)
    assert result.calls[0].ok
    assert (workspace / "made.txt").exists()
    _, dec = approval_events(tmp_path / "runs")
    assert (dec.approved, dec.by) == (True, "--yes")


async def test_tools_not_listed_under_approve_are_not_gated(
    workspace: Path, tmp_path: Path
) -> None:
    async def answerer(creature: str, question: str, choices: Sequence[str]) -> str | None:
        assert (creature, question, tuple(choices)) == ("guarded", "Which colour?",
                                                        ("red", "blue"))
        return "blue"

    result = await run_guarded(tmp_path / "runs", "pick a colour", answerer=answerer)
    [call] = result.calls
    assert call.ok and call.result == "The user answered: blue"
    assert approval_events(tmp_path / "runs") == []


async def test_ask_user_with_nobody_there(workspace: Path, tmp_path: Path) -> None:
    result = await run_guarded(tmp_path / "runs", "pick a colour")
    assert result.calls[0].result == NOBODY


def test_approve_must_name_one_of_the_creatures_tools(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(
        "name: c\ncontroller: {provider: scripted, script: s.yaml}\n"
        "tools: [shell, read_file]\napprove: [shel, '*']\n")
    (tmp_path / "s.yaml").write_text("steps: []\n")
    with pytest.raises(ConfigErrors) as info:
        load_any(tmp_path)
    text = info.value.render()
    assert "approve names 'shel', which is not one of this creature's tools" in text
    assert "shell" in text and "config.yaml:4" in text


def test_needs_approval_and_the_star() -> None:
    assert needs_approval("shell", {"shell"}) and not needs_approval("edit", {"shell"})
    assert needs_approval("edit", {"*"})


@pytest.mark.parametrize(("line", "approved", "reason"), [
    ("y", True, "approved by the user"),
    ("YES", True, "approved by the user"),
    ("", False, "the user said no"),
    ("n", False, "the user said no"),
    ("no, use pytest -x instead", False, "use pytest -x instead"),
    ("not today", False, "not today"),
    (None, False, "no answer came: the input ended"),
])
def test_terminal_answers(line: str | None, approved: bool, reason: str) -> None:
    got = parse_decision(line, "terminal")
    assert (got.approved, got.reason, got.by) == (approved, reason, "terminal")


async def test_the_stdin_router_gives_a_waiting_prompt_the_next_line() -> None:
    import anyio

    lines = iter(["for the prompt\n", "for the input\n", ""])
    router = StdinRouter(lambda: next(lines))
    got: dict[str, str | None] = {}
    async with anyio.create_task_group() as tg:
        tg.start_soon(router.run)

        async def user() -> None:
            got["input"] = await router.readline()

        async def prompt() -> None:
            got["prompt"] = await router.readline(prompt=True)

        # both wait before the first line is read: the prompt comes first
        tg.start_soon(user)
        tg.start_soon(prompt)
        await anyio.sleep(0.2)
        assert await router.readline() is None  # then the end of input
        tg.cancel_scope.cancel()
    assert got == {"prompt": "for the prompt", "input": "for the input"}


# -- through `terrarium run` ---------------------------------------------------------------

def terrarium(ws: Path, runs: Path, *args: str, stdin: str | None = None
              ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1",
           "GUARDED_WORKSPACE": str(ws)}
    return subprocess.run(
        [sys.executable, "-m", "terrarium", "run", str(GUARDED), "--runs-dir", str(runs),
         "--audio", "none", *args],
        cwd=ROOT, env=env, input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True, text=True, timeout=LIMIT, check=False)


def test_cli_approved_from_stdin(tmp_path: Path) -> None:
    ws, runs = tmp_path / "ws", tmp_path / "runs"
    res = terrarium(ws, runs, "--input", "make a file", "--approve-from-stdin", stdin="y\n")
    assert res.returncode == 0, res.stderr
    assert "[approve] guarded wants to call shell" in res.stdout
    assert "[approved] shell" in res.stdout
    assert "guarded> Finished." in res.stdout
    assert (ws / "made.txt").exists()
    _, dec = approval_events(runs)
    assert (dec.approved, dec.by) == (True, "terminal")


def test_cli_denied_from_stdin_with_a_reason(tmp_path: Path) -> None:
    ws, runs = tmp_path / "ws", tmp_path / "runs"
    # user lines and answers share stdin: the line after the one that started the turn
    # answers its prompt
    res = terrarium(ws, runs, "--approve-from-stdin", stdin="make a file\nno, not here\n")
    assert res.returncode == 0, res.stderr
    assert "[denied] shell: not here" in res.stdout
    assert not (ws / "made.txt").exists()
    with DurableLog(runs / LOG_FILE) as log:
        [run] = log.runs()
        [turn] = log.turns(run.run_id)
    assert turn.calls[0]["result"] == "Not run: the call to shell was not approved (not here)."
    _, dec = approval_events(runs)
    assert (dec.approved, dec.reason, dec.by) == (False, "not here", "terminal")


def test_cli_piped_without_the_flag_has_nobody_to_ask(tmp_path: Path) -> None:
    ws, runs = tmp_path / "ws", tmp_path / "runs"
    res = terrarium(ws, runs, stdin="make a file\ny\n")
    # the call nobody could approve was never made good: the run is degraded (exit 3)
    assert res.returncode == 3, res.stderr
    assert "error: guarded: call shell was never made good: nobody is there" in res.stderr
    assert "[approve]" not in res.stdout
    assert "[approval] guarded -> shell: refused: nobody is there to approve it" in res.stdout
    assert not (ws / "made.txt").exists()
    _, dec = approval_events(runs)
    assert (dec.approved, dec.by) == (False, "nobody")


def test_cli_yes_approves_everything(tmp_path: Path) -> None:
    ws, runs = tmp_path / "ws", tmp_path / "runs"
    res = terrarium(ws, runs, "--input", "make a file", "--yes")
    assert res.returncode == 0, res.stderr
    assert "[approval] guarded -> shell: approved (--yes)" in res.stdout
    assert (ws / "made.txt").exists()
    _, dec = approval_events(runs)
    assert (dec.approved, dec.by) == (True, "--yes")


def test_cli_ask_user_answered_from_stdin(tmp_path: Path) -> None:
    ws, runs = tmp_path / "ws", tmp_path / "runs"
    res = terrarium(ws, runs, "--input", "pick a colour", "--approve-from-stdin",
                    stdin="blue\n")
    assert res.returncode == 0, res.stderr
    assert "[question] guarded asks: Which colour?" in res.stdout
    assert "choices: red / blue" in res.stdout
    with DurableLog(runs / LOG_FILE) as log:
        [run] = log.runs()
        [turn] = log.turns(run.run_id)
    assert turn.calls[0]["result"] == "The user answered: blue"
