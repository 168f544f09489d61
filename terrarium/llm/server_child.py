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
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any

__all__ = [
    "LLVM_BLOCKTIME",
    "LLVM_LIBRARY",
    "OPENMP_ENV",
    "PEERS_ENV",
    "SAMPLING_SEED",
    "SHIM_ENV",
    "WAIT_POLICY",
    "CoreWatch",
    "llama_params",
    "load_openmp",
    "openmp_env",
    "openmp_runtime",
    "process_start",
    "serve",
    "spin_ms",
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
"""Which OpenMP runtime runs llama.cpp's threads: ``adaptive`` (unset: LLVM's libomp as
under ``llvm``, its block time set to 0 while other processes want the cores:
:class:`CoreWatch`), ``gnu`` (the binding's own libgomp, :data:`WAIT_POLICY`) or ``llvm``
(libomp, loaded before the binding, whose ``GOMP_*`` entry points it answers: its threads
spin for ``KMP_BLOCKTIME`` ms after a parallel region, yielding the core while they do,
and then sleep)."""

LLVM_LIBRARY = "libomp.so.5"  # Debian's libomp5
LLVM_BLOCKTIME = "20"
"""``KMP_BLOCKTIME`` (ms) under ``llvm`` unless the user set it: longer than the gap
between two tokens of a reply (its threads spin through a reply), far shorter than the
gap between two replies (asleep when idle); docs/performance.md, "The engine"."""

SHIM_ENV = "TERRARIUM_OPENMP_SHIM"
PEERS_ENV = "TERRARIUM_OPENMP_PEERS"
"""A folder of the processes that share a model server (``shared_server``): each one that
attaches to the server of process P leaves an empty file ``<folder>/<P>/<its pid>``, so the
server's :class:`CoreWatch` counts their CPU as its own (a worker's voice, say), not as
another program's."""
"""Under ``adaptive``: the path of the built ``openmp_adapt.c`` (``openmp_build``), or
``!`` and why it could not be built."""

_loaded: list[str] = []  # the runtime this process loaded before the binding, if any


def openmp_runtime(environ: Mapping[str, str]) -> str:
    """``adaptive`` (unset), ``gnu`` or ``llvm``, as :data:`OPENMP_ENV` says; ValueError
    else."""
    raw = environ.get(OPENMP_ENV, "").strip().lower()
    if raw in ("", "adaptive"):
        return "adaptive"
    if raw in ("gnu", "gomp", "libgomp"):
        return "gnu"
    if raw in ("llvm", "libomp"):
        return "llvm"
    raise ValueError(f"{OPENMP_ENV}={raw!r} is none of adaptive (the default), gnu, llvm")


def openmp_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The settings the runtime reads that ``environ`` leaves to us: the wait policy
    (libomp reads it too, as no spinning unless ``KMP_BLOCKTIME`` is set), and under
    ``llvm`` or ``adaptive`` its block time (``adaptive``: while the cores are free)."""
    out = {} if "OMP_WAIT_POLICY" in environ else {"OMP_WAIT_POLICY": WAIT_POLICY}
    try:
        llvm = openmp_runtime(environ) != "gnu"
    except ValueError:  # reported where the server starts (``embedded``)
        llvm = False
    if llvm and "KMP_BLOCKTIME" not in environ:
        out["KMP_BLOCKTIME"] = LLVM_BLOCKTIME
    return out


def load_openmp(environ: Mapping[str, str] | None = None, *,
                own: tuple[int, ...] | None = None,
                say: Callable[[str], None] | None = None) -> str | None:
    """Before the binding is imported: under ``llvm`` or ``adaptive`` (as ``environ``, by
    default ``os.environ``, says), load libomp into the global symbol scope (the binding's
    ``GOMP_*`` and ``omp_*`` calls then bind to it rather than to libgomp, its own
    dependency) and start it, so it reads its settings (``KMP_BLOCKTIME``...) from the
    process's environment now; under ``adaptive`` the library of ``openmp_adapt.c`` goes
    in front of it, and a :class:`CoreWatch` of the processes ``own`` (default: this one
    and its parent) starts, saying its switches with ``say`` (default: on stderr, which is
    the server's log in the child). None when done or not asked for; else the one-line reason the
    model runs under GNU OpenMP after all."""
    env = os.environ if environ is None else environ
    try:
        runtime = openmp_runtime(env)
    except ValueError as exc:
        return f"{exc}; the model runs under GNU OpenMP"
    if runtime == "gnu" or _loaded:
        return None
    if "xllamacpp" in sys.modules:
        return (f"{OPENMP_ENV}={runtime} came after llama.cpp loaded in this process; it "
                "runs under GNU OpenMP")
    shim = env.get(SHIM_ENV, "!its library was not given") if runtime == "adaptive" else ""
    if shim.startswith("!"):
        return (f"the adaptive OpenMP runtime ({OPENMP_ENV}) needs its library, but "
                f"{shim[1:]}; run `terrarium models` to build it. The model runs under GNU "
                f"OpenMP ({OPENMP_ENV}=gnu says so without this note)")
    import ctypes

    try:
        adapt = ctypes.CDLL(shim, mode=ctypes.RTLD_GLOBAL) if shim else None  # first
        lib = ctypes.CDLL(LLVM_LIBRARY, mode=ctypes.RTLD_GLOBAL)
        lib.omp_get_max_threads()  # starts the runtime: it reads KMP_BLOCKTIME & co. now
    except (OSError, AttributeError) as exc:
        return (f"{OPENMP_ENV}={runtime}, but LLVM's OpenMP runtime ({LLVM_LIBRARY}) did "
                f"not load ({exc}; on Debian: apt-get install libomp5); the model runs "
                "under GNU OpenMP")
    _loaded.append(runtime)
    if adapt is not None:
        peers = env.get(PEERS_ENV) or None
        watch = CoreWatch(spin_ms(env), own or (os.getpid(), os.getppid()), peers=peers)
        threading.Thread(target=watch.run, args=(adapt.terrarium_blocktime, say or _to_stderr),
                         daemon=True, name="openmp core watch").start()
    return None


def spin_ms(environ: Mapping[str, str]) -> int:
    """The block time (ms) the threads spin for while the cores are free: the user's
    ``KMP_BLOCKTIME`` (libomp also takes ``infinite``: as long as it can), else ours."""
    raw = environ.get("KMP_BLOCKTIME", "").strip() or LLVM_BLOCKTIME
    return int(raw) if raw.isdigit() else 2**31 - 1


SLEEP_ABOVE = 0.3
"""Cores other processes used (the mean of the last 0.6 s) above which the threads sleep."""
SPIN_BELOW = 0.15
"""... and below which (the mean of the last 2 s) they spin again."""
WATCH_PERIOD = 0.2  # seconds between two looks at /proc


def busy_ticks(proc_stat: str) -> int:
    """The machine's busy clock ticks so far, all cores (``/proc/stat``'s first line less
    idle and I/O wait; a hypervisor's steal counts: the host wanted the core)."""
    ticks = [int(x) for x in proc_stat.split("\n", 1)[0].split()[1:9]]
    return sum(ticks) - ticks[3] - ticks[4]  # (user nice system IDLE IOWAIT irq softirq steal)


def process_ticks(pid_stat: str) -> int:
    """A process's user and system clock ticks so far (``/proc/PID/stat``, fields 14-15;
    after the command's closing bracket, which may hold spaces)."""
    rest = pid_stat.rsplit(")", 1)[1].split()
    return int(rest[11]) + int(rest[12])


def process_start(pid: int | str) -> int | None:
    """When a process started (``/proc/PID/stat``'s field 22, clock ticks after boot), or
    None when it is gone: a pid and its start time name one process, as a pid alone does
    not once the number is given again."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


class CoreWatch:
    """Whether llama.cpp's threads may spin: yes while other processes leave the cores
    free, no once they use more than :data:`SLEEP_ABOVE` of a core, yes again once they
    have used less than :data:`SPIN_BELOW` on average over the last two seconds. Spinning
    threads make a reply three times faster on free cores and stall it on shared ones
    (docs/voice.md); what the model server's own processes (``own``: the server and the
    run it serves, with the voice) use is not counted, nor what the processes sharing it
    use (``peers``: the folder they note themselves in, :data:`PEERS_ENV`; looked at
    once a second)."""

    def __init__(self, spin_ms: int, own: tuple[int, ...], peers: str | None = None) -> None:
        self.spin_ms = spin_ms
        self.base = own
        self.own = own
        self.peers = peers
        self._looks = 0
        self.regrouped = False  # the last look changed ``own``: its ticks start again
        self.spinning = True
        self.switches = 0
        self.recent: deque[float] = deque(maxlen=round(2.0 / WATCH_PERIOD))

    def step(self, others: float) -> bool:
        """Take the cores other processes used over the last period; True on a switch."""
        self.recent.append(others)
        seen = list(self.recent)
        if self.spinning:
            switch = sum(seen[-3:]) / len(seen[-3:]) > SLEEP_ABOVE
        else:
            switch = len(seen) == self.recent.maxlen and sum(seen) / len(seen) < SPIN_BELOW
        if switch:
            self.spinning = not self.spinning
            self.switches += 1
        return switch

    def sharers(self) -> tuple[int, ...]:
        """The processes sharing this server, as they noted themselves under ``peers``
        (one folder per process of ``own``; a file whose name is no pid is passed over).
        A note holds its process's start time: one left by a process killed before it
        could take it back names no process, or another one that got its number, and is
        removed instead of counted."""
        if self.peers is None:
            return ()
        found: list[int] = []
        for pid in self.base:
            folder = os.path.join(self.peers, str(pid))
            with contextlib.suppress(OSError):
                for name in os.listdir(folder):
                    if name.isdigit() and self._alive(os.path.join(folder, name), name):
                        found.append(int(name))
        return tuple(p for p in dict.fromkeys(found) if p not in self.base)

    @staticmethod
    def _alive(note: str, pid: str) -> bool:
        """Whether a sharer's note names a running process (an empty note, from before
        notes held a start time, counts while its pid runs); a stale one is removed."""
        try:
            with open(note, encoding="ascii") as f:
                said = f.read().strip()
        except (OSError, UnicodeDecodeError):
            return False
        started = process_start(pid)
        alive = started is not None and (not said or said == str(started))
        if not alive:
            with contextlib.suppress(OSError):
                os.unlink(note)
        return alive

    def ticks(self) -> tuple[int, int]:
        """The machine's busy ticks and the own processes' (a process gone counts none;
        the sharers are looked for again every fifth look)."""
        if self.peers is not None and self._looks % 5 == 0:
            own = self.base + self.sharers()
            self.regrouped, self.own = own != self.own, own
        self._looks += 1
        with open("/proc/stat", encoding="ascii") as f:
            machine = busy_ticks(f.read(256))
        own = 0
        for pid in self.own:
            try:
                with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
                    own += process_ticks(f.read())
            except (OSError, IndexError, ValueError):
                continue
        return machine, own

    def run(self, apply: Callable[[int], None], say: Callable[[str], None]) -> None:
        """Look every :data:`WATCH_PERIOD`, ``apply`` the block time on a switch and
        ``say`` it (the server's log)."""
        hz = os.sysconf("SC_CLK_TCK")
        try:
            before, at = self.ticks(), time.monotonic()
        except (OSError, ValueError):
            say("openmp: /proc cannot be read; the threads spin as under llvm")
            return
        while True:
            time.sleep(WATCH_PERIOD)
            try:
                now, t = self.ticks(), time.monotonic()
            except (OSError, ValueError):  # (a read cut short: the next look)
                continue
            if self.regrouped:  # another set of processes: no difference to take yet
                before, at, self.regrouped = now, t, False
                continue
            others = max(0, (now[0] - before[0]) - (now[1] - before[1])) / hz / (t - at)
            before, at = now, t
            if self.step(others):
                apply(self.spin_ms if self.spinning else 0)
                say(f"openmp: threads {'spin' if self.spinning else 'sleep'} (other "
                    f"processes used {others:.2f} cores)")


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


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
    # Flash attention on by default (session 25; off before). With it a long prompt goes
    # 1.2x as fast (the router's 720-token prefix, 301 against 250 tokens/s, quiet: bare
    # xllamacpp's "auto" turns it on, and without it the embedded server was 0.82x of
    # bare), a speaker's turn of 13 new tokens a little slower (first token 73.9 against
    # 66.4 ms). It changes the sums, and so some replies: sessions 17-22 kept it off as the
    # voice bench's tip reply ("Here's a tip for sleeping better: ...") was held by the
    # reply guard until its lead-in was dropped; an announcement is now spoken to its kind
    # (controller/announce.py). docs/performance.md, "The engine".
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
