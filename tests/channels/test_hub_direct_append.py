"""The hub's inline append to a one-listener inbox (``transport.Direct``): it is taken only
when anyio's ``send_nowait`` would just append, so capacity, a waiting receiver and closed
inboxes behave as through the stream; and the id's sequence that wraps by itself."""

from __future__ import annotations

import anyio
import pytest
from pydantic import BaseModel

from terrarium.channels import ChannelHub, ChannelSpec, CreatureWiring
from terrarium.channels.envelope import _sequence, new_message_id
from terrarium.channels.local import LocalTransport

pytestmark = pytest.mark.anyio


class Note(BaseModel):
    text: str


def _hub(capacity: int) -> ChannelHub:
    return ChannelHub([ChannelSpec(name="c", validator=Note, capacity=capacity)],
                      [CreatureWiring(name="l", listen=("c",)),
                       CreatureWiring(name="s", can_send=("c",))])


def _buffer(hub: ChannelHub) -> list[str]:
    route = hub._fast["s"]["c"]
    assert route.buf is not None  # the direct path is there to be tested
    return [e.payload["text"] for e in route.buf]


async def test_the_inline_append_stops_at_capacity() -> None:
    hub = _hub(2)
    async with hub:
        hub.send_nowait("s", "c", {"text": "a"})
        await hub.send("s", "c", {"text": "b"})
        with pytest.raises(anyio.WouldBlock):
            hub.send_nowait("s", "c", {"text": "c"})
        with pytest.raises(TimeoutError):
            with anyio.fail_after(0.05):
                await hub.send("s", "c", {"text": "c"}, wait_limit=None)
        assert _buffer(hub) == ["a", "b"]
        got = await hub.subscribe("l").receive_batch(10)
        assert [e.payload["text"] for e in got] == ["a", "b"]
        hub.send_nowait("s", "c", {"text": "d"})  # room again
        assert _buffer(hub) == ["d"]


@pytest.mark.parametrize("nowait", [False, True])
async def test_a_waiting_receiver_gets_the_message_not_the_buffer(nowait: bool) -> None:
    hub = _hub(4)
    got: list[str] = []
    with anyio.fail_after(10):  # a message left in the buffer would leave it waiting
        await _send_to_a_waiting_receiver(hub, got, nowait)
    assert got == ["x"]


async def _send_to_a_waiting_receiver(hub: ChannelHub, got: list[str], nowait: bool) -> None:
    async with hub, anyio.create_task_group() as tg:

        async def listen() -> None:
            got.append((await hub.subscribe("l").receive()).payload["text"])

        tg.start_soon(listen)
        await anyio.wait_all_tasks_blocked()
        if nowait:
            hub.send_nowait("s", "c", {"text": "x"})
        else:
            await hub.send("s", "c", {"text": "x"})
        assert _buffer(hub) == []  # handed to the receiver, as anyio's send_nowait does


async def test_a_closed_inbox_is_never_appended_to() -> None:
    hub = _hub(4)
    async with hub:
        await hub.send("s", "c", {"text": "a"})
    assert hub._fast["s"]["c"].room == [0]
    with pytest.raises(anyio.ClosedResourceError):
        hub.send_nowait("s", "c", {"text": "b"})
    with pytest.raises(anyio.ClosedResourceError):
        await hub.send("s", "c", {"text": "b"})
    inbox = hub.subscribe("l")  # what was sent before is still there, and nothing else
    assert inbox.receive_nowait().payload == {"text": "a"}
    with pytest.raises(anyio.EndOfStream):
        inbox.receive_nowait()


def test_an_inbox_closed_by_its_receiver_has_no_room_left() -> None:
    transport = LocalTransport()
    inbox = transport.open_inbox("l", 4)
    lane = transport.lane("s", ChannelSpec(name="c", capacity=4), ("l",))
    assert lane.direct is not None and lane.direct[1] == [4]
    transport._senders["l"].close()  # its senders first, as the hub's close does
    inbox.close()
    assert lane.direct[1] == [0]


def test_the_sequence_wraps_by_itself() -> None:
    nxt = _sequence(3)
    assert [nxt() for _ in range(7)] == [0, 1, 2, 0, 1, 2, 0]


def test_ids_count_up_in_their_last_eight_digits() -> None:
    a, b = new_message_id(), new_message_id()
    assert len(a) == len(b) == 30
    assert (int(b[-8:], 16) - int(a[-8:], 16)) % (1 << 32) == 1
    assert a[16:22] == b[16:22]  # the process tag
