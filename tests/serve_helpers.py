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
async def serving(app: Starlette, **options: Any) -> AsyncIterator[str]:
    """``app`` on a real uvicorn on a free loopback port (``options``: uvicorn's, e.g.
    ``terrarium serve``'s own ``UVICORN_OPTIONS``); yields its base URL."""
    port = free_port()
    config = {"log_level": "warning", "lifespan": "on", **options}
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, **config))
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


class ServerProcess:
    """``terrarium serve`` as a real process on a free port (``kill`` for a crash)."""

    def __init__(self, team: Path, runs: Path, *args: str,
                 env: dict[str, str] | None = None, port: int | None = None) -> None:
        import os
        import subprocess
        import sys

        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("TERRARIUM_TEST_")}
        full_env.update(PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", **(env or {}))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "terrarium", "serve", str(team), "--runs-dir", str(runs),
             "--port", str(self.port), *args], cwd=ROOT, env=full_env,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # "serving ... on http://..." once it listens
        if "serving" not in line:
            self.proc.kill()
            raise AssertionError(f"the server did not start: {line}{self.proc.stderr.read()}")
        self.banner = line

    def wait_ready(self, token: str | None = None, limit: float = 60.0) -> None:
        import time

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        end = time.monotonic() + limit
        while time.monotonic() < end:
            try:
                if httpx.get(self.base + "/readyz", headers=headers).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise AssertionError("the server never became ready")

    def kill(self) -> None:
        import signal

        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self._close()

    def _close(self) -> None:
        """Close the pipes to the process (it has ended): none left for the collector."""
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()

    def stop(self) -> str:
        """Stop it as Ctrl-C would; returns what it wrote to stderr."""
        import signal
        import subprocess

        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        err = self.proc.stderr.read() if self.proc.stderr else ""
        self._close()
        return err


ECHO_TEAM = """\
terrarium:
  name: echo
  input_channel: inbox
  creatures:
    - name: echo
      config: echo
      channels: {listen: [inbox]}
  channels:
    inbox: {type: queue, schema: {fields: {text: str}}}
"""


def write_echo_team(team: Path, *, history_turns: int | None = None) -> Path:
    """``team``: bench/serve.py's one-creature echo team on the scripted model ("Heard
    you."), the model replaceable by the test."""
    (team / "echo").mkdir(parents=True)
    (team / "terrarium.yaml").write_text(ECHO_TEAM)
    history = "" if history_turns is None else f"history_turns: {history_turns}\n"
    (team / "echo" / "config.yaml").write_text(
        "name: echo\ncontroller: {provider: scripted, script: script.yaml}\n"
        f"skill_mode: static\n{history}"
        "output: {default: out, named_outputs: {out: {type: stdout}}}\n")
    (team / "echo" / "script.yaml").write_text('default_reply: "Heard you."\n')
    return team
