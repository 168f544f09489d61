"""A served session's events of one commit are one ``batch`` row of the log's events
table (log_rows.batch_rows): every reader takes it apart and sees what one row an event
gave, in a log written that way, in one written the old way (a row an event: logs of
earlier versions) and in a run that has both (an old session continued)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from terrarium.channels.envelope import Envelope
from terrarium.channels.log import NUMBERED_EVENT_SQL, DurableLog, sent_json
from terrarium.channels.log_rows import BATCH_KIND, batch_rows, unbatched
from terrarium.channels.writer import LogWriter
from terrarium.events import (
    CreatureState,
    Event,
    JobStarted,
    MessageSent,
    OutputText,
    RunStarted,
    TurnEnded,
    TurnStarted,
    event_json,
)
from terrarium.serve.events import SessionEvents

PAYLOAD = {"text": "hello, two\nlines"}


def _events(run: str) -> list[Event]:
    """A run's start, an input and a turn (with a job in it), in publish order."""
    return [
        RunStarted(ts=1.0, run_id=run, terrarium="t", path="p", pid=7),
        MessageSent(ts=2.0, message_id="m1", channel="inbox", sender="user",
                    delivered_to=("bot",), payload=PAYLOAD),
        TurnStarted(ts=3.0, creature="bot", turn_index=1),
        CreatureState(ts=3.1, creature="bot", state="thinking"),
        JobStarted(ts=3.2, creature="bot", job_id="j1", call="search"),
        OutputText(ts=3.3, creature="bot", output="out", text='said "hi",\n'),
        CreatureState(ts=3.4, creature="bot", state="idle"),
        TurnEnded(ts=3.5, creature="bot", turn_index=1),
    ]


def _stored(event: Event, seq: int) -> str:
    """The event's text as the server stores it (a message_sent without its payload)."""
    return sent_json(event, seq) if isinstance(event, MessageSent) else event_json(event, seq)


def _log(path: Path, batched: bool, old_first: int = 0) -> tuple[DurableLog, str]:
    """A log holding ``_events`` numbered 1..8: a row each (the old way) for the first
    ``old_first`` (all unless ``batched``), the rest in two commits' batch rows."""
    log = DurableLog(path)
    run = log.start_run("t", run_id="r" * 30)
    log.record_message(run, Envelope(id="m1", channel="inbox", sender="user",
                                     schema_name="text", payload=PAYLOAD, ts=2.0), ["bot"])
    events = _events(run)
    rows = [(run, e.ts, e.kind, getattr(e, "creature", None), _stored(e, i), i)
            for i, e in enumerate(events, 1)]
    if batched:
        new = list(enumerate(events, 1))[old_first:]
        ops = []
        for part in (new[:len(new) // 2], new[len(new) // 2:]):  # two commits
            ops += batch_rows(run, [s for s, _ in part], [e.kind for _, e in part],
                              [(e.ts, getattr(e, "creature", None), _stored(e, s))
                               for s, e in part])
        rows = rows[:old_first] + ops
    log.write_batch([(NUMBERED_EVENT_SQL, rows)])
    return log, run


def _reads(log: DurableLog, run: str) -> dict[str, Any]:
    return {
        "events": log.events(run),
        "by kind": log.events(run, ["creature_state", "message_sent"]),
        "jobs": log.events(run, ["job_started", "job_ended"]),
        "typed": log.typed_events(run),
        "timeline": [(e.ts, e.kind, e.actor, e.detail) for e in log.timeline(run)],
        "numbered": log.numbered(run),
        "pids": log.run_pids(),
    }


def test_batch_rows_group_a_commits_events_and_leave_kinds_read_by_kind_alone() -> None:
    kinds = ["run_started", "message_sent", "turn_started", "job_started", "output_text",
             "turn_ended"]
    rows = batch_rows("r", [1, 2, 3, 4, 5, 6], kinds,
                      [(float(i), None, f'{{"kind":"{k}","seq":{i}}}')
                       for i, k in enumerate(kinds, 1)])
    # run_started and job_started alone; message_sent+turn_started and the last two batched
    assert [(r[2], r[5]) for r in rows] == [("run_started", 1), (BATCH_KIND, 3),
                                             ("job_started", 4), (BATCH_KIND, 6)]
    assert rows[1][1] == 2.0  # a batch row's ts: its first event's
    back = unbatched([(r[5], r[2], r[4]) for r in rows], 1, 2, 0)
    assert [(s, k) for s, k, _ in back] == list(enumerate(kinds, 1))
    # an event alone in its commit: a row of its own
    assert batch_rows("r", [9], ["output_text"], [(1.0, "bot", "{}")]) == [
        ("r", 1.0, "output_text", "bot", "{}", 9)]


@pytest.mark.parametrize("old_first", [0, 3])
def test_every_reader_sees_batch_rows_as_a_row_an_event(tmp_path: Path,
                                                        old_first: int) -> None:
    old, run = _log(tmp_path / "old.sqlite3", batched=False)
    new, run2 = _log(tmp_path / "new.sqlite3", batched=True, old_first=old_first)
    assert run == run2
    assert new.query("SELECT count(*) FROM events WHERE kind=?", (BATCH_KIND,))[0][0] >= 1
    assert new.query("SELECT count(*) FROM events")[0][0] < 8
    want, got = _reads(old, run), _reads(new, run)
    for key in want:
        assert got[key] == want[key], key
    assert [e["kind"] for e in got["events"]] == [e.kind for e in _events(run)]
    assert got["events"][1]["payload"] == PAYLOAD  # put back from its message row
    assert got["pids"] == {run: 7}
    assert [e["job_id"] for e in got["jobs"]] == ["j1"]
    old.close()
    new.close()


@pytest.mark.anyio
@pytest.mark.parametrize("old_first", [0, 3])
async def test_a_session_reads_back_from_inside_a_batch_row(tmp_path: Path,
                                                          old_first: int) -> None:
    """A client resuming after an event in the middle of a batch row (read from the log,
    not the memory of recent events) gets the rest of it and what follows, once, with
    ``limit`` counting events; the numbering goes on after the last batch row's."""
    old, run = _log(tmp_path / "old.sqlite3", batched=False)
    new, _ = _log(tmp_path / "new.sqlite3", batched=True, old_first=old_first)
    new.query("CREATE TABLE IF NOT EXISTS session_events(session_id TEXT NOT NULL,"
              " seq INTEGER NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL,"
              " PRIMARY KEY(session_id, seq)) WITHOUT ROWID")
    old.query("CREATE TABLE IF NOT EXISTS session_events(session_id TEXT NOT NULL,"
              " seq INTEGER NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL,"
              " PRIMARY KEY(session_id, seq)) WITHOUT ROWID")
    writer = LogWriter(new)
    a = SessionEvents("s", run, old, None, LogWriter(old))  # type: ignore[arg-type]
    b = SessionEvents("s", run, new, None, writer)  # type: ignore[arg-type]
    assert a.committed == b.committed == b.last_seq == 8
    for after in range(9):
        for limit in (1, 2, 1000):
            assert b.read(after, limit) == a.read(after, limit), (after, limit)
    assert [s for s, _, _ in b.read(2)] == [3, 4, 5, 6, 7, 8]
    # new events go on from 9, as one batch row of their commit, read back the same
    async with anyio.create_task_group() as tg:
        await tg.start(writer.run)
        b.offer(CreatureState(creature="bot", state="thinking"))
        b.offer(CreatureState(creature="bot", state="idle"))
        await writer.commit_soon()
        tg.cancel_scope.cancel()
    assert new.query("SELECT kind, seq FROM events ORDER BY id DESC LIMIT 1") == [
        (BATCH_KIND, 10)]
    live = b.read(8)
    b.recent.clear()
    assert b.read(8) == live and [s for s, _, _ in live] == [9, 10]
    old.close()
    new.close()


@pytest.mark.anyio
async def test_a_failing_before_hook_fails_its_commit(tmp_path: Path) -> None:
    """A batch's rows made just before its commit (``before``): a hook that raises fails
    the commit for its waiters, as a failed write does."""
    from terrarium.errors import RuntimeFailure

    with DurableLog(tmp_path / "log.sqlite3") as log:
        writer = LogWriter(log)
        async with anyio.create_task_group() as tg:
            await tg.start(writer.run)
            batch = writer.count()

            def boom() -> None:
                raise ValueError("no rows")

            batch.before.append(boom)
            with pytest.raises(RuntimeFailure, match="no rows"):
                await writer.commit_soon()
            tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_a_secret_in_a_batch_row_is_masked_and_its_events_still_part(
        tmp_path: Path) -> None:
    """Redaction masks a secret (and a URL's password) inside an event's text of a batch
    row, never across the line between two events: read back, each event is whole, with
    the secret masked, as a row of its own would have been."""
    from terrarium import secrecy

    secrecy.forget()
    secrecy.register("hunter2-secret-value")
    try:
        with DurableLog(tmp_path / "log.sqlite3") as log:
            log.query("CREATE TABLE IF NOT EXISTS session_events(session_id TEXT NOT NULL,"
                      " seq INTEGER NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL,"
                      " PRIMARY KEY(session_id, seq)) WITHOUT ROWID")
            run = log.start_run("t")
            writer = LogWriter(log)
            events = SessionEvents("s", run, log, None, writer)  # type: ignore[arg-type]
            texts = ["my key is hunter2-secret-value", "see https://ada:pw1234@example.com/x",
                     "nothing to hide"]
            async with anyio.create_task_group() as tg:
                await tg.start(writer.run)
                for text in texts:
                    events.offer(OutputText(creature="bot", output="out", text=text))
                await writer.commit_soon()
                tg.cancel_scope.cancel()
            assert log.query("SELECT kind, seq FROM events") == [(BATCH_KIND, 3)]
            got = [e["text"] for e in log.events(run)]
            assert got == ["my key is ***", "see https://ada:***@example.com/x",
                           "nothing to hide"]
            events.recent.clear()
            assert [s for s, _, _ in events.read(0)] == [1, 2, 3]
    finally:
        secrecy.forget()
