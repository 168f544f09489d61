"""The controller loop: one creature turn, from incoming text to calls, results and output.

A turn: build the prompt (cached prefix + fresh tail) → stream the model → start each call
as soon as it closes (concurrency-safe tools at once, the others in order) → feed results
back → repeat until the model answers without calls or ``max_iterations`` is reached.
Plain text streams to the creature's default named output while it arrives.

Beside it, each in its own module: memory recall and record (``recall``), the fields the
runtime fills into sends (``fill``), the turn's default output (``output``), the
context pinned into the history (``pinning``), the approval gate (``approval_gate``), the
model-written fold lines of ``compaction: summarize`` (``compaction``); the first-audio
pause is the tts sink's (``terrarium.voice.first_audio``). The config keys the loop reads
come from ``parts.loop`` (:class:`~terrarium.controller.assembly.LoopSettings`); the
plugins (``jobs.creature_hooks``) and ``compaction`` read the creature config themselves.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import anyio
from pydantic import BaseModel

from terrarium.config.models import CompactionConfig
from terrarium.controller.approval_gate import ApprovalGate
from terrarium.controller.assembly import ANY_CHANNEL, CreatureParts
from terrarium.controller.compaction import Compactor
from terrarium.controller.guard import ReplyGuard
from terrarium.controller.incoming import (  # noqa: F401 (re-exported)
    INCOMING_HEADER,
    Incoming,
    compile_message_template,
    incoming_header,
    render_payload,
)
from terrarium.controller.jobs import creature_hooks
from terrarium.controller.output import TurnOutput
from terrarium.controller.pinning import ContextPins
from terrarium.controller.recall import recall, record
from terrarium.controller.send_fill import SendFill
from terrarium.crashpoints import crashpoint
from terrarium.errors import ChannelRefusal, ContextOverflow, TerrariumError
from terrarium.events import (
    CreatureState,
    CreatureStateName,
    EntryKind,
    Event,
    OutputText,
    PromptBuilt,
    PromptSectionInfo,
    Reasoning,
    TranscriptAppended,
    TranscriptEntry,
)
from terrarium.formats import (
    CallEvent,
    NoticeEvent,
    TextEvent,
    ValueFrame,
    grammar_for,
    openai_tools,
    value_frame,
)
from terrarium.formats.grammar import sentences_left
from terrarium.formats.native import NativeFormat
from terrarium.llm.base import ChatModel, keeps_prompt_cache, supports_continuation
from terrarium.llm.reasoning import THINK_CLOSE, THINK_OPEN, ThinkSplitter
from terrarium.llm.types import ChatMessage, ChatRequest, Usage
from terrarium.prompt.budget import Tokenizer
from terrarium.prompt.builder import PromptBuilder
from terrarium.prompt.built_prompt import BuiltPrompt
from terrarium.prompt.tail import TailState, Turn
from terrarium.store import MemoryStore
from terrarium.tools.approval import Approver
from terrarium.tools.base import Answerer, EffectJournal, Tool, ToolContext
from terrarium.tools.runner import ToolResult
from terrarium.tools.state import STATE_MEMORY, STATE_TOOLS
from terrarium.voice.sink import OutputSink

__all__ = ["CallKind", "CallRecord", "Controller", "Emit", "Incoming", "SendFn", "TurnResult"]

SendFn = Callable[..., Awaitable[int]]
"""``send(channel, payload[, key=...])``: send ``payload`` on a channel as this creature;
returns receivers reached or raises. ``key`` (passed only when the turn has one) is the
send's deterministic id, so a turn run again after a crash does not send twice."""

CallKind = Literal["tool", "send", "output", "invalid"]


@dataclass(slots=True)
class CallRecord:
    name: str
    kind: CallKind
    args: dict[str, Any]
    ok: bool
    result: str
    needs_followup: bool
    call_id: str | None = None


@dataclass(slots=True)
class TurnResult:
    """What one turn did: its text, calls, token usage and the prompt it last used."""

    text: str
    calls: list[CallRecord] = field(default_factory=list)
    rounds: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    prefix_hash: str = ""
    notices: list[str] = field(default_factory=list)
    usages: list[Usage] = field(default_factory=list)
    hit_max_iterations: bool = False
    # why the turn's input was refused (it cannot fit the context window), else None
    refused: str | None = None


Emit = Callable[[Event], None]
"""How the loop tells its owner what happens: typed events, non-blocking."""


@dataclass(slots=True)
class _Round:
    text: list[str] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)  # every text delta, calls included
    records: list[CallRecord | None] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    native: dict[int, dict[str, str]] = field(default_factory=dict)
    usage: Usage | None = None  # the model's usage for the round (both calls if it paused)
    finish_reason: str | None = None  # of the round's last model call ("length": cut off)
    reasoning: list[str] = field(default_factory=list)  # thinking: never a reply, never sent


@asynccontextmanager
async def _closing(stream: AsyncIterator[Any]) -> AsyncIterator[AsyncIterator[Any]]:
    """Close a model stream as soon as it is left, so the server stops generating at once."""
    try:
        yield stream
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()


def _ignore(event: Event) -> None:
    """The emitter of a controller nobody watches."""


def _args_dict(args: BaseModel | None, raw: Mapping[str, Any]) -> dict[str, Any]:
    return args.model_dump(mode="json") if args is not None else dict(raw)


MIN_RESULT_TOKENS = 64  # a round's results always keep at least this much


class Controller:
    """Runs turns for one creature; owns its conversation, prompt builder and call routing."""

    def __init__(
        self,
        parts: CreatureParts,
        model: ChatModel,
        *,
        sinks: Mapping[str, OutputSink] | None = None,
        send: SendFn | None = None,
        memory: MemoryStore | None = None,
        tokenizer: Tokenizer | None = None,
        emit: Emit | None = None,
        slot: int | None = None,
        clock: Callable[[], datetime | None] | None = None,
        journal: EffectJournal | None = None,
        approver: Approver | None = None,
        answerer: Answerer | None = None,
    ) -> None:
        self.parts = parts
        self.model = model
        self.sinks = dict(sinks or {})
        self.send = send
        self.memory = memory
        self.emit: Emit = emit or _ignore
        self.slot = slot
        self.clock = clock or (lambda: None)
        self.builder = PromptBuilder(parts.inputs, parts.fmt, tokenizer, cache=parts.cache)
        self.conversation: list[Turn] = []
        self.step = 0
        self.turns = 0
        cfg = self.settings = parts.loop  # every config key the loop reads, and only these
        self.fill = SendFill(parts.fills, parts.inputs.channels, parts.sends)
        self.message_templates = {
            channel: compile_message_template(source, channel)
            for channel, source in cfg.message_templates.items()
        }
        required = cfg.tool_choice == "required" and bool(parts.fmt.specs)
        self.grammar: str | None = None
        if cfg.use_grammar and parts.fmt.textual:
            spoken = any(o.kind == "tts" and o.default for o in parts.inputs.named_outputs)
            self.grammar = grammar_for(parts.fmt, allow_text=not required, plain_text=spoken,
                                       max_sentences=cfg.spoken_sentences if spoken else None)
        # one call of one one-line argument: the model need only write the value (used when
        # the model can continue a reply we start for it; see ValueFrame)
        self.frame: ValueFrame | None = (
            value_frame(parts.fmt) if self.grammar is not None and required else None
        )
        # fixed-choice values the runtime decides from the input, without the model
        self.choice_rules = [(re.compile(p, re.IGNORECASE), v) for p, v in cfg.choice_rules]
        self.native_tools = openai_tools(parts.fmt.specs) if not parts.fmt.textual else None
        state: dict[str, Any] = {STATE_TOOLS: parts.registry}
        if memory is not None:
            state[STATE_MEMORY] = memory
        self.tool_ctx = ToolContext(
            creature=parts.name, cwd=cfg.cwd, readable=cfg.readable, writable=cfg.writable,
            state=state,
            workspace=cfg.workspace, tool_options=cfg.tool_options, journal=journal,
            answerer=answerer,
        )
        self.last_prompt: BuiltPrompt | None = None
        # set while the creature's prompt prefix is still being evaluated after the team
        # said it was ready: a round that needs the model waits for it (one that the runtime
        # decides itself does not), so its request finds the prefix in its slot
        self.warming: anyio.Event | None = None
        self._pending_notice: str | None = None
        self.hooks = creature_hooks(parts.name, parts.cdef.config, self.emit, self.tool_ctx)
        # None: nobody to ask, calls needing approval are refused
        self.gate = ApprovalGate(parts.name, cfg.approve, approver, self.emit)
        # exactly-once effects: the consumed messages this turn answers, and the round
        self._turn_of: str | None = None
        self._round = 0
        self._sent = 0  # how many turns of the conversation a request has already shown
        self.pins = ContextPins()  # the context written into the history (see pinning)
        compaction = CompactionConfig.of(parts.cdef.config.compaction)
        # summarize: the fold line written by a model, once per fold block (see compaction)
        self.compactor: Compactor | None = (
            Compactor(parts.name, compaction, model, self.builder.tokenizer, self.emit,
                      self.tool_ctx) if compaction.mode == "summarize" else None)

    @property
    def approver(self) -> Approver | None:
        """Who approves calls the creature's ``approve`` covers (the gate's)."""
        return self.gate.approver

    @approver.setter
    def approver(self, approver: Approver | None) -> None:
        self.gate.approver = approver

    # -- reporting -------------------------------------------------------------------
    def _state(self, state: CreatureStateName) -> None:
        self.emit(CreatureState(creature=self.parts.name, state=state))

    def _entry(self, kind: EntryKind, text: str, **kw: Any) -> None:
        entry = TranscriptEntry(kind, text, time.time(), self.turns, **kw)
        self.emit(TranscriptAppended(creature=self.parts.name, entry=entry))

    # -- one turn --------------------------------------------------------------------
    async def run_turn(self, inputs: Sequence[Incoming]) -> TurnResult:
        """Run one turn over ``inputs``; tool and send failures go back to the model."""
        self.turns += 1
        result = TurnResult(text="")
        await self.hooks.turn_start(self.turns, inputs)  # hooks: on_message
        cfg = self.settings
        consumed = [i.message_id for i in inputs if i.message_id]
        self._turn_of = "+".join(consumed) if consumed else None
        if cfg.history_turns is not None:
            # a short history is also a short context: faster prompt evaluation and decoding
            keep = cfg.history_turns
            dropped = max(0, len(self.conversation) - keep)
            self.conversation = self.conversation[dropped:]
            self._sent = max(0, self._sent - dropped)
        before = len(self.conversation)
        for item in inputs:
            rendered = item.render(self.message_templates.get(item.channel or ""))
            self.conversation.append(Turn("user", rendered))
            kind: EntryKind = "user" if item.channel is None else "message_in"
            self._entry(kind, rendered, name=item.channel,
                        data={"sender": item.sender, "message_id": item.message_id})
        crashpoint("turn.begin")
        facts = await recall(self.memory, inputs, creature=self.parts.name,
                              recent=cfg.memory_recent, matches=cfg.memory_recall,
                              facts=cfg.memory_facts, notes=cfg.memory_notes)
        self.fill.begin_turn(inputs, facts)
        recalled = facts.prompt_lines() if cfg.memory_in_prompt else ()
        if (cfg.memory_record or cfg.memory_facts) and self.memory is not None:
            await record(self.memory, inputs, creature=self.parts.name,
                         facts=cfg.memory_facts > 0, texts=cfg.memory_record)
            crashpoint("turn.recorded_inputs")
        default = self.parts.default_output
        sink = self.sinks.get(default) if default else None
        out = TurnOutput(self.emit, self.parts.name, default, sink,
                         f"{self.parts.name}-{self.turns}-{uuid.uuid4().hex[:8]}")
        if sink is not None:
            out.guard = ReplyGuard.for_turn(cfg.reply_guard,
                                            [dict(i.payload or {}) for i in inputs])
        await out.open()
        last_text = ""  # the turn-end text: the latest round's plain text, never call syntax
        decided = self._decide(inputs)  # a fixed-choice value the input settles
        try:
            fixed = out.guard.fixed if out.guard is not None else None
            for _ in range(cfg.max_iterations if fixed is None else 0):
                result.rounds += 1
                step = self.step
                self.step += 1
                try:
                    context = self.builder.context(TailState(
                        step=step, now=self.clock(), recalled=recalled,
                        notice=self._pending_notice, status=cfg.prompt_status))
                    self._pending_notice = None
                    self._pin_context(context)
                    built = self._build(step)
                    if built.folded_turns and self._pin_context(context, again=True):
                        built = self._build(step)  # a fold hid the pinned status or facts
                    built = await self._summarize_fold(built, step)
                except ContextOverflow as exc:
                    if result.rounds > 1:
                        raise
                    # the input itself cannot fit: refuse it, forget it, and go on
                    del self.conversation[before:]
                    self._sent = min(self._sent, len(self.conversation))
                    result.refused = exc.message
                    self._entry("notice", f"input refused: {exc.message}")
                    break
                self._sent = len(self.conversation)
                self.last_prompt = built
                result.prefix_hash = built.prefix_hash
                self.emit(PromptBuilt(
                    creature=self.parts.name, prefix_hash=built.prefix_hash, tokens=built.tokens,
                    sections=tuple(PromptSectionInfo(i.name, i.zone, i.bytes, i.tokens)
                                   for i in built.sections)))
                messages = [ChatMessage.model_validate(m) for m in built.messages()]
                frame = self.frame if supports_continuation(self.model) else None
                if frame is not None:
                    messages.append(ChatMessage(role="assistant", content=frame.prefix))
                request = ChatRequest(
                    messages=messages,
                    grammar=frame.grammar if frame is not None else self.grammar,
                    choices=list(frame.choices) if frame is not None and frame.choices else None,
                    tools=self.native_tools or None,
                    id_slot=self.slot,
                    cache_prompt=True,
                )
                request = await self.hooks.before_model(request)  # hooks: may edit the request
                self._state("thinking")
                self._round = result.rounds
                crashpoint("turn.round")
                rnd = await self._one_round(request, out, frame,
                                            decided if frame is not None else None)
                decided = None
                await self.hooks.after_model(request, "".join(rnd.raw), rnd.usage, rnd.finish_reason)  # noqa: E501 (hooks)
                records, notices = rnd.records, rnd.notices
                usage = rnd.usage
                if usage is not None:
                    result.usages.append(usage)
                    result.prompt_tokens += usage.prompt_tokens
                    result.cached_tokens += usage.cached_tokens
                    result.completion_tokens += usage.completion_tokens
                done = [r for r in records if r is not None]
                text = "".join(rnd.text)
                result.calls.extend(done)
                result.notices.extend(notices)
                follow_up = bool(notices) or any(r.needs_followup for r in done)
                self._remember_round(rnd, done, follow_up)
                if text.strip():
                    last_text = text
                    self._entry("assistant", text)
                for n in notices:
                    self._entry("notice", n)
                if notices:
                    self._pending_notice = "\n".join(notices)
                if not follow_up:
                    if rnd.finish_reason == "length" or out.stopped:
                        dropped = await out.drop_unfinished()
                        if dropped:
                            why = out.stop_reason if out.stopped else "max_tokens"
                            self._entry("notice", f"not spoken, cut off by {why}: {dropped!r}")
                    break
            else:
                if fixed is not None:  # the runtime knows the reply: no model round
                    await out.write(fixed)
                    last_text = fixed
                    self._entry("assistant", fixed)
                else:
                    result.hit_max_iterations = True
                    self._entry("notice",
                                f"stopped after max_iterations={cfg.max_iterations}")
            for n in await out.finish():
                self._entry("notice", n)
        finally:
            if out.started and sink is not None:
                with anyio.CancelScope(shield=True):
                    await sink.end()
            self._state("idle")
            self.hooks.turn_over()  # hooks: the turn is over, however it ended
        result.text = "".join(out.spoken) if sink is not None else last_text
        await self.hooks.turn_end(result)  # hooks: on_turn_end
        crashpoint("turn.end")
        return result

    async def warm_prefix(self) -> Usage | None:
        """Have the model server evaluate this creature's prompt prefix ahead of its first turn.

        Only for a server that keeps a prompt cache per slot (llama.cpp): the first turn then
        evaluates only its new input, like every later one. Returns the request's usage, or
        None when there is nothing to warm.
        """
        if not keeps_prompt_cache(self.model):
            return None
        built = self.builder.build(TailState(step=0, status=False))
        first = built.messages()[0]
        if first.get("role") != "system":
            return None
        request = ChatRequest(messages=[ChatMessage.model_validate(first)], max_tokens=1,
                              id_slot=self.slot, cache_prompt=True)
        async with _closing(self.model.stream(request)) as deltas:
            async for _ in deltas:
                pass
        return self.model.last_usage

    def _build(self, step: int) -> BuiltPrompt:
        """This step's prompt: the prefix and the conversation, context already pinned in it."""
        conversation = tuple(self.conversation)
        fold = self.compactor.policy if self.compactor is not None else None
        built = self.builder.build(TailState(step=step, conversation=conversation, status=False,
                                             fold=fold))
        self.pins.note_fold(conversation, built.folded_turns)
        return built

    async def _summarize_fold(self, built: BuiltPrompt, step: int) -> BuiltPrompt:
        """With ``compaction: summarize``, the prompt with its fold block summarized: asked
        once per block (cached); the fold point stays where it was (see compaction)."""
        folded = self.conversation[:built.folded_turns]
        if self.compactor is None or not self.compactor.wants(folded):
            return built
        await self.compactor.summarize(folded)
        return self._build(step)

    def _pin_context(self, sections: Mapping[str, str], *, again: bool = False) -> bool:
        """Pin this step's new context into the history (see :class:`ContextPins`)."""
        return self.pins.pin(self.conversation, sections, self._sent, again=again)

    def _spoken_continuation(self, request: ChatRequest | None,
                             rnd: _Round) -> ChatRequest | None:
        """A paused spoken reply's continuation, with its grammar counting the sentences
        already written (``max_sentences``); None when the reply already has them all."""
        limit = self.settings.spoken_sentences
        if request is None or not limit or request.grammar is None:
            return request
        written = "".join(rnd.text)
        if sentences_left(limit, written) <= 0:
            return None
        grammar = grammar_for(self.parts.fmt, allow_text=True, plain_text=True,
                              max_sentences=limit, written=written)
        return request.model_copy(update={"grammar": grammar})

    def _decide(self, inputs: Sequence[Incoming]) -> str | None:
        """The value a ``choice_rules`` pattern picks for these inputs (first match wins)."""
        if not self.choice_rules or self.frame is None or not self.frame.choices:
            return None
        text = "\n".join(i.search_text for i in inputs)
        for pattern, value in self.choice_rules:
            if value in self.frame.choices and pattern.search(text):
                return value
        return None

    async def _one_round(
        self, request: ChatRequest, out: TurnOutput, frame: ValueFrame | None = None,
        decided: str | None = None,
    ) -> _Round:
        """Stream one model response; calls start as soon as each one closes.

        With a ``frame`` the model writes only the value: the frame's prefix (already at the
        end of the request, as the start of the reply) and suffix are added around it here.
        A ``decided`` value (from ``choice_rules``) is written without asking the model.
        """
        rnd = _Round()
        seq_lock = anyio.Lock()
        parser = self.parts.fmt.new_parser()
        thinking = ThinkSplitter()  # <think> blocks in the text are thinking, not the reply
        failure: Exception | None = None
        # a framed value restarts its grammar on a continuation: never pause inside one
        pause = out.first_audio_pause(self.model) if frame is None else None
        async with anyio.create_task_group() as tg:

            async def handle(events: Sequence[Any]) -> None:
                for ev in events:
                    if isinstance(ev, TextEvent):
                        rnd.text.append(ev.text)
                        await out.say(ev.text)
                    elif isinstance(ev, CallEvent):
                        rnd.records.append(None)
                        tg.start_soon(self._run_call, ev, len(rnd.records) - 1, rnd.records,
                                      seq_lock)
                    elif isinstance(ev, NoticeEvent):
                        rnd.notices.append(ev.text)

            if frame is not None:
                rnd.raw.append(frame.prefix)
                await handle(parser.feed(frame.prefix))
            try:
                current: ChatRequest | None = request if decided is None else None
                if decided is not None:
                    rnd.raw.append(decided)
                    await handle(parser.feed(decided))
                    rnd.finish_reason = "stop"
                if current is not None and self.warming is not None:
                    await self.warming.wait()
                while current is not None:
                    paused = False
                    async with _closing(self.model.stream(current)) as deltas:
                        async for delta in deltas:
                            crashpoint("turn.delta")
                            if delta.finish_reason:
                                rnd.finish_reason = delta.finish_reason
                            if delta.reasoning:
                                self._reasoned(rnd, delta.reasoning)
                            if delta.text:
                                shown, thought = thinking.feed(delta.text)
                                if thought:
                                    self._reasoned(rnd, thought)
                                if shown:
                                    rnd.raw.append(shown)
                                    await handle(parser.feed(shown))
                            for tc in delta.tool_calls:
                                nc = rnd.native.setdefault(
                                    tc.index, {"id": "", "name": "", "arguments": ""})
                                nc["id"] = tc.id or nc["id"]
                                nc["name"] = tc.name or nc["name"]
                                nc["arguments"] += tc.arguments
                            if out.stopped:  # the guard will speak no more of it
                                break
                            if pause is not None and pause.ready(rnd):
                                paused = True
                                break
                    current = None
                    if paused and pause is not None:
                        current = self._spoken_continuation(await pause.resume(request, rnd),
                                                            rnd)
                if decided is None:
                    rnd.usage = (pause.usage(self.model.last_usage) if pause is not None
                                 else self.model.last_usage)
            except Exception as exc:
                # re-raised below, outside the task group, so callers get the ModelError
                # itself rather than an ExceptionGroup; calls already started are cancelled
                failure = exc
                tg.cancel_scope.cancel()
            if failure is None:
                shown, thought = thinking.close()
                if thought:
                    self._reasoned(rnd, thought)
                if rnd.reasoning:  # the round's whole thinking, once, for the log and monitor
                    self._entry("reasoning", "".join(rnd.reasoning))
                if shown:
                    rnd.raw.append(shown)
                    await handle(parser.feed(shown))
                if frame is not None:
                    rest = frame.close("".join(rnd.raw))
                    rnd.raw.append(rest)
                    await handle(parser.feed(rest))
                await handle(parser.close())
            fmt = self.parts.fmt
            if failure is None and rnd.native and isinstance(fmt, NativeFormat):
                for i in sorted(rnd.native):
                    nc = rnd.native[i]
                    await handle([fmt.call_from_native(nc["name"], nc["arguments"],
                                                       nc["id"] or f"call_{i}")])
        if failure is not None:
            raise failure
        return rnd

    def _reasoned(self, rnd: _Round, text: str) -> None:
        """A reasoning model's thinking: to the monitor and the log, nowhere else."""
        rnd.reasoning.append(text)
        self.emit(Reasoning(creature=self.parts.name, text=text))

    def _remember_round(self, rnd: _Round, records: list[CallRecord], follow_up: bool) -> None:
        """Add this round to the history exactly as the model wrote it.

        Text formats keep the raw generated text (calls included), so the next request
        repeats the model's own tokens and the server's cache covers them. Native calls are
        written down with the format's own rendering. Results are added only when another
        round will read them: a turn that ended on successful sends needs no receipt.
        """
        if self.parts.fmt.textual:
            raw = "".join(rnd.raw)
        else:
            shown = [self.parts.fmt.render_call(
                r.name, self.fill.written(r.name, r.args) if r.kind == "send" else r.args)
                for r in records]
            raw = "\n".join(p for p in ["".join(rnd.text), *shown] if p)
        if raw and self.settings.keep_reasoning and rnd.reasoning:
            raw = f"{THINK_OPEN}{''.join(rnd.reasoning)}{THINK_CLOSE}\n{raw}"
        if raw:
            self.conversation.append(Turn("assistant", raw))
        if records and follow_up:
            self.conversation.append(Turn("user", self._results_text(records)))

    def _results_text(self, records: list[CallRecord]) -> str:
        """The round's results as the model reads them, cut to fit the context window.

        A tool's own limits are set in bytes and cannot know the window (read_file's
        default 20,000 bytes is about 5,000 tokens; a 4,096-token window has fewer), so the
        results of one round together get at most half the tail's room; each result over
        its share keeps its head and says how much was cut and what to do. The log keeps
        every result whole; only what the model reads is cut.
        """
        lines = [f"Result of {r.name}: {r.result}" for r in records]
        text = "\n".join(lines)
        count = self.builder.tokenizer.count
        budget = max(MIN_RESULT_TOKENS, self.builder.room() // 2)
        used = count(text)
        if used <= budget:
            return text
        share = budget / used
        cut: list[str] = []
        for r, line in zip(records, lines, strict=True):
            keep = int(len(r.result) * share) - len(r.name) - 12
            if keep >= len(r.result):
                cut.append(line)
                continue
            keep = max(0, keep - 160)  # room for the marker itself
            cut.append(f"Result of {r.name}: {r.result[:keep]}\n[cut to fit the context "
                       f"window: showed {keep} of {len(r.result)} characters; ask for less "
                       "(a line range, a narrower search)]")
        return "\n".join(cut)

    async def _run_call(
        self, ev: CallEvent, idx: int, records: list[CallRecord | None], seq_lock: anyio.Lock
    ) -> None:
        parts = self.parts
        args = _args_dict(ev.args, ev.raw_args)
        if ev.name in self.fill and ev.args is not None and ev.error is None:
            args = self.fill.filled(ev.name, args)  # the transcript and record show what is sent
        self._entry("tool_call", ev.name, name=ev.name, detail=json.dumps(args, sort_keys=True),
                    data={"args": args})
        if ev.error is not None or ev.args is None:
            rec = CallRecord(ev.name, "invalid", args, False,
                             ev.error or "invalid call", True, ev.call_id)
        elif ev.name in parts.sends:
            rec = await self._send(ev, args, self._effect_key(idx))
        elif ev.name in parts.outputs:
            rec = await self._output(ev, args)
        else:
            tool = parts.registry.get(ev.name)
            self._state("calling_tool")
            ctx = self._call_ctx(idx)
            if tool.concurrency_safe:
                res = await self._approved_run(tool, ev, args, ctx)
            else:
                async with seq_lock:
                    res = await self._approved_run(tool, ev, args, ctx)
            follow = tool.needs_followup or not res.ok or ev.name == "info"
            rec = CallRecord(ev.name, "tool", args, res.ok, res.text, follow, ev.call_id)
        records[idx] = rec
        self._entry("tool_result", rec.result, name=rec.name,
                    data={"ok": rec.ok, "kind": rec.kind})

    async def _approved_run(self, tool: type[Tool], ev: CallEvent,
                            args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the call once the approval gate lets it (asked under the caller's sequence
        lock, so calls still run in the order written)."""
        refused = await self.gate.refusal(ev.name, args, self.turns)
        if refused is not None:
            return refused
        return await self.hooks.run_tool(tool, ev.args if ev.args is not None else args, ctx)

    def _effect_key(self, idx: int) -> str | None:
        """The deterministic id of this turn's call ``idx`` of the current round: the same
        call of the same turn, run again after a crash, gets the same id (None: no message
        consumed, e.g. direct user text, so nothing to resume)."""
        if self._turn_of is None:
            return None
        return f"{self.parts.name}/{self._turn_of}/{self._round}.{idx}"

    def _call_ctx(self, idx: int) -> ToolContext:
        key = self._effect_key(idx)
        if key is None or self.tool_ctx.journal is None:
            return self.tool_ctx
        return dataclasses.replace(self.tool_ctx, effect_key=key)

    async def _send(self, ev: CallEvent, args: dict[str, Any], key: str | None = None
                    ) -> CallRecord:
        channel = self.parts.sends[ev.name]
        if channel == ANY_CHANNEL:  # send_channel(channel, message): KohakuTerrarium's form
            channel, args = str(args.get("channel")), {"text": str(args.get("message", ""))}
        if self.send is None:
            return CallRecord(ev.name, "send", args, False,
                              f"Refused: channel {channel!r} is not connected in this run.",
                              True, ev.call_id)
        try:
            crashpoint("turn.send")
            n = await (self.send(channel, args) if key is None
                       else self.send(channel, args, key=key))
            crashpoint("turn.sent")
        except ChannelRefusal as exc:
            return CallRecord(ev.name, "send", args, False, f"Refused: {exc.message}", True,
                              ev.call_id)
        except TerrariumError as exc:
            return CallRecord(ev.name, "send", args, False, f"Failed: {exc.message}", True,
                              ev.call_id)
        return CallRecord(ev.name, "send", args, True,
                          f"Sent on {channel} to {n} listener{'s' if n != 1 else ''}.",
                          False, ev.call_id)

    async def _output(self, ev: CallEvent, args: dict[str, Any]) -> CallRecord:
        oname = self.parts.outputs[ev.name]
        sink = self.sinks.get(oname)
        text = str(args.get("text", ""))
        if sink is None:
            return CallRecord(ev.name, "output", args, False,
                              f"Output {oname!r} has no sink in this run.", True, ev.call_id)
        utt = f"{self.parts.name}-{oname}-{uuid.uuid4().hex[:8]}"
        await sink.begin(utt)
        await sink.write(text)
        await sink.end()
        self.emit(OutputText(creature=self.parts.name, output=oname, text=text))
        return CallRecord(ev.name, "output", args, True, f"Written to {oname}.", False,
                          ev.call_id)


