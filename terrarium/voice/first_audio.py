"""The first-audio pause: stop the model while a spoken reply's first piece is synthesized.

On a shared CPU the model's decoding slows the synthesis that sets the time to first audio.
So the controller closes the model stream once the first piece is queued, and after its
synthesis continues the reply from a continuation request (the text so far as an assistant
prefill), which the server's prompt cache makes nearly free. It lives beside the tts sink
because only a sink that speaks (:class:`~terrarium.voice.sink.FirstPieceSink`) asks for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from terrarium.llm.base import ChatModel, supports_continuation
from terrarium.llm.types import ChatMessage, ChatRequest, Usage
from terrarium.llm.usage import joined_usage
from terrarium.voice.sink import FirstPieceSink, OutputSink

__all__ = ["FirstAudioPause", "ReplySoFar", "first_audio_pause"]


class ReplySoFar(Protocol):
    """What the pause reads of the round being streamed (the controller's round record)."""

    @property
    def text(self) -> Sequence[str]:
        """The plain text shown so far."""
        ...

    @property
    def raw(self) -> Sequence[str]:
        """Every text delta the model wrote so far, calls included."""
        ...

    @property
    def native(self) -> Mapping[int, Any]:
        """Native tool calls begun so far (a reply with any is never paused)."""
        ...


@dataclass(slots=True)
class FirstAudioPause:
    """Pause the model while the reply's first piece is synthesized (once per round)."""

    sink: FirstPieceSink
    model: ChatModel
    used: bool = False
    first_usage: Usage | None = None

    def ready(self, rnd: ReplySoFar) -> bool:
        """Pause now: the first piece awaits synthesis and the parser holds nothing back."""
        return (not self.used and not rnd.native and self.sink.first_piece_pending()
                and "".join(rnd.text) == "".join(rnd.raw))

    async def resume(self, request: ChatRequest, rnd: ReplySoFar) -> ChatRequest | None:
        """Wait for the first piece's audio; then the request that continues the reply.

        None when the paused call had already spent the whole ``max_tokens`` budget.
        """
        self.used = True
        self.first_usage = self.model.last_usage  # may be None after a closed stream
        await self.sink.wait_first_piece()
        spent = self.first_usage.completion_tokens if self.first_usage is not None else 0
        budget = request.max_tokens or getattr(self.model, "max_tokens", None)
        update: dict[str, Any] = {}
        if isinstance(budget, int) and spent:
            if spent >= budget:
                return None
            update["max_tokens"] = budget - spent  # the same cap as one uninterrupted reply
        messages = list(request.messages)
        if messages and messages[-1].role == "assistant":
            messages.pop()  # the request's own prefill: rnd.raw starts with it
        messages.append(ChatMessage(role="assistant", content="".join(rnd.raw)))
        update["messages"] = messages
        return request.model_copy(update=update)

    def usage(self, last: Usage | None) -> Usage | None:
        """The round's usage: the paused call's joined with its continuation's."""
        if not self.used:
            return last
        if last is self.first_usage:  # no continuation was made
            return last
        return joined_usage(self.first_usage, last)


def first_audio_pause(sink: OutputSink | None, model: ChatModel) -> FirstAudioPause | None:
    """A pause for one round, when the sink asks for one and the model can continue."""
    # (the attribute first: a runtime-checkable protocol's isinstance is slow, and every
    # turn of every creature asks, most with no voice)
    if (getattr(sink, "yield_first_audio", False) and isinstance(sink, FirstPieceSink)
            and supports_continuation(model)):
        return FirstAudioPause(sink, model)
    return None
