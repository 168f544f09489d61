"""Per-utterance latency and synthesis figures, measured from ``begin()``."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


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

        def ms(v: float | None) -> str:
            return "-" if v is None else f"{v * 1000:.0f} ms"

        rtf = self.real_time_factor
        return (
            f"{self.utterance_id}: first token {ms(self.time_to_first_token)}, "
            f"first sentence {ms(self.time_to_first_sentence)}, "
            f"first audio {ms(self.time_to_first_audio)}, "
            f"{self.sentences} sentences, {self.audio_seconds:.2f} s audio, "
            f"RTF {'-' if rtf is None else f'{rtf:.3f}'}"
            + (" (interrupted)" if self.interrupted else "")
        )


__all__ = [
    "UtteranceMetrics",
]
