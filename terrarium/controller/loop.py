"""The controller loop: one creature turn, from incoming text to calls, results and output.

A turn: build the prompt (cached prefix + fresh tail) → stream the model → start each call
as soon as it closes (concurrency-safe tools at once, the others in order) → feed results
back → repeat until the model answers without calls or ``max_iterations`` is reached.
Plain text streams to the creature's default named output while it arrives.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import anyio
from pydantic import BaseModel

from terrarium.controller.assembly import CreatureParts
from terrarium.controller.incoming import (  # noqa: F401 (re-exported)
    INCOMING_HEADER,
    Incoming,
    compile_message_template,
    incoming_header,
    render_payload,
)
from terrarium.errors import ChannelRefusal, TerrariumError
from terrarium.events import (
    CreatureState,
    CreatureStateName,
    EntryKind,
    Event,
    OutputText,
    PromptBuilt,
    PromptSectionInfo,
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
from terrarium.formats.native import NativeFormat
from terrarium.llm.base import ChatModel, keeps_prompt_cache, supports_continuation
from terrarium.llm.types import ChatMessage, ChatRequest, Usage
from terrarium.prompt.budget import Tokenizer
from terrarium.prompt.builder import PromptBuilder
from terrarium.prompt.built import BuiltPrompt
from terrarium.prompt.tail import TailState, Turn
from terrarium.store import MemoryStore
from terrarium.tools.base import ToolContext
from terrarium.tools.runner import run_tool
from terrarium.tools.state import STATE_MEMORY, STATE_TOOLS
from terrarium.voice.sink import FirstPieceSink, OutputSink

SendFn = Callable[[str, dict[str, Any]], Awaitable[int]]
"""Send ``payload`` on a channel as this creature; returns receivers reached or raises."""

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


@asynccontextmanager
async def _closing(stream: AsyncIterator[Any]) -> AsyncIterator[AsyncIterator[Any]]:
    """Close a model stream as soon as it is left, so the server stops generating at once."""
    try:
        yield stream
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()


def _joined_usage(first: Usage | None, second: Usage | None) -> Usage | None:
    """One round's usage over a paused stream and its continuation.

    The continuation's prompt repeats the first call's prompt plus the reply so far, so the
    round reports the first call's prompt, all the output, and the work both calls did.
    """
    if first is None or second is None:
        return second or first

    def add(a: float | None, b: float | None) -> float | None:
        return None if a is None and b is None else (a or 0) + (b or 0)

    known = first.prompt_tokens > 0  # a server without per-token timings reports nothing
    prompt_n = add(first.prompt_n, second.prompt_n)
    return Usage(
        prompt_tokens=(first.prompt_tokens if known
                       else max(0, second.prompt_tokens - first.completion_tokens)),
        cached_tokens=(first.cached_tokens if known
                       else max(0, second.cached_tokens - first.completion_tokens)),
        completion_tokens=first.completion_tokens + second.completion_tokens,
        prompt_n=None if prompt_n is None else int(prompt_n),
        prompt_ms=add(first.prompt_ms, second.prompt_ms),
        predicted_ms=add(first.predicted_ms, second.predicted_ms),
        ttft_ms=first.ttft_ms if first.ttft_ms is not None else second.ttft_ms,
        total_ms=add(first.total_ms, second.total_ms),
        attempts=first.attempts + second.attempts,
    )


@dataclass(slots=True)
class _FirstAudioPause:
    """Pause the model while the reply's first piece is synthesized (once per round).

    On a shared CPU the model's decoding slows the synthesis that sets the time to first
    audio. So the stream is closed once the first piece is queued, and after its synthesis
    the reply continues from a continuation request (the text so far as an assistant
    prefill), which the server's prompt cache makes nearly free.
    """

    sink: FirstPieceSink
    model: ChatModel
    used: bool = False
    first_usage: Usage | None = None

    def ready(self, rnd: _Round) -> bool:
        """Pause now: the first piece awaits synthesis and the parser holds nothing back."""
        return (not self.used and not rnd.native and self.sink.first_piece_pending()
                and "".join(rnd.text) == "".join(rnd.raw))

    async def resume(self, request: ChatRequest, rnd: _Round) -> ChatRequest | None:
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
        if not self.used:
            return last
        if last is self.first_usage:  # no continuation was made
            return last
        return _joined_usage(self.first_usage, last)


@dataclass(slots=True)
class _Output:
    """The turn's default output: opened on the first text, streamed as it arrives."""

    ctl: Controller
    name: str | None
    sink: OutputSink | None
    utterance: str
    started: bool = False
    spoken: list[str] = field(default_factory=list)

    async def open(self) -> None:
        """Open the utterance when the turn starts, so its metrics count from there."""
        if self.sink is not None and not self.started:
            self.started = True
            await self.sink.begin(self.utterance)

    async def write(self, text: str) -> None:
        if self.sink is not None:
            if not self.spoken:
                self.ctl._state("speaking")
            await self.sink.write(text)
            self.spoken.append(text)
        if self.name:
            self.ctl.emit(OutputText(creature=self.ctl.parts.name, output=self.name, text=text))

    async def drop_unfinished(self) -> str:
        """A reply cut off by the length limit: its sink forgets the unfinished last words."""
        drop = getattr(self.sink, "drop_unfinished", None)
        return await drop() if drop is not None and self.started else ""

    def first_audio_pause(self, model: ChatModel) -> _FirstAudioPause | None:
        """A pause for this round, when the sink asks for one and the model can continue."""
        sink = self.sink
        if (isinstance(sink, FirstPieceSink) and sink.yield_first_audio
                and supports_continuation(model)):
            return _FirstAudioPause(sink, model)
        return None


def _ignore(event: Event) -> None:
    """The emitter of a controller nobody watches."""


def _args_dict(args: BaseModel | None, raw: Mapping[str, Any]) -> dict[str, Any]:
    return args.model_dump(mode="json") if args is not None else dict(raw)


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
    ) -> None:
        self.parts = parts
        self.model = model
        self.sinks = dict(sinks or {})
        self.send = send
        self.memory = memory
        self.emit: Emit = emit or _ignore
        self.slot = slot
        self.clock = clock or (lambda: None)
        self.builder = PromptBuilder(parts.inputs, parts.fmt, tokenizer)
        self.conversation: list[Turn] = []
        self.step = 0
        self.turns = 0
        cfg = parts.cdef.config
        self.max_iterations: int = cfg.max_iterations
        self.history_turns: int | None = cfg.history_turns
        self.recall_limit: int = cfg.memory_recall
        self.recent_limit: int = cfg.memory_recent
        self.record: bool = cfg.memory_record
        self.memory_in_prompt: bool = cfg.memory_in_prompt
        self.fills = parts.fills  # send call -> field -> source (see send_fill)
        views = {c.name: c for c in parts.inputs.channels}
        self._field_order = {  # send call -> the channel schema's field order
            call: tuple(f.name for f in views[parts.sends[call]].fields) for call in self.fills
        }
        self._fill_values: dict[str, str] = {}  # this turn's value of each source
        self.status: bool = cfg.prompt_status
        self.message_templates = {
            channel: compile_message_template(source, channel)
            for channel, source in cfg.message_templates.items()
        }
        required = cfg.tool_choice == "required" and bool(parts.fmt.specs)
        self.grammar: str | None = None
        if parts.settings.use_grammar and parts.fmt.textual:
            spoken = any(o.kind == "tts" and o.default for o in parts.inputs.named_outputs)
            self.grammar = grammar_for(parts.fmt, allow_text=not required, plain_text=spoken)
        # one call of one one-line argument: the model need only write the value (used when
        # the model can continue a reply we start for it; see ValueFrame)
        self.frame: ValueFrame | None = (
            value_frame(parts.fmt) if self.grammar is not None and required else None
        )
        self.native_tools = openai_tools(parts.fmt.specs) if not parts.fmt.textual else None
        state: dict[str, Any] = {STATE_TOOLS: parts.registry}
        if memory is not None:
            state[STATE_MEMORY] = memory
        folder = parts.cdef.folder
        self.tool_ctx = ToolContext(
            creature=parts.name,
            cwd=folder,
            readable=tuple(Path(p) for p in [*cfg.readable_paths, *cfg.writable_paths]),
            writable=tuple(Path(p) for p in cfg.writable_paths),
            state=state,
            workspace=Path(cfg.workspace) if cfg.workspace else None,
            tool_options=cfg.tool_options,
        )
        self.last_prompt: BuiltPrompt | None = None
        self._pending_notice: str | None = None

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
        if self.history_turns is not None:
            # a short history is also a short context: faster prompt evaluation and decoding
            keep = self.history_turns
            self.conversation = self.conversation[len(self.conversation) - keep:] if keep else []
        for item in inputs:
            rendered = item.render(self.message_templates.get(item.channel or ""))
            self.conversation.append(Turn("user", rendered))
            kind: EntryKind = "user" if item.channel is None else "message_in"
            self._entry(kind, rendered, name=item.channel,
                        data={"sender": item.sender, "message_id": item.message_id})
        recent, matches = await self._recall(inputs)
        if self.fills:
            self._fill_values = {"input": "\n".join(i.search_text for i in inputs),
                                 "recalled": " ".join(matches), "recent": " ".join(recent)}
        recalled = ((*(f"recently: {t}" for t in recent), *matches)
                    if self.memory_in_prompt else ())
        if self.record and self.memory is not None:
            for item in inputs:
                if item.search_text.strip():
                    await self.memory.awrite(item.search_text, creature=self.parts.name,
                                             source=item.channel or "user")
        default = self.parts.default_output
        sink = self.sinks.get(default) if default else None
        out = _Output(self, default, sink, f"{self.parts.name}-{self.turns}-{uuid.uuid4().hex[:8]}")
        await out.open()
        last_text = ""  # the turn-end text: the latest round's plain text, never call syntax
        try:
            for _ in range(self.max_iterations):
                result.rounds += 1
                built = self.builder.build(TailState(
                    step=self.step, now=self.clock(), recalled=recalled,
                    conversation=tuple(self.conversation), notice=self._pending_notice,
                    status=self.status))
                self._pending_notice = None
                self.step += 1
                self._pin_context(built)
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
                    tools=self.native_tools or None,
                    id_slot=self.slot,
                    cache_prompt=True,
                )
                self._state("thinking")
                rnd = await self._one_round(request, out, frame)
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
                    if rnd.finish_reason == "length":
                        dropped = await out.drop_unfinished()
                        if dropped:
                            self._entry("notice", f"not spoken, cut off by max_tokens: {dropped!r}")
                    break
            else:
                result.hit_max_iterations = True
                self._entry("notice", f"stopped after max_iterations={self.max_iterations}")
        finally:
            if out.started and sink is not None:
                with anyio.CancelScope(shield=True):
                    await sink.end()
            self._state("idle")
        result.text = "".join(out.spoken) if sink is not None else last_text
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

    def _pin_context(self, built: BuiltPrompt) -> None:
        """Keep this step's context block in the history, where the request showed it.

        ``messages()`` puts the volatile context (recalled facts, status, notice) just before
        the newest user message. Pinning it there means the next request repeats these exact
        bytes, so the model server's prompt cache covers everything but the new input.
        """
        ctx = built.context_message()
        if not ctx:
            return
        newest_user = max((i for i, t in enumerate(self.conversation) if t.role == "user"),
                          default=len(self.conversation))
        self.conversation.insert(newest_user, Turn("system", ctx))

    async def _one_round(
        self, request: ChatRequest, out: _Output, frame: ValueFrame | None = None
    ) -> _Round:
        """Stream one model response; calls start as soon as each one closes.

        With a ``frame`` the model writes only the value: the frame's prefix (already at the
        end of the request, as the start of the reply) and suffix are added around it here.
        """
        rnd = _Round()
        seq_lock = anyio.Lock()
        parser = self.parts.fmt.new_parser()
        failure: Exception | None = None
        # a framed value restarts its grammar on a continuation: never pause inside one
        pause = out.first_audio_pause(self.model) if frame is None else None
        async with anyio.create_task_group() as tg:

            async def handle(events: Sequence[Any]) -> None:
                for ev in events:
                    if isinstance(ev, TextEvent):
                        rnd.text.append(ev.text)
                        await out.write(ev.text)
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
                current: ChatRequest | None = request
                while current is not None:
                    paused = False
                    async with _closing(self.model.stream(current)) as deltas:
                        async for delta in deltas:
                            if delta.finish_reason:
                                rnd.finish_reason = delta.finish_reason
                            if delta.text:
                                rnd.raw.append(delta.text)
                                await handle(parser.feed(delta.text))
                            for tc in delta.tool_calls:
                                nc = rnd.native.setdefault(
                                    tc.index, {"id": "", "name": "", "arguments": ""})
                                nc["id"] = tc.id or nc["id"]
                                nc["name"] = tc.name or nc["name"]
                                nc["arguments"] += tc.arguments
                            if pause is not None and pause.ready(rnd):
                                paused = True
                                break
                    current = None
                    if paused and pause is not None:
                        current = await pause.resume(request, rnd)
                rnd.usage = (pause.usage(self.model.last_usage) if pause is not None
                             else self.model.last_usage)
            except Exception as exc:
                # re-raised below, outside the task group, so callers get the ModelError
                # itself rather than an ExceptionGroup; calls already started are cancelled
                failure = exc
                tg.cancel_scope.cancel()
            if failure is None:
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
            shown = [self.parts.fmt.render_call(r.name, self._written(r)) for r in records]
            raw = "\n".join(p for p in ["".join(rnd.text), *shown] if p)
        if raw:
            self.conversation.append(Turn("assistant", raw))
        if records and follow_up:
            lines = [f"Result of {r.name}: {r.result}" for r in records]
            self.conversation.append(Turn("user", "\n".join(lines)))

    async def _recall(self, inputs: Sequence[Incoming]) -> tuple[list[str], list[str]]:
        """(recent records, oldest to newest; the best matches not among them)."""
        recent: list[str] = []
        matches: list[str] = []
        if self.memory is None:
            return recent, matches
        if self.recent_limit:
            hits = await self.memory.arecent(self.recent_limit, creature=self.parts.name)
            recent = [h.text for h in reversed(hits)]
        if self.recall_limit:
            query = " ".join(i.search_text for i in inputs)
            hits = await self.memory.asearch(query, limit=self.recall_limit)
            matches = [h.text for h in hits if h.text not in recent]
        return recent, matches

    def _filled(self, call: str, args: dict[str, Any]) -> dict[str, Any]:
        """The full message of a send: the model's fields plus those the runtime fills in,
        in the channel schema's order (receivers show fields in that order)."""
        fill = {f: self._fill_values.get(src, "") for f, src in self.fills[call].items()}
        merged = {**args, **fill}
        return {**{n: merged[n] for n in self._field_order[call] if n in merged}, **merged}

    def _written(self, rec: CallRecord) -> dict[str, Any]:
        """A call's arguments as the model wrote them (without the fields filled in)."""
        fill = self.fills.get(rec.name) if rec.kind == "send" else None
        return {k: v for k, v in rec.args.items() if k not in fill} if fill else rec.args

    async def _run_call(
        self, ev: CallEvent, idx: int, records: list[CallRecord | None], seq_lock: anyio.Lock
    ) -> None:
        parts = self.parts
        args = _args_dict(ev.args, ev.raw_args)
        if ev.name in self.fills and ev.args is not None and ev.error is None:
            args = self._filled(ev.name, args)  # the transcript and record show what is sent
        self._entry("tool_call", ev.name, name=ev.name, detail=json.dumps(args, sort_keys=True),
                    data={"args": args})
        if ev.error is not None or ev.args is None:
            rec = CallRecord(ev.name, "invalid", args, False,
                             ev.error or "invalid call", True, ev.call_id)
        elif ev.name in parts.sends:
            rec = await self._send(ev, args)
        elif ev.name in parts.outputs:
            rec = await self._output(ev, args)
        else:
            tool = parts.registry.get(ev.name)
            self._state("calling_tool")
            if tool.concurrency_safe:
                res = await run_tool(tool, ev.args, self.tool_ctx)
            else:
                async with seq_lock:
                    res = await run_tool(tool, ev.args, self.tool_ctx)
            follow = tool.needs_followup or not res.ok or ev.name == "info"
            rec = CallRecord(ev.name, "tool", args, res.ok, res.text, follow, ev.call_id)
        records[idx] = rec
        self._entry("tool_result", rec.result, name=rec.name,
                    data={"ok": rec.ok, "kind": rec.kind})

    async def _send(self, ev: CallEvent, args: dict[str, Any]) -> CallRecord:
        channel = self.parts.sends[ev.name]
        if self.send is None:
            return CallRecord(ev.name, "send", args, False,
                              f"Refused: channel {channel!r} is not connected in this run.",
                              True, ev.call_id)
        try:
            n = await self.send(channel, args)
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


