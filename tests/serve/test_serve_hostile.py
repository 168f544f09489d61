"""The API against careless and hostile clients: every refusal is a problem document with a
sentence (wrong methods and paths, bodies that are not JSON or not said to be, a client gone
mid-body, a strict JSON boolean to approve, ``after`` that is not a plain number), and the
token and CORS checks refuse what they should and let a browser's preflight through.
Scripted models; the ASGI app in process, or a real uvicorn where streaming matters."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from terrarium.config import load_team
from terrarium.serve import ServeSettings, create_app
from terrarium.serve.live import Pending
from tests.serve_helpers import CHAT, serving

pytestmark = pytest.mark.anyio
TOKEN = "correct-horse-battery-staple-42"
JSON = {"Content-Type": "application/json"}


@asynccontextmanager
async def asgi(tmp_path: Path, **settings: Any) -> AsyncIterator[tuple[httpx.AsyncClient, Any]]:
    app = create_app(load_team(CHAT), ServeSettings(runs_dir=tmp_path / "runs", **settings))
    async with app.router.lifespan_context(app), httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        yield c, app


def _problem(r: httpx.Response, status: int) -> dict[str, Any]:
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"] == "application/problem+json", r.text
    body = r.json()
    assert set(body) >= {"type", "title", "status", "detail"} and body["status"] == status
    return body


async def test_wrong_methods_and_paths_are_problems_with_a_sentence(tmp_path: Path) -> None:
    async with asgi(tmp_path) as (c, _):
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        # a route that takes POST only, asked with GET: 405 (it was the page's 404)
        r = await c.get(f"/v1/sessions/{sid}/input")
        assert "POST" in _problem(r, 405)["detail"] and r.headers["allow"] == "POST"
        r = await c.get("/v1/chat/completions")
        assert r.headers["allow"] == "POST" and _problem(r, 405)
        # the methods of every route at the path, not only the first one's
        r = await c.put("/v1/sessions", json={})
        _problem(r, 405)
        assert r.headers["allow"] == "GET, HEAD, POST"
        r = await c.patch(f"/v1/sessions/{sid}")
        assert r.headers["allow"] == "DELETE, GET, HEAD" and _problem(r, 405)
        # a path nothing serves: 404 whatever the method (it was the page's 405)
        for method in ("GET", "PUT", "POST", "DELETE"):
            body = _problem(await c.request(method, "/v1/nowhere"), 404)
            assert "/openapi.json" in body["detail"]
        assert _problem(await c.post(f"/v1/sessions/{sid}/approvals"), 405)
        # a WebSocket route asked over plain HTTP: 426, saying so
        r = await c.get(f"/v1/sessions/{sid}/events/ws")
        assert "WebSocket" in _problem(r, 426)["detail"] and r.headers["upgrade"] == "websocket"
        # the page still loads
        assert (await c.get("/")).headers["content-type"].startswith("text/html")
        assert (await c.get("/js/api.js")).status_code == 200
        assert _problem(await c.get("/js/nothing.js"), 404)


async def test_a_head_of_the_event_stream_ends_at_once(tmp_path: Path) -> None:
    """It streamed forever into a response with no body: the kept-alive connection's next
    request waited behind it."""
    app = create_app(load_team(CHAT), ServeSettings(runs_dir=tmp_path / "runs"))
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        with anyio.fail_after(10):
            r = await c.head(f"/v1/sessions/{sid}/events")
            assert r.status_code == 200
            assert r.headers["content-type"].startswith("text/event-stream")
            assert (await c.get("/healthz")).status_code == 200  # the same connection


async def test_a_body_must_be_sent_as_json(tmp_path: Path) -> None:
    """A browser posts a form or text/plain to any site without a CORS preflight: such a
    body was read as JSON, so any page could drive a local server."""
    async with asgi(tmp_path) as (c, app):
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        chat = {"model": "chat", "messages": [{"role": "user", "content": "hi"}]}
        for kind in ("text/plain", "application/x-www-form-urlencoded", None):
            headers = {"Content-Type": kind} if kind else {}
            for path, body in (("/v1/sessions", {"name": "csrf"}),
                               (f"/v1/sessions/{sid}/input", {"text": "hi"}),
                               ("/v1/chat/completions", chat)):
                r = await c.post(path, content=json.dumps(body), headers=headers)
                assert "application/json" in _problem(r, 415)["detail"], (path, kind)
        assert not app.state.manager.store.by_name("chat", "csrf")
        # JSON by another spelling is JSON; an empty body needs no type
        r = await c.post("/v1/sessions", content=b'{"name": "ok"}',
                         headers={"Content-Type": "Application/JSON; charset=utf-8"})
        assert r.status_code == 201
        assert (await c.post("/v1/sessions")).status_code == 201
        # JSON that cannot be read says why and where
        for raw, why in ((b"[" * 300 + b"]" * 300, "recursion limit exceeded"),
                         (b'{"name": "a",}', "trailing comma at line 1 column 14")):
            r = await c.post("/v1/sessions", content=raw, headers=JSON)
            assert why in _problem(r, 400)["detail"]


async def test_a_client_gone_mid_body_is_no_server_error(tmp_path: Path) -> None:
    app = create_app(load_team(CHAT), ServeSettings(runs_dir=tmp_path / "runs"))
    sent: list[dict[str, Any]] = []
    parts = [{"type": "http.request", "body": b'{"na', "more_body": True},
             {"type": "http.disconnect"}]

    async def receive() -> dict[str, Any]:
        return parts.pop(0) if parts else {"type": "http.disconnect"}

    async def send(msg: dict[str, Any]) -> None:
        sent.append(msg)

    async with app.router.lifespan_context(app):
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                 "method": "POST", "scheme": "http", "path": "/v1/sessions", "raw_path":
                 b"/v1/sessions", "query_string": b"", "root_path": "",
                 "headers": [(b"content-type", b"application/json"), (b"host", b"t")],
                 "client": ("127.0.0.1", 1), "server": ("t", 80)}
        await app(scope, receive, send)  # (raised ClientDisconnect after a 500)
    assert sent[0]["status"] == 400


async def test_an_approval_takes_a_json_boolean_and_one_answer(tmp_path: Path) -> None:
    """{"approved": "yes"} approved the call (pydantic's lax bool); a second answer in the
    moment before the creature woke changed the decision and was told it was taken."""
    async with asgi(tmp_path) as (c, app):
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        assert (await c.post(f"/v1/sessions/{sid}/input", json={"text": "hi"})).status_code == 202
        live = app.state.manager.loaded[sid]
        p = live.pending["a1"] = Pending(id="a1", kind="approval", creature="bot",
                                         tool="shell", args={"command": "rm -rf /"})
        url = f"/v1/sessions/{sid}/approvals/a1"
        for bad in ({"approved": "yes"}, {"approved": 1}, {"approved": "true"}, {}, []):
            _problem(await c.post(url, json=bad), 422)
        assert not p.answered.is_set() and p.approved is False
        r = await c.post(url, json={"approved": False, "answer": "not this"})
        assert r.status_code == 200 and p.answered.is_set()
        body = _problem(await c.post(url, json={"approved": True}), 409)
        assert "already" in body["detail"] and p.approved is False
        _problem(await c.post(f"/v1/sessions/{sid}/approvals/nope", json={"approved": True}),
                 404)


async def test_after_is_a_plain_whole_number(tmp_path: Path) -> None:
    app = create_app(load_team(CHAT), ServeSettings(runs_dir=tmp_path / "runs"))
    async with serving(app) as base, httpx.AsyncClient(base_url=base, timeout=10) as c:
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        url = f"/v1/sessions/{sid}/events"
        for bad in ("-1", "1_000", "\u0663", "+5", "1.5", "9" * 30):
            r = await c.get(url, params={"after": bad})
            assert "after" in _problem(r, 422)["detail"], bad
            r = await c.get(url, headers={"Last-Event-ID": bad.encode().decode("latin-1")}
                            if bad.isascii() else {"Last-Event-ID": "x"})
            _problem(r, 422)
        with anyio.fail_after(10):
            async with c.stream("GET", url, params={"after": "0"}) as r:
                assert r.status_code == 200


async def test_the_token_is_taken_in_one_place_and_one_form(tmp_path: Path) -> None:
    ok = {"Authorization": f"Bearer {TOKEN}"}
    async with asgi(tmp_path, token=TOKEN) as (c, _):
        sid = (await c.post("/v1/sessions", json={}, headers=ok)).json()["id"]
        for auth in ("Basic " + TOKEN, "Bearer", TOKEN):
            r = await c.get("/v1/sessions", headers={"Authorization": auth})
            assert _problem(r, 401) and r.headers["www-authenticate"] == "Bearer", auth
        _problem(await c.get("/v1/sessions", headers={"Authorization": "Bearer wrong"}), 403)
        assert (await c.get("/v1/sessions", headers={"authorization": f"bearer {TOKEN}"})
                ).status_code == 200
        # two Authorization headers: refused, not the first one believed
        two = httpx.Headers([("Authorization", f"Bearer {TOKEN}"),
                             ("Authorization", "Bearer wrong")])
        _problem(await c.get("/v1/sessions", headers=two), 400)
        # ?token= is for the event stream (EventSource cannot send headers); not elsewhere
        q = {"token": TOKEN}
        body = _problem(await c.post(f"/v1/sessions/{sid}/input", params=q, json={"text": "x"},
                                     headers=JSON), 401)
        assert "Authorization" in body["detail"]
        _problem(await c.delete(f"/v1/sessions/{sid}", params=q), 401)
        _problem(await c.get("/v1/sessions", params=q), 401)
        assert (await c.get(f"/v1/sessions/{sid}", headers=ok)).status_code == 200


async def test_cors_preflights_pass_the_token_check_and_refusals_are_problems(
        tmp_path: Path) -> None:
    """With a token and an allowed origin (docs/serve.md's own example), the browser's
    preflight (which carries no token) was answered 401: no page could call the API."""
    pre = {"Origin": "https://ok.example", "Access-Control-Request-Method": "POST",
           "Access-Control-Request-Headers": "authorization,content-type"}
    async with asgi(tmp_path, token=TOKEN, allow_origins=["https://ok.example"]) as (c, _):
        r = await c.options("/v1/sessions", headers=pre)
        assert r.status_code == 200
        assert r.headers["access-control-allow-origin"] == "https://ok.example"
        # a refusal of the real request carries CORS headers, so the page can read it
        r = await c.get("/v1/sessions", headers={"Origin": "https://ok.example"})
        assert _problem(r, 401)
        assert r.headers["access-control-allow-origin"] == "https://ok.example"
        r = await c.get("/v1/sessions", headers={"Origin": "https://ok.example",
                                                 "Authorization": f"Bearer {TOKEN}"})
        assert r.status_code == 200
        # another origin's preflight: a problem, not plain text
        r = await c.options("/v1/sessions", headers={**pre, "Origin": "https://evil.example"})
        assert "evil.example" in _problem(r, 403)["detail"]
        assert "access-control-allow-origin" not in r.headers


async def test_a_tokenless_server_answers_only_local_names(tmp_path: Path) -> None:
    """DNS rebinding: a page of another site points its own name at 127.0.0.1 and is then
    the server's origin to its browser (CORS does not apply); it was served."""
    async with asgi(tmp_path / "a") as (c, _):
        for host in ("rebind.attacker.example", "rebind.attacker.example:8765",
                     "127.0.0.1.nip.io:8765"):
            body = _problem(await c.get("/v1/sessions", headers={"Host": host}), 403)
            assert host in body["detail"]
            _problem(await c.post("/v1/sessions", json={}, headers={"Host": host}), 403)
        for host in ("127.0.0.1:8765", "localhost:8765", "[::1]:8765", "localhost",
                     "app.localhost:8765", "10.0.0.5:8765"):
            assert (await c.get("/v1/sessions", headers={"Host": host})).status_code == 200
    async with asgi(tmp_path / "b", token=TOKEN) as (c, _):  # a token keeps such pages out
        r = await c.get("/v1/sessions", headers={"Host": "api.example.com",
                                                 "Authorization": f"Bearer {TOKEN}"})
        assert r.status_code == 200


async def test_a_websocket_from_another_sites_page_is_refused(tmp_path: Path) -> None:
    """Browsers open WebSockets to any site without a CORS check: a page of another site
    could follow a session's events (or talk to it) knowing its id."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    app = create_app(load_team(CHAT), ServeSettings(
        runs_dir=tmp_path / "runs", allow_origins=["https://ok.example"]))
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        url = base.replace("http", "ws") + f"/v1/sessions/{sid}/events/ws"
        with pytest.raises(InvalidStatus) as e:
            async with connect(url, origin="https://evil.example"):  # type: ignore[arg-type]
                pass
        assert e.value.response.status_code == 403
        for origin in (base, "https://ok.example", None):  # its own page, allowed, no page
            async with connect(url, origin=origin):  # type: ignore[arg-type]
                pass


async def test_an_input_while_a_session_is_deleted_does_not_bring_it_back(
        tmp_path: Path) -> None:
    """An input that came while the deleted session's runtime stopped loaded it again: 202
    after the 204, and a runtime running for a session no longer stored."""
    async with asgi(tmp_path) as (c, app):
        m = app.state.manager
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        assert (await c.post(f"/v1/sessions/{sid}/input", json={"text": "hi"})).status_code == 202
        flush, held = m.flush, anyio.Event()

        async def held_flush() -> None:  # the delete's last await, held open
            await held.wait()
            await flush()

        m.flush = held_flush
        async with anyio.create_task_group() as tg:
            tg.start_soon(c.delete, f"/v1/sessions/{sid}")
            try:
                with anyio.fail_after(20):
                    while sid in m.loaded:  # noqa: ASYNC110 (the runtime stopping, no event)
                        await anyio.sleep(0.01)
                late = await c.post(f"/v1/sessions/{sid}/input", json={"text": "again"})
                again = None
                with anyio.move_on_after(10):  # (before the fix: waits on the held flush)
                    again = await c.delete(f"/v1/sessions/{sid}")  # one delete at a time
            finally:
                held.set()
        m.flush = flush
        zombie = m.loaded.pop(sid, None)
        if zombie is not None:  # (before the fix: stopped here, so the test ends)
            zombie.stop()
        _problem(late, 404)
        assert again is not None
        _problem(again, 404)
        assert zombie is None and m.store.get(sid) is None
        _problem(await c.get(f"/v1/sessions/{sid}"), 404)


async def test_a_name_taken_by_another_process_meanwhile_is_409(tmp_path: Path) -> None:
    """``terrarium run --session NAME`` on the same log may name a session between the
    server's look for the name and its insert: the unique index refused it, a 500."""
    async with asgi(tmp_path) as (c, app):
        store = app.state.manager.store
        assert (await c.post("/v1/sessions", json={"name": "ada"})).status_code == 201
        store.by_name = lambda *a: None  # the look saw nothing: the other process was first
        body = _problem(await c.post("/v1/sessions", json={"name": "ada"}), 409)
        assert "already a session named 'ada'" in body["detail"]
