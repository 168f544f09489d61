"""Publishing on NATS JetStream, pipelined: the publish window and its PubAcks.

The messages of a batch go out without waiting for each other's PubAck, at most
``publish_window`` of this process's publishes awaiting their ack at a time (one
semaphore, ``_room``, shared by every send of the process), and a batch returns only once
every one of its messages is acked. The PubAcks come to one inbox of the process
(``_on_ack``). A message the broker refused as full, or whose ack did not come within
``publish_ack_wait``, is published again with its id (the broker drops the repeat of one
it stored) after the rest of its window settled.

:class:`PublishWindow` is a part of
:class:`~terrarium.channels.nats.transport.NatsTransport` (a mixin): the transport
connects, makes the semaphore and subscribes ``_on_ack`` to the ack inbox.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import deque
from collections.abc import Sequence

import anyio
import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from terrarium.channels.envelope import Envelope
from terrarium.channels.nats.naming import channel_subject
from terrarium.channels.transport import BatchRefusal

__all__ = ["PUBLISH_ACK_WAIT", "PUBLISH_ATTEMPTS", "PUBLISH_WINDOW", "PublishWindow"]

logger = logging.getLogger("terrarium.channels.nats")

_FULL = 10077  # JetStream: "maximum messages exceeded" (discard new)
PUBLISH_WINDOW = 64  # publishes awaiting their PubAck at once, per process (docs/distributed.md)
PUBLISH_ACK_WAIT = 10.0  # seconds for one PubAck before the message is published again
PUBLISH_ATTEMPTS = 4  # publishes of one message (its id unchanged) before a send is refused


class PublishWindow:
    """Pipelined publishes of one process and their acks (the transport's publishing half)."""

    # the transport's, set in its __init__ and __aenter__
    nc: Client | None
    run_id: str
    publish_window: int
    publish_ack_wait: float
    _published: int  # publishes by this process (the outstanding poll's freshness)
    _ack_prefix: str  # the inbox the PubAcks come to
    _acks: dict[str, asyncio.Future[str | None]]  # reply token -> its PubAck
    _ack_seq: int
    _room: anyio.Semaphore | None  # publishes awaiting their PubAck
    js: JetStreamContext  # the transport's property: raises when not connected

    async def publish(self, envelope: Envelope, targets: tuple[str, ...], broadcast: bool,
                      wait_limit: float | None) -> None:
        """Publish one message; returns once the broker acked it (see :meth:`publish_many`)."""
        await self.publish_many((envelope,), wait_limit)

    async def publish_many(self, envelopes: Sequence[Envelope],
                           wait_limit: float | None) -> None:
        """Publish in order, pipelined; return once the broker acked every one.

        At most ``publish_window`` publishes of this process await their PubAck at once
        (a batch settles its oldest first). A message the broker refused as full, or whose
        ack did not come within ``publish_ack_wait``, is published again with the same
        ``Nats-Msg-Id``, one at a time, once the rest of its window settled; nothing new
        leaves meanwhile. Raises ``BatchRefusal`` for a message that cannot be stored (full
        beyond ``wait_limit``, no ack after ``PUBLISH_ATTEMPTS`` publishes, any other
        broker error), naming how many of the batch were stored; the rest of the batch is
        not published.
        """
        nc = self.nc
        room = self._room
        assert nc is not None and room is not None
        acks = self._acks
        prefix = self._ack_prefix
        loop = asyncio.get_running_loop()
        subjects: dict[str, str] = {}
        inflight: deque[tuple[int, str, asyncio.Future[str | None] | None]] = deque()
        failed: list[tuple[int, str]] = []  # (index, "full" | "timeout" | a sentence)
        stored = 0
        n = len(envelopes)
        self._published += n
        window = self.publish_window
        i = 0
        while i < n or inflight:
            while i < n and not failed and len(inflight) < window:
                try:
                    room.acquire_nowait()
                except anyio.WouldBlock:
                    if inflight:  # settle one of ours first: other sends hold the rest
                        break
                    await room.acquire()
                env = envelopes[i]
                subject = subjects.get(env.channel)
                if subject is None:
                    subject = subjects[env.channel] = channel_subject(self.run_id, env.channel)
                self._ack_seq += 1
                token = str(self._ack_seq)
                fut: asyncio.Future[str | None] | None = loop.create_future()
                fut.add_done_callback(self._free_room)
                acks[token] = fut
                try:
                    await nc.publish(subject, env.to_json().encode(), reply=prefix + token,
                                     headers={"Nats-Msg-Id": env.id})
                except nats.errors.Error as exc:  # not sent: published again below
                    logger.warning("publishing %s failed (%s); publishing it again",
                                   env.id, exc)
                    acks.pop(token, None)
                    fut.cancel()
                    fut = None
                inflight.append((i, token, fut))
                i += 1
            # no more may leave now: settle what is acked already, else wait for the oldest
            settled = 0
            while inflight and (settled == 0 or (inflight[0][2] is None
                                                 or inflight[0][2].done())):
                k, token, fut = inflight.popleft()
                problem = "timeout" if fut is None else await self._settle(token, fut)
                settled += 1
                if problem is None:
                    stored += 1
                else:
                    failed.append((k, problem))
            if failed and not inflight:  # the window settled: the failed ones again, in order
                for k, problem in failed:
                    await self._republish(envelopes[k], problem, wait_limit, k, n, stored)
                    stored += 1
                failed.clear()

    def _free_room(self, fut: asyncio.Future[str | None]) -> None:
        if self._room is not None:
            self._room.release()

    async def _on_ack(self, msg: Msg) -> None:
        """A PubAck (or the broker's refusal) for a pipelined publish: its future's result."""
        fut = self._acks.pop(msg.subject[len(self._ack_prefix):], None)
        if fut is None or fut.done():
            return
        if not msg.data:  # a status message: 503 = no responders
            status = (msg.headers or {}).get("Status", "")
            fut.set_result("no stream takes its subject" if status == "503"
                           else f"status {status or '?'}")
            return
        try:
            error = json.loads(msg.data).get("error")
        except ValueError:
            fut.set_result(f"an unreadable PubAck ({msg.data[:80]!r})")
            return
        if error is None:
            fut.set_result(None)
        elif error.get("err_code") == _FULL:
            fut.set_result("full")
        else:
            fut.set_result(str(error.get("description") or error))

    async def _settle(self, token: str, fut: asyncio.Future[str | None]) -> str | None:
        """Wait for one PubAck: None (stored), ``"full"``, ``"timeout"`` or a sentence."""
        if not fut.done():
            with anyio.move_on_after(self.publish_ack_wait):
                await fut
            if not fut.done() or fut.cancelled():
                self._acks.pop(token, None)
                return "timeout"
        return fut.result()

    async def _republish(self, env: Envelope, problem: str, wait_limit: float | None,
                         index: int, total: int, stored: int) -> None:
        """Publish ``env`` again (its id unchanged) until the broker acks it, one request at a
        time: waiting while the channel is full (at most ``wait_limit``), up to
        ``PUBLISH_ATTEMPTS`` publishes in all when acks do not come."""
        subject = channel_subject(self.run_id, env.channel)
        data = env.to_json().encode()
        where = "" if total == 1 else f" (#{index} of a batch of {total}; {stored} stored)"
        started = time.monotonic()
        delay = 0.002
        attempts = 1
        while True:
            if problem == "full":
                if wait_limit is not None and time.monotonic() - started + delay > wait_limit:
                    raise BatchRefusal(
                        f"Channel {env.channel!r} stayed full for {wait_limit:g}s, so message "
                        f"{env.id} was not delivered (delivered to nobody){where}.", index)
                await anyio.sleep(delay)  # full: wait for a listener to take one
                delay = min(delay * 2, 0.05)
            elif problem == "timeout":
                if attempts >= PUBLISH_ATTEMPTS:
                    raise BatchRefusal(
                        f"The broker did not confirm message {env.id} on channel "
                        f"{env.channel!r} after {attempts} publishes "
                        f"{self.publish_ack_wait:g}s apart: it is stored once or not at all"
                        f"{where}.", index)
                attempts += 1
            else:
                raise BatchRefusal(
                    f"The broker refused message {env.id} on channel {env.channel!r}: "
                    f"{problem}{where}.", index)
            try:
                await self.js.publish(subject, data, timeout=self.publish_ack_wait,
                                      headers={"Nats-Msg-Id": env.id})
                return
            except nats.js.errors.APIError as exc:
                problem = "full" if exc.err_code == _FULL else (exc.description or str(exc))
            except (TimeoutError, nats.errors.TimeoutError):
                problem = "timeout"
            except nats.js.errors.NoStreamResponseError:
                problem = "no stream takes its subject"
            except nats.errors.Error as exc:
                raise BatchRefusal(
                    f"The broker could not take message {env.id} on channel "
                    f"{env.channel!r}: {exc}{where}.", index) from exc
