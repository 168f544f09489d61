"""A creature that runs commands and names no workspace works in a folder of its own in
the run directory, never in its config folder (issue 13)."""

from __future__ import annotations

from pathlib import Path

import anyio

import terrarium


def test_shell_without_a_workspace_runs_in_the_run_directory(tmp_path: Path) -> None:
    folder = tmp_path / "sheller"
    folder.mkdir()
    (folder / "config.yaml").write_text(
        "name: sheller\ntools: [shell]\nskill_mode: static\nmax_iterations: 2\n"
        "controller: {provider: scripted, script: script.yaml}\n", encoding="utf-8")
    (folder / "script.yaml").write_text(
        "steps:\n"
        "  - match: where\n"
        "    reply: \"[/shell]\\n@@command=pwd\\n[shell/]\"\n"
        "  - match: Result of shell\n"
        "    reply: Done.\n", encoding="utf-8")
    opts = terrarium.RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", warm_up=False)
    report = anyio.run(lambda: terrarium.run(folder, ["where am I?"], options=opts))
    [(_, result)] = report.turns
    [call] = result.calls
    assert call.name == "shell" and call.ok, call.result
    expected = (tmp_path / "runs" / report.run_id / "workspace" / "sheller").resolve()
    assert str(expected) in call.result
    assert str(folder.resolve()) + "\n" not in call.result
