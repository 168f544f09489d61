"""shell: exit codes, workspace cwd, timeouts that kill the whole process group, output caps,
environment scrubbing, allowed_commands, options."""

from __future__ import annotations

import os
import socket
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

from terrarium.tools import shell
from terrarium.tools.base import ToolContext
from terrarium.tools.runner import ToolResult, run_tool
from terrarium.tools.sandbox import SandboxStatus, sandbox_status
from terrarium.tools.shell import CappedOutput, ShellTool

ROOT = Path(__file__).resolve().parents[2]


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


def running(*argv: str) -> list[int]:
    """Pids (seen from here, outside any sandbox) whose command line is exactly ``argv``."""
    want = ("\0".join(argv) + "\0").encode()
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes() == want and alive(int(entry.name)):
                    out.append(int(entry.name))
            except OSError:
                continue
    return out


def none_left(*argv: str) -> bool:
    for _ in range(500):  # SIGKILL is delivered asynchronously; wait for it, not for a time
        if not running(*argv):
            return True
        time.sleep(0.01)
    return False


MODES = [pytest.param(False, id="plain"), pytest.param("auto", id="sandbox")]


def unique() -> str:
    return str(300 + uuid.uuid4().int % 10_000)


@pytest.mark.parametrize("sandbox", MODES)
def test_timeout_kills_child_and_grandchild(tmp_path: Path, sandbox: Any) -> None:
    # the child shell starts a grandchild that would outlive it, then waits
    n = unique()
    cmd = (
        f"( sleep {n} & echo $! > grandchild.pid; echo $BASHPID > child.pid; wait ) & "
        "while [ ! -s grandchild.pid ] || [ ! -s child.pid ]; do sleep 0.01; done; "
        "echo ready; wait"
    )
    res = sh(ctx_in(tmp_path, sandbox=sandbox), cmd, timeout=1)
    assert not res.ok
    assert "timed out after 1 s" in res.text and "ready" in res.text
    assert none_left("sleep", n)


@pytest.mark.parametrize("sandbox", MODES)
def test_background_process_does_not_outlive_the_call(tmp_path: Path, sandbox: Any) -> None:
    n = unique()
    res = sh(ctx_in(tmp_path, sandbox=sandbox), f"sleep {n} & echo started")
    assert res.ok and res.text == "started\n[exit code 0]"
    assert none_left("sleep", n)


@pytest.mark.parametrize("sandbox", MODES)
def test_a_setsid_daemon_does_not_outlive_the_call(tmp_path: Path, sandbox: Any) -> None:
    """Its own session and process group, stdio detached: still ended with the call."""
    n = unique()
    res = sh(ctx_in(tmp_path, sandbox=sandbox),
             f"setsid sleep {n} </dev/null >/dev/null 2>&1 & "
             f"setsid -f sh -c 'sleep {n}' </dev/null >/dev/null 2>&1; echo started")
    assert res.ok, res.text
    assert none_left("sleep", n)
    assert none_left("sh", "-c", f"sleep {n}")


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


# -- the sandbox (bubblewrap) --------------------------------------------------------------

needs_bwrap = pytest.mark.skipif(not sandbox_status().available,
                                 reason="bubblewrap does not work on this host")


@needs_bwrap
def test_sandbox_hides_every_other_process(tmp_path: Path) -> None:
    res = sh(ctx_in(tmp_path), f"ls /proc/{os.getpid()} 2>&1; ls -d /proc/[0-9]* | wc -l")
    assert res.ok, res.text
    assert "No such file" in res.text.splitlines()[0]  # this process is out of sight
    assert int(res.text.splitlines()[-2]) <= 4  # bwrap's init, bash, ls, wc


@needs_bwrap
def test_sandbox_writes_only_the_workspace_and_writable_paths(tmp_path: Path) -> None:
    ws, out, extra = tmp_path / "ws", tmp_path / "outside", tmp_path / "extra"
    for d in (ws, out, extra):
        d.mkdir()
    ctx = ToolContext(creature="w", cwd=tmp_path, workspace=ws, writable=(Path("extra"),))
    # the host's files are read-only in here; /usr stands for them because the checkout
    # itself may live under /tmp, which the sandbox replaces with a private one
    res = sh(ctx, f"touch in.txt {extra}/x.txt; touch {out}/no.txt; echo $?; "
                  "touch /usr/no.txt; echo $?; head -c 5 /etc/passwd; echo")
    assert res.text.splitlines()[-5:] == ["1", "touch: cannot touch '/usr/no.txt': "
                                          "Read-only file system", "1", "root:",
                                          "[exit code 0]"], res.text
    assert (ws / "in.txt").exists() and (extra / "x.txt").exists()
    assert not (out / "no.txt").exists() and not Path("/usr/no.txt").exists()


@needs_bwrap
def test_sandbox_has_no_network_unless_allowed(tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    port = server.getsockname()[1]
    probe = f"(echo > /dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo reached || echo cut off"
    try:
        assert sh(ctx_in(tmp_path), probe).text.startswith("cut off")
        assert sh(ctx_in(tmp_path, network=True), probe).text.startswith("reached")
        assert sh(ctx_in(tmp_path, sandbox=False), probe).text.startswith("reached")
    finally:
        server.close()


def test_a_required_sandbox_that_the_host_lacks_refuses_to_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shell, "sandbox_status",
                        lambda: SandboxStatus(False, None, "bubblewrap (bwrap) is not installed"))
    res = sh(ctx_in(tmp_path, sandbox=True), "touch ran")
    assert (res.ok, res.text) == (False, "The command was not run: this creature requires the "
                                  "shell sandbox, and bubblewrap (bwrap) is not installed.")
    assert not (tmp_path / "ran").exists()
    assert sh(ctx_in(tmp_path), "echo plain").text == "plain\n[exit code 0]"  # auto: runs


def test_said_plainly_when_commands_run_without_the_sandbox(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    from terrarium.cli import main
    from terrarium.cli.run import unsandboxed_note
    from terrarium.config import load_single_creature

    for name, opts in (("free", {}), ("off", {"sandbox": False})):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.yaml").write_text(yaml.safe_dump({
            "name": name, "controller": {"provider": "scripted", "script": "s.yaml"},
            "tools": ["shell"], "tool_options": {"shell": opts}}))
        (tmp_path / name / "s.yaml").write_text("steps: []\n")
    free, off = (load_single_creature(tmp_path / n) for n in ("free", "off"))
    if sandbox_status().available:
        assert unsandboxed_note(free) is None
        assert main(["tools", str(tmp_path / "free"), "free"]) == 0
        assert ("shell: sandboxed by bubblewrap (workspace writable, no network)"
                in capsys.readouterr().out)
    monkeypatch.setattr(shell, "sandbox_status",
                        lambda: SandboxStatus(False, None, "bubblewrap (bwrap) is not installed"))
    assert unsandboxed_note(free) == (
        "note: the shell commands of free run without a sandbox (bubblewrap (bwrap) is not "
        "installed; commands run as this user); see docs/security.md")
    assert unsandboxed_note(off) is None  # turned off on purpose: nothing to warn about
    assert main(["tools", str(tmp_path / "off"), "off"]) == 0
    assert "shell: no sandbox (sandbox: false in its tool_options)" in capsys.readouterr().out
