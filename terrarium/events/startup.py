"""The events of a team's start: the embedded model loading, MCP servers starting, model
retries, each creature's warm-up (prompt prefix restored or evaluated, voice ready) and
``TeamReady``, when the team takes input."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from terrarium.events.core import Event


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelLoading(Event):
    """The embedded model started loading: nothing can answer until it has."""

    kind: ClassVar[str] = "model_loading"
    model: str
    slots: int


@dataclass(frozen=True, slots=True, kw_only=True)
class McpStarting(Event):
    """The team's MCP servers are starting (``servers``: ``creature/server`` names);
    nothing runs until they are up and have listed their tools."""

    kind: ClassVar[str] = "mcp_starting"
    servers: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class McpStarted(Event):
    """The team's MCP servers are up, ``seconds`` after they began starting."""

    kind: ClassVar[str] = "mcp_started"
    seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRetry(Event):
    """A model call failed and is tried again after ``delay`` seconds: ``reason`` says
    why, ``url`` where (so a server that is down is named, never a silent wait)."""

    kind: ClassVar[str] = "model_retry"
    creature: str
    url: str
    attempt: int
    delay: float
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelLoaded(Event):
    """The embedded model is loaded and serving, ``seconds`` after it started loading."""

    kind: ClassVar[str] = "model_loaded"
    model: str
    seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatureWarming(Event):
    """A creature's prompt prefix and voice are being made ready for its first turn."""

    kind: ClassVar[str] = "creature_warming"
    creature: str
    prefix_tokens: int = 0  # the prompt prefix to evaluate (an estimate; 0: none)


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefixRestored(Event):
    """The creature's evaluated prompt prefix came back from the cache of a previous run."""

    kind: ClassVar[str] = "prefix_restored"
    creature: str
    tokens: int
    ms: float


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefixProgress(Event):
    """A creature's prompt prefix is being evaluated: ``done`` of ``total`` tokens so far
    (as the model server reports it, batch by batch)."""

    kind: ClassVar[str] = "prefix_progress"
    creature: str
    done: int
    total: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefixCacheProblem(Event):
    """A saved prompt prefix could not be used or written; the prefix is evaluated as
    without a cache (``problem`` says what happened; never fatal)."""

    kind: ClassVar[str] = "prefix_cache_problem"
    creature: str
    problem: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatureWarmed(Event):
    """A creature is ready: ``prefix`` tells how its prompt prefix got into its slot
    (``restored`` from the cache, ``evaluated`` now, or ``none`` for a model without a
    prompt cache); ``saved``: the evaluated prefix was saved for the next start."""

    kind: ClassVar[str] = "creature_warmed"
    creature: str
    seconds: float
    prefix: Literal["restored", "evaluated", "none"] = "none"
    tokens: int = 0
    saved: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TeamReady(Event):
    """The team takes input: ``seconds`` since the run started. Prompt prefixes the cache
    held are in their slots; voices and prefixes evaluated anew follow while it listens
    (each creature's ``CreatureWarmed`` says when)."""

    kind: ClassVar[str] = "team_ready"
    seconds: float


__all__ = [
    "CreatureWarmed",
    "CreatureWarming",
    "McpStarted",
    "McpStarting",
    "ModelLoaded",
    "ModelLoading",
    "ModelRetry",
    "PrefixCacheProblem",
    "PrefixProgress",
    "PrefixRestored",
    "TeamReady",
]
