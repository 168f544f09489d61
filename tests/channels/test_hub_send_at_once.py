"""A recorded send in ``commit_at_once`` (``terrarium serve``'s input): its message row and
the events of its sending go in ONE commit when the inbox can take the message at once,
and the message is still committed before it is delivered; when it cannot (a full inbox),
the message is committed alone and the send goes on as any other (its events after the
delivery)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from terrarium.channels.bus import EventBus
from terrarium.channels.hub import ChannelHub
from terrarium.channels.log import MESSAGE_SQL, NUMBERED_EVENT_SQL, DurableLog
from terrarium.channels.spec import ChannelSpec, CreatureWiring
from terrarium.channels.writer import LogWriter, commit_at_once
from terrarium.events import Event

pytestmark = pytest.mark.anyio


def _setup(tmp_path: Path, capacity: int) -> tuple[DurableLog, LogWriter, ChannelHub,
                                                     list[Any], Any]:
    """A log, a shared writer, a hub over them, and what happened in order: each commit
    (its statements, and whether the message was in the inbox then), each event."""
    log = DurableLog(tmp_path / "log.sqlite3")
    writer = LogWriter(log, busy=lambda: False)
    bus = EventBus()
    hub = ChannelHub([ChannelSpec(name="c", capacity=capacity)],
                     [CreatureWiring(name="l", listen=("c",)),
                      CreatureWiring(name="s", can_send=("c",))],
                     log=log, log_writer=writer, bus=bus)
    seen: list[Any] = []
    inner = log.write_batch

    def recorded(ops: Any) -> None:
        ops = list(ops)
        seen.append(("commit", sorted(sql for sql, _ in ops), hub.subscribe("l").pending()))
        inner(ops)

    log.write_batch = recorded  # type: ignore[method-assign]
    n = [0]

    def numbered(event: Event) -> None:  # as serve's SessionEvents.offer: a row a commit
        n[0] += 1
        writer.put_row(NUMBERED_EVENT_SQL, (hub.run_id, 1.0, event.kind, None, "{}", n[0]))
        seen.append(("event", event.kind, hub.subscribe("l").pending()))

    return log, writer, hub, seen, bus.tap(numbered)


async def test_an_input_the_inbox_takes_is_one_commit_before_its_delivery(
        tmp_path: Path) -> None:
    log, writer, hub, seen, tap = _setup(tmp_path, capacity=4)
    async with anyio.create_task_group() as tg:
        await tg.start(writer.run)
        async with hub:
            with commit_at_once(together=True), writer.held():
                await hub.send("s", "c", {"text": "hi"})
            assert hub.subscribe("l").pending() == 1
            assert seen == [("event", "message_sent", 0), ("event", "message_delivered", 0),
                            ("commit", sorted([MESSAGE_SQL, NUMBERED_EVENT_SQL]), 0)]
            seen.clear()
            await hub.send("s", "c", {"text": "again"})  # (not at once: as ever)
            assert seen[0] == ("commit", [MESSAGE_SQL], 1)
            assert seen[1:] == [("event", "message_sent", 2),
                                ("event", "message_delivered", 2)]
        tg.cancel_scope.cancel()
    tap.close()
    log.close()


async def test_an_input_a_full_inbox_must_wait_for_is_committed_alone_first(
        tmp_path: Path) -> None:
    log, writer, hub, seen, tap = _setup(tmp_path, capacity=1)
    async with anyio.create_task_group() as tg:
        await tg.start(writer.run)
        async with hub:
            await hub.send("s", "c", {"text": "fills it"})
            for _ in range(5):  # (its events committed by the writer)
                await anyio.lowlevel.checkpoint()
            seen.clear()

            async def send() -> None:
                with commit_at_once(together=True), writer.held():
                    await hub.send("s", "c", {"text": "waits"}, wait_limit=None)

            tg.start_soon(send)
            for _ in range(5):
                await anyio.lowlevel.checkpoint()
            assert seen == [("commit", [MESSAGE_SQL], 1)]  # committed, waiting for room
            first = await hub.subscribe("l").receive()
            assert first.payload == {"text": "fills it"}
            for _ in range(5):
                await anyio.lowlevel.checkpoint()
            assert seen[1:3] == [("event", "message_sent", 1),
                                 ("event", "message_delivered", 1)]  # after delivery
        tg.cancel_scope.cancel()
    tap.close()
    log.close()
