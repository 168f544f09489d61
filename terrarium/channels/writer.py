"""Group commits: concurrent writers share one SQLite transaction.

``await writer.write(sql, row)`` returns only after the transaction holding the row has
committed; that is what "written before delivered" rests on. Rows arriving while a commit
is in progress form the next batch, so N concurrent senders cost one commit, not N.
``offload=True`` runs the commit in a worker thread (the loop keeps serving senders while
SQLite works); ``False`` commits inline (fewer hops; bench/channels.py measures both).

One writer may serve many runs of one log (``terrarium serve``: every session's hub and
its numbered events share the server's writer), so concurrent sessions share a commit too;
``put`` adds rows without waiting, and is told (``after``) once they are committed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import TaskStatus

from terrarium.channels.log import DurableLog
from terrarium.errors import RuntimeFailure

# "" (wait for the writer), "now" (commit in the caller's step) or "trip" (with the others)
_AT_ONCE: ContextVar[str] = ContextVar("terrarium_commit_at_once", default="")


class commit_at_once:  # (named as a function: ``with commit_at_once():``)
    """Within it, a write that waits is committed without waiting for more rows: at once,
    in the caller's own step (a loop busy with many turns makes each trip round it long, and
    a request waiting on two of them, ``terrarium serve``'s input, waited for every turn in
    between). ``together`` (other requests are under way) and turns that take the CPU one
    at a time (``busy``: runtime/gate.py, so a trip is short): after one trip, sharing the
    commit with every request of that trip (a burst of inputs: one commit, not one each).
    (A class, not a ``contextmanager`` generator: twice an input, at a third of the calls.)"""

    __slots__ = ("_mode", "_token")

    def __init__(self, together: bool = False) -> None:
        self._mode = "trip" if together else "now"

    def __enter__(self) -> None:
        self._token = _AT_ONCE.set(self._mode)

    def __exit__(self, *exc: object) -> None:
        _AT_ONCE.reset(self._token)


def _task() -> object | None:
    """The asyncio task running now (None on another anyio backend)."""
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None


class _Batch:
    __slots__ = ("_done", "after", "before", "committed", "error", "ops", "size")

    def __init__(self) -> None:
        self.ops: dict[str, list[tuple[Any, ...]]] = {}
        self._done: anyio.Event | None = None  # made for the first waiter (most have none)
        self.committed = False  # (or failed: ``error``)
        self.error: BaseException | None = None
        self.size = 0
        self.after: list[Callable[[], None]] = []  # told once the batch is committed
        # called just before the commit, to add the rows they stand for (``count``)
        self.before: list[Callable[[], None]] = []

    def bucket(self, sql: str) -> list[tuple[Any, ...]]:
        """The rows of ``sql`` this batch will insert (made on first use)."""
        rows = self.ops.get(sql)
        if rows is None:
            self.ops[sql] = rows = []
        return rows

    @property
    def done(self) -> anyio.Event:
        """Set once the batch is committed (or failed)."""
        if self._done is None:
            self._done = anyio.Event()
            if self.committed:
                self._done.set()
        return self._done

    def finished(self) -> None:
        self.committed = True
        if self._done is not None:
            self._done.set()


def _complete(batch: _Batch) -> None:
    """Add the rows the batch's ``before`` hooks stand for (once)."""
    before, batch.before = batch.before, []
    for fn in before:
        fn()


class LogWriter:
    """Batches inserts into one transaction per batch; run ``run()`` in a task group."""

    def __init__(self, log: DurableLog, *, offload: bool = False,
                 busy: Callable[[], bool] | None = None, patience: int = 8) -> None:
        self.log = log
        self.offload = offload
        # while ``busy()`` (serve: turns are computing), a commit waits up to ``patience``
        # trips round the loop for more rows: turns that take the CPU one at a time
        # (runtime/gate.py) would otherwise each pay commits of their own
        self.busy = busy
        self.patience = patience
        self._current = _Batch()
        self._wake = anyio.Event()
        # tasks that commit what they add themselves (``held``), and whether the current
        # batch has rows of theirs only, so no wake-up yet
        self._holders: dict[object, int] = {}
        self._quiet = False
        self._running = False
        self._closed = False
        self._tripping = 0  # callers in their ``trip``: they commit what is pending next
        self.commits = 0
        self.rows = 0

    def _add(self, sql: str, rows: Sequence[tuple[Any, ...]], *, wait: bool = True) -> _Batch:
        if self._closed:
            raise RuntimeFailure("The event log writer is closed; nothing more can be written.")
        if wait and not self._running:
            raise RuntimeFailure(
                "The event log writer is not running; enter the hub with `async with` first."
            )
        batch = self._current
        batch.bucket(sql).extend(rows)
        return self._grown(batch, len(rows))

    def _grown(self, batch: _Batch, n: int) -> _Batch:
        """``n`` rows were staged in ``batch``: the first ones wake the writer."""
        if batch.size == 0 or self._quiet:
            self._first_rows()
        batch.size += n
        return batch

    def _first_rows(self) -> None:
        """The batch's first rows (or the first since its holders' own): wake the writer,
        unless a holder added them (it commits them, or wakes the writer: ``held``)."""
        if self._holders and _task() in self._holders:
            self._quiet = True
        else:
            self._quiet = False
            self._wake.set()

    def put_row(self, sql: str, row: tuple[Any, ...]) -> _Batch:
        """``put`` of one row without waiting (a served session's turn count: once a turn)."""
        if self._closed:
            raise RuntimeFailure("The event log writer is closed; nothing more can be written.")
        batch = self._current
        # (``bucket`` and ``_grown`` inline)
        bucket = batch.ops.get(sql)
        if bucket is None:
            batch.ops[sql] = [row]
        else:
            bucket.append(row)
        if batch.size == 0 or self._quiet:
            self._first_rows()
        batch.size += 1
        return batch

    def count(self) -> _Batch:
        """Count a row that a ``before`` hook of the batch returned will add at its commit
        (a served session's events: one row for all of a commit's), waking the writer as
        ``put_row`` does."""
        if self._closed:
            raise RuntimeFailure("The event log writer is closed; nothing more can be written.")
        batch = self._current
        if batch.size == 0 or self._quiet:
            self._first_rows()
        batch.size += 1
        return batch

    async def write(self, sql: str, row: tuple[Any, ...]) -> None:
        """Add one row and wait until its batch is committed."""
        await self._wait(self._add(sql, (row,)))

    async def write_many(self, sql: str, rows: Sequence[tuple[Any, ...]]) -> None:
        await self._wait(self._add(sql, rows))

    async def write_ops(self, ops: Sequence[tuple[str, Sequence[tuple[Any, ...]]]]) -> None:
        """Add every ``(sql, rows)`` pair to one batch and wait until it is committed (a
        turn's end: its record, conversation and consumption in one transaction)."""
        batch = None
        for sql, rows in ops:
            batch = self._add(sql, rows)
        if batch is not None:
            await self._wait(batch)

    def held(self) -> _Held:
        """Within it, rows this task adds do not wake the writer's task: the task commits
        them itself (``commit_soon``, or its writes in ``commit_at_once``), and what it
        leaves uncommitted (it failed, or was cancelled first) goes to the writer when it
        leaves. Saves the writer steps that would find the rows committed already
        (serve's input, at low concurrency: three a request). Rows of other tasks wake
        the writer as ever, also while this one waits. Only on asyncio (elsewhere a no-op).
        """
        return _Held(self)

    def _let_go(self, task: object) -> None:
        """``task`` leaves a ``held`` block (see there)."""
        holders = self._holders
        if holders[task] > 1:
            holders[task] -= 1
        else:
            del holders[task]
            if self._quiet and self._current.size:
                self._quiet = False
                self._wake.set()

    def put(self, sql: str, rows: Sequence[tuple[Any, ...]]) -> _Batch:
        """Add rows to the next commit without waiting for it (the writer need not run yet:
        they go with the first commit after it starts); the batch returned takes callbacks
        in ``after``, called once it is committed (not when it fails)."""
        return self._add(sql, rows, wait=False)

    async def _wait(self, batch: _Batch) -> None:
        at_once = _AT_ONCE.get()
        if batch is self._current and at_once and not self.offload:
            if at_once == "trip" and self.busy is not None:
                # one trip (short when turns take turns): every request of this trip has
                # added its rows by then, and the first one back commits them all
                await anyio.lowlevel.checkpoint()
                if batch is self._current:
                    self.commit_now()
            else:
                self.commit_now()
        if not batch.committed:  # (committed at once: no trip round the loop either)
            await batch.done.wait()
        self.check(batch)

    def at_once(self) -> bool:
        """Whether a write now commits in the caller's own step (``commit_at_once``)."""
        return not self.offload and bool(_AT_ONCE.get())

    def pending(self, batch: _Batch) -> bool:
        """Whether ``batch`` is the one still taking rows (not committed, nor committing)."""
        return batch is self._current

    async def trip(self, batch: _Batch) -> None:
        """Within ``commit_at_once(together=True)``, turns gated: the one trip round the
        loop in which every request of this trip adds its rows to ``batch`` (``_wait``'s,
        for a caller that commits with ``commit_now`` or ``settle`` after it)."""
        if batch is self._current and self.busy is not None and _AT_ONCE.get() == "trip":
            self._tripping += 1  # (the writer's task waits for it: ``run``)
            try:
                await anyio.lowlevel.checkpoint()
            finally:
                self._tripping -= 1

    async def settle(self, batch: _Batch) -> None:
        """After ``trip``: ``batch`` committed now if it still takes rows, else waited for
        (another request of the trip, or the writer, commits it)."""
        if batch is self._current:
            self.commit_now()
        if not batch.committed:
            await batch.done.wait()
        self.check(batch)

    @staticmethod
    def check(batch: _Batch) -> None:
        """Raise the failure of ``batch``'s commit, if it failed."""
        if batch.error is not None:
            raise RuntimeFailure(
                f"The event log could not be written: {batch.error}."
            ) from batch.error

    async def _commit(self, batch: _Batch) -> None:
        if self.offload and batch.size:
            try:
                _complete(batch)
                await anyio.to_thread.run_sync(self.log.write_batch, list(batch.ops.items()))
            except Exception as e:  # handed to every waiter of this batch
                batch.error = e
            self._done(batch)
        else:
            self._commit_now(batch)

    def _commit_now(self, batch: _Batch) -> None:
        if batch.size:
            try:
                _complete(batch)
                self.log.write_batch(list(batch.ops.items()))
            except Exception as e:  # handed to every waiter of this batch
                batch.error = e
        self._done(batch)

    def _done(self, batch: _Batch) -> None:
        if batch.size and batch.error is None:
            self.commits += 1
            self.rows += batch.size
            for fn in batch.after:
                fn()
        batch.finished()

    def commit_now(self) -> None:
        """Commit what is pending at once, in the caller's step: no trip through the
        writer's task, which a loop busy with many sessions' turns makes long."""
        if self._current.size:
            batch, self._current, self._quiet = self._current, _Batch(), False
            self._commit_now(batch)

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """The writer loop: wait for rows, swap the batch, commit it (shielded)."""
        self._running = True
        if self._current.size:  # rows put before the writer ran
            self._wake.set()
        task_status.started()
        try:
            while True:
                await self._wake.wait()
                self._wake = anyio.Event()
                while self._tripping:  # a caller commits it all after its trip (one step)
                    await anyio.lowlevel.checkpoint()
                if not self._current.size:  # (it did)
                    continue
                if self.busy is not None:
                    await self._gather()
                batch, self._current, self._quiet = self._current, _Batch(), False
                if not self.offload:  # in this step: nothing to shield from cancellation
                    self._commit_now(batch)
                    continue
                with anyio.CancelScope(shield=True):
                    await self._commit(batch)
        finally:
            self._running = False

    async def _gather(self) -> None:
        """Wait a few trips while the loop is busy, so that one commit takes the rows of
        several turns (a write that must commit at once does it itself: ``commit_now``)."""
        assert self.busy is not None
        for _ in range(self.patience):
            if not self.busy() or not self._current.size:
                return
            await anyio.lowlevel.checkpoint()

    async def commit_soon(self, together: bool = False) -> None:
        """Commit what is pending now and wait for it: at once in the caller's step, or
        (``together``, see ``commit_at_once``) after one trip with the rows of every
        request of that trip."""
        if not self._current.size:
            return
        with commit_at_once(together):
            await self._wait(self._current)

    async def flush(self) -> None:
        """Commit whatever is pending now (used at shutdown)."""
        if self._current.size:
            batch, self._current, self._quiet = self._current, _Batch(), False
            with anyio.CancelScope(shield=True):
                await self._commit(batch)

    async def aclose(self) -> None:
        await self.flush()
        self._closed = True


class _Held:
    """``LogWriter.held``'s block (a class, not a ``contextmanager`` generator: once an
    input, at a third of the calls)."""

    __slots__ = ("_task", "_writer")

    def __init__(self, writer: LogWriter) -> None:
        self._writer = writer
        self._task: object | None = None

    def __enter__(self) -> None:
        task = self._task = _task()
        if task is not None:
            holders = self._writer._holders
            holders[task] = holders.get(task, 0) + 1

    def __exit__(self, *exc: object) -> None:
        if self._task is not None:
            self._writer._let_go(self._task)


__all__ = [
    "LogWriter",
    "commit_at_once",
]
