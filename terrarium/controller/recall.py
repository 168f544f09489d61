"""Long-term memory around a turn: what is recalled into it, and what it records.

Before a turn the creature's newest records and the best matches for its inputs are looked
up (``memory_recent``, ``memory_recall``); they reach the prompt tail (``memory_in_prompt``)
and the fields the runtime fills into sends (``send_fill``). The inputs are then recorded
(``memory_record``), after the lookup, so a turn never recalls its own input.

What the user says about themselves ("my name is Ada", "I live in Lisbon") is also kept as
facts (``memory_facts``), read by :func:`terrarium.store.extract_facts` without a model, and
the ones matching a new input are recalled: "What is my name?" finds "Ada is my name.".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from terrarium.controller.incoming import Incoming
from terrarium.store import MemoryStore, extract_facts

__all__ = ["USER_FACT", "Recalled", "facts_owner", "recall", "record"]

USER_FACT = "user_fact"
"""The source of a fact the user stated about themselves."""


def facts_owner(creature: str) -> str:
    """Whose facts the user's are in the store: kept apart from the creature's records of
    what it received, so "I live in Lisbon." is both a record and a fact (the store keeps
    one copy of a text per owner)."""
    return f"{creature}:user"


@dataclass(frozen=True, slots=True)
class Recalled:
    """What memory gave one turn."""

    recent: tuple[str, ...] = ()  # this creature's newest records, oldest to newest
    matches: tuple[str, ...] = ()  # the best matches for the inputs, not among ``recent``
    facts: tuple[str, ...] = ()  # the user's own facts that match the inputs

    def prompt_lines(self) -> tuple[str, ...]:
        """The facts as the prompt tail shows them."""
        return (*(f"recently: {t}" for t in self.recent), *self.matches)


async def recall(memory: MemoryStore | None, inputs: Sequence[Incoming], *, creature: str,
                 recent: int, matches: int, facts: int = 0) -> Recalled:
    """Up to ``recent`` newest records of ``creature``, ``matches`` best matches and
    ``facts`` of the user's facts that match the inputs."""
    if memory is None:
        return Recalled()
    newest: list[str] = []
    found: list[str] = []
    own: list[str] = []
    if facts:
        query = " ".join(i.search_text for i in inputs)
        hits = await memory.asearch(query, limit=facts, creature=facts_owner(creature),
                                    source=USER_FACT)
        own = [h.text for h in hits]
    if recent:
        hits = await memory.arecent(recent, creature=creature)
        newest = [h.text for h in reversed(hits)]
    if matches:
        query = " ".join(i.search_text for i in inputs)
        hits = await memory.asearch(query, limit=matches)
        found = [h.text for h in hits if h.text not in newest and h.text not in own]
    return Recalled(tuple(newest), tuple(found), tuple(own))


async def record(memory: MemoryStore, inputs: Sequence[Incoming], *, creature: str,
                 facts: bool = False, texts: bool = True) -> None:
    """Write the text of every input to memory, with the channel it came on as the source;
    with ``facts``, also what it says about the user, as facts of their own."""
    for item in inputs:
        text = item.search_text
        if not text.strip():
            continue
        if texts:
            await memory.awrite(text, creature=creature, source=item.channel or "user")
        if facts:
            for fact in extract_facts(text):
                await memory.awrite(fact.sentence, creature=facts_owner(creature),
                                    tags=fact.tags, source=USER_FACT)
