"""``terrarium serve`` runs uvicorn without WebSocket per-message deflate: a client that
offers it (browsers and the ``websockets`` client always do) gets plain frames, so the
voice's PCM is not deflated on the server's event loop (bench/voice.py --socket: the
largest cost the served voice path had that one process has not)."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
from websockets.asyncio.client import connect

from terrarium.config import load_team
from terrarium.serve import ServeSettings, create_app
from terrarium.serve.app import UVICORN_OPTIONS
from tests.serve_helpers import CHAT, serving


def _extensions(app_options: dict[str, object], tmp_path: Path) -> str | None:
    """The Sec-WebSocket-Extensions the server answered a deflate-offering client with."""
    app = create_app(load_team(CHAT), ServeSettings(runs_dir=tmp_path / "runs"))
    got: list[str | None] = []

    async def go() -> None:
        async with serving(app, **app_options) as base, httpx.AsyncClient(base_url=base) as c:
            sid = (await c.post("/v1/sessions", json={})).json()["id"]
            url = base.replace("http", "ws") + f"/v1/sessions/{sid}/events/ws?after=0"
            with anyio.fail_after(20):
                async with connect(url) as ws:  # offers permessage-deflate by default
                    assert ws.response is not None
                    got.append(ws.response.headers.get("Sec-WebSocket-Extensions"))

    anyio.run(go)
    return got[0]


def test_the_served_websockets_are_not_deflated(tmp_path: Path) -> None:
    assert _extensions(UVICORN_OPTIONS, tmp_path / "a") is None


def test_uvicorn_alone_would_deflate_them(tmp_path: Path) -> None:
    """The check above can fail: uvicorn's default takes the client's offer."""
    assert "permessage-deflate" in (_extensions({}, tmp_path / "b") or "")
