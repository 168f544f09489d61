"""A transcript of a long session is read from the log a page of rows at a time in a worker
thread (it was every event of the run, read into one list and decoded on the event loop),
and answered as a window: the newest ``TRANSCRIPT_LIMIT`` entries by default (the whole
transcript of an ordinary session), paged back with ``?before=&limit=``."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from terrarium.channels.log import NUMBERED_EVENT_SQL
from terrarium.channels.log_rows import batch_rows
from terrarium.config import load_team
from terrarium.events import TranscriptAppended, event_json
from terrarium.events.core import TranscriptEntry
from terrarium.runtime.recording import TRANSCRIPT_LIMIT
from terrarium.serve import ServeSettings, create_app
from tests.serve_helpers import CHAT, serving

pytestmark = pytest.mark.anyio

BOT = 3000  # the bot's entries; the router has one for every third of them
PER_COMMIT = 4  # events a commit (a batch row each, as a served session writes them)


def _write_long_run(log: Any, run_id: str) -> None:
    events = []
    for i in range(BOT):
        events.append(("bot", f"bot {i}"))
        if i % 3 == 0:
            events.append(("router", f"router {i}"))
    seq = 0
    for start in range(0, len(events), PER_COMMIT):
        part = events[start:start + PER_COMMIT]
        seqs = list(range(seq + 1, seq + 1 + len(part)))
        seq = seqs[-1]
        texts = [(time.time(), who, event_json(TranscriptAppended(
            creature=who, entry=TranscriptEntry("assistant", text, 1.0, 1)), n))
            for n, (who, text) in zip(seqs, part, strict=True)]
        log.write_batch([(NUMBERED_EVENT_SQL, batch_rows(
            run_id, seqs, ["transcript"] * len(part), texts))])


async def test_a_long_transcript_is_read_in_pages_off_the_loop(tmp_path: Path) -> None:
    app = create_app(load_team(CHAT), ServeSettings(runs_dir=tmp_path / "runs", rate=1e6))
    mgr = app.state.manager
    async with serving(app) as base, httpx.AsyncClient(base_url=base, timeout=60) as c:
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        url = f"/v1/sessions/{sid}/transcript/bot"
        assert (await c.get(url)).json() == {"creature": "bot", "entries": [], "first": 0,
                                             "total": 0}
        _write_long_run(mgr.log, mgr.info(sid).run_id)
        loop_thread = threading.get_ident()
        reads: list[tuple[bool, int]] = []  # (off the loop, rows) of each page read
        inner = mgr.log._query

        def spied(sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
            rows = inner(sql, params)
            if "AND id>?" in sql:
                reads.append((threading.get_ident() != loop_thread, len(rows)))
            return rows

        mgr.log._query = spied
        got = (await c.get(url)).json()
        assert got["total"] == BOT and got["first"] == BOT - TRANSCRIPT_LIMIT
        assert [e["text"] for e in got["entries"]] == [
            f"bot {i}" for i in range(BOT - TRANSCRIPT_LIMIT, BOT)]
        rows = len(reads)
        assert rows >= 4 and all(off for off, _ in reads)  # pages, each in a worker thread
        assert max(n for _, n in reads) <= 256
        page = (await c.get(url, params={"before": 1000, "limit": 300})).json()
        assert page["first"] == 700 and page["total"] == BOT
        assert [e["text"] for e in page["entries"]] == [f"bot {i}" for i in range(700, 1000)]
        start = (await c.get(url, params={"before": 0})).json()
        assert start["entries"] == [] and start["first"] == 0
        router = (await c.get(f"/v1/sessions/{sid}/transcript/router",
                              params={"limit": 5})).json()
        assert router["total"] == BOT // 3 and len(router["entries"]) == 5
        for bad in ({"limit": "0"}, {"limit": str(TRANSCRIPT_LIMIT + 1)}, {"limit": "x"},
                    {"before": "-1"}, {"before": "1e3"}):
            r = await c.get(url, params=bad)
            body = r.json()
            assert r.status_code == 422 and body["errors"][0]["field"] in bad, body
        schema = (await c.get("/openapi.json")).json()
        op = schema["paths"]["/v1/sessions/{session_id}/transcript/{creature}"]["get"]
        assert {p["name"] for p in op["parameters"] if p["in"] == "query"} == {"limit",
                                                                                "before"}
        events = schema["paths"]["/v1/sessions/{session_id}/events"]["get"]
        assert "after" in {p["name"] for p in events["parameters"]}
