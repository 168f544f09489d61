"""What the recall and reply-guard tests of issue 30 share: a store told things, the notes a
question gets, and a guard fed a scripted reply piece by piece."""

from __future__ import annotations

import anyio

from terrarium.config.models import ReplyGuardSpec
from terrarium.controller.guard import ReplyGuard
from terrarium.controller.incoming import Incoming
from terrarium.controller.recall import recall, record
from terrarium.store import MemoryStore

UNKNOWN = "I don't know that yet."
SPEC = ReplyGuardSpec(facts_field="memory_context", unknown_reply=UNKNOWN,
                      release_first_clause=True, echo_reply="Sorry, I am not sure.")


def told(memory: MemoryStore, *said: str) -> None:
    """Record each utterance as the user's, as the router does."""
    async def go() -> None:
        for text in said:
            await record(memory, [Incoming(text=text, channel="user_input")], creature="router",
                         facts=True)
    anyio.run(go)


def notes(memory: MemoryStore, question: str) -> tuple[str, ...]:
    """The notes ``question`` is handed (facts and statements only)."""
    async def go() -> tuple[str, ...]:
        got = await recall(memory, [Incoming(text=question, channel="user_input")],
                           creature="router", recent=0, matches=0, facts=2, notes=2)
        return got.notes
    return anyio.run(go)


def guard(user: str, notes_: str = "", intent: str = "question") -> ReplyGuard:
    g = ReplyGuard.for_turn(SPEC, [{"user_said": user, "intent": intent,
                                    "memory_context": notes_}])
    assert g is not None
    return g


def feed_all(g: ReplyGuard, reply: str, step: int = 4) -> str:
    """What the guard lets out of ``reply`` streamed ``step`` characters at a time."""
    out = "".join(g.feed(reply[i:i + step]) for i in range(0, len(reply), step))
    return out + g.finish()
