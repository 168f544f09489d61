"""What one input writes to the log (``terrarium serve``): each event once, as the run's
numbered row; each turn's record, conversation and consumption in one transaction; the
input's message and its first events committed before the answer (so the first event
can be streamed at once, whatever else the server is running)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from terrarium.channels.log import CONSUME_SQL, MESSAGE_SQL, TURN_SQL
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
            assert any(MESSAGE_SQL in b for b in post)
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
    # each event one row, numbered: what the stream gave is what the log holds, once
    rows = mgr.log.query("SELECT seq, kind, data FROM events WHERE run_id=? ORDER BY id",
                         (run_id,))
    assert all(seq is not None for seq, _, _ in rows)
    assert [(s, k, d) for s, k, d in rows if s <= seen[-1][0]] == [
        (s, k, d) for s, k, d in events.read(0) if s <= seen[-1][0]]
    assert mgr.log.query("SELECT count(*) FROM session_events") == [(0,)]
    mgr.log.close()
