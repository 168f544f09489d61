"""A local stand-in for an OpenAI-compatible ``/v1/audio/transcriptions`` server.

It checks the multipart form the way a real server would (a ``file`` part holding a WAV,
a ``model`` field), records every request, and answers ``{"text": ...}`` from a script;
``fail_first`` answers that many requests with 503 to exercise the client's retries.
It runs uvicorn in a thread on a free port for the length of a ``with`` block.
"""

from __future__ import annotations

import io
import socket
import threading
import wave
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import uvicorn
from starlette.applications import Starlette
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

__all__ = ["FakeTranscriptionServer", "Received", "serve"]


@dataclass
class Received:
    fields: dict[str, str]
    filename: str
    content_type: str
    frames: int  # WAV frames in the file part
    sample_rate: int
    authorization: str | None


@dataclass
class FakeTranscriptionServer:
    texts: list[str]
    model: str = "whisper-test"
    fail_first: int = 0
    status: int = 0  # answer every request with this status (0: answer normally)
    received: list[Received] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    url: str = ""

    async def endpoint(self, request: Request) -> JSONResponse:
        if self.status:
            return JSONResponse({"error": {"message": "scripted failure"}},
                                status_code=self.status)
        if self.fail_first > 0:
            self.fail_first -= 1
            return JSONResponse({"error": {"message": "warming up"}}, status_code=503)
        if not request.headers.get("content-type", "").startswith("multipart/form-data"):
            return self._refuse("not multipart/form-data")
        async with request.form() as form:  # its upload's temporary file closed after
            return await self._answer(request, form)

    async def _answer(self, request: Request, form: FormData) -> JSONResponse:
        upload = form.get("file")
        if upload is None or isinstance(upload, str):
            return self._refuse("no file part")
        if form.get("model") != self.model:
            return self._refuse(f"unknown model {form.get('model')!r}")
        data = await upload.read()
        try:
            with wave.open(io.BytesIO(data), "rb") as wav:
                frames, rate = wav.getnframes(), wav.getframerate()
        except wave.Error as exc:
            return self._refuse(f"file is not a WAV: {exc}")
        fields = {k: v for k, v in form.items() if isinstance(v, str)}
        self.received.append(Received(fields, upload.filename or "", upload.content_type or "",
                                      frames, rate, request.headers.get("authorization")))
        text = self.texts[len(self.received) - 1] if len(self.received) <= len(self.texts) \
            else ""
        return JSONResponse({"text": text})

    def _refuse(self, why: str) -> JSONResponse:
        self.refused.append(why)
        return JSONResponse({"error": {"message": why}}, status_code=400)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(texts: list[str], **options: object) -> Iterator[FakeTranscriptionServer]:
    """The fake server, listening on 127.0.0.1 until the block ends; ``.url`` is its
    ``base_url`` (ending in ``/v1``)."""
    fake = FakeTranscriptionServer(list(texts), **options)  # type: ignore[arg-type]
    app = Starlette(routes=[Route("/v1/audio/transcriptions", fake.endpoint,
                                  methods=["POST"])])
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="off"))
    ready = threading.Event()
    original = server.startup

    async def startup(sockets: object = None) -> None:
        await original(sockets)  # type: ignore[arg-type]
        ready.set()

    server.startup = startup  # type: ignore[method-assign]
    thread = threading.Thread(target=server.run, daemon=True, name="fake transcription")
    thread.start()
    if not ready.wait(30):
        raise RuntimeError("the fake transcription server did not start")
    fake.url = f"http://127.0.0.1:{port}/v1"
    try:
        yield fake
    finally:
        server.should_exit = True
        thread.join(10)
