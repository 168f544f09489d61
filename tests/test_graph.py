"""The team's topology as data (``GET /v1/team``, ``validate``) and as a picture (``graph``)."""

from __future__ import annotations

from pathlib import Path

from terrarium.config import load_team
from terrarium.config.topology import team_topology

ROOT = Path(__file__).resolve().parents[1]
NEWSROOM = ROOT / "examples" / "scripted_newsroom"


def test_topology_has_every_creature_and_channel_with_their_wiring() -> None:
    topo = team_topology(load_team(NEWSROOM))
    assert [c.name for c in topo.creatures] == ["reporter", "editor", "archivist"]
    assert [c.name for c in topo.channels] == ["tips", "stories", "published"]
    assert topo.input_channel == "tips" and topo.output_creature == "archivist"
    editor = next(c for c in topo.creatures if c.name == "editor")
    assert editor.listens == ["stories"] and editor.can_send == ["published"]
    assert editor.tools == ["memory_write"]
    stories = topo.channel("stories")
    assert stories is not None and stories.senders == ["reporter"]
    assert stories.listeners == ["editor"]


def test_topology_fields_keep_order_enum_and_optional() -> None:
    data = team_topology(load_team(NEWSROOM)).model_dump(mode="json")
    stories = next(c for c in data["channels"] if c["name"] == "stories")
    fields = stories["schema"]["fields"]
    assert [f["name"] for f in fields] == ["headline", "body", "urgent", "section"]
    section = fields[3]
    assert section["enum"] == ["world", "science", "local"] and section["required"]
    assert fields[2]["type"] == "bool" and not fields[2]["required"]
    assert "schema_" not in stories


def test_topology_reads_multiline(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "config.yaml").write_text(
        "name: c\ncontroller: {provider: scripted, script: s.yaml}\n")
    (tmp_path / "c" / "s.yaml").write_text("turns: []\n")
    (tmp_path / "terrarium.yaml").write_text(
        "terrarium:\n  name: t\n  input_channel: jobs\n"
        "  creatures:\n    - {name: c, config: c, channels: {listen: [jobs]}}\n"
        "  channels:\n    jobs:\n      schema:\n        fields:\n"
        "          text: str\n          n: {type: int}\n"
        "          note: {type: str, multiline: true}\n")
    fields = team_topology(load_team(tmp_path)).channels[0].schema_.fields  # type: ignore[union-attr]
    assert [f.type for f in fields] == ["str", "int", "str"]
    assert fields[2].multiline and not fields[1].multiline
