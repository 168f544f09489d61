"""The voice's optimized onnxruntime graph, kept between runs (second start of a voice team).

A tiny model shipped with onnxruntime stands in for the Piper voice: what is tested is the
file handling around the session, not the voice."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime
import pytest
from onnxruntime.datasets import get_example

from terrarium.voice import synth


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TERRARIUM_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "voice.onnx"
    shutil.copy(get_example("sigmoid.onnx"), path)
    return path


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Each model file a session was made from, with its optimization level."""
    seen: list[tuple[str, Any]] = []
    real = onnxruntime.InferenceSession

    def recording(path: str, sess_options: Any = None, **kw: Any) -> Any:
        seen.append((path, sess_options.graph_optimization_level))
        return real(path, sess_options=sess_options, **kw)

    monkeypatch.setattr(onnxruntime, "InferenceSession", recording)
    return seen


def run(session: Any) -> Any:
    x = np.zeros((3, 4, 5), dtype=np.float32)
    return session.run(None, {session.get_inputs()[0].name: x})[0]


def test_the_first_load_saves_the_optimized_graph_and_the_next_loads_it(
        model: Path, opened: list[tuple[str, Any]]) -> None:
    saved = synth.optimized_voice_path(model, onnxruntime.__version__)
    first = synth._session(model)
    assert saved.is_file() and not list(saved.parent.glob("*.part"))
    second = synth._session(model)
    assert opened == [(str(model), onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL),
                      (str(saved), onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL)]
    assert (run(second) == run(first)).all()


def test_a_saved_graph_that_does_not_load_is_replaced(
        model: Path, opened: list[tuple[str, Any]]) -> None:
    saved = synth.optimized_voice_path(model, onnxruntime.__version__)
    saved.parent.mkdir(parents=True)
    saved.write_bytes(b"half a file")
    session = synth._session(model)
    assert float(run(session)[0, 0, 0]) == 0.5  # sigmoid(0)
    assert [p for p, _ in opened] == [str(saved), str(model)]
    assert saved.stat().st_size > 100  # optimized again, for the next start


def test_a_changed_model_file_gets_another_saved_graph(model: Path) -> None:
    before = synth.optimized_voice_path(model, onnxruntime.__version__)
    model.write_bytes(model.read_bytes() + b"\0")
    assert synth.optimized_voice_path(model, onnxruntime.__version__) != before
    assert synth.optimized_voice_path(model, "0.0.0") != before
