"""The one dry start: every way in (validate, prompt, run, TeamRuntime) refuses the same
team with the same located errors, and a start handed the command line's dry start does
not assemble its creatures again."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from terrarium.cli.command import main
from terrarium.config import load_any
from terrarium.errors import ConfigErrors
from terrarium.runtime.preflight import check_team_start, dry_start
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime


def broken_creature(folder: Path) -> Path:
    """A creature whose persona shows a call it cannot make (found only by a dry start)."""
    (folder / "c").mkdir(parents=True)
    (folder / "c/config.yaml").write_text("name: c\nsystem_prompt_file: p.md\n")
    (folder / "c/p.md").write_text(
        'You are c. For example:\n{{ call("teleport", where="moon") }}\n')
    return folder / "c"


def test_team_runtime_refuses_what_validate_refuses(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = broken_creature(tmp_path)
    team = load_any(path)
    expected = [e.render() for e in check_team_start(team)]  # type: ignore[arg-type]
    assert len(expected) == 1 and "example call 'teleport'" in expected[0]
    assert main(["validate", str(path)]) == 2
    assert expected[0].splitlines()[0] in capsys.readouterr().err

    async def start() -> None:
        async with TeamRuntime(team, RuntimeOptions(runs_dir=tmp_path / "runs")):  # type: ignore[arg-type]
            pytest.fail("a team validate refuses must not start")

    with pytest.raises(ConfigErrors) as info:
        anyio.run(start)
    assert [e.render() for e in info.value.errors] == expected


def test_a_start_reuses_the_dry_start_it_is_handed(tmp_path: Path) -> None:
    team = load_any(Path(__file__).parents[1] / "runtime_fixtures" / "operated")
    checked = dry_start(team, window=False).raise_errors()  # type: ignore[arg-type]
    assert sorted(checked.parts) == ["root", "worker"]

    async def start() -> None:
        opts = RuntimeOptions(runs_dir=tmp_path / "runs")
        async with TeamRuntime(team, opts, checked=checked) as rt:  # type: ignore[arg-type]
            parts = {n: c.parts for n, c in rt._creatures.items()}
        assert all(parts[n] is checked.parts[n] for n in checked.parts)
        async with TeamRuntime(team, opts) as rt:  # type: ignore[arg-type]
            fresh = {n: c.parts for n, c in rt._creatures.items()}
        assert sorted(fresh) == sorted(parts)
        assert not any(fresh[n] is checked.parts[n] for n in checked.parts)

    anyio.run(start)
