"""The reply guard as the speaker runs it, for tests that stream a reply through it: the
speaker's guard settings, the voice's first-piece cut, and a reply fed in small deltas."""

from __future__ import annotations

from terrarium.config.models import ReplyGuardSpec
from terrarium.controller.guard import ReplyGuard
from terrarium.voice.segment import SegmenterConfig

__all__ = ["SPEC", "VOICE", "guard", "stream"]

SPEC = ReplyGuardSpec(facts_field="memory_context", unknown_reply="I don't know that yet.",
                      release_first_clause=True, echo_reply="Sorry, I am not sure.")
VOICE = SegmenterConfig(first_clause_chars=12, first_piece_max_chars=16)  # the speaker's


def guard(user: str, notes: str = "", first_piece: SegmenterConfig | None = VOICE
          ) -> ReplyGuard:
    """The speaker's guard for a question of the world (``notes``: what it was handed),
    with the voice's first piece (None: all is given to the voice as it comes)."""
    g = ReplyGuard.for_turn(SPEC, [{"user_said": user, "intent": "question",
                                    "memory_context": notes}])
    assert g is not None
    g.first_piece = first_piece
    return g


def stream(g: ReplyGuard, reply: str, step: int = 3) -> list[str]:
    """What each delta let through, read until the guard stops (then what it ends with)."""
    outs: list[str] = []
    for i in range(0, len(reply), step):
        outs.append(g.feed(reply[i:i + step]))
        if g.stopped or g.settled:
            break
    return [*outs, g.finish()]
