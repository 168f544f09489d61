"""Voice output: sentence segmentation, speakable text, Piper synthesis, audio sinks, barge-in.

Import the pieces from here; heavy dependencies (piper, onnxruntime, sounddevice) load only
when a voice is actually used.
"""

from terrarium.errors import AudioDeviceUnavailable, VoiceError, VoiceFileMissing
from terrarium.voice.audio import (
    AudioSink,
    DeviceSink,
    NullAudioSink,
    TeeSink,
    UtteranceAudio,
    WavFileSink,
    default_audio_sink,
    device_unavailable_reason,
)
from terrarium.voice.metrics import UtteranceMetrics
from terrarium.voice.segment import SegmenterConfig, SentenceSegmenter, split_sentences
from terrarium.voice.sink import CollectOutput, CutReport, OutputSink, PrintOutput
from terrarium.voice.speakable import FenceFilter, to_speakable
from terrarium.voice.synth import (
    AudioClip,
    CallableSynthesizer,
    PiperSynthesizer,
    Synthesizer,
    default_synthesizer,
    voice_model_path,
)
from terrarium.voice.tts import TTSOutput, UtteranceResult

__all__ = [
    "AudioClip",
    "AudioDeviceUnavailable",
    "AudioSink",
    "CallableSynthesizer",
    "CollectOutput",
    "CutReport",
    "DeviceSink",
    "FenceFilter",
    "NullAudioSink",
    "OutputSink",
    "PiperSynthesizer",
    "PrintOutput",
    "SegmenterConfig",
    "SentenceSegmenter",
    "Synthesizer",
    "TTSOutput",
    "TeeSink",
    "UtteranceAudio",
    "UtteranceMetrics",
    "UtteranceResult",
    "VoiceError",
    "VoiceFileMissing",
    "WavFileSink",
    "default_audio_sink",
    "default_synthesizer",
    "device_unavailable_reason",
    "split_sentences",
    "to_speakable",
    "voice_model_path",
]
