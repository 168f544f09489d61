"""The controller loop: one creature turn, from incoming text to calls, results and output.

A turn: build the prompt (cached prefix + fresh tail) → stream the model → start each call
as soon as it closes (concurrency-safe tools at once, the others in order) → feed results
back → repeat until the model answers without calls or ``max_iterations`` is reached.
Plain text streams to the creature's default named output while it arrives.

The turn is here; the round (streaming the reply, starting calls, writing the round into
the history) is ``rounds``; where each call goes (tool, send, output) is ``calls``.
Beside them, each in its own module: memory recall and record (``recall``), the fields the
runtime fills into sends (``fill``), the turn's default output (``output``), the
context pinned into the history (``pinning``), the approval gate (``approval_gate``), the
model-written fold lines of ``compaction: summarize`` (``compaction``); the first-audio
pause is the tts sink's (``terrarium.voice.first_audio``). The config keys the loop reads
come from ``parts.loop`` (:class:`~terrarium.controller.assembly.LoopSettings`); the
plugins (``jobs.creature_hooks``) and ``compaction`` read the creature config themselves.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import anyio
from pydantic import TypeAdapter

from terrarium.config.models import CompactionConfig
from terrarium.controller.approval_gate import ApprovalGate
from terrarium.controller.assembly import CreatureParts
from terrarium.controller.calls import CallKind, CallRecord, SendFn
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
from terrarium.controller.rounds import RoundStreaming, _closing, _Round
from terrarium.controller.send_fill import SendFill
from terrarium.crashpoints import ARMED as _CRASH_ARMED
from terrarium.crashpoints import crashpoint
from terrarium.errors import ContextOverflow
from terrarium.events import EntryKind, Event, PromptBuilt, PromptSectionInfo
from terrarium.formats import ValueFrame, grammar_for, openai_tools, value_frame
from terrarium.llm.base import ChatModel, keeps_prompt_cache, supports_continuation
from terrarium.llm.types import ChatMessage, ChatRequest, Usage
from terrarium.prompt.budget import Tokenizer
from terrarium.prompt.builder import PromptBuilder
from terrarium.prompt.built_prompt import BuiltPrompt, SectionInfo
from terrarium.prompt.tail import TailState, Turn
from terrarium.store import MemoryStore
from terrarium.store.spoken import punctuated
from terrarium.tools.approval import Approver
from terrarium.tools.base import Answerer, EffectJournal, ToolContext
from terrarium.tools.state import STATE_MEMORY, STATE_TOOLS
from terrarium.voice.sink import OutputSink

__all__ = ["CallKind", "CallRecord", "Controller", "Emit", "Incoming", "SendFn", "TurnResult"]

# a request's messages validated in one call (a long session's window holds a hundred and
# more; each ``ChatMessage.model_validate`` of its own cost twice as much)
_MESSAGES: TypeAdapter[list[ChatMessage]] = TypeAdapter(list[ChatMessage])


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


def _ignore(event: Event) -> None:
    """The emitter of a controller nobody watches."""


class Controller(RoundStreaming):
    """Runs turns for one creature; owns its conversation, prompt builder and call routing."""

    # One per creature, so its size counts: slots, not an instance dict (on CPython 3.11 a
    # dict of 30 or more keys stops sharing its class's key table, ~1.3 KB more each).
    # The mixins declare no slots of their own; every attribute of the loop is named here.
    __slots__ = (
        "_pending_notice", "_prefix_infos", "_round", "_sent", "_turn_of", "builder",
        "choice_rules", "clock", "compactor", "conversation", "emit", "fill", "frame", "gate",
        "grammar", "hooks",
        "last_prompt", "memory", "message_templates", "model", "native_tools", "parts",
        "pins", "send", "settings", "sinks", "slot", "step", "tool_ctx", "turns", "warming",
    )

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
        self.choice_rules = cfg.choice_rules
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
        # the prefix's sections as ``PromptBuilt`` reports them, made again only when the
        # prefix changes (``_section_infos``): every turn of a creature has the same ones
        self._prefix_infos: tuple[tuple[SectionInfo, ...], tuple[PromptSectionInfo, ...]] = (
            (), ())
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

    # -- one turn --------------------------------------------------------------------
    async def run_turn(self, inputs: Sequence[Incoming]) -> TurnResult:
        """Run one turn over ``inputs``; tool and send failures go back to the model."""
        self.turns += 1
        result = TurnResult(text="")
        await self.hooks.turn_start(self.turns, inputs)  # hooks: on_message
        cfg = self.settings
        before, recalled = await self._take_inputs(inputs)
        out, sink = await self._open_output(inputs)
        last_text = ""  # the turn-end text: the latest round's plain text, never call syntax
        decided = self._decide(inputs)  # a fixed-choice value the input settles
        try:
            fixed = out.guard.fixed if out.guard is not None else None
            for _ in range(cfg.max_iterations if fixed is None else 0):
                result.rounds += 1
                step = self.step
                self.step += 1
                try:
                    built = await self._prompt(step, recalled)
                except ContextOverflow as exc:
                    if result.rounds > 1:
                        raise
                    self._refuse(result, before, exc)
                    break
                request, frame = await self._request(result, built)
                self._state("thinking")
                self._round = result.rounds
                if _CRASH_ARMED:
                    crashpoint("turn.round")
                rnd = await self._one_round(request, out, frame,
                                            decided if frame is not None else None)
                decided = None
                if self.hooks.plugins:  # (none: no reply text joined for nobody)
                    await self.hooks.after_model(request, "".join(rnd.raw), rnd.usage,
                                                 rnd.finish_reason)
                follow_up, text = self._account(result, rnd)
                last_text = text or last_text
                if not follow_up:
                    await self._cut_off(out, rnd)
                    break
            else:
                last_text = await self._no_round_left(result, out, fixed) or last_text
            for n in await out.finish():
                self._entry("notice", n)
        finally:
            if out.started and sink is not None:
                with anyio.CancelScope(shield=True):
                    await sink.end()
            self._state("idle")
            self.hooks.turn_over()  # hooks: the turn is over, however it ended
        result.text = "".join(out.spoken) if sink is not None else last_text
        if self.hooks.plugins:
            await self.hooks.turn_end(result)  # hooks: on_turn_end
        if _CRASH_ARMED:
            crashpoint("turn.end")
        return result

    async def _take_inputs(self, inputs: Sequence[Incoming]) -> tuple[int, tuple[str, ...]]:
        """The turn's inputs into the conversation (and memory); returns the conversation's
        length before them (to forget them if refused) and the recalled prompt lines."""
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
        if _CRASH_ARMED:
            crashpoint("turn.begin")
        facts = await recall(self.memory, inputs, creature=self.parts.name,
                              recent=cfg.memory_recent, matches=cfg.memory_recall,
                              facts=cfg.memory_facts, notes=cfg.memory_notes)
        self.fill.begin_turn(inputs, facts)
        recalled = facts.prompt_lines() if cfg.memory_in_prompt else ()
        if (cfg.memory_record or cfg.memory_facts) and self.memory is not None:
            await record(self.memory, inputs, creature=self.parts.name,
                         facts=cfg.memory_facts > 0, texts=cfg.memory_record,
                         meaning=cfg.memory_notes > 0)
            if _CRASH_ARMED:
                crashpoint("turn.recorded_inputs")
        return before, recalled

    async def _open_output(self, inputs: Sequence[Incoming]
                           ) -> tuple[TurnOutput, OutputSink | None]:
        """The turn's default output (guarded by the reply guard when it has a sink)."""
        default = self.parts.default_output
        sink = self.sinks.get(default) if default else None
        out = TurnOutput(self.emit, self.parts.name, default, sink,
                         f"{self.parts.name}-{self.turns}-{os.urandom(4).hex()}")
        if sink is not None:
            out.guard = ReplyGuard.for_turn(self.settings.reply_guard,
                                            [dict(i.payload or {}) for i in inputs])
            if out.guard is not None and self.grammar is not None:
                out.guard.max_sentences = self.settings.spoken_sentences  # the grammar's end
            if out.guard is not None:  # the voice's first piece (TTSOutput.segmenter_config)
                out.guard.first_piece = getattr(sink, "segmenter_config", None)
                out.guard.cuts_piece = callable(getattr(sink, "cut_first_piece", None))
                spec = self.settings.reply_guard  # asked again: the model continues a prefill
                out.guard.ask_again = (spec.ask_again if spec is not None and getattr(
                    self.model, "tokenizes", False) and supports_continuation(self.model)
                    else 0)
        await out.open()
        return out, sink

    async def _prompt(self, step: int, recalled: Sequence[str]) -> BuiltPrompt:
        """This round's prompt, its new context pinned into the history (raises
        ContextOverflow when even the input cannot fit)."""
        context = self.builder.context(TailState(
            step=step, now=self.clock(), recalled=recalled,
            notice=self._pending_notice, status=self.settings.prompt_status))
        self._pending_notice = None
        self._pin_context(context)
        built = self._build(step)
        if built.folded_turns and self._pin_context(context, again=True):
            built = self._build(step)  # a fold hid the pinned status or facts
        return await self._summarize_fold(built, step)

    def _refuse(self, result: TurnResult, before: int, exc: ContextOverflow) -> None:
        """The input itself cannot fit: refuse it, forget it, and go on."""
        del self.conversation[before:]
        self._sent = min(self._sent, len(self.conversation))
        result.refused = exc.message
        self._entry("notice", f"input refused: {exc.message}")

    async def _request(self, result: TurnResult, built: BuiltPrompt
                       ) -> tuple[ChatRequest, ValueFrame | None]:
        """The model request for a built prompt (reported as ``PromptBuilt``), with the
        value frame's prefix as the reply's start when the model can continue it."""
        self._sent = len(self.conversation)
        self.last_prompt = built
        result.prefix_hash = built.prefix_hash
        self.emit(PromptBuilt(
            creature=self.parts.name, prefix_hash=built.prefix_hash, tokens=built.tokens,
            sections=self._section_infos(built)))
        messages = _MESSAGES.validate_python(built.messages())
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
        if self.hooks.plugins:
            request = await self.hooks.before_model(request)  # hooks: may edit the request
        return request, frame

    def _section_infos(self, built: BuiltPrompt) -> tuple[PromptSectionInfo, ...]:
        """``built``'s section map as ``PromptBuilt`` carries it: the prefix's part kept
        from the last prompt while its sections are the same object (the builder's cached
        prefix), the tail's made anew."""
        prefix, infos = self._prefix_infos
        if prefix is not built.prefix_sections:
            prefix = built.prefix_sections
            infos = tuple(PromptSectionInfo(i.name, i.zone, i.bytes, i.tokens) for i in prefix)
            self._prefix_infos = (prefix, infos)
        return infos + tuple(PromptSectionInfo(i.name, i.zone, i.bytes, i.tokens)
                             for i in built.tail_section_infos())

    def _account(self, result: TurnResult, rnd: _Round) -> tuple[bool, str | None]:
        """Add a finished round to the result, the history and the transcript; returns
        whether another round must follow and the round's plain text (None if blank)."""
        usage = rnd.usage
        if usage is not None:
            result.usages.append(usage)
            result.prompt_tokens += usage.prompt_tokens
            result.cached_tokens += usage.cached_tokens
            result.completion_tokens += usage.completion_tokens
        notices = rnd.notices
        done = [r for r in rnd.records if r is not None]
        text = "".join(rnd.text)
        result.calls.extend(done)
        result.notices.extend(notices)
        follow_up = bool(notices) or any(r.needs_followup for r in done)
        self._remember_round(rnd, done, follow_up)
        if text.strip():
            self._entry("assistant", text)
        for n in notices:
            self._entry("notice", n)
        if notices:
            self._pending_notice = "\n".join(notices)
        return follow_up, text if text.strip() else None

    async def _cut_off(self, out: TurnOutput, rnd: _Round) -> None:
        """The last round was cut off (max_tokens) or stopped by the guard: its unfinished
        sentence is not spoken, and the transcript says so."""
        if rnd.finish_reason == "length" or out.stopped:
            dropped = await out.drop_unfinished()
            if dropped:
                why = out.stop_reason if out.stopped else "max_tokens"
                self._entry("notice", f"not spoken, cut off by {why}: {dropped!r}")

    async def _no_round_left(self, result: TurnResult, out: TurnOutput,
                             fixed: str | None) -> str | None:
        """The turn ran out of rounds, or had none: a ``fixed`` reply the runtime knows is
        written (and returned as the turn's text); otherwise ``max_iterations`` was hit."""
        if fixed is not None:  # the runtime knows the reply: no model round
            await out.write(fixed)
            self._entry("assistant", fixed)
            return fixed
        result.hit_max_iterations = True
        self._entry("notice", f"stopped after max_iterations={self.settings.max_iterations}")
        return None

    async def warm_prefix(self) -> Usage | None:
        """Have the model server evaluate this creature's prompt prefix ahead of its first turn.

        Only for a server that keeps a prompt cache per slot (llama.cpp): the first turn then
        evaluates only its new input, like every later one. The prefix goes with an empty
        user turn, so the slot also keeps the chat template's opening of a user turn
        (``<|im_start|>user\n``), as a slot does after any turn: the first turn evaluates
        exactly what later ones do (2 tokens fewer than after the system message alone).
        Returns the request's usage, or None when there is nothing to warm.
        """
        if not keeps_prompt_cache(self.model):
            return None
        built = self.builder.build(TailState(step=0, status=False))
        first = built.messages()[0]
        if first.get("role") != "system":
            return None
        request = ChatRequest(messages=[ChatMessage.model_validate(first),
                                        ChatMessage(role="user", content="")],
                              max_tokens=1, id_slot=self.slot, cache_prompt=True)
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

    def _decide(self, inputs: Sequence[Incoming]) -> str | None:
        """The value a ``choice_rules`` pattern picks for these inputs (first match wins).
        A text closed by no mark that opens as a question is matched with its "?"
        (``store.spoken.punctuated``: "who's my stepfather", as speech recognition writes it,
        is a question, as recall reads it, not a statement for the model to guess)."""
        if not self.choice_rules or self.frame is None or not self.frame.choices:
            return None
        text = "\n".join(punctuated(i.search_text) for i in inputs)
        for rule in self.choice_rules:
            if rule.value in self.frame.choices and rule.decides(text):
                return rule.value
        return None

