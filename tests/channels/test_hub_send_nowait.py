"""``ChannelHub.send_nowait``: ``send`` without a coroutine when nothing has to wait, and
``anyio.WouldBlock`` having sent nothing whenever something would (then ``send`` does it).
Also the in-process batch path (``Lane.publish_batch``) refusing mid-batch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from terrarium.channels.hub import ChannelHub
from terrarium.channels.log import DurableLog
from terrarium.channels.spec import ChannelSpec, wiring_from_mapping
from terrarium.errors import ChannelRefusal
from terrarium.events import MessageDelivered, MessageSent

pytestmark = pytest.mark.anyio


class Note(BaseModel):
    text: str
    n: int = 0
    urgent: bool = False


def _hub(kind: str = "queue", capacity: int = 4, log: DurableLog | None = None,
         **wiring: tuple[list[str], list[str]]) -> ChannelHub:
    spec = ChannelSpec(name="c", kind=kind, schema_name="note", validator=Note,
                       capacity=capacity)
    return ChannelHub([spec], wiring_from_mapping(wiring), log=log)


def _drain(hub: ChannelHub, creature: str) -> list[Any]:
    inbox = hub.subscribe(creature)
    out = []
    while True:
        try:
            out.append(inbox.receive_nowait())
        except anyio.WouldBlock:
            return out


async def test_it_checks_and_delivers_like_send() -> None:
    hub = _hub(s=([], ["c"]), a=(["c"], []))
    events = hub.bus.subscribe()
    async with hub:
        res = hub.send_nowait("s", "c", {"text": "hi", "n": "3"}, reply_to="r1")
        got = _drain(hub, "a")
    seen = events.drain()
    assert res.delivered_to == ("a",)
    assert got == [res.envelope]
    env = got[0]
    # validated: coerced and filled in, as send does
    assert env.payload == {"text": "hi", "n": 3, "urgent": False}
    assert (env.channel, env.sender, env.schema_name, env.reply_to) == ("c", "s", "note", "r1")
    assert [type(e) for e in seen] == [MessageSent, MessageDelivered]


async def test_a_full_inbox_would_block_and_nothing_is_sent() -> None:
    hub = _hub(capacity=1, s=([], ["c"]), a=(["c"], []))
    async with hub:
        hub.send_nowait("s", "c", {"text": "one"})
        with pytest.raises(anyio.WouldBlock):
            hub.send_nowait("s", "c", {"text": "two"})
        assert [e.payload["text"] for e in _drain(hub, "a")] == ["one"]


async def test_a_queue_of_several_listeners_goes_round_robin() -> None:
    hub = _hub(capacity=1, s=([], ["c"]), a=(["c"], []), b=(["c"], []))
    async with hub:
        first = hub.send_nowait("s", "c", {"text": "1"}).delivered_to
        second = hub.send_nowait("s", "c", {"text": "2"}).delivered_to
        with pytest.raises(anyio.WouldBlock):  # both full
            hub.send_nowait("s", "c", {"text": "3"})
        assert {first, second} == {("a",), ("b",)}
        assert len(_drain(hub, "a")) == len(_drain(hub, "b")) == 1


async def test_a_broadcast_goes_to_everybody_or_nobody() -> None:
    hub = _hub(kind="broadcast", capacity=1, s=(["c"], ["c"]), a=(["c"], []), b=(["c"], []))
    async with hub:
        assert hub.send_nowait("s", "c", {"text": "1"}).delivered_to == ("a", "b")
        assert len(_drain(hub, "a")) == 1  # b stays full
        with pytest.raises(anyio.WouldBlock):
            hub.send_nowait("s", "c", {"text": "2"})
        assert _drain(hub, "a") == []  # a had room, but got nothing
        assert [e.payload["text"] for e in _drain(hub, "b")] == ["1"]


async def test_what_send_refuses_or_records_is_left_to_send(tmp_path: Path) -> None:
    hub = _hub(s=([], ["c"]), a=(["c"], []))
    async with hub:
        with pytest.raises(anyio.WouldBlock):
            hub.send_nowait("s", "c", {"txt": "typo"})  # send refuses it, with its sentence
        with pytest.raises(anyio.WouldBlock):
            hub.send_nowait("a", "c", {"text": "not allowed"})
        with pytest.raises(ChannelRefusal, match="does not match the schema"):
            await hub.send("s", "c", {"txt": "typo"})
        assert _drain(hub, "a") == []
    with DurableLog(tmp_path / "log.sqlite3") as log:
        logged = _hub(log=log, s=([], ["c"]), a=(["c"], []))
        async with logged:
            with pytest.raises(anyio.WouldBlock):  # the log is written first: send's job
                logged.send_nowait("s", "c", {"text": "hi"})


async def test_a_batch_that_fills_an_inbox_is_refused_naming_who_got_what() -> None:
    hub = _hub(capacity=2, s=([], ["c"]), a=(["c"], []))
    async with hub:
        with pytest.raises(ChannelRefusal, match=r"The inbox of 'a' stayed full for 0\.1s"):
            await hub.send_many("s", "c", [{"text": str(i)} for i in range(4)],
                                wait_limit=0.1)
        assert [e.payload["text"] for e in _drain(hub, "a")] == ["0", "1"]
        got = await hub.send_many("s", "c", [{"text": "x"}, {"text": "y"}])
        assert [r.delivered_to for r in got] == [("a",), ("a",)]
