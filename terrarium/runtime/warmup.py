"""Making a team ready before its first turn, as fast as it can be made ready.

Two things make a creature's first reply slow: its prompt prefix not yet evaluated in its
llama.cpp slot, and its voice not yet loaded. Warm-up does both ahead of the first
message, at once: the voice loads while the prefix is restored from the state a previous
run saved (``llm/prefix_cache.py``), or evaluated and then saved for the next start. The
voice does not load while the model does: on two cores the two only slow each other
(measured: model 0.53 s and voice 0.36 s one after the other, 0.9-1.5 s for both at
once). Progress goes out as typed events (for the console and the monitor) and
transcript notices. A failure here only costs the speed-up, never the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import anyio

from terrarium.channels.bus import EventBus
from terrarium.controller.loop import Controller
from terrarium.events import (
    CreatureWarmed,
    CreatureWarming,
    PrefixCacheProblem,
    PrefixRestored,
    TeamReady,
)
from terrarium.llm.base import keeps_prompt_cache
from terrarium.llm.prefix_cache import PrefixCache
from terrarium.prompt.tail import TailState
from terrarium.runtime.creature import RunningCreature
from terrarium.runtime.recording import Recorder
from terrarium.voice.sink import OutputSink

__all__ = ["RESTORE_SLACK", "WarmUp", "prefix_text"]

RESTORE_SLACK = 4
"""Tokens a warm request may still evaluate after a restore that worked (llama.cpp always
evaluates the last one again); more means the restored state was not this prefix."""


def prefix_text(controller: Controller) -> str | None:
    """The prompt prefix ``Controller.warm_prefix`` sends (its system message), or None."""
    first = controller.builder.build(TailState(step=0, status=False)).messages()[0]
    if first.get("role") != "system":
        return None
    content = first.get("content")
    return content if isinstance(content, str) else None


class WarmUp:
    """Warms the creatures that listen; publishes ``TeamReady`` when all of them are
    (with none to warm, the caller says the team is ready).

    ``sinks``, ``cache`` and ``cached`` (which models talk to the cache's server) are set
    once the wiring is done; ``creature`` then warms one creature.
    """

    def __init__(self, creatures: Mapping[str, RunningCreature], *, recorder: Recorder,
                 bus: EventBus, started_at: float,
                 clock: Callable[[], float] = time.time) -> None:
        self.recorder = recorder
        self.bus = bus
        self.started_at = started_at
        self.clock = clock
        self.listening = {n for n, c in creatures.items() if c.parts.cdef.listen}
        self.pending = set(self.listening)
        self.sinks: Mapping[str, Mapping[str, OutputSink]] = {}
        self.cache: PrefixCache | None = None
        self.cached: Callable[[Any], bool] = lambda model: False

    # ------------------------------------------------------------------ creatures
    async def creature(self, c: RunningCreature) -> None:
        """Make ``c`` ready: its voices load while its prefix is restored or evaluated
        (and saved). Never raises for what only costs speed."""
        if c.name not in self.pending:
            return
        began = self.clock()
        self.bus.publish(CreatureWarming(creature=c.name, prefix_tokens=_prefix_tokens(c)))
        how, tokens, saved = "none", 0, False
        voice_notes: list[str] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._voices, self.sinks.get(c.name, {}), voice_notes)
            try:
                if c.controller is not None:
                    how, tokens, saved = await self._prefix(c, c.controller)
            except Exception as exc:  # the first turn will simply be slower
                self._note(c, f"warm-up skipped: {_why(exc)}")
        for note in voice_notes:
            self._note(c, note)
        self.bus.publish(CreatureWarmed(creature=c.name, seconds=self.clock() - began,
                                        prefix=how, tokens=tokens,  # type: ignore[arg-type]
                                        saved=saved))
        self.pending.discard(c.name)
        if not self.pending:
            self._ready()

    async def _voices(self, sinks: Mapping[str, OutputSink], notes: list[str]) -> None:
        """Load each voice (Piper: its model and a throwaway word), noting how long."""
        try:
            for sink in sinks.values():
                warm = getattr(sink, "warm", None)
                if warm is not None:
                    seconds = await warm()
                    notes.append(f"voice warmed in {seconds * 1000:.0f} ms")
        except Exception as exc:  # the first sentence will simply be slower
            notes.append(f"warm-up skipped: {_why(exc)}")

    async def _prefix(self, c: RunningCreature, ctl: Controller) -> tuple[str, int, bool]:
        if not keeps_prompt_cache(ctl.model):
            return "none", 0, False
        cache = self.cache if self.cached(ctl.model) and ctl.slot is not None else None
        text = prefix_text(ctl) if cache is not None else None
        restored = None
        if cache is not None and text is not None and ctl.slot is not None:
            got = await cache.restore(ctl.slot, text)
            if got.problem:
                self._problem(c, got.problem)
            if got.restored:
                restored = got
        usage = await ctl.warm_prefix()
        if usage is None:
            return "none", 0, False
        evaluated = usage.prompt_n if usage.prompt_n is not None else usage.prompt_tokens
        if restored is not None:
            if evaluated <= RESTORE_SLACK:
                self.bus.publish(PrefixRestored(creature=c.name, tokens=restored.tokens,
                                                ms=restored.ms))
                self._note(c, f"prompt prefix restored from cache: {restored.tokens} tokens "
                           f"in {restored.ms:.0f} ms")
                return "restored", restored.tokens, False
            self._problem(c, f"the saved state did not match the prompt prefix "
                          f"({evaluated} tokens evaluated after the restore)")
        self._note(c, f"prompt prefix warmed: {evaluated} tokens in "
                   f"{usage.prompt_ms or 0:.0f} ms")
        saved = False
        if cache is not None and text is not None and ctl.slot is not None:
            out = await cache.save(ctl.slot, text)
            saved = out.saved
            if out.problem:
                self._problem(c, out.problem)
        return "evaluated", usage.prompt_tokens or evaluated, saved

    # ------------------------------------------------------------------ reporting
    def _ready(self) -> None:
        self.bus.publish(TeamReady(seconds=max(0.0, self.clock() - self.started_at)))

    def _note(self, c: RunningCreature, text: str) -> None:
        self.recorder.entry(c.name, "notice", text, c.turns)

    def _problem(self, c: RunningCreature, problem: str) -> None:
        self.bus.publish(PrefixCacheProblem(creature=c.name, problem=problem))
        self._note(c, f"prompt prefix cache: {problem}")


def _prefix_tokens(c: RunningCreature) -> int:
    """The estimated size of the prefix warm-up will evaluate (0: nothing to evaluate), so
    the console can say how big the step it is waiting for is."""
    ctl = c.controller
    if ctl is None or not keeps_prompt_cache(ctl.model):
        return 0
    return int(getattr(ctl.builder, "prefix_tokens", 0) or 0)


def _why(exc: BaseException) -> str:
    """The first real error inside task-group wrappers, as one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {getattr(exc, 'message', exc)}"
