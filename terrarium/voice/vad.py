"""Voice activity detection: silero-vad run locally with onnxruntime, and the cutter that
turns its per-window speech probabilities into utterances.

The ``silero-vad`` wheel is installed with ``--no-deps`` (its torch dependency is far too
heavy for one small ONNX file); only its bundled ``data/silero_vad.onnx`` is used, and the
package itself is never imported (its ``__init__`` imports torch).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from terrarium.errors import VoiceFileMissing
from terrarium.voice.speech_config import VadSettings

__all__ = [
    "CONTEXT",
    "SAMPLE_RATE",
    "WINDOW",
    "SileroVad",
    "SpeechProbability",
    "SpeechStarted",
    "Utterance",
    "UtteranceCutter",
    "VadSettings",
    "silero_model_path",
]

SAMPLE_RATE = 16_000
WINDOW = 512  # samples per model call at 16 kHz (32 ms), as silero-vad v5 requires
CONTEXT = 64  # samples of the previous window the v5 model expects in front of each window


class SpeechProbability(Protocol):
    """Speech probability of one 512-sample window at 16 kHz; ``reset`` starts a new stream."""

    def __call__(self, window: np.ndarray) -> float: ...

    def reset(self) -> None: ...


def silero_model_path() -> Path:
    """Where the ``silero-vad`` wheel put its ONNX model (found without importing it)."""
    spec = importlib.util.find_spec("silero_vad")
    if spec is not None and spec.submodule_search_locations:
        for base in spec.submodule_search_locations:
            path = Path(base) / "data" / "silero_vad.onnx"
            if path.is_file():
                return path
    raise VoiceFileMissing(
        "the silero-vad model (silero_vad/data/silero_vad.onnx) is not installed",
        suggestion='pip install --no-deps "silero-vad==5.1.2" (scripts/setup.sh does this)')


class SileroVad:
    """silero-vad v5 on onnxruntime: one window in, one probability out; the recurrent
    state and the 64-sample context carry over between windows of one stream."""

    def __init__(self, model: Path | None = None) -> None:
        import onnxruntime as ort  # heavy: loaded only when speech input is used

        opts = ort.SessionOptions()
        opts.inter_op_num_threads = 1
        opts.intra_op_num_threads = 1
        self._session: Any = ort.InferenceSession(
            str(model or silero_model_path()), sess_options=opts,
            providers=["CPUExecutionProvider"])
        inputs = {i.name: i for i in self._session.get_inputs()}
        self._outputs = [o.name for o in self._session.get_outputs()]
        # read the names from the model rather than assume them: audio, state, rate
        self._state_name = next(n for n in inputs if "state" in n)
        self._rate_name = next(n for n in inputs if n == "sr" or "rate" in n)
        self._audio_name = next(n for n in inputs if n not in (self._state_name, self._rate_name))
        shape = inputs[self._state_name].shape
        self._state_shape = tuple(d if isinstance(d, int) else 1 for d in shape)
        self.reset()

    def reset(self) -> None:
        self._state = np.zeros(self._state_shape, dtype=np.float32)
        self._context = np.zeros(CONTEXT, dtype=np.float32)

    def __call__(self, window: np.ndarray) -> float:
        if window.shape != (WINDOW,):
            raise ValueError(f"silero-vad takes {WINDOW} samples at a time, not {window.shape}")
        x = np.concatenate([self._context, window.astype(np.float32)])[None, :]
        out = self._session.run(self._outputs, {
            self._audio_name: x, self._state_name: self._state,
            self._rate_name: np.array(SAMPLE_RATE, dtype=np.int64)})
        prob, self._state = out[0], out[1]
        self._context = window[-CONTEXT:].astype(np.float32)
        return float(np.asarray(prob).reshape(-1)[0])


@dataclass(frozen=True, slots=True)
class SpeechStarted:
    """The user has been speaking for ``min_speech_ms``: the moment to barge in."""

    at: float  # seconds into the stream


@dataclass(frozen=True, slots=True)
class Utterance:
    """One stretch of speech (with padding), 16 kHz mono float32."""

    samples: np.ndarray
    start: float
    end: float


class UtteranceCutter:
    """Feeds audio through a ``SpeechProbability`` window by window and reports
    ``SpeechStarted`` and ``Utterance`` events. Time is counted in samples fed, never read
    from a clock, so the same audio always gives the same cuts."""

    def __init__(self, vad: SpeechProbability, settings: VadSettings | None = None) -> None:
        self.vad = vad
        self.settings = settings or VadSettings()
        ms = SAMPLE_RATE // 1000
        self._pad = self.settings.speech_pad_ms * ms
        self._min_speech = self.settings.min_speech_ms * ms
        self._min_silence = self.settings.min_silence_ms * ms
        self._max = int(self.settings.max_utterance_s * SAMPLE_RATE)
        self.reset()

    def reset(self) -> None:
        """A new stream (the next WAV file): nothing carries over."""
        self.vad.reset()
        self._pending = np.zeros(0, dtype=np.float32)
        self._history = np.zeros(0, dtype=np.float32)  # the last `pad` samples before speech
        self._speech: list[np.ndarray] = []
        self._pos = 0  # samples fed to the model so far
        self._start = 0
        self._voiced = 0  # samples of speech since the start (silence excluded)
        self._silence = 0
        self._announced = False

    @property
    def in_speech(self) -> bool:
        return bool(self._speech)

    def feed(self, samples: np.ndarray) -> list[SpeechStarted | Utterance]:
        audio = np.concatenate([self._pending, np.asarray(samples, dtype=np.float32).ravel()])
        events: list[SpeechStarted | Utterance] = []
        n = len(audio) // WINDOW
        for i in range(n):
            events.extend(self._window(audio[i * WINDOW:(i + 1) * WINDOW]))
        self._pending = audio[n * WINDOW:]
        return events

    def flush(self) -> list[SpeechStarted | Utterance]:
        """End of the stream: speech still going is an utterance (if long enough)."""
        events: list[SpeechStarted | Utterance] = []
        if self._pending.size:
            tail = np.zeros(WINDOW, dtype=np.float32)
            tail[:self._pending.size] = self._pending
            events.extend(self._window(tail))
        if self._speech:
            events.extend(self._close())
        self.reset()
        return events

    def _window(self, window: np.ndarray) -> list[SpeechStarted | Utterance]:
        prob = self.vad(window)
        events: list[SpeechStarted | Utterance] = []
        s = self.settings
        if not self._speech:
            if prob >= s.threshold:
                self._speech = [self._history, window]
                self._start = self._pos - self._history.size
                self._voiced, self._silence = WINDOW, 0
            else:
                keep = np.concatenate([self._history, window])
                self._history = keep[keep.size - self._pad:] if self._pad else keep[:0]
        else:
            self._speech.append(window)
            if prob < s.off_threshold:
                self._silence += WINDOW
            else:
                if prob >= s.threshold or self._silence == 0:
                    self._voiced += WINDOW + self._silence
                    self._silence = 0
        self._pos += WINDOW
        if self._speech and not self._announced and self._voiced >= max(self._min_speech, 1):
            self._announced = True
            events.append(SpeechStarted(at=(self._pos - self._voiced) / SAMPLE_RATE))
        if self._speech and (self._silence >= max(self._min_silence, 1)
                             or self._pos - self._start >= self._max):
            events.extend(self._close())
        return events

    def _close(self) -> list[SpeechStarted | Utterance]:
        audio = np.concatenate(self._speech)
        # keep `pad` samples of the trailing silence, drop the rest
        drop = max(0, self._silence - self._pad)
        if drop:
            audio = audio[:audio.size - drop]
        voiced, start = self._voiced, self._start
        self._speech = []
        self._history = np.zeros(0, dtype=np.float32)
        self._voiced = self._silence = 0
        announced, self._announced = self._announced, False
        if voiced < self._min_speech or not announced:
            return []
        return [Utterance(samples=audio, start=start / SAMPLE_RATE,
                          end=(start + audio.size) / SAMPLE_RATE)]
