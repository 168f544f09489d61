"""Valid configurations load, merge and compile as documented."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from terrarium.cli import main
from terrarium.config import load_any, load_single_creature, load_team, merge_configs
from terrarium.config.reference import END, START, render_reference
from terrarium.errors import ConfigErrors

ROOT = Path(__file__).resolve().parents[2]


class DottedMsg(BaseModel):
    """A message type named by dotted path."""

    text: str
    n: int = 0


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def test_voice_assistant_validates(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(ROOT / "examples" / "voice_assistant")]) == 0
    out = capsys.readouterr().out
    for word in ("router", "speaker", "to_speaker", "speech_request", "utterance", "tts"):
        assert word in out


def test_repository_package_validates(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(ROOT / "kohaku.yaml")]) == 0
    assert "package is valid: terrarium" in capsys.readouterr().out


def test_docs_reference_matches_schemas() -> None:
    page = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    section = page.split(START, 1)[1].split(END, 1)[0]
    assert section.strip() == render_reference().strip(), (
        "docs/reference.md is stale: run python -m terrarium.config.reference --write "
        "docs/reference.md"
    )


def test_merge_rules() -> None:
    parent = {"name": "p", "tools": ["info", "read_file"], "controller": {"provider": "embedded",
              "temperature": 0.1}, "prompt_plugins": [{"name": "x", "text": "a"}]}
    child = {"base_config": "../p", "tools": ["read_file", "memory_write"],
             "controller": {"temperature": 0.7}, "prompt_plugins": [{"name": "x", "text": "b"}],
             "skill_mode": "static"}
    merged = merge_configs(parent, child)
    assert merged["tools"] == ["info", "read_file", "memory_write"]
    assert merged["controller"] == {"provider": "embedded", "temperature": 0.7}
    assert merged["prompt_plugins"] == [{"name": "x", "text": "b"}]
    assert merged["name"] == "p" and merged["skill_mode"] == "static"
    assert "base_config" not in merged


def test_base_config_chain_and_package_ref(tmp_path: Path) -> None:
    write(tmp_path, {
        "kohaku.yaml": "name: mypkg\ncreatures: [creatures/base]\n",
        "creatures/base/config.yaml": "name: base\nsystem_prompt_file: p.md\ntools: [info]\n",
        "creatures/base/p.md": "base persona\n",
        "solo/config.yaml": 'base_config: "@mypkg/creatures/base"\nname: solo\n'
                            "tools: [memory_search]\n",
    })
    team = load_single_creature(tmp_path / "solo")
    cfg = team.creatures["solo"].config
    assert cfg.tools == ["info", "memory_search"]
    # the inherited prompt path resolves against the parent's folder, not the child's
    assert Path(cfg.system_prompt_file) == (tmp_path / "creatures/base/p.md").resolve()


def test_schema_language_compiles(tmp_path: Path) -> None:
    write(tmp_path, {
        "terrarium.yaml": (
            "terrarium:\n  name: t\n  input_channel: inbox\n  creatures:\n"
            "    - name: a\n      config: a\n      channels: {listen: [inbox]}\n"
            "  channels:\n    inbox:\n      schema: rich\n"
            "    dotted:\n      schema: tests.config.test_config_valid:DottedMsg\n"
        ),
        "a/config.yaml": "name: a\n",
        "channels/rich.yaml": (
            "fields:\n  text: {type: str, example: a calm hello}\n"
            "  mood: {type: enum, values: [calm, loud], default: calm}\n"
            "  tags: {type: 'list[str]', default: []}\n"
            "  meta:\n    type: object\n    required: false\n"
            "    fields: {turn: {type: int}, ok: {type: bool}}\n"
            "  items:\n    type: list\n    default: []\n"
            "    items: {type: object, fields: {name: {type: str}}}\n"
        ),
    })
    team = load_team(tmp_path)
    mt = team.channels["inbox"].message_type
    assert mt is not None
    m = mt.model.model_validate({"text": "hi", "meta": {"turn": "3", "ok": "false"},
                                 "items": [{"name": "x"}]})
    assert m.mood == "calm" and m.meta.turn == 3 and m.meta.ok is False
    with pytest.raises(ValidationError):
        mt.model.model_validate({"text": "hi", "mood": "angry"})
    with pytest.raises(ValidationError):
        mt.model.model_validate({"text": "hi", "extra": 1})
    with pytest.raises(ValidationError):
        mt.model.model_validate({})
    labels = {f.name: f.type_label for f in mt.fields}
    assert labels["mood"] == "enum[calm|loud]" and labels["tags"] == "list[str]"
    examples = {f.name: f.example for f in mt.fields}
    assert examples["text"] == "a calm hello" and examples["mood"] is None
    dotted = team.channels["dotted"].message_type
    assert dotted is not None and dotted.model.__name__ == DottedMsg.__name__


def test_all_errors_reported_not_just_first(tmp_path: Path) -> None:
    write(tmp_path, {
        "terrarium.yaml": (
            "terrarium:\n  name: t\n  creatures:\n"
            "    - name: a\n      config: a\n      channels: {listen: [nope1], can_send: [nope2]}\n"
            "  channels:\n    c1: {schema: missing_schema}\n"
        ),
        "a/config.yaml": "name: a\ntool_fromat: xml\n",
    })
    with pytest.raises(ConfigErrors) as info:
        load_team(tmp_path)
    text = info.value.render()
    assert len(info.value.errors) == 4, text
    for part in ("nope1", "nope2", "missing_schema", "tool_fromat"):
        assert part in text


def test_load_any_rejects_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigErrors, match=r"holds no terrarium\.yaml"):
        load_any(tmp_path)


@pytest.mark.parametrize("example", sorted(p.name for p in (ROOT / "examples").iterdir()
                                           if p.is_dir()))
def test_every_example_validates(example: str) -> None:
    assert main(["validate", str(ROOT / "examples" / example)]) == 0


def test_loaders_accept_plain_strings() -> None:
    team = load_team(str(ROOT / "examples" / "voice_assistant"))
    assert sorted(team.creatures) == ["router", "speaker"]
