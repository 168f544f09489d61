"""A careless user's option values: each refused as it is parsed, naming the option and
what it takes (exit 2), never run silently and never a traceback; ``serve`` refuses an
address it cannot listen on, ``init`` a folder it cannot write, before anything starts."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from terrarium.cli import command as command_module
from terrarium.cli import main
from terrarium.cli.serve import check_bind
from terrarium.errors import TerrariumError

ROOT = Path(__file__).resolve().parents[2]
TEAM = str(ROOT / "examples" / "scripted_newsroom")

# (command and its other arguments, the option, its bad value, what the refusal says)
BAD = [
    (["run", TEAM, "--input", "x"], "--max-turns", "-1", "below 1"),
    (["run", TEAM, "--input", "x"], "--max-turns", "0", "below 1"),
    (["run", TEAM, "--input", "x"], "--timeout", "0", "more than 0"),
    (["run", TEAM, "--input", "x"], "--timeout", "-5", "more than 0"),
    (["run", TEAM, "--input", "x"], "--timeout", "nan", "not a finite number"),
    (["run", TEAM, "--input", "x"], "--timeout", "inf", "not a finite number"),
    (["run", TEAM, "--input", "x"], "--timeout", "1e400", "not a finite number"),
    (["run", TEAM, "--input", "x"], "--ack-wait", "-1", "more than 0"),
    (["run", TEAM, "--input", "x"], "--session", "", "needs a name"),
    (["run", TEAM, "--input", "x"], "--session", "  ", "needs a name"),
    (["run", TEAM, "--input", "x"], "--session", "x" * 201, "at most 200"),
    (["serve", TEAM], "--port", "70000", "not a port"),
    (["serve", TEAM], "--port", "-1", "not a port"),
    (["serve", TEAM], "--idle-unload", "-1", "more than 0"),
    (["serve", TEAM], "--idle-unload", "nan", "not a finite number"),
    (["serve", TEAM], "--approval-timeout", "0", "more than 0"),
    (["serve", TEAM], "--approval-timeout", "inf", "not a finite number"),
    (["serve", TEAM], "--rate", "0", "above 0"),
    (["serve", TEAM], "--rate", "nan", "above 0"),
    (["serve", TEAM], "--ack-wait", "0", "more than 0"),
    (["serve", TEAM], "--remote-wait", "-2", "more than 0"),
    (["serve", TEAM], "--turns-at-once", "-1", "below 0"),
    (["worker", TEAM, "--broker", "nats://127.0.0.1:1"], "--wait", "-1", "0 or more"),
    (["worker", TEAM, "--broker", "nats://127.0.0.1:1"], "--wait", "nan", "not a finite"),
    (["prompt", TEAM, "editor"], "--step", "-1", "below 0"),
]


@pytest.mark.parametrize(("argv", "option", "value", "says"), BAD,
                         ids=[f"{a[0]}{o}-{i}" for i, (a, o, _, _) in enumerate(BAD)])
def test_a_value_that_means_nothing_is_refused_naming_the_option(
    argv: list[str], option: str, value: str, says: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # were it run, its runs/ would be made here
    with pytest.raises(SystemExit) as exc:
        main([*argv, f"{option}={value}"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"error: argument {option}: " in err
    assert says in err


@pytest.mark.parametrize("command", ["run", "serve", "worker", "log", "monitor"])
def test_a_runs_dir_that_is_a_file_is_refused_before_anything_starts(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    argv = {"run": ["run", TEAM, "--input", "x"], "serve": ["serve", TEAM],
            "worker": ["worker", TEAM, "--broker", "nats://127.0.0.1:1"],
            "log": ["log"], "monitor": ["monitor", "abc"]}[command]
    for bad, says in [(afile, "is a file, not a folder"),
                      (afile / "sub", f"{afile} is a file, not a folder (in "),
                      (tmp_path / "gone", "is a symlink to")]:
        if bad.name == "gone":
            bad.symlink_to(tmp_path / "nowhere")
        with pytest.raises(SystemExit) as exc:
            main([*argv, "--runs-dir", str(bad)])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert "error: argument --runs-dir: " in err and says in err


def test_good_values_still_parse() -> None:
    args = command_module.build_parser().parse_args(
        ["serve", TEAM, "--port", "0", "--rate", "0.5", "--idle-unload", "1.5",
         "--turns-at-once", "0", "--runs-dir", "a new folder/ü"])
    assert (args.port, args.rate, args.idle_unload, args.turns_at_once) == (0, 0.5, 1.5, 0)
    args = command_module.build_parser().parse_args(
        ["run", TEAM, "--max-turns", "1", "--timeout", "0.25", "--session", "a/../b"])
    assert (args.max_turns, args.timeout, args.session) == (1, 0.25, "a/../b")
    args = command_module.build_parser().parse_args(
        ["worker", TEAM, "--broker", "nats://h:1", "--wait", "0"])
    assert args.wait == 0


# -- serve: an address it cannot listen on is one sentence and exit 1, before it starts ----

def test_serve_on_a_port_in_use_is_refused_in_a_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = main(["serve", TEAM, "--port", str(port), "--runs-dir", str(tmp_path)])
    assert code == 1  # not uvicorn's 3, which the README gives to "degraded"
    err = capsys.readouterr().err
    assert f"error: port {port} on 127.0.0.1 is already in use" in err
    assert "hint: stop that one, or give another --port" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("host", "says"), [
    ("", "--host is empty"),
    ("[::1]", "hint: --host ::1"),
    ("192.0.2.1", "192.0.2.1 is not an address of this machine"),  # TEST-NET-1
])
def test_serve_refuses_a_host_it_cannot_listen_on(host: str, says: str) -> None:
    with pytest.raises(TerrariumError) as exc:
        check_bind(host, 0)
    assert says in exc.value.render()


def test_serve_may_listen_on_a_free_loopback_port() -> None:
    check_bind("127.0.0.1", 0)  # no error


# -- init: a folder it cannot write is one sentence ------------------------------------------

def test_init_refuses_a_folder_under_a_file_or_a_dangling_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    (tmp_path / "gone").symlink_to(tmp_path / "nowhere")
    for target, says in [(afile / "team", "afile is a file, not a folder"),
                         (tmp_path / "gone", "is a symlink to"),
                         (tmp_path / "gone" / "team", "is a symlink to")]:
        assert main(["init", "team", str(target)]) == 1
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err
    assert main(["init", "team", ""]) == 1
    assert "the folder to write is empty" in capsys.readouterr().err
    assert not (tmp_path / "nowhere").exists()


def test_an_unforeseen_os_error_is_one_sentence(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(args: object) -> int:
        raise PermissionError(13, os.strerror(13), "/some/where")

    monkeypatch.setattr(command_module, "cmd_validate", broken)
    assert main(["validate", TEAM]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: Permission denied: /some/where\n  hint: ")


# -- options that mean something only beside another, and files given as options -----------

@pytest.mark.parametrize(("argv", "says"), [
    (["run", TEAM, "--input", "x", "--host-creatures", "bogus"],
     "--host-creatures applies only with --broker"),
    (["run", TEAM, "--input", "x", "--ack-wait", "5"], "--ack-wait applies only with --broker"),
    (["run", TEAM, "--input", "x", "--no-share-model"],
     "--no-share-model applies only with --broker"),
    (["serve", TEAM, "--remote-wait", "3"], "--remote-wait applies only with --remote"),
    (["serve", TEAM, "--ack-wait", "3"], "--ack-wait applies only with --remote"),
])
def test_an_option_without_the_one_it_works_with_is_refused(
    argv: list[str], says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # were it run, its runs/ would be made here
    assert main(argv) == 2  # before: ignored without a word (the run or server went on)
    assert f"error: {says}" in capsys.readouterr().err


def test_a_creature_list_of_only_commas_names_no_creature() -> None:
    from terrarium.cli.run import parse_creatures

    for spec in (",", " , ,"):
        with pytest.raises(TerrariumError) as exc:
            parse_creatures(spec, ["a", "b"], allow_none=True)  # before: hosted nothing
        assert "names no creature" in exc.value.render()
    assert parse_creatures("all", ["a", "b"]) is None
    assert parse_creatures("none", ["a"], allow_none=True) == frozenset()


def test_a_wav_that_is_not_a_file_is_refused_before_the_team_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "fifo.wav"
    os.mkfifo(fifo)
    for wav, says in [(tmp_path / "none.wav", "does not exist"), (tmp_path, "is a folder"),
                      (fifo, "is not a regular file")]:
        with pytest.raises(SystemExit) as exc:  # before: told after start, or a FIFO hung
            main(["run", TEAM, "--wav", str(wav), "--runs-dir", str(tmp_path / "runs")])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert "error: argument --wav: " in err and says in err


def test_graph_output_that_cannot_be_a_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    for out, says in [("", "an empty path"), (str(tmp_path), "is a folder"),
                      (str(afile / "x.svg"), "is a file, not a folder"),
                      (str(tmp_path / "no" / "x.svg"), "does not exist")]:
        with pytest.raises(SystemExit) as exc:
            main(["graph", TEAM, "-o", out])  # before: "" printed to stdout, exit 0
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert "error: argument -o/--output: " in err and says in err
    assert main(["graph", TEAM, "-o", str(tmp_path / "team.svg")]) == 0


@pytest.mark.parametrize("argv", [
    ["validate", ""], ["run", " ", "--input", "x"], ["prompt", "", "editor"],
    ["tools", "", "editor"], ["graph", ""], ["serve", ""],
    ["worker", "", "--broker", "nats://127.0.0.1:1"], ["migrate", "", "out"],
    ["migrate", TEAM, ""],
])
def test_an_empty_path_is_not_taken_for_this_folder(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # were "" taken for ".", nothing outside tmp_path is touched
    with pytest.raises(SystemExit) as exc:  # before: "" was ".", the current folder
        main(argv)
    assert exc.value.code == 2
    assert "an empty path; give a folder (use . for this one)" in capsys.readouterr().err


def test_migrate_refuses_an_out_dir_it_cannot_make_and_a_source_it_cannot_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    for out in (afile, afile / "sub"):
        assert main(["migrate", TEAM, str(out)]) == 1
        err = capsys.readouterr().err
        assert f"cannot write the migrated package there: {afile} is a file" in err
    odd = tmp_path / "odd"
    (odd / "a").mkdir(parents=True)
    (odd / "a" / "config.yaml").write_text("name: a\n")
    os.mkfifo(odd / "a" / "pipe")
    assert main(["migrate", str(odd), str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert f"1 file(s) of {odd} could not be copied, first {odd / 'a' / 'pipe'}" in err
    assert "Traceback" not in err and "[(" not in err  # not shutil's list of tuples


@pytest.mark.parametrize(("word", "says"), [
    ("valdiate", "did you mean 'validate'?"),
    ("serv", "did you mean 'serve'?"),
    ("xyz", "the commands: validate, run, "),
])
def test_a_mistyped_command_is_told_with_the_one_meant(
    word: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([word, TEAM]) == 2  # before: argparse's SystemExit listing all thirteen
    err = capsys.readouterr().err
    assert err.startswith(f"terrarium: error: there is no command {word!r}; ") and says in err
