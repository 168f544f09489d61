"""The WebSockets and the OpenAI endpoint against careless and hostile clients: a refused
handshake is an HTTP problem, frames a socket does not take are dropped or answered with
an error frame (never a dead socket), a deleted session's audio socket is closed, and the
chat endpoint refuses what it cannot honour rather than answer something else. Scripted
models, a fake voice, a real uvicorn for the sockets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import numpy as np
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from terrarium.config import load_team
from terrarium.serve import ServeSettings, create_app
from terrarium.voice import AudioClip, CallableSynthesizer
from tests.serve_helpers import CHAT, ROOT, serving

pytestmark = pytest.mark.anyio
VOICE = ROOT / "tests" / "runtime_fixtures" / "voice"
TOKEN = "correct-horse-battery-staple-42"


class NoVad:
    def __call__(self, window: np.ndarray) -> float:
        return 0.0

    def reset(self) -> None:
        pass


async def _refused(url: str) -> tuple[int, dict[str, Any]]:
    with pytest.raises(InvalidStatus) as e:
        async with connect(url):
            pass
    r = e.value.response
    assert r.headers["content-type"] == "application/problem+json"
    return r.status_code, json.loads(r.body or b"{}")


async def test_a_refused_handshake_is_a_problem(tmp_path: Path) -> None:
    """It was a bare 403 with no body whatever the reason (the close before accept)."""
    app = create_app(load_team(CHAT), ServeSettings(runs_dir=tmp_path / "runs", token=TOKEN))
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        ok = {"Authorization": f"Bearer {TOKEN}"}
        sid = (await c.post("/v1/sessions", json={}, headers=ok)).json()["id"]
        ws = base.replace("http", "ws")
        status, body = await _refused(f"{ws}/v1/sessions/{sid}/events/ws")
        assert status == 401 and "bearer token" in body["detail"]
        assert (await _refused(f"{ws}/v1/sessions/{sid}/events/ws?token=no"))[0] == 403
        status, body = await _refused(f"{ws}/v1/sessions/{'f' * 32}/events/ws?token={TOKEN}")
        assert status == 404 and "no session" in body["detail"]
        status, _ = await _refused(f"{ws}/v1/sessions/{sid}/events/ws?token={TOKEN}&after=x")
        assert status == 422
        status, _ = await _refused(f"{ws}/v1/sessions/abc/audio?token={TOKEN}")
        assert status == 404
        for path in ("/v1/nowhere", "/v1/sessions"):  # no WebSocket there
            status, body = await _refused(f"{ws}{path}?token={TOKEN}")
            assert status == 404 and "no WebSocket" in body["detail"]


async def test_the_events_socket_drops_what_a_client_sends(tmp_path: Path) -> None:
    """A binary frame killed the socket (KeyError in its reader: no close frame)."""
    app = create_app(load_team(CHAT), ServeSettings(runs_dir=tmp_path / "runs"))
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        url = base.replace("http", "ws") + f"/v1/sessions/{sid}/events/ws?after=0"
        async with connect(url) as ws:
            await ws.send(b"\x00\x01binary")
            await ws.send("not json")
            await ws.send(json.dumps({"type": "zzz"}))
            assert (await c.post(f"/v1/sessions/{sid}/input", json={"text": "hi"})
                    ).status_code == 202
            with anyio.fail_after(10):
                assert json.loads(await ws.recv())["seq"] == 1


async def test_the_audio_socket_says_what_is_wrong_and_ends_with_its_session(
        tmp_path: Path) -> None:
    """Frames it does not take were dropped without a word; a deleted session's socket
    stayed open, waiting for a voice that was gone."""
    app = create_app(load_team(VOICE), ServeSettings(runs_dir=tmp_path / "runs"),
                     synthesizer=CallableSynthesizer(
                         lambda t: AudioClip(pcm=b"\x01\x00" * 160, sample_rate=16000), 16000),
                     vad_factory=NoVad)
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        url = base.replace("http", "ws") + f"/v1/sessions/{sid}/audio"
        async with connect(url) as ws:
            for frame in ("not json", "[1]", json.dumps({"type": "zzz"}),
                          json.dumps({"type": "text", "text": 7}),
                          json.dumps({"type": "text", "text": "  "})):
                await ws.send(frame)
                with anyio.fail_after(10):
                    got = json.loads(await ws.recv())
                assert got["type"] == "error" and got["message"], frame
            await ws.send(b"\x01\x02\x03")  # odd length: the odd byte is dropped, no error
            await ws.send(json.dumps({"type": "end"}))
            assert (await c.delete(f"/v1/sessions/{sid}")).status_code == 204
            with anyio.fail_after(10), pytest.raises(ConnectionClosed) as e:
                while True:
                    await ws.recv()
            assert e.value.rcvd is not None and e.value.rcvd.code == 1001


async def test_a_refused_utterance_is_its_sockets_error_not_heard_by_all(
        tmp_path: Path) -> None:
    """A text past the channel's max_bytes was told as heard to every socket of the
    session (echoed whole), then its refusal to every socket too."""
    app = create_app(load_team(VOICE), ServeSettings(runs_dir=tmp_path / "runs"),
                     synthesizer=CallableSynthesizer(
                         lambda t: AudioClip(pcm=b"\x01\x00" * 160, sample_rate=16000), 16000),
                     vad_factory=NoVad)
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        url = base.replace("http", "ws") + f"/v1/sessions/{sid}/audio"
        async with connect(url) as a, connect(url) as b:
            await a.send(json.dumps({"type": "text", "text": "x" * 70_000}))
            with anyio.fail_after(10):
                got = json.loads(await a.recv())
            assert got["type"] == "error" and "max_bytes" in got["message"]
            await a.send(json.dumps({"type": "text", "text": "what is the weather?"}))
            with anyio.fail_after(10):
                first_b = json.loads(await b.recv())
                first_a = json.loads(await a.recv())
            assert first_b == first_a == {"type": "heard", "text": "what is the weather?"}


async def _chat(c: httpx.AsyncClient, status: int, headers: dict[str, str] | None = None,
                **body: Any) -> dict[str, Any]:
    body.setdefault("model", "chat")
    body.setdefault("messages", [{"role": "user", "content": "My name is Ada."}])
    r = await c.post("/v1/chat/completions", json=body, headers=headers or {})
    assert r.status_code == status, (body, r.text)
    if status >= 400:
        assert r.headers["content-type"] == "application/problem+json"
    return r.json() if r.headers["content-type"].endswith("json") else {"text": r.text}


async def test_the_chat_endpoint_refuses_what_it_cannot_honour(tmp_path: Path) -> None:
    app = create_app(load_team(CHAT), ServeSettings(runs_dir=tmp_path / "runs"))
    async with app.router.lifespan_context(app), httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://t", timeout=30) as c:
        user = {"role": "user", "content": "My name is Ada."}
        # n > 1 was answered with one choice
        await _chat(c, 422, n=2)
        # the newest message not the user's: the user's older one was sent again
        body = await _chat(c, 422, messages=[user, {"role": "assistant", "content": "Hi"}])
        assert body["errors"][0]["field"] == "messages.1.role"
        # no text (an image only, empty, null): an empty input was sent to the team
        image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
        body = await _chat(c, 422, messages=[{"role": "user", "content": [image]}])
        assert "text" in body["detail"]
        for empty in ("", "   ", None, [{"type": "text", "text": ""}]):
            await _chat(c, 422, messages=[{"role": "user", "content": empty}])
        await _chat(c, 422, stream="yes")  # JSON true or false, not a word
        # a session name from `user` is checked as POST /v1/sessions checks one
        await _chat(c, 422, user="u" * 201)
        await _chat(c, 422, user="a\nb")
        await _chat(c, 422, headers={"X-Terrarium-Session": "tab\there"})
        assert app.state.manager.store.list("chat") == []
        # what works: a system message first, text parts, usage at the end of a stream
        ok = await _chat(c, 200, user="ada", n=None, stream=None, messages=[
            {"role": "system", "content": "be kind"},
            {"role": "user", "content": [{"type": "text", "text": "My name is Ada."}]}])
        assert ok["choices"][0]["message"]["content"]
        streamed = await _chat(c, 200, user="ada", stream=True,
                               stream_options={"include_usage": True})
        chunks = [json.loads(line[6:]) for line in streamed["text"].splitlines()
                  if line.startswith("data: {")]
        assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0
        assert all(ch["choices"] for ch in chunks[:-1])
        # 32 hex digits that are no session's id: a name (a client's hash of its user)
        md5 = "5f4dcc3b5aa765d61d8327deb882cf99"
        await _chat(c, 200, user=md5)
        assert app.state.manager.store.by_name("chat", md5) is not None
        assert (await c.get("/v1/models/chat")).json()["id"] == "chat"
        assert (await c.get("/v1/models/gpt-4")).status_code == 404


async def test_session_names_are_checked(tmp_path: Path) -> None:
    app = create_app(load_team(CHAT), ServeSettings(runs_dir=tmp_path / "runs"))
    async with app.router.lifespan_context(app), httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        for bad in ("a\u0000b", "line\nbreak", " ", "n" * 201, 5):
            r = await c.post("/v1/sessions", json={"name": bad})
            assert r.status_code == 422, bad
            assert r.json()["errors"][0]["field"] == "name"
        assert (await c.post("/v1/sessions", json={"name": "Ada Lovelace 🙂"})).status_code == 201
