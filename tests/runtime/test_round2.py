"""Reliability, round two: sub-agents, jobs, default limits, failover hashes, cron, and the
first round's leftovers, each as a user meets it (issue 27)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from terrarium.cli import main
from terrarium.config import load_single_creature
from terrarium.events import Event, TranscriptAppended
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime
from terrarium.runtime.triggers import next_cron
from terrarium.tools.approval import approve_all


def call(tool: str, /, **args: Any) -> str:
    body = "".join(f"@@{k}={v}\n" for k, v in args.items())
    return f"[/{tool}]\n{body}[{tool}/]"


def creature(root: Path, name: str, steps: list[Any], **config: Any) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    body = {"name": name, "controller": {"provider": "scripted", "script": "script.yaml"},
            "skill_mode": "static", **config}
    (folder / "config.yaml").write_text(yaml.safe_dump(body), encoding="utf-8")
    (folder / "script.yaml").write_text(yaml.safe_dump({"steps": steps}), encoding="utf-8")
    return folder


def ask(folder: Path, text: str, runs: Path, **options: Any) -> tuple[TeamRuntime, str]:
    """One turn of the single creature at ``folder``; the runtime (ended) and its answer."""
    team = load_single_creature(folder)
    name = next(iter(team.creatures))
    opts = RuntimeOptions(runs_dir=runs, audio="none", warm_up=False, **options)

    async def go() -> tuple[TeamRuntime, str]:
        async with TeamRuntime(team, opts) as rt:
            with anyio.fail_after(30):
                result = await rt.ask(name, text)
        assert result is not None
        return rt, result.text

    return anyio.run(go)


# -- 3. a sub-agent without a workspace of its own ------------------------------------------


def helper_and_lead(tmp_path: Path, **lead: Any) -> tuple[Path, Path]:
    helper = creature(tmp_path, "helper", [
        {"match": "tidy up", "reply": call("edit", path="config.yaml", old_string="name: helper",
                                           new_string="name: rewritten")},
        {"match": "Result of edit", "reply": call("shell", command="pwd; touch made.txt")},
        {"match": "exit code", "reply": "Done tidying."}],
        tools=["edit", "shell"])
    return helper, creature(tmp_path, "lead", [
        {"match": "please", "reply": call("helper", task="tidy up")},
        {"match": "Result of helper", "reply": "The helper is done."}],
        subagents={"helper": "../helper"}, **lead)


def test_a_subagent_without_a_workspace_never_works_in_its_config_folder(
        tmp_path: Path) -> None:
    helper, lead = helper_and_lead(tmp_path)
    before = (helper / "config.yaml").read_text()
    rt, answer = ask(lead, "please", tmp_path / "runs")
    assert answer == "The helper is done."
    assert (helper / "config.yaml").read_text() == before  # its config is untouched
    assert not (helper / "made.txt").exists()
    assert rt.run_dir is not None
    made = rt.run_dir / "workspace" / "lead" / "helper" / "made.txt"  # under --runs-dir
    assert made.exists()


def test_a_subagent_works_in_its_callers_workspace(tmp_path: Path) -> None:
    helper, lead = helper_and_lead(tmp_path, workspace="repo", tools=["shell"])
    (lead / "repo").mkdir()
    (lead / "repo" / "config.yaml").write_text("name: helper\n")  # the caller's file to edit
    ask(lead, "please", tmp_path / "runs")
    assert (lead / "repo" / "config.yaml").read_text() == "name: rewritten\n"
    assert (lead / "repo" / "made.txt").exists()
    assert "name: helper" in (helper / "config.yaml").read_text()


# -- 9. --yes reaches sub-agents -----------------------------------------------------------


def test_yes_approves_the_gated_calls_of_subagents(tmp_path: Path) -> None:
    creature(tmp_path, "careful", [
        {"match": "count", "reply": call("shell", command="echo counted")},
        {"match": "exit code", "reply": "Counted."}],
        tools=["shell"], approve=["shell"])
    lead = creature(tmp_path, "lead", [
        {"match": "go", "reply": call("careful", task="count")},
        {"match": "Result of careful", "reply": "Done."}],
        subagents={"careful": "../careful"})
    events: list[Event] = []
    ask(lead, "go", tmp_path / "runs", approver=approve_all, on_event=events.append)
    shown = "\n".join(e.entry.text for e in events if isinstance(e, TranscriptAppended)
                      and e.creature == "lead/careful")
    assert "counted\n[exit code 0]" in shown
    assert "nobody is there to approve" not in shown


# -- 10. a cron expression that never fires --------------------------------------------------


def test_a_cron_that_never_fires_is_a_config_error_with_its_place(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = creature(tmp_path, "clock", [], triggers=[
        {"type": "timer", "every": 60}, {"type": "cron", "cron": "0 0 30 2 *"}])
    assert main(["validate", str(folder)]) == 2
    err = capsys.readouterr().err
    line = next(n for n, text in enumerate((folder / "config.yaml").read_text().splitlines(), 1)
                if "0 0 30 2" in text)
    assert f"config.yaml:{line}:" in err
    assert "triggers[1]" in err
    assert "the cron expression '0 0 30 2 *' never fires" in err
    assert "Traceback" not in err and "CroniterBadDateError" not in err


def test_a_cron_croniter_gives_up_on_ends_its_trigger_not_the_run() -> None:
    assert next_cron("0 0 31 4 *", 0.0) is None  # April 31st: no such day


# -- 5. default settings never end a run -----------------------------------------------------


def test_read_file_with_its_defaults_fits_the_default_context(tmp_path: Path) -> None:
    """A ~19 KB file read with read_file's defaults, in the default 4,096-token window: the
    result is cut to fit, with a marker saying so, and the creature answers the next input."""
    folder = creature(tmp_path, "reader", [
        {"match": "read it", "reply": call("read_file", path="data/big.txt")},
        {"match": "Result of read_file", "reply": "Read it."},
        {"match": "and now", "reply": "Still here."}],
        tools=["read_file"], readable_paths=["data"])
    (folder / "data").mkdir()
    (folder / "data" / "big.txt").write_text(
        "".join(f"line {n}: the quick brown fox jumps over the lazy dog\n" for n in range(360)))
    assert 18_000 < (folder / "data" / "big.txt").stat().st_size < 20_000
    team = load_single_creature(folder)
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", warm_up=False)

    async def go() -> list[str]:
        async with TeamRuntime(team, opts) as rt:
            with anyio.fail_after(30):
                first = await rt.ask("reader", "read it")
                second = await rt.ask("reader", "and now?")
            assert rt.failed_creatures == {}
            ctl = rt._creatures["reader"].controller
            assert ctl is not None
            results = [t.content for t in ctl.conversation if t.content.startswith("Result of")]
        assert first is not None and second is not None
        return [first.text, second.text, *results]

    first, second, result = anyio.run(go)
    assert (first, second) == ("Read it.", "Still here.")
    assert result.startswith("Result of read_file: line 0: the quick brown fox")
    assert "[cut to fit the context window: showed " in result
    assert "ask for less (a line range, a narrower search)]" in result


# -- 6. worker failover with a workspace in the team folder ---------------------------------


def test_the_config_hash_leaves_out_what_creatures_work_on(tmp_path: Path) -> None:
    """A replacement worker compares config hashes; the files a creature wrote in its
    workspace (or writable paths) inside the team folder are work, not config."""
    from terrarium.config import load_team
    from terrarium.runtime.distributed import team_hash

    team_dir = tmp_path / "team"
    creature(team_dir, "coder", ["ok"], tools=["write_file", "shell"], workspace="../work",
             writable_paths=["../notes"])
    (team_dir / "terrarium.yaml").write_text(yaml.safe_dump({"terrarium": {
        "name": "coders", "input_channel": "tasks",
        "creatures": [{"name": "coder", "config": "coder", "channels": {"listen": ["tasks"]}}],
        "channels": {"tasks": {"type": "queue"}}}}))
    for d in ("work", "notes"):
        (team_dir / d).mkdir()
    before = team_hash(load_team(team_dir))
    (team_dir / "work" / "plan.md").write_text("# what the coder wrote\n")
    (team_dir / "work" / "src").mkdir()
    (team_dir / "work" / "src" / "settings.json").write_text("{}\n")
    (team_dir / "notes" / "log.txt").write_text("a note\n")
    assert team_hash(load_team(team_dir)) == before
    (team_dir / "coder" / "persona.md").write_text("A new prompt file is config.\n")
    assert team_hash(load_team(team_dir)) != before


# -- one error per mistake: a misspelled required key -----------------------------------------


@pytest.mark.parametrize(("body", "typo", "key"), [
    ({"subagents": {"helper": {"confg": "../helper"}}}, "confg", "config"),
    ({"triggers": [{"typ": "timer", "every": 5}]}, "typ", "type"),
    ({"plugins": [{"modul": "tool_budget"}]}, "modul", "module"),
])
def test_a_misspelled_required_key_is_one_error(tmp_path: Path, body: dict[str, Any],
                                               typo: str, key: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    folder = creature(tmp_path, "typo", [], **body)
    assert main(["validate", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("1 configuration error:"), err
    assert f"unknown key {typo!r}, likely a typo of the required key {key!r}" in err
