"""What one input writes to the log (``terrarium serve``): each event once, as the run's
numbered row; each turn's record, conversation and consumption in one transaction; the
input's message and its first events committed before the answer (so the first event
can be streamed at once, whatever else the server is running)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from terrarium.channels.log import (
    CONSUME_SQL,
    MESSAGE_SQL,
    NUMBERED_EVENT_SQL,
    TURN_SQL,
    DurableLog,
)
from terrarium.channels.log_rows import unbatched
from terrarium.config import load_team
from terrarium.runtime.sessions import HISTORY_SQL
from terrarium.serve import ServeSettings, create_app
from tests.serve_helpers import CHAT

pytestmark = pytest.mark.anyio


async def test_one_input_writes_each_event_once_and_each_turn_in_one_commit(
        tmp_path: Path) -> None:
    app = create_app(load_team(CHAT), ServeSettings(runs_dir=tmp_path / "runs", warm_up=False))
    mgr = app.state.manager
    batches: list[dict[str, int]] = []  # each transaction: its statements and their rows
    inner = mgr.log.write_batch

    def recorded(ops: Any) -> None:
        ops = list(ops)
        batches.append({sql: len(rows) for sql, rows in ops})
        inner(ops)

    mgr.log.write_batch = recorded
    async with anyio.create_task_group() as tg:
        await tg.start(mgr.run)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            sid = (await c.post("/v1/sessions", json={})).json()["id"]
            events = mgr.events_of(sid)
            before = len(batches)
            r = await c.post(f"/v1/sessions/{sid}/input", json={"text": "My name is Ada."})
            assert r.status_code == 202
            # answered: the message and the events it caused are committed already
            first = events.read(r.json()["seq"])
            assert [k for _, k, _ in first][:2] == ["message_sent", "message_delivered"]
            post = batches[before:]
            # in one transaction: the message and the events of its sending
            assert [NUMBERED_EVENT_SQL in b for b in post if MESSAGE_SQL in b] == [True]
            seen: list[tuple[int, str, str]] = list(first)
            with anyio.fail_after(20):
                while sum(k == "turn_ended" for _, k, _ in seen) < 2:  # router's, bot's
                    seen += await events.wait(seen[-1][0])
        await mgr.flush()
        tg.cancel_scope.cancel()
    run_id = mgr.info(sid).run_id
    # every turn's end (router's, bot's): its record, conversation and consumption in one
    # transaction (two turns ending together may share one)
    assert sum(b.get(CONSUME_SQL, 0) for b in batches) == 2
    for b in batches:
        assert b.get(CONSUME_SQL, 0) == b.get(TURN_SQL, 0) == b.get(HISTORY_SQL, 0), b
    # each event in a numbered row (a commit's events of the session in one batch row):
    # what the stream gave is what the log holds, once (a message_sent row's payload is
    # its message row's: see the test below)
    rows = mgr.log.query("SELECT seq, kind FROM events WHERE run_id=? ORDER BY id", (run_id,))
    assert all(seq is not None for seq, _ in rows)
    assert [s for s, _ in rows] == sorted(s for s, _ in rows)  # numbered in log order
    assert len(rows) < len(mgr.log.numbered(run_id))  # (some batch rows)
    assert [r for r in mgr.log.numbered(run_id) if r[0] <= seen[-1][0]] == [
        r for r in events.read(0) if r[0] <= seen[-1][0]]
    assert mgr.log.query("SELECT count(*) FROM session_events") == [(0,)]
    mgr.log.close()


async def test_a_sent_payload_is_stored_once_and_read_back_whole(tmp_path: Path) -> None:
    """The input's payload is in its message row only (its ``message_sent`` event row
    leaves it out); a stream read back from the log, the typed events (replay) and the
    timeline have it whole, the same text the live stream gave."""
    from terrarium.events import MessageSent

    app = create_app(load_team(CHAT), ServeSettings(runs_dir=tmp_path / "runs", warm_up=False))
    mgr = app.state.manager
    text = "My name is Ada, and this sentence is long enough to notice twice: " + "x" * 400
    async with anyio.create_task_group() as tg:
        await tg.start(mgr.run)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            sid = (await c.post("/v1/sessions", json={})).json()["id"]
            r = await c.post(f"/v1/sessions/{sid}/input", json={"text": text})
            assert r.status_code == 202
            events = mgr.events_of(sid)
            live = [row for row in events.read(r.json()["seq"]) if row[1] == "message_sent"]
        await mgr.flush()
        tg.cancel_scope.cancel()
    run_id = mgr.info(sid).run_id
    assert len(live) == 1 and text in live[0][2]  # the live stream: whole
    stored = [d for d in batch_texts_of(mgr.log, run_id) if '"kind":"message_sent"' in d]
    assert len(stored) == 1 and text not in stored[0] and '"payload"' not in stored[0]
    assert mgr.log.query("SELECT count(*) FROM messages WHERE run_id=? AND payload LIKE ?",
                         (run_id, f"%{text}%")) == [(1,)]
    # read back from the log, not the memory of recent events: the same text as live
    events.recent.clear()
    assert [row for row in events.read(0) if row[1] == "message_sent"] == live
    sent = [e for e in mgr.log.typed_events(run_id) if isinstance(e, MessageSent)]
    assert [e.payload for e in sent] == [json.loads(live[0][2])["payload"]]
    assert sent[0].payload["text"] == text
    assert any(e.kind == "message_sent" and text in e.detail
               for e in mgr.log.timeline(run_id))
    mgr.log.close()


async def test_a_session_keeps_two_conversations_dropping_the_older_by_its_key(
        tmp_path: Path) -> None:
    """Each creature's two newest saved conversations stay (a crash may leave the newest's
    message unconsumed); once the process saved both, the older goes by its key, not by the
    prune that reads and sorts the creature's rows on every turn."""
    from terrarium.runtime.sessions import DROP_SQL

    app = create_app(load_team(CHAT), ServeSettings(runs_dir=tmp_path / "runs", warm_up=False))
    mgr = app.state.manager
    deletes: list[str] = []
    inner = mgr.log.write_batch

    def recorded(ops: Any) -> None:
        ops = list(ops)
        deletes.extend(sql for sql, _ in ops if sql.startswith("DELETE FROM histories"))
        inner(ops)

    mgr.log.write_batch = recorded
    async with anyio.create_task_group() as tg:
        await tg.start(mgr.run)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            sid = (await c.post("/v1/sessions", json={})).json()["id"]
            events = mgr.events_of(sid)
            for i in range(5):
                r = await c.post(f"/v1/sessions/{sid}/input", json={"text": f"Hello {i}."})
                assert r.status_code == 202
                after, ended = r.json()["seq"], 0
                with anyio.fail_after(20):
                    while ended < 2:  # the router's turn and the bot's
                        rows = await events.wait(after)
                        ended += sum(k == "turn_ended" for _, k, _ in rows)
                        after = rows[-1][0]
        await mgr.flush()
        tg.cancel_scope.cancel()
    run_id = mgr.info(sid).run_id
    for creature in ("router", "bot"):
        consumed = [m for (m,) in mgr.log.query(
            "SELECT message_id FROM consumptions WHERE run_id=? AND receiver=?"
            " ORDER BY consumed_at", (run_id, creature))]
        kept = mgr.log.query("SELECT message_id FROM histories WHERE run_id=? AND creature=?"
                             " ORDER BY ts", (run_id, creature))
        assert len(consumed) == 5 and [m for (m,) in kept] == consumed[-2:]
    # two creatures, five turns each: the first two saves of each prune, the rest by key
    assert len(deletes) == 10 and deletes.count(DROP_SQL) == 6, deletes
    mgr.log.close()


def batch_texts_of(log: DurableLog, run_id: str) -> list[str]:
    """Every event text the run's rows hold as stored (batch rows taken apart, nothing
    put back)."""
    rows = log.query("SELECT kind, data FROM events WHERE run_id=? ORDER BY id", (run_id,))
    return [r[1] for r in unbatched(rows, 0, 1)]
