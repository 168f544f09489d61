"""The /v1 session API against the ASGI app and a real uvicorn (scripted models): the
session lifecycle, input validated like the channel validates it, events over SSE and
WebSocket resumed from a sequence number with every event exactly once, transcripts,
prompts, approvals and ask_user answered (or timing out) over the API, idle sessions
unloaded and reloaded with their conversation, metrics, and the OpenAPI schema."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from websockets.asyncio.client import connect

from terrarium.config import load_team
from terrarium.config.topology import team_topology
from terrarium.config.topology_layout import layout
from terrarium.runtime.history import newest_conversation
from terrarium.runtime.wiring import payload_problem
from terrarium.serve import ServeSettings, create_app
from tests.serve_helpers import ASKER, CHAT, serving, sse_events

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def api(tmp_path: Path, team: Path = CHAT, **settings: Any
              ) -> AsyncIterator[tuple[httpx.AsyncClient, Any]]:
    app = create_app(load_team(team), ServeSettings(runs_dir=tmp_path / "runs", **settings))
    async with serving(app) as base, httpx.AsyncClient(base_url=base, timeout=20) as client:
        yield client, app


async def _until_idle(app: Any, sid: str) -> None:
    live = app.state.manager.loaded[sid]
    with anyio.fail_after(20):
        await anyio.sleep(0.05)
        while live.rt is None or live.rt.busy() or live.inputs:  # noqa: ASYNC110
            await anyio.sleep(0.02)
    app.state.manager.writer.flush()


def _said(events: list[dict[str, Any]]) -> str:
    return "".join(e["text"] for e in events if e["kind"] == "output_text")


async def test_session_lifecycle(tmp_path: Path) -> None:
    async with api(tmp_path) as (c, app):
        r = await c.post("/v1/sessions", json={"name": "ada"})
        assert r.status_code == 201
        s = r.json()
        assert len(s["id"]) == 32 and int(s["id"], 16) >= 0
        assert s["name"] == "ada" and s["loaded"] is False and s["turns"] == 0
        assert (await c.post("/v1/sessions", json={"name": "ada"})).status_code == 409
        listed = (await c.get("/v1/sessions")).json()["sessions"]
        assert [x["id"] for x in listed] == [s["id"]]
        sid = s["id"]
        r = await c.post(f"/v1/sessions/{sid}/input", json={"text": "My name is Ada."})
        assert r.status_code == 202 and r.json()["accepted"] is True
        after = r.json()["seq"]
        events = await sse_events(c, f"/v1/sessions/{sid}/events?after={after}",
                                  until=lambda ev: _said(ev) == "Nice to meet you.")
        assert events[0]["seq"] == after + 1
        await _until_idle(app, sid)
        got = (await c.get(f"/v1/sessions/{sid}")).json()
        assert got["loaded"] is True and got["status"] == "idle" and got["turns"] == 2
        t = (await c.get(f"/v1/sessions/{sid}/transcript/bot")).json()
        assert t["creature"] == "bot"
        assert [e["text"] for e in t["entries"] if e["kind"] == "assistant"] == [
            "Nice to meet you."]
        p = (await c.get(f"/v1/sessions/{sid}/prompt/bot")).json()
        assert p["creature"] == "bot" and len(p["prefix_hash"]) == 64
        assert p["sections"] and {"name", "zone", "bytes", "tokens"} <= set(p["sections"][0])
        assert "to_bot" in p["text"] or p["text"]
        assert (await c.get(f"/v1/sessions/{sid}/transcript/nobody")).status_code == 404
        team = (await c.get("/v1/team")).json()
        assert team["name"] == "chat" and team["input_channel"] == "inbox"
        # the picture's layout comes with it: the page draws it as `terrarium graph` does
        assert team["layout"] == layout(team_topology(load_team(CHAT))).model_dump()
        assert (await c.delete(f"/v1/sessions/{sid}")).status_code == 204
        r = await c.get(f"/v1/sessions/{sid}")
        assert r.status_code == 404
        assert r.headers["content-type"] == "application/problem+json"
        assert r.json()["status"] == 404 and "no session" in r.json()["detail"]


async def test_input_is_validated_like_the_channel_does(tmp_path: Path) -> None:
    async with api(tmp_path) as (c, _):
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        bad = {"text": "hi", "mood": "angry"}
        r = await c.post(f"/v1/sessions/{sid}/input", json={"payload": bad})
        assert r.status_code == 422
        body = r.json()
        assert r.headers["content-type"] == "application/problem+json"
        # the very sentence the channel (and validate) gives, and the field it is about
        assert body["detail"] == payload_problem(load_team(CHAT), "inbox", bad)
        assert body["errors"] == [{"field": "mood",
                                   "message": "Input should be 'calm' or 'urgent'"}]
        r = await c.post(f"/v1/sessions/{sid}/input", json={"payload": {"mood": "calm"}})
        assert r.status_code == 422 and r.json()["errors"][0]["field"] == "text"
        r = await c.post(f"/v1/sessions/{sid}/input", json={"words": "hi"})
        assert r.status_code == 422 and r.json()["errors"][0]["field"] == "words"
        r = await c.post(f"/v1/sessions/{sid}/input", content=b"{not json",
                         headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and "not valid JSON" in r.json()["detail"]
        ok = await c.post(f"/v1/sessions/{sid}/input",
                          json={"payload": {"text": "hi", "mood": "urgent"}})
        assert ok.status_code == 202


async def test_bodies_past_the_channel_max_bytes_are_413(tmp_path: Path) -> None:
    async with api(tmp_path) as (c, _):
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        # past the channel's max_bytes (2048) but inside the HTTP limit: the channel's words
        r = await c.post(f"/v1/sessions/{sid}/input", json={"text": "a" * 2500})
        assert r.status_code == 413
        assert "channel 'inbox' takes at most 2048 (its max_bytes)" in r.json()["detail"]
        # far past it: refused before the body is read
        r = await c.post(f"/v1/sessions/{sid}/input", json={"text": "a" * 100_000})
        assert r.status_code == 413 and r.json()["title"] == "Content too large"

        async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted as read
            yield b'{"text": "'
            for _ in range(10):
                yield b"a" * 1000
            yield b'"}'

        r = await c.post(f"/v1/sessions/{sid}/input", content=chunks())
        assert r.status_code == 413


async def test_inputs_past_the_rate_limit_are_429(tmp_path: Path) -> None:
    now = [1000.0]  # the rate limit's clock, moved by hand (however slow the machine)
    async with api(tmp_path, rate=1.0) as (c, app):
        app.state.manager.clock = lambda: now[0]
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        codes = [(await c.post(f"/v1/sessions/{sid}/input", json={"text": f"hi {i}"}))
                 for i in range(3)]
        assert [r.status_code for r in codes] == [202, 202, 429]  # a burst of 2 at 1/s
        assert int(codes[2].headers["retry-after"]) >= 1
        assert codes[2].json()["type"] == "/problems/rate-limited"
        now[0] += 0.5  # half a token back: still too soon
        assert (await c.post(f"/v1/sessions/{sid}/input", json={"text": "hi"})
                ).status_code == 429
        now[0] += 0.5  # a whole one
        assert (await c.post(f"/v1/sessions/{sid}/input", json={"text": "hi"})
                ).status_code == 202
        other = (await c.post("/v1/sessions", json={})).json()["id"]  # per session
        assert (await c.post(f"/v1/sessions/{other}/input", json={"text": "hi"})
                ).status_code == 202


async def test_unknown_things_are_404_problems(tmp_path: Path) -> None:
    async with api(tmp_path) as (c, _):
        for path in ("/v1/sessions/" + "0" * 32, "/v1/sessions/../../etc/passwd",
                     "/v1/nothing", "/v1/sessions/" + "0" * 32 + "/events"):
            r = await c.get(path)
            assert r.status_code == 404, path
            assert r.headers["content-type"] == "application/problem+json"
            assert "Traceback" not in r.text
        r = await c.post("/v1/sessions/" + "f" * 32 + "/approvals/x", json={"approved": True})
        assert r.status_code == 404


async def test_events_resume_over_sse_and_websocket_exactly_once(tmp_path: Path) -> None:
    async with api(tmp_path) as (c, app):
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        url = f"/v1/sessions/{sid}/events"
        await c.post(f"/v1/sessions/{sid}/input", json={"text": "My name is Ada."})
        # first connection: leave in the middle of the turn's events
        first = await sse_events(c, url, until=lambda ev: any(
            e["kind"] == "output_text" for e in ev))
        cut = first[-1]["seq"]
        await _until_idle(app, sid)
        r = await c.post(f"/v1/sessions/{sid}/input", json={"text": "What is my name?"})
        assert r.status_code == 202
        # reconnect with Last-Event-ID: the rest of the first turn, then the second
        second = await sse_events(c, url, headers={"Last-Event-ID": str(cut)},
                                  until=lambda ev: "Your name is Ada." in _said(ev))
        await _until_idle(app, sid)
        total = app.state.manager.events_of(sid).last_seq
        cut2 = second[-1]["seq"]
        # and the rest over the WebSocket, from ?after=
        ws_url = c.base_url.copy_with(scheme="ws", path=url + "/ws",
                                      query=f"after={cut2}".encode())
        third: list[dict[str, Any]] = []
        async with connect(str(ws_url)) as ws:
            while not third or third[-1]["seq"] < total:
                with anyio.fail_after(10):
                    third.append(json.loads(await ws.recv()))
        seqs = [e["seq"] for e in first + second + third]
        assert seqs == list(range(1, total + 1))  # every event once, in order
        assert _said(first + second + third) == "Nice to meet you.Your name is Ada."
        # what the streams gave is what the log holds
        # (each event in a numbered row of the run's events table, nowhere else: most in a
        # batch row with the others of its commit; a message_sent row's payload is its
        # message row's, put back when read)
        run_id = app.state.manager.info(sid).run_id
        log = app.state.manager.log
        stored = log.numbered(run_id)
        assert [json.loads(d) for _, _, d in stored] == first + second + third
        assert [s for s, _, _ in stored] == seqs
        assert log.query("SELECT count(*) FROM events WHERE run_id=? AND kind='batch'",
                         (run_id,))[0][0] > 0
        assert app.state.manager.log.query(
            "SELECT count(*) FROM events WHERE run_id=? AND seq IS NULL", (run_id,)) == [(0,)]


async def test_approvals_and_questions_are_answered_over_the_api(tmp_path: Path) -> None:
    async with api(tmp_path, team=ASKER) as (c, app):
        sid = (await c.post("/v1/sessions", json={})).json()["id"]

        async def pending() -> dict[str, Any]:
            with anyio.fail_after(10):
                while True:
                    p = (await c.get(f"/v1/sessions/{sid}/approvals")).json()["pending"]
                    if p:
                        return p[0]  # type: ignore[no-any-return]
                    await anyio.sleep(0.02)

        await c.post(f"/v1/sessions/{sid}/input", json={"text": "remember this"})
        p = await pending()
        assert p["kind"] == "approval" and p["creature"] == "clerk"
        assert p["tool"] == "memory_write" and p["args"]["text"] == "The user likes tea."
        r = await c.post(f"/v1/sessions/{sid}/approvals/{p['id']}", json={"approved": True})
        assert r.status_code == 200
        await _until_idle(app, sid)
        await c.post(f"/v1/sessions/{sid}/input", json={"text": "a question for you"})
        q = await pending()
        assert q["kind"] == "question" and q["question"] == "Tea or coffee?"
        bad = await c.post(f"/v1/sessions/{sid}/approvals/{q['id']}", json={"approved": True})
        assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "answer"
        await c.post(f"/v1/sessions/{sid}/approvals/{q['id']}", json={"answer": "Tea, always."})
        await _until_idle(app, sid)
        entries = (await c.get(f"/v1/sessions/{sid}/transcript/clerk")).json()["entries"]
        results = [e["text"] for e in entries if e["kind"] == "tool_result"]
        assert any("Tea, always." in t for t in results), results
        decided = app.state.manager.log.events(app.state.manager.info(sid).run_id,
                                               ["approval_decided"])
        assert [(d["approved"], d["by"]) for d in decided] == [(True, "api")]


async def test_unanswered_approvals_are_denied_after_the_timeout(tmp_path: Path) -> None:
    async with api(tmp_path, team=ASKER, approval_timeout=0.2) as (c, app):
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        await c.post(f"/v1/sessions/{sid}/input", json={"text": "remember this"})
        await _until_idle(app, sid)
        decided = app.state.manager.log.events(app.state.manager.info(sid).run_id,
                                               ["approval_decided"])
        assert [(d["approved"], d["by"]) for d in decided] == [(False, "timeout")]
        assert "nobody answered within 0.2 s" in decided[0]["reason"]
        assert (await c.get(f"/v1/sessions/{sid}/approvals")).json() == {"pending": []}


async def test_idle_sessions_unload_and_come_back_with_their_conversation(
        tmp_path: Path) -> None:
    async with api(tmp_path, idle_unload=0.1, reap_every=0.05) as (c, app):
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        r = await c.post(f"/v1/sessions/{sid}/input", json={"text": "My name is Ada."})
        await sse_events(c, f"/v1/sessions/{sid}/events?after={r.json()['seq']}",
                         until=lambda ev: _said(ev) == "Nice to meet you.")
        mgr = app.state.manager
        with anyio.fail_after(20):
            while mgr.loads == 0 or sid in mgr.loaded:  # noqa: ASYNC110
                await anyio.sleep(0.02)
        assert (await c.get(f"/v1/sessions/{sid}")).json()["loaded"] is False
        r = await c.post(f"/v1/sessions/{sid}/input", json={"text": "What is my name?"})
        after = r.json()["seq"]
        events = await sse_events(c, f"/v1/sessions/{sid}/events?after={after}",
                                  until=lambda ev: _said(ev).endswith("Ada."))
        assert _said(events) == "Your name is Ada."
        assert mgr.loads == 2
        # the reloaded bot heard the first exchange: its conversation came back
        info = mgr.store.get(sid)
        with anyio.fail_after(10):
            while True:
                conv = newest_conversation(mgr.log.query, info.run_id, "bot")
                said = [c for role, c, *_ in conv if role == "assistant"]
                if len(said) == 2:
                    break
                await anyio.sleep(0.02)
        assert said == ["Nice to meet you.", "Your name is Ada."]


async def test_metrics_and_health(tmp_path: Path) -> None:
    async with api(tmp_path) as (c, app):
        assert (await c.get("/healthz")).json() == {"status": "ok"}
        assert (await c.get("/readyz")).json() == {"ready": True}
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        await c.post(f"/v1/sessions/{sid}/input", json={"text": "hello"})
        await _until_idle(app, sid)
        text = (await c.get("/metrics")).text
        assert 'terrarium_turns_total{creature="bot"} 1.0' in text
        assert 'terrarium_turns_total{creature="router"} 1.0' in text
        assert 'terrarium_tokens_total{kind="prompt"}' in text
        assert "terrarium_cached_ratio" in text
        assert 'terrarium_inbox_depth{creature="bot"} 0.0' in text
        assert "terrarium_time_to_first_audio_seconds_bucket" in text
        assert "terrarium_sessions_loaded 1.0" in text


async def test_openapi_lists_exactly_the_routes(tmp_path: Path) -> None:
    from starlette.routing import Mount, Route, WebSocketRoute

    async with api(tmp_path) as (c, app):
        schema = (await c.get("/openapi.json")).json()
    served: set[tuple[str, str]] = set()
    for r in app.routes:
        if isinstance(r, Mount):
            continue
        if isinstance(r, WebSocketRoute):
            served.add((r.path, "get"))
        elif isinstance(r, Route):
            served |= {(r.path, m.lower()) for m in r.methods or () if m != "HEAD"}
    documented = {(p, m) for p, ops in schema["paths"].items() for m in ops}
    assert documented == served
    for path in ("/v1/sessions", "/v1/sessions/{session_id}/input", "/v1/chat/completions",
                 "/v1/sessions/{session_id}/events/ws", "/v1/sessions/{session_id}/audio",
                 "/metrics", "/healthz", "/readyz", "/v1/models", "/openapi.json"):
        assert path in schema["paths"], path
    body = schema["paths"]["/v1/sessions/{session_id}/input"]["post"]["requestBody"]
    ref = body["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert set(schema["components"]["schemas"][ref]["properties"]) == {"text", "payload"}
