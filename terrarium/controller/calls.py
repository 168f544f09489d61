"""Where each closed call of a round goes: a tool (through the approval gate), a send on a
channel, or a named output; each becomes a :class:`CallRecord` the model reads back.

:class:`CallRouting` is a part of :class:`~terrarium.controller.loop.Controller` (a mixin):
it uses the controller's parts, sinks, send function, tool context, gate and hooks.
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import anyio
from pydantic import BaseModel

from terrarium.controller.assembly import ANY_CHANNEL
from terrarium.crashpoints import crashpoint
from terrarium.errors import ChannelRefusal, TerrariumError
from terrarium.events import (
    CreatureState,
    CreatureStateName,
    EntryKind,
    Event,
    OutputText,
    TranscriptAppended,
    TranscriptEntry,
)
from terrarium.formats import CallEvent
from terrarium.tools.base import Tool, ToolContext
from terrarium.tools.runner import ToolResult

if TYPE_CHECKING:
    from terrarium.controller.approval_gate import ApprovalGate
    from terrarium.controller.assembly import CreatureParts
    from terrarium.controller.plugins import Hooks
    from terrarium.controller.send_fill import SendFill
    from terrarium.voice.sink import OutputSink

__all__ = ["CallKind", "CallRecord", "CallRouting", "Reporting", "SendFn"]

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


def _args_dict(args: BaseModel | None, raw: Mapping[str, Any]) -> dict[str, Any]:
    return args.model_dump(mode="json") if args is not None else dict(raw)


class Reporting:
    """How the controller tells its owner what it does: state changes and transcript lines."""

    __slots__ = ()  # the Controller's slots hold what it sets (controller/loop.py)

    # the controller's, set in its __init__
    parts: CreatureParts
    emit: Callable[[Event], None]
    turns: int

    def _state(self, state: CreatureStateName) -> None:
        self.emit(CreatureState(creature=self.parts.name, state=state))

    def _entry(self, kind: EntryKind, text: str, **kw: Any) -> None:
        entry = TranscriptEntry(kind, text, time.time(), self.turns, **kw)
        self.emit(TranscriptAppended(creature=self.parts.name, entry=entry))


class CallRouting(Reporting):
    """Runs one closed call and records what it did (the controller's call half)."""

    __slots__ = ()  # the Controller's slots hold what it sets (controller/loop.py)

    # the controller's, set in its __init__
    sinks: dict[str, OutputSink]
    send: SendFn | None
    fill: SendFill
    tool_ctx: ToolContext
    gate: ApprovalGate
    hooks: Hooks
    _turn_of: str | None  # the consumed messages this turn answers
    _round: int

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

