"""Lifecycle plugins: Python code named in a creature's config, hooked into its turn loop.

A plugin subclasses :class:`Plugin` and overrides the hooks it needs: before and after each
model call (``before_model`` may return an edited request), before a tool call
(``before_tool`` may veto it with a reason the model reads as the call's result), after a
tool call (``after_tool`` may return an edited result), on each incoming message and at
turn end. Plugins run ordered by priority, then name (like prompt plugins).

A plugin that raises is isolated: the hook is skipped for it, a :class:`PluginFailed` event
records what happened, and the turn goes on. The loop itself only calls :class:`Hooks`;
everything about loading, ordering and isolation lives here.

Two plugins ship: :class:`ToolBudget` (at most N tool calls per turn) and :class:`Redactor`
(masks configured patterns and the values of named environment variables in tool output).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import anyio
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from terrarium import secrecy
from terrarium.config.models import LifecyclePluginConfig
from terrarium.controller.incoming import Incoming
from terrarium.errors import ConfigError
from terrarium.events import Event, PluginFailed, TranscriptAppended, TranscriptEntry
from terrarium.llm.types import ChatRequest, Usage
from terrarium.tools.base import Tool, ToolContext
from terrarium.tools.runner import ToolResult, run_tool

__all__ = [
    "BUILTIN_PLUGINS",
    "Hooks",
    "ModelReply",
    "Plugin",
    "Redactor",
    "ToolBudget",
    "ToolCallInfo",
    "TurnInfo",
    "load_plugins",
]


@dataclass(frozen=True, slots=True)
class TurnInfo:
    """Where a hook is called from: which creature, which turn."""

    creature: str
    turn: int


@dataclass(frozen=True, slots=True)
class ModelReply:
    """What one model call returned, as an ``after_model`` hook sees it."""

    text: str
    usage: Usage | None
    finish_reason: str | None


@dataclass(frozen=True, slots=True)
class ToolCallInfo:
    """A tool call as the tool hooks see it (``args`` as the model wrote them)."""

    name: str
    args: Mapping[str, Any]


class Plugin:
    """Subclass and override the hooks you need; each is async and may be left alone.

    ``options`` are the plugin's ``options:`` from config; ``name`` and ``priority`` are
    set from config when given there (priority: lower first; ties by name).
    """

    name: ClassVar[str] = "plugin"
    priority: int = 100

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        self.options: dict[str, Any] = dict(options or {})

    async def on_message(self, turn: TurnInfo, incoming: Incoming) -> None:
        """An incoming message (or user text) is about to be read by the model."""

    async def before_model(self, turn: TurnInfo, request: ChatRequest) -> ChatRequest | None:
        """Before each model call; return a changed request to send that one instead."""
        return None

    async def after_model(self, turn: TurnInfo, request: ChatRequest, reply: ModelReply) -> None:
        """After each model call, with what it wrote."""

    async def before_tool(self, turn: TurnInfo, call: ToolCallInfo) -> str | None:
        """Before a tool runs; return a reason to veto it (the model reads the reason)."""
        return None

    async def after_tool(self, turn: TurnInfo, call: ToolCallInfo,
                         result: ToolResult) -> ToolResult | None:
        """After a tool ran; return a changed result to give the model that one instead."""
        return None

    async def on_turn_end(self, turn: TurnInfo, result: Any) -> None:
        """The turn is over; ``result`` is its ``TurnResult``."""


# -- the shipped plugins ----------------------------------------------------------------


class _BudgetOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_calls: int = Field(8, ge=0, description="Tool calls allowed per turn.")


class ToolBudget(Plugin):
    """At most ``max_calls`` tool calls per turn; later ones are vetoed with a reason, so a
    small model stuck calling the same tool gets told to answer instead."""

    name: ClassVar[str] = "tool_budget"

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        self.settings = _BudgetOptions.model_validate(self.options)
        self.used = 0
        self.turn = -1

    async def before_tool(self, turn: TurnInfo, call: ToolCallInfo) -> str | None:
        if turn.turn != self.turn:
            self.turn, self.used = turn.turn, 0
        if self.used >= self.settings.max_calls:
            return (f"the tool-call budget of {self.settings.max_calls} per turn is used up; "
                    "answer with what you have")
        self.used += 1
        return None


class _RedactorOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    patterns: list[str] = Field(default_factory=list, description="Regexes to mask.")
    env: list[str] = Field(default_factory=list,
                           description="Environment variables whose values are masked.")
    mask: str = Field("[redacted]", description="What a secret is replaced with.")


class Redactor(Plugin):
    """Masks secrets in tool output before the model (and the log) sees them: matches of
    configured patterns and the values of named environment variables."""

    name: ClassVar[str] = "redactor"

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        self.settings = _RedactorOptions.model_validate(self.options)
        try:
            self.patterns = [re.compile(p) for p in self.settings.patterns]
        except re.error as exc:
            raise ValueError(f"a redactor pattern does not compile: {exc}") from exc

    def redact(self, text: str) -> str:
        # read the environment at use: a secret set after start is still masked
        values = sorted((v for k in self.settings.env if (v := secrecy.env(k))),
                        key=len, reverse=True)
        for v in values:
            text = text.replace(v, self.settings.mask)
        for p in self.patterns:
            text = p.sub(self.settings.mask, text)
        return text

    async def after_tool(self, turn: TurnInfo, call: ToolCallInfo,
                         result: ToolResult) -> ToolResult | None:
        masked = self.redact(result.text)
        return None if masked == result.text else ToolResult(ok=result.ok, text=masked)


BUILTIN_PLUGINS: Mapping[str, type[Plugin]] = {"tool_budget": ToolBudget, "redactor": Redactor}


# -- loading ----------------------------------------------------------------------------


def _plugin_class(ref: str) -> type[Plugin]:
    if ref in BUILTIN_PLUGINS:
        return BUILTIN_PLUGINS[ref]
    mod_name, _, cls_name = ref.partition(":")
    if not cls_name:
        raise ConfigError(f"plugin {ref!r} is neither a shipped plugin nor `module:Class`",
                          suggestion=f"one of {', '.join(BUILTIN_PLUGINS)}, or "
                          "`package.module:Class`")
    try:
        cls = getattr(importlib.import_module(mod_name), cls_name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"plugin {ref!r} cannot be loaded: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, Plugin)):
        raise ConfigError(f"plugin {ref!r} is not a terrarium.controller.plugins.Plugin")
    return cls


def load_plugins(configs: Sequence[LifecyclePluginConfig]) -> list[Plugin]:
    """Instantiate the configured plugins, ordered by priority, then name."""
    out: list[Plugin] = []
    for cfg in configs:
        cls = _plugin_class(cfg.module)
        try:
            plugin = cls(cfg.options)
        except (ValidationError, ValueError, TypeError) as exc:
            raise ConfigError(f"plugin {cfg.module!r} refused its options: {exc}") from exc
        if cfg.name:
            plugin.name = cfg.name  # type: ignore[misc]
        plugin.priority = cfg.priority
        out.append(plugin)
    names = [p.name for p in out]
    if dup := sorted({n for n in names if names.count(n) > 1}):
        raise ConfigError(f"plugin {dup[0]!r} is declared twice",
                          suggestion="give one of them its own `name:`")
    return sorted(out, key=lambda p: (p.priority, p.name))


# -- dispatch ---------------------------------------------------------------------------

ToolRunner = Callable[[Tool | type[Tool], Any, ToolContext], Awaitable[ToolResult]]
Starter = Callable[
    [str, Mapping[str, Any], Callable[[ToolContext], Awaitable[ToolResult]], ToolContext],
    Awaitable[ToolResult | None]]


def _not_cancelled(exc: BaseException) -> None:
    """Re-raise cancellation (a cancel scope must still stop a hook); anything else a plugin
    raises, ``SystemExit`` and ``KeyboardInterrupt`` included, is isolated like a tool's."""
    cancelled = anyio.get_cancelled_exc_class()
    if isinstance(exc, cancelled) or (
            isinstance(exc, BaseExceptionGroup) and exc.subgroup(cancelled) is not None):
        raise exc


class Hooks:
    """What the loop calls at each point of a turn; runs every plugin in order, isolated.

    ``tool_runner`` is what actually runs a tool once no plugin vetoed it (by default
    ``run_tool``; the controller hands in one that may start a background job instead).
    """

    def __init__(self, plugins: Sequence[Plugin], *, creature: str,
                 emit: Callable[[Event], None], tool_runner: ToolRunner | None = None) -> None:
        self.plugins = list(plugins)
        self.creature = creature
        self.emit = emit
        self.tool_runner: ToolRunner = tool_runner or run_tool
        self.turn = TurnInfo(creature, 0)
        self.listeners: list[Callable[[bool], None]] = []  # told when a turn starts/ends
        # may take a vetted call to run it elsewhere (jobs.py): its result, or None to run here
        self.starter: Starter | None = None

    def _failed(self, plugin: Plugin, hook: str, exc: BaseException) -> None:
        error = f"{type(exc).__name__}: {exc}"
        self.emit(PluginFailed(creature=self.creature, plugin=plugin.name, hook=hook,
                               error=error))
        entry = TranscriptEntry("error", f"plugin {plugin.name} failed in {hook}: {error}",
                                0.0, self.turn.turn, name=plugin.name)
        self.emit(TranscriptAppended(creature=self.creature, entry=entry))

    async def turn_start(self, turn: int, inputs: Sequence[Incoming]) -> None:
        self.turn = TurnInfo(self.creature, turn)
        for listener in self.listeners:
            listener(True)
        for item in inputs:
            for p in self.plugins:
                try:
                    await p.on_message(self.turn, item)
                except BaseException as exc:  # SystemExit too: a plugin's, not ours
                    _not_cancelled(exc)
                    self._failed(p, "on_message", exc)

    async def before_model(self, request: ChatRequest) -> ChatRequest:
        for p in self.plugins:
            try:
                changed = await p.before_model(self.turn, request)
            except BaseException as exc:  # SystemExit too: a plugin's, not ours
                _not_cancelled(exc)
                self._failed(p, "before_model", exc)
                continue
            if changed is not None:
                request = changed
        return request

    async def after_model(self, request: ChatRequest, text: str, usage: Usage | None,
                          finish_reason: str | None) -> None:
        reply = ModelReply(text, usage, finish_reason)
        for p in self.plugins:
            try:
                await p.after_model(self.turn, request, reply)
            except BaseException as exc:  # SystemExit too: a plugin's, not ours
                _not_cancelled(exc)
                self._failed(p, "after_model", exc)

    async def run_tool(self, tool: Tool | type[Tool], args: Any, ctx: ToolContext) -> ToolResult:
        """``before_tool`` (a veto ends here) → the tool → ``after_tool``."""
        name = getattr(tool, "name", type(tool).__name__)
        raw = args.model_dump(mode="json") if isinstance(args, BaseModel) else dict(args)
        call = ToolCallInfo(name, raw)
        for p in self.plugins:
            try:
                reason = await p.before_tool(self.turn, call)
            except BaseException as exc:  # SystemExit too: a plugin's, not ours
                _not_cancelled(exc)
                self._failed(p, "before_tool", exc)
                continue
            if reason:
                return ToolResult(ok=False, text=f"Vetoed by {p.name}: {reason}")

        async def full(run_ctx: ToolContext) -> ToolResult:
            result = await self.tool_runner(tool, args, run_ctx)
            for p in self.plugins:
                try:
                    changed = await p.after_tool(self.turn, call, result)
                except BaseException as exc:  # SystemExit too: a plugin's, not ours
                    _not_cancelled(exc)
                    self._failed(p, "after_tool", exc)
                    continue
                if changed is not None:
                    result = changed
            return result

        if self.starter is not None:  # a background job: the result comes later
            started = await self.starter(name, raw, full, ctx)
            if started is not None:
                return started
        return await full(ctx)

    async def turn_end(self, result: Any) -> None:
        for p in self.plugins:
            try:
                await p.on_turn_end(self.turn, result)
            except BaseException as exc:  # SystemExit too: a plugin's, not ours
                _not_cancelled(exc)
                self._failed(p, "on_turn_end", exc)

    def turn_over(self) -> None:
        """The turn has ended, however it ended (called from the loop's ``finally``)."""
        for listener in self.listeners:
            listener(False)
