"""``terrarium migrate`` on KohakuTerrarium forms the earlier corpus did not have: creature
files under KT's other names, catalogue metadata, KT's run budget kept as rounds, wiring
templates, teams started by ``--seed``, CRLF prompt files, and triggers that must still
fire after the rewrite.

Every fixture here was written for these tests in KT's documented shape.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from terrarium.cli.command import main
from tests.config_fixtures import errors_of, write


@pytest.fixture(autouse=True)
def _no_default_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TERRARIUM_LLM", raising=False)
    monkeypatch.delenv("TERRARIUM_PATH", raising=False)


def migrated(tmp_path: Path, files: dict[str, str], code: int = 0) -> tuple[Path, str]:
    write(tmp_path / "src", files)
    out = tmp_path / "out"
    assert main(["migrate", str(tmp_path / "src"), str(out)]) == code
    return out, (out / "MIGRATION.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(("name", "text"), [
    ("config.yml", "name: a  # mine\ntools: [read]\n"),
    ("config.json", '{"name": "a", "tools": ["read"]}'),
    ("config.toml", 'name = "a"\ntools = ["read"]\n'),
])
def test_kt_creature_files_under_other_names_become_config_yaml(
        tmp_path: Path, name: str, text: str) -> None:
    write(tmp_path / "kt", {name: text})
    (line,) = errors_of(tmp_path / "kt")
    assert f"KohakuTerrarium's {name} is not read here" in line
    out, report = migrated(tmp_path, {name: text})
    assert not (out / name).exists()
    assert "tools:\n  - read_file" in (out / "config.yaml").read_text(encoding="utf-8")
    assert f"config.yaml: written from {name}" in report
    assert "`terrarium validate` passes" in report


def test_a_base_config_folder_with_a_kt_file_name_says_so(tmp_path: Path) -> None:
    write(tmp_path, {"base/config.json": '{"name": "b"}',
                     "kid/config.yaml": "name: k\nbase_config: ../base\n"})
    (line,) = errors_of(tmp_path / "kid")
    assert "base_config: base_config '../base' not found" in line
    assert "KohakuTerrarium's config.json is not read here" in line


def test_catalogue_metadata_dropped_from_kohaku_yaml_is_listed(tmp_path: Path) -> None:
    _, report = migrated(tmp_path, {
        "kohaku.yaml": "name: shelf\ncreatures:\n  - name: helper\n    path: creatures/helper\n"
                       "    description: Helps.\n    base: general\n",
        "creatures/helper/config.yaml": "name: helper\n"})
    assert "kohaku.yaml: creatures: creatures entries are written as their paths; their " \
        "base, description, name (KohakuTerrarium's catalogue metadata) are not kept" in report


def test_kt_max_iterations_kept_as_rounds_is_listed_as_a_difference(tmp_path: Path) -> None:
    _, report = migrated(tmp_path, {"config.yaml": "name: a\nmax_iterations: 50\n"})
    behaviour = report.split("## Behaviour that differs")[1]
    assert "config.yaml: max_iterations: 50 is terrarium's model rounds in one turn" in behaviour


TEAM = ("terrarium:\n  name: t\n{extra}  creatures:\n"
        "    - name: a\n      base_config: ./a\n"
        "      channels: {{listen: [seed], can_send: [out]}}\n"
        "      output_wiring:\n        - {{to: b, prompt: 'From a: {{content}}'}}\n"
        "        - {{to: b, with_content: false}}\n"
        "    - name: b\n      base_config: ./a\n      channels: {{listen: [out]}}\n"
        "  channels:\n    seed: {{description: start here}}\n    out: {{description: results}}\n")


def test_wiring_prompt_templates_keep_the_delivery_and_say_what_validate_says(
        tmp_path: Path) -> None:
    out, report = migrated(tmp_path, {"terrarium.yaml": TEAM.format(extra=""),
                                      "a/config.yaml": "name: a\n"})
    team = (out / "terrarium.yaml").read_text(encoding="utf-8")
    assert "output_wiring:\n        - b\n" in team and "with_content" not in team
    assert "output_wiring.0.prompt: KohakuTerrarium's output_wiring `prompt` templates is " \
        "not supported here; use `message_templates` on the receiving creature" in report
    write(tmp_path / "kt", {"terrarium.yaml": TEAM.format(extra=""), "a/config.yaml": "name: a\n"})
    said = errors_of(tmp_path / "kt")
    ping = next(e for e in said if "with_content" in e).split(": ", 2)[2]
    assert ping in report


def test_a_rootless_team_takes_user_text_on_kts_seed_channel(tmp_path: Path) -> None:
    out, report = migrated(tmp_path, {"terrarium.yaml": TEAM.format(extra=""),
                                      "a/config.yaml": "name: a\n"})
    assert "input_channel: seed" in (out / "terrarium.yaml").read_text(encoding="utf-8")
    assert "terrarium.input_channel: seed (KohakuTerrarium's `--seed` channel)" in report


def test_a_rootless_team_takes_user_text_on_interface_inject_to(tmp_path: Path) -> None:
    team = TEAM.format(extra="  interface: {type: cli, inject_to: [out-box]}\n").replace(
        "seed", "tasks").replace("[out]", "[out-box]").replace("    out:", "    out-box:")
    out, report = migrated(tmp_path, {"terrarium.yaml": team, "a/config.yaml": "name: a\n"})
    assert "input_channel: out_box" in (out / "terrarium.yaml").read_text(encoding="utf-8")
    assert "(the first channel of `interface.inject_to`)" in report


def test_a_rootless_team_with_no_start_channel_is_told_what_to_set(tmp_path: Path) -> None:
    team = TEAM.format(extra="").replace("seed", "tasks")
    _, report = migrated(tmp_path, {"terrarium.yaml": team, "a/config.yaml": "name: a\n"})
    assert "the team has no root and no `input_channel`" in report
    assert "set `terrarium.input_channel: C`" in report


def test_an_include_rewritten_in_a_crlf_prompt_keeps_crlf(tmp_path: Path) -> None:
    write(tmp_path / "src", {
        "kohaku.yaml": "name: shelf\ncreatures: [creatures/a]\n"
                       "prompts:\n  - {name: rules, path: prompts/rules.md}\n",
        "prompts/rules.md": "Be kind.\n",
        "creatures/a/config.yaml": "name: a\nsystem_prompt_file: prompts/system.md\n"})
    (tmp_path / "src/creatures/a/prompts").mkdir()
    (tmp_path / "src/creatures/a/prompts/system.md").write_bytes(
        b'You are A.\r\n{% include "rules" %}\r\n')
    assert main(["migrate", str(tmp_path / "src"), str(tmp_path / "out")]) == 0
    assert (tmp_path / "out/creatures/a/prompts/system.md").read_bytes() == \
        b'You are A.\r\n{% include "rules.md" %}\r\n'


def test_a_migrated_kt_startup_trigger_fires_on_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = migrated(tmp_path, {"config.yaml": "name: a\ninput: {type: none}\n"
                                                "startup_trigger: {prompt: Greet the user.}\n"})
    assert "type: startup" in (out / "config.yaml").read_text(encoding="utf-8")
    script = tmp_path / "s.yaml"
    script.write_text('default_reply: "Noted."\nsteps:\n  - match: "Greet the user"\n'
                      '    reply: "HELLO FROM STARTUP"\n', encoding="utf-8")
    monkeypatch.setenv("TERRARIUM_LLM", f"scripted:{script}")
    capsys.readouterr()
    runs = str(tmp_path / "runs")
    assert main(["run", str(out), "--max-turns", "1", "--timeout", "30",
                 "--runs-dir", runs]) == 0
    run_id = capsys.readouterr().out.split()[1]
    assert main(["log", run_id, "--runs-dir", runs]) == 0
    timeline = capsys.readouterr().out
    assert "trigger=startup" in timeline and "assistant: HELLO FROM STARTUP" in timeline
