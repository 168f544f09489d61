"""Speech in without Piper: silero-vad on synthetic audio, the utterance cutter on scripted
probabilities, the transcription client against a local fake server, the listener's
barge-in with time (audio fed, playback released) controlled by the test, and the config.
"""

from __future__ import annotations

import wave
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import numpy as np
import pytest

from terrarium.config import load_any
from terrarium.errors import ConfigErrors, TranscriptionFailed
from terrarium.voice import AudioClip, CutReport, TTSOutput
from terrarium.voice.listen import SpeechListener, read_wav, wav_chunks
from terrarium.voice.transcribe import TranscriptionClient, TranscriptionSettings, encode_wav
from terrarium.voice.vad import (
    SAMPLE_RATE,
    WINDOW,
    SileroVad,
    SpeechStarted,
    Utterance,
    UtteranceCutter,
    VadSettings,
)
from tests.fake_transcription_server import serve

MODEL = "whisper-test"


class ScriptedVad:
    """Speech probability by window: ``1`` where the script says speech, else ``0``."""

    def __init__(self, script: str = "") -> None:
        self.script = script  # one char per window: "#" speech, "." silence
        self.calls = 0
        self.resets = 0

    def __call__(self, window: np.ndarray) -> float:
        i, self.calls = self.calls, self.calls + 1
        return 1.0 if i < len(self.script) and self.script[i] == "#" else 0.0

    def reset(self) -> None:
        self.resets += 1
        self.calls = 0


def windows(n: int) -> np.ndarray:
    return np.full(n * WINDOW, 0.1, dtype=np.float32)


# 32 ms windows: 8 windows of speech = 256 ms >= min_speech 250 ms; 16 of silence = 512 ms
SETTINGS = VadSettings(min_speech_ms=250, min_silence_ms=500, speech_pad_ms=64)


# ---------------------------------------------------------------- VAD


def test_silero_finds_no_speech_in_silence_or_noise() -> None:
    vad = SileroVad()
    rng = np.random.default_rng(7)
    silence = np.zeros(SAMPLE_RATE * 2, dtype=np.float32)
    noise = (rng.standard_normal(SAMPLE_RATE * 2) * 0.2).astype(np.float32)
    for audio in (silence, noise):
        cutter = UtteranceCutter(vad, VadSettings())
        assert cutter.feed(audio) + cutter.flush() == []
    vad.reset()
    assert vad(np.zeros(WINDOW, dtype=np.float32)) < 0.5


def test_silero_wants_whole_windows() -> None:
    with pytest.raises(ValueError, match="512"):
        SileroVad()(np.zeros(100, dtype=np.float32))


def test_cutter_gives_one_utterance_per_stretch_of_speech() -> None:
    script = "...." + "#" * 10 + "." * 16 + "#" * 9 + "." * 20
    cutter = UtteranceCutter(ScriptedVad(script), SETTINGS)
    events = cutter.feed(windows(len(script)))
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["SpeechStarted", "Utterance", "SpeechStarted", "Utterance"]
    first = events[1]
    assert isinstance(first, Utterance)
    pad = 64 * SAMPLE_RATE // 1000
    assert first.start == (4 * WINDOW - pad) / SAMPLE_RATE  # the padding before speech
    # 10 windows of speech, the padding before it and `pad` of the silence after it
    assert first.samples.size == 10 * WINDOW + 2 * pad
    started = events[0]
    assert isinstance(started, SpeechStarted) and started.at == 4 * WINDOW / SAMPLE_RATE


def test_a_short_blip_is_neither_an_utterance_nor_a_barge_in() -> None:
    script = "..###" + "." * 20
    cutter = UtteranceCutter(ScriptedVad(script), SETTINGS)
    assert cutter.feed(windows(len(script))) + cutter.flush() == []


def test_short_pauses_inside_speech_do_not_cut_it() -> None:
    script = "#" * 8 + "." * 5 + "#" * 8 + "." * 16
    cutter = UtteranceCutter(ScriptedVad(script), SETTINGS)
    events = cutter.feed(windows(len(script)))
    assert [type(e).__name__ for e in events] == ["SpeechStarted", "Utterance"]


def test_speech_at_the_end_of_a_stream_is_flushed_as_an_utterance() -> None:
    vad = ScriptedVad("#" * 12)
    cutter = UtteranceCutter(vad, SETTINGS)
    assert [type(e).__name__ for e in cutter.feed(windows(12))] == ["SpeechStarted"]
    assert [type(e).__name__ for e in cutter.flush()] == ["Utterance"]
    assert vad.resets >= 2  # the next stream starts with a fresh model state


def test_read_wav_mixes_down_and_resamples(tmp_path: Path) -> None:
    path = tmp_path / "stereo.wav"
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(2)
        wav.setsampwidth(2)
        wav.setframerate(8000)
        wav.writeframes(np.full(8000 * 2, 16384, dtype="<i2").tobytes())
    audio = read_wav(path)
    assert audio.size == SAMPLE_RATE
    assert np.allclose(audio, 0.5)
    with pytest.raises(TranscriptionFailed, match="cannot read WAV"):
        read_wav(tmp_path / "missing.wav")


# ---------------------------------------------------------------- the client


def tone(seconds: float = 0.5) -> bytes:
    t = np.arange(int(SAMPLE_RATE * seconds)) / SAMPLE_RATE
    return encode_wav((0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32))


@pytest.mark.anyio
async def test_client_posts_the_multipart_form(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_STT_KEY", "sk-test")
    with serve(["Hello there."], model=MODEL) as server:
        client = TranscriptionClient(TranscriptionSettings(
            base_url=server.url, model=MODEL, api_key_env="TEST_STT_KEY", language="en",
            prompt="Terrarium"))
        text = await client.transcribe(tone(), filename="u1.wav")
    assert text == "Hello there."
    [got] = server.received
    assert got.fields["model"] == MODEL
    assert got.fields["language"] == "en" and got.fields["prompt"] == "Terrarium"
    assert got.filename == "u1.wav" and got.content_type == "audio/wav"
    assert got.sample_rate == SAMPLE_RATE and got.frames == SAMPLE_RATE // 2
    assert got.authorization == "Bearer sk-test"
    assert server.refused == []


@pytest.mark.anyio
async def test_client_retries_a_server_that_is_warming_up() -> None:
    with serve(["ok"], model=MODEL, fail_first=1) as server:
        client = TranscriptionClient(TranscriptionSettings(
            base_url=server.url, model=MODEL, retries=1))
        assert await client.transcribe(tone()) == "ok"


@pytest.mark.anyio
async def test_client_errors_say_what_went_wrong() -> None:
    with serve([], model=MODEL, status=503) as server:
        client = TranscriptionClient(TranscriptionSettings(
            base_url=server.url, model=MODEL, retries=1))
        with pytest.raises(TranscriptionFailed, match=r"after 2 tries: HTTP 503"):
            await client.transcribe(tone())
    with serve([], model=MODEL) as server:  # a wrong model is refused at once
        client = TranscriptionClient(TranscriptionSettings(
            base_url=server.url, model="nope", retries=3))
        with pytest.raises(TranscriptionFailed, match=r"HTTP 400.*unknown model"):
            await client.transcribe(tone())
        assert server.refused == ["unknown model 'nope'"]
    # nothing listening: a connection error, told as such
    closed = TranscriptionClient(TranscriptionSettings(
        base_url=server.url, model=MODEL, retries=0))
    with pytest.raises(TranscriptionFailed, match="cannot connect"):
        await closed.transcribe(tone())


@pytest.mark.anyio
async def test_a_missing_api_key_is_told_before_sending(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    monkeypatch.delenv("NO_SUCH_STT_KEY", raising=False)
    client = TranscriptionClient(TranscriptionSettings(api_key_env="NO_SUCH_STT_KEY"))
    with pytest.raises(TranscriptionFailed, match="NO_SUCH_STT_KEY"):
        await client.transcribe(tone())


# ---------------------------------------------------------------- listener and barge-in


@pytest.mark.anyio
async def test_listener_sends_each_wav_utterance_to_the_server(tmp_path: Path) -> None:
    """Two WAV files, one utterance each (scripted VAD), a stream reset between them."""
    paths = []
    for i in range(2):
        path = tmp_path / f"{i}.wav"
        path.write_bytes(encode_wav(windows(30)))
        paths.append(path)
    vad = ScriptedVad("#" * 10 + "." * 20)
    barged: list[str] = []

    async def on_speech() -> None:
        barged.append("cut")

    with serve(["first words", "second words"], model=MODEL) as server:
        listener = SpeechListener(
            UtteranceCutter(vad, SETTINGS),
            TranscriptionClient(TranscriptionSettings(base_url=server.url, model=MODEL)),
            on_speech=on_speech)
        texts = [t async for t in listener.texts(wav_chunks(paths))]
    assert texts == ["first words", "second words"]
    assert barged == ["cut", "cut"]
    assert [r.filename for r in server.received] == ["utterance-1.wav", "utterance-2.wav"]


class GatedSink:
    """Audio sink whose sentences finish playing only when the test says so."""

    def __init__(self) -> None:
        self.played: list[str] = []
        self.playing = anyio.Event()
        self._release = anyio.Event()
        self.aborted = False

    async def begin(self, utterance_id: str, sample_rate: int) -> None:
        self._utt = utterance_id

    async def play(self, clip: AudioClip) -> None:
        self.playing.set()
        await self._release.wait()
        self.played.append(clip.pcm.decode("utf-16-le"))

    async def finish(self):  # type: ignore[no-untyped-def]
        from terrarium.voice import UtteranceAudio
        return UtteranceAudio(utterance_id=self._utt)

    async def abort(self):  # type: ignore[no-untyped-def]
        from terrarium.voice import UtteranceAudio
        self.aborted = True
        self._release.set()
        return UtteranceAudio(utterance_id=self._utt, aborted=True)


class TextSynth:
    sample_rate = 100

    def synthesize(self, text: str) -> AudioClip:
        return AudioClip(pcm=text.encode("utf-16-le"), sample_rate=100)


@pytest.mark.anyio
async def test_user_speech_barges_in_on_the_speaker() -> None:
    """The assistant is mid-sentence (playback held by the test); the test feeds the
    microphone audio window by window: a blip does not cut, sustained speech does."""
    sink = GatedSink()
    vad = ScriptedVad("##" + "." * 6 + "#" * 12 + "." * 16)
    cuts: list[CutReport | None] = []
    send, recv = anyio.create_memory_object_stream[np.ndarray | None](0)

    async def mic() -> AsyncIterator[np.ndarray | None]:
        async with recv:
            async for chunk in recv:
                yield chunk

    with serve(["stop please"], model=MODEL) as server:
        async with TTSOutput(TextSynth(), sink) as tts:

            async def on_speech() -> None:
                cuts.append(await tts.interrupt())

            listener = SpeechListener(
                UtteranceCutter(vad, SETTINGS),
                TranscriptionClient(TranscriptionSettings(base_url=server.url, model=MODEL)),
                on_speech=on_speech)
            heard: list[str] = []
            async with anyio.create_task_group() as tg:

                async def consume() -> None:
                    async for text in listener.texts(mic()):
                        heard.append(text)

                tg.start_soon(consume)
                await tts.begin("u1")
                await tts.write("The weather today is sunny. Tomorrow brings rain.")
                await tts.end()
                await sink.playing.wait()
                for _ in range(8):  # the blip and the silence after it
                    await send.send(windows(1))
                await send.send(windows(1))  # taken only once the last one was handled
                assert cuts == [] and not sink.aborted
                for _ in range(12 + 16):
                    await send.send(windows(1))
                await send.aclose()
    assert len(cuts) == 1 and cuts[0] is not None
    assert cuts[0].interrupted_sentence == "The weather today is sunny."
    assert cuts[0].cut_text == ["Tomorrow brings rain."]
    assert sink.aborted and sink.played == []
    assert heard == ["stop please"]


# ---------------------------------------------------------------- config


def write_team(folder: Path, block: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "solo").mkdir()
    (folder / "solo" / "config.yaml").write_text(
        "name: solo\ncontroller: {provider: scripted, script: script.yaml}\n")
    (folder / "solo" / "script.yaml").write_text("steps:\n  - reply: hi\n")
    (folder / "terrarium.yaml").write_text(
        "terrarium:\n  name: t\n  input_channel: inbox\n  creatures:\n"
        "    - {name: solo, config: solo, channels: {listen: [inbox]}}\n"
        "  channels:\n    inbox: {type: queue, schema: {fields: {text: str}}}\n" + block)
    return folder


def test_the_transcription_block_is_read(tmp_path: Path) -> None:
    team = load_any(write_team(tmp_path / "a", (
        "  transcription:\n    base_url: http://localhost:8080/v1\n    model: base.en\n"
        "    api_key_env: STT_KEY\n    vad: {threshold: 0.6, min_silence_ms: 700}\n")))
    settings = team.transcription  # type: ignore[union-attr]
    assert settings is not None
    assert settings.base_url == "http://localhost:8080/v1" and settings.model == "base.en"
    assert settings.vad.threshold == 0.6 and settings.vad.min_silence_ms == 700
    assert load_any(write_team(tmp_path / "b", "")).transcription is None  # type: ignore[union-attr]
    with pytest.raises(ConfigErrors, match="min_silense_ms"):
        load_any(write_team(tmp_path / "c", "  transcription:\n    vad: {min_silense_ms: 1}\n"))


# ---------------------------------------------------------------- the CLI


def test_run_with_an_unreadable_wav_says_so(tmp_path: Path) -> None:
    """`--wav` reaches the speech path (silero-vad loaded) and a bad file is a sentence."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    bad = tmp_path / "not.wav"
    bad.write_text("not audio")
    res = subprocess.run(
        [sys.executable, "-m", "terrarium", "run", str(root / "tests/runtime_fixtures/trio"),
         "--wav", str(bad), "--runs-dir", str(tmp_path), "--audio", "none"],
        cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode != 0
    assert "cannot read WAV file" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.anyio
async def test_microphone_blocks_arrive_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--listen`'s source with a stand-in for sounddevice: blocks the audio thread hands
    over come out in order, at 16 kHz mono, and the stream is closed at the end."""
    import sys
    import types

    from terrarium.voice.listen import microphone_chunks

    opened: list[dict[str, object]] = []
    closed: list[bool] = []

    class InputStream:
        def __init__(self, **kwargs: object) -> None:
            opened.append(kwargs)
            self.callback = kwargs["callback"]

        def __enter__(self) -> InputStream:
            for i in range(3):  # as PortAudio's thread would: (frames, 1) float32 blocks
                self.callback(np.full((WINDOW, 1), i, dtype=np.float32), WINDOW, None, None)
            return self

        def __exit__(self, *exc: object) -> None:
            closed.append(True)

    monkeypatch.setitem(sys.modules, "sounddevice",
                        types.SimpleNamespace(InputStream=InputStream))
    got = []
    chunks = microphone_chunks()
    async for chunk in chunks:
        assert chunk is not None
        got.append(float(chunk[0]))
        if len(got) == 3:
            break
    await chunks.aclose()  # type: ignore[attr-defined]
    assert got == [0.0, 1.0, 2.0]
    assert opened[0]["samplerate"] == SAMPLE_RATE and opened[0]["channels"] == 1
    assert closed == [True]
