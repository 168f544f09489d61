"""Consumption and resume: the hub's side of exactly-once delivery (a mixin of
:class:`terrarium.channels.hub.ChannelHub`): what a turn consumed is recorded before the
transport may let it go, and a resumed run gets back what no turn consumed."""

from __future__ import annotations

import time
from collections.abc import Container, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from terrarium.errors import RuntimeFailure
from terrarium.events import MessageConsumed

if TYPE_CHECKING:
    from terrarium.channels.bus import EventBus
    from terrarium.channels.record import ChannelRecord
    from terrarium.channels.transport import Receiver, Transport


class Consumption:
    """The hub's ``mark_consumed`` and ``resume``; the attributes are the hub's own."""

    _record: ChannelRecord | None
    announce_with_rows: bool
    _inboxes: dict[str, Receiver]
    bus: EventBus
    transport: Transport

    async def mark_consumed(self, receiver: str, message_ids: str | Iterable[str],
                            also: Sequence[tuple[str, Sequence[tuple[Any, ...]]]] = ()) -> None:
        """Record that ``receiver``'s turn consumed these messages (idempotent), with
        ``also``'s log rows in the same transaction, then tell the bus (after the write, so
        a watcher never sees a consumption the log lacks). With ``announce_with_rows``
        (the hub's writer is shared with an event log that shows only committed events:
        ``terrarium serve``) the bus is told first, so the ``message_consumed`` rows go in
        the consumption's own transaction rather than a commit of their own."""
        ids = (message_ids,) if isinstance(message_ids, str) else tuple(message_ids)
        if self._record is not None:
            if self.announce_with_rows:
                now = time.time()
                if self.bus._subs:
                    for mid in ids:
                        self.bus.publish(MessageConsumed(message_id=mid, creature=receiver,
                                                         ts=now))
                await self._record.consumed(receiver, ids, also, now=now)
            else:
                now = await self._record.consumed(receiver, ids, also)
                if self.bus._subs:
                    for mid in ids:
                        self.bus.publish(MessageConsumed(message_id=mid, creature=receiver,
                                                         ts=now))
        # a transport that keeps its messages lets them go only now (memory: nothing to do)
        await self.transport.ack(receiver, ids)

    def taken_over(self, receiver: str, message_id: str) -> bool:
        """Whether ``receiver``'s copy of the message may be another listener's now (a
        broker hands a message on after its holder's silence): its turn must not count."""
        return self.transport.taken_over(receiver, message_id)

    async def let_go(self, receiver: str, message_id: str) -> None:
        """Give up a message taken over, unconsumed and unacked (its new holder has it)."""
        await self.transport.let_go(receiver, message_id)

    def resume(self, kept: Container[str] = frozenset()) -> dict[str, int]:
        """Queue every logged, unconsumed message for its receiver; call before starting.

        Idempotent: a message is replayed at most once per hub, and consumed messages
        are never replayed. ``kept``: the ids the transport still holds and redelivers
        itself (``await hub.transport.kept_ids()``; a broker): one source of redelivery
        per message, the log only for what the transport no longer has. Returns how many
        each creature got back.
        """
        if self._record is None:
            raise RuntimeFailure("Resume needs the durable log, and this hub has none.")
        counts: dict[str, int] = {}
        for creature, inbox in self._inboxes.items():
            fresh = [e for e in self._record.unconsumed(creature) if e.id not in kept]
            inbox.replay(fresh)
            counts[creature] = len(fresh)
        return counts


__all__ = ["Consumption"]
