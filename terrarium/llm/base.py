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
    """

    name: str
    last_usage: Usage | None

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]: ...

    def describe(self) -> str:
        """A one-line human description (backend, model, slot); never contains secrets."""
        ...
