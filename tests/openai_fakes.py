"""A fake OpenAI-compatible server on a real 127.0.0.1 socket: each connection gets the next
scripted reply (status, headers, SSE chunks) and what the client sent is kept; plus the
request and chunk builders the client tests and the voice tests share."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import SocketStream, TaskGroup

from terrarium.llm.types import ChatMessage, ChatRequest


@dataclass
class Reply:
    """One scripted HTTP answer."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    delay_before: float = 0.0


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def sse(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def text_chunk(text: str, finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]}


def ok_stream(*parts: str, usage: dict[str, Any] | None = None, timings: Any = None) -> Reply:
    chunks = [sse(text_chunk(p)) for p in parts]
    chunks.append(sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    tail: dict[str, Any] = {"choices": []}
    if usage:
        tail["usage"] = usage
    if timings:
        tail["timings"] = timings
    chunks.append(sse(tail))
    chunks.append(b"data: [DONE]\n\n")
    return Reply(headers={"content-type": "text/event-stream"}, chunks=chunks)


def error_reply(status: int, message: str, retry_after: str | None = None) -> Reply:
    headers = {"content-type": "application/json"}
    if retry_after is not None:
        headers["retry-after"] = retry_after
    body = json.dumps({"error": {"message": message}}).encode()
    return Reply(status=status, headers=headers, chunks=[body])


class FakeOpenAI:
    """A tiny HTTP/1.1 server; each connection gets the next scripted reply and is closed."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.seen: list[Seen] = []
        self.port = 0
        self._tg: TaskGroup | None = None
        self._listener: anyio.abc.Listener[SocketStream] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def __aenter__(self) -> FakeOpenAI:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        self._listener = listener
        self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(listener.serve, self._handle)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        try:
            await self._tg.__aexit__(None, None, None)
        finally:  # serve() never closes its listener: its socket, closed here
            if self._listener is not None:
                await self._listener.aclose()

    async def _handle(self, conn: SocketStream) -> None:
        async with conn:
            try:
                await self._serve_one(conn)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                pass

    async def _serve_one(self, conn: SocketStream) -> None:
        buf = b""
        while b"\r\n\r\n" not in buf:
            data = await conn.receive()
            buf += data
            assert len(buf) < 1_000_000
        head, _, rest = buf.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        path = lines[0].split(" ")[1]
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            rest += await conn.receive()
        self.seen.append(Seen(path, headers, json.loads(rest) if rest else {}))
        reply = self.replies.pop(0) if self.replies else error_reply(500, "no scripted reply")
        if reply.delay_before:
            await anyio.sleep(reply.delay_before)
        head_lines = [f"HTTP/1.1 {reply.status} X", "connection: close"]
        head_lines += [f"{k}: {v}" for k, v in reply.headers.items()]
        await conn.send(("\r\n".join(head_lines) + "\r\n\r\n").encode())
        for chunk in reply.chunks:
            await conn.send(chunk)
            await anyio.lowlevel.checkpoint()


class SleepLog:
    """Records waits instead of sleeping, so retry tests are fast and exact."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def request(text: str = "hi", **kw: Any) -> ChatRequest:
    return ChatRequest(messages=[ChatMessage(role="user", content=text)], **kw)
