"""Paths a careless user gives, or a config names, that exist but are not what is wanted:
a FIFO (its read waited for ever), a dangling symlink, a folder where a file is meant
(said "not found" of a path that is there). Each is one located sentence, exit 2."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from terrarium.cli import main

ROOT = Path(__file__).resolve().parents[2]
NEWSROOM = ROOT / "examples" / "scripted_newsroom"


@pytest.mark.parametrize("command", ["validate", "run", "prompt", "graph"])
def test_a_fifo_given_as_the_team_is_refused_not_read(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "team"
    os.mkfifo(fifo)
    argv = {"validate": ["validate"], "run": ["run", "--input", "x", "--runs-dir",
                                             str(tmp_path / "runs")],
            "prompt": ["prompt"], "graph": ["graph"]}[command]
    extra = ["editor"] if command == "prompt" else []
    assert main([*argv, str(fifo), *extra]) == 2  # before: the read never returned
    err = capsys.readouterr().err
    assert "team is not a regular file (a pipe, socket or device)" in err


def test_a_dangling_symlink_says_where_it_points(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "team"
    link.symlink_to(tmp_path / "gone")
    assert main(["validate", str(link)]) == 2
    err = capsys.readouterr().err
    assert f"{link} is a symlink to {tmp_path / 'gone'}, which does not exist" in err


@pytest.mark.parametrize("name", ["terrarium.yaml", "config.yaml", "kohaku.yaml"])
def test_a_folder_named_like_the_config_is_said_to_be_a_folder(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / name).mkdir()
    assert main(["validate", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / name} is a folder, not a file" in err  # not "holds no config.yaml"


def _newsroom(tmp_path: Path) -> Path:
    team = tmp_path / "team"
    shutil.copytree(NEWSROOM, team)
    return team


@pytest.mark.parametrize(("key", "what"), [
    ("system_prompt_file", "prompt file"),
    ("script", "script file"),
])
@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_file_a_config_names_that_is_a_folder_or_a_fifo(
    key: str, what: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    team = _newsroom(tmp_path)
    odd = team / "editor" / "odd"
    odd.mkdir() if kind == "folder" else os.mkfifo(odd)
    controller = "{provider: scripted, script: %s}" % ("odd" if key == "script"
                                                       else "script.yaml")
    prompt = "system_prompt_file: odd\n" if key == "system_prompt_file" else ""
    (team / "editor" / "config.yaml").write_text(
        f"name: editor\n{prompt}controller: {controller}\n")
    assert main(["validate", str(team)]) == 2
    err = capsys.readouterr().err
    said = ("is a folder, not a file" if kind == "folder"
            else "is not a regular file (a pipe, socket or device)")
    assert f"{what} {said}: {odd}" in err


def test_a_creature_config_that_is_a_fifo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    team = _newsroom(tmp_path)
    shutil.rmtree(team / "editor")
    (team / "editor").mkdir()
    os.mkfifo(team / "editor" / "config.yaml")
    assert main(["validate", str(team)]) == 2
    err = capsys.readouterr().err
    assert "terrarium.creatures[1].config: creature config is not a regular file" in err
