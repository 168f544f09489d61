"""The events of a creature's voice: sentences queued and synthesized, a reply's audio
written with its ``SpeechMetrics``, and what a barge-in cut (``SpeechCut``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from terrarium.events.core import Event


@dataclass(frozen=True, slots=True, kw_only=True)
class SpeechCut(Event):
    """A barge-in stopped one of a creature's spoken outputs; what the user did not hear."""

    kind: ClassVar[str] = "speech_cut"
    creature: str
    output: str
    utterance_id: str
    spoken_text: str = ""
    interrupted_sentence: str | None = None
    cut_text: tuple[str, ...] = ()
    also_cut: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SentenceQueued(Event):
    """A complete, speakable sentence of a creature's reply entered the synthesis queue."""

    kind: ClassVar[str] = "sentence_queued"
    creature: str
    utterance_id: str
    index: int
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SentenceSynthesized(Event):
    """A queued sentence became audio."""

    kind: ClassVar[str] = "sentence_synthesized"
    creature: str
    utterance_id: str
    index: int
    text: str
    synth_ms: float
    audio_seconds: float


@dataclass(frozen=True, slots=True)
class SpeechMetrics:
    """How fast one reply turned into audio; times are seconds after the reply began."""

    time_to_first_token: float | None = None
    time_to_first_sentence: float | None = None
    time_to_first_audio: float | None = None
    synth_seconds: float = 0.0
    audio_seconds: float = 0.0
    sentences: int = 0
    sentences_played: int = 0
    interrupted: bool = False

    @property
    def real_time_factor(self) -> float | None:
        """Synthesis seconds per audio second (below 1 is faster than real time)."""
        return self.synth_seconds / self.audio_seconds if self.audio_seconds > 0 else None


@dataclass(frozen=True, slots=True, kw_only=True)
class UtteranceWritten(Event):
    """An utterance is finished (or was cut); its audio is where ``path`` says."""

    kind: ClassVar[str] = "utterance_written"
    creature: str
    utterance_id: str
    path: str | None
    duration: float
    aborted: bool
    metrics: SpeechMetrics = field(default_factory=SpeechMetrics)


__all__ = [
    "SentenceQueued",
    "SentenceSynthesized",
    "SpeechCut",
    "SpeechMetrics",
    "UtteranceWritten",
]
