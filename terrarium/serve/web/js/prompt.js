// The prompt inspector: a creature's assembled prompt as sections (zone, bytes, tokens) and
// its prefix hash; live from the session's prompt events, the text from the API.
import { h } from "./dom.js";

export class PromptView {
  constructor(select, summary, body, text, textBox, fetchPrompt) {
    this.select = select;
    this.summary = summary;
    this.body = body;
    this.text = text;
    this.textBox = textBox;
    this.fetchPrompt = fetchPrompt;
    this.latest = new Map();
    select.addEventListener("change", () => this.refresh());
  }

  setTeam(topo) {
    const keep = this.select.value;
    this.select.replaceChildren(...topo.creatures.map((c) => h("option", { value: c.name, text: c.name })));
    if (keep && topo.creatures.some((c) => c.name === keep)) this.select.value = keep;
  }

  clear() { this.latest.clear(); this.body.replaceChildren(); this.summary.textContent = ""; this.text.textContent = ""; }

  event(ev) {
    this.latest.set(ev.creature, ev);
    if (ev.creature === this.select.value && !this.select.closest("[hidden]")) this.draw(ev);
  }

  draw(p) {
    const sections = p.sections || [];
    const bytes = sections.reduce((a, x) => a + x.bytes, 0);
    const tokens = p.tokens ?? sections.reduce((a, x) => a + x.tokens, 0);
    this.summary.textContent = `${p.creature}: ${sections.length} sections, ${bytes} bytes, ${tokens} tokens · prefix hash ${p.prefix_hash}`;
    this.body.replaceChildren(...sections.map((x) => h("tr", {},
      h("td", { text: x.name }), h("td", { text: x.zone }),
      h("td", { class: "num", text: x.bytes }), h("td", { class: "num", text: x.tokens }))));
  }

  async refresh() {
    const creature = this.select.value;
    if (!creature) return;
    const live = this.latest.get(creature);
    if (live) this.draw(live);
    try {
      const p = await this.fetchPrompt(creature);
      if (p && creature === this.select.value) {
        this.draw({ ...p, creature });
        this.text.textContent = p.text || "";
        this.textBox.hidden = !p.text;
      }
    } catch (exc) {
      if (!live) this.summary.textContent = `No prompt yet: ${exc.message}`;
    }
  }
}
