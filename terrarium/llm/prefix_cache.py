"""Saved prompt prefixes: a llama.cpp slot's evaluated prompt, kept on disk between runs.

Evaluating a creature's prompt prefix is most of a team's start on a small CPU (the voice
router's ~1600 tokens take 3-9 s here); reading the slot's saved state back takes
milliseconds. llama.cpp saves and restores a slot (``POST /slots/{id}?action=save`` and
``?action=restore``, files in the server's ``--slot-save-path``).

A file is named after the model file (name, size, modification time) and the prefix's
exact text, so a changed prompt or model never restores a wrong state: it finds no file.
A file that does not restore (truncated, written by another llama.cpp build) is ignored,
deleted and reported; the caller then evaluates the prefix as it would without a cache.
A save goes to a temporary name first, so a run killed mid-save leaves no half file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import httpx

from terrarium.paths import cache_dir

__all__ = [
    "DEFAULT_MAX_BYTES",
    "PrefixCache",
    "RestoreOutcome",
    "SaveOutcome",
    "model_tag",
    "prefix_cache_dir",
]

DEFAULT_MAX_BYTES = 1 << 30
"""The most the saved prefixes may take on disk; the least recently used go first."""

SUFFIX = ".slot"


def prefix_cache_dir() -> Path:
    """Where saved prompt prefixes live: ``<user cache dir>/prefixes``."""
    return cache_dir() / "prefixes"


def model_tag(model_file: Path, layout: str = "") -> str:
    """A short name for this exact model file (its name, size and modification time) on a
    server of this ``layout`` (slots and context per slot).

    Hashing a model's bytes would cost more than the restore saves; a replaced file gets
    a new size or time, and so a new tag."""
    st = model_file.stat()
    ident = f"{model_file.name}\0{st.st_size}\0{st.st_mtime_ns}\0{layout}"
    return hashlib.sha256(ident.encode()).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class RestoreOutcome:
    """What a restore did: ``tokens`` restored in ``ms``; ``problem`` says why a file that
    was there could not be used (None when none was there or it restored)."""

    restored: bool
    tokens: int = 0
    ms: float = 0.0
    problem: str | None = None
    file: str = ""


@dataclass(frozen=True, slots=True)
class SaveOutcome:
    """What a save did: ``tokens`` written in ``ms``, or ``problem``."""

    saved: bool
    tokens: int = 0
    ms: float = 0.0
    problem: str | None = None


class PrefixCache:
    """Saves and restores the slots of one llama.cpp server started with
    ``--slot-save-path directory`` (the embedded server: ``slot_save_dir``).

    ``model_file`` identifies the model the states belong to. Never raises for a missing,
    stale or unreadable file, nor for a server that refuses: each is an outcome. The
    timeout is long because the server queues a save behind the prompt it is evaluating
    (another creature's whole prefix, at a first start).
    """

    def __init__(self, directory: Path, model_file: Path, base_url: str, *,
                 timeout: float = 120.0, max_bytes: int = DEFAULT_MAX_BYTES,
                 transport: httpx.AsyncBaseTransport | None = None, layout: str = "") -> None:
        self.directory = directory
        self.tag = model_tag(model_file, layout)
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_bytes = max_bytes
        self._transport = transport  # tests hand in a fake server

    def file_name(self, prefix: str) -> str:
        digest = hashlib.sha256(prefix.encode("utf-8")).hexdigest()[:32]
        return f"{self.tag}-{digest}{SUFFIX}"

    def path(self, prefix: str) -> Path:
        return self.directory / self.file_name(prefix)

    def _client(self) -> httpx.AsyncClient:
        # plain HTTP to a local server: no TLS context (building one costs ~30 ms a client)
        return httpx.AsyncClient(base_url=self.base_url, timeout=self.timeout, verify=False,
                                 transport=self._transport)

    async def restore(self, slot: int, prefix: str) -> RestoreOutcome:
        """Load the saved state of ``prefix`` into ``slot``, if there is one."""
        name = self.file_name(prefix)
        path = self.directory / name
        if not path.is_file():
            return RestoreOutcome(False, file=name)
        try:
            async with self._client() as http:
                resp = await http.post(f"/slots/{slot}", params={"action": "restore"},
                                       json={"filename": name})
            data = resp.json() if resp.status_code == 200 else None
        except (httpx.HTTPError, ValueError) as exc:
            return RestoreOutcome(False, problem=f"restore failed: {_describe(exc)}",
                                  file=name)
        if not isinstance(data, dict) or not data.get("n_restored"):
            why = _error_text(resp)
            self.discard(prefix)
            return RestoreOutcome(False, problem=f"unusable saved state, deleted ({why})",
                                  file=name)
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: pruned last
        ms = float((data.get("timings") or {}).get("restore_ms") or 0.0)
        return RestoreOutcome(True, tokens=int(data["n_restored"]), ms=ms, file=name)

    async def save(self, slot: int, prefix: str) -> SaveOutcome:
        """Save ``slot`` (which holds ``prefix`` evaluated) under ``prefix``'s name."""
        self.directory.mkdir(parents=True, exist_ok=True)
        final = self.file_name(prefix)
        part = f"{final}.{os.getpid()}.part"
        try:
            async with self._client() as http:
                resp = await http.post(f"/slots/{slot}", params={"action": "save"},
                                       json={"filename": part})
            data = resp.json() if resp.status_code == 200 else None
            if not isinstance(data, dict) or not data.get("n_saved"):
                raise ValueError(_error_text(resp))
            os.replace(self.directory / part, self.directory / final)
        except (httpx.HTTPError, ValueError, OSError) as exc:
            with contextlib.suppress(OSError):
                (self.directory / part).unlink()
            return SaveOutcome(False, problem=f"save failed: {_describe(exc)}")
        self.prune()
        ms = float((data.get("timings") or {}).get("save_ms") or 0.0)
        return SaveOutcome(True, tokens=int(data["n_saved"]), ms=ms)

    def discard(self, prefix: str) -> None:
        with contextlib.suppress(OSError):
            self.path(prefix).unlink()

    def prune(self) -> list[Path]:
        """Delete the least recently used saved states past ``max_bytes``; returns them."""
        try:
            files = [(p.stat().st_mtime, p.stat().st_size, p)
                     for p in self.directory.glob(f"*{SUFFIX}")]
        except OSError:
            return []
        files.sort(reverse=True)  # newest first
        total, gone = 0, []
        for _, size, p in files:
            total += size
            if total > self.max_bytes:
                with contextlib.suppress(OSError):
                    p.unlink()
                    gone.append(p)
        return gone


def _describe(exc: Exception) -> str:
    """One line, also for exceptions whose text is empty (httpx's timeouts)."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _error_text(resp: httpx.Response) -> str:
    try:
        data = resp.json()
    except ValueError:
        return f"HTTP {resp.status_code}"
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        return f"HTTP {resp.status_code}: {data['error'].get('message', '')}"
    return f"HTTP {resp.status_code}"
