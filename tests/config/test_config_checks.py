"""Config checks that explain one mistake once, in the place it was made: YAML 1.1
surprises, kohaku.yaml list entries, prompt files outside their folder, typos, and the
delegation tree ``validate`` prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from terrarium.cli.command import main
from terrarium.config.yamlio import parse_yaml
from tests.config_fixtures import errors_of, write

# -- YAML 1.1 ------------------------------------------------------------------------------


def test_yaml11_note_names_the_text_as_written() -> None:
    doc = parse_yaml('a: [yes, No, ON, "yes"]\nv: 1.10\nw: 2.0\nn: 7\nq: "1.10"\n',
                     Path("x.yaml"))
    assert doc.data["a"] == [True, False, True, "yes"]
    assert "`yes` as the boolean true" in (doc.yaml11_note(("a", 0), True) or "")
    assert '"No"' in (doc.yaml11_note(("a", 1), False) or "")
    assert "`ON` as the boolean true" in (doc.yaml11_note(("a", 2), True) or "")
    assert doc.yaml11_note(("a", 3), "yes") is None  # quoted: text, nothing to explain
    assert "`1.10` as the number 1.1" in (doc.yaml11_note(("v",), 1.1) or "")
    assert "`2.0` as a number" in (doc.yaml11_note(("w",), 2.0) or "")
    assert doc.yaml11_note(("q",), "1.10") is None


def test_a_number_where_a_number_belongs_gets_no_quoting_advice(tmp_path: Path) -> None:
    write(tmp_path, {"c/config.yaml": "name: c\nmax_iterations: 2.5\n"})
    (line,) = errors_of(tmp_path / "c")
    assert "max_iterations" in line and "quoted" not in line


def test_enum_of_on_off_in_a_channel_schema_file(tmp_path: Path) -> None:
    write(tmp_path, {
        "terrarium.yaml": "terrarium:\n  name: t\n  input_channel: i\n  channels:\n"
                          "    i: {schema: lamp}\n  creatures:\n    - name: b\n"
                          "      config: b\n      channels: {listen: [i]}\n",
        "channels/lamp.yaml": "fields:\n  text: {type: str}\n  state:\n    type: enum\n"
                              "    values: [on, off]\n",
        "b/config.yaml": "name: b\n",
    })
    (line,) = errors_of(tmp_path)
    assert "lamp.yaml:5:14: fields.state.values[0]: enum value True" in line
    assert 'write "on" (quoted)' in line


# -- kohaku.yaml list entries ------------------------------------------------------------


def test_missing_package_skill_is_reported_at_its_entry(tmp_path: Path) -> None:
    write(tmp_path, {"kohaku.yaml": "name: p\nskills:\n  - name: present\n"
                                    "    path: skills/present\n  - name: absent\n"
                                    "    path: skills/absent\n",
                     "skills/present/SKILL.md": "# Present\n"})
    (line,) = errors_of(tmp_path)
    assert "kohaku.yaml:6:5: skills[1].path: skill 'absent' not found" in line


def test_misspelled_required_package_name_is_one_error(tmp_path: Path) -> None:
    write(tmp_path, {"kohaku.yaml": "nmae: p\nversion: '1'\n"})
    (line,) = errors_of(tmp_path)
    assert "kohaku.yaml:1:1: nmae: unknown key 'nmae', likely a typo of the required key " \
        "'name'" in line


# -- prompt files outside the creature's folder ----------------------------------------------


def test_outside_prompt_file_is_allowed_only_explicitly(tmp_path: Path) -> None:
    write(tmp_path, {"shared/persona.md": "You are {{ creature }}.\n",
                     "c/config.yaml": "name: c\nsystem_prompt_file: ../shared/persona.md\n"})
    (line,) = errors_of(tmp_path / "c")
    assert "config.yaml:2:1: system_prompt_file: prompt file" in line
    (tmp_path / "c/config.yaml").write_text(
        "name: c\nsystem_prompt_file: ../shared/persona.md\nallow_outside_paths: true\n")
    assert errors_of(tmp_path / "c") == []


def test_a_prompt_file_elsewhere_in_the_package_is_inside(tmp_path: Path) -> None:
    write(tmp_path, {"kohaku.yaml": "name: p\ncreatures: [creatures/c]\n",
                     "prompts/shared.md": "Be brief.\n",
                     "creatures/c/config.yaml": "name: c\n"
                                                "system_prompt_file: ../../prompts/shared.md\n"})
    assert errors_of(tmp_path) == []
    assert errors_of(tmp_path / "creatures/c") == []


def test_a_base_config_may_name_its_own_prompt_file(tmp_path: Path) -> None:
    """The check is against the folder of the config that writes the path."""
    write(tmp_path, {"base/config.yaml": "name: base\nsystem_prompt_file: p.md\n",
                     "base/p.md": "Base.\n",
                     "kid/config.yaml": "name: kid\nbase_config: ../base\n"})
    assert errors_of(tmp_path / "kid") == []


# -- one mistake, one error --------------------------------------------------------------------


def test_misspelled_can_send_gives_only_the_did_you_mean(tmp_path: Path) -> None:
    write(tmp_path, {
        "terrarium.yaml": "terrarium:\n  name: t\n  input_channel: i\n  channels:\n"
                          "    i: {}\n    out: {}\n  creatures:\n"
                          "    - name: a\n      config: a\n"
                          "      channels: {listen: [i], can_send: [otu]}\n"
                          "    - name: b\n      config: b\n      channels: {listen: [out]}\n",
        "a/config.yaml": "name: a\nsend_fill: {out: {text: input}}\n",
        "b/config.yaml": "name: b\n",
    })
    (line,) = errors_of(tmp_path)
    assert "unknown channel 'otu' in can_send" in line and "did you mean 'out'" in line


# -- the delegation tree in validate's summary ---------------------------------------------


def test_validate_summary_shows_the_delegation_tree(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {
        "terrarium.yaml": "terrarium:\n  name: t\n  creatures:\n    - name: lead\n"
                          "      config: lead\n",
        "lead/config.yaml": "name: lead\nskill_mode: static\nsubagent_depth: 2\n"
                            "subagent_concurrency: 3\n"
                            "subagents:\n  scout: ../scout\n"
                            "  writer: {config: ../writer, max_iterations: 2, timeout: 30}\n"
                            "background: {scout: true}\n",
        "scout/config.yaml": "name: scout\nskill_mode: static\nmax_iterations: 5\n"
                             "subagents:\n  deep: ../deep\n",
        "deep/config.yaml": "name: deep\nskill_mode: static\nsubagents:\n  deeper: ../deeper\n",
        "deeper/config.yaml": "name: deeper\n",
        "writer/config.yaml": "name: writer\n",
    })
    assert main(["validate", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    tree = out[out.index("sub-agents"):].splitlines()
    assert "sub-agents (depth limit 2, at most 3 at once):" in tree[0]
    assert "└ scout (depth 1; max_iterations 5, timeout 300s, background by default)" in tree[1]
    assert "└ deep (depth 2;" in tree[2] and tree[2].index("└") > tree[1].index("└")
    assert "└ deeper (depth 3): beyond the depth limit" in tree[3]
    assert "└ writer (depth 1; max_iterations 2, timeout 30s)" in tree[4]
