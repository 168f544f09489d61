"""shell: exit codes, workspace cwd, timeouts that kill the whole process group, output caps,
environment scrubbing, allowed_commands, options."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from terrarium.tools.base import ToolContext
from terrarium.tools.runner import ToolResult, run_tool
from terrarium.tools.shell import CappedOutput, ShellTool


def sh(ctx: ToolContext, command: str, **kw: Any) -> ToolResult:
    return anyio.run(run_tool, ShellTool, {"command": command, **kw}, ctx)


def ctx_in(path: Path, **options: Any) -> ToolContext:
    return ToolContext(creature="w", cwd=path, workspace=path,
                       tool_options={"shell": options} if options else {})


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def gone_eventually(pid: int) -> bool:
    for _ in range(500):  # SIGKILL is delivered asynchronously; wait for it, not for a time
        if not alive(pid):
            return True
        time.sleep(0.01)
    return False


def test_output_and_exit_code(tmp_path: Path) -> None:
    res = sh(ctx_in(tmp_path), "echo out; echo err >&2; exit 3")
    assert res.ok
    assert res.text == "out\nerr\n[exit code 3]"


def test_no_output(tmp_path: Path) -> None:
    assert sh(ctx_in(tmp_path), "true").text == "(no output)\n[exit code 0]"


def test_runs_in_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ctx = ToolContext(creature="w", cwd=tmp_path, workspace=ws)  # created on first use
    res = sh(ctx, "pwd; touch made.txt")
    assert res.text.splitlines()[0] == str(ws.resolve())
    assert (ws / "made.txt").exists()


def test_default_workspace_is_cwd(tmp_path: Path) -> None:
    res = sh(ToolContext(creature="w", cwd=tmp_path), "pwd")
    assert res.text.splitlines()[0] == str(tmp_path.resolve())


def test_workspace_that_is_a_file_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    res = sh(ToolContext(creature="w", cwd=tmp_path, workspace=tmp_path / "f"), "pwd")
    assert not res.ok and "not a folder" in res.text


def test_stdin_is_closed(tmp_path: Path) -> None:
    res = sh(ctx_in(tmp_path), "cat; echo done")
    assert res.ok and res.text == "done\n[exit code 0]"


def test_timeout_kills_child_and_grandchild(tmp_path: Path) -> None:
    # the child shell starts a grandchild that would outlive it, records both pids, waits
    cmd = (
        "( sleep 300 & echo $! > grandchild.pid; echo $BASHPID > child.pid; wait ) & "
        "while [ ! -s grandchild.pid ] || [ ! -s child.pid ]; do sleep 0.01; done; "
        "echo ready; wait"
    )
    res = sh(ctx_in(tmp_path), cmd, timeout=1)
    assert not res.ok
    assert "timed out after 1 s" in res.text and "ready" in res.text
    child = int((tmp_path / "child.pid").read_text())
    grandchild = int((tmp_path / "grandchild.pid").read_text())
    assert gone_eventually(child)
    assert gone_eventually(grandchild)


def test_background_process_does_not_outlive_the_call(tmp_path: Path) -> None:
    res = sh(ctx_in(tmp_path), "sleep 300 & echo $! > bg.pid; echo started")
    assert res.ok and res.text == "started\n[exit code 0]"
    assert gone_eventually(int((tmp_path / "bg.pid").read_text()))


def test_timeout_clipped_to_max_timeout_option(tmp_path: Path) -> None:
    res = sh(ctx_in(tmp_path, max_timeout=0.5), "sleep 5", timeout=100)
    assert not res.ok and "timed out after 0.5 s" in res.text


def test_timeout_argument_has_a_hard_max(tmp_path: Path) -> None:
    res = sh(ctx_in(tmp_path), "true", timeout=601)
    assert not res.ok and "timeout" in res.text and "600" in res.text


def test_invalid_options_are_a_clear_error(tmp_path: Path) -> None:
    res = sh(ctx_in(tmp_path, timeout=9999), "true")
    assert not res.ok and "options for shell are invalid" in res.text
    res = sh(ctx_in(tmp_path, colour=True), "true")
    assert not res.ok and "colour" in res.text


def test_output_capped_head_and_tail_kept(tmp_path: Path) -> None:
    res = sh(ctx_in(tmp_path, max_output_bytes=1000), "seq 1 100000")
    assert res.ok
    lines = res.text.splitlines()
    assert lines[:3] == ["1", "2", "3"]
    assert lines[-2:] == ["100000", "[exit code 0]"]
    assert any("bytes of output cut" in ln for ln in lines)
    assert len(res.text) < 1300


def test_capped_output_counts() -> None:
    cap = CappedOutput(10)
    for piece in (b"abc", b"defgh", b"ijklmnop", b"qrstuvwxyz"):
        cap.add(piece)
    assert cap.text() == "abcde\n[... 16 bytes of output cut; 26 in all ...]\nvwxyz"
    small = CappedOutput(100)
    small.add(b"hello")
    assert small.text() == "hello"


def test_environment_scrubbed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_API_KEY", "sk-not-for-children")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-nope")
    monkeypatch.setenv("LC_TESTING", "kept")
    res = sh(ctx_in(tmp_path), "env")
    assert res.ok
    assert "sk-not-for-children" not in res.text and "FAKE_API_KEY" not in res.text
    assert "ghp-nope" not in res.text
    assert "LC_TESTING=kept" in res.text
    assert "PATH=" in res.text


def test_pass_env_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROJECT_MODE", "ci")
    res = sh(ctx_in(tmp_path, pass_env=["PROJECT_MODE"]), "echo $PROJECT_MODE")
    assert res.text == "ci\n[exit code 0]"


def test_allowed_commands(tmp_path: Path) -> None:
    ctx = ctx_in(tmp_path, allowed_commands=["echo *", "true"])
    assert sh(ctx, "echo  hi").text == "hi\n[exit code 0]"
    res = sh(ctx, "ls")
    assert not res.ok and "not allowed" in res.text and "echo *" in res.text
    for sneaky in ("echo hi; touch x", "echo hi && touch x", "echo $(touch x)",
                   "echo hi > x", "echo `touch x`", "echo a\ntouch x"):
        res = sh(ctx, sneaky)
        assert not res.ok and "one simple command" in res.text, sneaky
    assert not (tmp_path / "x").exists()


def test_concurrency_flag() -> None:
    assert ShellTool.concurrency_safe is False
