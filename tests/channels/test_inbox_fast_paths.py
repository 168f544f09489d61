"""The in-process inbox's inline common cases (``channels/local.py``): ``fast_put`` appends
to the memory stream's buffer only when anyio's ``send_nowait`` would do just that, and
``receive_batch`` takes the buffer in one step in the order anyio's ``receive_nowait``
would give; everything else goes through anyio's public methods, with their results."""

from __future__ import annotations

import anyio
import pytest

from terrarium.channels.envelope import Envelope
from terrarium.channels.local import LocalReceiver, _buffer_of, fast_put

pytestmark = pytest.mark.anyio


def _env(i: int) -> Envelope:
    return Envelope.fresh("c", "s", "note", {"i": i})


def _streams(capacity: int):  # a pair of anyio memory streams
    return anyio.create_memory_object_stream[Envelope](capacity)


def test_fast_put_fills_to_capacity_then_would_block() -> None:
    send, recv = _streams(3)
    with send, recv:
        put = fast_put(send)
        assert put is not send.send_nowait  # anyio's state has the known shape
        for i in range(3):
            put(_env(i))
        with pytest.raises(anyio.WouldBlock):
            put(_env(3))
        assert [recv.receive_nowait().payload["i"] for _ in range(3)] == [0, 1, 2]


def test_fast_put_raises_what_send_nowait_raises_on_closed_ends() -> None:
    send, recv = _streams(3)
    put = fast_put(send)
    recv.close()
    with pytest.raises(anyio.BrokenResourceError):
        put(_env(0))
    send.close()
    with pytest.raises(anyio.ClosedResourceError):
        put(_env(1))


async def test_fast_put_hands_the_item_to_a_waiting_receiver() -> None:
    send, recv = _streams(0)  # no buffer: only a waiting receiver can take it
    got: list[Envelope] = []
    with send, recv:
        put = fast_put(send)
        with pytest.raises(anyio.WouldBlock):
            put(_env(0))
        async with anyio.create_task_group() as tg:

            async def take() -> None:
                got.append(await recv.receive())

            tg.start_soon(take)
            await anyio.wait_all_tasks_blocked()
            put(_env(1))  # nobody in the buffer: given to the receiver directly
    assert [e.payload["i"] for e in got] == [1]


def test_an_unknown_stream_shape_uses_the_public_method() -> None:
    class Other:
        def send_nowait(self, item: object) -> None: ...

    other = Other()
    assert _buffer_of(other) is None
    assert fast_put(other) == other.send_nowait  # type: ignore[arg-type]


async def test_receive_batch_keeps_order_with_a_waiting_sender() -> None:
    """The buffer taken in bulk, then the item of a sender waiting on the full inbox (woken
    by it): the order anyio gives one by one."""
    send, recv = _streams(4)
    inbox = LocalReceiver("a", recv)
    with send:
        put = fast_put(send)
        for i in range(4):
            put(_env(i))
        async with anyio.create_task_group() as tg:
            tg.start_soon(send.send, _env(4))  # waits: the buffer is full
            await anyio.wait_all_tasks_blocked()
            batch = await inbox.receive_batch(256)
        assert [e.payload["i"] for e in batch] == [0, 1, 2, 3, 4]
    inbox.close()


async def test_receive_batch_takes_at_most_max_items_in_order() -> None:
    send, recv = _streams(10)
    inbox = LocalReceiver("a", recv)
    with send:
        for i in range(10):
            send.send_nowait(_env(i))
        first = await inbox.receive_batch(4)
        second = await inbox.receive_batch(4)
        rest = await inbox.receive_batch(4)
        assert [[e.payload["i"] for e in b] for b in (first, second, rest)] == [
            [0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
        assert inbox.pending() == 0
    inbox.close()
    assert inbox._buf is None  # closed: nothing taken behind the stream's back
    with pytest.raises(anyio.EndOfStream):
        await inbox.receive_batch(4)


async def test_replayed_envelopes_come_before_the_buffer() -> None:
    send, recv = _streams(4)
    inbox = LocalReceiver("a", recv)
    with send:
        send.send_nowait(_env(2))
        send.send_nowait(_env(3))
        inbox.replay([_env(0), _env(1)])
        batch = await inbox.receive_batch(256)
        assert [e.payload["i"] for e in batch] == [0, 1, 2, 3]
    inbox.close()
