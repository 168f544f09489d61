"""Folding a stream of deltas back into one response, for callers that do not stream."""

from __future__ import annotations

from dataclasses import dataclass, field

from terrarium.llm.base import ChatModel
from terrarium.llm.types import ChatRequest, StreamDelta, ToolCall, ToolCallFunction, Usage


@dataclass(slots=True)
class _PartialCall:
    id: str | None = None
    name: str = ""
    arguments: str = ""


@dataclass(slots=True)
class Completion:
    """A whole response: its text, its native tool calls, why it stopped and what it cost."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage | None = None


@dataclass(slots=True)
class DeltaAccumulator:
    """Feeds on deltas; call fragments are joined by index, as OpenAI streams them."""

    _text: list[str] = field(default_factory=list)
    _calls: dict[int, _PartialCall] = field(default_factory=dict)
    finish_reason: str | None = None

    def add(self, delta: StreamDelta) -> None:
        if delta.text:
            self._text.append(delta.text)
        for frag in delta.tool_calls:
            part = self._calls.setdefault(frag.index, _PartialCall())
            if frag.id:
                part.id = frag.id
            if frag.name:
                part.name += frag.name
            part.arguments += frag.arguments
        if delta.finish_reason:
            self.finish_reason = delta.finish_reason

    def result(self, usage: Usage | None = None) -> Completion:
        calls = [
            ToolCall(
                id=p.id or f"call_{i}",
                function=ToolCallFunction(name=p.name, arguments=p.arguments or "{}"),
            )
            for i, p in sorted(self._calls.items())
        ]
        return Completion("".join(self._text), calls, self.finish_reason, usage)


async def complete(model: ChatModel, request: ChatRequest) -> Completion:
    """Run one request to the end and return the assembled response."""
    acc = DeltaAccumulator()
    async for delta in model.stream(request):
        acc.add(delta)
    return acc.result(model.last_usage)


__all__ = [
    "Completion",
    "DeltaAccumulator",
    "complete",
]
