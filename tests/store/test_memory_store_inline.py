"""The memory store's async twins run on the event loop while the store is fast (a hop to a
worker thread costs more than the query: issue 29), and in a worker thread once it is not."""

from __future__ import annotations

import threading

import anyio
import pytest

from terrarium.store import MemoryStore
from terrarium.store import facts as facts_module


def test_a_fast_store_answers_on_the_event_loop() -> None:
    async def go() -> None:
        with MemoryStore() as m:
            loop_thread = threading.get_ident()
            seen: list[int] = []
            search = m.search

            def spy(*a: object, **k: object) -> object:
                seen.append(threading.get_ident())
                return search(*a, **k)  # type: ignore[arg-type]

            m.search = spy  # type: ignore[method-assign]
            await m.awrite("I love green tea.", creature="router")
            hits = await m.asearch("green tea", creature="router")
            assert [h.text for h in hits] == ["I love green tea."]
            assert [h.text for h in await m.arecent(1, creature="router")] == [
                "I love green tea."]
            assert await m.acount(creature="router") == 1
            assert seen == [loop_thread] and m.inline
    anyio.run(go)


def test_a_slow_store_moves_to_a_worker_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(facts_module, "INLINE_SLOW_MS", -1.0)  # every call counts as slow

    async def go() -> None:
        with MemoryStore() as m:
            for i in range(facts_module.INLINE_SLOW_CALLS):
                assert m.inline
                await m.awrite(f"fact {i}", creature="c")
            assert not m.inline
            seen: list[int] = []
            recent = m.recent

            def spy(*a: object, **k: object) -> object:
                seen.append(threading.get_ident())
                return recent(*a, **k)  # type: ignore[arg-type]

            m.recent = spy  # type: ignore[method-assign]
            got = await m.arecent(5, creature="c")
            assert len(got) == facts_module.INLINE_SLOW_CALLS
            assert seen and seen[0] != threading.get_ident()
    anyio.run(go)
