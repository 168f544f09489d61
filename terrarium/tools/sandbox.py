"""Where a shell command runs: a bubblewrap sandbox when the host allows it, else plainly.

The sandbox (``bwrap``, Debian's ``bubblewrap``) gives each command:
- its own pid namespace with a fresh ``/proc``: the terrarium process, and every other
  process of the machine, is out of sight (no ``/proc/<parent>/environ`` to read), and when
  the command ends every process it started ends with it, ``setsid`` daemons included
  (the namespace's first process dies, and the kernel kills the rest);
- a clean environment (``--clearenv``; only the allow-listed variables are set again);
- the file system read-only, except the workspace and the creature's writable paths, a
  private ``/tmp`` and ``/dev``;
- no network (a namespace with only loopback) unless the creature's options allow it.

:func:`sandbox_status` probes once per process whether ``bwrap`` works here (it needs
user namespaces, or root); the answer is cached, and said plainly when it is no.

Without the sandbox the command still runs in a new session with a scrubbed environment;
at its end the whole process group, every process of its session, and every process
carrying its call marker in its environment (a ``setsid`` daemon keeps the environment it
inherited) are killed. That is best effort: a command that clears its environment and
leaves its session can escape it, which is why the sandbox is the default.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

__all__ = ["MARKER_ENV", "SandboxStatus", "bwrap_argv", "kill_call", "sandbox_status"]

MARKER_ENV = "TERRARIUM_SHELL_CALL"
_PROBE = ("--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true")


@dataclass(frozen=True, slots=True)
class SandboxStatus:
    """Whether shell commands can be sandboxed on this host, and why not if they cannot."""

    available: bool
    bwrap: str | None
    reason: str = ""


@lru_cache(maxsize=1)
def sandbox_status() -> SandboxStatus:
    """Probe ``bwrap`` once: does a namespaced ``true`` run? (cached for the process)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return SandboxStatus(False, None, "bubblewrap (bwrap) is not installed")
    try:
        res = subprocess.run([bwrap, *_PROBE], stdin=subprocess.DEVNULL,
                             capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return SandboxStatus(False, bwrap, f"bwrap could not start: {exc}")
    if res.returncode != 0:
        said = res.stderr.decode("utf-8", "replace").strip().splitlines()
        why = said[-1] if said else f"exit code {res.returncode}"
        return SandboxStatus(False, bwrap, f"bwrap does not work on this host ({why})")
    return SandboxStatus(True, bwrap)


def bwrap_argv(bwrap: str, command: list[str], *, workspace: Path,
               writable: tuple[Path, ...], env: dict[str, str], network: bool) -> list[str]:
    """The ``bwrap`` command line that runs ``command`` as the module docstring says."""
    argv = [bwrap, "--unshare-all"]
    if network:
        argv.append("--share-net")
    argv += ["--die-with-parent", "--new-session", "--ro-bind", "/", "/",
             "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for path in (workspace, *writable):
        if path.exists():
            argv += ["--bind", str(path), str(path)]
    argv += ["--chdir", str(workspace), "--clearenv"]
    env = {**env, "TMPDIR": "/tmp"}  # the host's TMPDIR may be read-only in here
    for key, value in sorted(env.items()):
        argv += ["--setenv", key, value]
    return [*argv, "--", *command]


def _session_of(pid: int) -> tuple[int, int] | None:
    """(process group, session) of ``pid`` from ``/proc``, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return int(fields[2]), int(fields[3])  # pgrp, session (proc(5) fields 5 and 6)


def _carries(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return marker in fh.read().split(b"\0")
    except OSError:
        return False


def kill_call(leader: int, marker: str | None) -> None:
    """SIGKILL what a command left behind: its process group, every process of its session
    (``leader`` started both), and every process carrying ``MARKER_ENV=marker``. /proc is
    read again until a reading finds no one new: a process forked while the last one was
    read (``setsid -f sh -c 'sleep 9'``'s sleep, its shell killed mid-fork) is listed by
    the next (session 25: one reading let such a sleep outlive its call on a busy machine)."""
    try:
        os.killpg(leader, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if not os.path.isdir("/proc"):
        return
    token = f"{MARKER_ENV}={marker}".encode() if marker else None
    killed: set[int] = set()
    for _ in range(_READINGS):
        found = {pid for pid in _left(leader, token) if pid not in killed}
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        killed |= found


_READINGS = 20  # a bound: a command that forks faster than it is killed is still stopped


def _left(leader: int, token: bytes | None) -> list[int]:
    """The live processes of ``leader``'s session or group, or carrying ``token``."""
    me, out = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in (me, 1):
            continue
        pid = int(entry)
        ids = _session_of(pid)
        if ids is not None and (leader in ids or (token is not None and _carries(pid, token))):
            out.append(pid)
    return out
