"""``terrarium graph``: the team's topology as a picture for READMEs and docs.

Drawn from :func:`terrarium.config.topology.team_topology`, the data ``validate``'s summary
and the web page show: creatures are nodes, every channel is an edge from each sender to
each listener labelled with its kind and schema, the creature whose words reach the user
is marked. SVG is drawn from :mod:`terrarium.config.topology_layout` (columns by distance
from the user, no graphviz needed), the layout the web page draws too;
DOT and Mermaid are left to their own renderers.
"""

from __future__ import annotations

import argparse
import sys
from html import escape
from pathlib import Path

from terrarium.cli.targets import load_one_team
from terrarium.config.topology import Topology, team_topology
from terrarium.config.topology_layout import USER, edges, layout, nodes
from terrarium.errors import TerrariumError

__all__ = ["cmd_graph", "render_dot", "render_mermaid", "render_svg"]

def render_svg(topo: Topology) -> str:
    """A standalone SVG (no scripts, no external fonts) of the team, as
    :func:`terrarium.config.topology_layout.layout` lays it out (the web page draws the
    same layout)."""
    lay = layout(topo)
    w, h = lay.node_width, lay.node_height
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{lay.width:.0f}" '
        f'height="{lay.height:.0f}" viewBox="0 0 {lay.width:.0f} {lay.height:.0f}" '
        'font-family="sans-serif" font-size="12" '
        f'role="img" aria-label="{escape(topo.name)} topology">',
        f"<title>{escape(topo.name)}</title>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" '
        'fill="#555"/></marker></defs>',
        '<rect width="100%" height="100%" fill="#fff"/>',
    ]
    for e in lay.edges:
        dash = ' stroke-dasharray="6 4"' if e.kind == "broadcast" else ""
        label = f"{e.channel} ({e.kind} · {e.schema_name})"
        lx, ly = f"{e.label_x:.0f}", f"{e.label_y:.0f}"
        parts.append(f'<path d="{e.path}" fill="none" stroke="#555" stroke-width="1.4"{dash} '
                     f'marker-end="url(#arrow)"><title>{escape(label)}</title></path>')
        parts.append(f'<text x="{lx}" y="{ly}" text-anchor="middle" fill="#333" '
                     f'paint-order="stroke" stroke="#fff" stroke-width="3">'
                     f'<tspan font-weight="bold">{escape(e.channel)}</tspan>'
                     f'<tspan x="{lx}" dy="14" font-size="11">{escape(e.detail)}</tspan>'
                     "</text>")
    for n in lay.nodes:
        fill = "#eef4ff" if n.creature else "#f4f4f4"
        stroke, sw = ("#1f6f3f", 3) if n.output else ("#335", 1.5)
        parts.append(f'<g><rect x="{n.x:.0f}" y="{n.y:.0f}" width="{w}" height="{h}" '
                     f'rx="8" fill="{fill}" stroke="{stroke}" stroke-width="{sw}"/>')
        parts.append(f'<text x="{n.x + w / 2:.0f}" y="{n.y + 22:.0f}" text-anchor="middle" '
                     f'font-weight="bold">{escape(n.name)}</text>')
        parts.append(f'<text x="{n.x + w / 2:.0f}" y="{n.y + 40:.0f}" text-anchor="middle" '
                     f'fill="#555" font-size="11">{escape(n.caption)}</text></g>')
    parts.append(f'<text x="30" y="{lay.height - 14:.0f}" fill="#555" font-size="11">'
                 f"{escape(topo.name)}: solid = queue, dashed = broadcast, thick green = "
                 "output creature</text>")
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _dot_id(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_dot(topo: Topology) -> str:
    """Graphviz DOT (``dot -Tsvg``)."""
    lines = [f"digraph {_dot_id(topo.name)} {{", "  rankdir=LR;",
             '  node [shape=box, style="rounded,filled", fillcolor="#eef4ff"];']
    for n in nodes(topo):
        attrs = ['shape=ellipse, fillcolor="#f4f4f4"'] if n == USER else []
        if n == topo.output_creature:
            attrs.append('peripheries=2, xlabel="output"')
        lines.append(f"  {_dot_id(n)}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    for e in edges(topo):
        style = ", style=dashed" if e.kind == "broadcast" else ""
        lines.append(f"  {_dot_id(e.src)} -> {_dot_id(e.dst)} [label={_dot_id(e.label)}{style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _mm_id(name: str) -> str:
    return "n_" + "".join(ch if ch.isalnum() else "_" for ch in name)


def _mm_text(text: str) -> str:
    return text.replace('"', "#quot;")


def render_mermaid(topo: Topology) -> str:
    """A Mermaid flowchart (GitHub renders it inside a ```mermaid block)."""
    lines = ["flowchart LR"]
    for n in nodes(topo):
        if n == USER:
            lines.append(f'  {_mm_id(n)}(["{_mm_text(n)}"])')
        elif n == topo.output_creature:
            lines.append(f'  {_mm_id(n)}[["{_mm_text(n)} (output)"]]')
        else:
            lines.append(f'  {_mm_id(n)}["{_mm_text(n)}"]')
    for e in edges(topo):
        arrow = "-.->" if e.kind == "broadcast" else "-->"
        lines.append(f'  {_mm_id(e.src)} {arrow}|"{_mm_text(e.label)}"| {_mm_id(e.dst)}')
    return "\n".join(lines) + "\n"


_RENDER = {"svg": render_svg, "dot": render_dot, "mermaid": render_mermaid}


def cmd_graph(args: argparse.Namespace) -> int:
    """Load (with load-time checks only: nothing is assembled or started) and draw."""
    result = load_one_team(Path(args.path), "graph")
    text = _RENDER[args.format](team_topology(result))
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise TerrariumError(f"cannot write {args.output}: {exc.strerror}",
                                 suggestion="give a file you may write, or leave -o out "
                                 "for stdout") from None
    else:
        sys.stdout.write(text)
    return 0
