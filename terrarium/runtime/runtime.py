"""The terrarium runtime: wires a validated team, runs its creatures, supervises, records.

One task group holds everything: the channel hub (with its log writer), the event recorder,
each TTS output's workers, and one supervised loop per creature. A creature wakes on its
inbox; the user speaks through the input channel (or to the optional root creature, which
operates the team with team tools). Every message is logged before delivery and marked
consumed when the turn that read it ends, so a run killed at any point can be resumed with
``RuntimeOptions(resume=RUN_ID)`` (``terrarium run --resume``) and each message is consumed
exactly once.
"""

from __future__ import annotations

import contextlib
import logging
import random
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
from pydantic import ValidationError

from terrarium.channels.bus import EventBus
from terrarium.channels.envelope import Envelope
from terrarium.channels.hub import ChannelHub, describe_validation_error
from terrarium.channels.log import EVENT_SQL, DurableLog, TurnRecord, event_row
from terrarium.channels.spec import ChannelSpec, CreatureWiring
from terrarium.config import Team
from terrarium.config.models import NamedOutput
from terrarium.controller.assembly import CreatureParts, assemble
from terrarium.controller.loop import Controller, Incoming, TurnResult
from terrarium.errors import ChannelRefusal, RuntimeFailure
from terrarium.events import (
    CreatureState,
    ErrorEvent,
    Event,
    MessageConsumed,
    OutputText,
    Restart,
    RunEnded,
    RunStarted,
    SentenceQueued,
    SentenceSynthesized,
    SpeechCut,
    SpeechMetrics,
    TranscriptAppended,
    TranscriptEntry,
    TurnEnded,
    TurnStarted,
    UtteranceWritten,
)
from terrarium.llm.base import ChatModel
from terrarium.llm.embedded import EmbeddedServer
from terrarium.llm.factory import make_model
from terrarium.llm.slots import assign_slots
from terrarium.prompt.built import BuiltPrompt
from terrarium.runtime.api import CreatureStatus
from terrarium.store import MemoryStore
from terrarium.tools.team import STATE_TEAM
from terrarium.voice.sink import FileOutput, OutputSink, PrintOutput

logger = logging.getLogger("terrarium.runtime")

USER = "user"
ROOT = "root"
LOG_FILE = "terrarium.sqlite3"
TRANSCRIPT_LIMIT = 2000
# not written to the events table: per-token deltas, and consumptions (their own table has them)
_UNLOGGED = (OutputText, MessageConsumed)


@dataclass(slots=True)
class Supervision:
    """Restart policy: exponential backoff with jitter, then give up."""

    max_failures: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0

    def delay(self, attempt: int) -> float:
        d = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        return d * (0.8 + 0.4 * random.random())


@dataclass(slots=True)
class RuntimeOptions:
    """How a run is set up; every field has a sensible default."""

    runs_dir: Path | str = field(default_factory=lambda: Path("runs"))
    resume: str | None = None
    audio: str = "wav"  # wav | device | none
    supervision: Supervision = field(default_factory=Supervision)
    models: Mapping[str, ChatModel] | None = None  # override per creature (tests, demos)
    synthesizer: Any = None  # override the Piper voice (tests)
    send_timeout: float | None = 30.0
    clock: Callable[[], datetime | None] | None = None
    on_event: Callable[[Event], None] | None = None
    # evaluate each creature's prompt prefix and load its voice at start, so the first
    # utterance is as fast as the next ones (llama.cpp prompt cache; Piper's first synthesis)
    warm_up: bool = True
    stdout: Any = None


@dataclass(slots=True)
class _Creature:
    name: str
    parts: CreatureParts
    controller: Controller | None = None
    turn_scope: anyio.CancelScope | None = None
    failures: int = 0
    stopped: bool = False
    generation: int = 0  # bumped by start_creature so an older loop winds down
    wait_scope: anyio.CancelScope | None = None
    wake: anyio.Event = field(default_factory=anyio.Event)


class TeamRuntime:
    """Run a validated team: ``async with TeamRuntime(team) as rt: await rt.send_user(...)``."""

    def __init__(self, team: Team, options: RuntimeOptions | None = None) -> None:
        self.team = team
        self.options = options or RuntimeOptions()
        self.options.runs_dir = Path(self.options.runs_dir)
        self.bus = EventBus()
        self.run_id = ""
        self.log_path: Path | None = None
        self.run_dir: Path | None = None
        self.log: DurableLog | None = None
        self.hub: ChannelHub | None = None
        self.memory: MemoryStore | None = None
        self.embedded: EmbeddedServer | None = None
        self.sinks: dict[str, dict[str, OutputSink]] = {}
        self.tts: list[Any] = []
        self._statuses: dict[str, CreatureStatus] = {}
        self._transcripts: dict[str, deque[TranscriptEntry]] = {}
        self._creatures: dict[str, _Creature] = {}
        self._active_turns = 0
        self._recovering = 0  # creatures waiting out a restart backoff still count as busy
        self._stack: AsyncExitStack | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self.turns_total = 0
        self.results: list[tuple[str, TurnResult]] = []
        self.resumed: dict[str, int] = {}

    # ------------------------------------------------------------------ lifecycle
    async def __aenter__(self) -> TeamRuntime:
        opts = self.options
        team = self.team
        names = sorted(team.creatures) + ([ROOT] if team.root is not None else [])
        cache = None  # one prompt cache for the whole team: its creatures share their views
        for name in names:
            parts = assemble(team, name, cache=cache)
            cache = parts.cache
            self._creatures[name] = _Creature(name, parts)
            model = parts.settings.model or parts.settings.provider
            self._statuses[name] = CreatureStatus(name, model)
            self._transcripts[name] = deque(maxlen=TRANSCRIPT_LIMIT)
        opts.runs_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = opts.runs_dir / LOG_FILE
        self.log = DurableLog(self.log_path)
        if opts.resume:
            info = self.log.run(opts.resume)  # raises when unknown
            self.run_id = info.run_id
            self.log.set_run_status(self.run_id, "running")
        else:
            self.run_id = self.log.start_run(team.name, team.path)
        self.run_dir = opts.runs_dir / self.run_id
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.memory = MemoryStore(self.run_dir / "memory.sqlite3")

        stack = AsyncExitStack()
        await stack.__aenter__()
        try:
            await self._start(stack)
        except BaseException:
            # the recorder and writer tasks run until cancelled: without this, a creature
            # that fails to assemble would leave startup waiting on them forever
            if self._tg is not None:
                self._tg.cancel_scope.cancel()
            await stack.__aexit__(None, None, None)
            if self.log is not None:
                self.log.set_run_status(self.run_id, "failed")
                self.log.close()
            if self.memory is not None:
                self.memory.close()
            raise
        self._stack = stack
        return self

    async def _start(self, stack: AsyncExitStack) -> None:
        opts = self.options
        team = self.team
        specs = [
            ChannelSpec(name=c.name, kind=c.type, description=c.description,
                        schema_name=c.message_type.name if c.message_type else "",
                        validator=c.message_type.model if c.message_type else None,
                        capacity=c.capacity)
            for c in team.channels.values()
        ]
        wirings = [
            CreatureWiring(name=c.name, listen=c.listen,
                           can_send=tuple(dict.fromkeys([*c.can_send, *c.output_wiring])))
            for c in team.creatures.values()
        ]
        # the user may type into the input channel and compose messages to any channel
        wirings.append(CreatureWiring(name=USER, can_send=tuple(sorted(team.channels))))
        if team.root is not None:  # the operator may send on any channel too
            wirings.append(CreatureWiring(name=ROOT, can_send=tuple(sorted(team.channels))))
        self.hub = ChannelHub(specs, wirings, log=self.log, run_id=self.run_id,
                              terrarium_name=team.name, bus=self.bus,
                              send_timeout=opts.send_timeout)
        await stack.enter_async_context(self.hub)
        tg = await stack.enter_async_context(anyio.create_task_group())
        self._tg = tg
        recorder = self.bus.subscribe(capacity=4096)
        tg.start_soon(self._record_events, recorder)

        needs_embedded = [
            c for c in self._creatures.values()
            if c.parts.settings.provider == "embedded"
            and not (opts.models and c.name in opts.models)
        ]
        if needs_embedded:
            self.embedded = EmbeddedServer(slots=len(needs_embedded))
            await stack.enter_async_context(self.embedded)
        slot_of = assign_slots({c.name: c.parts.settings for c in self._creatures.values()
                                if not (opts.models and c.name in opts.models)})
        for c in self._creatures.values():
            sinks = await self._make_sinks(c, stack)
            self.sinks[c.name] = sinks
            c.controller = self._make_controller(c, sinks, slot_of.get(c.name))
            if c.name == ROOT and team.root is not None:
                c.controller.tool_ctx.state[STATE_TEAM] = self
        if opts.resume:
            self.resumed = self.hub.resume()
        for c in self._creatures.values():
            tg.start_soon(self._creature_loop, c)
        self.bus.publish(RunStarted(run_id=self.run_id, terrarium=team.name,
                                    path=str(team.path)))

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        stack, self._stack = self._stack, None
        if stack is None:
            return None
        status = "completed" if e is None else (
            "interrupted" if isinstance(e, (KeyboardInterrupt, anyio.get_cancelled_exc_class()))
            else "failed")
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
        try:
            # never swallow the body's exception, whatever an inner context manager says
            await stack.__aexit__(et, e, tb)
        finally:
            if self.log is not None:
                self.log.set_run_status(self.run_id, status)  # type: ignore[arg-type]
                # the recorder has stopped; the runs table holds the status, so the event
                # goes only to whoever still watches
                ended = RunEnded(run_id=self.run_id, status=status)
                self.bus.publish(ended)
                if self.options.on_event:
                    self.options.on_event(ended)
                self.log.close()
            if self.memory is not None:
                self.memory.close()
        return None

    # ------------------------------------------------------------------ wiring helpers
    async def _make_sinks(self, c: _Creature, stack: AsyncExitStack) -> dict[str, OutputSink]:
        out: dict[str, OutputSink] = {}
        opts = self.options
        for oname, spec in sorted(c.parts.cdef.config.output.named_outputs.items()):
            if spec.type == "tts":
                out[oname] = await self._make_tts(c.name, spec, stack)
            elif spec.type == "file":
                out[oname] = FileOutput(Path(str(spec.path)))
            else:
                out[oname] = PrintOutput(opts.stdout, prefix=f"{c.name}> ")
        return out

    async def _make_tts(self, creature: str, spec: NamedOutput, stack: AsyncExitStack) -> Any:
        """The ``tts`` output ``spec`` describes, started on ``stack``."""
        from terrarium import voice
        from terrarium.voice import SegmenterConfig, TTSOutput, default_audio_sink
        from terrarium.voice.audio import NullAudioSink, WavFileSink

        opts = self.options
        assert self.run_dir is not None
        audio_dir = self.run_dir / "audio"
        if opts.audio == "none":
            sink: Any = NullAudioSink()
        elif opts.audio == "device":
            sink = default_audio_sink(audio_dir)
        else:
            sink = WavFileSink(audio_dir)
        synth = opts.synthesizer
        if synth is None and spec.voice:
            from terrarium.voice.synth import PiperSynthesizer

            synth = PiperSynthesizer(Path(spec.voice))

        def observe(ev: Any) -> None:
            """The voice part's reports, republished as the ground events of the same name.
            Its SpeechCut is not: ``barge_in`` publishes that, with the output's name."""
            if isinstance(ev, voice.SentenceQueued):
                self.bus.publish(SentenceQueued(creature=creature, utterance_id=ev.utterance_id,
                                                index=ev.index, text=ev.text))
            elif isinstance(ev, voice.SentenceSynthesized):
                self.bus.publish(SentenceSynthesized(
                    creature=creature, utterance_id=ev.utterance_id, index=ev.index,
                    text=ev.text, synth_ms=ev.synth_ms, audio_seconds=ev.audio_seconds))
            elif isinstance(ev, voice.UtteranceWritten):
                self.bus.publish(UtteranceWritten(
                    creature=creature, utterance_id=ev.utterance_id,
                    path=str(ev.path) if ev.path is not None else None,
                    duration=ev.duration, aborted=ev.aborted,
                    metrics=SpeechMetrics(**ev.metrics.model_dump(exclude={"utterance_id"}))))
                # the per-utterance figures, in the transcript
                where = f"{ev.path} " if ev.path else ""
                cut = " (cut)" if ev.aborted else ""
                self._entry(creature, "output",
                            f"audio {where}{ev.duration:.2f} s{cut}; {ev.metrics.summary()}")

        segmenter = SegmenterConfig(first_clause_chars=spec.first_clause_chars,
                                    first_piece_max_chars=spec.first_piece_max_chars)
        tts = TTSOutput(synth, sink, segmenter=segmenter, observer=observe,
                        yield_first_audio=spec.yield_first_audio)
        await stack.enter_async_context(tts)
        self.tts.append(tts)
        return tts

    def _make_controller(
        self, c: _Creature, sinks: Mapping[str, OutputSink], slot: int | None
    ) -> Controller:
        """A creature's controller. Token budgets use the documented estimate: exact counts
        (``EmbeddedServer.tokenizer()``) cost an HTTP round trip per new text, which would
        sit on every step's critical path."""
        opts = self.options
        if opts.models and c.name in opts.models:
            model = opts.models[c.name]
        else:
            model = make_model(c.parts.settings, embedded=self.embedded, slot=slot,
                               base_dir=c.parts.cdef.folder)
        name = c.name
        status = self._statuses[name]

        def emit(ev: Event) -> None:
            if isinstance(ev, CreatureState):
                if status.state == ev.state:
                    return
                status.state = ev.state
            elif isinstance(ev, TranscriptAppended):
                self._transcripts[name].append(ev.entry)
            self.bus.publish(ev)

        async def send(channel: str, payload: dict[str, Any]) -> int:
            assert self.hub is not None
            res = await self.hub.send(name, channel, payload)
            return res.count

        return Controller(
            c.parts, model, sinks=sinks, send=send, memory=self.memory,
            emit=emit, slot=slot,
            clock=opts.clock or datetime.now,
        )

    async def _record_events(self, sub: Any) -> None:
        """Write events to the log in small batches; per-token output deltas are skipped."""
        log = self.log
        assert log is not None
        async for ev in sub:
            batch = [ev, *sub.drain()]
            rows = [event_row(self.run_id, e) for e in batch if not isinstance(e, _UNLOGGED)]
            if rows:
                with contextlib.suppress(Exception):
                    log.write_batch([(EVENT_SQL, rows)])
            if self.options.on_event:
                for e in batch:
                    self.options.on_event(e)

    # ------------------------------------------------------------------ creature loops
    async def _creature_loop(self, c: _Creature) -> None:
        """Wake on the inbox, one message per turn, until stopped (or a newer loop starts)."""
        if not c.parts.cdef.listen:
            return
        assert self.hub is not None
        inbox = self.hub.subscribe(c.name)
        generation = c.generation
        if self.options.warm_up and c.generation == 0:
            await self._warm(c)
        while not c.stopped and c.generation == generation:
            with anyio.CancelScope() as scope:
                c.wait_scope = scope
                try:
                    env = await inbox.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    return
                finally:
                    c.wait_scope = None
            if scope.cancelled_caught:  # stopped while idle: nothing was taken
                return
            await self._supervised_turn(c, env)

    async def _warm(self, c: _Creature) -> None:
        """Warm the creature's prompt prefix and voices; a failure only costs the speed-up."""
        try:
            if c.controller is not None:
                usage = await c.controller.warm_prefix()
                if usage is not None:
                    self._entry(c.name, "notice", f"prompt prefix warmed: {usage.prompt_n} "
                                f"tokens in {usage.prompt_ms or 0:.0f} ms")
            for sink in self.sinks.get(c.name, {}).values():
                warm = getattr(sink, "warm", None)
                if warm is not None:
                    seconds = await warm()
                    self._entry(c.name, "notice", f"voice warmed in {seconds * 1000:.0f} ms")
        except Exception as exc:  # the first turn will simply be slower
            cause = _root_cause(exc)
            self._entry(c.name, "notice", f"warm-up skipped: {type(cause).__name__}: "
                        f"{getattr(cause, 'message', cause)}")

    async def _supervised_turn(self, c: _Creature, env: Envelope) -> None:
        sup = self.options.supervision
        status = self._statuses[c.name]
        incoming = [Incoming(text=str(env.payload.get("text", "")), channel=env.channel,
                             sender=env.sender, payload=env.payload, message_id=env.id)]
        while True:
            try:
                result = await self._turn(c, incoming)
            except Exception as exc:  # a failing turn must not take the team down
                c.failures += 1
                cause = _root_cause(exc)
                msg = f"{type(cause).__name__}: {getattr(cause, 'message', cause)}"
                status.last_error = msg
                self._entry(c.name, "error", f"turn failed: {msg}")
                self.bus.publish(ErrorEvent(creature=c.name, message=msg))
                self._record_turn(c, None, error=msg)
                if c.failures >= sup.max_failures:
                    status.state = "failed"
                    self.bus.publish(CreatureState(creature=c.name, state="failed"))
                    logger.error("creature %s failed %d times; giving up", c.name, c.failures)
                    c.stopped = True
                    # keep its message first in line for start_creature (and in the log)
                    assert self.hub is not None
                    self.hub.subscribe(c.name).replay([env])
                    return
                delay = sup.delay(c.failures)
                status.restarts += 1
                status.state = "restarting"
                self.bus.publish(CreatureState(creature=c.name, state="restarting"))
                self.bus.publish(Restart(creature=c.name, attempt=c.failures, delay=delay))
                self._recovering += 1
                try:
                    await anyio.sleep(delay)
                    c.controller = self._rebuild(c)
                finally:
                    self._recovering -= 1
                continue
            c.failures = 0
            assert self.hub is not None
            await self.hub.mark_consumed(c.name, env.id)
            if result is not None:
                await self._wire_output(c, result)
            return

    def _rebuild(self, c: _Creature) -> Controller:
        old = c.controller
        assert old is not None
        new = Controller(c.parts, old.model, sinks=old.sinks, send=old.send, memory=old.memory,
                         emit=old.emit, slot=old.slot, clock=old.clock)
        new.conversation = list(old.conversation)  # keep what it heard; drop the broken turn
        new.turns = old.turns
        return new

    async def _turn(self, c: _Creature, incoming: Sequence[Incoming]) -> TurnResult | None:
        ctl = c.controller
        assert ctl is not None
        status = self._statuses[c.name]
        self._active_turns += 1
        started = time.time()
        idx = ctl.turns + 1
        self.bus.publish(TurnStarted(creature=c.name, turn_index=idx))
        result: TurnResult | None = None
        try:
            with anyio.CancelScope() as scope:
                c.turn_scope = scope
                result = await ctl.run_turn(incoming)
            c.turn_scope = None
            if scope.cancelled_caught:
                self._entry(c.name, "notice", "turn cut short by a new user utterance")
                self._record_turn(c, None, error="cut by barge-in", started=started)
                return None
            status.turns += 1
            status.tokens_in += result.prompt_tokens
            status.tokens_out += result.completion_tokens
            status.cached_tokens += result.cached_tokens
            self.turns_total += 1
            self.results.append((c.name, result))
            self._record_turn(c, result, started=started)
            self.bus.publish(TurnEnded(creature=c.name, turn_index=idx,
                                       prompt_tokens=result.prompt_tokens,
                                       cached_tokens=result.cached_tokens,
                                       completion_tokens=result.completion_tokens))
            return result
        finally:
            c.turn_scope = None
            self._active_turns -= 1

    def _entry(self, creature: str, kind: Any, text: str) -> None:
        """A transcript line from the runtime itself, numbered with the creature's turn."""
        c = self._creatures.get(creature)
        turn = c.controller.turns if c is not None and c.controller is not None else 0
        entry = TranscriptEntry(kind, text, time.time(), turn)
        self._transcripts[creature].append(entry)
        self.bus.publish(TranscriptAppended(creature=creature, entry=entry))

    def _record_turn(self, c: _Creature, result: TurnResult | None, *, error: str | None = None,
                     started: float | None = None) -> None:
        if self.log is None:
            return
        ctl = c.controller
        rec = TurnRecord(
            creature=c.name,
            turn_index=ctl.turns if ctl else 0,
            prefix_hash=result.prefix_hash if result else None,
            prompt_tokens=result.prompt_tokens if result else 0,
            cached_tokens=result.cached_tokens if result else 0,
            completion_tokens=result.completion_tokens if result else 0,
            calls=[{"name": r.name, "ok": r.ok, "args": r.args, "result": r.result}
                   for r in (result.calls if result else [])],
            outputs={"text": result.text} if result and result.text else {},
            error=error,
            started=started or time.time(),
            ended=time.time(),
        )
        with contextlib.suppress(Exception):
            self.log.record_turn(self.run_id, rec)

    async def _wire_output(self, c: _Creature, result: TurnResult) -> None:
        text = result.text.strip()
        if not text or self.hub is None:
            return
        for ch in c.parts.cdef.output_wiring:
            try:
                await self.hub.send(c.name, ch, {"text": text})
            except ChannelRefusal as exc:
                self._entry(c.name, "error", f"output wiring to {ch} refused: {exc.message}")

    # ------------------------------------------------------------------ TeamHandle
    @property
    def statuses(self) -> Mapping[str, CreatureStatus]:
        return self._statuses

    def transcript(self, creature: str) -> Sequence[TranscriptEntry]:
        return tuple(self._transcripts.get(creature, ()))

    def prompt(self, creature: str) -> BuiltPrompt | None:
        c = self._creatures.get(creature)
        return c.controller.last_prompt if c and c.controller else None

    def check_payload(self, channel: str, payload: Mapping[str, Any]) -> str | None:
        ch = self.team.channels.get(channel)
        if ch is None:
            return f"There is no channel {channel!r}."
        if not ch.listeners:
            return f"Nobody listens on {channel!r}."
        if ch.message_type is None:
            return None
        try:
            ch.message_type.model.model_validate(dict(payload))
        except ValidationError as exc:
            return (f"The payload does not match the schema {ch.message_type.name!r}: "
                    f"{describe_validation_error(exc)}.")
        return None

    async def send(self, channel: str, payload: Mapping[str, Any]) -> None:
        if self.hub is None:
            raise RuntimeFailure("the team is not running")
        await self.hub.send(USER, channel, dict(payload))

    async def send_user(self, text: str) -> None:
        """User input: barge in on any speech, then send on the input channel.

        A team with a root creature and no input channel gives the text to the root.
        """
        if not self.team.input_channel and self.team.root is not None:
            await self.ask(ROOT, text)
            return
        if not self.team.input_channel:
            raise RuntimeFailure(
                f"terrarium {self.team.name!r} has no input_channel, so user text has "
                "nowhere to go", suggestion="set terrarium.input_channel in terrarium.yaml")
        await self.barge_in()
        await self.send(self.team.input_channel, {"text": text})

    async def ask(self, creature: str, text: str) -> TurnResult | None:
        """Give ``creature`` user text directly (single-creature runs, the root creature)."""
        return await self._turn(self._creatures[creature], [Incoming(text=text)])

    async def barge_in(self) -> None:
        """Stop current speech, clear what is queued, and cut the speaking turns short."""
        for name, sinks in self.sinks.items():
            for oname, sink in sinks.items():
                cut = await sink.interrupt()
                if cut is not None and (cut.interrupted_sentence or cut.cut_text
                                        or cut.also_cut):
                    self.bus.publish(SpeechCut(
                        creature=name, output=oname, utterance_id=cut.utterance_id,
                        spoken_text=cut.spoken_text,
                        interrupted_sentence=cut.interrupted_sentence,
                        cut_text=tuple(cut.cut_text), also_cut=tuple(cut.also_cut)))
            c = self._creatures[name]
            if sinks and c.turn_scope is not None and any(
                s.type == "tts" for s in c.parts.cdef.config.output.named_outputs.values()
            ):
                c.turn_scope.cancel()

    def _creature(self, name: str) -> _Creature:
        c = self._creatures.get(name)
        if c is None:
            known = ", ".join(sorted(self.team.creatures))
            raise RuntimeFailure(f"there is no creature {name!r}", suggestion=f"one of: {known}")
        return c

    async def send_as_root(self, channel: str, payload: Mapping[str, Any]) -> int:
        """A send by the root creature (team tool); returns how many listeners it reached."""
        if self.hub is None:
            raise RuntimeFailure("the team is not running")
        return (await self.hub.send(ROOT, channel, dict(payload))).count

    async def start_creature(self, name: str) -> None:
        """Start a stopped or failed creature again; its unread messages are still there."""
        c = self._creature(name)
        if name == ROOT or not c.stopped:
            raise RuntimeFailure(f"{name!r} is already running")
        c.stopped = False
        c.generation += 1
        c.failures = 0
        self._statuses[name].state = "idle"
        self.bus.publish(CreatureState(creature=name, state="idle"))
        assert self._tg is not None
        self._tg.start_soon(self._creature_loop, c)

    async def stop_creature(self, name: str) -> None:
        c = self._creature(name)
        if name == ROOT:
            raise RuntimeFailure("the root creature cannot stop itself")
        c.stopped = True
        if c.wait_scope is not None:  # idle: stop now; a turn in progress finishes first
            c.wait_scope.cancel()
        self._statuses[name].state = "stopped"
        self.bus.publish(CreatureState(creature=name, state="stopped"))

    # ------------------------------------------------------------------ waiting
    def busy(self) -> bool:
        """Whether anything is still moving: a turn, a restart backoff, or an unread message.

        Speech still being synthesized is waited for by :meth:`wait_idle` (``drain``).
        """
        if self._active_turns or self._recovering:
            return True
        if self.hub is not None:
            for c in self._creatures.values():
                if c.stopped or not c.parts.cdef.listen:
                    continue
                if self.hub.subscribe(c.name).pending():
                    return True
        return False

    async def wait_idle(self, *, poll: float = 0.01, settle: int = 3) -> None:
        """Return once the team has been quiet for ``settle`` polls in a row."""
        quiet = 0
        while quiet < settle:
            await anyio.sleep(poll)
            quiet = 0 if self.busy() else quiet + 1
        for t in self.tts:
            await t.drain()


def _root_cause(exc: BaseException) -> BaseException:
    """The first real error inside task-group wrappers, so a failure reads as a sentence."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc

