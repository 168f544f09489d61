"""A real ``terrarium serve`` SIGKILLed in the middle of a reply, then started again on the
same log: the session comes back by itself, the interrupted turn is done again and its
message consumed exactly once, and a client that reconnects with the last event id it saw
gets every later event exactly once (numbering goes on from the last committed event)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import httpx

from terrarium.channels.log import payloads_back
from terrarium.channels.log_rows import unbatched
from terrarium.runtime.history import newest_conversation
from tests.serve_helpers import CHAT, ServerProcess, sse_events

SLOW = "This reply takes its time to arrive, word by word, until the end."


def _said(events: list[dict[str, Any]]) -> str:
    return "".join(e["text"] for e in events if e["kind"] == "output_text")


def test_sigkill_mid_reply_then_restart_loses_and_repeats_nothing(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    first = ServerProcess(CHAT, runs)
    first.wait_ready()
    seen: list[dict[str, Any]] = []

    async def before_crash() -> str:
        async with httpx.AsyncClient(base_url=first.base, timeout=20) as c:
            sid = (await c.post("/v1/sessions", json={"name": "crash"})).json()["id"]
            r = await c.post(f"/v1/sessions/{sid}/input", json={"text": "slow please"})
            assert r.status_code == 202
            # read until the bot is in the middle of its reply, then the server dies
            seen.extend(await sse_events(c, f"/v1/sessions/{sid}/events",
                                         until=lambda ev: len(_said(ev)) >= 8))
            first.kill()
            return str(sid)

    sid = anyio.run(before_crash)
    partial = _said(seen)
    assert 8 <= len(partial) < len(SLOW) and SLOW.startswith(partial)

    second = ServerProcess(CHAT, runs)  # the same log: the crashed session comes back
    try:
        second.wait_ready()
        rest: list[dict[str, Any]] = []

        async def after_restart() -> None:
            async with httpx.AsyncClient(base_url=second.base, timeout=20) as c:
                rest.extend(await sse_events(
                    c, f"/v1/sessions/{sid}/events",
                    headers={"Last-Event-ID": str(seen[-1]["seq"])},
                    until=lambda ev: any(e["kind"] == "turn_ended"
                                         and e["creature"] == "bot" for e in ev)))
                # and the session goes on
                r = await c.post(f"/v1/sessions/{sid}/input", json={"text": "hello again"})
                assert r.status_code == 202
                rest.extend(await sse_events(
                    c, f"/v1/sessions/{sid}/events?after={rest[-1]['seq']}",
                    until=lambda ev: any(e["kind"] == "turn_ended" and e["creature"] == "bot"
                                         for e in ev)))

        anyio.run(after_restart)
    finally:
        err = second.stop()
    assert "Traceback" not in err, err
    every = seen + rest
    seqs = [e["seq"] for e in every]
    assert seqs == list(range(1, len(seqs) + 1)), seqs  # none lost, none twice
    # the interrupted turn was done again, whole, once; its partial text was never a turn
    bot_ends = [e for e in every if e["kind"] == "turn_ended" and e["creature"] == "bot"]
    assert len(bot_ends) == 2  # the redone slow reply, then "hello again"
    redo_start = max(i for i, e in enumerate(rest) if e["kind"] == "turn_started"
                     and e["creature"] == "bot" and e["seq"] < bot_ends[0]["seq"])
    assert _said([e for e in rest[redo_start:] if e["seq"] <= bot_ends[0]["seq"]]) == SLOW
    with sqlite3.connect(runs / "terrarium.sqlite3") as db:
        (run_id,) = db.execute("SELECT run_id FROM sessions WHERE id=?", (sid,)).fetchone()
        msgs = db.execute("SELECT id, channel FROM messages WHERE run_id=? ORDER BY id",
                          (run_id,)).fetchall()
        consumed = db.execute("SELECT message_id, receiver FROM consumptions WHERE run_id=?",
                              (run_id,)).fetchall()
        rows = [d for _, d in unbatched(db.execute(  # (a batch row: a commit's events)
            "SELECT kind, data FROM events WHERE run_id=? AND seq IS NOT NULL ORDER BY seq",
            (run_id,)).fetchall(), 0, 1)]
        # (a message_sent row's payload is in its message's row: put back as a read does)
        stored = [json.loads(d) for d in payloads_back(rows, lambda ids: dict(db.execute(
            f"SELECT id, payload FROM messages WHERE id IN ({','.join('?' * len(ids))})",
            ids)))]
        conv = newest_conversation(lambda q, p: db.execute(q, p).fetchall(), run_id, "bot")
    assert [ch for _, ch in msgs] == ["inbox", "to_bot", "inbox", "to_bot"]  # each sent once
    assert sorted(m for m, _ in consumed) == sorted(m for m, _ in msgs)  # each consumed once
    assert stored[:len(every)] == every
    said = [c for role, c, *_ in conv if role == "assistant"]
    assert said == [SLOW, "Nice to meet you."]  # the bot heard each message once
