"""Which llama.cpp slot each creature uses, on the embedded server and on external ones.

A llama.cpp slot keeps the prompt it last evaluated; a creature pinned to its own slot
(``id_slot``) has each request's shared prefix with its previous one served from cache.
Creatures sharing a slot evict each other's prompt on every turn, so each gets its own as
long as the server has enough: the embedded server is started with one slot per creature;
an external server has the slots it was started with (``--parallel``), told to us with the
``slots`` controller setting. Pure: settings in, slots out; the runtime applies them.
"""

from __future__ import annotations

from collections.abc import Mapping

from terrarium.errors import ConfigError, Location
from terrarium.llm.settings import ControllerSettings

__all__ = ["EMBEDDED", "assign_slots", "server_key"]

EMBEDDED = "embedded"
"""The server key of the team's embedded llama.cpp server."""


def server_key(settings: ControllerSettings) -> str | None:
    """The llama.cpp server a creature talks to (None: no slots, not a llama.cpp server)."""
    if settings.provider == "embedded":
        return EMBEDDED
    if settings.provider == "openai" and settings.llama_cpp and settings.base_url:
        return settings.base_url.rstrip("/")
    return None


def assign_slots(creatures: Mapping[str, ControllerSettings]) -> dict[str, int]:
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
