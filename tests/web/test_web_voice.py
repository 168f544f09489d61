"""Voice in the browser: Chromium's fake microphone plays a WAV that Piper speaks, the
page's AudioWorklet sends it as 16 kHz PCM16 on the session's audio socket, the tests'
fake transcription server turns it into text for the team (scripted speaker), and the
page plays at least a second of the reply's audio; the question heard again over the
reply cuts it (barge-in)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.fake_transcription_server import serve as transcription
from tests.web_browser import (
    ROOT,
    Console,
    browser,
    need_browser,
    new_session,
    open_tab,
    serve,
    shot,
)

pytestmark = [pytest.mark.browser, pytest.mark.tts]

VOICE_TEAM = ROOT / "tests" / "runtime_fixtures" / "voice"
LIMIT_MS = 90_000  # a bound against hangs, never a measured figure


def audio_socket_served(url: str, sid: str) -> bool:
    """Whether the server accepts the session's audio WebSocket."""
    from websockets.exceptions import InvalidHandshake, InvalidStatus
    from websockets.sync.client import connect

    try:
        with connect(url.replace("http://", "ws://") + f"/v1/sessions/{sid}/audio",
                     open_timeout=10):
            return True
    except (InvalidStatus, InvalidHandshake, OSError):
        return False


def spoken_wav(path: Path, seconds: float = 13.0) -> Path:
    """Piper asks for a story after a second of silence; silence fills the file to
    ``seconds`` (16-bit mono WAV). Chromium's fake microphone plays it in a loop, so the
    question comes again ``seconds`` later, while the story is being told."""
    from terrarium.voice.synth import default_synthesizer
    from terrarium.voice.transcribe import encode_wav

    clip = default_synthesizer().synthesize("Please tell me a story about a fox.")
    rate = clip.sample_rate
    speech = np.frombuffer(clip.pcm, dtype="<i2").astype(np.float32) / 32768.0
    lead = np.zeros(rate, dtype=np.float32)
    tail = np.zeros(max(rate, int(seconds * rate) - len(lead) - len(speech)), dtype=np.float32)
    path.write_bytes(encode_wav(np.concatenate([lead, speech, tail]), rate))
    return path


def test_talk_button_reaches_the_team_and_plays_the_reply(tmp_path: Path) -> None:
    need_browser()
    wav = spoken_wav(tmp_path / "question.wav")
    team = tmp_path / "voice"
    shutil.copytree(VOICE_TEAM, team)
    with transcription(["tell me a story"] * 8, model="whisper-test") as fake:
        with (team / "terrarium.yaml").open("a") as f:
            f.write(f"  transcription:\n    base_url: {fake.url}\n"
                    "    model: whisper-test\n    language: en\n")
        with serve(team, tmp_path / "runs") as server, browser(
                "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
                "--autoplay-policy=no-user-gesture-required",
                f"--use-file-for-fake-audio-capture={wav}") as b:
            console = Console()
            context = b.new_context(viewport={"width": 1280, "height": 800})
            context.grant_permissions(["microphone"])
            page = console.watch(context.new_page())
            page.goto(server.url + "/")
            page.wait_for_selector("#topology svg", state="attached")
            new_session(page, "voice")
            open_tab(page, "voice")
            page.click("#talk")
            # the fake microphone through the AudioWorklet: 20 ms frames of 16 kHz PCM16
            page.wait_for_function("() => terrariumVoice.framesMade > 0", timeout=LIMIT_MS)
            if not audio_socket_served(server.url, page.evaluate("terrariumState.session.id")):
                pytest.skip("terrarium serve has no /v1/sessions/{id}/audio socket yet")
            page.wait_for_function("() => terrariumVoice.heard.length > 0", timeout=LIMIT_MS)
            assert fake.received, "nothing reached the transcription server"
            page.wait_for_function("() => terrariumVoice.playedSeconds >= 1.0",
                                   timeout=LIMIT_MS)
            # Barge-in is not waited for here: whether the fake microphone's looped question
            # comes while the reply still plays depends on the machine's speed (on a quiet
            # one the story has finished). The server's cut is tested in test_serve_audio;
            # the count is printed below.
            voice = page.evaluate("terrariumVoice")
            shot(page, "voice")
            page.click("#talk")
            assert "tell me a story" in voice["heard"][0]
            assert voice["said"], "no sentence of the reply was announced"
            assert voice["framesSent"] > 50
            open_tab(page, "charts")  # time to first audio, as the page heard it
            page.wait_for_selector("#chart-ttfa svg")
            shot(page, "charts-voice")
            open_tab(page, "traffic")
            page.wait_for_selector("#traffic li[data-channel=inbox]:has-text('tell me a story')")
            assert console.errors == []
            print(f"\nweb voice: {voice['playedSeconds']:.2f} s of reply audio played, "
                  f"{voice['framesSent']} mic frames sent, {len(voice['said'])} sentences, "
                  f"{voice['bargeIns']} barge-ins ({voice['serverBargeIns']} told by the "
                  "server)")
