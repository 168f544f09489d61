"""``terrarium run``'s head start begun before the command's modules load (``cli/early.py``):
the team's folder read from the arguments only when that is plain, the early child taken by
the run of that very team and stopped otherwise."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from terrarium.cli import early
from terrarium.cli.command import build_parser, main
from terrarium.llm.server_process import ServerProcess, ServerShape, hints_path, remember

TEAM = Path(__file__).parents[2] / "examples" / "scripted_newsroom"


@pytest.mark.parametrize(("argv", "target"), [
    (["run", "team"], "team"),
    (["run", "--audio", "none", "team", "--input", "hi", "-v"], "team"),
    (["run", "--input=--audio", "team", "--timeout", "-1"], "team"),
    (["run", "team", "--no-share-model", "--runs-dir", "runs"], "team"),
    (["run"], None),
    (["validate", "team"], None),
    (["run", "team", "--help"], None),
    (["run", "team", "--broker", "nats://127.0.0.1:4222"], None),
    (["run", "team", "--inp", "hi"], None),  # an abbreviation: argparse's to resolve
    (["run", "team", "other"], None),
    (["run", "team", "--input"], None),
    (["run", "--", "team"], None),
    (["run", "team", "--json=yes"], None),
])
def test_the_team_is_read_from_the_arguments_only_when_it_is_plain(
        argv: list[str], target: str | None) -> None:
    assert early.run_target(argv) == target


def test_the_options_it_knows_are_the_run_command_s() -> None:
    """Each option of ``terrarium run`` is known here as taking a value or not, as the
    parser has it (``--broker`` and ``--help`` excepted: they leave it to the parser)."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    values: set[str] = set()
    flags: set[str] = set()
    for action in sub.choices["run"]._actions:
        names = set(action.option_strings) - {"-h", "--help", "--broker"}
        (flags if action.nargs == 0 else values).update(names)
    assert values == early.RUN_VALUE_OPTIONS
    assert flags == early.RUN_FLAGS


def test_a_shared_model_is_not_started_early() -> None:
    assert early.wanted({})
    assert not early.wanted({"TERRARIUM_SHARE_MODEL": "yes"})


def remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[ServerProcess]:
    """The newsroom team's remembered server (a file llama.cpp cannot load: its child
    ends by itself), and a list of the children made from here on."""
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setenv("TERRARIUM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TERRARIUM_SHARE_MODEL", raising=False)
    remember(str(TEAM.resolve()), ServerShape(model=str(model), slots=2, ctx_per_slot=512,
                                              threads=2, batch=256), hints_path())
    made: list[ServerProcess] = []
    real = ServerProcess.__init__

    def spy(self: ServerProcess, s: ServerShape, log: Path | None = None) -> None:
        real(self, s, log)
        made.append(self)

    monkeypatch.setattr(ServerProcess, "__init__", spy)
    return made


def test_the_run_of_that_team_takes_the_early_child(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    made = remembered(tmp_path, monkeypatch)
    early.start(["run", str(TEAM), "--audio", "none"])
    assert len(made) == 1  # begun before the command ran
    taken: list[object] = []
    real_take = early.take

    def spy_take(team: str) -> object:
        got = real_take(team)
        taken.append(got)
        return got

    monkeypatch.setattr(early, "take", spy_take)
    code = main(["run", str(TEAM), "--input", "A comet over Oslo.", "--runs-dir",
                 str(tmp_path / "runs"), "--audio", "none"])
    assert code == 0
    assert len(made) == 1  # no second child: the run took the early one
    (prestart,) = taken
    assert prestart is not None and getattr(prestart, "team", None) == str(TEAM.resolve())
    assert made[0].proc is None  # and stopped it (the scripted team uses no server)


def test_an_early_child_for_another_team_is_stopped(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    made = remembered(tmp_path, monkeypatch)
    early.start(["run", str(TEAM)])
    (child,) = made
    proc = child.proc
    assert early.take(str(tmp_path / "another")) is None
    assert child.proc is None and proc is not None and proc.poll() is not None
    assert early.take(str(TEAM.resolve())) is None  # gone: taken once


def test_an_early_child_nobody_takes_is_stopped_by_close(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = remembered(tmp_path, monkeypatch)
    early.start(["run", str(TEAM), "--input", "hi"])
    (child,) = made
    early.close()
    assert child.proc is None
    early.start(["run", str(TEAM), "--broker", "nats://127.0.0.1:4222"])
    assert len(made) == 1  # a brokered run: none begun
