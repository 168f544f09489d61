"""Keeping creatures running: one loop per creature, turns under supervision, restarts.

Each creature's loop warms it up, then wakes on its inbox and runs one message per turn
(or, with ``double_texting: merge``, every message waiting on that message's channel).
A failing turn is recorded and retried on a rebuilt controller after an exponential
backoff with jitter; after ``Supervision.max_failures`` the creature gives up, keeping its
message first in line for ``start``. Every loop runs in the run's one task group.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import anyio.abc

from terrarium.channels.bus import EventBus
from terrarium.channels.envelope import Envelope, new_message_id
from terrarium.channels.hub import ChannelHub
from terrarium.config.models import TriggerConfig
from terrarium.controller.jobs import STATE_JOBS
from terrarium.controller.loop import Controller, Incoming, TurnResult
from terrarium.crashpoints import ARMED as _CRASH_ARMED
from terrarium.crashpoints import crashpoint
from terrarium.errors import ChannelRefusal, ModelError, RuntimeFailure
from terrarium.events import (
    CreatureState,
    ErrorEvent,
    JobEnded,
    MessageRefused,
    Restart,
    TurnEnded,
    TurnStarted,
)
from terrarium.runtime.creature import RunningCreature
from terrarium.runtime.options import ROOT, TRIGGER, RuntimeOptions
from terrarium.runtime.recording import Recorder
from terrarium.runtime.warmup import voice_note
from terrarium.voice.sink import OutputSink

__all__ = ["Supervisor"]

logger = logging.getLogger("terrarium.runtime")
MERGE_LIMIT = 64  # messages a merged turn takes at most (an inbox's room)


class Supervisor:
    """Runs, restarts, stops and starts the team's creatures; counts what is in motion."""

    def __init__(self, creatures: Mapping[str, RunningCreature], *, hub: ChannelHub,
                 recorder: Recorder, bus: EventBus,
                 sinks: Mapping[str, Mapping[str, OutputSink]], options: RuntimeOptions,
                 tg: anyio.abc.TaskGroup, members: Sequence[str]) -> None:
        self.creatures = creatures
        self.members = members  # the team's creatures (the root is not one), for errors
        self.hub = hub
        self.recorder = recorder
        self.bus = bus
        self.sinks = sinks
        self.options = options  # its supervision policy and warm_up flag
        self.tg = tg
        self.active_turns = 0
        self.recovering = 0  # creatures waiting out a restart backoff still count as busy
        self.settling = 0  # merging creatures waiting for more messages (double_texting_wait)

    # ------------------------------------------------------------------ creature loops
    async def loop(self, c: RunningCreature) -> None:
        """Wake on the inbox, one message per turn, until stopped (or a newer loop starts)."""
        if not c.parts.cdef.listen:
            return
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
            if c.parts.cdef.config.double_texting_wait and not await self._settle(c, env):
                return
            gate = self.options.turn_gate
            if gate is None:
                await self._supervised_turn(c, env)
            else:  # computing only while it holds the gate (runtime/gate.py)
                await gate.run(self._supervised_turn(c, env))

    async def _settle(self, c: RunningCreature, env: Envelope) -> bool:
        """``double_texting_wait``: before a merging turn starts, wait until no message has
        come for that long (at most 10 times it), so a burst is one turn. False when the
        creature was stopped meanwhile (``env`` is first in line again)."""
        cfg = c.parts.cdef.config
        inbox = self.hub.subscribe(c.name)
        if not self._merges(c) or env.id in inbox.replayed:
            return True
        wait = cfg.double_texting_wait
        deadline = anyio.current_time() + 10 * wait
        self.settling += 1  # busy meanwhile (a message is taken, its turn not started)
        try:
            with anyio.CancelScope() as scope:
                c.wait_scope = scope
                seen = inbox.pending()
                while (left := deadline - anyio.current_time()) > 0:
                    await anyio.sleep(min(wait, left))
                    if inbox.pending() == seen:
                        break
                    seen = inbox.pending()
        finally:
            c.wait_scope = None
            self.settling -= 1
        if scope.cancelled_caught:
            inbox.put_back(env)
            return False
        return True

    async def _warm(self, c: RunningCreature) -> None:
        """Warm the creature's prompt prefix and voices; a failure only costs the speed-up."""
        try:
            if c.controller is not None:
                usage = await c.controller.warm_prefix()
                if usage is not None:
                    self._entry(c, "notice", f"prompt prefix warmed: {usage.prompt_n} "
                                f"tokens in {usage.prompt_ms or 0:.0f} ms")
            for sink in self.sinks.get(c.name, {}).values():
                warm = getattr(sink, "warm", None)
                if warm is not None:
                    seconds = await warm()
                    self._entry(c, "notice", voice_note(seconds))
        except Exception as exc:  # the first turn will simply be slower
            cause = _root_cause(exc)
            self._entry(c, "notice", f"warm-up skipped: {type(cause).__name__}: "
                        f"{getattr(cause, 'message', cause)}")

    def _merges(self, c: RunningCreature) -> bool:
        """Whether ``c``'s turns merge waiting messages (``double_texting: merge``; a creature
        on a broker always takes one message a turn)."""
        return c.parts.cdef.config.double_texting == "merge" and not self.hub.transport.brokered

    def _merged(self, c: RunningCreature, env: Envelope) -> list[Envelope]:
        """The messages a turn over ``env`` answers: ``env`` alone, or (``double_texting:
        merge``) with every message waiting behind it on its channel, taken when the turn
        starts (after its wait for the turn gate: what came meanwhile is in it). A
        resumed message takes what its turn's first attempt took, as the log kept it."""
        if not self._merges(c):
            return [env]
        inbox = self.hub.subscribe(c.name)
        if env.id in inbox.replayed:
            inbox.replayed.discard(env.id)
            kept = self.recorder.merged(c.name, env.id)
            return [env, *inbox.take_replayed(kept[1:])] if kept else [env]
        more = inbox.take_waiting(env.channel, MERGE_LIMIT)
        if more:
            self.recorder.keep_merge(c.name, [env.id, *(e.id for e in more)])
        return [env, *more]

    async def _supervised_turn(self, c: RunningCreature, env: Envelope) -> None:
        if self.hub.transport.brokered and self.recorder.consumed(c.name, env.id):
            # handed again by the broker after its turn was recorded (the ack was lost,
            # or a session's worker died between the two): acked, not heard twice
            await self.hub.mark_consumed(c.name, env.id)
            return
        if self.hub.taken_over(c.name, env.id):  # it waited out a stall here: not ours now
            await self._drop_taken_over(c, env.id)
            return
        envs = self._merged(c, env)
        ids = [e.id for e in envs]
        incoming = [Incoming(text=str(e.payload.get("text", "")), channel=e.channel,
                             sender=e.sender, payload=e.payload, message_id=e.id)
                    for e in envs]
        while True:
            # a merged turn's sends are named after its first message (``turn_key``)
            c.turn_key, c.turn_sends = env.id, 0
            ops: list[tuple[str, list[tuple[Any, ...]]]] = []  # committed with the consumption
            try:
                result = await self.turn(c, incoming, ops, held=env.id)
            except _TakenOver:
                c.turn_key = None
                await self._drop_taken_over(c, env.id)
                return
            except Exception as exc:  # a failing turn must not take the team down
                if self._failed(c, exc):
                    # keep its message first in line for start_creature (and in the log)
                    self.hub.subscribe(c.name).replay(envs)
                    return
                await self._back_off(c)
                continue
            c.failures = 0
            if result is not None and result.refused:
                self._refused(c, env, result.refused)
            # the turn's wired output is one of its effects: sent (with its deterministic
            # key) before the message is marked consumed (and, on a broker, acked), so a
            # crash between the two neither loses it nor, on resume, sends it twice
            if result is not None:
                await self._wire_output(c, result, env.id)
            c.turn_key = None
            # the turn's record and (a session) the conversation it made, committed in the
            # consumption's transaction: one per turn, and never a consumed message whose
            # conversation is not kept
            history = self.recorder.history_ops(c.name, env.id, c.controller)
            try:
                await self.hub.mark_consumed(c.name, ids, also=ops + history)
            except BaseException:
                if history:  # not committed: the next save writes the conversation whole
                    self.recorder.history_lost(c.name)
                raise
            if history and _CRASH_ARMED:
                crashpoint("session.history_saved")
            if _CRASH_ARMED:
                crashpoint("supervisor.consumed")
            return

    def _failed(self, c: RunningCreature, exc: Exception) -> bool:
        """Record a failed turn; True when the creature gives up (it is then stopped)."""
        sup = self.options.supervision
        status = self.recorder.statuses[c.name]
        c.failures += 1
        cause = _root_cause(exc)
        msg = f"{type(cause).__name__}: {getattr(cause, 'message', cause)}"
        if hint := getattr(cause, "suggestion", None):  # what to check, e.g. the server
            msg += f" (hint: {hint})"
        status.last_error = msg
        self._entry(c, "error", f"turn failed: {msg}")
        self.bus.publish(ErrorEvent(creature=c.name, message=msg))
        self.recorder.record_turn(c.name, c.turns, None, error=msg)
        # an error no retry can fix (HTTP 4xx but 408/429) is not asked again
        permanent = isinstance(cause, ModelError) and cause.permanent
        if not (permanent or c.failures >= sup.max_failures):
            return False
        status.state = "failed"
        why = ("the model refused the request; retrying cannot help" if permanent
               else f"{c.failures} failed attempts in a row")
        self.bus.publish(ErrorEvent(creature=c.name, message=f"gave up ({why}): {msg}"))
        self.bus.publish(CreatureState(creature=c.name, state="failed"))
        logger.error("creature %s failed (%s); giving up", c.name, why)
        c.stopped = True
        c.turn_key = None
        return True

    async def _back_off(self, c: RunningCreature) -> None:
        """Wait out the restart delay after a failed turn, then rebuild the controller."""
        delay = self.options.supervision.delay(c.failures)
        status = self.recorder.statuses[c.name]
        status.restarts += 1
        status.state = "restarting"
        self.bus.publish(CreatureState(creature=c.name, state="restarting"))
        self.bus.publish(Restart(creature=c.name, attempt=c.failures, delay=delay))
        self.recovering += 1
        try:
            await anyio.sleep(delay)
            c.controller = _rebuild(c)
        finally:
            self.recovering -= 1

    async def _drop_taken_over(self, c: RunningCreature, message_id: str) -> None:
        """This process went silent past the broker's ack wait while holding the message,
        so another listener may be doing its turn: nothing here is counted, sent or
        recorded as consumed, and the message is let go unacked (its new holder acks it, or
        the broker hands it on again). Its effects, if any ran, carry the same ids."""
        self._entry(c, "notice", f"turn on message {message_id} dropped: this process was "
                    "silent longer than the broker's ack wait, so it may be another "
                    "listener's now")
        await self.hub.let_go(c.name, message_id)

    async def turn(self, c: RunningCreature, incoming: Sequence[Incoming],
                   ops: list[tuple[str, list[tuple[Any, ...]]]] | None = None,
                   held: str | None = None) -> TurnResult | None:
        """One turn, cancellable by barge-in (then None), counted and recorded (a finished
        turn's record added to ``ops`` when given, for the caller to commit). ``held``: the
        message it answers, from a broker; taken over meanwhile, the turn raises
        ``_TakenOver`` before it is counted."""
        ctl = c.controller
        assert ctl is not None
        self.active_turns += 1
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
                self._entry(c, "notice", "turn cut short by a new user utterance")
                self.recorder.record_turn(c.name, c.turns, None, error="cut by barge-in",
                                          started=started)
                return None
            if held is not None and self.hub.taken_over(c.name, held):
                self.recorder.record_turn(c.name, c.turns, None, error="taken over",
                                          started=started)
                raise _TakenOver(held)
            self.recorder.count_turn(c.name, result)
            self.recorder.record_turn(c.name, c.turns, result, started=started, into=ops)
            self.bus.publish(TurnEnded(creature=c.name, turn_index=idx,
                                       prompt_tokens=result.prompt_tokens,
                                       cached_tokens=result.cached_tokens,
                                       completion_tokens=result.completion_tokens))
            return result
        finally:
            c.turn_scope = None
            self.active_turns -= 1
            if (done := c.turn_done) is not None:  # made by a waiter (``wake``) only
                c.turn_done = None
                done.set()

    async def _wire_output(self, c: RunningCreature, result: TurnResult,
                           consumed: str | None = None) -> None:
        text = result.text.strip()
        if not text:
            if c.parts.cdef.output_wiring:  # never an empty message; never in silence
                calls = ", ".join(dict.fromkeys(r.name for r in result.calls)) or "none"
                self._entry(c, "notice", f"nothing sent on "
                            f"{', '.join(c.parts.cdef.output_wiring)}: the turn ended without "
                            f"text (its calls: {calls})")
            return
        for ch in c.parts.cdef.output_wiring:
            key = f"{c.name}/{consumed}/output:{ch}" if consumed else None
            mid = c.send_id(self.hub.run_id, key) if key is not None else None
            try:
                await self.hub.send(c.name, ch, {"text": text}, key=mid, message_id=mid)
            except ChannelRefusal as exc:
                self._entry(c, "error", f"output wiring to {ch} refused: {exc.message}")

    def _refused(self, c: RunningCreature, env: Envelope, why: str) -> None:
        """A message the creature could not take (too big for its context window): told
        to whoever watches and recorded; it is consumed, so the creature goes on."""
        self.refused(c, env.sender, env.channel, f"message {env.id}", why)

    def refused(self, c: RunningCreature, sender: str, channel: str, what: str,
                why: str) -> None:
        """``what`` (a message, or text given straight to the creature) was too much for
        ``c``: recorded and published with ``c`` as its receiver, so a watcher tells it
        apart from a send the channel refused."""
        reason = f"{what} was refused by {c.name}: {why}"
        self.recorder.refusal(sender, channel, reason)
        self.bus.publish(MessageRefused(sender=sender, channel=channel, reason=reason,
                                        receiver=c.name))

    def _entry(self, c: RunningCreature, kind: str, text: str) -> None:
        self.recorder.entry(c.name, kind, text, c.turns)

    async def deliver_trigger(self, creature: str, trigger: TriggerConfig, text: str) -> None:
        """A trigger's message: on its channel (as ``trigger``), else to the creature."""
        if trigger.channel:
            try:
                await self.hub.send(TRIGGER, trigger.channel, {"text": text})
            except ChannelRefusal:
                pass  # the hub has logged and published the refusal
            return
        await self.wake(creature, "trigger", trigger.name or trigger.type, {"text": text})

    async def wake(self, creature: str, label: str, sender: str,
                   payload: dict[str, Any]) -> None:
        """Give ``creature`` a message that comes from the framework (a trigger, a job's end)
        rather than a channel: straight into its inbox as an envelope whose channel is
        ``label``, read in turn with its channel messages. A creature without an inbox
        (it listens to no channel) gets a turn at once, unless it is in one: then a trigger
        is skipped, and a job's result waits for that turn to end."""
        c = self.creatures[creature]
        if c.parts.cdef.listen:
            env = Envelope.trusted(new_message_id(), label, sender, label, dict(payload),
                                   time.time())
            await self.hub.transport.deliver(creature, env)
            return
        if label == "job":  # a job's result is never dropped: it waits for the turn to end
            while c.turn_scope is not None and not c.stopped:
                if c.turn_done is None:  # (made here, set and dropped when the turn ends)
                    c.turn_done = anyio.Event()
                await c.turn_done.wait()
        if c.turn_scope is None:
            turn = self.turn(c, [Incoming(
                text=str(payload.get("text", "")), channel=label, sender=sender,
                payload=dict(payload))])
            gate = self.options.turn_gate  # in line with every other turn (runtime/gate.py)
            await (turn if gate is None else gate.run(turn))

    async def barge_in(self) -> None:
        """Stop current speech, clear what is queued, and cut the speaking turns short."""
        for name, sinks in self.sinks.items():
            for oname, sink in sinks.items():
                cut = await sink.interrupt()
                if cut is not None and (cut.interrupted_sentence or cut.cut_text
                                        or cut.also_cut):
                    self.bus.publish(cut.as_event(name, oname))
            if sinks:
                self.cut_turn(name)

    # ------------------------------------------------------------------ the root's team tools

    # ------------------------------------------------------------------ start, stop, cut
    def creature(self, name: str) -> RunningCreature:
        c = self.creatures.get(name)
        if c is None:
            known = ", ".join(sorted(self.members))
            raise RuntimeFailure(f"there is no creature {name!r}", suggestion=f"one of: {known}")
        return c

    def start(self, name: str) -> None:
        """Start a stopped or failed creature again; its unread messages are still there."""
        c = self.creature(name)
        if name == ROOT or not c.stopped:
            raise RuntimeFailure(f"{name!r} is already running")
        c.stopped = False
        c.generation += 1
        c.failures = 0
        self.recorder.statuses[name].state = "idle"
        self.bus.publish(CreatureState(creature=name, state="idle"))
        self.tg.start_soon(self.loop, c)

    def stop(self, name: str) -> None:
        c = self.creature(name)
        if name == ROOT:
            raise RuntimeFailure("the root creature cannot stop itself")
        c.stopped = True
        if c.wait_scope is not None:  # idle: stop now; a turn in progress finishes first
            c.wait_scope.cancel()
        self.recorder.statuses[name].state = "stopped"
        self.bus.publish(CreatureState(creature=name, state="stopped"))
        jobs = c.controller.tool_ctx.state.get(STATE_JOBS) if c.controller else None
        if jobs is not None:  # its background jobs stop with it
            jobs.cancel_all()

    def cut_turn(self, name: str) -> None:
        """Barge-in: a speaking creature's turn in progress is cut short."""
        c = self.creatures[name]
        if c.turn_scope is not None and c.speaks:
            c.turn_scope.cancel()

    def end_jobs(self) -> tuple[list[JobEnded], int]:
        """The run ends: every creature's running jobs are cancelled. Returns their ends
        (to be recorded) and how many finished results never reached their creature."""
        cut: list[JobEnded] = []
        unread = 0
        for c in self.creatures.values():
            jobs = c.controller.tool_ctx.state.get(STATE_JOBS) if c.controller else None
            if jobs is not None:
                ended, left = jobs.end_of_run()
                cut.extend(ended)
                unread += len(left)
        return cut, unread

    def busy(self) -> bool:
        """Whether a turn, a restart backoff, an unread message, a background job or a job
        result on its way is still in motion."""
        if self.active_turns or self.recovering or self.settling:
            return True
        for c in self.creatures.values():
            jobs = c.controller.tool_ctx.state.get(STATE_JOBS) if c.controller else None
            if jobs is not None and not c.stopped and jobs.pending():
                return True  # a background job runs, or its result is on its way
        for c in self.creatures.values():
            if c.stopped or not c.parts.cdef.listen:
                continue
            if self.hub.subscribe(c.name).pending():
                return True
        return False


class _TakenOver(Exception):
    """The broker may have handed the turn's message to another listener meanwhile."""


def _rebuild(c: RunningCreature) -> Controller:
    """A fresh controller that keeps what the creature heard and drops the broken turn."""
    old = c.controller
    assert old is not None
    new = Controller(c.parts, old.model, sinks=old.sinks, send=old.send, memory=old.memory,
                     emit=old.emit, slot=old.slot, clock=old.clock,
                     journal=old.tool_ctx.journal, approver=old.approver,
                     answerer=old.tool_ctx.answerer)
    new.conversation = list(old.conversation)  # keep what it heard; drop the broken turn
    new.turns = old.turns
    new.tool_ctx.state.update(old.tool_ctx.state)  # what wiring handed down: team, sub-agents, jobs
    return new


def _root_cause(exc: BaseException) -> BaseException:
    """The first real error inside task-group wrappers, so a failure reads as a sentence."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
