"""Speech in: audio (WAV files or the microphone) → utterances (VAD) → text (transcription).

A source yields 16 kHz mono float32 chunks, and ``None`` where one stream ends (between WAV
files), so an utterance never spans two files. ``SpeechListener.texts`` yields each
utterance's text; when the user starts speaking it first calls ``on_speech`` — the
runtime's barge-in — so the assistant stops talking while the user is still speaking.
"""

from __future__ import annotations

import queue
import wave
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from pathlib import Path

import anyio
import anyio.lowlevel
import numpy as np

from terrarium.errors import AudioDeviceUnavailable, TranscriptionFailed
from terrarium.voice.transcribe import TranscriptionClient, encode_wav
from terrarium.voice.vad import SAMPLE_RATE, WINDOW, SpeechStarted, UtteranceCutter

__all__ = ["SpeechListener", "microphone_chunks", "read_wav", "wav_chunks"]

Chunk = np.ndarray | None


def read_wav(path: Path | str) -> np.ndarray:
    """A PCM WAV file as 16 kHz mono float32 (mixed down, resampled linearly)."""
    try:
        with wave.open(str(path), "rb") as wav:
            width, channels, rate = wav.getsampwidth(), wav.getnchannels(), wav.getframerate()
            raw = wav.readframes(wav.getnframes())
    except (OSError, EOFError, wave.Error) as exc:
        raise TranscriptionFailed(f"cannot read WAV file {str(path)!r}: {exc}",
                                  suggestion="give a PCM .wav file (8/16/32-bit)") from exc
    kinds = {1: (np.uint8, 128.0, 128.0), 2: ("<i2", 0.0, 32768.0), 4: ("<i4", 0.0, 2.0**31)}
    if width not in kinds:
        raise TranscriptionFailed(f"{str(path)!r} has {8 * width}-bit samples",
                                  suggestion="convert it to 16-bit PCM")
    dtype, offset, scale = kinds[width]
    audio = (np.frombuffer(raw, dtype=dtype).astype(np.float32) - offset) / scale
    audio = audio.reshape(-1, channels).mean(axis=1) if channels > 1 else audio
    if rate != SAMPLE_RATE and audio.size:
        n = round(audio.size * SAMPLE_RATE / rate)
        audio = np.interp(np.arange(n) * (rate / SAMPLE_RATE), np.arange(audio.size),
                          audio).astype(np.float32)
    return audio.astype(np.float32)


async def wav_chunks(paths: Iterable[Path | str], chunk: int = WINDOW * 8
                     ) -> AsyncIterator[Chunk]:
    """Each file in chunks, then ``None`` (the end of that stream)."""
    for path in paths:
        audio = await anyio.to_thread.run_sync(read_wav, path)
        for i in range(0, audio.size, chunk):
            yield audio[i:i + chunk]
            await anyio.lowlevel.checkpoint()  # let the team run between chunks, as it would live
        yield None


async def microphone_chunks(device: int | str | None = None,
                            block: int = WINDOW * 2) -> AsyncIterator[Chunk]:
    """The default (or given) input device at 16 kHz mono, until cancelled."""
    try:
        import sounddevice as sd  # optional extra: `pip install terrarium[audio]`
    except (ImportError, OSError) as exc:
        raise AudioDeviceUnavailable(
            f"--listen needs the sound device: {exc}",
            suggestion="pip install sounddevice and apt-get install libportaudio2, "
            "or give recorded speech with --wav FILE") from exc
    q: queue.Queue[np.ndarray] = queue.Queue(maxsize=1000)

    def callback(indata: np.ndarray, frames: int, when: object, status: object) -> None:
        try:
            q.put_nowait(indata[:, 0].copy())
        except queue.Full:  # the consumer is far behind: drop rather than block audio
            pass

    try:
        stream = sd.InputStream(samplerate=SAMPLE_RATE, channels=1, dtype="float32",
                                blocksize=block, device=device, callback=callback)
    except Exception as exc:  # PortAudioError and friends: say so plainly
        raise AudioDeviceUnavailable(f"the microphone cannot be opened: {exc}",
                                     suggestion="check the input device, or use --wav FILE"
                                     ) from exc
    with stream:
        while True:
            yield await anyio.to_thread.run_sync(q.get, abandon_on_cancel=True)


class SpeechListener:
    """Turns audio chunks into utterance texts, barging in when speech starts."""

    def __init__(self, cutter: UtteranceCutter, client: TranscriptionClient,
                 on_speech: Callable[[], Awaitable[None]] | None = None) -> None:
        self.cutter = cutter
        self.client = client
        self.on_speech = on_speech
        self.utterances = 0

    async def texts(self, chunks: AsyncIterator[Chunk]) -> AsyncIterator[str]:
        async for chunk in chunks:
            events = self.cutter.flush() if chunk is None else self.cutter.feed(chunk)
            for event in events:
                if isinstance(event, SpeechStarted):
                    if self.on_speech is not None:
                        await self.on_speech()
                    continue
                self.utterances += 1
                text = await self.client.transcribe(
                    encode_wav(event.samples), filename=f"utterance-{self.utterances}.wav")
                if text:
                    yield text
        for event in self.cutter.flush():  # a microphone stream cut off mid-speech
            if not isinstance(event, SpeechStarted):
                text = await self.client.transcribe(encode_wav(event.samples))
                if text:
                    yield text
