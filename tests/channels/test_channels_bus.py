"""Event bus: publish never blocks; a slow subscriber is told what it missed."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from terrarium.channels import EventBus
from terrarium.events import Missed, Restart, TurnStarted

pytestmark = pytest.mark.anyio


def ev(i: int) -> Restart:
    return Restart(creature="tick", attempt=i, delay=0.0)


async def test_slow_subscriber_gets_missed_and_publisher_never_blocks() -> None:
    bus = EventBus()
    slow = bus.subscribe(capacity=4)
    fast = bus.subscribe(capacity=1000)
    for i in range(10):
        bus.publish(ev(i))  # sync: cannot wait
    assert [e.attempt for e in fast.drain()] == list(range(10))
    got = slow.drain()
    assert [e.attempt for e in got[:4]] == [0, 1, 2, 3]
    assert got[4:] == [Missed(count=6, ts=got[4].ts)]
    assert slow.total_missed == 6
    # after the gap, new events flow again
    bus.publish(ev(10))
    assert [e.attempt for e in slow.drain()] == [10]


async def test_missed_is_placed_where_the_gap_is() -> None:
    bus = EventBus()
    sub = bus.subscribe(capacity=3)
    for i in range(5):
        bus.publish(ev(i))  # 0,1,2 fit; 3,4 missed
    assert sub.receive_nowait().attempt == 0
    assert sub.receive_nowait().attempt == 1
    bus.publish(ev(5))  # room for 2: Missed(2) then 5
    out = sub.drain()
    assert out[0].attempt == 2
    assert isinstance(out[1], Missed) and out[1].count == 2
    assert out[2].attempt == 5


async def test_slow_consumer_task_under_load() -> None:
    bus = EventBus()
    sub = bus.subscribe(capacity=8)
    seen: list[int] = []
    missed = 0
    done = anyio.Event()

    async def consumer() -> None:
        nonlocal missed
        async for e in sub:
            if isinstance(e, Missed):
                missed += e.count
            else:
                seen.append(e.attempt)
            if len(seen) + missed == 200:  # the final Missed comes once drained
                done.set()
                return
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(consumer)
        for i in range(200):
            bus.publish(ev(i))
            if i % 50 == 0:
                await anyio.lowlevel.checkpoint()
        await done.wait()
    assert len(seen) + missed == 200
    assert missed > 0
    assert seen == sorted(seen)


async def test_filter_and_close() -> None:
    bus = EventBus()
    sub = bus.subscribe(accept=lambda e: isinstance(e, TurnStarted))
    bus.publish(ev(1))
    bus.publish(TurnStarted(creature="a", turn_index=0))
    assert [e.kind for e in sub.drain()] == ["turn_started"]
    sub.close()
    assert not bus.active
    bus.publish(ev(2))


async def test_a_tap_is_told_in_order_and_queues_nothing() -> None:
    """``tap``: its function is called at each publish, between the subscribers before and
    after it in order; nothing is queued for it; it counts as a subscriber (the hub's
    ``bus._subs`` checks build events only for someone); ``close`` stops it alone."""
    bus = EventBus()
    order: list[str] = []
    before = bus.subscribe(accept=lambda e: order.append("before") or True)
    tap = bus.tap(lambda e: order.append(f"tap {e.attempt}"))
    after = bus.subscribe(accept=lambda e: order.append("after") or True)
    assert bus.active and tap in bus._subs
    bus.publish(ev(1))
    assert order == ["before", "tap 1", "after"]
    assert tap.drain() == []
    before.close()
    bus.publish(ev(2))
    assert order[3:] == ["tap 2", "after"]
    tap.close()
    bus.publish(ev(3))
    assert order[5:] == ["after"]
    assert [e.attempt for e in after.drain()] == [1, 2, 3]
    after.close()
    assert not bus.active
