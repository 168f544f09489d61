"""Helpers for the serve tests: a real uvicorn server in the test's own event loop (so SSE
and WebSocket stream as they would for any client), an SSE reader, and the fixture teams."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import uvicorn
from starlette.applications import Starlette

ROOT = Path(__file__).resolve().parent.parent
CHAT = ROOT / "tests" / "serve_fixtures" / "chat"
ASKER = ROOT / "tests" / "serve_fixtures" / "asker"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@asynccontextmanager
async def serving(app: Starlette) -> AsyncIterator[str]:
    """``app`` on a real uvicorn on a free loopback port; yields its base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="on"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(server._serve)  # without taking over the test process's signals
        with anyio.fail_after(30):
            while not server.started:  # noqa: ASYNC110 (uvicorn/runtime flags, no event)
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True


async def sse_events(client: httpx.AsyncClient, url: str, *, until: Any,
                     headers: dict[str, str] | None = None,
                     limit: float = 20.0) -> list[dict[str, Any]]:
    """Read the SSE stream at ``url`` until ``until(events)`` is true; each event's JSON,
    checked against its ``id:`` and ``event:`` lines."""
    out: list[dict[str, Any]] = []
    with anyio.fail_after(limit):
        async with client.stream("GET", url, headers=headers or {}) as resp:
            assert resp.status_code == 200, await resp.aread()
            assert resp.headers["content-type"].startswith("text/event-stream")
            fields: dict[str, str] = {}
            async for line in resp.aiter_lines():
                if line.startswith(":"):
                    continue
                if line:
                    key, _, value = line.partition(": ")
                    fields[key] = value
                    continue
                if "data" in fields:
                    data = json.loads(fields["data"])
                    assert int(fields["id"]) == data["seq"]
                    assert fields["event"] == data["kind"]
                    out.append(data)
                    if until(out):
                        return out
                fields = {}
    return out
