"""The embedded model server in a child process, started before the run's own imports.

A second start of a team spent ~0.8 s of CPU on Python's imports and then 0.6-0.8 s
loading the model, one after the other: the binding builds its server holding the GIL, so
nothing in the process can run beside it. ``terrarium run`` therefore starts the server
the team used last time (its :class:`ServerShape`, remembered in one small file of the
cache folder by :func:`remember`) as a child process first thing, and the model loads
on the other core while this process imports; the wiring adopts it when the team asks for
exactly that shape (:meth:`ServerProcess.take`) and stops it otherwise.

Only the standard library is imported here (the parent imports it before anything
heavy); the child runs ``server_child.py`` by its path, which imports nothing of
terrarium's. The child exits when its stdin closes (the parent stopped it, or exited or
died), and ignores Ctrl-C, which the parent handles; its stderr goes to a log file
(:func:`server_log_path`), named in the one line that reports its unexpected end.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import selectors
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from terrarium.llm import server_child
from terrarium.llm.openmp_build import openmp_settings
from terrarium.llm.server_child import SAMPLING_SEED, WAIT_POLICY, llama_params

__all__ = [
    "SAMPLING_SEED",
    "SHARE_ENV",
    "WAIT_POLICY",
    "Prestart",
    "ServerProcess",
    "ServerShape",
    "child_env",
    "hints_path",
    "last_line",
    "llama_params",
    "recall",
    "remember",
    "server_log_path",
    "share_env",
]

SHARE_ENV = "TERRARIUM_SHARE_MODEL"
"""``0``/``no``/``off``: never share the embedded server; ``1``/``yes``/``on``: share it."""


def share_env(environ: Mapping[str, str] | None = None) -> bool | None:
    """What ``TERRARIUM_SHARE_MODEL`` says (None: unset or unreadable, the caller decides).
    Here rather than in ``shared_server``: the head start reads it before anything heavy
    loads (``cli/early.py``)."""
    raw = (os.environ if environ is None else environ).get(SHARE_ENV, "").strip().lower()
    if raw in ("0", "no", "off", "false"):
        return False
    if raw in ("1", "yes", "on", "true"):
        return True
    return None

MAX_HINTS = 32  # teams remembered; the least recently started go first


@dataclass(frozen=True, slots=True)
class ServerShape:
    """Everything a server's start depends on: two equal shapes make the same server."""

    model: str
    slots: int
    ctx_per_slot: int
    threads: int
    batch: int
    gen_threads: int | None = None  # generating one token at a time; None: ``threads``
    poll: int = 0
    flash_attention: bool = True
    slot_save_dir: str | None = None
    verbosity: int = 0
    port: int = 0


# ---------------------------------------------------------------------- what a team used
def hints_path() -> Path:
    """``<user cache dir>/server-shapes.json``: each team's last server shape."""
    from terrarium.paths import cache_dir

    return cache_dir() / "server-shapes.json"


def _read_hints(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def recall(team: str, path: Path | None = None) -> ServerShape | None:
    """The shape team ``team`` (its resolved path) last started, or None."""
    entry = _read_hints(path or hints_path()).get(team)
    try:
        return ServerShape(**entry) if isinstance(entry, dict) else None
    except TypeError:  # written by another version
        return None


def remember(team: str, shape: ServerShape, path: Path | None = None) -> None:
    """Note ``shape`` as what team ``team`` starts (written whole, then renamed); a
    file that cannot be written only costs the next start its head start."""
    path = path or hints_path()
    hints = _read_hints(path)
    if hints.get(team) == asdict(shape) and list(hints)[-1:] == [team]:
        return
    hints.pop(team, None)
    hints[team] = asdict(shape)
    while len(hints) > MAX_HINTS:
        hints.pop(next(iter(hints)))
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_suffix(f".{os.getpid()}.part")
        part.write_text(json.dumps(hints), encoding="utf-8")
        os.replace(part, path)


# ---------------------------------------------------------------------- the parent's end
def server_log_path(team: str) -> Path:
    """``<user cache dir>/server-logs/<team's key hashed>.log``: what the head start's
    child wrote on stderr (llama.cpp's log, a Python traceback), one file per team,
    written anew by each start."""
    from terrarium.paths import cache_dir

    digest = hashlib.sha1(team.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return cache_dir() / "server-logs" / f"{digest}.log"


def last_line(path: Path, limit: int = 300) -> str | None:
    """The last line of text in ``path`` that is not blank (at most ``limit`` characters
    of it), or None."""
    try:
        with path.open("rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - 8192))
            tail = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    lines = [x.strip() for x in tail.splitlines() if x.strip()]
    return lines[-1][:limit] if lines else None


def child_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The child's environment: this one, with llama.cpp's OpenMP workers sleeping when
    idle (see ``embedded._import_binding``) unless the user set ``OMP_WAIT_POLICY``, and
    under ``TERRARIUM_OPENMP=llvm`` libomp's block time unless the user set
    ``KMP_BLOCKTIME`` (``server_child.openmp_env``; the child loads libomp itself).

    Not transparent huge pages for ``malloc`` (``GLIBC_TUNABLES=glibc.malloc.hugetlb=1``,
    the default here for a while; a value the user sets still reaches the child): the
    KV cache (188 MB for the voice team) is zeroed at load, in ~46,000 page faults of
    4 KB or ~95 of 2 MB, and the 2 MB ones were cheaper at the median (the child's system
    CPU 0.05 s against 0.10 s) but 0.15-0.59 s in a quarter to a half of the starts on
    this virtual machine, whose free 2 MB blocks are handed back to the host (virtio
    free page reporting) and must be faulted in again there: the second start's 0.3 s
    that came and went (docs/performance-history.md, "The second start's 0.3 s")."""
    return {**environ, **openmp_settings(environ)}


class ServerProcess:
    """A child process loading ``shape``'s server; :meth:`take` hands its address over.
    ``log``: the file its stderr goes to (else nowhere); a child that dies without being
    stopped is reported on stderr in one sentence naming that file and its last line."""

    def __init__(self, shape: ServerShape, log: Path | None = None) -> None:
        self.shape = shape
        self.log = log
        self.closing = False  # stopped on purpose: its end is no news
        self.adopted = False  # serving the run (:meth:`take` gave its address)
        env = child_env(os.environ)
        stderr: Any = subprocess.DEVNULL
        if log is not None:
            try:
                log.parent.mkdir(parents=True, exist_ok=True)
                stderr = log.open("wb")
            except OSError:
                self.log = None
        try:
            self.proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, "-P", server_child.__file__, json.dumps(asdict(shape))],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env)
        finally:
            if stderr is not subprocess.DEVNULL:
                stderr.close()  # the child has its own copy
        self.child_pid = self.proc.pid  # kept for the report after it is gone
        self.watcher = threading.Thread(target=self._watch, args=(self.proc,), daemon=True,
                                        name="model server watch")
        self.watcher.start()

    def _watch(self, proc: subprocess.Popen[bytes]) -> None:
        """Wait for the child; if it ends serving the run without being stopped, say why
        in one line (the run's requests to it fail from then on)."""
        code = proc.wait()
        if self.adopted and not self.closing:
            print(f"error: {self.ended(code)}", file=sys.stderr, flush=True)

    def ended(self, code: int) -> str:
        """The child ended with exit status ``code``: how, and where its log is."""
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        return f"the model server process {self.child_pid} {how} ({self.where()})"

    def where(self) -> str:
        """Where the child's stderr is, and its last line."""
        if self.log is None:
            return "its stderr was not kept"
        line = last_line(self.log)
        return (f"its log {self.log} ends with: {line}" if line is not None
                else f"its log {self.log} is empty")

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def take(self, shape: ServerShape, timeout: float) -> str | None:
        """The server's root URL if it has ``shape``, started within ``timeout`` seconds
        and is still running; None otherwise (the child is then stopped). The child
        answers only once its server is ready, so the caller need not ask ``/health``."""
        if self.proc is None or shape != self.shape:
            self.close()
            return None
        answer = self._answer(timeout)
        url = answer.get("url") if isinstance(answer, dict) else None
        gone = self.proc.poll()  # before this process stops it
        if not isinstance(url, str) or gone is not None:  # no server, or no longer
            self.close()
            error = answer.get("error") if isinstance(answer, dict) else None
            why = (f"the model server process {self.child_pid} failed: {error} "
                   f"({self.where()})" if error is not None
                   else self.ended(gone) if gone is not None
                   else f"the model server process {self.child_pid} did not answer within "
                        f"{timeout:g} s ({self.where()})")
            print(f"note: {why}; the model loads in this process instead", file=sys.stderr,
                  flush=True)
            return None
        if isinstance(answer.get("notice"), str):  # e.g. libomp asked for, not installed
            print(f"note: {answer['notice']}", file=sys.stderr, flush=True)
        self.adopted = True
        return url

    def _answer(self, timeout: float) -> Any:
        """The child's one line (its address, or why it failed), or None."""
        assert self.proc is not None and self.proc.stdout is not None
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            if not sel.select(timeout):
                return None
        try:
            return json.loads(self.proc.stdout.readline() or b"null")
        except ValueError:
            return None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def close(self, wait: float = 5.0) -> None:
        """Stop the child: its stdin closes, and it exits (killed if it does not)."""
        self.closing = True
        proc, self.proc = self.proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Prestart:
    """One ``terrarium run``'s head start: the team's key, and the child it started (if
    the team started a server before). The wiring takes the child or leaves it; whatever
    is left is stopped by :meth:`close`."""

    def __init__(self, team: str, *, hints: Path | None = None, spawn: bool = True) -> None:
        self.team = team
        self.hints = hints
        shape = recall(team, hints) if spawn else None
        self.process: ServerProcess | None = None
        if shape is not None and Path(shape.model).is_file():
            with contextlib.suppress(OSError):
                self.process = ServerProcess(shape, log=server_log_path(team))

    def take(self) -> ServerProcess | None:
        """The child, now the caller's to stop (None if there is none)."""
        process, self.process = self.process, None
        return process

    def remember(self, shape: ServerShape) -> None:
        remember(self.team, shape, self.hints)

    def close(self) -> None:
        if self.process is not None:
            self.process.close()
            self.process = None
