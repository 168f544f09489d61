"""``terrarium graph``: the team's topology as a picture for READMEs and docs.

Drawn from :func:`terrarium.config.topology.team_topology`, the data ``validate``'s summary
and the web page show: creatures are nodes, every channel is an edge from each sender to
each listener labelled with its kind and schema, the creature whose words reach the user
is marked. SVG is laid out here (layers by distance from the user, no graphviz needed);
DOT and Mermaid are left to their own renderers.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from html import escape
from pathlib import Path

from terrarium.config import Team, load_any
from terrarium.config.topology import Topology, team_topology
from terrarium.errors import TerrariumError

__all__ = ["cmd_graph", "render_dot", "render_mermaid", "render_svg"]

USER = "user"
_NODE_W, _NODE_H, _COL_GAP, _ROW_GAP, _PAD = 150, 54, 190, 60, 30


@dataclass(frozen=True, slots=True)
class Edge:
    channel: str
    src: str
    dst: str
    label: str
    broadcast: bool


def edges(topo: Topology) -> list[Edge]:
    """One edge per (sender, listener) of every channel, in declaration order."""
    out: list[Edge] = []
    for ch in topo.channels:
        schema = ch.schema_.name if ch.schema_ else "untyped"
        label = f"{ch.name} ({ch.kind} · {schema})"
        for s in ch.senders or ["?"]:
            for d in ch.listeners or ["?"]:
                out.append(Edge(ch.name, s, d, label, ch.kind == "broadcast"))
    return out


def nodes(topo: Topology) -> list[str]:
    """The user (when it sends to a channel), then every creature."""
    names = [c.name for c in topo.creatures]
    users = any(USER in ch.senders for ch in topo.channels) and USER not in names
    dangling = sorted({n for e in edges(topo) for n in (e.src, e.dst)} - set(names) - {USER})
    return ([USER] if users else []) + names + dangling


def layers(topo: Topology) -> dict[str, int]:
    """Each node's column: its shortest distance (in channel hops) from the user or the
    entry creature; nodes nobody reaches go after the last column."""
    names = nodes(topo)
    out_of: dict[str, list[str]] = {n: [] for n in names}
    for e in edges(topo):
        out_of.setdefault(e.src, []).append(e.dst)
    starts = [USER] if USER in names else names[:1]
    col = {s: 0 for s in starts}
    frontier = list(starts)
    while frontier:
        nxt = []
        for n in frontier:
            for d in out_of.get(n, []):
                if d not in col:
                    col[d] = col[n] + 1
                    nxt.append(d)
        frontier = nxt
    last = max(col.values(), default=-1)
    for n in names:
        col.setdefault(n, last + 1)
    return col


def render_svg(topo: Topology) -> str:
    """A standalone SVG (no scripts, no external fonts) of the team."""
    col = layers(topo)
    rows: dict[int, list[str]] = {}
    for n in nodes(topo):
        rows.setdefault(col[n], []).append(n)
    tallest = max((len(v) for v in rows.values()), default=1)
    ncols = max(rows, default=0) + 1
    width = _PAD * 2 + ncols * _NODE_W + (ncols - 1) * _COL_GAP
    height = _PAD * 2 + tallest * _NODE_H + (tallest - 1) * _ROW_GAP + 80
    pos: dict[str, tuple[float, float]] = {}
    for c, names in rows.items():
        column_h = len(names) * _NODE_H + (len(names) - 1) * _ROW_GAP
        top = _PAD + (tallest * _NODE_H + (tallest - 1) * _ROW_GAP - column_h) / 2
        for i, n in enumerate(names):
            pos[n] = (_PAD + c * (_NODE_W + _COL_GAP), top + i * (_NODE_H + _ROW_GAP))
    creatures = {c.name: c for c in topo.creatures}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif" font-size="12" '
        f'role="img" aria-label="{escape(topo.name)} topology">',
        f"<title>{escape(topo.name)}</title>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" '
        'fill="#555"/></marker></defs>',
        '<rect width="100%" height="100%" fill="#fff"/>',
    ]
    seen: dict[tuple[str, str], int] = {}
    for e in edges(topo):
        if e.src not in pos or e.dst not in pos:
            continue
        k = seen[(e.src, e.dst)] = seen.get((e.src, e.dst), -1) + 1
        (x1, y1), (x2, y2) = pos[e.src], pos[e.dst]
        dash = ' stroke-dasharray="6 4"' if e.broadcast else ""
        if col[e.dst] > col[e.src]:  # forward: right edge to left edge
            sx, sy, dx, dy = x1 + _NODE_W, y1 + _NODE_H / 2, x2, y2 + _NODE_H / 2
            mx = (sx + dx) / 2
            bend = 18 * k
            d = f"M{sx:.0f},{sy:.0f} C{mx:.0f},{sy + bend:.0f} {mx:.0f},{dy + bend:.0f} " \
                f"{dx:.0f},{dy:.0f}"
            lx, ly = mx, (sy + dy) / 2 - 22 + bend
        else:  # back or same column: loop under both boxes
            sx, sy = x1 + _NODE_W / 2, y1 + _NODE_H
            dx, dy = x2 + _NODE_W / 2, y2 + _NODE_H
            low = max(sy, dy) + 40 + 30 * k
            d = f"M{sx:.0f},{sy:.0f} C{sx:.0f},{low:.0f} {dx:.0f},{low:.0f} {dx:.0f},{dy:.0f}"
            lx, ly = (sx + dx) / 2, low - 2
        parts.append(f'<path d="{d}" fill="none" stroke="#555" stroke-width="1.4"{dash} '
                     f'marker-end="url(#arrow)"><title>{escape(e.label)}</title></path>')
        name, _, rest = e.label.partition(" (")
        parts.append(f'<text x="{lx:.0f}" y="{ly:.0f}" text-anchor="middle" fill="#333" '
                     f'paint-order="stroke" stroke="#fff" stroke-width="3">'
                     f'<tspan font-weight="bold">{escape(name)}</tspan>'
                     f'<tspan x="{lx:.0f}" dy="14" font-size="11">{escape(rest[:-1])}</tspan>'
                     "</text>")
    for n, (x, y) in pos.items():
        c = creatures.get(n)
        is_out = n == topo.output_creature
        fill = "#eef4ff" if c else "#f4f4f4"
        stroke = "#1f6f3f" if is_out else "#335"
        sw = 3 if is_out else 1.5
        parts.append(f'<g><rect x="{x:.0f}" y="{y:.0f}" width="{_NODE_W}" height="{_NODE_H}" '
                     f'rx="8" fill="{fill}" stroke="{stroke}" stroke-width="{sw}"/>')
        parts.append(f'<text x="{x + _NODE_W / 2:.0f}" y="{y + 22:.0f}" text-anchor="middle" '
                     f'font-weight="bold">{escape(n)}</text>')
        sub = ("output" + (f" · {c.model}" if c and c.model else "")) if is_out else (
            c.model or "" if c else "")
        if c and c.is_root:
            sub = "root · " + sub
        if len(sub) > 24:
            sub = sub[:23] + "…"
        parts.append(f'<text x="{x + _NODE_W / 2:.0f}" y="{y + 40:.0f}" text-anchor="middle" '
                     f'fill="#555" font-size="11">{escape(sub)}</text></g>')
    legend_y = height - 14
    parts.append(f'<text x="{_PAD}" y="{legend_y:.0f}" fill="#555" font-size="11">'
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
        style = ", style=dashed" if e.broadcast else ""
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
        arrow = "-.->" if e.broadcast else "-->"
        lines.append(f'  {_mm_id(e.src)} {arrow}|"{_mm_text(e.label)}"| {_mm_id(e.dst)}')
    return "\n".join(lines) + "\n"


_RENDER = {"svg": render_svg, "dot": render_dot, "mermaid": render_mermaid}


def cmd_graph(args: argparse.Namespace) -> int:
    """Load (with load-time checks only: nothing is assembled or started) and draw."""
    result = load_any(Path(args.path))
    if not isinstance(result, Team):
        raise TerrariumError(f"{args.path} is a package; give one of its terrariums")
    text = _RENDER[args.format](team_topology(result))
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise TerrariumError(f"cannot write {args.output}: {exc.strerror}") from None
    else:
        sys.stdout.write(text)
    return 0
