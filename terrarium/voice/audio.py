"""Where synthesized audio goes: WAV files (default) or the sound device.

An audio sink sees one utterance at a time: ``begin`` → ``play`` per sentence → ``finish``.
``play`` returns when the sentence is played (device) or written (file); ``abort`` stops
playback at once for a barge-in and keeps what was already written.
"""

from __future__ import annotations

import importlib.util
import re
import wave
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import anyio
from pydantic import BaseModel, ConfigDict

from terrarium.errors import AudioDeviceUnavailable, VoiceError
from terrarium.voice.synth import AudioClip

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class UtteranceAudio(BaseModel):
    """What a finished utterance left behind."""

    model_config = ConfigDict(extra="forbid")

    utterance_id: str
    path: Path | None = None
    duration: float = 0.0
    sample_rate: int = 0
    aborted: bool = False


@runtime_checkable
class AudioSink(Protocol):
    async def begin(self, utterance_id: str, sample_rate: int) -> None: ...

    async def play(self, clip: AudioClip) -> None: ...

    async def finish(self) -> UtteranceAudio: ...

    async def abort(self) -> UtteranceAudio: ...


class WavFileSink:
    """One WAV per utterance, ``<directory>/<utterance_id>.wav``, appended sentence by sentence."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self._wav: wave.Wave_write | None = None
        self._info: UtteranceAudio | None = None
        self._frames = 0

    def path_for(self, utterance_id: str) -> Path:
        name = _SAFE_NAME.sub("_", utterance_id).strip("._") or "utterance"
        return self.directory / f"{name}.wav"

    async def begin(self, utterance_id: str, sample_rate: int) -> None:
        if self._wav is not None:
            raise VoiceError("An utterance is already open on this WAV sink; finish it first.")
        path = self.path_for(utterance_id)
        self._wav = await anyio.to_thread.run_sync(self._open, path, sample_rate)
        self._info = UtteranceAudio(utterance_id=utterance_id, path=path, sample_rate=sample_rate)
        self._frames = 0

    def _open(self, path: Path, sample_rate: int) -> wave.Wave_write:
        path.parent.mkdir(parents=True, exist_ok=True)
        wav = wave.open(str(path), "wb")  # closed in finish()/abort()
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        return wav

    async def play(self, clip: AudioClip) -> None:
        if self._wav is None or self._info is None:
            raise VoiceError("play() was called with no open utterance; call begin() first.")
        if clip.sample_rate != self._info.sample_rate:
            raise VoiceError(
                f"A clip at {clip.sample_rate} Hz cannot go into a {self._info.sample_rate} Hz "
                "WAV file."
            )
        await anyio.to_thread.run_sync(self._wav.writeframes, clip.pcm)
        self._frames += clip.frames

    async def finish(self) -> UtteranceAudio:
        return await self._close(aborted=False)

    async def abort(self) -> UtteranceAudio:
        return await self._close(aborted=True)

    async def _close(self, *, aborted: bool) -> UtteranceAudio:
        if self._wav is None or self._info is None:
            raise VoiceError("No utterance is open on this WAV sink.")
        wav, info = self._wav, self._info
        self._wav, self._info = None, None
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(wav.close)
        rate = info.sample_rate
        return info.model_copy(
            update={"duration": self._frames / rate if rate else 0.0, "aborted": aborted}
        )


class NullAudioSink:
    """Discards audio but reports its duration (benchmarks, text-only runs)."""

    def __init__(self) -> None:
        self._info: UtteranceAudio | None = None

    async def begin(self, utterance_id: str, sample_rate: int) -> None:
        self._info = UtteranceAudio(utterance_id=utterance_id, sample_rate=sample_rate)

    async def play(self, clip: AudioClip) -> None:
        if self._info is None:
            raise VoiceError("play() was called with no open utterance; call begin() first.")
        self._info = self._info.model_copy(update={"duration": self._info.duration + clip.duration})

    async def finish(self) -> UtteranceAudio:
        info, self._info = self._info, None
        if info is None:
            raise VoiceError("No utterance is open on this sink.")
        return info

    async def abort(self) -> UtteranceAudio:
        info = await self.finish()
        return info.model_copy(update={"aborted": True})


def device_unavailable_reason() -> str | None:
    """Why the sound device cannot be used, or None when it can."""
    if importlib.util.find_spec("sounddevice") is None:
        return (
            "The sounddevice package is not installed, so audio goes to WAV files only "
            "(install it with `pip install sounddevice`)."
        )
    try:
        import sounddevice

        sounddevice.query_devices(kind="output")
    except Exception as exc:  # PortAudio raises its own types, or OSError without a library
        return f"No sound output device is available ({exc}); audio goes to WAV files only."
    return None


class DeviceSink(NullAudioSink):
    """Plays through the default sound device (optional ``sounddevice`` dependency).

    The utterance bookkeeping (duration, finish, abort) is :class:`NullAudioSink`'s.
    """

    def __init__(self) -> None:
        reason = device_unavailable_reason()
        if reason is not None:
            raise AudioDeviceUnavailable(reason)
        import sounddevice

        super().__init__()
        self._sd: Any = sounddevice

    async def play(self, clip: AudioClip) -> None:
        """Start playback and wait for it; cancellation (barge-in) stops the device."""
        import numpy

        if self._info is None:
            raise VoiceError("play() was called with no open utterance; call begin() first.")
        samples = numpy.frombuffer(clip.pcm, dtype="<i2")
        self._sd.play(samples, clip.sample_rate)
        try:
            await anyio.to_thread.run_sync(self._sd.wait, abandon_on_cancel=True)
        finally:
            self._sd.stop()  # on a barge-in this also releases the abandoned wait()
        await super().play(clip)

    async def abort(self) -> UtteranceAudio:
        self._sd.stop()
        return await super().abort()


class TeeSink:
    """Sends every clip to several sinks (e.g. the device and a WAV record)."""

    def __init__(self, *sinks: AudioSink) -> None:
        if not sinks:
            raise VoiceError("A tee sink needs at least one audio sink.")
        self.sinks = sinks

    async def begin(self, utterance_id: str, sample_rate: int) -> None:
        for sink in self.sinks:
            await sink.begin(utterance_id, sample_rate)

    async def play(self, clip: AudioClip) -> None:
        async with anyio.create_task_group() as tg:
            for sink in self.sinks:
                tg.start_soon(sink.play, clip)

    async def finish(self) -> UtteranceAudio:
        results = [await sink.finish() for sink in self.sinks]
        return _first_with_path(results)

    async def abort(self) -> UtteranceAudio:
        results = [await sink.abort() for sink in self.sinks]
        return _first_with_path(results)


def _first_with_path(results: list[UtteranceAudio]) -> UtteranceAudio:
    for r in results:
        if r.path is not None:
            return r
    return results[0]


def default_audio_sink(directory: Path | str, *, device: bool | None = None) -> AudioSink:
    """WAV files under ``directory``; also the sound device when asked (or, with None, when
    one exists). ``device=True`` without a device raises :class:`AudioDeviceUnavailable`."""
    wav = WavFileSink(directory)
    if device is False:
        return wav
    if device is None and device_unavailable_reason() is not None:
        return wav
    return TeeSink(DeviceSink(), wav)


__all__ = [
    "AudioSink",
    "DeviceSink",
    "NullAudioSink",
    "TeeSink",
    "UtteranceAudio",
    "WavFileSink",
    "default_audio_sink",
    "device_unavailable_reason",
]
