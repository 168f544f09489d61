"""Which llama.cpp slot each creature uses, on the embedded server and on external ones.

A llama.cpp slot keeps the prompt it last evaluated; a creature pinned to its own slot
(``id_slot``) has each request's shared prefix with its previous one served from cache.
Creatures sharing a slot evict each other's prompt on every turn, so each gets its own as
long as the server has enough: the embedded server is started with one slot per creature;
an external server has the slots it was started with (``--parallel``), told to us with the
``slots`` controller setting. Pure: settings in, slots out; the runtime applies them.

Sub-agents on the embedded model get slots of their own too (:func:`plan_embedded`), past
the creatures' ones, so a sub-agent's prompt never evicts its parent's cached prefix: each
call of a sub-agent leases one from its team creature's :class:`SlotPool`, preferring the
slot that sub-agent used last (its own prefix may still be there).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from terrarium.errors import ConfigError, Location
from terrarium.llm.settings import ModelSettings
from terrarium.llm.types import ChatRequest, StreamDelta

__all__ = [
    "EMBEDDED",
    "EmbeddedPlan",
    "SlotLeasingModel",
    "SlotPool",
    "assign_slots",
    "plan_embedded",
    "server_key",
]

EMBEDDED = "embedded"
"""The server key of the team's embedded llama.cpp server."""


def server_key(settings: ModelSettings) -> str | None:
    """The llama.cpp server a creature talks to (None: no slots, not a llama.cpp server)."""
    if settings.provider == "embedded":
        return EMBEDDED
    if settings.provider == "openai" and settings.llama_cpp and settings.base_url:
        return settings.base_url.rstrip("/")
    return None


def assign_slots(creatures: Mapping[str, ModelSettings]) -> dict[str, int]:
    """``{creature: slot}`` for the creatures on a llama.cpp server, in the mapping's order.

    Embedded: slots 0..n-1 (the runtime starts the server with one slot per creature).
    An external server: with ``slots: N`` its creatures get 0..N-1, wrapping round when
    there are more creatures than slots; without it a lone creature gets slot 0 (every
    server has it) and several get none (the server picks; their count may exceed its
    slots). Creatures on one server that disagree about its slot count are a config error.
    """
    by_server: dict[str, list[str]] = {}
    counts: dict[str, dict[int, str]] = {}
    for name, s in creatures.items():
        key = server_key(s)
        if key is None:
            continue
        by_server.setdefault(key, []).append(name)
        if key != EMBEDDED and s.slots is not None:
            counts.setdefault(key, {}).setdefault(s.slots, name)
    out: dict[str, int] = {}
    for key, names in by_server.items():
        declared = counts.get(key, {})
        if len(declared) > 1:
            said = ", ".join(f"{who} says {n}" for n, who in sorted(declared.items()))
            raise ConfigError(
                f"the creatures on the llama.cpp server {key} disagree on its slot count "
                f"({said})",
                location=Location(key_path=("controller", "slots")),
                suggestion="give every creature on that server the same `slots`, or one only",
            )
        if key == EMBEDDED:
            total: int | None = len(names)
        else:
            total = next(iter(declared)) if declared else (1 if len(names) == 1 else None)
        if total is None:
            continue
        for i, name in enumerate(names):
            out[name] = i % total
    return out


@dataclass(frozen=True, slots=True)
class EmbeddedPlan:
    """The embedded server's slots: ``total`` to start it with, and for each team creature
    whose sub-agents run on it, the slots those sub-agents lease (``subagents``)."""

    total: int
    subagents: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def pools(self) -> dict[str, SlotPool]:
        return {name: SlotPool(slots) for name, slots in self.subagents.items()}


def plan_embedded(creatures: int, subagents: Mapping[str, int]) -> EmbeddedPlan:
    """Slots 0..creatures-1 are the creatures' (as :func:`assign_slots` gives them); then
    each team creature in ``subagents`` (name → how many of its sub-agents may run on the
    embedded model at once) gets that many more. The server needs their sum."""
    next_slot = creatures
    pools: dict[str, tuple[int, ...]] = {}
    for name, count in subagents.items():
        if count > 0:
            pools[name] = tuple(range(next_slot, next_slot + count))
            next_slot += count
    return EmbeddedPlan(total=next_slot, subagents=pools)


class SlotPool:
    """Slots lent to sub-agent calls, one call at a time per slot.

    A holder (a sub-agent's label, ``lead/researcher``) gets the slot it used last when
    that one is free (its prompt prefix may still be cached there), else the free slot
    used least recently. When every slot is busy (more sub-agents at once than slots, or
    a sub-agent holding its slot while a nested one runs) the call gets no slot (None):
    the server then picks one, which may cost a cached prefix but never waits for ever.
    """

    def __init__(self, slots: tuple[int, ...] | list[int]) -> None:
        self.slots = tuple(slots)
        self._free: OrderedDict[int, None] = OrderedDict((s, None) for s in self.slots)
        self._last: dict[str, int] = {}

    @property
    def free(self) -> tuple[int, ...]:
        return tuple(self._free)

    def take(self, holder: str) -> int | None:
        """A slot for ``holder`` now, or None when all are lent."""
        if not self._free:
            return None
        slot = self._last.get(holder)
        if slot is None or slot not in self._free:
            slot = next(iter(self._free))  # least recently returned first
        del self._free[slot]
        self._last[holder] = slot
        return slot

    def give_back(self, slot: int | None) -> None:
        if slot is not None and slot in self.slots:
            self._free[slot] = None  # to the end: most recently used

    @asynccontextmanager
    async def lease(self, holder: str) -> AsyncIterator[int | None]:
        slot = self.take(holder)
        try:
            yield slot
        finally:
            self.give_back(slot)


class SlotLeasingModel:
    """A sub-agent's model whose every call runs on a slot leased from ``pool`` for the
    call's length. Everything else (``last_usage``, ``llama_cpp``, ``describe``...) is
    the wrapped model's."""

    def __init__(self, inner: Any, pool: SlotPool, holder: str) -> None:
        self.inner = inner
        self.pool = pool
        self.holder = holder

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (copying): never recurse
            raise AttributeError(name)
        return getattr(self.inner, name)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        async with self.pool.lease(self.holder) as slot:
            if slot is not None:
                request = request.model_copy(update={"id_slot": slot})
            async with aclosing(self.inner.stream(request)) as deltas:
                async for delta in deltas:
                    yield delta
