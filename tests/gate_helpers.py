"""Turns that compute, for the turn gate's tests (runtime and serve): each step is a
checkpoint that is ready again at once, so the gate stays with the turn taking it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import anyio.lowlevel

from terrarium.llm.scripted import ScriptedModel
from terrarium.llm.types import ChatRequest, StreamDelta


async def computing(log: list[str], name: str, steps: int) -> None:
    """``steps`` steps, each logged as ``name`` and its number."""
    for i in range(steps):
        log.append(f"{name}{i}")
        await anyio.lowlevel.checkpoint()  # ready again at once: the gate stays


class Computing(ScriptedModel):
    """A model that computes: ``steps`` checkpoints (ready again at once) before it
    answers, each counted in ``counter``."""

    def __init__(self, counter: list[int], steps: int) -> None:
        super().__init__(default_reply="Heard you.")
        self.counter = counter
        self.work = steps

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        for _ in range(self.work):
            self.counter[0] += 1
            await anyio.lowlevel.checkpoint()
        async for delta in super().stream(request):
            yield delta
