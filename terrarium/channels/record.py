"""What the hub writes to the durable log, and reads back from it.

A send is committed (with its intended receivers) before any delivery, so a crash after
the commit loses nothing: ``resume`` hands the logged, unconsumed messages back to their
receivers. Refusals and consumptions are written too. Writes go through the ``LogWriter``,
so concurrent senders share one commit.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from types import TracebackType
from typing import Any

import anyio
import anyio.abc

from terrarium.channels.envelope import Envelope
from terrarium.channels.log import (
    CONSUME_SQL,
    MESSAGE_SQL,
    REFUSAL_SQL,
    DurableLog,
    message_row,
    refusal_row,
)
from terrarium.channels.spec import SendResult
from terrarium.channels.writer import LogWriter
from terrarium.crashpoints import ARMED as _CRASH_ARMED
from terrarium.crashpoints import crashpoint

# a message a transport keeps itself may be sent again under its id (a turn re-run)
MESSAGE_IGNORE_SQL = MESSAGE_SQL.replace("INSERT INTO", "INSERT OR IGNORE INTO", 1)


class ChannelRecord:
    """One run's channel traffic in the durable log.

    ``keeps_messages`` (the transport holds a message until a listener takes it, a broker):
    the message row is a record, not the promise of delivery, so it carries no send key (a
    re-run turn re-sends, and the transport drops the repeat by id) and a repeated id is
    no error. ``writer``: a running writer of ``log`` to share (``terrarium serve``: the
    server's, so concurrent sessions share commits) instead of one of its own.
    """

    def __init__(self, log: DurableLog, run_id: str, *, offload: bool,
                 keeps_messages: bool, writer: LogWriter | None = None) -> None:
        self.log = log
        self.run_id = run_id
        self._own = writer is None
        self.writer = writer or LogWriter(log, offload=offload)
        self._sql = MESSAGE_IGNORE_SQL if keeps_messages else MESSAGE_SQL
        self._keyed = not keeps_messages
        self._replayed: set[tuple[str, str]] = set()
        self._tg: anyio.abc.TaskGroup | None = None

    async def __aenter__(self) -> ChannelRecord:
        """Start the log writer's task (the hub enters this as it starts)."""
        if not self._own:
            return self
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        await self._tg.start(self.writer.run)
        return self

    async def close(self) -> None:
        """Commit what is pending; a writer of its own then takes nothing more (a shared
        one goes on for the other runs)."""
        if self._own:
            await self.writer.aclose()
        else:
            await self.writer.flush()

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
            await self._tg.__aexit__(exc_type, exc, tb)
            self._tg = None

    def sent(self, key: str | None) -> SendResult | None:
        """The first result of a send already logged under ``key`` (None: not sent)."""
        if key is None:
            return None
        if _CRASH_ARMED:
            crashpoint("hub.send.check")
        seen = self.log.sent_with_key(self.run_id, key)
        return SendResult(*seen) if seen is not None else None

    async def message(self, env: Envelope, receivers: tuple[str, ...],
                      key: str | None) -> None:
        """Commit one message for ``receivers`` (returns once committed)."""
        await self.writer.write(self._sql, message_row(
            self.run_id, env, receivers, key if self._keyed else None))
        if _CRASH_ARMED:
            crashpoint("hub.send.logged")

    def stage(self, env: Envelope, receivers: tuple[str, ...], key: str | None) -> Any:
        """``message``'s row added to the writer's next commit without waiting for it: the
        caller commits it (``LogWriter.settle`` or ``commit_now``) before any delivery."""
        return self.writer.put_row(self._sql, message_row(
            self.run_id, env, receivers, key if self._keyed else None))

    async def messages(self, envs: Sequence[Envelope], plan: Sequence[tuple[str, ...]],
                       keys: Sequence[str | None]) -> None:
        """Commit a batch of messages at once, each for its receivers in ``plan``."""
        await self.writer.write_many(self._sql, [
            message_row(self.run_id, e, t, k if self._keyed else None)
            for e, t, k in zip(envs, plan, keys, strict=True)
        ])

    async def refusal(self, sender: str, channel: str, reason: str, payload: Any) -> None:
        await self.writer.write(
            REFUSAL_SQL, refusal_row(self.run_id, sender, channel, reason, payload))

    async def consumed(self, receiver: str, ids: tuple[str, ...],
                       also: Sequence[tuple[str, Sequence[tuple[Any, ...]]]] = ()) -> float:
        """Commit that ``receiver`` consumed these messages (idempotent), with ``also``'s
        rows in the same transaction (the turn's record and conversation); returns when."""
        now = time.time()
        if _CRASH_ARMED:
            crashpoint("hub.consume.before")
        await self.writer.write_ops(
            [*also, (CONSUME_SQL, [(mid, receiver, self.run_id, now) for mid in ids])])
        if _CRASH_ARMED:
            crashpoint("hub.consume.after")
        return now

    def unconsumed(self, creature: str) -> list[Envelope]:
        """``creature``'s logged messages not consumed and not handed back before."""
        fresh = [e for e in self.log.unconsumed(self.run_id, creature)
                 if (e.id, creature) not in self._replayed]
        self._replayed.update((e.id, creature) for e in fresh)
        return fresh


__all__ = ["MESSAGE_IGNORE_SQL", "ChannelRecord"]
