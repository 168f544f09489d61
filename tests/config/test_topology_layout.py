"""The one topology layout (config/topology_layout.py): columns by distance from the user,
boxes that never overlap, arrows that join two boxes, and ``terrarium graph``'s SVG drawn
exactly from it (the web page draws it too: tests/web/test_web_page.py)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from terrarium.cli.graph import render_svg
from terrarium.config import load_team
from terrarium.config.topology import team_topology
from terrarium.config.topology_layout import NODE_HEIGHT, NODE_WIDTH, columns, layout

ROOT = Path(__file__).resolve().parents[2]
TEAMS = sorted(p.name for p in (ROOT / "examples").iterdir() if (p / "terrarium.yaml").is_file())
SVG = "{http://www.w3.org/2000/svg}"


def test_columns_count_channel_hops_from_the_user() -> None:
    topo = team_topology(load_team(ROOT / "examples" / "scripted_newsroom"))
    assert columns(topo) == {"user": 0, "reporter": 1, "editor": 2, "archivist": 3}
    lay = layout(topo)
    assert [(n.name, n.column) for n in lay.nodes] == [
        ("user", 0), ("reporter", 1), ("editor", 2), ("archivist", 3)]
    user, archivist = lay.nodes[0], lay.nodes[-1]
    assert not user.creature and user.caption == "you"
    assert archivist.output and archivist.caption.startswith("output")


@pytest.mark.parametrize("example", TEAMS)
def test_boxes_never_overlap_and_every_arrow_joins_two_boxes(example: str) -> None:
    topo = team_topology(load_team(ROOT / "examples" / example))
    lay = layout(topo)
    boxes = {n.name: n for n in lay.nodes}
    assert set(boxes) >= {c.name for c in topo.creatures}
    for a in lay.nodes:
        assert 0 <= a.x and a.x + NODE_WIDTH <= lay.width
        assert 0 <= a.y and a.y + NODE_HEIGHT <= lay.height
        for b in lay.nodes:
            if a is not b:
                apart_x = a.x + NODE_WIDTH <= b.x or b.x + NODE_WIDTH <= a.x
                apart_y = a.y + NODE_HEIGHT <= b.y or b.y + NODE_HEIGHT <= a.y
                assert apart_x or apart_y, (a.name, b.name)
    pairs = {(e.channel, e.src, e.dst) for e in lay.edges}
    assert pairs == {(ch.name, s, d) for ch in topo.channels
                     for s in ch.senders or ["?"] for d in ch.listeners or ["?"]}
    for e in lay.edges:
        start, end = (tuple(map(float, p.split(","))) for p in
                      re.findall(r"-?\d+(?:\.\d+)?,-?\d+(?:\.\d+)?", e.path)[::3])
        src, dst = boxes[e.src], boxes[e.dst]
        assert src.x <= start[0] <= src.x + NODE_WIDTH, e  # leaves the sender's box
        assert dst.x <= end[0] <= dst.x + NODE_WIDTH, e  # ends at the listener's box


@pytest.mark.parametrize("example", TEAMS)
def test_graph_svg_draws_the_layout(example: str) -> None:
    topo = team_topology(load_team(ROOT / "examples" / example))
    lay = layout(topo)
    svg = ET.fromstring(render_svg(topo))
    rects = [(float(r.get("x", "")), float(r.get("y", ""))) for r in svg.iter(f"{SVG}rect")
             if r.get("x") is not None]
    assert rects == [(round(n.x), round(n.y)) for n in lay.nodes]
    paths = [p.get("d") for p in svg.iter(f"{SVG}path") if p.get("marker-end")]
    assert paths == [e.path for e in lay.edges]
