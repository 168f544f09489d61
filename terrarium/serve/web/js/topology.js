// The team's topology as SVG, drawn from the layout the server sends with the team
// (`layout` in GET /v1/team: terrarium/config/topology_layout.py, the one `terrarium graph`
// draws too), plus a live message count on every edge.
import { s, h } from "./dom.js";

export class TopologyView {
  constructor(root, list) {
    this.root = root;
    this.list = list;
    this.counts = new Map(); // "src>dst|channel" -> n
    this.labels = new Map();
  }

  render(topo) {
    this.topo = topo;
    const { width, height, node_width: W, node_height: H } = topo.layout;
    const svg = s("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img",
      "aria-labelledby": "topo-title", "font-family": "system-ui, sans-serif" });
    svg.append(s("title", { id: "topo-title", text: `${topo.name}: ${topo.creatures.length} creatures, ${topo.channels.length} channels` }));
    svg.append(s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
      markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, s("path", { d: "M0,0L10,5L0,10z" }))));
    this.labels.clear();
    for (const e of topo.layout.edges) {
      const id = `${e.src}>${e.dst}|${e.channel}`;
      const count = s("tspan", { class: "count", text: ` ${this.counts.get(id) || 0}` });
      this.labels.set(id, count);
      const g = s("g", { class: `edge ${e.kind}`, "data-channel": e.channel, "data-edge": id },
        s("path", { d: e.path, "marker-end": "url(#arrow)" }, s("title", { text: `${e.channel}: ${e.src} → ${e.dst} (${e.kind}, ${e.schema_name})` })),
        s("text", { x: e.label_x, y: e.label_y, "text-anchor": "middle" },
          s("tspan", { "font-weight": "bold", text: e.channel }), count,
          s("tspan", { x: e.label_x, dy: 14, "font-size": 11, text: e.detail })));
      svg.append(g);
    }
    for (const n of topo.layout.nodes) {
      svg.append(s("g", { class: `node${n.creature ? "" : " user"}${n.output ? " output" : ""}`, "data-creature": n.name },
        s("rect", { x: n.x, y: n.y, width: W, height: H, rx: 8 }),
        s("text", { x: n.x + W / 2, y: n.y + 22, "text-anchor": "middle", "font-weight": "bold", text: n.name }),
        s("text", { class: "sub", x: n.x + W / 2, y: n.y + 40, "text-anchor": "middle", text: n.caption })));
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
