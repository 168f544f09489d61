"""Which OpenMP runtime runs llama.cpp's threads (``TERRARIUM_OPENMP``, issue 29): LLVM's
libomp adapting its block time to the machine (the default; tests/llm/test_openmp_adaptive),
GNU's libgomp (``PASSIVE``) or libomp with a fixed block time; the settings each server
process gets, the fallback when libomp is missing, the check of the value."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from terrarium.errors import ModelError
from terrarium.llm import embedded, server_child
from terrarium.llm.embedded import EmbeddedServer, openmp_choice
from terrarium.llm.server_child import (
    LLVM_BLOCKTIME,
    LLVM_LIBRARY,
    OPENMP_ENV,
    WAIT_POLICY,
    load_openmp,
    openmp_env,
    openmp_runtime,
)
from terrarium.llm.server_process import ServerProcess, ServerShape, child_env

ROOT = Path(__file__).resolve().parents[2]


def test_the_runtime_is_adaptive_unless_another_is_asked_for() -> None:
    assert openmp_runtime({}) == "adaptive"
    assert openmp_runtime({OPENMP_ENV: " "}) == "adaptive"
    assert openmp_runtime({OPENMP_ENV: "GNU"}) == "gnu"
    assert openmp_runtime({OPENMP_ENV: "llvm"}) == "llvm"
    assert openmp_runtime({OPENMP_ENV: "libomp"}) == "llvm"
    with pytest.raises(ValueError, match="none of adaptive"):
        openmp_runtime({OPENMP_ENV: "intel"})


def test_a_misspelt_runtime_stops_the_start_with_the_two_names() -> None:
    assert openmp_choice({OPENMP_ENV: "llvm"}) == "llvm"
    with pytest.raises(ModelError) as caught:
        openmp_choice({OPENMP_ENV: "lvm"})
    assert "'lvm'" in str(caught.value) and "adaptive, gnu or llvm" in str(caught.value.suggestion)


def test_each_runtime_gets_its_settings_unless_the_user_set_them() -> None:
    assert openmp_env({OPENMP_ENV: "gnu"}) == {"OMP_WAIT_POLICY": WAIT_POLICY}
    assert openmp_env({}) == {"OMP_WAIT_POLICY": WAIT_POLICY, "KMP_BLOCKTIME": LLVM_BLOCKTIME}
    llvm = {OPENMP_ENV: "llvm"}
    assert openmp_env(llvm) == {"OMP_WAIT_POLICY": WAIT_POLICY, "KMP_BLOCKTIME": LLVM_BLOCKTIME}
    assert openmp_env({**llvm, "KMP_BLOCKTIME": "50", "OMP_WAIT_POLICY": "ACTIVE"}) == {}
    # a misspelt value is reported where the server starts; here it is libgomp's
    assert openmp_env({OPENMP_ENV: "lvm"}) == {"OMP_WAIT_POLICY": WAIT_POLICY}
    gnu = {OPENMP_ENV: "gnu", "PATH": "/bin"}
    assert child_env(gnu) == {**gnu, "OMP_WAIT_POLICY": WAIT_POLICY}
    # the head start's child gets the same, and what the user set as set
    assert child_env({**llvm, "PATH": "/bin"}) == {
        **llvm, "PATH": "/bin", "OMP_WAIT_POLICY": WAIT_POLICY, "KMP_BLOCKTIME": LLVM_BLOCKTIME}
    mine = {**llvm, "KMP_BLOCKTIME": "5", "OMP_WAIT_POLICY": "PASSIVE"}
    assert child_env(mine) == mine


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if neither libomp nor the binding were loaded in this process."""
    monkeypatch.setattr(server_child, "_loaded", [])
    monkeypatch.delitem(sys.modules, "xllamacpp", raising=False)


def test_without_libomp_the_model_runs_under_gnu_openmp_with_one_notice(
        fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_child, "LLVM_LIBRARY", "libomp-not-here.so.5")
    notice = load_openmp({OPENMP_ENV: "llvm"})
    assert notice is not None and "\n" not in notice
    assert "libomp-not-here.so.5" in notice and "apt-get install libomp5" in notice
    assert notice.endswith("the model runs under GNU OpenMP")
    assert server_child._loaded == []  # nothing was loaded
    assert load_openmp({OPENMP_ENV: "gnu"}) is None  # gnu: nothing to do
    assert "none of adaptive" in str(load_openmp({OPENMP_ENV: "x"}))


def test_libomp_cannot_take_over_a_binding_already_loaded(
        fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "xllamacpp", types.ModuleType("xllamacpp"))
    assert "came after llama.cpp loaded" in str(load_openmp({OPENMP_ENV: "llvm"}))


def test_libomp_loads_and_reads_its_block_time_before_the_binding() -> None:
    """In a fresh process (libomp stays loaded in the one that loads it): libomp in the
    global scope, started, with the block time it was given."""
    script = ("import ctypes, json, os\n"
              "from terrarium.llm.server_child import load_openmp, LLVM_LIBRARY\n"
              "notice = load_openmp()\n"
              "maps = open('/proc/self/maps').read()\n"
              "bt = ctypes.CDLL(LLVM_LIBRARY).kmp_get_blocktime() if notice is None else None\n"
              "print(json.dumps([notice, 'libomp' in maps, bt]))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), OPENMP_ENV: "llvm", "KMP_BLOCKTIME": "7"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True, timeout=60)
    notice, mapped, blocktime = json.loads(out.stdout.splitlines()[-1])
    if notice is not None:
        assert f"({LLVM_LIBRARY})" in notice
        pytest.skip(f"{LLVM_LIBRARY} is not installed here")
    assert (mapped, blocktime) == (True, 7)


@pytest.fixture
def fake_binding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, str]]:
    """A binding that loads nothing; what the environment held when libomp would load."""
    seen: list[dict[str, str]] = []

    def load(**_: Any) -> str | None:
        seen.append({k: os.environ[k] for k in ("OMP_WAIT_POLICY", "KMP_BLOCKTIME")
                     if k in os.environ})
        return "libomp is elsewhere"

    class Anything:
        def __getattr__(self, name: str) -> Any:
            if name.startswith("__"):
                raise AttributeError(name)
            setattr(self, name, Anything())
            return getattr(self, name)

    fake = types.ModuleType("xllamacpp")
    fake.CommonParams = Anything  # type: ignore[attr-defined]
    fake.llama_flash_attn_type = Anything()  # type: ignore[attr-defined]
    fake.Server = lambda params: types.SimpleNamespace(  # type: ignore[attr-defined]
        listening_address="127.0.0.1:9")
    monkeypatch.setitem(sys.modules, "xllamacpp", fake)
    monkeypatch.setattr(embedded, "load_openmp", load)
    monkeypatch.setattr(EmbeddedServer, "_wait_healthy", lambda self: None)
    for name in ("OMP_WAIT_POLICY", "KMP_BLOCKTIME"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    return seen


def test_the_in_process_server_sets_libomp_s_settings_only_while_it_loads(
        fake_binding: list[dict[str, str]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(OPENMP_ENV, "llvm")
    EmbeddedServer(model=tmp_path / "m.gguf").start()
    assert fake_binding == [{"OMP_WAIT_POLICY": WAIT_POLICY, "KMP_BLOCKTIME": LLVM_BLOCKTIME}]
    assert "OMP_WAIT_POLICY" not in os.environ and "KMP_BLOCKTIME" not in os.environ
    assert capsys.readouterr().err == "note: libomp is elsewhere\n"  # the fallback, said


def test_a_misspelt_runtime_fails_the_start_before_anything_loads(
        fake_binding: list[dict[str, str]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(OPENMP_ENV, "llmv")
    with pytest.raises(ModelError, match="'llmv'"):
        EmbeddedServer(model=tmp_path / "m.gguf").start()
    assert fake_binding == []


def test_the_head_start_child_s_notice_is_said_by_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The child's stderr is a log file: its fallback notice comes with its address."""
    child = tmp_path / "child.py"
    child.write_text("import json, sys\nprint(json.dumps({'url': 'http://127.0.0.1:9', "
                     "'notice': 'libomp did not load'}), flush=True)\n"
                     "sys.stdin.buffer.read()\n", encoding="utf-8")
    monkeypatch.setattr("terrarium.llm.server_process.server_child",
                        types.SimpleNamespace(__file__=str(child)))
    shape = ServerShape(model=str(tmp_path / "m.gguf"), slots=1, ctx_per_slot=512,
                        threads=2, batch=256)
    process = ServerProcess(shape)
    try:
        assert process.take(shape, timeout=30.0) == "http://127.0.0.1:9"
    finally:
        process.close()
    assert capsys.readouterr().err == "note: libomp did not load\n"


def test_the_voice_bench_runs_and_names_each_runtime() -> None:
    """``bench/voice.py --with-env TERRARIUM_OPENMP=llvm``: the settings it adds, and the
    runtime each summary's header names (the environment that run had)."""
    from tests.script_loader import load_script

    voice = load_script(ROOT / "bench" / "voice.py", "bench_voice_openmp")
    assert voice.env_settings(["TERRARIUM_OPENMP=llvm", "KMP_BLOCKTIME=5"]) == {
        OPENMP_ENV: "llvm", "KMP_BLOCKTIME": "5"}
    assert voice.env_settings(None) == {}
    for bad in ("TERRARIUM_OPENMP", "=llvm"):
        with pytest.raises(SystemExit):
            voice.env_settings([bad])
    assert voice.openmp_label({}) == f"OpenMP adaptive, KMP_BLOCKTIME {LLVM_BLOCKTIME}"
    assert voice.openmp_label({OPENMP_ENV: "gnu"}) == f"OpenMP gnu, {WAIT_POLICY}"
    assert voice.openmp_label({OPENMP_ENV: "gnu", "OMP_WAIT_POLICY": "ACTIVE"}) == (
        "OpenMP gnu, ACTIVE")
    assert voice.openmp_label({OPENMP_ENV: "llvm"}) == (
        f"OpenMP llvm, KMP_BLOCKTIME {LLVM_BLOCKTIME}")
    assert voice.openmp_label({OPENMP_ENV: "llvm", "KMP_BLOCKTIME": "5"}).endswith(" 5")
