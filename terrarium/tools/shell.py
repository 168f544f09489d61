"""``shell``: run one bash command in the creature's workspace, bounded and scrubbed.

Why each bound:
- Where the host allows it the command runs in a bubblewrap sandbox (``sandbox: auto``,
  the default; :mod:`terrarium.tools.sandbox`): its own pid namespace (the terrarium
  process and its environment out of sight), a clean environment, the workspace and
  writable paths the only writable places, no network unless ``network: true``.
- The command runs in a new session (its own process group), and when it times out, or the
  call is cancelled, or it ends leaving background children, the group, its session and
  (unsandboxed) every process carrying the call's marker are killed, so nothing it started
  outlives the call or keeps the pipe open; in the sandbox the pid namespace ends it all.
- Output (stdout and stderr interleaved, as a terminal shows them) keeps its head and its
  tail, with a marker saying how many bytes were cut in between: errors are usually at
  the end, the command's context at the start.
- The environment passes only an allow-list (``PATH``, ``HOME``, ``LANG``, ``LC_*``,
  ``TERM``, ``TMPDIR``, ``TZ``, ``USER``, ``LOGNAME``, plus names the creature lists in
  ``pass_env``): API keys and tokens of the terrarium process never reach a command.
- ``allowed_commands`` (per creature) limits commands to patterns; then a command must be
  one simple command (no ``; & | < >``, backquotes, ``$(``, or line breaks) so a pattern
  like ``pytest*`` cannot be extended with ``; rm -rf``. It is a guard rail for a model,
  not a sandbox: a permitted program can still do what that program can do.
The process is driven through anyio, so the event loop (and the other creatures) never
wait on it.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import uuid
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import anyio
import anyio.abc
from pydantic import BaseModel, ConfigDict, Field

from terrarium.errors import ToolError
from terrarium.tools.base import Tool, ToolContext
from terrarium.tools.sandbox import MARKER_ENV, bwrap_argv, kill_call, sandbox_status
from terrarium.tools.workspace import work_dir, writable_roots

__all__ = ["ENV_ALLOWED", "CappedOutput", "ShellArgs", "ShellOptions", "ShellTool", "sandbox_line",
           "scrub_env"]

HARD_MAX_TIMEOUT = 600.0
ENV_ALLOWED = frozenset({"PATH", "HOME", "LANG", "LANGUAGE", "TERM", "TMPDIR", "TZ", "USER",
                         "LOGNAME"})
FORBIDDEN_WITH_ALLOWLIST = (";", "&", "|", "<", ">", "`", "$(", "\n", "\r")
KILL_GRACE = 5.0  # seconds to wait for the pipe to close after the group was killed


class ShellArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, description="the bash command line to run")
    timeout: float | None = Field(
        default=None, gt=0, le=HARD_MAX_TIMEOUT,
        description="seconds before the command is killed (default: the creature's setting)",
    )


class ShellOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timeout: float = Field(default=60.0, gt=0, le=HARD_MAX_TIMEOUT,
                           description="default seconds before a command is killed")
    max_timeout: float = Field(default=HARD_MAX_TIMEOUT, gt=0, le=HARD_MAX_TIMEOUT,
                               description="the longest timeout a call may ask for")
    max_output_bytes: int = Field(default=30_000, ge=200, le=1_000_000,
                                  description="output kept (head and tail) per call")
    allowed_commands: list[str] | None = Field(
        default=None, description="shell-style patterns a command must match (none: any)"
    )
    pass_env: list[str] = Field(
        default_factory=list, description="extra environment variables passed to commands"
    )
    sandbox: bool | Literal["auto"] = Field(
        default="auto", description="run commands in a bubblewrap sandbox: auto (when it "
        "works on this host), true (refuse to run without it), false (never)"
    )
    network: bool = Field(
        default=False, description="let sandboxed commands use the network"
    )


def scrub_env(extra: list[str] | tuple[str, ...] = ()) -> dict[str, str]:
    """The allow-listed part of this process's environment (see module docstring)."""
    keep = ENV_ALLOWED | set(extra)
    return {k: v for k, v in os.environ.items() if k in keep or k.startswith("LC_")}


class CappedOutput:
    """Keeps the first and last ``limit/2`` bytes of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.half = limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    def text(self) -> str:
        cut = self.total - len(self.head) - len(self.tail)
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if cut <= 0:
            return head + tail
        return f"{head}\n[... {cut} bytes of output cut; {self.total} in all ...]\n{tail}"


def _check_allowed(command: str, patterns: list[str]) -> None:
    bad = [t for t in FORBIDDEN_WITH_ALLOWLIST if t in command]
    if bad:
        raise ToolError(
            f"The command was refused: with allowed_commands set, a command must be one "
            f"simple command without {', '.join(repr(b) for b in bad)}."
        )
    line = " ".join(command.split())
    if not any(fnmatch.fnmatchcase(line, p) for p in patterns):
        raise ToolError(
            f"The command {line!r} is not allowed for this creature; allowed patterns: "
            f"{', '.join(patterns) or 'none'}."
        )


def sandbox_line(raw: Mapping[str, Any]) -> tuple[bool, str]:
    """How a creature's shell commands will run, with its ``tool_options.shell`` mapping:
    (whether that is unconfined while a sandbox was wanted, one line saying so)."""
    try:
        options = ShellOptions.model_validate(dict(raw))
    except ValueError:
        return False, "shell: its options are invalid (see terrarium validate)"
    if options.sandbox is False:
        return False, "shell: no sandbox (sandbox: false in its tool_options)"
    status = sandbox_status()
    if status.available:
        net = "network allowed" if options.network else "no network"
        return False, f"shell: sandboxed by bubblewrap (workspace writable, {net})"
    if options.sandbox is True:
        return False, f"shell: refuses to run: the sandbox is required and {status.reason}"
    return True, f"shell: NOT sandboxed: {status.reason}; commands run as this user"


def sandboxed(options: ShellOptions) -> str | None:
    """The ``bwrap`` to run commands with under these options, or None to run them plainly;
    a ToolError when the sandbox is required and this host cannot give it."""
    if options.sandbox is False:
        return None
    status = sandbox_status()
    if status.available:
        return status.bwrap
    if options.sandbox is True:
        raise ToolError(f"The command was not run: this creature requires the shell "
                        f"sandbox, and {status.reason}.")
    return None


class ShellTool(Tool):
    name: ClassVar[str] = "shell"
    summary: ClassVar[str] = "run a bash command in the workspace and get its output"
    documentation: ClassVar[str] = (
        "Runs command with bash in the workspace folder and returns its output (stdout and "
        "stderr together) and exit code. It is killed, with every process it started, after "
        "timeout seconds. Long output keeps its start and end with a marker for what was "
        "cut. Only basic environment variables are set (no keys or tokens). No input can "
        "be typed: interactive programs get end-of-file. Background processes do not "
        "outlive the call. Where the host allows it, commands run in a sandbox: only the "
        "workspace is writable and there is no network unless the creature allows it."
    )
    args_model: ClassVar[type[BaseModel]] = ShellArgs
    options_model: ClassVar[type[BaseModel] | None] = ShellOptions
    guidance: ClassVar[str] = (
        "Use shell for tests, builds and git; prefer read_file, grep and edit for reading "
        "and changing files. Keep commands non-interactive."
    )
    concurrency_safe: ClassVar[bool] = False

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, ShellArgs)
        options: ShellOptions = self.options(ctx)
        if options.allowed_commands is not None:
            _check_allowed(args.command, options.allowed_commands)
        bash = shutil.which("bash")
        if bash is None:
            raise ToolError("bash is not installed on this machine, so shell cannot run.")
        cwd = work_dir(ctx)
        timeout = min(args.timeout or options.timeout, options.max_timeout)
        out = CappedOutput(options.max_output_bytes)
        timed_out = False
        bwrap = sandboxed(options)
        env = scrub_env(options.pass_env)
        argv = [bash, "-c", args.command]
        marker: str | None = None
        if bwrap is not None:
            argv = bwrap_argv(bwrap, argv, workspace=cwd, writable=writable_roots(ctx),
                              env=env, network=options.network)
        else:  # what a detached daemon keeps, so the end of the call can find it
            marker = uuid.uuid4().hex
            env[MARKER_ENV] = marker
        proc = await anyio.open_process(
            argv, cwd=cwd, env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            async with anyio.create_task_group() as tg:

                async def pump(stream: anyio.abc.ByteReceiveStream) -> None:
                    try:
                        async for chunk in stream:
                            out.add(chunk)
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        pass

                assert proc.stdout is not None
                tg.start_soon(pump, proc.stdout)
                with anyio.move_on_after(timeout) as scope:
                    await proc.wait()
                timed_out = scope.cancelled_caught
                # the command is over (or out of time): nothing it started may go on
                kill_call(proc.pid, marker)
                with anyio.move_on_after(KILL_GRACE):
                    await proc.wait()
                tg.cancel_scope.deadline = anyio.current_time() + KILL_GRACE
        finally:
            kill_call(proc.pid, marker)
            with anyio.CancelScope(shield=True):
                await proc.aclose()
        text = out.text().rstrip("\n")
        if timed_out:
            raise ToolError(
                f"The command timed out after {timeout:g} s and was killed with every "
                f"process it started. Output so far:\n{text}" if text else
                f"The command timed out after {timeout:g} s and was killed with every "
                f"process it started; it printed nothing."
            )
        body = text if text else "(no output)"
        return f"{body}\n[exit code {proc.returncode}]"
