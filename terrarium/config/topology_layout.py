"""Where each box and arrow of a team's topology goes in a picture: one layout, drawn by
``terrarium graph`` (SVG) and by the web page (``GET /v1/team`` carries it as ``layout``),
so the two cannot drift apart.

Creatures (and the user, when it sends) are boxes in columns by their distance in channel
hops from the user, or from the first creature; every channel is an arrow from each sender
to each listener. A forward arrow runs from a box's right side to the next column's left
side; an arrow back (or within a column) loops under both boxes. Arrows between the same
two boxes bend apart so their labels do not overlap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from terrarium.config.topology import Topology

__all__ = ["NODE_HEIGHT", "NODE_WIDTH", "USER", "LayoutEdge", "LayoutNode", "TopologyEdge",
           "TopologyLayout", "columns", "edges", "layout", "nodes"]

USER = "user"
NODE_WIDTH, NODE_HEIGHT = 150, 54
_COL_GAP, _ROW_GAP, _PAD = 190, 60, 30
_BELOW = 80  # room under the boxes: arrows back loop there, and the graph's legend line
_CAPTION_MAX, _DETAIL_MAX = 24, 30


@dataclass(frozen=True, slots=True)
class TopologyEdge:
    """One sender → listener pair of a channel."""

    channel: str
    src: str
    dst: str
    kind: Literal["queue", "broadcast"]
    schema_name: str  # "untyped" for a channel without a schema

    @property
    def label(self) -> str:
        return f"{self.channel} ({self.kind} · {self.schema_name})"


def edges(topo: Topology) -> list[TopologyEdge]:
    """One edge per (sender, listener) of every channel, in declaration order; a channel
    nobody sends on or hears gets ``?`` at that end."""
    out: list[TopologyEdge] = []
    for ch in topo.channels:
        schema = ch.schema_.name if ch.schema_ else "untyped"
        for s in ch.senders or ["?"]:
            for d in ch.listeners or ["?"]:
                out.append(TopologyEdge(ch.name, s, d, ch.kind, schema))
    return out


def nodes(topo: Topology) -> list[str]:
    """The user (when it sends to a channel), then every creature, then any other end."""
    names = [c.name for c in topo.creatures]
    users = any(USER in ch.senders for ch in topo.channels) and USER not in names
    dangling = sorted({n for e in edges(topo) for n in (e.src, e.dst)} - set(names) - {USER})
    return ([USER] if users else []) + names + dangling


def columns(topo: Topology) -> dict[str, int]:
    """Each node's column: its shortest distance (in channel hops) from the user or the
    first creature; nodes nobody reaches go after the last column."""
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


class LayoutNode(BaseModel):
    """A box: its top-left corner, and the line under its name."""

    name: str
    x: float
    y: float
    column: int
    creature: bool  # False: the user, or the open end of a channel nobody hears
    output: bool  # the creature whose words reach the user
    caption: str  # "root · output · model", clipped to fit the box


class LayoutEdge(BaseModel):
    """An arrow: its SVG path, and where its two-line label is centred."""

    channel: str
    src: str
    dst: str
    kind: Literal["queue", "broadcast"]
    schema_name: str
    path: str
    label_x: float
    label_y: float
    detail: str  # the label's second line, "kind · schema", clipped


class TopologyLayout(BaseModel):
    """The whole picture: its size, the boxes' size, every box and every arrow."""

    width: float
    height: float
    node_width: int = NODE_WIDTH
    node_height: int = NODE_HEIGHT
    nodes: list[LayoutNode]
    edges: list[LayoutEdge]


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _caption(topo: Topology, name: str) -> str:
    c = next((c for c in topo.creatures if c.name == name), None)
    sub = (c.model or "") if c else ("you" if name == USER else "")
    if name == topo.output_creature:
        sub = "output" + (f" · {sub}" if sub else "")
    if c and c.is_root:
        sub = "root · " + sub
    return _clip(sub, _CAPTION_MAX)


def _route(src: tuple[float, float], dst: tuple[float, float], forward: bool,
           k: int) -> tuple[str, float, float]:
    """The path of the ``k``-th arrow between two boxes, and its label's centre."""
    (x1, y1), (x2, y2) = src, dst
    if forward:  # right edge to left edge
        sx, sy, dx, dy = x1 + NODE_WIDTH, y1 + NODE_HEIGHT / 2, x2, y2 + NODE_HEIGHT / 2
        mx, bend = (sx + dx) / 2, 18 * k
        path = (f"M{sx:.0f},{sy:.0f} C{mx:.0f},{sy + bend:.0f} {mx:.0f},{dy + bend:.0f} "
                f"{dx:.0f},{dy:.0f}")
        return path, mx, (sy + dy) / 2 - 22 + bend
    sx, sy = x1 + NODE_WIDTH / 2, y1 + NODE_HEIGHT  # back or same column: loop under both
    dx, dy = x2 + NODE_WIDTH / 2, y2 + NODE_HEIGHT
    low = max(sy, dy) + 40 + 30 * k
    path = f"M{sx:.0f},{sy:.0f} C{sx:.0f},{low:.0f} {dx:.0f},{low:.0f} {dx:.0f},{dy:.0f}"
    return path, (sx + dx) / 2, low - 2


def layout(topo: Topology) -> TopologyLayout:
    """Lay the team out: columns by distance from the user, each column centred."""
    col = columns(topo)
    rows: dict[int, list[str]] = {}
    for n in nodes(topo):
        rows.setdefault(col[n], []).append(n)
    tallest = max((len(v) for v in rows.values()), default=1)
    ncols = max(rows, default=0) + 1
    full_h = tallest * NODE_HEIGHT + (tallest - 1) * _ROW_GAP
    width = _PAD * 2 + ncols * NODE_WIDTH + (ncols - 1) * _COL_GAP
    height = _PAD * 2 + full_h + _BELOW
    pos: dict[str, tuple[float, float]] = {}
    for c, names in rows.items():
        top = _PAD + (full_h - len(names) * NODE_HEIGHT - (len(names) - 1) * _ROW_GAP) / 2
        for i, n in enumerate(names):
            pos[n] = (_PAD + c * (NODE_WIDTH + _COL_GAP), top + i * (NODE_HEIGHT + _ROW_GAP))
    creatures = {c.name for c in topo.creatures}
    boxes = [LayoutNode(name=n, x=x, y=y, column=col[n], creature=n in creatures,
                        output=n == topo.output_creature, caption=_caption(topo, n))
             for n, (x, y) in pos.items()]
    arrows: list[LayoutEdge] = []
    seen: dict[tuple[str, str], int] = {}
    for e in edges(topo):
        k = seen[(e.src, e.dst)] = seen.get((e.src, e.dst), -1) + 1
        path, lx, ly = _route(pos[e.src], pos[e.dst], col[e.dst] > col[e.src], k)
        arrows.append(LayoutEdge(channel=e.channel, src=e.src, dst=e.dst, kind=e.kind,
                                 schema_name=e.schema_name, path=path, label_x=lx, label_y=ly,
                                 detail=_clip(f"{e.kind} · {e.schema_name}", _DETAIL_MAX)))
    return TopologyLayout(width=width, height=height, nodes=boxes, edges=arrows)
