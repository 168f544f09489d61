"""Safe by default: loopback unless a token is set (the command refuses otherwise), a
bearer token compared in constant time on every route but /healthz (401 without, 403
wrong; ``?token=`` for WebSocket/EventSource), CORS closed unless an origin is allowed,
problem details and never a traceback, and model API keys never in an answer."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from terrarium.config import load_team
from terrarium.serve import ServeSettings, create_app
from terrarium.serve.security import is_loopback
from tests.serve_helpers import CHAT, ROOT, serving

TOKEN = "correct-horse-battery-staple-42"


def _client(tmp_path: Path, **settings: object) -> httpx.AsyncClient:
    app = create_app(load_team(CHAT), ServeSettings(runs_dir=tmp_path / "runs", **settings))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")


def test_a_token_is_needed_everywhere_but_healthz(tmp_path: Path) -> None:
    async def go() -> None:
        app = create_app(load_team(CHAT), ServeSettings(runs_dir=tmp_path / "runs",
                                                        token=TOKEN))
        async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
            assert (await c.get("/healthz")).status_code == 200
            r = await c.get("/v1/sessions")
            assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
            assert r.headers["content-type"] == "application/problem+json"
            r = await c.get("/v1/sessions", headers={"Authorization": "Bearer nope"})
            assert r.status_code == 403 and r.json()["title"] == "Forbidden"
            r = await c.get("/v1/sessions", headers={"Authorization": "Basic " + TOKEN})
            assert r.status_code == 401  # not a bearer token: none was given
            ok = {"Authorization": f"Bearer {TOKEN}"}
            assert (await c.get("/v1/sessions", headers=ok)).status_code == 200
            assert (await c.get("/metrics", headers=ok)).status_code == 200
            assert (await c.get("/metrics")).status_code == 401
            sid = (await c.post("/v1/sessions", json={}, headers=ok)).json()["id"]
            # ?token= only where a browser cannot send headers (the event stream, sockets)
            assert (await c.get(f"/v1/sessions/{sid}?token={TOKEN}")).status_code == 401
            ws = base.replace("http", "ws") + f"/v1/sessions/{sid}/events/ws"
            with pytest.raises(InvalidStatus):
                async with connect(ws):
                    pass
            with pytest.raises(InvalidStatus):
                async with connect(ws + "?token=wrong"):
                    pass
            async with connect(ws + f"?token={TOKEN}&after=0") as sock:
                r = await c.post(f"/v1/sessions/{sid}/input", json={"text": "hi"}, headers=ok)
                assert r.status_code == 202
                with anyio.fail_after(10):
                    assert json.loads(await sock.recv())["seq"] == 1

    anyio.run(go)


def test_cors_is_closed_unless_an_origin_is_allowed(tmp_path: Path) -> None:
    async def go() -> None:
        pre = {"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
        async with _client(tmp_path / "a") as c:
            r = await c.options("/v1/sessions", headers=pre)
            assert "access-control-allow-origin" not in r.headers
            r = await c.get("/v1/sessions", headers={"Origin": "https://evil.example"})
            assert "access-control-allow-origin" not in r.headers
        async with _client(tmp_path / "b", allow_origins=["https://ok.example"]) as c:
            r = await c.options("/v1/sessions", headers={
                **pre, "Origin": "https://ok.example"})
            assert r.headers["access-control-allow-origin"] == "https://ok.example"
            r = await c.get("/v1/sessions", headers={"Origin": "https://evil.example"})
            assert "access-control-allow-origin" not in r.headers

    anyio.run(go)


def test_errors_are_problems_never_tracebacks(tmp_path: Path) -> None:
    async def go() -> None:
        async with _client(tmp_path) as c:
            for method, path, body in (("GET", "/nowhere", None),
                                       ("DELETE", "/v1/sessions", None),
                                       ("POST", "/v1/sessions", b"[1,2"),
                                       ("POST", "/v1/sessions", b'{"name": 5}'),
                                       ("POST", "/v1/chat/completions", b"{}")):
                r = await c.request(method, path, content=body,
                                    headers={"Content-Type": "application/json"})
                assert r.status_code in (400, 404, 405, 422), (path, r.status_code)
                assert r.headers["content-type"] == "application/problem+json"
                assert set(r.json()) >= {"type", "title", "status", "detail"}
                assert "Traceback" not in r.text and "File \"" not in r.text

    anyio.run(go)


def test_no_answer_carries_a_model_api_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    secret = "sk-test-" + "9" * 40
    monkeypatch.setenv("TERRARIUM_SERVE_TEST_KEY", secret)
    team = tmp_path / "team"
    shutil.copytree(CHAT, team)
    cfg = team / "bot" / "config.yaml"
    cfg.write_text(cfg.read_text().replace(
        "controller: {provider: scripted, script: script.yaml}",
        "controller: {provider: openai, base_url: 'http://127.0.0.1:9/v1', model: m, "
        "api_key_env: TERRARIUM_SERVE_TEST_KEY}"))

    async def go() -> None:
        app = create_app(load_team(team), ServeSettings(runs_dir=tmp_path / "runs"))
        async with app.router.lifespan_context(app), httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            sid = (await c.post("/v1/sessions", json={})).json()["id"]
            for path in ("/v1/team", "/openapi.json", "/metrics", "/v1/models",
                         f"/v1/sessions/{sid}", f"/v1/sessions/{sid}/prompt/bot",
                         f"/v1/sessions/{sid}/prompt/router"):
                r = await c.get(path)
                assert r.status_code == 200, path
                assert secret not in r.text, path

    anyio.run(go)


def test_serve_refuses_a_public_address_without_a_token(tmp_path: Path) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    res = subprocess.run([sys.executable, "-m", "terrarium", "serve", str(CHAT), "--host",
                          "0.0.0.0", "--runs-dir", str(tmp_path)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode != 0
    assert "refusing to serve on 0.0.0.0 without a token" in res.stderr
    assert "Traceback" not in res.stderr
    res = subprocess.run([sys.executable, "-m", "terrarium", "serve", str(CHAT), "--host",
                          "0.0.0.0", "--token-env", "NOT_SET_ANYWHERE", "--runs-dir",
                          str(tmp_path)], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=60, check=False)
    assert res.returncode != 0 and "NOT_SET_ANYWHERE" in res.stderr
    assert "not set" in res.stderr
