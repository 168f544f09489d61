"""The head start of ``terrarium run``: the server shape a team used is remembered, a child
process loads it before the run's imports, and the run adopts it only when it asks for
exactly that server (``llm/server_process.py``)."""

from __future__ import annotations

import dataclasses
import json
import types
from pathlib import Path

import anyio
import httpx
import pytest

from terrarium.llm.embedded import EmbeddedServer, model_path
from terrarium.llm.server_process import (
    MAX_HINTS,
    Prestart,
    ServerProcess,
    ServerShape,
    child_env,
    last_line,
    recall,
    remember,
    server_log_path,
)


def shape(model: Path, **kw: object) -> ServerShape:
    fields: dict[str, object] = {"model": str(model), "slots": 2, "ctx_per_slot": 512,
                                 "threads": 2, "batch": 256}
    fields.update(kw)
    return ServerShape(**fields)  # type: ignore[arg-type]


def test_a_remembered_shape_is_recalled_per_team(tmp_path: Path) -> None:
    hints = tmp_path / "c" / "shapes.json"
    a, b = shape(tmp_path / "a.gguf"), shape(tmp_path / "b.gguf", slots=3)
    assert recall("/teams/a", hints) is None
    remember("/teams/a", a, hints)
    remember("/teams/b", b, hints)
    assert recall("/teams/a", hints) == a and recall("/teams/b", hints) == b
    remember("/teams/a", b, hints)  # the team changed: the newest shape counts
    assert recall("/teams/a", hints) == b


def test_only_the_most_recent_teams_are_kept(tmp_path: Path) -> None:
    hints = tmp_path / "shapes.json"
    for i in range(MAX_HINTS + 3):
        remember(f"/teams/{i}", shape(tmp_path / "m.gguf", slots=i + 1), hints)
    assert len(json.loads(hints.read_text())) == MAX_HINTS
    assert recall("/teams/0", hints) is None
    assert recall(f"/teams/{MAX_HINTS + 2}", hints) is not None


@pytest.mark.parametrize("text", ["not json", "[1, 2]", '{"/t": {"model": "m", "x": 1}}'])
def test_a_file_that_does_not_read_is_no_hint(tmp_path: Path, text: str) -> None:
    hints = tmp_path / "shapes.json"
    hints.write_text(text)
    assert recall("/t", hints) is None
    assert Prestart("/t", hints=hints).process is None


def test_no_child_without_a_hint_or_without_its_model_file(tmp_path: Path) -> None:
    hints = tmp_path / "shapes.json"
    assert Prestart("/t", hints=hints).process is None
    remember("/t", shape(tmp_path / "gone.gguf"), hints)
    assert Prestart("/t", hints=hints).process is None  # the model file is not there


def test_a_child_of_another_shape_is_stopped_not_adopted(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    process = ServerProcess(shape(model))
    proc = process.proc
    assert proc is not None
    assert process.take(shape(model, slots=3), timeout=30.0) is None
    assert process.proc is None and proc.poll() is not None  # stopped and reaped


def test_a_child_whose_model_does_not_load_gives_no_server(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("xllamacpp")
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")  # not a model llama.cpp can load
    log = tmp_path / "server.log"
    process = ServerProcess(shape(model), log=log)
    proc = process.proc
    assert proc is not None
    assert process.take(shape(model), timeout=60.0) is None
    assert proc.poll() is not None
    err = capsys.readouterr().err  # why, and where llama.cpp's own words are
    assert err.startswith(f"note: the model server process {process.child_pid} failed: ")
    assert str(log) in err and err.endswith("; the model loads in this process instead\n")


FAKE_CHILD = """import json, sys
print(json.dumps({"url": "http://127.0.0.1:9"}), flush=True)
if sys.argv[2:] != ["exit"]:
    sys.stdin.buffer.read()
"""


def fake_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, exits: bool) -> None:
    """Children that answer an address at once (nothing listens there) instead of loading a
    model: then wait for their stdin to close like the real one, or exit."""
    script = tmp_path / "fake_child.py"
    script.write_text(FAKE_CHILD, encoding="utf-8")
    wrapper = tmp_path / "child.py"  # the shape comes first, then what the fake does
    wrapper.write_text(f"import sys\nsys.argv += {['exit'] if exits else []!r}\n"
                       f"exec(open({str(script)!r}).read())\n", encoding="utf-8")
    monkeypatch.setattr("terrarium.llm.server_process.server_child",
                        types.SimpleNamespace(__file__=str(wrapper)))


def test_an_adopted_child_is_not_asked_for_its_health(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child answers once its server is ready: the run takes the address as it is,
    with no ``/health`` round trip (nothing listens at the fake's address, so a request
    would fail and the model would load in this process)."""
    fake_child(tmp_path, monkeypatch, exits=False)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    server = EmbeddedServer(model=model, slots=2, ctx_per_slot=512, threads=2,
                            startup_timeout=5.0)
    server.process = ServerProcess(server.shape(model))
    server.start()
    try:
        assert isinstance(server._server, ServerProcess)
        assert server.base_url == "http://127.0.0.1:9" and server.loaded_model == model
    finally:
        server.stop()
    assert not server.running


def test_a_child_that_answered_then_ended_is_not_adopted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    fake_child(tmp_path, monkeypatch, exits=True)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    process = ServerProcess(shape(model))
    assert process.proc is not None
    process.proc.wait(60)  # it said where it listens, then ended
    assert process.take(shape(model), timeout=30.0) is None
    assert process.proc is None and not process.adopted
    err = capsys.readouterr().err
    assert err == (f"note: the model server process {process.child_pid} exited with code 0 "
                   "(its stderr was not kept); the model loads in this process instead\n")


def test_the_run_command_leaves_no_child_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    """A run whose team needs no embedded server (a scripted team) stops the child its
    head start made."""
    from terrarium.cli.command import main

    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setenv("TERRARIUM_CACHE_DIR", str(tmp_path / "cache"))
    team = Path(__file__).parents[2] / "examples" / "scripted_newsroom"
    from terrarium.llm.server_process import hints_path

    remember(str(team.resolve()), shape(model), hints_path())
    made: list[ServerProcess] = []
    real = ServerProcess.__init__

    def spy(self: ServerProcess, s: ServerShape, log: Path | None = None) -> None:
        real(self, s, log)
        made.append(self)

    monkeypatch.setattr(ServerProcess, "__init__", spy)
    code = main(["run", str(team), "--input", "A comet over Oslo.", "--runs-dir",
                 str(tmp_path / "runs"), "--audio", "none"])
    assert code == 0
    (child,) = made
    assert child.proc is None  # closed by the run


@pytest.mark.embedded
def test_the_embedded_server_adopts_a_child_of_its_shape(tmp_path: Path) -> None:
    server = EmbeddedServer(slots=1, ctx_per_slot=512, slot_save_dir=tmp_path / "prefixes")
    wanted = server.shape(model_path())
    process = ServerProcess(wanted)
    server.process = process
    with server:
        assert server.running and server.loaded_model == model_path()
        assert server.base_url.startswith("http://127.0.0.1:")
        assert httpx.get(server.base_url + "/health", timeout=10).json()["status"] == "ok"
        assert process.alive()  # the child serves
        proc = process.proc
    assert not server.running and proc is not None and proc.poll() is not None


@pytest.mark.embedded
def test_a_second_run_adopts_the_server_the_first_remembered(tmp_path: Path) -> None:
    from terrarium.config import Team, load_any
    from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime

    folder = tmp_path / "helper"  # one creature on the embedded model (the default)
    folder.mkdir()
    (folder / "config.yaml").write_text(
        "name: helper\nskill_mode: static\nsystem_prompt_file: system.md\n", encoding="utf-8")
    (folder / "system.md").write_text("You help with short answers.\n", encoding="utf-8")
    team = load_any(folder)
    assert isinstance(team, Team)
    hints = tmp_path / "shapes.json"
    servers: list[object] = []
    embeddeds: list[EmbeddedServer] = []

    async def run_once() -> None:
        prestart = Prestart("/the/team", hints=hints)
        opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", warm_up=False,
                              prestart=prestart)
        try:
            async with TeamRuntime(team, opts) as rt:
                embedded = rt.embedded
                assert embedded is not None and embedded.running
                servers.append(embedded._server)
                embeddeds.append(embedded)
        finally:
            prestart.close()

    anyio.run(run_once)
    remembered = recall("/the/team", hints)
    assert remembered is not None and remembered.model == str(model_path())
    anyio.run(run_once)
    assert not isinstance(servers[0], ServerProcess)  # loaded in-process: nothing to adopt
    assert isinstance(servers[1], ServerProcess)  # the head start's child
    assert dataclasses.asdict(servers[1].shape) == dataclasses.asdict(remembered)
    # each run stopped its server as it ended (the adopted child too), not the GC later
    assert not any(e.running for e in embeddeds)
    assert servers[1].proc is None


def test_a_start_that_fails_stops_the_head_start_s_child(tmp_path: Path) -> None:
    from terrarium.errors import ModelFileMissing

    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    process = ServerProcess(shape(model))
    proc = process.proc
    server = EmbeddedServer(model=tmp_path / "gone.gguf")  # not there: the start fails
    server.process = process
    with pytest.raises(ModelFileMissing):
        server.start()
    assert proc is not None and proc.poll() is not None and server.process is None


def test_a_child_that_dies_serving_the_run_is_reported_with_its_log(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The child's stderr goes to a file; if it ends while the run uses it, one line on
    stderr says so and names that file and its last line."""
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")  # no model: the child ends by itself (exit code 1)
    log = tmp_path / "logs" / "server.log"
    process = ServerProcess(shape(model), log=log)
    process.adopted = True  # as if the run had taken it
    process.watcher.join(60)
    assert not process.watcher.is_alive()
    err = capsys.readouterr().err
    assert err == f"error: {process.ended(1)}\n"
    assert f"the model server process {process.child_pid} exited with code 1" in err
    assert str(log) in err and log.is_file()
    process.close()


def test_a_child_stopped_on_purpose_is_no_news(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    process = ServerProcess(shape(model), log=tmp_path / "server.log")
    process.adopted = True
    process.close()
    process.watcher.join(60)
    assert capsys.readouterr().err == ""


def test_the_report_names_the_log_s_last_line(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("llama_model_load: loading\n\nGGML_ASSERT(n > 0) failed\n\n")
    assert last_line(log) == "GGML_ASSERT(n > 0) failed"
    assert last_line(tmp_path / "none.log") is None
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    process = ServerProcess(shape(model), log=log)
    process.close()
    log.write_text("Segmentation fault\n")
    assert process.ended(-11) == (f"the model server process {process.child_pid} was "
                                  f"killed by signal 11 (its log {log} ends with: "
                                  "Segmentation fault)")


def test_the_head_start_keeps_its_child_s_stderr_per_team(tmp_path: Path) -> None:
    hints = tmp_path / "shapes.json"
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    remember("/t", shape(model), hints)
    prestart = Prestart("/t", hints=hints)
    try:
        assert prestart.process is not None
        assert prestart.process.log == server_log_path("/t") != server_log_path("/u")
    finally:
        prestart.close()


def test_the_child_s_environment_has_its_defaults_unless_the_user_set_them() -> None:
    env = child_env({"PATH": "/bin", "TERRARIUM_OPENMP": "gnu"})
    # no huge pages asked of malloc: on a VM that hands free 2 MB blocks back to its host
    # they made the KV cache's zeroing 0.1-0.5 s slower in a quarter of the starts
    assert env == {"PATH": "/bin", "TERRARIUM_OPENMP": "gnu", "OMP_WAIT_POLICY": "PASSIVE"}
    # the default runtime (adaptive): libomp's block time, and its library (or why not)
    env = child_env({"PATH": "/bin"})
    # ... and where the team's processes sharing the server note themselves
    assert env.keys() == {"PATH", "OMP_WAIT_POLICY", "KMP_BLOCKTIME", "TERRARIUM_OPENMP_SHIM",
                          "TERRARIUM_OPENMP_PEERS"}
    mine = {"OMP_WAIT_POLICY": "ACTIVE", "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1",
            "KMP_BLOCKTIME": "5", "TERRARIUM_OPENMP_SHIM": "/mine.so",
            "TERRARIUM_OPENMP_PEERS": "/peers"}
    assert child_env(mine) == mine  # what the user set reaches the child as set
