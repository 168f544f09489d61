"""The one interface the controller loop talks to, whatever the backend is."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from terrarium.llm.types import ChatRequest, StreamDelta, Usage


@runtime_checkable
class ChatModel(Protocol):
    """A streaming chat model.

    ``stream`` is an async generator of deltas; when it finishes, ``last_usage`` holds the
    usage of that call. Errors are raised as :class:`terrarium.errors.ModelError`.

    Optional capability, read with :func:`supports_continuation`: a model whose
    ``supports_continuation`` is true continues a reply when the request ends with an
    assistant message (a prefill), streaming only the new text. The controller uses it to
    pause a local model while the first sentence of a reply is synthesized.

    Another, read with :func:`keeps_prompt_cache`: a model whose ``llama_cpp`` is true
    talks to a server that keeps each slot's evaluated prompt, so the runtime can have a
    creature's prompt prefix evaluated before its first turn.
    """

    name: str
    last_usage: Usage | None

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]: ...

    def describe(self) -> str:
        """A one-line human description (backend, model, slot); never contains secrets."""
        ...


def supports_continuation(model: object) -> bool:
    """Whether ``model`` can continue a reply from a trailing assistant message."""
    return bool(getattr(model, "supports_continuation", False))


def keeps_prompt_cache(model: object) -> bool:
    """Whether ``model``'s server keeps a per-slot prompt cache (llama.cpp)."""
    return bool(getattr(model, "llama_cpp", False))


__all__ = [
    "ChatModel",
    "keeps_prompt_cache",
    "supports_continuation",
]
