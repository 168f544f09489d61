"""``TERRARIUM_OPENMP=adaptive`` (issue 29): llama.cpp's threads under libomp, spinning
while the cores are free and sleeping while other processes want them. The watcher's
decisions, its reading of /proc, the C library in front of libomp (built and called for
real), the fallback when it cannot be built, and a real model server running under it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from terrarium.llm import server_child
from terrarium.llm.embedded import EmbeddedServer, model_path, openmp_choice
from terrarium.llm.openmp_build import build_shim, shim_file, shim_settings
from terrarium.llm.server_child import (
    LLVM_BLOCKTIME,
    LLVM_LIBRARY,
    OPENMP_ENV,
    PEERS_ENV,
    SHIM_ENV,
    SLEEP_ABOVE,
    SPIN_BELOW,
    CoreWatch,
    busy_ticks,
    load_openmp,
    openmp_env,
    openmp_runtime,
    process_start,
    process_ticks,
    spin_ms,
)
from terrarium.llm.server_process import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
ADAPTIVE = {OPENMP_ENV: "adaptive"}


def test_adaptive_is_a_runtime_with_libomp_s_block_time() -> None:
    assert openmp_runtime({OPENMP_ENV: " Adaptive "}) == "adaptive"
    assert openmp_choice(ADAPTIVE) == "adaptive"
    assert openmp_env(ADAPTIVE)["KMP_BLOCKTIME"] == LLVM_BLOCKTIME  # spinning, to start
    assert "KMP_BLOCKTIME" not in openmp_env({**ADAPTIVE, "KMP_BLOCKTIME": "5"})
    assert (spin_ms({}), spin_ms({"KMP_BLOCKTIME": "5"})) == (int(LLVM_BLOCKTIME), 5)
    assert spin_ms({"KMP_BLOCKTIME": "infinite"}) == 2**31 - 1  # libomp's word, not a crash
    with pytest.raises(ValueError, match=r"adaptive .*gnu, llvm"):
        openmp_runtime({OPENMP_ENV: "adaptative"})


def _feed(watch: CoreWatch, values: list[float]) -> list[bool]:
    return [watch.step(v) for v in values]


def test_the_watch_sleeps_at_once_when_others_want_a_core_and_spins_after_quiet() -> None:
    watch = CoreWatch(20, (1,))
    assert watch.spinning
    # a little use by others, or one short blip under the threshold, changes nothing
    assert _feed(watch, [0.0, 0.1, 0.2, 0.1, 0.0]) == [False] * 5
    # others take most of a core: the first 0.2 s of it puts the threads to sleep
    assert _feed(watch, [0.9]) == [True]
    assert not watch.spinning and watch.switches == 1
    # still busy: sleeping; quiet again: spinning only once the last 2 s average is low
    assert not any(_feed(watch, [0.8] * 4))
    quiet = _feed(watch, [0.0] * 10)
    assert quiet.count(True) == 1 and not quiet[0] and watch.spinning
    assert sum(watch.recent) / len(watch.recent) < SPIN_BELOW < SLEEP_ABOVE


def test_the_watch_stays_asleep_while_others_keep_using_a_little() -> None:
    """Just under the sleep threshold keeps spinning; once asleep, the same use keeps the
    threads asleep (the two thresholds differ: no switching back and forth)."""
    watch = CoreWatch(20, (1,))
    assert not any(_feed(watch, [0.25] * 20))
    assert _feed(watch, [1.0])[0] and not watch.spinning
    assert not any(_feed(watch, [0.2] * 30)) and not watch.spinning


def test_proc_figures_are_read_as_the_kernel_writes_them() -> None:
    stat = ("cpu  100 5 50 1000 20 3 2 7 0 0\ncpu0 50 2 25 500 10 1 1 3 0 0\n")
    assert busy_ticks(stat) == 100 + 5 + 50 + 3 + 2 + 7  # not idle, not I/O wait
    # a command with spaces and a bracket in it; utime 11, stime 4 (fields 14-15)
    pid = "4242 (my (odd) cmd) S 1 2 3 4 5 6 7 8 9 10 11 4 0 0 20 0 3 0 99 1 2"
    assert process_ticks(pid) == 15
    watch = CoreWatch(20, (os.getpid(), 999_999_999))  # a process gone counts nothing
    machine, own = watch.ticks()
    assert machine > 0 and 0 < own <= machine + 1000


def test_the_watch_counts_the_processes_sharing_its_server_as_its_own(tmp_path: Path) -> None:
    """A worker attached to this server (``shared_server``) notes itself under the owner's
    pid; the watch looks every fifth look, and a look that changed the set starts over."""
    owner, sharer = os.getpid(), os.getppid()
    watch = CoreWatch(20, (owner,), peers=str(tmp_path))
    watch.ticks()
    assert watch.own == (owner,) and not watch.regrouped  # nobody noted: the owner alone
    folder = tmp_path / str(owner)
    folder.mkdir()
    for name in (str(sharer), str(owner), "not-a-pid"):
        (folder / name).touch()
    for _ in range(4):
        watch.ticks()
    assert watch.own == (owner,)  # not looked for yet
    watch.ticks()
    assert watch.own == (owner, sharer) and watch.regrouped  # the owner is not twice
    (folder / str(sharer)).unlink()
    for _ in range(5):
        watch.ticks()
    assert watch.own == (owner,) and watch.regrouped


def test_a_note_left_by_a_killed_sharer_is_not_counted_and_is_removed(tmp_path: Path) -> None:
    """A sharer killed before it took its note back leaves it behind; its pid may be given
    to another program, whose CPU must not pass for the team's. A note holds its process's
    start time, so the watch counts it only while that very process runs."""
    owner = os.getpid()
    folder = tmp_path / str(owner)
    folder.mkdir()
    sharer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        started = process_start(sharer.pid)
        assert started is not None
        (folder / str(sharer.pid)).write_text(str(started))
        other = folder / str(os.getppid())  # a live pid whose start time is not the note's
        other.write_text(str((process_start(os.getppid()) or 0) + 1))
        watch = CoreWatch(20, (owner,), peers=str(tmp_path))
        assert watch.sharers() == (sharer.pid,)
        assert not other.exists()  # another process now has that number: the note goes
    finally:
        sharer.kill()
        sharer.wait()
    assert process_start(sharer.pid) is None
    assert watch.sharers() == ()  # killed: not counted, and its note is gone
    assert list(folder.iterdir()) == []


class _Done(Exception):
    pass


def test_the_watch_applies_and_says_each_switch_and_skips_a_bad_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    watch = CoreWatch(20, (1,))  # (its window: 2 s of looks at the real period, 10)
    monkeypatch.setattr(server_child, "WATCH_PERIOD", 0.001)
    # (machine busy ticks, own ticks): others take 50 ticks once, then nothing for 12 looks
    reads: list[tuple[int, int] | Exception] = [(1000, 400), (1100, 450), OSError("gone")]
    reads += [(1100 + 10 * i, 450 + 10 * i) for i in range(1, 13)]

    def ticks() -> tuple[int, int]:
        if not reads:
            raise _Done
        got = reads.pop(0)
        if isinstance(got, Exception):
            raise got
        return got

    monkeypatch.setattr(watch, "ticks", ticks)
    applied: list[int] = []
    said: list[str] = []
    with pytest.raises(_Done):
        watch.run(applied.append, said.append)
    assert applied == [0, 20] and watch.spinning and watch.switches == 2
    assert said[0].startswith("openmp: threads sleep (other processes used ")
    assert said[1].startswith("openmp: threads spin (other processes used 0.00 cores")


def test_a_look_that_changed_the_own_processes_is_no_difference(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A sharer gone takes its ticks out of ``own``: without starting over, the machine's
    ticks less the smaller sum would read as another program's burst, and the threads
    would sleep for nothing."""
    watch = CoreWatch(20, (1,))
    monkeypatch.setattr(server_child, "WATCH_PERIOD", 0.001)
    reads = [(1000, 900, False), (1010, 910, False), (1020, 20, True), (1030, 30, False)]

    def ticks() -> tuple[int, int]:
        if not reads:
            raise _Done
        machine, own, watch.regrouped = reads.pop(0)
        return machine, own

    monkeypatch.setattr(watch, "ticks", ticks)
    applied: list[int] = []
    with pytest.raises(_Done):
        watch.run(applied.append, lambda _: None)
    assert applied == [] and watch.spinning and list(watch.recent) == [0.0, 0.0]


def test_without_its_library_adaptive_runs_under_gnu_with_the_reason(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_child, "_loaded", [])
    monkeypatch.delitem(sys.modules, "xllamacpp", raising=False)
    notice = load_openmp({**ADAPTIVE, SHIM_ENV: "!no C compiler (on Debian: apt-get "
                                                "install gcc)"})
    assert notice is not None and "\n" not in notice
    assert "no C compiler" in notice and "terrarium models" in notice
    assert "runs under GNU OpenMP" in notice and server_child._loaded == []
    assert "was not given" in str(load_openmp(ADAPTIVE))


def test_a_library_that_cannot_be_built_is_a_reason_not_a_crash(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERRARIUM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CC", "false")  # a compiler that fails
    got = shim_settings(ADAPTIVE)
    assert got[SHIM_ENV].startswith("!false could not build openmp_adapt.c")
    assert not shim_file().exists() and not list(tmp_path.rglob("*.so"))  # nothing half-made
    assert shim_settings({OPENMP_ENV: "gnu"}) == {} and shim_settings({OPENMP_ENV: "llvm"}) == {}
    given = shim_settings({**ADAPTIVE, SHIM_ENV: "/given"})  # the user's stands
    assert SHIM_ENV not in given and given[PEERS_ENV] == str(tmp_path / "servers" / "peers")
    assert got[PEERS_ENV] == given[PEERS_ENV]  # where sharers note themselves, both ways


def _built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler here")
    monkeypatch.setenv("TERRARIUM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    try:
        lib = build_shim()
    except OSError as exc:
        if LLVM_LIBRARY in str(exc) or "omp" in str(exc):
            pytest.skip(f"{LLVM_LIBRARY} is not installed here")
        raise
    assert lib == shim_file() and lib.parent == tmp_path / "openmp"
    assert build_shim() == lib  # once
    return lib


def test_the_library_sets_the_block_time_on_the_thread_that_opens_each_region(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a fresh process: the library in front of libomp's ``GOMP_parallel`` (as the
    binding calls it), the block time asked for applied before the next region, on the
    thread that opens it."""
    lib = _built(tmp_path, monkeypatch)
    script = f"""
import ctypes, json
shim = ctypes.CDLL({str(lib)!r}, mode=ctypes.RTLD_GLOBAL)
omp = ctypes.CDLL({LLVM_LIBRARY!r}, mode=ctypes.RTLD_GLOBAL)
omp.omp_get_max_threads()
region = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda data: None)
parallel = ctypes.CDLL(None).GOMP_parallel  # the first in the global scope: the library's
seen = [omp.kmp_get_blocktime()]
for ms in (0, 7, 7):
    shim.terrarium_blocktime(ms)
    seen.append(omp.kmp_get_blocktime())  # not yet: applied when a region opens
    parallel(region, None, 1, 0)
    seen.append(omp.kmp_get_blocktime())
print(json.dumps([seen, shim.terrarium_regions()]))
"""
    env = {**os.environ, "KMP_BLOCKTIME": "20"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True, timeout=60)
    seen, regions = json.loads(out.stdout.splitlines()[-1])
    assert seen == [20, 20, 0, 0, 7, 7, 7] and regions == 3


@pytest.mark.embedded
def test_a_model_server_under_adaptive_has_the_library_and_its_watch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lib = _built(tmp_path, monkeypatch)
    monkeypatch.setenv(OPENMP_ENV, "adaptive")
    server = EmbeddedServer(slots=1, ctx_per_slot=512)
    process = ServerProcess(server.shape(model_path()), log=tmp_path / "server.log")
    server.process = process
    with server:
        assert process.proc is not None
        maps = Path(f"/proc/{process.proc.pid}/maps").read_text()
        assert str(lib) in maps and "libomp" in maps
        reply = httpx.post(server.base_url + "/completion", timeout=120, json={
            "prompt": "The capital of France is", "n_predict": 4, "temperature": 0})
        assert reply.json()["content"].strip()
