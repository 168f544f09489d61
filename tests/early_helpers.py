"""Shared by the early-synthesis tests (tests/voice/test_tts_early_*.py): a fake voice whose
clips are their own text, a sink that hears them back, a scripted speaker model that waits
for the voice mid-reply, and one speaker turn of the voice assistant through them."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

from terrarium.config import load_team
from terrarium.controller.assembly import assemble
from terrarium.controller.guard import START_WORDS
from terrarium.controller.incoming import Incoming
from terrarium.controller.loop import Controller
from terrarium.llm.types import ChatRequest, StreamDelta, Usage
from terrarium.voice import AudioClip, CallableSynthesizer, NullAudioSink, TTSOutput
from terrarium.voice.segment import SegmenterConfig, SentenceSegmenter
from terrarium.voice.speakable import to_speakable

__all__ = ["RATE", "SPEAKER", "Heard", "Voice", "WaitingModel", "first_piece", "model_speaker",
           "speaker_turn", "spoken_through"]

ROOT = Path(__file__).resolve().parents[1]
RATE = 16000
SPEAKER = SegmenterConfig(first_clause_chars=12, first_piece_max_chars=16)


def first_piece(text: str, config: SegmenterConfig = SPEAKER) -> str | None:
    """The first piece the output's own segmenter cuts from ``text`` given whole."""
    seg = SentenceSegmenter(config)
    for s in seg.feed(text) + seg.flush():
        spoken = to_speakable(s)
        if spoken and any(ch.isalnum() for ch in spoken):
            return spoken
    return None


class Voice:
    """A fake voice: a clip's bytes are its text; ``ready`` is set once it made ``wanted``
    (any text when ``wanted`` is None)."""

    def __init__(self, wanted: str | None = None) -> None:
        self.made: list[str] = []
        self.wanted, self.ready = wanted, threading.Event()

    def __call__(self, text: str) -> AudioClip:
        self.made.append(text)
        if self.wanted is None or text == self.wanted:
            self.ready.set()
        data = text.encode()
        return AudioClip(pcm=data + b"\x00" * (len(data) % 2), sample_rate=RATE)


class Heard(NullAudioSink):
    """The clips played, as the texts they were made from."""

    def __init__(self) -> None:
        super().__init__()
        self.clips: list[str] = []

    async def play(self, clip: AudioClip) -> None:
        self.clips.append(clip.pcm.rstrip(b"\x00").decode())
        await super().play(clip)


class WaitingModel:
    """Streams a reply 3 characters a delta; at ``wait_at`` (if any) it waits once, on a
    thread, until the voice is ``ready``: while the guard holds the text, only early
    synthesis can have made it. ``made_before``: what the voice had made by then."""

    name = "scripted"
    last_usage: Usage | None = None
    supports_continuation = False

    def __init__(self, reply: str, wait_at: int | None, voice: Voice) -> None:
        self.reply, self.wait_at, self.voice = reply, wait_at, voice
        self.made_before: list[str] | None = None

    def describe(self) -> str:
        return self.name

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        for i in range(0, len(self.reply), 3):
            if self.wait_at is not None and i >= self.wait_at and self.made_before is None:
                await anyio.to_thread.run_sync(self.voice.ready.wait, 5)
                self.made_before = list(self.voice.made)
            yield StreamDelta(text=self.reply[i:i + 3])
        yield StreamDelta(finish_reason="stop")


def model_speaker() -> Any:
    """The voice assistant's speaker as assembled, but with its model answering questions
    about the user too (``reply_guard.say_note`` off): the tests of the model's path (a
    sentence released, dropped, looping) ask about the user, which the shipped speaker
    answers with the note itself, without the model (session 17)."""
    team = load_team(ROOT / "examples" / "voice_assistant")
    guard = team.creatures["speaker"].config.reply_guard
    assert guard is not None
    guard.say_note = False
    return assemble(team, "speaker")


def speaker_turn(reply: str, asked: str, *, intent: str, early: bool = True, notes: str = "",
                 wanted: str | None = None, wait_before: str | None = None
                 ) -> tuple[str, Voice, Heard, TTSOutput, WaitingModel]:
    """One turn of the voice assistant's speaker on ``reply``: what it said, the voice, the
    clips heard, the output and the model (waiting before ``wait_before``, if given)."""
    parts = model_speaker()
    voice, heard = Voice(wanted), Heard()
    tts = TTSOutput(CallableSynthesizer(voice, RATE), heard, segmenter=SPEAKER,
                    synthesize_early=early, early_after_words=START_WORDS + 1,
                    yield_first_audio=False)
    model = WaitingModel(reply, reply.index(wait_before) if wait_before else None, voice)
    payload: dict[str, Any] = {"intent": intent, "user_said": asked,
                               "recent_conversation": "", "memory_context": notes}

    return spoken_through(parts, model, tts, asked, payload, 10), voice, heard, tts, model


def spoken_through(parts: Any, model: Any, tts: TTSOutput, text: str,
                   payload: dict[str, Any], timeout: float = 20) -> str:
    """One speaker turn on ``text`` (the router's message with ``payload``) through the
    ``tts`` output until its voice has drained: the turn's text."""

    async def go() -> str:
        ctl = Controller(parts, model, sinks={"tts": tts})
        async with tts:
            with anyio.fail_after(timeout):
                result = await ctl.run_turn([Incoming(text=text, channel="to_speaker",
                                                      sender="router", payload=payload)])
                await tts.drain()
        return result.text

    return anyio.run(go)
