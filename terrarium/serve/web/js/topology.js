// The team's topology as SVG: the same layout as `terrarium graph` (columns by distance
// from the user), plus a live message count on every edge.
import { s, h } from "./dom.js";

const W = 140, H = 54, COLGAP = 185, ROWGAP = 60, PAD = 20;

const clip = (text, n) => (text.length > n ? text.slice(0, n - 1) + "…" : text);

export function edgesOf(topo) {
  const out = [];
  for (const ch of topo.channels) {
    const schema = ch.schema ? ch.schema.name : "untyped";
    for (const src of ch.senders.length ? ch.senders : ["?"]) {
      for (const dst of ch.listeners.length ? ch.listeners : ["?"]) {
        out.push({ channel: ch.name, src, dst, kind: ch.kind, schema });
      }
    }
  }
  return out;
}

function nodesOf(topo, edges) {
  const names = topo.creatures.map((c) => c.name);
  const user = topo.channels.some((c) => c.senders.includes("user")) && !names.includes("user");
  const extra = [...new Set(edges.flatMap((e) => [e.src, e.dst]))]
    .filter((n) => !names.includes(n) && n !== "user").sort();
  return [...(user ? ["user"] : []), ...names, ...extra];
}

export class TopologyView {
  constructor(root, list) {
    this.root = root;
    this.list = list;
    this.counts = new Map(); // "src>dst|channel" -> n
    this.labels = new Map();
  }

  render(topo) {
    this.topo = topo;
    const edges = edgesOf(topo);
    const nodes = nodesOf(topo, edges);
    const out = new Map(nodes.map((n) => [n, []]));
    for (const e of edges) out.get(e.src)?.push(e.dst);
    const starts = nodes.includes("user") ? ["user"] : nodes.slice(0, 1);
    const col = new Map(starts.map((n) => [n, 0]));
    let frontier = [...starts];
    while (frontier.length) {
      const next = [];
      for (const n of frontier) for (const d of out.get(n) || []) {
        if (!col.has(d)) { col.set(d, col.get(n) + 1); next.push(d); }
      }
      frontier = next;
    }
    const last = Math.max(-1, ...col.values());
    for (const n of nodes) if (!col.has(n)) col.set(n, last + 1);
    const cols = new Map();
    for (const n of nodes) { const c = col.get(n); if (!cols.has(c)) cols.set(c, []); cols.get(c).push(n); }
    const tallest = Math.max(1, ...[...cols.values()].map((v) => v.length));
    const ncols = Math.max(0, ...cols.keys()) + 1;
    const width = PAD * 2 + ncols * W + (ncols - 1) * COLGAP;
    const height = PAD * 2 + tallest * H + (tallest - 1) * ROWGAP + 70;
    const pos = new Map();
    for (const [c, names] of cols) {
      const colH = names.length * H + (names.length - 1) * ROWGAP;
      const top = PAD + 10 + (tallest * H + (tallest - 1) * ROWGAP - colH) / 2;
      names.forEach((n, i) => pos.set(n, [PAD + c * (W + COLGAP), top + i * (H + ROWGAP)]));
    }
    const svg = s("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img",
      "aria-labelledby": "topo-title", "font-family": "system-ui, sans-serif" });
    svg.append(s("title", { id: "topo-title", text: `${topo.name}: ${topo.creatures.length} creatures, ${topo.channels.length} channels` }));
    svg.append(s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
      markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, s("path", { d: "M0,0L10,5L0,10z" }))));
    const seen = new Map();
    this.labels.clear();
    for (const e of edges) {
      if (!pos.has(e.src) || !pos.has(e.dst)) continue;
      const key = `${e.src}>${e.dst}`;
      const k = (seen.get(key) ?? -1) + 1;
      seen.set(key, k);
      const [x1, y1] = pos.get(e.src), [x2, y2] = pos.get(e.dst);
      let d, lx, ly;
      if (col.get(e.dst) > col.get(e.src)) {
        const sx = x1 + W, sy = y1 + H / 2, dx = x2, dy = y2 + H / 2, mx = (sx + dx) / 2, b = 18 * k;
        d = `M${sx},${sy} C${mx},${sy + b} ${mx},${dy + b} ${dx},${dy}`;
        lx = mx; ly = (sy + dy) / 2 - 22 + b;
      } else {
        const sx = x1 + W / 2, sy = y1 + H, dx = x2 + W / 2, dy = y2 + H;
        const low = Math.max(sy, dy) + 40 + 30 * k;
        d = `M${sx},${sy} C${sx},${low} ${dx},${low} ${dx},${dy}`;
        lx = (sx + dx) / 2; ly = low - 2;
      }
      const id = `${key}|${e.channel}`;
      const count = s("tspan", { class: "count", text: ` ${this.counts.get(id) || 0}` });
      this.labels.set(id, count);
      const g = s("g", { class: `edge ${e.kind}`, "data-channel": e.channel, "data-edge": id },
        s("path", { d, "marker-end": "url(#arrow)" }, s("title", { text: `${e.channel}: ${e.src} → ${e.dst} (${e.kind}, ${e.schema})` })),
        s("text", { x: lx, y: ly, "text-anchor": "middle" },
          s("tspan", { "font-weight": "bold", text: e.channel }), count,
          s("tspan", { x: lx, dy: 14, "font-size": 11, text: clip(`${e.kind} · ${e.schema}`, 30) })));
      svg.append(g);
    }
    const creatures = new Map(topo.creatures.map((c) => [c.name, c]));
    for (const [n, [x, y]] of pos) {
      const c = creatures.get(n);
      const isOut = n === topo.output_creature;
      let sub = c ? (c.model || "") : (n === "user" ? "you" : "");
      if (isOut) sub = "output" + (sub ? " · " + sub : "");
      if (c?.is_root) sub = "root · " + sub;
      if (sub.length > 21) sub = sub.slice(0, 20) + "…";
      svg.append(s("g", { class: `node${c ? "" : " user"}${isOut ? " output" : ""}`, "data-creature": n },
        s("rect", { x, y, width: W, height: H, rx: 8 }),
        s("text", { x: x + W / 2, y: y + 22, "text-anchor": "middle", "font-weight": "bold", text: n }),
        s("text", { class: "sub", x: x + W / 2, y: y + 40, "text-anchor": "middle", text: sub })));
    }
    this.root.replaceChildren(svg);
    // the same facts as text for screen readers
    this.list.replaceChildren(
      ...topo.creatures.map((c) => h("li", { text: `creature ${c.name}${c.name === topo.output_creature ? " (output)" : ""}: listens ${c.listens.join(", ") || "nothing"}, sends ${c.can_send.join(", ") || "nothing"}` })),
      ...topo.channels.map((ch) => h("li", { text: `channel ${ch.name} (${ch.kind}${ch.schema ? ", " + ch.schema.name : ""}): ${ch.senders.join(", ")} to ${ch.listeners.join(", ")}` })));
  }

  /** A message was sent on ``channel`` by ``src`` to ``receivers``. */
  count(channel, src, receivers) {
    const dsts = receivers && receivers.length ? receivers
      : (this.topo?.channels.find((c) => c.name === channel)?.listeners || []);
    for (const dst of dsts) {
      const id = `${src}>${dst}|${channel}`;
      const n = (this.counts.get(id) || 0) + 1;
      this.counts.set(id, n);
      const label = this.labels.get(id);
      if (label) {
        label.textContent = ` ${n}`;
        label.parentNode.parentNode.classList.add("hot");
      }
    }
  }

  reset() {
    this.counts.clear();
    for (const label of this.labels.values()) {
      label.textContent = " 0";
      label.parentNode.parentNode.classList.remove("hot");
    }
  }
}
