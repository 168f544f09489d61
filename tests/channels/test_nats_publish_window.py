"""The NATS transport's pipelined publishing (``NatsTransport.publish_many``) on a real
``nats-server -js``: a batch keeps at most ``publish_window`` publishes awaiting their
PubAck, a send returns only after its ack, a lost ack means a republish under the same
``Nats-Msg-Id`` (stored once), a full channel or a missing stream is a refusal that says
how far the batch got, and order is the send order except where the docs say it is not.

The acks are held back or lost by wrapping the transport's ``js.publish_async``: every
publish really reaches the broker (unless a test drops it), only the sender's view of the
PubAck is delayed, so nothing here depends on timing except an upper bound on waits.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from nats.aio.msg import Msg
from nats_fixtures import NatsServer
from pydantic import BaseModel

from terrarium.channels.hub import ChannelHub
from terrarium.channels.nats import NatsTransport
from terrarium.channels.nats.naming import channel_stream
from terrarium.channels.spec import ChannelSpec, wiring_from_mapping
from terrarium.errors import ChannelRefusal

pytestmark = pytest.mark.anyio


class Note(BaseModel):
    text: str
    n: int = 0


def _hub(url: str, run_id: str, *, window: int = 256, ack_wait: float = 30.0,
         capacity: int = 1000) -> tuple[ChannelHub, NatsTransport]:
    spec = ChannelSpec(name="jobs", kind="queue", schema_name="note", validator=Note,
                       capacity=capacity)
    transport = NatsTransport(url, run_id, ack_wait=5.0, publish_window=window,
                              publish_ack_wait=ack_wait)
    hub = ChannelHub([spec], wiring_from_mapping({"boss": ([], ["jobs"]), "a": (["jobs"], [])}),
                     transport=transport, run_id=run_id)
    return hub, transport


class AckGate:
    """Sits in the transport's ``nc.publish``: a pipelined publish really reaches the
    broker, but its PubAck comes to the gate, which hands it on to the sender when the test
    says (``release``, or at once with ``auto``), never (``lose``: stored, ack lost), or the
    message is not even sent (``drop``: lost on the way). Records the payloads' ``n`` of
    the pipelined publishes and the ids published again (a request, one at a time)."""

    def __init__(self, transport: NatsTransport, *, auto: bool = False,
                 lose: frozenset[int] = frozenset(), drop: frozenset[int] = frozenset()
                 ) -> None:
        assert transport.nc is not None
        self.nc = transport.nc
        self.prefix = transport._ack_prefix
        self.real = self.nc.publish
        self.inbox = self.nc.new_inbox()
        self.auto = auto
        self.lose, self.drop = lose, drop
        self.held: list[dict[str, Any]] = []  # reply, ack (when the broker answered), passed
        self.ns: list[int] = []
        self.most_unacked = 0
        self.republished: list[str] = []

    async def __aenter__(self) -> AckGate:
        await self.nc.subscribe(self.inbox + ".*", cb=self._acked)
        self.nc.publish = self.publish  # type: ignore[method-assign]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.nc.publish = self.real  # type: ignore[method-assign]

    def unacked(self) -> int:
        return sum(1 for h in self.held if not h["passed"])

    async def publish(self, subject: str, payload: bytes = b"", reply: str = "",
                      headers: dict[str, str] | None = None) -> None:
        if not reply.startswith(self.prefix):  # not a pipelined publish
            if headers and "Nats-Msg-Id" in headers:
                self.republished.append(headers["Nats-Msg-Id"])
            await self.real(subject, payload, reply=reply, headers=headers)
            return
        n = json.loads(payload)["payload"]["n"]
        first = n not in self.ns
        self.ns.append(n)
        held = {"reply": reply, "ack": None, "passed": False, "wanted": False,
                "never": first and (n in self.lose or n in self.drop)}
        self.held.append(held)
        self.most_unacked = max(self.most_unacked, self.unacked())
        if first and n in self.drop:
            return
        await self.real(subject, payload, reply=f"{self.inbox}.{len(self.held) - 1}",
                        headers=headers)

    async def _acked(self, msg: Msg) -> None:
        held = self.held[int(msg.subject.rsplit(".", 1)[1])]
        held["ack"] = msg
        if self.auto or held["wanted"]:
            await self._pass(held)

    async def _pass(self, held: dict[str, Any]) -> None:
        if held["never"] or held["passed"] or held["ack"] is None:
            return
        held["passed"] = True
        await self.real(held["reply"], held["ack"].data, headers=held["ack"].headers)

    async def release(self, count: int | None = None) -> None:
        """Pass on the acks of the oldest ``count`` held publishes (None: all and, with
        ``auto``, every later one), each once the broker gave it."""
        todo = [h for h in self.held if not h["passed"] and not h["never"]][:count]
        for held in todo:
            held["wanted"] = True
            await self._pass(held)


async def _stored(transport: NatsTransport, run_id: str) -> int:
    return (await transport.js.stream_info(channel_stream(run_id, "jobs"))).state.messages


async def _received(hub: ChannelHub, count: int) -> list[int]:
    """The ``n`` of the next ``count`` messages listener ``a`` takes, in order, each acked."""
    inbox = hub.subscribe("a")
    out = []
    with anyio.fail_after(20):
        while len(out) < count:
            env = await inbox.receive()
            out.append(env.payload["n"])
            await hub.mark_consumed("a", env.id)
    return out


def _notes(count: int) -> list[dict[str, Any]]:
    return [{"text": "job", "n": i} for i in range(count)]


async def _until(check: Any) -> None:
    """Poll a condition on the transport's progress (there is no event to wait on)."""
    with anyio.fail_after(10):
        while not check():  # noqa: ASYNC110
            await anyio.sleep(0.01)


async def test_a_batch_keeps_the_window_and_returns_only_after_every_ack(
        nats_server: NatsServer) -> None:
    hub, transport = _hub(nats_server.url, "w1", window=4)
    async with transport, hub:
        await transport.start()
        result: list[Any] = []

        async def send() -> None:
            result.extend(await hub.send_many("boss", "jobs", _notes(20)))

        async with AckGate(transport) as gate, anyio.create_task_group() as tg:
            tg.start_soon(send)
            await _until(lambda: len(gate.ns) == 4)
            await anyio.sleep(0.2)  # with 4 unacked, the fifth must wait for an ack
            assert gate.ns == [0, 1, 2, 3]
            assert await _stored(transport, "w1") == 4  # published: not waiting for acks
            await gate.release(1)
            await _until(lambda: len(gate.ns) == 5)
            assert not result  # 19 acks still to come: the batch has not returned
            gate.auto = True
            await gate.release()
        assert gate.most_unacked == 4
        assert gate.ns == list(range(20)) and not gate.republished
        assert [r.envelope.payload["n"] for r in result] == list(range(20))
        assert await _received(hub, 20) == list(range(20))


async def test_one_send_returns_only_after_its_ack(nats_server: NatsServer) -> None:
    hub, transport = _hub(nats_server.url, "w2")
    async with transport, hub:
        await transport.start()
        done = anyio.Event()

        async def send() -> None:
            await hub.send("boss", "jobs", {"text": "one", "n": 7})
            done.set()

        async with AckGate(transport) as gate, anyio.create_task_group() as tg:
            tg.start_soon(send)
            await _until(lambda: gate.ns == [7])
            await anyio.sleep(0.2)
            assert await _stored(transport, "w2") == 1
            assert not done.is_set()  # stored, but its ack has not reached the sender
            await gate.release()
        assert done.is_set()


async def test_a_lost_ack_is_published_again_under_the_same_id_and_stored_once(
        nats_server: NatsServer) -> None:
    hub, transport = _hub(nats_server.url, "w3", ack_wait=0.3)
    async with transport, hub:
        await transport.start()
        async with AckGate(transport, auto=True, lose=frozenset({2})) as gate:
            res = await hub.send_many("boss", "jobs", _notes(5))
        assert gate.republished == [res[2].envelope.id]  # once more, its id unchanged
        assert await _stored(transport, "w3") == 5  # the broker dropped the repeat
        assert await _received(hub, 5) == [0, 1, 2, 3, 4]  # the first copy kept its place


async def test_a_message_that_never_reached_the_broker_is_published_again_after_its_window(
        nats_server: NatsServer) -> None:
    """The documented exception to order: a message lost on the way is stored when it is
    published again, after the rest of its window."""
    hub, transport = _hub(nats_server.url, "w4", ack_wait=0.3)
    async with transport, hub:
        await transport.start()
        async with AckGate(transport, auto=True, drop=frozenset({2})) as gate:
            res = await hub.send_many("boss", "jobs", _notes(5))
        assert gate.republished == [res[2].envelope.id]
        assert await _stored(transport, "w4") == 5
        assert await _received(hub, 5) == [0, 1, 3, 4, 2]


async def test_acks_that_never_come_end_in_a_refusal(nats_server: NatsServer) -> None:
    hub, transport = _hub(nats_server.url, "w5", ack_wait=0.2)
    async with transport, hub:
        await transport.start()
        async def no_answer(subject: str, payload: bytes = b"", **kw: Any) -> Any:
            raise TimeoutError  # every request times out, as if the broker never answered

        transport.js.publish = no_answer  # type: ignore[method-assign]
        async with AckGate(transport, lose=frozenset({0})):
            with pytest.raises(ChannelRefusal, match=r"did not confirm message \w+ on channel "
                           r"'jobs' after 4 publishes 0\.2s apart: it is stored once or "
                               "not at all"):
                await hub.send("boss", "jobs", {"text": "lost", "n": 0})


async def test_a_full_channel_refuses_the_rest_of_a_batch_and_keeps_its_order(
        nats_server: NatsServer) -> None:
    hub, transport = _hub(nats_server.url, "w6", capacity=3)
    async with transport, hub:
        await transport.start()
        with pytest.raises(ChannelRefusal, match=r"Channel 'jobs' stayed full for 0\.3s, so "
                           r"message \w+ was not delivered \(delivered to nobody\) \(#3 of a "
                           r"batch of 6; 3 stored\)"):
            await hub.send_many("boss", "jobs", _notes(6), wait_limit=0.3)
        assert await _stored(transport, "w6") == 3
        assert await _received(hub, 3) == [0, 1, 2]


async def test_a_send_waits_for_room_while_the_channel_is_full(
        nats_server: NatsServer) -> None:
    hub, transport = _hub(nats_server.url, "w7", capacity=2)
    async with transport, hub:
        await transport.start()
        await hub.send_many("boss", "jobs", _notes(2))
        got: list[int] = []
        async with anyio.create_task_group() as tg:
            async def take() -> None:
                got.extend(await _received(hub, 4))

            tg.start_soon(take)
            with anyio.fail_after(20):  # room comes as the listener takes: nothing refused
                await hub.send_many("boss", "jobs", _notes(4)[2:])
        assert got == [0, 1, 2, 3]


async def test_a_missing_stream_is_a_refusal(nats_server: NatsServer) -> None:
    hub, transport = _hub(nats_server.url, "w8")
    async with transport, hub:
        await transport.start()
        await transport.js.delete_stream(channel_stream("w8", "jobs"))
        with pytest.raises(ChannelRefusal, match=r"The broker refused message \w+ on channel "
                           r"'jobs': no stream takes its subject \(#0 of a batch of 3; 0 "
                           r"stored\)"):
            await hub.send_many("boss", "jobs", _notes(3))


async def test_a_long_batch_arrives_in_order(nats_server: NatsServer) -> None:
    hub, transport = _hub(nats_server.url, "w9", window=16)
    async with transport, hub:
        await transport.start()
        for k in range(0, 300, 100):
            await hub.send_many("boss", "jobs", _notes(300)[k:k + 100])
        assert await _stored(transport, "w9") == 300
        assert await _received(hub, 300) == list(range(300))


def test_a_window_below_one_is_a_sentence() -> None:
    from terrarium.errors import RuntimeFailure

    with pytest.raises(RuntimeFailure, match="publish_window must be at least 1, not 0"):
        NatsTransport("nats://127.0.0.1:4222", "w", publish_window=0)
