"""One creature's running state, shared by the wiring, the supervisor and the facade.

The wiring fills in the controller; the supervisor owns the rest (its scopes, failure
count, stop flag and loop generation) and swaps the controller when it rebuilds one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import anyio

from terrarium.controller.assembly import CreatureParts
from terrarium.controller.loop import Controller

__all__ = ["RunningCreature", "effect_message_id"]


def effect_message_id(run_id: str, parent: str, key: str, n: int) -> str:
    """The one exactly-once id of a turn's send: the message id, the durable log's dedupe
    key and (on a broker) the JetStream ``Nats-Msg-Id`` at once.

    Made of the run, the consumed message ``parent``, the send's ``key`` (creature, that
    message and the call's place in the turn) and ``n``, the send's rank in the turn. The
    same on every attempt, so a turn run again after a crash sends under the same ids, and
    the log (and the broker) keep one copy. Its time prefix is the parent's plus ``n``
    nanoseconds, so it sorts after the message that caused it and a turn's sends sort in
    the order they were made; it is as long as a fresh id (``new_message_id``).
    """
    tail = hashlib.sha256(f"{run_id}/{key}".encode()).hexdigest()[:14]
    try:
        return f"{int(parent[:16], 16) + n:016x}{tail}"
    except ValueError:  # a parent id not made by new_message_id: no time to keep
        return f"{parent}.{n}.{tail}"


@dataclass(slots=True)
class RunningCreature:
    name: str
    parts: CreatureParts
    controller: Controller | None = None
    turn_scope: anyio.CancelScope | None = None
    # set when the current turn ends; made by the first waiter (a job's result), not per turn
    turn_done: anyio.Event | None = None
    failures: int = 0
    stopped: bool = False
    generation: int = 0  # bumped by start_creature so an older loop winds down
    wait_scope: anyio.CancelScope | None = None
    # the message the current turn consumes and how many sends the turn made: each send
    # is named after them (``effect_message_id``), so a turn re-run re-sends the same ids
    turn_key: str | None = None
    turn_sends: int = 0

    def send_id(self, run_id: str, key: str | None) -> str | None:
        """The id of this turn's next send, with ``key`` its place in the turn (None
        outside a turn over a message: nothing to resume, so a fresh id is used)."""
        if self.turn_key is None:
            return None
        self.turn_sends += 1
        where = key if key is not None else f"{self.name}/{self.turn_key}/#{self.turn_sends}"
        return effect_message_id(run_id, self.turn_key, where, self.turn_sends)

    @property
    def turns(self) -> int:
        """The turn number its transcript lines carry (0 before it has a controller)."""
        return self.controller.turns if self.controller is not None else 0

    @property
    def speaks(self) -> bool:
        """Whether one of its outputs is a voice, so that barge-in cuts its turn short."""
        return any(s.type == "tts" for s in self.parts.cdef.config.output.named_outputs.values())
