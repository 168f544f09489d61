"""Voice over the socket (``/v1/sessions/{id}/audio``) on a real uvicorn: PCM16 in → VAD
→ the fake transcription server → the session's input; the speaker's voice comes back as
a start frame, sentence frames and PCM16 frames; speaking over a reply barges in. The VAD
and the voice are stand-ins (an energy threshold; a synthesizer of silence), so the test
is fast and deterministic; the real silero-vad and Piper are tested elsewhere."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import httpx
import numpy as np
from websockets.asyncio.client import ClientConnection, connect

from terrarium.config import load_team
from terrarium.serve import ServeSettings, create_app
from terrarium.voice import AudioClip, CallableSynthesizer
from terrarium.voice.vad import WINDOW
from tests.fake_transcription_server import serve as transcription
from tests.serve_helpers import ROOT, serving

VOICE = ROOT / "tests" / "runtime_fixtures" / "voice"
RATE = 16000  # the client's PCM, and the fake voice's


class EnergyVad:
    """Speech where a window is loud: a stand-in for silero-vad with known answers."""

    def __call__(self, window: np.ndarray) -> float:
        if window.size != WINDOW:
            raise ValueError("whole windows only")
        return 1.0 if float(np.sqrt(np.mean(window ** 2))) > 0.05 else 0.0

    def reset(self) -> None:
        pass


def fake_voice(text: str) -> AudioClip:
    return AudioClip(pcm=b"\x01\x00" * (RATE // 10), sample_rate=RATE)


def pcm(seconds: float, loud: bool) -> bytes:
    n = int(seconds * RATE)
    wave = 0.5 * np.sin(np.arange(n) * 0.3) if loud else np.zeros(n)
    return (wave * 32767).astype("<i2").tobytes()


def utterance() -> list[bytes]:
    """0.2 s quiet, 0.5 s of "speech", 0.7 s quiet, in 4 KiB frames."""
    audio = pcm(0.2, False) + pcm(0.5, True) + pcm(0.7, False)
    return [audio[i:i + 4096] for i in range(0, len(audio), 4096)]


async def frames_until(ws: ClientConnection, stop: Any, limit: float = 20
                       ) -> list[dict[str, Any] | bytes]:
    got: list[dict[str, Any] | bytes] = []
    with anyio.fail_after(limit):
        while not got or not stop(got[-1]):
            msg = await ws.recv()
            got.append(msg if isinstance(msg, bytes) else json.loads(msg))
    return got


def test_speech_in_voice_out_and_barge_in(tmp_path: Path) -> None:
    team_dir = tmp_path / "voice"
    shutil.copytree(VOICE, team_dir)
    script = team_dir / "speaker" / "script.yaml"
    script.write_text(script.read_text().replace("    chunk_delay: 0.05",
                                                 "    chunk_delay: 0.05\n    repeat: true")
                      .replace('reply: "It is sunny today."',
                               'reply: "It is sunny today."\n    repeat: true'))
    with transcription(["what is the weather?", "tell me a story",
                        "what is the weather?"]) as heard:
        with (team_dir / "terrarium.yaml").open("a") as f:
            f.write(f"  transcription: {{base_url: '{heard.url}', model: whisper-test}}\n")
        app = create_app(load_team(team_dir), ServeSettings(runs_dir=tmp_path / "runs"),
                         synthesizer=CallableSynthesizer(fake_voice, RATE),
                         vad_factory=EnergyVad)

        async def go() -> None:
            async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
                sid = (await c.post("/v1/sessions", json={})).json()["id"]
                url = base.replace("http", "ws") + f"/v1/sessions/{sid}/audio"
                async with connect(url) as ws:
                    for frame in utterance():
                        await ws.send(frame)
                    got = await frames_until(ws, lambda f: isinstance(f, dict)
                                             and f["type"] == "end")
                    kinds = [f["type"] if isinstance(f, dict) else "pcm" for f in got]
                    assert kinds[0] == "heard" and got[0]["text"] == "what is the weather?"
                    start = got[kinds.index("start")]
                    assert start["sample_rate"] == RATE  # announced before any audio
                    assert kinds.index("start") < kinds.index("pcm")
                    sentence = got[kinds.index("sentence")]
                    assert sentence["text"] == "It is sunny today."
                    assert sentence["first_audio_ms"] >= 0
                    audio = b"".join(f for f in got if isinstance(f, bytes))
                    assert audio == fake_voice("").pcm  # one sentence, every sample
                    assert kinds.index("sentence") < kinds.index("pcm")
                    # a story; speaking over it cuts it
                    for frame in utterance():
                        await ws.send(frame)
                    await frames_until(ws, lambda f: isinstance(f, dict)
                                       and f["type"] == "sentence")
                    for frame in utterance():
                        await ws.send(frame)
                    rest = await frames_until(ws, lambda f: isinstance(f, dict)
                                              and f["type"] == "sentence"
                                              and "sunny" in f["text"])
                    kinds = [f["type"] for f in rest if isinstance(f, dict)]
                    assert "barge_in" in kinds
                    assert kinds.index("barge_in") < kinds.index("heard")
                    said = [f["text"] for f in rest if isinstance(f, dict)
                            and f["type"] == "sentence"]
                    assert not any("The end came much later" in s for s in said)
                # the three utterances reached the team as its input, in order
                log = app.state.manager.log
                info = app.state.manager.store.get(sid)
                inputs = [e.payload["text"] for e, _ in log.messages(info.run_id)
                          if e.channel == "inbox"]
                assert inputs == ["what is the weather?", "tell me a story",
                                  "what is the weather?"]

        anyio.run(go)
    assert len(heard.received) == 3 and heard.refused == []
