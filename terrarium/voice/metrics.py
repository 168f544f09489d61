"""Per-utterance latency and synthesis figures, measured from ``begin()``."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from terrarium.events import SpeechMetrics


class UtteranceMetrics(BaseModel):
    """How fast one reply turned into audio. Times are seconds after ``begin()``."""

    model_config = ConfigDict(extra="forbid")

    utterance_id: str
    time_to_first_token: float | None = Field(default=None, description="First write().")
    time_to_first_sentence: float | None = Field(
        default=None, description="First complete sentence queued for synthesis."
    )
    time_to_first_audio: float | None = Field(
        default=None, description="First sentence synthesized and handed to the audio sink."
    )
    synth_seconds: float = Field(default=0.0, description="Wall time spent synthesizing.")
    audio_seconds: float = Field(default=0.0, description="Audio produced.")
    sentences: int = Field(default=0, description="Sentences queued for synthesis.")
    sentences_played: int = 0
    interrupted: bool = False

    @property
    def real_time_factor(self) -> float | None:
        """Synthesis seconds per audio second (below 1 is faster than real time)."""
        if self.audio_seconds <= 0:
            return None
        return self.synth_seconds / self.audio_seconds

    def summary(self) -> str:
        """One log line: the figures a user asks about."""
        return speech_summary(self.utterance_id, self)


def speech_summary(utterance_id: str, m: UtteranceMetrics | SpeechMetrics) -> str:
    """One log line of an utterance's figures (this model's or the event's)."""

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v * 1000:.0f} ms"

    rtf = m.real_time_factor
    return (
        f"{utterance_id}: first token {ms(m.time_to_first_token)}, "
        f"first sentence {ms(m.time_to_first_sentence)}, "
        f"first audio {ms(m.time_to_first_audio)}, "
        f"{m.sentences} sentences, {m.audio_seconds:.2f} s audio, "
        f"RTF {'-' if rtf is None else f'{rtf:.3f}'}"
        + (" (interrupted)" if m.interrupted else "")
    )


__all__ = [
    "UtteranceMetrics",
    "speech_summary",
]
