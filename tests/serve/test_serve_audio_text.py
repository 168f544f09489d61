"""The audio socket's typed input (``{"type": "text"}``: no VAD, no transcription) and how
its frames leave: on a real uvicorn, a text frame is the session's input and the reply
comes back as heard, sentence, start, PCM and end frames; the sender pump sends what is
queued without yielding between frames. Scripted model, a fake voice: no timing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import numpy as np
import pytest
from websockets.asyncio.client import connect

from terrarium.config import load_team
from terrarium.serve import ServeSettings, create_app
from terrarium.serve.audio import Frame, SocketAudioSink, pump
from terrarium.voice import AudioClip, CallableSynthesizer
from tests.serve_helpers import ROOT, serving

VOICE = ROOT / "tests" / "runtime_fixtures" / "voice"
RATE = 16000


def fake_voice(text: str) -> AudioClip:
    return AudioClip(pcm=b"\x01\x00" * (RATE // 10), sample_rate=RATE)


class NoVad:
    """Never called here (no PCM is sent), but the socket needs a VAD to accept."""

    def __call__(self, window: np.ndarray) -> float:
        raise AssertionError("a text frame went through the VAD")

    def reset(self) -> None:
        pass


def test_a_text_frame_is_input_and_its_reply_comes_back_as_audio(tmp_path: Path) -> None:
    app = create_app(load_team(VOICE), ServeSettings(runs_dir=tmp_path / "runs"),
                     synthesizer=CallableSynthesizer(fake_voice, RATE), vad_factory=NoVad)

    async def go() -> None:
        async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
            sid = (await c.post("/v1/sessions", json={})).json()["id"]
            url = base.replace("http", "ws") + f"/v1/sessions/{sid}/audio"
            async with connect(url) as ws:
                await ws.send(json.dumps({"type": "text", "text": "what is the weather?"}))
                await ws.send(json.dumps({"type": "text", "text": ""}))  # nothing: an error frame
                await ws.send(json.dumps({"type": "text", "text": 7}))  # not text: an error frame
                got: list[dict[str, Any] | bytes] = []
                with anyio.fail_after(20):
                    while not (got and isinstance(got[-1], dict)
                               and got[-1]["type"] == "end"):
                        msg = await ws.recv()
                        got.append(msg if isinstance(msg, bytes) else json.loads(msg))
            kinds = [f["type"] if isinstance(f, dict) else "pcm" for f in got]
            assert kinds[0] == "heard" and got[0]["text"] == "what is the weather?"
            assert kinds.index("sentence") < kinds.index("start") < kinds.index("pcm")
            sentence = got[kinds.index("sentence")]
            assert sentence["text"] == "It is sunny today." and sentence["first_audio_ms"] >= 0
            assert b"".join(f for f in got if isinstance(f, bytes)) == fake_voice("").pcm
            log = app.state.manager.log
            info = app.state.manager.store.get(sid)
            inputs = [e.payload["text"] for e, _ in log.messages(info.run_id)
                      if e.channel == "inbox"]
            assert inputs == ["what is the weather?"]  # the empty and the non-text: nothing

    anyio.run(go)


def test_the_socket_sink_hands_audio_over() -> None:
    """Its play returns once the audio is queued, so a reply paused for its first audio
    goes on only after that (terrarium/voice/tts.py reads ``hands_over``)."""
    assert SocketAudioSink.hands_over is True


class RecordingSocket:
    """A WebSocket whose sends complete at once (as uvicorn's do for a client keeping up)."""

    def __init__(self, order: list[str]) -> None:
        self.order = order

    async def send_bytes(self, data: bytes) -> None:
        self.order.append("pcm")

    async def send_text(self, data: str) -> None:
        self.order.append(json.loads(data)["type"])


@pytest.mark.anyio
async def test_the_pump_sends_what_is_queued_without_letting_other_tasks_in() -> None:
    """A sentence frame, a start frame and PCM queued together leave together: no other
    task (here a probe that notes each time it runs) runs between them."""
    order: list[str] = []
    send, recv = anyio.create_memory_object_stream[Frame](16)

    async def probe() -> None:
        for _ in range(50):
            order.append("other")
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(pump, recv, RecordingSocket(order))
        await anyio.lowlevel.checkpoint()  # the pump waits for frames
        for frame in ({"type": "sentence"}, {"type": "start"}, b"\x00" * 8, b"\x00" * 8,
                      {"type": "end"}):
            send.send_nowait(frame)
        tg.start_soon(probe)
        with anyio.fail_after(5):
            while "end" not in order:
                await anyio.lowlevel.checkpoint()
        send.close()
    recv.close()
    sent = [x for x in order if x != "other"]
    assert sent == ["sentence", "start", "pcm", "pcm", "end"]
    first = order.index("sentence")
    assert order[first:first + 5] == sent  # nothing ran between them
