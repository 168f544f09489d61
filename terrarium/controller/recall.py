"""Long-term memory around a turn: what is recalled into it, and what it records.

Before a turn the creature's newest records and the best matches for its inputs are looked
up (``memory_recent``, ``memory_recall``); they reach the prompt tail (``memory_in_prompt``)
and the fields the runtime fills into sends (``send_fill``). The inputs are then recorded
(``memory_record``), after the lookup, so a turn never recalls its own input.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from terrarium.controller.incoming import Incoming
from terrarium.store import MemoryStore

__all__ = ["Recalled", "recall", "record"]


@dataclass(frozen=True, slots=True)
class Recalled:
    """What memory gave one turn."""

    recent: tuple[str, ...] = ()  # this creature's newest records, oldest to newest
    matches: tuple[str, ...] = ()  # the best matches for the inputs, not among ``recent``

    def prompt_lines(self) -> tuple[str, ...]:
        """The facts as the prompt tail shows them."""
        return (*(f"recently: {t}" for t in self.recent), *self.matches)


async def recall(memory: MemoryStore | None, inputs: Sequence[Incoming], *, creature: str,
                 recent: int, matches: int) -> Recalled:
    """Up to ``recent`` newest records of ``creature`` and ``matches`` best matches."""
    if memory is None:
        return Recalled()
    newest: list[str] = []
    found: list[str] = []
    if recent:
        hits = await memory.arecent(recent, creature=creature)
        newest = [h.text for h in reversed(hits)]
    if matches:
        query = " ".join(i.search_text for i in inputs)
        hits = await memory.asearch(query, limit=matches)
        found = [h.text for h in hits if h.text not in newest]
    return Recalled(tuple(newest), tuple(found))


async def record(memory: MemoryStore, inputs: Sequence[Incoming], *, creature: str) -> None:
    """Write the text of every input to memory, with the channel it came on as the source."""
    for item in inputs:
        if item.search_text.strip():
            await memory.awrite(item.search_text, creature=creature,
                                source=item.channel or "user")
