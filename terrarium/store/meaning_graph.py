"""The sentence encoder's int8 graph: all-MiniLM-L6-v2 written as an ONNX graph from its
safetensors weights and quantized to int8, once, by ``terrarium models``.

Why: every voice reply embeds the user's ask before the speaker's model request, and numpy's
float32 forward pass costs ~10 ms of CPU for a 13-token ask, most of it reading the six
layers' 42 MB of weights for 13 rows (memory-bound). onnxruntime runs the same graph with
int8 weights (``MatMulInteger`` on the CPU's VNNI) in ~1.7 ms on one thread
(docs/performance-history.md, session 15).

How: the graph is BERT's (``store/meaning.py``'s numpy pass, node for node) up to the last
hidden states; pooling stays in numpy. onnxruntime's dynamic quantization
(``quantize_dynamic``) quantizes the weights per output channel and each product's input
per call (one scale a tensor). Quantized plainly, BERT's inputs have a few channels far
larger than the rest, and the vectors drift (cosine to float32 down to 0.82). Two things
bring them back within 0.99 of float32's: the inputs are smoothed first (SmoothQuant: each
input channel divided by ``s = max|x|^a / max|w|^(1-a)`` and the weight's column multiplied
by it, exact in float; the maxima are taken over :data:`CALIBRATION` by the numpy pass), and
the feed-forward output products of the first three layers (whose inputs, after GELU, are
the least even) stay float32.

The ``onnx`` package writes the graph; it is needed only here, at ``terrarium models`` time
(scripts/setup.sh), never at run time. Without it, nothing is built and numpy runs the model.
"""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from terrarium.store.meaning import DIM, INT8_FILE, Encoder, padded, read_safetensors

__all__ = ["CALIBRATION", "FLOAT_PRODUCTS", "SMOOTHING", "build", "graph"]

SMOOTHING = 0.7
"""SmoothQuant's ``a``: how much of an input channel's range moves into the weights."""
FLOAT_PRODUCTS = ("encoder.layer.0.out", "encoder.layer.1.out", "encoder.layer.2.out")
"""The products kept float32 (the first three layers' feed-forward outputs)."""
CALIBRATION = (
    "Hello!", "Good morning, how are you today?", "Thanks, that's all for now.",
    "What colour is my car?", "Where did I say I left my keys?", "How many cousins do I have?",
    "What's the name of my dog again?", "When is my sister's wedding?",
    "Which medicine am I allergic to?", "Do you remember what I do for a living?",
    "I drive a blue Volvo.", "My sister's wedding is in Lisbon next June.",
    "I'm allergic to penicillin, it brings me out in hives.",
    "I work as a nurse on the night shift at the children's hospital.",
    "Our neighbour's dog barks all night long and it drives me mad.",
    "I bike to work on my old Raleigh when it isn't raining.",
    "My grandmother grew up on a small island off the coast of Scotland.",
    "I moved to Berlin in 2019 and I still can't speak much German.",
    "Set a timer for ten minutes.", "Remind me to call the dentist at 3 pm tomorrow.",
    "Turn the volume down a bit.", "Can you tell me a joke about penguins?",
    "What's the weather going to be like this weekend?", "Stop.", "Never mind, forget it.",
    "My favourite band is Radiohead, but lately I've been listening to a lot of jazz.",
    "I have two kids, Sam who is seven and Maya who just turned four.",
    "Actually no, my car is green, not blue.", "I don't eat meat any more.",
    "Could you summarise what we talked about yesterday evening?",
    "The meeting with Priya got moved from Tuesday to Thursday at 10:30.",
    "Write a short poem about autumn leaves.", "Is 17 a prime number?",
    "Why is the sky blue?", "I'm feeling a bit tired and stressed today.",
    "We're planning a trip to Japan in April to see the cherry blossoms.",
    "My password hint is the name of my first school.", "What did I tell you about my boss?",
    "I play five-a-side football every Wednesday night with people from work.",
    "She said: \"don't forget the milk!\"", "The train leaves at 07:45 from platform 9.",
)


def _maxima(enc: Encoder) -> list[tuple[np.ndarray, ...]]:
    """Each layer's four products' inputs' largest magnitude per channel, over
    :data:`CALIBRATION` (by the float32 numpy pass)."""
    out: list[tuple[np.ndarray, ...]] = []
    for text in CALIBRATION:
        taps: list[tuple[np.ndarray, ...]] = []
        enc.hidden(*padded([enc.tokenizer.ids(text)]), taps=taps)
        seen = [tuple(np.abs(t).max((0, 1)) for t in layer) for layer in taps]
        out = seen if not out else [tuple(np.maximum(a, b) for a, b in zip(o, s, strict=True))
                                    for o, s in zip(out, seen, strict=True)]
    return out


class _Graph:
    """The nodes and constants of the graph being written (``onnx.helper``'s protos)."""

    def __init__(self, onnx: Any) -> None:
        self.h = onnx.helper
        self.nh = onnx.numpy_helper
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self.quantized: list[str] = []

    def const(self, name: str, value: Any, dtype: Any = np.float32) -> str:
        self.inits.append(self.nh.from_array(np.ascontiguousarray(value, dtype=dtype), name))
        return name

    def op(self, kind: str, inputs: list[str], name: str = "", outputs: int = 1,
           **attrs: Any) -> Any:
        name = name or f"{kind}_{len(self.nodes)}"
        outs = [f"{name}:{i}" for i in range(outputs)]
        self.nodes.append(self.h.make_node(kind, inputs, outs, name=name, **attrs))
        return outs[0] if outputs == 1 else outs

    def layer_norm(self, x: str, w: dict[str, np.ndarray], p: str) -> str:
        return self.op("LayerNormalization", [x, self.const(p + ".weight", w[p + ".weight"]),
                                              self.const(p + ".bias", w[p + ".bias"])],
                       axis=-1, epsilon=1e-12)

    def linear(self, x: str, weight: np.ndarray, bias: np.ndarray, name: str,
               peak: np.ndarray) -> str:
        """``x @ weight.T + bias``; smoothed by ``peak`` (the input's per-channel maxima)
        and marked for int8 unless ``name`` is one of :data:`FLOAT_PRODUCTS`."""
        weight = np.asarray(weight, dtype=np.float32)
        if name not in FLOAT_PRODUCTS:
            top = np.maximum(np.abs(weight).max(0), 1e-5)
            s = (np.maximum(peak, 1e-5) ** SMOOTHING / top ** (1 - SMOOTHING))
            x = self.op("Mul", [x, self.const(name + ".unsmooth", 1.0 / s)])
            weight = weight * s[None, :].astype(np.float32)
            self.quantized.append(name)
        y = self.op("MatMul", [x, self.const(name + ".weight", weight.T)], name=name)
        return self.op("Add", [y, self.const(name + ".bias", bias)])


def graph(enc: Encoder, onnx: Any) -> tuple[Any, list[str]]:
    """The float32 ONNX model of ``enc``'s BERT (ids and mask in, last hidden states out),
    its products' inputs smoothed, and the names of the products to quantize."""
    w = read_safetensors(enc.folder / "model.safetensors")
    peaks = _maxima(enc)
    g = _Graph(onnx)
    e = g.op("Gather", [g.const("word", w["embeddings.word_embeddings.weight"]), "input_ids"])
    n = g.op("Shape", ["input_ids"], start=1, end=2)
    zero = g.const("zero", [0], np.int64)
    pos = g.op("Slice", [g.const("pos", w["embeddings.position_embeddings.weight"]), zero, n,
                         zero])
    e = g.op("Add", [g.op("Add", [e, pos]),
                     g.const("type0", w["embeddings.token_type_embeddings.weight"][0])])
    x = g.layer_norm(e, w, "embeddings.LayerNorm")
    keep = g.op("Sub", [g.const("one", 1.0), "attention_mask"])
    bias = g.op("Unsqueeze", [g.op("Mul", [keep, g.const("minus", -1e9)]),
                              g.const("axes", [1, 2], np.int64)])
    heads = g.const("heads", [0, 0, 12, DIM // 12], np.int64)
    joined = g.const("joined", [0, 0, DIM], np.int64)
    thirds = g.const("thirds", [DIM] * 3, np.int64)
    scale = g.const("scale", 1 / math.sqrt(DIM // 12))
    for i, peak in enumerate(peaks):
        p = f"encoder.layer.{i}."
        qkv = g.linear(x, np.concatenate([w[p + f"attention.self.{m}.weight"]
                                          for m in ("query", "key", "value")]),
                       np.concatenate([w[p + f"attention.self.{m}.bias"]
                                       for m in ("query", "key", "value")]),
                       p + "qkv", peak[0])
        q, k, v = g.op("Split", [qkv, thirds], outputs=3, axis=-1)
        q, v = (g.op("Transpose", [g.op("Reshape", [t, heads])], perm=[0, 2, 1, 3])
                for t in (q, v))
        k = g.op("Transpose", [g.op("Reshape", [k, heads])], perm=[0, 2, 3, 1])
        s = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), bias])
        ctx = g.op("MatMul", [g.op("Softmax", [s], axis=-1), v])
        ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]), joined])
        a = g.linear(ctx, w[p + "attention.output.dense.weight"],
                     w[p + "attention.output.dense.bias"], p + "ao", peak[1])
        x = g.layer_norm(g.op("Add", [a, x]), w, p + "attention.output.LayerNorm")
        h = g.linear(x, w[p + "intermediate.dense.weight"], w[p + "intermediate.dense.bias"],
                     p + "inter", peak[2])
        erf = g.op("Erf", [g.op("Div", [h, g.const(p + "root2", math.sqrt(2.0))])])
        h = g.op("Mul", [g.op("Mul", [h, g.const(p + "half", 0.5)]),
                         g.op("Add", [erf, g.const(p + "one", 1.0)])])
        o = g.linear(h, w[p + "output.dense.weight"], w[p + "output.dense.bias"], p + "out",
                     peak[3])
        x = g.layer_norm(g.op("Add", [o, x]), w, p + "output.LayerNorm")
    g.nodes.append(g.h.make_node("Identity", [x], ["hidden"], name="hidden"))
    t = onnx.TensorProto
    model = g.h.make_model(
        g.h.make_graph(g.nodes, "all-MiniLM-L6-v2", [
            g.h.make_tensor_value_info("input_ids", t.INT64, ["batch", "tokens"]),
            g.h.make_tensor_value_info("attention_mask", t.FLOAT, ["batch", "tokens"])],
            [g.h.make_tensor_value_info("hidden", t.FLOAT, ["batch", "tokens", DIM])],
            g.inits),
        opset_imports=[g.h.make_opsetid("", 17)], producer_name="terrarium")
    return model, g.quantized


def build(folder: Path) -> Path | None:
    """The int8 graph of the model extracted in ``folder``, written there first when it is
    not (or was written before the weights were); None when the ``onnx`` package (or
    onnxruntime's quantizer) is not installed."""
    target = folder / INT8_FILE
    weights = folder / "model.safetensors"
    if target.is_file() and target.stat().st_mtime >= weights.stat().st_mtime:
        return target  # built, and from these weights
    try:
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError:
        return None
    model, quantized = graph(Encoder(folder, int8=False), onnx)
    onnx.checker.check_model(model)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        plain, part = Path(tmp) / "float32.onnx", Path(tmp) / f"int8.{os.getpid()}.onnx"
        onnx.save(model, plain)
        quantize_dynamic(plain, part, weight_type=QuantType.QInt8, per_channel=True,
                         nodes_to_quantize=quantized, op_types_to_quantize=["MatMul"])
        part.replace(target)
    return target
