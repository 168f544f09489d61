"""One round of a turn: stream the model's reply, start each call as soon as it closes, and
write the round into the history exactly as the model wrote it.

:class:`RoundStreaming` is a part of :class:`~terrarium.controller.loop.Controller` (a
mixin): it uses the controller's model, format, output and call routing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import anyio.lowlevel

from terrarium.controller.ask_again import banned_words, bias_against, request_again
from terrarium.controller.calls import CallRecord, CallRouting
from terrarium.crashpoints import ARMED as _CRASH_ARMED
from terrarium.crashpoints import crashpoint
from terrarium.errors import ModelError
from terrarium.events import Reasoning
from terrarium.formats import CallEvent, NoticeEvent, TextEvent, ValueFrame, grammar_for
from terrarium.formats.grammar import sentences_left
from terrarium.formats.native import NativeFormat
from terrarium.llm.reasoning import THINK_CLOSE, THINK_OPEN, ThinkSplitter
from terrarium.llm.types import ChatRequest, Usage
from terrarium.llm.usage import joined_usage
from terrarium.prompt.tail import Turn

if TYPE_CHECKING:
    from terrarium.controller.assembly import LoopSettings
    from terrarium.controller.output import TurnOutput
    from terrarium.formats.base import StreamParser
    from terrarium.llm.base import ChatModel
    from terrarium.prompt.builder import PromptBuilder
    from terrarium.voice.first_audio import FirstAudioPause

__all__ = ["MIN_RESULT_TOKENS", "RoundStreaming"]

MIN_RESULT_TOKENS = 64  # a round's results always keep at least this much

Handle = Callable[[Sequence[Any]], Awaitable[None]]
"""The round's handler of parsed events: text to the output, calls started, notices kept."""


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


def _spent(usage: Usage | None) -> str:
    """A model call's work, for a notice: tokens written and evaluated, and their time."""
    if usage is None:
        return "(no usage)"
    return (f"{usage.completion_tokens} tokens written in {usage.predicted_ms or 0:.0f} ms, "
            f"{usage.prompt_n if usage.prompt_n is not None else '?'} prompt tokens "
            f"evaluated in {usage.prompt_ms or 0:.0f} ms")


class _closing:  # (named as contextlib.closing: ``async with _closing(stream)``)
    """Close a model stream as soon as it is left, so the server stops generating at once.
    (A class, not an ``asynccontextmanager``: one a round, and the generator-based one
    costs three times the calls.)"""

    __slots__ = ("stream",)

    def __init__(self, stream: AsyncIterator[Any]) -> None:
        self.stream = stream

    async def __aenter__(self) -> AsyncIterator[Any]:
        return self.stream

    async def __aexit__(self, *exc: object) -> None:
        aclose = getattr(self.stream, "aclose", None)
        if aclose is not None:
            await aclose()


class RoundStreaming(CallRouting):
    """Streams one round and remembers it (the controller's round half)."""

    __slots__ = ()  # the Controller's slots hold what it sets (controller/loop.py)

    # the controller's, set in its __init__
    model: ChatModel
    settings: LoopSettings
    builder: PromptBuilder
    conversation: list[Turn]
    warming: anyio.Event | None

    async def _one_round(
        self, request: ChatRequest, out: TurnOutput, frame: ValueFrame | None = None,
        decided: str | None = None,
    ) -> _Round:
        """Stream one model response; calls start as soon as each one closes.

        With a ``frame`` the model writes only the value: the frame's prefix (already at the
        end of the request, as the start of the reply) and suffix are added around it here.
        A ``decided`` value (from ``choice_rules``) is written without asking the model.

        The calls run in a task group of the round's; a creature with no calls at all
        (its format knows no name: every other name is a notice, never a call) has none to
        start, so its round makes no task group (only the step its exit would take).
        """
        rnd = _Round()
        parser = self.parts.fmt.new_parser()
        thinking = ThinkSplitter()  # <think> blocks in the text are thinking, not the reply
        # a framed value restarts its grammar on a continuation: never pause inside one
        pause = out.first_audio_pause(self.model) if frame is None else None
        if not self.parts.fmt.specs:
            try:
                failure = await self._round_body(request, rnd, out, frame, decided, pause,
                                                 thinking, parser, self._handler(rnd, out))
            finally:
                # the one step a task group's exit takes with no call to wait for (shielded),
                # kept: creatures running at once (a lead's sub-agents) interleave as before
                await anyio.lowlevel.cancel_shielded_checkpoint()
        else:
            async with anyio.create_task_group() as tg:
                failure = await self._round_body(
                    request, rnd, out, frame, decided, pause, thinking, parser,
                    self._handler(rnd, out, tg, anyio.Lock()))
                if failure is not None:  # calls already started are cancelled
                    tg.cancel_scope.cancel()
        if failure is not None:
            # re-raised here, outside the task group, so callers get the ModelError
            # itself rather than an ExceptionGroup
            raise failure
        return rnd

    def _handler(self, rnd: _Round, out: TurnOutput, tg: anyio.abc.TaskGroup | None = None,
                 seq_lock: anyio.Lock | None = None) -> Handle:
        """The round's handler of parsed events: text to the output, each closed call
        started in ``tg`` (None: the format knows no call, so none can close), notices kept."""

        async def handle(events: Sequence[Any]) -> None:
            for ev in events:
                if isinstance(ev, TextEvent):
                    rnd.text.append(ev.text)
                    await out.say(ev.text)
                elif isinstance(ev, CallEvent):
                    if tg is None or seq_lock is None:  # (a call is made from a known spec)
                        raise RuntimeError(f"a call to {ev.name!r} closed in a round of a "
                                           "creature that knows no calls")
                    rnd.records.append(None)
                    tg.start_soon(self._run_call, ev, len(rnd.records) - 1, rnd.records,
                                  seq_lock)
                elif isinstance(ev, NoticeEvent):
                    rnd.notices.append(ev.text)

        return handle

    async def _round_body(self, request: ChatRequest, rnd: _Round, out: TurnOutput,
                          frame: ValueFrame | None, decided: str | None,
                          pause: FirstAudioPause | None, thinking: ThinkSplitter,
                          parser: StreamParser, handle: Handle) -> Exception | None:
        """The round's text, from the frame, a decided value or the model, then its close;
        returns the exception that ended it early (None: it ended well)."""
        if frame is not None:
            rnd.raw.append(frame.prefix)
            await handle(parser.feed(frame.prefix))
        try:
            if decided is not None:
                rnd.raw.append(decided)
                await handle(parser.feed(decided))
                rnd.finish_reason = "stop"
            else:
                await self._stream(request, rnd, out, pause, thinking, parser, handle)
        except Exception as exc:
            return exc
        await self._close_round(rnd, frame, thinking, parser, handle)
        return None

    async def _stream(self, request: ChatRequest, rnd: _Round, out: TurnOutput,
                      pause: FirstAudioPause | None, thinking: ThinkSplitter,
                      parser: StreamParser, handle: Handle) -> None:
        """The model's reply, delta by delta, into ``rnd`` (the hot path: one loop per token).

        A first-audio ``pause`` stops the stream once the reply's first piece is ready and
        continues it from a prefill; the guard's stop ends it at once; the guard's asking
        again (``out.asking``) ends it and continues from what was spoken (:meth:`_ask_again`).
        """
        if self.warming is not None:
            await self.warming.wait()
        current: ChatRequest | None = request
        asked: Usage | None = None  # the calls whose rest was asked again
        while current is not None:
            paused = False
            async with _closing(self.model.stream(current)) as deltas:
                async for delta in deltas:
                    if _CRASH_ARMED:
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
                    if out.stopped or out.settled or out.asking:  # no more of it is spoken
                        break
                    if pause is not None and pause.ready(rnd):
                        paused = True
                        break
            current = None
            if out.asking:  # its rest would copy the user: the model continues what was spoken
                cut = self.model.last_usage
                asked = joined_usage(asked, cut)
                current = self._spoken_continuation(await self._ask_again(request, rnd, out),
                                                    rnd)
                self._entry("notice", f"asked the model again after {_spent(cut)} of the "
                            "copy")
            elif paused and pause is not None:
                current = self._spoken_continuation(await pause.resume(request, rnd), rnd)
        if asked is not None:  # what the request that asked again cost (bench/ figures)
            self._entry("notice", f"asked again: {_spent(self.model.last_usage)}")
        rnd.usage = joined_usage(asked, pause.usage(self.model.last_usage) if pause is not None
                                 else self.model.last_usage)

    async def _ask_again(self, request: ChatRequest, rnd: _Round,
                         out: TurnOutput) -> ChatRequest:
        """The request that asks the model again (:mod:`terrarium.controller.ask_again`):
        the round's text becomes what was spoken, which the model continues, steered away
        from the user's words not yet said."""
        guard = out.guard
        assert guard is not None  # only a guard asks
        spoken = guard.ask_from()
        rnd.text[:] = rnd.raw[:] = [spoken]
        try:
            bias = await bias_against(self.model, banned_words(guard.user, spoken, guard.facts))
        except ModelError as exc:  # the tokens are a help, not a need: asked without them
            bias = {}
            self._entry("notice", f"asked again without a logit_bias: {exc}")
        return request_again(request, spoken, bias)

    async def _close_round(self, rnd: _Round, frame: ValueFrame | None,
                           thinking: ThinkSplitter, parser: StreamParser,
                           handle: Handle) -> None:
        """The end of a streamed round: the thinking logged once, the frame's suffix and the
        parser's last events handled, native calls (complete only now) started in order."""
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
        if rnd.native and isinstance(fmt, NativeFormat):
            for i in sorted(rnd.native):
                nc = rnd.native[i]
                await handle([fmt.call_from_native(nc["name"], nc["arguments"],
                                                   nc["id"] or f"call_{i}")])

    def _reasoned(self, rnd: _Round, text: str) -> None:
        """A reasoning model's thinking: to the monitor and the log, nowhere else."""
        rnd.reasoning.append(text)
        self.emit(Reasoning(creature=self.parts.name, text=text))

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

