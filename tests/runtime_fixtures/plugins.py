"""Lifecycle plugins used by the plugin tests (named by dotted path in configs).

Each records the hooks it saw on a class-level list, so a test can check order and
arguments without timing anything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from terrarium.controller.incoming import Incoming
from terrarium.controller.plugins import ModelReply, Plugin, ToolCallInfo, TurnInfo
from terrarium.llm.types import ChatMessage, ChatRequest
from terrarium.tools.runner import ToolResult


class Recorder(Plugin):
    """Sees every hook; tags the request so the test can find its edit in the model's input."""

    name = "recorder"
    seen: ClassVar[list[tuple[str, Any]]] = []

    async def on_message(self, turn: TurnInfo, incoming: Incoming) -> None:
        self.seen.append(("on_message", incoming.text))

    async def before_model(self, turn: TurnInfo, request: ChatRequest) -> ChatRequest | None:
        self.seen.append(("before_model", turn.turn))
        tag = self.options.get("tag")
        if not tag:
            return None
        return request.model_copy(update={"messages": [
            *request.messages, ChatMessage(role="user", content=str(tag))]})

    async def after_model(self, turn: TurnInfo, request: ChatRequest, reply: ModelReply) -> None:
        self.seen.append(("after_model", reply.text))

    async def before_tool(self, turn: TurnInfo, call: ToolCallInfo) -> str | None:
        self.seen.append(("before_tool", (call.name, dict(call.args))))
        return None

    async def after_tool(self, turn: TurnInfo, call: ToolCallInfo,
                         result: ToolResult) -> ToolResult | None:
        self.seen.append(("after_tool", result.text))
        return ToolResult(ok=result.ok, text=result.text.upper())

    async def on_turn_end(self, turn: TurnInfo, result: Any) -> None:
        self.seen.append(("on_turn_end", result.text))


class Veto(Plugin):
    name = "veto"

    async def before_tool(self, turn: TurnInfo, call: ToolCallInfo) -> str | None:
        return f"{call.name} is not allowed today" if call.name in self.options["deny"] else None


class Crash(Plugin):
    """Raises in every hook: the turn must go on without it."""

    name = "crash"
    error: ClassVar[Callable[[str], BaseException]] = RuntimeError

    async def on_message(self, turn: TurnInfo, incoming: Incoming) -> None:
        raise self.error("on_message boom")

    async def before_model(self, turn: TurnInfo, request: ChatRequest) -> ChatRequest | None:
        raise self.error("before_model boom")

    async def after_model(self, turn: TurnInfo, request: ChatRequest, reply: ModelReply) -> None:
        raise self.error("after_model boom")

    async def before_tool(self, turn: TurnInfo, call: ToolCallInfo) -> str | None:
        raise self.error("before_tool boom")

    async def after_tool(self, turn: TurnInfo, call: ToolCallInfo,
                         result: ToolResult) -> ToolResult | None:
        raise self.error("after_tool boom")

    async def on_turn_end(self, turn: TurnInfo, result: Any) -> None:
        raise self.error("on_turn_end boom")


class Quit(Crash):
    """``sys.exit`` in every hook (SystemExit is a BaseException, not an Exception)."""

    name = "quit"
    error = SystemExit


class Interrupt(Crash):
    name = "interrupt"
    error = KeyboardInterrupt


class Order(Plugin):
    name = "order"
    calls: ClassVar[list[str]] = []

    async def on_message(self, turn: TurnInfo, incoming: Incoming) -> None:
        self.calls.append(self.name)
