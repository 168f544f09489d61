"""A voice's warm-up word and its replies, in order: the word never follows a reply.

Loading Piper and synthesizing a throwaway word makes the first reply as fast as the later
ones, but a team takes input before its voices are warm (docs/voice.md). The order of the
word and a first reply was left to the scheduler, and on a loaded machine the word came
after the reply, sharing the cores with it. Here a reply that begins while the word is
under way waits for it, and a voice already speaking a reply is not warmed at all.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio

from terrarium.voice.synth import AudioClip

__all__ = ["Warmth"]


class Warmth:
    """The warm-up state of one voice (``synthesize``: its text → audio, blocking)."""

    def __init__(self, synthesize: Callable[[str], AudioClip],
                 clock: Callable[[], float]) -> None:
        self._synthesize = synthesize
        self._clock = clock
        self._warming: anyio.Event | None = None  # set once the word is done
        self._used = False  # a reply's synthesis has begun: warming it is no use now

    async def warm(self) -> float | None:
        """Synthesize the throwaway word: the seconds it took, 0.0 when warmed already, or
        None when a reply's synthesis began first (the reply loaded the voice)."""
        if self._warming is not None:
            await self._warming.wait()
            return 0.0
        if self._used:
            return None
        self._warming = anyio.Event()
        start = self._clock()
        try:
            await anyio.to_thread.run_sync(self._synthesize, "Hello.")
        finally:
            self._warming.set()
        return self._clock() - start

    async def reply(self, text: str) -> AudioClip:
        """A reply's text synthesized in a worker thread, after the word if under way."""
        self._used = True
        if self._warming is not None:
            await self._warming.wait()
        return await anyio.to_thread.run_sync(self._synthesize, text)
