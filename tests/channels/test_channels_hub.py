"""Channel semantics: queue exactly-once and fairness, broadcast, backpressure, refusals."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from terrarium.channels import (
    ChannelHub,
    ChannelSpec,
    CreatureWiring,
    DurableLog,
    Envelope,
    EventBus,
)
from terrarium.errors import ChannelRefusal
from terrarium.events import MessageRefused, MessageSent

pytestmark = pytest.mark.anyio


class Note(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    n: int = 0


def queue_hub(listeners: int, senders: int = 1, capacity: int = 64, **kw) -> ChannelHub:
    spec = ChannelSpec(
        name="work", kind="queue", schema_name="note", validator=Note, capacity=capacity
    )
    wiring = [CreatureWiring(name=f"l{i}", listen=("work",)) for i in range(listeners)]
    wiring += [CreatureWiring(name=f"s{i}", can_send=("work",)) for i in range(senders)]
    return ChannelHub([spec], wiring, **kw)


async def run_queue_schedule(
    seed: int, listeners: int, senders: int, per_sender: int, capacity: int
) -> None:
    rng = random.Random(seed)
    hub = queue_hub(listeners, senders, capacity=capacity)
    got: list[tuple[str, int]] = []
    total = senders * per_sender
    async with hub:

        async def sender(i: int) -> None:
            for k in range(per_sender):
                if rng.random() < 0.3:
                    await anyio.lowlevel.checkpoint()
                await hub.send(f"s{i}", "work", {"text": "x", "n": i * per_sender + k})

        async def listener(name: str) -> None:
            inbox = hub.subscribe(name)
            while len(got) < total:
                with anyio.move_on_after(0.05):
                    env = await inbox.receive()
                    got.append((name, env.payload["n"]))
                    for _ in range(rng.randrange(3)):
                        await anyio.lowlevel.checkpoint()

        async with anyio.create_task_group() as tg:
            for i in range(listeners):
                tg.start_soon(listener, f"l{i}")
            for i in range(senders):
                tg.start_soon(sender, i)
    ns = Counter(n for _, n in got)
    assert sorted(ns) == list(range(total))
    assert set(ns.values()) == {1}


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10_000),
    listeners=st.integers(1, 5),
    senders=st.integers(1, 4),
    per_sender=st.integers(1, 40),
    capacity=st.integers(1, 8),
)
def test_queue_exactly_once_randomized(seed, listeners, senders, per_sender, capacity) -> None:
    anyio.run(run_queue_schedule, seed, listeners, senders, per_sender, capacity)


async def test_queue_round_robin_is_fair_among_listeners() -> None:
    hub = queue_hub(4)
    async with hub:
        for k in range(40):
            res = await hub.send("s0", "work", {"text": "t", "n": k})
            assert len(res.delivered_to) == 1
        counts = {f"l{i}": hub.subscribe(f"l{i}").pending() for i in range(4)}
    assert counts == {"l0": 10, "l1": 10, "l2": 10, "l3": 10}


async def test_queue_skips_a_full_listener() -> None:
    hub = queue_hub(2, capacity=2)
    async with hub:
        got = [
            (await hub.send("s0", "work", {"text": "t", "n": k})).delivered_to[0] for k in range(4)
        ]
        assert Counter(got) == {"l0": 2, "l1": 2}
        # drain l1 only: the next sends all go to l1 although it is l0's turn
        inbox1 = hub.subscribe("l1")
        inbox1.receive_nowait()
        inbox1.receive_nowait()
        got = [
            (await hub.send("s0", "work", {"text": "t", "n": k})).delivered_to[0] for k in range(2)
        ]
        assert got == ["l1", "l1"]


async def test_broadcast_fans_out_and_excludes_sender() -> None:
    spec = ChannelSpec(name="news", kind="broadcast", validator=Note)
    wiring = [CreatureWiring(name=n, listen=("news",), can_send=("news",)) for n in "abcd"]
    hub = ChannelHub([spec], wiring)
    async with hub:
        res = await hub.send("a", "news", {"text": "hello"})
        assert res.delivered_to == ("b", "c", "d")
        assert hub.subscribe("a").pending() == 0
        envs = [hub.subscribe(n).receive_nowait() for n in "bcd"]
        assert all(e is res.envelope for e in envs)
        assert envs[0].payload == {"text": "hello", "n": 0}
        assert envs[0].schema_name == "news"


async def test_merged_inbox_keeps_order_across_channels() -> None:
    specs = [ChannelSpec(name="a"), ChannelSpec(name="b")]
    wiring = [
        CreatureWiring(name="r", listen=("a", "b")),
        CreatureWiring(name="s", can_send=("a", "b")),
    ]
    async with ChannelHub(specs, wiring) as hub:
        for k in range(6):
            await hub.send("s", "ab"[k % 2], {"k": k})
        inbox = hub.subscribe("r")
        out = [inbox.receive_nowait() for _ in range(6)]
    assert [(e.channel, e.payload["k"]) for e in out] == [("ab"[k % 2], k) for k in range(6)]


async def test_backpressure_blocks_sender_until_drained() -> None:
    hub = queue_hub(1, capacity=2)
    progress: list[int] = []
    async with hub, anyio.create_task_group() as tg:

        async def sender() -> None:
            for k in range(5):
                await hub.send("s0", "work", {"text": "t", "n": k})
                progress.append(k)

        tg.start_soon(sender)
        for _ in range(20):
            await anyio.lowlevel.checkpoint()
        assert progress == [0, 1]  # buffer of 2 is full; the third send waits
        inbox = hub.subscribe("l0")
        assert inbox.pending() == 2
        assert (await inbox.receive()).payload["n"] == 0
        for _ in range(20):
            await anyio.lowlevel.checkpoint()
        assert progress == [0, 1, 2]
        rest = [(await inbox.receive()).payload["n"] for _ in range(4)]
        assert rest == [1, 2, 3, 4]
    assert progress == [0, 1, 2, 3, 4]


async def test_send_timeout_is_a_recorded_refusal(tmp_path: Path) -> None:
    bus = EventBus()
    sub = bus.subscribe()
    with DurableLog(tmp_path / "log.db") as log:
        hub = queue_hub(1, capacity=1, log=log, bus=bus, send_timeout=0.01)
        async with hub:
            await hub.send("s0", "work", {"text": "t"})
            with pytest.raises(ChannelRefusal, match="stayed full"):
                await hub.send("s0", "work", {"text": "u"})
        assert "stayed full" in log.refusals(hub.run_id)[0].reason
    assert any(isinstance(e, MessageRefused) for e in sub.drain())


def refusal_team(log: DurableLog, bus: EventBus) -> ChannelHub:
    specs = [
        ChannelSpec(name="work", kind="queue", schema_name="note", validator=Note),
        ChannelSpec(name="news", kind="broadcast"),
        ChannelSpec(name="void", kind="queue"),
    ]
    wiring = [
        CreatureWiring(name="a", listen=("news",), can_send=("work", "news", "void")),
        CreatureWiring(name="b", listen=("work",)),
    ]
    return ChannelHub(specs, wiring, log=log, bus=bus)


@pytest.mark.parametrize(
    ("sender", "channel", "payload", "reason"),
    [
        (
            "b",
            "work",
            {"text": "x"},
            "Creature 'b' may not send on channel 'work'; it may send on: no channel.",
        ),
        (
            "a",
            "work",
            {"text": 3, "extra": 1},
            "The payload does not match the schema 'note' of channel 'work': "
            "field 'text': Input should be a valid string; "
            "field 'extra': Extra inputs are not permitted.",
        ),
        ("a", "wrok", {"text": "x"}, "Channel 'wrok' does not exist. Did you mean 'work'?"),
        (
            "a",
            "news",
            {"text": "x"},
            "Channel 'news' has no listener other than 'a' itself, "
            "so nobody would receive the message.",
        ),
        (
            "a",
            "void",
            {"text": "x"},
            "Channel 'void' has no listener, so nobody would receive the message.",
        ),
        (
            "zed",
            "work",
            {"text": "x"},
            "'zed' is not a creature of this team, so it may not send on 'work'.",
        ),
    ],
)
async def test_every_refusal_is_raised_logged_and_published(
    tmp_path: Path, sender: str, channel: str, payload: dict, reason: str
) -> None:
    bus = EventBus()
    sub = bus.subscribe()
    with DurableLog(tmp_path / "log.db") as log:
        hub = refusal_team(log, bus)
        async with hub:
            with pytest.raises(ChannelRefusal) as info:
                await hub.send(sender, channel, payload)
            assert info.value.message == reason
        refusals = log.refusals(hub.run_id)
        assert [(r.sender, r.channel, r.reason) for r in refusals] == [(sender, channel, reason)]
        assert refusals[0].payload == payload
        assert log.messages(hub.run_id) == []
    events = sub.drain()
    assert [(e.sender, e.channel, e.reason) for e in events if isinstance(e, MessageRefused)] == [
        (sender, channel, reason)
    ]
    assert not any(isinstance(e, MessageSent) for e in events)


async def test_validation_can_be_turned_off() -> None:
    hub = queue_hub(1, validate=False)
    async with hub:
        res = await hub.send("s0", "work", {"text": 3, "whatever": True})
    assert res.envelope.payload == {"text": 3, "whatever": True}


async def test_send_events_report_delivery() -> None:
    bus = EventBus()
    sub = bus.subscribe()
    hub = queue_hub(2, bus=bus)
    async with hub:
        res = await hub.send("s0", "work", Note(text="m"), correlation_id="c1")
    kinds = [e.kind for e in sub.drain()]
    assert kinds == ["message_sent", "message_delivered"]
    assert res.envelope.correlation_id == "c1"


def test_envelope_json_round_trip_and_ids_sort() -> None:
    from terrarium.channels import new_message_id

    env = Envelope.trusted(new_message_id(), "c", "s", "note", {"a": [1, 2]}, 1.5, "r", "k")
    back = Envelope.from_json(env.to_json())
    assert back == env
    assert back.model_dump() == env.model_dump()
    ids = [new_message_id() for _ in range(1000)]
    assert ids == sorted(ids) and len(set(ids)) == 1000


def test_hub_rejects_wiring_to_unknown_channel() -> None:
    from terrarium.errors import RuntimeFailure

    with pytest.raises(RuntimeFailure, match="does not exist"):
        ChannelHub([ChannelSpec(name="a")], [CreatureWiring(name="x", listen=("b",))])


@pytest.mark.parametrize("shared", [False, True])
async def test_a_shared_writer_hub_announces_with_the_rows(tmp_path: Path, shared: bool) -> None:
    """A hub handed a log writer (``terrarium serve``: shared with the session's numbered
    events, shown only once committed) publishes ``message_sent`` before the message row
    is committed and ``message_consumed`` before the consumption is, so a subscriber
    writing them through that writer commits each in its row's transaction; a hub with a
    writer of its own publishes both after the write (a live watcher never sees what the
    log lacks). ``message_delivered`` follows the delivery either way; what the events
    say and their order is the same."""
    from terrarium.channels.writer import LogWriter

    bus = EventBus()
    seen: list[tuple[str, int, int]] = []  # kind; messages, consumptions committed then
    with DurableLog(tmp_path / "log.db") as log:
        writer = LogWriter(log) if shared else None
        hub = queue_hub(1, bus=bus, log=log, log_writer=writer)
        assert hub.announce_with_rows is shared

        def at_publish(event: object) -> bool:
            consumed = log.query("SELECT count(*) FROM consumptions")[0][0]
            seen.append((getattr(event, "kind", ""), len(log.messages(hub.run_id)), consumed))
            return False

        bus.subscribe(accept=at_publish)
        async with anyio.create_task_group() as tg:
            if writer is not None:
                await tg.start(writer.run)
            async with hub:
                res = await hub.send("s0", "work", Note(text="m"))
                await hub.mark_consumed("l0", res.envelope.id)
            tg.cancel_scope.cancel()
    assert res.delivered_to == ("l0",)
    before = 0 if shared else 1  # rows committed when announced
    assert seen == [("message_sent", before, 0), ("message_delivered", 1, 0),
                    ("message_consumed", 1, before)]
