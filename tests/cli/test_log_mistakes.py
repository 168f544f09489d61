"""``terrarium log`` (and ``monitor``, ``run --resume``) given a careless value: a run id
cut short, a ``--kind`` typo, a ``--creature`` the run never had, a ``--since`` empty or
too far back. Each is told in a sentence with what to do; none is a silent empty answer or
a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from terrarium.channels.log import DurableLog
from terrarium.cli import main
from terrarium.runtime.runtime import LOG_FILE

ROOT = Path(__file__).resolve().parents[2]
NEWSROOM = str(ROOT / "examples" / "scripted_newsroom")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    runs = tmp_path_factory.mktemp("runs")
    assert main(["run", NEWSROOM, "--input", "A comet over Oslo.", "--runs-dir", str(runs),
                 "--audio", "none"]) == 0
    with DurableLog(runs / LOG_FILE) as log:
        [run] = log.runs()
    return runs, run.run_id


@pytest.mark.parametrize("command", ["log", "monitor"])
def test_a_run_id_cut_short_names_the_whole_one(
    command: str, recorded: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    runs, run_id = recorded
    assert main([command, run_id[:10], "--runs-dir", str(runs)]) == 1
    err = capsys.readouterr().err
    assert f"hint: a run id is given whole; did you mean {run_id}?" in err


def test_resume_of_a_run_id_cut_short_names_the_whole_one(
    recorded: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    runs, run_id = recorded
    assert main(["run", NEWSROOM, "--resume", run_id[:10], "--runs-dir", str(runs),
                 "--audio", "none"]) == 1
    assert f"did you mean {run_id}?" in capsys.readouterr().err


def test_an_unknown_run_id_says_how_to_list_the_runs(
    recorded: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    runs, _ = recorded
    assert main(["log", "nosuch", "--runs-dir", str(runs)]) == 1
    assert f"hint: `terrarium log --runs-dir {runs}` lists the runs" in capsys.readouterr().err


def test_a_kind_typo_is_told_with_the_kind_meant(
    recorded: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    runs, run_id = recorded
    assert main(["log", run_id, "--runs-dir", str(runs), "--kind", "turn,tool_cal"]) == 1
    err = capsys.readouterr().err
    assert "error: --kind 'tool_cal' is not a kind of event" in err
    assert "hint: did you mean 'tool_call'?" in err


@pytest.mark.parametrize("kind", ["turn", "tool_result", "transcript", "message",
                                  "job_started", "assistant"])
def test_a_known_kind_is_taken_even_when_the_run_has_none(
    kind: str, recorded: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    runs, run_id = recorded
    assert main(["log", run_id, "--runs-dir", str(runs), "--kind", kind]) == 0


def test_a_creature_the_run_never_had_is_noted(
    recorded: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    runs, run_id = recorded
    assert main(["log", run_id, "--runs-dir", str(runs), "--creature", "edtior"]) == 0
    out, err = capsys.readouterr()
    assert "(nothing recorded that matches)" in out
    assert f"note: run {run_id} recorded nothing of a creature 'edtior'" in err
    assert "archivist, editor, reporter" in err
    assert main(["log", run_id, "--runs-dir", str(runs), "--creature", "editor"]) == 0
    assert "note:" not in capsys.readouterr().err


@pytest.mark.parametrize(("since", "says"), [
    ("", "--since is empty"),
    ("99999999999h", "further back than a date can be"),
    ("99999999999999999999999d", "further back than a date can be"),
])
def test_a_since_that_cannot_be_a_time(
    since: str, says: str, recorded: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    runs, run_id = recorded
    for argv in (["log", run_id], ["log"]):
        assert main([*argv, "--runs-dir", str(runs), "--since", since]) == 1
        err = capsys.readouterr().err
        assert err.startswith("error: --since ") and says in err and "Traceback" not in err


def test_monitor_without_a_run_names_the_runs_dir_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["monitor", "--runs-dir", str(tmp_path)]) == 1
    assert f"`terrarium log --runs-dir {tmp_path}` lists the runs" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["log", "run", "monitor"])
def test_a_run_log_that_is_garbage_or_a_folder_says_what_to_do(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    garbage, folder = tmp_path / "garbage", tmp_path / "folder"
    garbage.mkdir()
    (garbage / LOG_FILE).write_bytes(b"\x00\x01not sqlite" * 500)
    (folder / LOG_FILE).mkdir(parents=True)
    argv = {"log": ["log"], "monitor": ["monitor", "abc"],
            "run": ["run", NEWSROOM, "--input", "x", "--audio", "none"]}[command]
    assert main([*argv, "--runs-dir", str(garbage)]) == 1
    err = capsys.readouterr().err
    assert "hint: it is not a terrarium run log: move it away, or give another --runs-dir" in err
    assert main([*argv, "--runs-dir", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "is a folder" in err and "move it away, or give another --runs-dir" in err
