// Small SVG bar charts (no library): one bar per utterance or turn, newest on the right.
import { s, h } from "./dom.js";

const W = 640, H = 180, L = 46, B = 22, T = 10, R = 8;

function nice(max) {
  if (max <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= max) return m * p;
  return 10 * p;
}

export function barChart(box, points, { unit = "", label = "" } = {}) {
  if (!points.length) {
    box.replaceChildren(h("p", { class: "muted", text: "nothing measured yet" }));
    return;
  }
  const shown = points.slice(-60);
  const top = nice(Math.max(...shown.map((p) => p.value)));
  const bw = Math.min(28, (W - L - R) / shown.length);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img",
    "aria-label": `${label}: ${shown.length} values, last ${Math.round(shown.at(-1).value)}${unit}` });
  for (const f of [0, 0.5, 1]) {
    const y = T + (H - T - B) * (1 - f);
    svg.append(s("line", { class: "axis", x1: L, x2: W - R, y1: y, y2: y }),
      s("text", { x: L - 4, y: y + 4, "text-anchor": "end", text: `${Math.round(top * f)}${unit}` }));
  }
  shown.forEach((p, i) => {
    const bh = (H - T - B) * (p.value / top);
    svg.append(s("rect", { class: `bar ${p.cls || ""}`, x: L + i * bw + 1, y: H - B - bh, width: Math.max(1, bw - 2), height: bh },
      s("title", { text: `${p.label}: ${Math.round(p.value * 10) / 10}${unit}` })));
  });
  svg.append(s("text", { x: L, y: H - 6, text: shown[0].label }));
  if (shown.length > 1) {
    svg.append(s("text", { x: Math.max(L + 120, L + shown.length * bw), y: H - 6,
      "text-anchor": "end", text: shown.at(-1).label }));
  }
  box.replaceChildren(svg);
}

export class Charts {
  constructor(ttfa, turns, tokens) {
    this.boxes = { ttfa, turns, tokens };
    this.clear();
  }

  clear() {
    this.ttfa = [];
    this.turns = [];
    this.tokens = [];
    this.started = new Map();
    this.dirty = true;
  }

  event(ev) {
    if (ev.kind === "turn_started") this.started.set(`${ev.creature}#${ev.turn_index}`, ev.ts);
    else if (ev.kind === "turn_ended") {
      const label = `${ev.creature} ${ev.turn_index}`;
      const t0 = this.started.get(`${ev.creature}#${ev.turn_index}`);
      if (t0 !== undefined) this.turns.push({ label, value: (ev.ts - t0) * 1000 });
      this.tokens.push({ label, value: (ev.prompt_tokens || 0) + (ev.completion_tokens || 0) });
      this.dirty = true;
    } else if (ev.kind === "utterance_written" && ev.metrics?.time_to_first_audio != null) {
      this.ttfa.push({ label: `${ev.creature} (team)`, value: ev.metrics.time_to_first_audio * 1000 });
      this.dirty = true;
    }
  }

  /** First audio as the browser heard it over the audio socket. */
  firstAudio(ms) {
    this.ttfa.push({ label: "heard by the page", value: ms, cls: "alt" });
    this.dirty = true;
  }

  draw() {
    if (!this.dirty) return;
    this.dirty = false;
    barChart(this.boxes.ttfa, this.ttfa, { unit: " ms", label: "time to first audio" });
    barChart(this.boxes.turns, this.turns, { unit: " ms", label: "turn time" });
    barChart(this.boxes.tokens, this.tokens, { label: "tokens per turn" });
  }
}
