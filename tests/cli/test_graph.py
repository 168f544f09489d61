"""The team's topology as data (``GET /v1/team``, ``validate``) and as a picture (``graph``)."""

from __future__ import annotations

from pathlib import Path

from terrarium.config import load_team
from terrarium.config.topology import team_topology

ROOT = Path(__file__).resolve().parents[2]
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


CODE_FIXERS = ROOT / "examples" / "code_fixers"


def _graph(tmp_path: Path, team: Path, fmt: str) -> str:
    from terrarium.cli.command import main

    out = tmp_path / f"g.{fmt}"
    assert main(["graph", str(team), "--format", fmt, "-o", str(out)]) == 0
    return out.read_text(encoding="utf-8")


def test_graph_svg_draws_every_creature_and_channel(tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    svg = _graph(tmp_path, NEWSROOM, "svg")
    root = ET.fromstring(svg)  # well-formed, standalone
    texts = " ".join("".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text"))
    for name in ("user", "reporter", "editor", "archivist", "tips", "stories", "published"):
        assert name in texts
    assert "broadcast · published_message" in texts and "queue · story" in texts
    assert "output" in texts  # the archivist is marked
    assert 'stroke-dasharray' in svg  # the broadcast channel is dashed
    assert "<script" not in svg and "http://www.w3.org/2000/svg" in svg


def test_graph_dot_and_mermaid_have_the_cycle_and_output(tmp_path: Path) -> None:
    dot = _graph(tmp_path, CODE_FIXERS, "dot")
    assert '"reviewer" -> "worker" [label="review (queue · review_message)"]' in dot
    assert '"reviewer" [peripheries=2, xlabel="output"]' in dot
    mm = _graph(tmp_path, CODE_FIXERS, "mermaid")
    assert mm.startswith("flowchart LR")
    assert 'n_worker -->|"changes (queue · changes)"| n_reviewer' in mm
    assert 'n_reviewer[["reviewer (output)"]]' in mm


def test_graph_broadcast_is_dotted_in_mermaid_and_dashed_in_dot(tmp_path: Path) -> None:
    assert "n_editor -.->" in _graph(tmp_path, NEWSROOM, "mermaid")
    assert "style=dashed" in _graph(tmp_path, NEWSROOM, "dot")


def test_graph_of_a_broken_team_is_a_sentence(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from terrarium.cli.command import main

    (tmp_path / "terrarium.yaml").write_text("terrarium: {name: x, creatures: [{name: a}]}\n")
    assert main(["graph", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "terrarium.yaml" in err


def test_topology_reads_bounds_of_a_python_model(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "web_ticket_model.py").write_text(
        "from typing import Literal\nfrom pydantic import BaseModel, Field\n"
        "class Ticket(BaseModel):\n"
        "    text: str\n"
        "    copies: int = Field(1, ge=1, le=5)\n"
        "    level: Literal['low', 'high'] = 'low'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "config.yaml").write_text(
        "name: c\ncontroller: {provider: scripted, script: s.yaml}\n")
    (tmp_path / "c" / "s.yaml").write_text("turns: []\n")
    (tmp_path / "terrarium.yaml").write_text(
        "terrarium:\n  name: t\n  input_channel: jobs\n"
        "  creatures:\n    - {name: c, config: c, channels: {listen: [jobs]}}\n"
        "  channels:\n    jobs: {schema: 'web_ticket_model:Ticket'}\n")
    schema = team_topology(load_team(tmp_path)).channels[0].schema_
    assert schema is not None
    fields = {f.name: f for f in schema.fields}
    assert (fields["copies"].minimum, fields["copies"].maximum) == (1, 5)
    assert not fields["copies"].required and fields["text"].required
    assert fields["level"].enum == ["low", "high"]
