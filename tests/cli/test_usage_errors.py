"""Words the command line did not take are named, under the usage of the command they
were given to (exit 2). Before: ``terrarium --bogus`` said "the following arguments are
required: COMMAND", and an extra word after a command showed the top-level usage, which
has none of that command's options; ``init`` took a wrong kind as a failure (exit 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from terrarium.cli import main

ROOT = Path(__file__).resolve().parents[2]
TEAM = str(ROOT / "examples" / "scripted_newsroom")

CASES = [
    (["--bogus"], "usage: terrarium [-h]",
     "terrarium: error: there is no option '--bogus' of terrarium's own"),
    (["--bogus", "validate", TEAM], "usage: terrarium [-h]",
     "a command's options come after it"),
    (["--json", "validate", TEAM], "usage: terrarium [-h]",
     "it is an option of `terrarium validate`: put it after the command"),
    (["validate", TEAM, "extra"], "usage: terrarium validate [-h] [--json] path",
     "terrarium validate: error: one argument too many: 'extra' (`terrarium validate` "
     "takes PATH"),
    (["validate", TEAM, "--jsn"], "usage: terrarium validate [-h] [--json] path",
     "there is no option '--jsn' of `terrarium validate`; did you mean '--json'?"),
    (["run", TEAM, "--inptu", "x"], "usage: terrarium run [-h]",
     "there is no option '--inptu' of `terrarium run`; did you mean '--input'?"),
    (["log", "a", "b"], "usage: terrarium log [-h]",
     "one argument too many: 'b' (`terrarium log` takes [RUN_ID]"),
    (["init", "creatur", "x"], "usage: terrarium init [-h] [team|creature] DIR",
     "'creatur' is not a kind to write: give team or creature (did you mean 'creature'?)"),
    (["init", "team", "a", "b"], "usage: terrarium init",
     "one argument too many: 'b'"),
]


@pytest.mark.parametrize(("argv", "usage", "says"), CASES,
                         ids=[" ".join(a[:3]).replace(TEAM, "TEAM") for a, _, _ in CASES])
def test_a_word_not_taken_is_named_under_its_commands_usage(
        argv: list[str], usage: str, says: str, capsys: pytest.CaptureFixture[str],
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # init writes nothing, but never in the repository
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(usage), err
    assert says in err, err
    assert "required: COMMAND" not in err and "Traceback" not in err


def test_terrariums_own_options_and_their_abbreviations_still_work(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--vers"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.startswith("terrarium ")
