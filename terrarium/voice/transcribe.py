"""Speech to text through an OpenAI-compatible ``/v1/audio/transcriptions`` endpoint.

One POST per utterance (multipart: ``file``, ``model``, optional ``language`` and
``prompt``; the answer is ``{"text": ...}``). faster-whisper-server, whisper.cpp's server
and hosted services all speak this form, so no speech model runs in terrarium itself.
"""

from __future__ import annotations

import io
import wave

import anyio
import httpx
import numpy as np

from terrarium import secrecy
from terrarium.errors import TranscriptionFailed
from terrarium.voice.speech_config import TranscriptionSettings
from terrarium.voice.vad import SAMPLE_RATE

__all__ = ["TranscriptionClient", "TranscriptionSettings", "encode_wav"]


def encode_wav(samples: np.ndarray, sample_rate: int = SAMPLE_RATE) -> bytes:
    """16-bit mono WAV bytes of float samples in -1..1."""
    pcm = (np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0) * 32767).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(pcm.tobytes())
    return buf.getvalue()


class TranscriptionClient:
    """Posts utterances and returns their text; failures become ``TranscriptionFailed``
    with the server's own words, after the configured retries."""

    def __init__(self, settings: TranscriptionSettings | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.settings = settings or TranscriptionSettings()
        self.url = self.settings.base_url.rstrip("/") + "/audio/transcriptions"
        self._transport = transport

    def _headers(self) -> dict[str, str]:
        env = self.settings.api_key_env
        if not env:
            return {}
        key = secrecy.env(env)
        if not key:
            raise TranscriptionFailed(
                f"transcription.api_key_env names {env!r}, which is not set",
                suggestion=f"export {env}=... or remove api_key_env for a local server")
        return {"Authorization": f"Bearer {key}"}

    def _form(self) -> dict[str, str]:
        s = self.settings
        form = {"model": s.model, "response_format": "json"}
        if s.language:
            form["language"] = s.language
        if s.prompt:
            form["prompt"] = s.prompt
        return form

    async def transcribe(self, wav: bytes, filename: str = "utterance.wav") -> str:
        """The text of one WAV utterance (stripped; may be empty for noise)."""
        s = self.settings
        headers = self._headers()
        last = ""
        async with httpx.AsyncClient(timeout=s.timeout, transport=self._transport) as http:
            for attempt in range(s.retries + 1):
                if attempt:
                    await anyio.sleep(min(0.25 * 2 ** (attempt - 1), 2.0))
                try:
                    resp = await http.post(
                        self.url, headers=headers, data=self._form(),
                        files={"file": (filename, wav, "audio/wav")})
                except httpx.TimeoutException:
                    last = f"no answer within {s.timeout:g} s"
                    continue
                except httpx.TransportError as exc:
                    last = f"cannot connect ({exc.__class__.__name__}: {exc})"
                    continue
                if resp.status_code >= 500 or resp.status_code == 429:
                    last = f"HTTP {resp.status_code}: {resp.text[:200]}"
                    continue
                if resp.status_code >= 400:
                    raise TranscriptionFailed(
                        f"{self.url} refused the audio: HTTP {resp.status_code}: "
                        f"{resp.text[:300]}",
                        suggestion="check transcription.model, .base_url and the API key")
                return _text_of(resp, self.url)
        raise TranscriptionFailed(
            f"transcription at {self.url} failed after {s.retries + 1} tries: {last}",
            suggestion="is the transcription server running? (see the README, Speech in)")


def _text_of(resp: httpx.Response, url: str) -> str:
    try:
        body = resp.json()
    except ValueError:
        # some servers answer text/plain when asked for `text`; accept it as the text
        return resp.text.strip()
    if not isinstance(body, dict) or not isinstance(body.get("text"), str):
        raise TranscriptionFailed(f"{url} answered without a text field: {resp.text[:200]}")
    return body["text"].strip()
