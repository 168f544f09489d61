"""The head start's child process: one llama.cpp server, loaded and served until stdin
closes (``server_process.ServerProcess`` starts it; see there).

It is run by its path with ``python -P`` and imports only the standard library and
``xllamacpp``: run as ``python -m terrarium.llm.server_process`` it first imported the
``terrarium`` package and its layers' machinery (``lazy``, ``ast``, ``pathlib``…), ~30 ms
of CPU before the model could start loading, on the path a second start waits on. ``-P``
keeps this folder off ``sys.path`` (its ``types.py`` would hide the standard library's).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

__all__ = [
    "LLVM_BLOCKTIME",
    "LLVM_LIBRARY",
    "OPENMP_ENV",
    "SAMPLING_SEED",
    "WAIT_POLICY",
    "llama_params",
    "load_openmp",
    "openmp_env",
    "openmp_runtime",
    "serve",
]

SAMPLING_SEED = 42
"""The seed of every request that names none. llama.cpp's default draws a new one per
request, so the same conversation gave another reply on each run (at the creatures'
temperature 0.2: four identical requests, four replies), which read as a wrong prompt-cache
restore; a restored slot gives the evaluated one's logprobs exactly."""

WAIT_POLICY = "PASSIVE"
"""OpenMP's wait policy for llama.cpp's threads unless the user set ``OMP_WAIT_POLICY``:
idle workers sleep rather than spin (why, and the A/B that chose it: docs/performance.md,
"The engine"). libgomp reads it once, when it loads."""

OPENMP_ENV = "TERRARIUM_OPENMP"
"""Which OpenMP runtime runs llama.cpp's threads: ``gnu`` (unset: the binding's own
libgomp, :data:`WAIT_POLICY`) or ``llvm`` (LLVM's libomp, loaded before the binding, whose
``GOMP_*`` entry points it answers: its threads spin for ``KMP_BLOCKTIME`` ms after a
parallel region, yielding the core while they do, and then sleep)."""

LLVM_LIBRARY = "libomp.so.5"  # Debian's libomp5
LLVM_BLOCKTIME = "20"
"""``KMP_BLOCKTIME`` (ms) under ``llvm`` unless the user set it: longer than the gap
between two tokens of a reply (its threads spin through a reply), far shorter than the
gap between two replies (asleep when idle); docs/performance.md, "The engine"."""

_loaded: list[str] = []  # the runtime this process loaded before the binding, if any


def openmp_runtime(environ: Mapping[str, str]) -> str:
    """``gnu`` or ``llvm``, as :data:`OPENMP_ENV` says; ValueError for anything else."""
    raw = environ.get(OPENMP_ENV, "").strip().lower()
    if raw in ("", "gnu", "gomp", "libgomp"):
        return "gnu"
    if raw in ("llvm", "libomp"):
        return "llvm"
    raise ValueError(f"{OPENMP_ENV}={raw!r} is neither gnu (the default) nor llvm")


def openmp_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The settings the runtime reads that ``environ`` leaves to us: the wait policy
    (libomp reads it too, as no spinning unless ``KMP_BLOCKTIME`` is set), and under
    ``llvm`` its block time."""
    out = {} if "OMP_WAIT_POLICY" in environ else {"OMP_WAIT_POLICY": WAIT_POLICY}
    try:
        llvm = openmp_runtime(environ) == "llvm"
    except ValueError:  # reported where the server starts (``embedded``)
        llvm = False
    if llvm and "KMP_BLOCKTIME" not in environ:
        out["KMP_BLOCKTIME"] = LLVM_BLOCKTIME
    return out


def load_openmp(environ: Mapping[str, str] | None = None) -> str | None:
    """Before the binding is imported: under ``llvm`` (as ``environ``, by default
    ``os.environ``, says), load libomp into the global symbol scope (the binding's
    ``GOMP_*`` and ``omp_*`` calls then bind to it rather than to libgomp, its own
    dependency) and start it, so it reads its settings (``KMP_BLOCKTIME``...) from the
    process's environment now. None when done or not asked for; else the one-line reason
    the model runs under GNU OpenMP after all."""
    env = os.environ if environ is None else environ
    try:
        if openmp_runtime(env) != "llvm":
            return None
    except ValueError as exc:
        return f"{exc}; the model runs under GNU OpenMP"
    if _loaded:
        return None
    if "xllamacpp" in sys.modules:
        return (f"{OPENMP_ENV}=llvm came after llama.cpp loaded in this process; it runs "
                "under GNU OpenMP")
    import ctypes  # here: not on the start path of the default runtime

    try:
        lib = ctypes.CDLL(LLVM_LIBRARY, mode=ctypes.RTLD_GLOBAL)
        lib.omp_get_max_threads()  # starts the runtime: it reads KMP_BLOCKTIME & co. now
    except (OSError, AttributeError) as exc:
        return (f"{OPENMP_ENV}=llvm, but LLVM's OpenMP runtime ({LLVM_LIBRARY}) did not "
                f"load ({exc}; on Debian: apt-get install libomp5); the model runs under "
                "GNU OpenMP")
    _loaded.append("llvm")
    return None


def llama_params(xllamacpp: Any, shape: Any) -> Any:
    """llama.cpp's start parameters for ``shape`` (a ``server_process.ServerShape``, or
    its fields as attributes): each one with the reason for it."""
    params = xllamacpp.CommonParams()
    params.model.path = shape.model
    params.n_parallel = shape.slots
    params.n_ctx = shape.ctx_per_slot * shape.slots
    params.cache_prompt = True
    params.hostnames = ["127.0.0.1"]
    params.port = shape.port
    # Two thread counts: ``cpuparams`` decodes one token at a time (generation), the
    # batch ones evaluate prompts. A token's graph is ~30 layers of small operations with a
    # barrier after each; with two threads and OpenMP's passive waiting every barrier is
    # a sleep and a wake-up, and one generation thread has none (no OpenMP region at all),
    # but it gets one share of a busy machine's cores, not two: on a busy 2-core machine
    # one thread generated 1.1-1.7x slower (docs/performance-history.md, "Session 11"), so
    # ``gen_threads`` is None (the same as ``threads``) unless asked for.
    gen = getattr(shape, "gen_threads", None)
    params.cpuparams.n_threads = gen or shape.threads
    params.cpuparams_batch.n_threads = shape.threads
    params.endpoint_slots = True
    # A prompt is evaluated in batches of this many tokens, and the server looks at its
    # queue between two: a request on another slot starts, and a stopped one (a turn
    # cut short, the run ending while a prefix is still evaluated in the background)
    # ends, after at most one batch rather than after the whole prompt (llama.cpp's
    # default batch is 2,048 tokens: a run that ended during a first start's warm-up
    # waited 95 s for the router's prefix on a busy machine before it could exit).
    params.n_batch = shape.batch
    params.n_ubatch = shape.batch  # a micro-batch no larger than the batch
    if shape.slot_save_dir is not None:
        # llama.cpp appends the file name to this string as is: the separator is ours
        params.slot_save_path = shape.slot_save_dir + os.sep
    # Flash attention off by default: on this 2-core CPU with short per-turn prompts it
    # costs more than it saves (measured: 27 new tokens 131 ms off vs 160 ms on, decoding
    # 9.6 vs 10.5 ms per token; session 13, CPU time: a turn's first token 137 vs 162 ms,
    # a generated token 26.3 vs 28.2 ms). It wins on long prompts: the router's 720-token
    # prefix took ~10 % less CPU with it, the one thing bare xllamacpp ("auto": on) does
    # faster under the same wait policy (docs/performance.md, "The engine").
    # Worker threads sleep rather than busy-wait (llama.cpp's default poll is 50) once a
    # request is done or stopped: the speech synthesizer needs the cores right then
    # (first-piece synthesis p50 114-123 ms against 135-140 ms with polling, same speed).
    params.cpuparams.poll = shape.poll
    params.cpuparams_batch.poll = shape.poll
    fa = xllamacpp.llama_flash_attn_type
    params.flash_attn_type = (fa.LLAMA_FLASH_ATTN_TYPE_ENABLED if shape.flash_attention
                              else fa.LLAMA_FLASH_ATTN_TYPE_DISABLED)
    params.verbosity = shape.verbosity
    # No empty warm-up decode at load: every start sends real requests at once (a prefix
    # restore and its check, or the prefix's evaluation), which warm the same pages and
    # threads; the warm-up only delayed them (model load 3.6 -> 0.7 s median here under
    # load, with the machine busy).
    params.warmup = False
    # No fitting of the parameters to the device's memory: on a CPU there is nothing to
    # fit, and the fit loads the model once more to find that out (model load CPU time
    # 0.52 -> 0.32 s here).
    params.fit_params = False
    params.sampling.seed = SAMPLING_SEED  # the same conversation, the same reply
    return params


def serve(shape: Any) -> int:
    """Load the model, say where it listens on stdout, serve until stdin closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    began = time.perf_counter()
    notice = load_openmp()  # the parent says it (this process's stderr is a log file)
    try:
        import xllamacpp

        server = xllamacpp.Server(llama_params(xllamacpp, shape))
        address = str(server.listening_address)
    except Exception as exc:  # the binding raises plain exceptions
        print(f"the model server did not start: {exc}", file=sys.stderr, flush=True)  # the log
        print(json.dumps({"error": str(exc)}), flush=True)
        return 1
    url = address if address.startswith("http") else f"http://{address}"
    print(json.dumps({"url": url, "seconds": time.perf_counter() - began,
                      **({"notice": notice} if notice else {})}), flush=True)
    with contextlib.suppress(OSError):
        while sys.stdin.buffer.read(4096):
            pass
    os._exit(0)  # at once: the server's own shutdown has nothing to save


if __name__ == "__main__":
    raise SystemExit(serve(SimpleNamespace(**json.loads(sys.argv[1]))))
