"""What a TTS output carries through its queues, and what it reports once an utterance is done.

Kept apart from ``tts.py`` so the output's own module is about the pipeline, not its records.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio
from pydantic import BaseModel, ConfigDict

from terrarium.voice.audio import UtteranceAudio
from terrarium.voice.early import EarlyFirstPiece
from terrarium.voice.metrics import UtteranceMetrics
from terrarium.voice.segment import SentenceSegmenter
from terrarium.voice.sink import CutReport
from terrarium.voice.speakable import FenceFilter
from terrarium.voice.synth import AudioClip


class UtteranceResult(BaseModel):
    """Everything known about one utterance once it is done."""

    model_config = ConfigDict(extra="forbid")

    utterance_id: str
    sentences: list[str]
    spoken: list[str]
    audio: UtteranceAudio | None
    metrics: UtteranceMetrics
    cut: CutReport | None = None


@dataclass(eq=False)
class Utterance:
    id: str
    t0: float
    segmenter: SentenceSegmenter
    metrics: UtteranceMetrics
    fence: FenceFilter = field(default_factory=FenceFilter)
    queued: list[str] = field(default_factory=list)
    played: list[str] = field(default_factory=list)
    playing: str | None = None
    cut: bool = False
    done: anyio.Event = field(default_factory=anyio.Event)
    first_synthesized: anyio.Event = field(default_factory=anyio.Event)  # or cut, or finished
    result: UtteranceResult | None = None
    early: EarlyFirstPiece | None = None  # the first piece cut from the model's own text


@dataclass(frozen=True, slots=True)
class QueuedSentence:
    utt: Utterance
    index: int
    text: str


@dataclass(frozen=True, slots=True)
class QueuedClip:
    utt: Utterance
    index: int
    text: str
    clip: AudioClip


@dataclass(frozen=True, slots=True)
class QueuedEnd:
    utt: Utterance




__all__ = [
    "QueuedClip",
    "QueuedEnd",
    "QueuedSentence",
    "Utterance",
    "UtteranceResult",
]
