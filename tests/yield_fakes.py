"""Fakes for yield-to-first-audio tests: a scripted model that records when it is paused, a
synthesizer whose first sentence waits on a gate, and a Setup that wires them to one speaker."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import aclosing
from pathlib import Path
from typing import Any

import anyio
import yaml

from terrarium.controller.loop import Controller, Incoming, TurnResult
from terrarium.events import Event, TranscriptAppended, TranscriptEntry
from terrarium.llm.scripted import ScriptedModel
from terrarium.llm.types import ChatRequest, StreamDelta
from terrarium.voice import AudioClip, CallableSynthesizer, NullAudioSink, TTSOutput
from tests.loop_helpers import make_parts

REPLY = "Hello there, my friend. I am glad you came today. Let us talk about green tea."
SENTENCES = ["Hello there, my friend.", "I am glad you came today.",
             "Let us talk about green tea."]
RATE = 16000
Events = list[tuple[str, Any]]


class Recording(ScriptedModel):
    """The scripted model, logging each request and each stream's end into ``events``."""

    def __init__(self, *args: Any, events: Events, gate: threading.Event, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.events = events
        self.gate = gate
        self.streamed: list[str] = []  # the text each call streamed before it ended or closed
        self.closed = anyio.Event()
        self.opens_gate = True

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        n = len(self.requests) + 1
        self.events.append(("request", n))
        sent: list[str] = []
        try:
            async with aclosing(super().stream(request)) as inner:
                async for delta in inner:
                    sent.append(delta.text)
                    yield delta
        finally:
            self.streamed.append("".join(sent))
            self.events.append(("stream ended", n))
            if self.opens_gate:
                self.gate.set()
            self.closed.set()


class GatedSynth:
    """Fake speech; the first synthesis of a run waits for the gate."""

    def __init__(self, events: Events, gate: threading.Event) -> None:
        self.events = events
        self.gate = gate
        self.calls: list[str] = []

    def __call__(self, text: str) -> AudioClip:
        if not self.calls:
            self.gate.wait(10)
        self.calls.append(text)
        self.events.append(("synthesized", text))
        return AudioClip(pcm=b"\x00\x00" * 160, sample_rate=RATE)


class Setup:
    """One speaker creature (tts default output), its model, synthesizer and records."""

    def __init__(self, tmp_path: Path, *, reply: str = REPLY, yield_first_audio: bool = True,
                 continuation: bool = True, steps: list[Any] | None = None,
                 **config: Any) -> None:
        self.events: Events = []
        self.gate = threading.Event()
        self.model = Recording(steps or [{"reply": reply}], chunk_size=5,
                               continuation=continuation, events=self.events, gate=self.gate)
        self.synth = GatedSynth(self.events, self.gate)
        self.tts = TTSOutput(CallableSynthesizer(self.synth, RATE), NullAudioSink(),
                             yield_first_audio=yield_first_audio)
        self.entries: list[TranscriptEntry] = []
        tmp_path.mkdir(parents=True, exist_ok=True)
        parts = make_parts(tmp_path, output={
            "default": "speech",
            "named_outputs": {"speech": {"type": "tts", "description": "Spoken."}}}, **config)
        self.ctl = Controller(parts, self.model, sinks={"speech": self.tts},
                              emit=self._on_event)

    def _on_event(self, ev: Event) -> None:
        if isinstance(ev, TranscriptAppended):
            self.entries.append(ev.entry)

    async def turn(self, text: str = "hi") -> TurnResult:
        async with self.tts:
            with anyio.fail_after(20):
                result = await self.ctl.run_turn([Incoming(text=text)])
                await self.tts.drain()
        return result

    def run(self, text: str = "hi") -> TurnResult:
        return anyio.run(self.turn, text)

    def order(self, event: tuple[str, Any]) -> int:
        return self.events.index(event)


def speaker_team(tmp_path: Path, speech: dict[str, Any], script: str = "steps: [Hi.]\n") -> Path:
    """A team of one scripted speaker listening on ``inbox``, speaking through a ``tts``
    output with the options ``speech`` (beside its type and description)."""
    team = tmp_path / "team"
    (team / "speaker").mkdir(parents=True)
    (team / "terrarium.yaml").write_text(yaml.safe_dump({"terrarium": {
        "name": "voice", "input_channel": "inbox",
        "creatures": [{"name": "speaker", "config": "speaker",
                       "channels": {"listen": ["inbox"]}}],
        "channels": {"inbox": {"type": "queue", "schema": {"fields": {"text": "str"}}}}}}))
    (team / "speaker" / "config.yaml").write_text(yaml.safe_dump({
        "name": "speaker", "controller": {"provider": "scripted", "script": "script.yaml"},
        "output": {"default": "speech", "named_outputs": {"speech": {
            "type": "tts", "description": "Spoken.", **speech}}}}))
    (team / "speaker" / "script.yaml").write_text(script)
    return team
