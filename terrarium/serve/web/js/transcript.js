// Each creature's transcript: what it was given, what it said, its tool calls and their
// results (a refused or failed call is marked), from the session's transcript events.
import { h, clock, foldable } from "./dom.js";

const LABEL = {
  user: "user", message_in: "message", assistant: "said", tool_call: "tool call",
  tool_result: "result", notice: "notice", output: "output", error: "error",
};

export class TranscriptView {
  constructor(list, select) {
    this.list = list;
    this.select = select;
    this.entries = new Map(); // creature -> [entry]
    select.addEventListener("change", () => this.show());
  }

  setTeam(topo) {
    const keep = this.select.value;
    this.select.replaceChildren(...topo.creatures.map((c) => h("option", { value: c.name, text: c.name })));
    if (keep && topo.creatures.some((c) => c.name === keep)) this.select.value = keep;
  }

  clear() { this.entries.clear(); this.list.replaceChildren(); }

  add(creature, entry) {
    if (!this.entries.has(creature)) this.entries.set(creature, []);
    this.entries.get(creature).push(entry);
    if (creature === this.select.value && !this.list.closest("[hidden]")) this.list.append(this.item(entry));
  }

  show() {
    const entries = this.entries.get(this.select.value) || [];
    this.list.replaceChildren(...entries.map((e) => this.item(e)));
    this.list.scrollTop = this.list.scrollHeight;
  }

  item(e) {
    const failed = e.kind === "tool_result" && e.data && e.data.ok === false;
    const label = failed ? "refused/failed" : (LABEL[e.kind] || e.kind);
    const who = e.name ? (e.kind === "message_in" ? `on ${e.name}${e.data?.sender ? " from " + e.data.sender : ""}` : e.name) : "";
    const body = e.kind === "tool_call" && e.detail ? e.detail : e.text;
    return h("li", { class: `${e.kind}${failed ? " failed" : ""}`, "data-kind": e.kind },
      h("div", { class: "head" }, h("span", { class: "kind", text: label }),
        h("span", { class: "mono", text: who }),
        h("span", { class: "time", text: `turn ${e.turn} · ${clock(e.ts)}` })),
      h("div", { class: "body" }, foldable(body ?? "")),
      e.detail && e.kind !== "tool_call" ? h("details", { class: "fold" }, h("summary", { text: "detail" }), h("pre", { text: e.detail })) : null);
  }
}
