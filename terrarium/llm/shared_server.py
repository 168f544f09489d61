"""One embedded model server per team on a machine, shared by the team's processes.

A team run past one machine (``terrarium worker``, ``terrarium run --broker``) may put
several of its processes on the same machine. Each loading its own copy of the embedded
model would double the memory and, worse, have two llama.cpp thread pools fight over the
same cores (measured: +70 ms time to first audio with router and speaker in two workers on
two cores, where the broker's own hops cost ~3.5 ms). So the first process that needs the
model starts the server and advertises it in a small registry file; the others attach to
it over its 127.0.0.1 address. Each creature keeps its own slot: the layout (which slot is
whose) is computed team-wide by every process from the same config, so two processes never
pin two creatures to one slot.

The registry entry is keyed by the model file (name, size, mtime), the server's layout
(slots x context) and the team's config hash: only a server built for exactly this team's
layout is shared. Starting happens under an exclusive file lock (``fcntl.flock``), so two
processes starting together load one copy: the second waits for the lock, then finds the
entry and attaches. An entry whose process is gone (or a zombie), or whose ``/health``
does not answer, is stale and replaced.

When the owning process exits while a sharer still runs, the sharer takes over on its next
model call: under the lock it attaches to whoever registered a live server since, or
starts its own and registers it. Its creatures' slots are then cold (their prompt prefixes
are evaluated again on their next call). Without ``fcntl`` (not POSIX) nothing is shared:
each process runs its own server, as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import aclosing
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx

from terrarium.errors import ModelError
from terrarium.llm.embedded import EmbeddedServer, model_path
from terrarium.llm.openai_client import OpenAIClient
from terrarium.llm.openmp_build import peers_dir
from terrarium.llm.prefix_cache import model_tag
from terrarium.llm.server_child import process_start
from terrarium.llm.server_process import SHARE_ENV, share_env
from terrarium.llm.types import ChatRequest, StreamDelta
from terrarium.paths import cache_dir

try:  # POSIX only; elsewhere every process keeps its own server
    import fcntl
except ImportError:  # pragma: no cover - not on the machines we test
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "SHARE_ENV",
    "ServerEntry",
    "ServerRecord",
    "SharedClient",
    "SharedEmbeddedServer",
    "can_share",
    "healthy",
    "pid_alive",
    "registry_dir",
    "share_env",
    "share_key",
]

Health = Callable[[str], bool]


def can_share() -> bool:
    """Whether this platform has the file lock sharing needs."""
    return fcntl is not None


def registry_dir() -> Path:
    """Where running shared servers are advertised: ``<user cache dir>/servers``."""
    return cache_dir() / "servers"


def share_key(model_file: Path, layout: str, team: str) -> str:
    """The registry key: this model file, this server layout (``EmbeddedServer.layout``),
    this team's config."""
    tag = model_tag(model_file, layout)
    return hashlib.sha256(f"{tag}\0{team}".encode()).hexdigest()[:24]


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (an exited child its parent has
    not reaped still has a pid, but no server any more)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, another user's
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc (macOS): the signal said it exists
    state = stat.rsplit(")", 1)[-1].split()
    return not (state and state[0] in ("Z", "X"))


def healthy(base_url: str, timeout: float = 2.0) -> bool:
    """Whether the llama.cpp server at ``base_url`` answers ``/health`` with ok."""
    try:
        # plain HTTP on 127.0.0.1: no TLS context, which costs ~30 ms to build
        resp = httpx.get(f"{base_url}/health", timeout=timeout, verify=False)
        return resp.status_code == 200 and resp.json().get("status") == "ok"
    except (httpx.HTTPError, ValueError):
        return False


@dataclass(frozen=True, slots=True)
class ServerEntry:
    """A running shared server, as its owner advertised it."""

    pid: int
    base_url: str
    model: str
    slots: int
    ctx_per_slot: int
    slot_save_dir: str | None = None
    started: float = 0.0

    def alive(self, health: Health = healthy) -> bool:
        return pid_alive(self.pid) and health(self.base_url)


class ServerRecord:
    """The registry file of one key (``<key>.json``) and its lock (``<key>.lock``)."""

    def __init__(self, directory: Path, key: str) -> None:
        self.directory = directory
        self.key = key
        self.entry_path = directory / f"{key}.json"
        self.lock_path = directory / f"{key}.lock"

    @contextlib.contextmanager
    def locked(self, timeout: float) -> Iterator[None]:
        """Hold the key's exclusive lock; ModelError if another process keeps it past
        ``timeout`` seconds (a start hung beyond its own timeout)."""
        if fcntl is None:  # pragma: no cover
            raise ModelError("sharing the embedded server needs fcntl (a POSIX system)")
        self.directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise ModelError(
                            f"another process has held the embedded server's lock "
                            f"{self.lock_path} for over {timeout:g} s",
                            suggestion=f"set {SHARE_ENV}=0 to run a server of its own",
                        ) from None
                    time.sleep(0.02)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def read(self) -> ServerEntry | None:
        """The advertised server, or None (no file, or one that does not parse)."""
        try:
            data = json.loads(self.entry_path.read_text())
            return ServerEntry(**data)
        except (OSError, ValueError, TypeError):
            return None

    def write(self, entry: ServerEntry) -> None:
        """Advertise ``entry`` (written whole under a temporary name, then renamed)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        part = self.entry_path.with_suffix(f".{os.getpid()}.part")
        part.write_text(json.dumps(asdict(entry)))
        os.replace(part, self.entry_path)

    def remove(self, entry: ServerEntry) -> bool:
        """Withdraw ``entry`` if it is still the advertised one."""
        if self.read() != entry:
            return False
        with contextlib.suppress(OSError):
            self.entry_path.unlink()
        return True


class SharedEmbeddedServer(EmbeddedServer):
    """An :class:`EmbeddedServer` that one team's processes on this machine share.

    ``team`` names the team's config (its hash); with the model file and the layout it
    makes the registry key. ``start()`` attaches to a live advertised server, or starts
    one here and advertises it; ``stop()`` withdraws what this process advertised.
    ``attached`` says which it did; ``owner_pid`` is whose server it is.
    """

    def __init__(self, *, team: str, registry: Path | None = None,
                 health: Health = healthy, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.team = team
        self.registry_root = registry
        self.health = health
        self.attached = False
        self.owner_pid: int | None = None
        self.takeovers = 0
        self.lost_owner: int | None = None  # whose server went away, until taken over
        self.entry: ServerEntry | None = None  # what this process advertised
        self._registry: ServerRecord | None = None
        self._mutex = threading.Lock()  # one takeover at a time in this process

    # ------------------------------------------------------------------ life cycle
    @property
    def running(self) -> bool:
        return self._base_url is not None

    @property
    def registry(self) -> ServerRecord:
        if self._registry is None:
            model = self.model_file or model_path()
            key = share_key(model, self.layout, self.team)
            self._registry = ServerRecord(self.registry_root or registry_dir(), key)
        return self._registry

    def start(self) -> None:
        """Attach to this team's live server on this machine, or start and advertise one."""
        if self.running:
            return
        with self._mutex, self.registry.locked(self.startup_timeout + 30.0):
            self._attach_or_launch()

    def _attach_or_launch(self) -> None:
        """Under the lock: a live advertised server is attached to; a stale one replaced."""
        entry = self.registry.read()
        if entry is not None and entry.slots == self.slots and entry.alive(self.health):
            self._base_url = entry.base_url
            self.loaded_model = Path(entry.model)
            # the server saves and restores slots in ITS folder: the prefix cache must look there
            self.slot_save_dir = Path(entry.slot_save_dir) if entry.slot_save_dir else None
            self.attached, self.owner_pid = True, entry.pid
            self._note_peer(entry.pid)
            return
        self._launch()
        assert self.loaded_model is not None
        self.entry = ServerEntry(
            pid=os.getpid(), base_url=self.base_url, model=str(self.loaded_model),
            slots=self.slots, ctx_per_slot=self.ctx_per_slot,
            slot_save_dir=str(self.slot_save_dir) if self.slot_save_dir else None,
            started=time.time())
        self.registry.write(self.entry)
        self.attached, self.owner_pid = False, os.getpid()

    def _launch(self) -> None:
        """Load the model and serve here (a test replaces this with a fake server)."""
        EmbeddedServer.start(self)

    def _release(self) -> None:
        """Stop serving here (a test's fake server replaces this with its own stop)."""
        EmbeddedServer.stop(self)

    def stop(self) -> None:
        """Detach, or withdraw the advertisement and stop the server this process runs
        (sharers still attached take over on their next call)."""
        if not self.running:
            return
        if self.entry is not None:
            with contextlib.suppress(ModelError, OSError), self.registry.locked(10.0):
                self.registry.remove(self.entry)
            self.entry = None
        if not self.attached:
            self._release()
        self._forget_peer()
        self._base_url = None
        self.loaded_model = None
        self.attached, self.owner_pid = False, None

    # ------------------------------------------------------------------ the core watch
    def _note_peer(self, owner: int) -> None:
        """Say to the server's core watch that this process shares it (its CPU, a worker's
        voice, say, is the team's, not another program's: ``server_child.PEERS_ENV``)."""
        me = os.getpid()
        with contextlib.suppress(OSError):
            folder = self.peers / str(owner)
            folder.mkdir(parents=True, exist_ok=True)
            # with its start time, so that a note outliving a killed process names no other
            (folder / str(me)).write_text(str(process_start(me) or ""), encoding="ascii")

    def _forget_peer(self) -> None:
        """Take back :meth:`_note_peer`, or, the owner, every note about its server."""
        me = os.getpid()
        if self.attached and self.owner_pid is not None:
            with contextlib.suppress(OSError):
                (self.peers / str(self.owner_pid) / str(me)).unlink()
        elif not self.attached and self.owner_pid == me:
            shutil.rmtree(self.peers / str(me), ignore_errors=True)

    @property
    def peers(self) -> Path:
        """The core watch's folder of sharers: beside the registry (a test's own one), by
        default where the server's process looks (``openmp_build.peers_dir``)."""
        return peers_dir() if self.registry_root is None else self.registry_root / "peers"

    # ------------------------------------------------------------------ the owner's end
    def owner_gone(self) -> bool:
        """Whether the server this process attached to has gone with its owner."""
        return self.attached and self.owner_pid is not None and not pid_alive(self.owner_pid)

    def withdrawn(self) -> bool:
        """Whether the server this process attached to is no longer advertised (its
        owner stopped it, or a takeover replaced it)."""
        if not self.attached or self._registry is None:
            return False
        entry = self._registry.read()
        return entry is None or entry.base_url != self._base_url

    def take_over(self, seen_url: str) -> str:
        """The owner of ``seen_url`` is gone: attach to whoever advertised a live server
        since, or start one here. Returns the new server root. Several creatures of this
        process may ask at once: the first does it, the others get its result."""
        with self._mutex:
            if self._base_url is not None and self._base_url != seen_url:
                return self._base_url  # another creature of this process did it
            self.lost_owner = self.lost_owner or self.owner_pid
            with self.registry.locked(self.startup_timeout + 30.0):
                # the dead owner's entry is stale: replaced, unless a live one replaced it
                self._forget_peer()
                self._base_url, self.attached, self.owner_pid = None, False, None
                self._attach_or_launch()
            self.lost_owner = None
            self.takeovers += 1
            return self.base_url

    def describe_share(self) -> str:
        """One line for a worker's start: whose server this process uses, and where."""
        if not self.running:
            return "embedded model server not running"
        if self.attached:
            return (f"sharing the embedded model server of process {self.owner_pid} at "
                    f"{self.base_url} ({self.slots} slots)")
        return (f"started the embedded model server at {self.base_url} ({self.slots} slots), "
                f"shared with this team's other processes on this machine")

    # ------------------------------------------------------------------ clients
    def _new_client(self, **kwargs: Any) -> OpenAIClient:
        """A client that follows the server when its owner exits."""
        return SharedClient(self, **kwargs)


class _OwnerGone(Exception):
    """The attached server's owner exited (raised instead of waiting to retry it)."""


class SharedClient(OpenAIClient):
    """An :class:`OpenAIClient` on a shared server: before each call it checks that the
    server's owner still lives (a signal 0, microseconds); when the owner is gone, or a
    call cannot connect and the owner has gone meanwhile, the server is taken over
    (:meth:`SharedEmbeddedServer.take_over`) and the call made there, once."""

    def __init__(self, server: SharedEmbeddedServer, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.server = server

    async def _follow(self) -> None:
        seen = self.base_url.removesuffix("/v1")
        owner = self.server.owner_pid or self.server.lost_owner
        try:
            root = await anyio.to_thread.run_sync(self.server.take_over, seen)
        except ModelError as exc:
            raise ModelError(
                f"the embedded model server at {seen} (process {owner}) went away with its "
                f"process, and taking over failed: {exc.message}",
                suggestion=exc.suggestion) from exc
        self.base_url = root + "/v1"
        self._scorer = None  # bound to the old address

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        current = self.server.base_url if self.server.running else None
        if self.server.owner_gone() or self.server.lost_owner is not None:
            await self._follow()  # gone, or a takeover that failed: (again) now
        elif current is not None and self.base_url != current + "/v1":
            self.base_url = current + "/v1"  # another creature here took over already
            self._scorer = None
        try:
            # closed with this one, so a reply the caller stops records its usage at once
            async with aclosing(super().stream(request)) as deltas:
                async for delta in deltas:
                    yield delta
        except _OwnerGone:  # only raised before any byte of the answer: safe to repeat
            await self._follow()
            async with aclosing(super().stream(request)) as deltas:
                async for delta in deltas:
                    yield delta

    async def _wait_or_give_up(self, attempt: int, start: float, problem: str,
                               retry_after: float | None) -> None:
        """A failed connection to an attached server whose owner has exited (or withdrawn
        it) is not retried there: the server is taken over instead. A server still
        advertised by a live owner (busy) gets the ordinary retries, which look again."""
        if self.server.owner_gone() or self.server.withdrawn():
            raise _OwnerGone(problem)
        await super()._wait_or_give_up(attempt, start, problem, retry_after)
