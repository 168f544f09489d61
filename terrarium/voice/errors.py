"""Voice errors: part of the one terrarium exception family."""

from __future__ import annotations

from terrarium.errors import TerrariumError


class VoiceError(TerrariumError):
    """Speech output could not be produced (misuse of a sink, a failed audio device)."""


class VoiceFileMissing(VoiceError):
    """The Piper voice model is not installed."""


class AudioDeviceUnavailable(VoiceError):
    """No sound device can be used; audio goes to WAV files instead."""
