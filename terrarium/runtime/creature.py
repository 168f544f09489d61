"""One creature's running state, shared by the wiring, the supervisor and the facade.

The wiring fills in the controller; the supervisor owns the rest (its scopes, failure
count, stop flag and loop generation) and swaps the controller when it rebuilds one.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio

from terrarium.channels.envelope import derived_message_id
from terrarium.controller.assembly import CreatureParts
from terrarium.controller.loop import Controller

__all__ = ["RunningCreature"]


@dataclass(slots=True)
class RunningCreature:
    name: str
    parts: CreatureParts
    controller: Controller | None = None
    turn_scope: anyio.CancelScope | None = None
    failures: int = 0
    stopped: bool = False
    generation: int = 0  # bumped by start_creature so an older loop winds down
    wait_scope: anyio.CancelScope | None = None
    # the message the current turn consumes and how many sends the turn made: a brokered
    # run names each send after them, so a turn re-run elsewhere re-sends the same ids
    turn_key: str | None = None
    turn_sends: int = 0

    def next_send_id(self) -> str | None:
        """The id of this turn's next send (None outside a turn over a message)."""
        if self.turn_key is None:
            return None
        self.turn_sends += 1
        return derived_message_id(self.turn_key, self.name, self.turn_sends)

    @property
    def turns(self) -> int:
        """The turn number its transcript lines carry (0 before it has a controller)."""
        return self.controller.turns if self.controller is not None else 0

    @property
    def speaks(self) -> bool:
        """Whether one of its outputs is a voice, so that barge-in cuts its turn short."""
        return any(s.type == "tts" for s in self.parts.cdef.config.output.named_outputs.values())
