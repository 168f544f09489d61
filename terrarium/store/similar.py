"""How near in meaning each of a creature's records is to an utterance: the cosine of their
sentence vectors (``store/meaning.py``), kept beside the records in the memory store.

A record's vector is computed once: when it is recorded (the utterance was embedded a
moment before, to be recalled for, so this costs nothing: the encoder keeps its newest
texts' vectors), or at the first recall after it for a record kept before the encoder
was loaded (a store resumed, a turn taken during the warm-up). A turn then costs one
embedding (the utterance; none when the creature has no records yet), in a worker thread so
the event loop runs on, and one dot product over the creature's newest records.

Without the encoder (the package not installed) every answer is empty and recall ranks by
words alone. Neither numpy nor the encoder's module is imported until the first recall
needs them, and then in a worker thread: a start loads neither.
"""

from __future__ import annotations

import heapq
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import anyio.to_thread

from terrarium.store.facts import MemoryStore

if TYPE_CHECKING:
    from terrarium.store.meaning import Encoder

__all__ = ["EMBED_AT_ONCE", "LOOK_BACK", "REMEMBERED", "ensure_encoder", "keep_vector",
           "leave_loading_to_warm_up", "load_encoder", "loaded_encoder", "nearest", "nearness",
           "similarities"]

LOOK_BACK = 500
"""How many of the creature's newest records are compared (a voice conversation holds a few
dozen)."""
REMEMBERED = 16
"""How many of the records nearest an ask have their stored vectors put in the encoder's
cache for the reply guard's nearness (the notes are among them)."""
EMBED_AT_ONCE = 64
"""At most this many records without a vector are embedded in one recall (a resumed store
catches up over a few turns instead of holding one turn up)."""


def loaded_encoder() -> Encoder | None:
    """The encoder if it is loaded already, else None (never loads it)."""
    mod = sys.modules.get("terrarium.store.meaning")
    return mod.encoder() if mod is not None and mod.loaded() else None


def load_encoder() -> Encoder | None:
    """The encoder, loaded now if it is not yet (blocking: numpy and the weights); None
    without the package."""
    from terrarium.store import meaning

    return meaning.encoder()


_WARM_UP_LOADS: list[bool] = []
"""Set once a run's warm-up will load the encoder (:func:`leave_loading_to_warm_up`)."""


def leave_loading_to_warm_up() -> None:
    """A run's warm-up will load the encoder (``runtime/warmup.py``): a recall before it has
    ranks by words alone instead of loading it itself. At a first start the first utterance
    comes as the team is ready, while the voice loads: loading numpy and the encoder on its
    turn as well held its reply's first audio back (1.34-1.88 s against 1.26-1.36 s,
    ``bench/voice.py --cold-start --against``)."""
    _WARM_UP_LOADS[:] = [True]


async def ensure_encoder() -> Encoder | None:
    """The encoder, loaded in a worker thread when it is not yet and no warm-up is loading
    it; None without the package (or until the warm-up has loaded it)."""
    enc = loaded_encoder()
    if enc is not None or _WARM_UP_LOADS:
        return enc
    return await anyio.to_thread.run_sync(load_encoder)


async def keep_vector(memory: MemoryStore, mem_id: int, text: str) -> None:
    """Store what ``text`` (record ``mem_id``) means, when the encoder is loaded (never
    loaded here: the next recall embeds what is missing)."""
    enc = loaded_encoder()
    if enc is not None:
        vec = await anyio.to_thread.run_sync(enc.embed, [text])
        await memory.aput_vectors([(mem_id, vec[0].tobytes())])


def nearness(text: str, others: Sequence[str]) -> list[float] | None:
    """The cosine of ``text`` and each of ``others``, by the encoder if it is loaded (never
    loaded here: the router's recall loaded it); None without it or without ``others``."""
    enc = loaded_encoder()
    if enc is None or not others:
        return None
    vecs = enc.embed([text, *others])
    return [float(c) for c in vecs[1:] @ vecs[0]]


def nearest(text: str, others: Sequence[str]) -> float | None:
    """The highest of :func:`nearness`, or None."""
    near = nearness(text, others)
    return max(near) if near else None


async def similarities(memory: MemoryStore, utterance: str, *, creature: str
                       ) -> dict[str, float]:
    """The cosine of ``utterance`` and each of ``creature``'s newest records (by text);
    ``{}`` without the encoder."""
    enc = await ensure_encoder()
    if enc is None:
        return {}
    rows = await memory.avectors(creature=creature, limit=LOOK_BACK)
    if not rows:
        return {}  # nothing to compare with: the ask is not embedded
    missing = [(i, t) for i, t, v in rows if v is None][:EMBED_AT_ONCE]
    import numpy as np  # loaded with the encoder, never at a start

    # in a worker thread: ~2 ms of CPU a text (numpy's pass ~9), which would hold every
    # other task (a served session's, the audio's) off the event loop
    got = await anyio.to_thread.run_sync(enc.embed, [utterance, *(t for _, t in missing)])
    asked = got[0]
    fresh = {i: vec for (i, _), vec in zip(missing, got[1:], strict=True)}
    if fresh:
        await memory.aput_vectors([(i, vec.tobytes()) for i, vec in fresh.items()])
    vecs: dict[str, np.ndarray] = {}
    for i, text, blob in rows:
        vec = fresh.get(i) if blob is None else np.frombuffer(blob, dtype=np.float32)
        if vec is not None and vec.shape == asked.shape:
            vecs.setdefault(text, vec)
    out = {text: float(vec @ asked) for text, vec in vecs.items()}
    # the nearest are the notes the reply guard then weighs (``nearness``): kept in the
    # encoder's cache so it reads their stored vectors instead of embedding them again
    enc.remember((t, vecs[t]) for t in heapq.nlargest(REMEMBERED, out, key=out.__getitem__))
    return out
