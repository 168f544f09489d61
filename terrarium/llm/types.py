"""The wire-neutral shapes every model speaks: messages, requests, stream deltas, usage.

One set of pydantic models is shared by the HTTP client, the embedded server and the scripted
model, so the controller loop never needs to know which backend answered.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Role = Literal["system", "user", "assistant", "tool"]


class ToolCallFunction(BaseModel):
    """The function half of a native tool call; ``arguments`` is JSON text, as on the wire."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: str = "{}"


class ToolCall(BaseModel):
    """A complete native tool call as carried in an assistant message."""

    model_config = ConfigDict(extra="forbid")

    id: str
    type: Literal["function"] = "function"
    function: ToolCallFunction


class ChatMessage(BaseModel):
    """One chat message; ``tool_call_id`` answers a native call, ``tool_calls`` makes them."""

    model_config = ConfigDict(extra="forbid")

    role: Role
    content: str | None = ""
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: list[ToolCall] | None = None

    def to_wire(self) -> dict[str, Any]:
        """The OpenAI JSON form: unset optional fields are left out, not sent as null."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.name is not None:
            out["name"] = self.name
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.tool_calls:
            out["tool_calls"] = [c.model_dump() for c in self.tool_calls]
        return out


class ChatRequest(BaseModel):
    """One completion request. ``None`` means "use the model's configured default".

    ``grammar``, ``id_slot`` and ``cache_prompt`` are llama.cpp extensions; clients for other
    backends leave them out of the wire body.
    """

    model_config = ConfigDict(extra="forbid")

    messages: list[ChatMessage]
    temperature: float | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    stop: list[str] | None = None
    grammar: str | None = None
    json_schema: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None
    id_slot: int | None = None
    cache_prompt: bool = True
    seed: int | None = None
    # the reply is one of these values: a model that can score them (llama.cpp) answers
    # with the most likely one instead of sampling (see terrarium.llm.choice)
    choices: list[str] | None = None
    # token id -> a bias added to its logit (OpenAI's ``logit_bias``; -100 all but bans
    # it): the ids are the model's own (``token_pieces`` of a model that has it)
    logit_bias: dict[int, float] | None = None
    presence_penalty: float | None = None  # OpenAI's: against any token already in the text

    @model_validator(mode="after")
    def _one_constraint(self) -> ChatRequest:
        if self.grammar is not None and self.json_schema is not None:
            raise ValueError(
                "a request may constrain output by grammar or by json_schema, not both"
            )
        return self


class ToolCallDelta(BaseModel):
    """A fragment of a native tool call; fragments with the same ``index`` concatenate."""

    model_config = ConfigDict(extra="forbid")

    index: int = 0
    id: str | None = None
    name: str | None = None
    arguments: str = ""


class StreamDelta(BaseModel):
    """One streamed piece of a response: text, call fragments, or the finish reason."""

    model_config = ConfigDict(extra="forbid")

    text: str = ""
    tool_calls: list[ToolCallDelta] = Field(default_factory=list)
    finish_reason: str | None = None
    # a reasoning model's thinking (``reasoning_content``): never part of the reply
    reasoning: str = ""


class Usage(BaseModel):
    """What one call cost, as reported by the backend plus the client's own clock.

    ``cached_tokens`` is how much of the prompt the backend reused from its cache (OpenAI's
    ``prompt_tokens_details.cached_tokens`` or llama.cpp's ``timings.cache_n``);
    ``prompt_n`` is llama.cpp's count of prompt tokens actually evaluated this call.
    """

    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    prompt_n: int | None = None
    prompt_ms: float | None = None
    predicted_ms: float | None = None
    ttft_ms: float | None = None
    total_ms: float | None = None
    attempts: int = 1

    @property
    def tokens_per_second(self) -> float | None:
        """Generation speed from the backend's own timing, when it reports one."""
        if not self.predicted_ms or not self.completion_tokens:
            return None
        return self.completion_tokens / (self.predicted_ms / 1000.0)


__all__ = [
    "ChatMessage",
    "ChatRequest",
    "Role",
    "StreamDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolCallFunction",
    "Usage",
]
