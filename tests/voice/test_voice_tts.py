"""TTSOutput with a fake synthesizer: ordering, non-blocking writes, barge-in, metrics."""

from __future__ import annotations

import io
import threading
import wave
from collections.abc import Iterator
from dataclasses import asdict, replace
from pathlib import Path

import anyio
import pytest

from terrarium.events import SentenceQueued, SentenceSynthesized, SpeechCut, UtteranceWritten
from terrarium.voice import (
    AudioClip,
    CollectOutput,
    CutReport,
    OutputSink,
    PrintOutput,
    TTSOutput,
    UtteranceAudio,
    VoiceError,
    WavFileSink,
    split_sentences,
)

pytestmark = pytest.mark.anyio

RATE = 100  # fake audio: one frame per character of text, so 0.01 s per character


class FakeSynth:
    """Encodes the text itself as PCM so sinks can tell which sentence they got."""

    def __init__(self, clock: FakeClock | None = None, cost: float = 0.05) -> None:
        self.calls: list[str] = []
        self.threads: set[int] = set()
        self._clock = clock
        self._cost = cost

    @property
    def sample_rate(self) -> int:
        return RATE

    def synthesize(self, text: str) -> AudioClip:
        self.calls.append(text)
        self.threads.add(threading.get_ident())
        if self._clock is not None:
            self._clock.now += self._cost
        return AudioClip(pcm=text.encode("utf-16-le"), sample_rate=RATE)


def decode(clip: AudioClip) -> str:
    return clip.pcm.decode("utf-16-le")


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


_SINKS: list[GatedSink] = []


@pytest.fixture(autouse=True)
def _close_sinks() -> Iterator[None]:
    """Each test's gated sinks: their release streams closed when it ends."""
    yield
    while _SINKS:
        sink = _SINKS.pop()
        sink._send.close()
        sink._recv.close()


class GatedSink:
    """An audio sink whose playback only finishes when the test releases it."""

    def __init__(self, *, gated: bool = True) -> None:
        self.log: list[tuple[str, str]] = []
        self._gated = gated
        self._send, self._recv = anyio.create_memory_object_stream[None](100)
        _SINKS.append(self)
        self._started: dict[str, anyio.Event] = {}
        self._utt = ""
        self._seconds = 0.0

    def started(self, text: str) -> anyio.Event:
        return self._started.setdefault(text, anyio.Event())

    def release(self, n: int = 1) -> None:
        for _ in range(n):
            self._send.send_nowait(None)

    async def begin(self, utterance_id: str, sample_rate: int) -> None:
        self.log.append(("begin", utterance_id))
        self._utt, self._seconds = utterance_id, 0.0

    async def play(self, clip: AudioClip) -> None:
        text = decode(clip)
        self.started(text).set()
        if self._gated:
            await self._recv.receive()
        self.log.append(("played", text))
        self._seconds += clip.duration

    async def finish(self) -> UtteranceAudio:
        self.log.append(("finish", self._utt))
        return UtteranceAudio(utterance_id=self._utt, duration=self._seconds, sample_rate=RATE)

    async def abort(self) -> UtteranceAudio:
        self.log.append(("abort", self._utt))
        return UtteranceAudio(
            utterance_id=self._utt, duration=self._seconds, sample_rate=RATE, aborted=True
        )


REPLY = (
    "Good morning! The weather today is sunny, with a high of 21.5 degrees. "
    "Dr. Lee says it will rain tomorrow... Bring an umbrella, e.g. the red one. "
    "Have a **great** day."
)
REPLY_SENTENCES = [
    "Good morning!",
    "The weather today is sunny, with a high of 21.5 degrees.",
    "Dr. Lee says it will rain tomorrow...",
    "Bring an umbrella, e.g. the red one.",
    "Have a great day.",
]


def tokens(text: str, size: int = 3) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


async def speak(tts: TTSOutput, uid: str, text: str) -> None:
    await tts.begin(uid)
    for tok in tokens(text):
        await tts.write(tok)
    await tts.end()


async def test_sentences_are_synthesized_and_played_in_order() -> None:
    synth, sink = FakeSynth(), GatedSink(gated=False)
    async with TTSOutput(synth, sink) as tts:
        await speak(tts, "u1", REPLY)
        result = await tts.wait("u1")
    assert synth.calls == REPLY_SENTENCES
    assert sink.log == [("begin", "u1")] + [("played", s) for s in REPLY_SENTENCES] + [
        ("finish", "u1")
    ]
    assert result.spoken == REPLY_SENTENCES
    assert result.cut is None
    assert result.audio is not None
    assert result.audio.duration == pytest.approx(sum(len(s) for s in REPLY_SENTENCES) / RATE)
    assert threading.get_ident() not in synth.threads  # synthesis ran in a worker thread


async def test_utterances_play_one_after_another() -> None:
    synth, sink = FakeSynth(), GatedSink(gated=False)
    async with TTSOutput(synth, sink) as tts:
        await speak(tts, "a", "First reply here. It has two sentences.")
        await speak(tts, "b", "Second reply is here.")
    assert [e for e in sink.log if e[0] != "played"] == [
        ("begin", "a"),
        ("finish", "a"),
        ("begin", "b"),
        ("finish", "b"),
    ]
    assert [t for k, t in sink.log if k == "played"] == [
        "First reply here.",
        "It has two sentences.",
        "Second reply is here.",
    ]


async def test_generation_never_waits_for_audio() -> None:
    synth, sink = FakeSynth(), GatedSink()
    async with TTSOutput(synth, sink) as tts:
        with anyio.fail_after(10):  # a hang guard, not a timing assertion
            await speak(tts, "u1", REPLY)  # all writes and end() return while nothing plays
        assert [k for k, _ in sink.log if k == "played"] == []
        await sink.started(REPLY_SENTENCES[0]).wait()
        sink.release(len(REPLY_SENTENCES))
        result = await tts.wait("u1")
    assert result.spoken == REPLY_SENTENCES


async def test_markdown_and_code_never_reach_the_synthesizer() -> None:
    synth = FakeSynth()
    text = (
        "## Answer\n**Sure**, here is `ls`. See [the docs](https://x.io/docs).\n"
        "```bash\nrm -rf /tmp/x. Do not say this.\n```\n- first item\n- second item 🎉\n"
    )
    async with TTSOutput(synth, GatedSink(gated=False)) as tts:
        await speak(tts, "md", text)
    spoken = " ".join(synth.calls)
    for bad in ("#", "*", "`", "](", "http", "rm -rf", "Do not say", "🎉", "- "):
        assert bad not in spoken
    assert "Sure, here is ls." in spoken
    assert "See the docs." in spoken
    assert "first item" in spoken and "second item" in spoken


async def test_barge_in_cuts_current_and_queued_then_next_reply_is_spoken() -> None:
    synth, sink = FakeSynth(), GatedSink()
    events: list[object] = []
    async with TTSOutput(synth, sink, observer=events.append, creature="c", output="voice") as tts:
        await speak(tts, "u1", REPLY)
        await sink.started(REPLY_SENTENCES[0]).wait()
        sink.release(1)  # the first sentence plays to the end
        await sink.started(REPLY_SENTENCES[1]).wait()
        report = await tts.interrupt()  # during the second sentence
        assert isinstance(report, CutReport)
        assert report.utterance_id == "u1"
        assert report.spoken_text == REPLY_SENTENCES[0]
        assert report.interrupted_sentence == REPLY_SENTENCES[1]
        assert report.cut_text == REPLY_SENTENCES[2:]
        assert ("abort", "u1") in sink.log
        first = await tts.wait("u1")
        assert first.cut == report
        assert first.metrics.interrupted

        await speak(tts, "u2", "Okay, stopping now. What else?")
        sink.release(10)
        second = await tts.wait("u2")
    assert second.spoken == ["Okay, stopping now.", "What else?"]
    assert second.cut is None
    played = [t for k, t in sink.log if k == "played"]
    assert played == [REPLY_SENTENCES[0], "Okay, stopping now.", "What else?"]
    cut = report.as_event("c", "voice")  # the ground event, named for its creature and output
    assert cut.cut_text == tuple(REPLY_SENTENCES[2:]) and cut.output == "voice"
    (emitted,) = [e for e in events if isinstance(e, SpeechCut)]
    assert replace(emitted, ts=cut.ts) == cut


async def test_barge_in_while_the_reply_is_still_streaming() -> None:
    synth, sink = FakeSynth(), GatedSink()
    async with TTSOutput(synth, sink) as tts:
        await tts.begin("u1")
        await tts.write("This first sentence is complete. This one is only half")
        await sink.started("This first sentence is complete.").wait()
        report = await tts.interrupt()
        assert report is not None
        assert report.interrupted_sentence == "This first sentence is complete."
        assert report.cut_text == ["This one is only half"]
        await tts.write(" of a sentence.")  # late tokens of the cut reply are dropped
        await tts.end()
        await speak(tts, "u2", "A fresh reply is spoken.")
        sink.release(5)
        assert (await tts.wait("u2")).spoken == ["A fresh reply is spoken."]
    assert "of a sentence." not in " ".join(synth.calls)


async def test_barge_in_drops_later_queued_utterances_too() -> None:
    sink = GatedSink()
    async with TTSOutput(FakeSynth(), sink) as tts:
        await speak(tts, "a", "Reply number one is long.")
        await speak(tts, "b", "Reply number two is queued.")
        await sink.started("Reply number one is long.").wait()
        report = await tts.interrupt()
        assert report is not None and report.utterance_id == "a"
        assert report.also_cut == ["b"]
        assert (await tts.wait("b")).cut is not None
    assert [t for k, t in sink.log if k == "played"] == []


async def test_interrupt_with_nothing_to_cut_returns_none() -> None:
    async with TTSOutput(FakeSynth(), GatedSink(gated=False)) as tts:
        assert await tts.interrupt() is None
        await speak(tts, "u", "All of this was spoken.")
        await tts.wait("u")
        assert await tts.interrupt() is None


async def test_metrics_and_observer_events() -> None:
    clock = FakeClock()
    synth = FakeSynth(clock, cost=0.05)
    events: list[object] = []
    async with TTSOutput(synth, GatedSink(gated=False), observer=events.append, clock=clock) as tts:
        await tts.begin("m")
        clock.now += 0.2
        await tts.write("Hello there, my")
        clock.now += 0.1
        await tts.write(" friend. How")
        await tts.write(" are you today?")
        await tts.end()
        result = await tts.wait("m")
    m = result.metrics
    assert m.time_to_first_token == pytest.approx(0.2)
    assert m.time_to_first_sentence == pytest.approx(0.3)
    assert m.time_to_first_audio is not None and m.time_to_first_audio >= 0.35 - 1e-9
    assert m.sentences == 2 and m.sentences_played == 2
    audio = (len("Hello there, my friend.") + len("How are you today?")) / RATE
    assert m.audio_seconds == pytest.approx(audio)
    assert m.synth_seconds == pytest.approx(0.1)
    assert m.real_time_factor == pytest.approx(0.1 / audio)
    assert "first audio" in m.summary()
    assert [e.index for e in events if isinstance(e, SentenceQueued)] == [0, 1]
    assert [e.index for e in events if isinstance(e, SentenceSynthesized)] == [0, 1]
    synthesized = [e for e in events if isinstance(e, SentenceSynthesized)]
    assert synthesized[0].synth_ms == pytest.approx(50.0)
    assert synthesized[0].audio_seconds == pytest.approx(len("Hello there, my friend.") / RATE)
    written = events[-1]
    assert isinstance(written, UtteranceWritten)
    assert asdict(written.metrics) == m.model_dump(exclude={"utterance_id"})
    assert tts.metrics("m") == m


async def test_wav_file_sink_writes_one_file_per_utterance(tmp_path: Path) -> None:
    def tone(text: str) -> AudioClip:
        return AudioClip(pcm=b"\x01\x00" * (len(text) * 10), sample_rate=8000)

    async with TTSOutput(tone, directory=tmp_path, sample_rate=8000) as tts:
        await speak(tts, "turn/1", "One sentence here. And another one.")
        result = await tts.wait("turn/1")
    assert result.audio is not None and result.audio.path == tmp_path / "turn_1.wav"
    with wave.open(str(result.audio.path), "rb") as wav:
        assert wav.getframerate() == 8000
        assert wav.getnchannels() == 1 and wav.getsampwidth() == 2
        frames = wav.getnframes()
    assert frames == 10 * (len("One sentence here.") + len("And another one."))
    assert result.audio.duration == pytest.approx(frames / 8000)


async def test_wav_sink_refuses_a_mismatched_sample_rate(tmp_path: Path) -> None:
    sink = WavFileSink(tmp_path)
    await sink.begin("x", 16000)
    with pytest.raises(VoiceError, match="cannot go into a 16000 Hz"):
        await sink.play(AudioClip(pcm=b"\x00\x00", sample_rate=22050))
    info = await sink.abort()
    assert info.aborted and info.path is not None and info.path.exists()


async def test_exiting_the_service_plays_what_is_queued() -> None:
    sink = GatedSink(gated=False)
    async with TTSOutput(FakeSynth(), sink) as tts:
        await tts.begin("u")
        await tts.write("Unfinished but still spoken")  # no end(): exit ends it
    assert ("played", "Unfinished but still spoken") in sink.log
    assert sink.log[-1] == ("finish", "u")


async def test_misuse_reads_as_a_sentence() -> None:
    tts = TTSOutput(FakeSynth(), GatedSink())
    with pytest.raises(VoiceError, match="not running"):
        await speak(tts, "u", "Hello there, world.")
    async with TTSOutput(FakeSynth(), GatedSink(gated=False)) as tts:
        with pytest.raises(VoiceError, match="before begin"):
            await tts.write("hi")
        await speak(tts, "dup", "Once is enough here.")
        with pytest.raises(VoiceError, match="already used"):
            await tts.begin("dup")


async def test_segmentation_in_the_output_matches_split_sentences() -> None:
    synth = FakeSynth()
    text = "Mr. Brown paid $3.50 for it. Really? Yes… and then he left. 你好吗？我很好。"
    async with TTSOutput(synth, GatedSink(gated=False)) as tts:
        await tts.begin("s")
        for ch in text:
            await tts.write(ch)
        await tts.end()
    assert synth.calls == split_sentences(text)


async def test_text_sinks_follow_the_output_protocol() -> None:
    buf = io.StringIO()
    out = PrintOutput(buf)
    collect = CollectOutput()
    async with TTSOutput(FakeSynth(), GatedSink(gated=False)) as tts:
        for sink in (out, collect, tts):
            assert isinstance(sink, OutputSink)
    for sink in (out, collect):
        await sink.begin("a")
        await sink.write("Hello ")
        await sink.write("world.")
        await sink.end()
    assert buf.getvalue() == "Hello world.\n"
    assert collect.utterances == {"a": "Hello world."}
    await collect.begin("b")
    await collect.write("Half")
    report = await collect.interrupt()
    assert report is not None and report.spoken_text == "Half"
    assert await collect.interrupt() is None
    with pytest.raises(VoiceError):
        await collect.write("x")
    lines: list[str] = []
    cb = PrintOutput(callback=lines.append)
    await cb.begin("z")
    await cb.write("hey")
    assert await cb.interrupt() is not None
    assert lines == ["hey", " [cut]\n"]


def test_device_sink_plays_each_clip_and_counts_its_duration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys
    import types

    from terrarium.voice import audio as audio_module

    played: list[tuple[int, int]] = []
    fake = types.ModuleType("sounddevice")
    fake.play = lambda samples, rate: played.append((len(samples), rate))  # type: ignore[attr-defined]
    fake.wait = lambda: None  # type: ignore[attr-defined]
    fake.stop = lambda: None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sounddevice", fake)
    monkeypatch.setattr(audio_module, "device_unavailable_reason", lambda: None)

    async def go() -> tuple[float, bool]:
        sink = audio_module.DeviceSink()
        await sink.begin("u1", 16000)
        await sink.play(audio_module.AudioClip(pcm=b"\x00\x00" * 1600, sample_rate=16000))
        first = await sink.finish()
        await sink.begin("u2", 16000)
        await sink.play(audio_module.AudioClip(pcm=b"\x00\x00" * 800, sample_rate=16000))
        cut = await sink.abort()
        return first.duration + cut.duration, cut.aborted

    total, aborted = anyio.run(go)
    assert played == [(1600, 16000), (800, 16000)]
    assert abs(total - 0.15) < 1e-9 and aborted


async def test_a_short_piece_said_again_is_not_synthesized_again() -> None:
    """The runtime's own replies come back often: their audio is kept, not made anew;
    long pieces are not kept (a few MB at most)."""
    synth, sink = FakeSynth(), GatedSink(gated=False)
    long = "This sentence is far too long to be kept as a clip for later use."
    async with TTSOutput(synth, sink) as tts:
        for uid in ("u1", "u2"):
            await speak(tts, uid, f"You're welcome! {long}")
            await tts.wait(uid)
    assert synth.calls == ["You're welcome!", long, long]
    played = [s for kind, s in sink.log if kind == "played"]
    assert played == ["You're welcome!", long] * 2  # the kept audio is played the same
