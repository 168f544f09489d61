"""The settings of speech in (``terrarium.yaml``'s ``transcription:`` block), kept apart
from the code that uses them so that reading a config loads no audio libraries."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["TranscriptionSettings", "VadSettings"]


class VadSettings(BaseModel):
    """When speech starts and ends (the thresholds are speech probabilities 0..1)."""

    model_config = ConfigDict(extra="forbid")

    threshold: float = Field(0.5, ge=0.0, le=1.0, description="Speech above this probability.")
    neg_threshold: float | None = Field(
        None, ge=0.0, le=1.0, description="Silence below this (default threshold - 0.15); "
        "between the two the current state holds, so speech does not flicker.")
    min_speech_ms: int = Field(
        250, ge=0, description="Speech shorter than this is no utterance (a cough, a click) "
        "and does not barge in.")
    min_silence_ms: int = Field(
        500, ge=0, description="Silence this long ends an utterance.")
    speech_pad_ms: int = Field(
        96, ge=0, description="Audio kept before the start and after the end of speech.")
    max_utterance_s: float = Field(
        30.0, gt=0, description="An utterance longer than this is cut and sent as it is.")

    @property
    def off_threshold(self) -> float:
        return self.neg_threshold if self.neg_threshold is not None \
            else max(0.0, self.threshold - 0.15)



class TranscriptionSettings(BaseModel):
    """The ``transcription:`` block of a terrarium: where speech goes to become text."""

    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(
        "http://localhost:8000/v1", description="Server root; `/audio/transcriptions` is "
        "added (faster-whisper-server: http://localhost:8000/v1, whisper.cpp server started "
        "with --inference-path /v1/audio/transcriptions: http://localhost:8080/v1, OpenAI: "
        "https://api.openai.com/v1).")
    model: str = Field("Systran/faster-whisper-small", description="The `model` form field.")
    api_key_env: str | None = Field(
        None, description="Environment variable holding the API key (sent as a Bearer "
        "token); none for a local server.")
    language: str | None = Field(None, description="ISO-639-1 language hint, e.g. `en`.")
    prompt: str | None = Field(None, description="Text to guide spelling (names, terms).")
    timeout: float = Field(30.0, gt=0, description="Seconds for one request.")
    retries: int = Field(2, ge=0, description="Further tries after a timeout, a lost "
                         "connection or a 5xx/429 answer.")
    vad: VadSettings = Field(default_factory=VadSettings,
                             description="Voice activity detection (runs locally).")

